"""Play sessions: a person's play is a run whose agent is `human:NAME`, executed by the same `Runner` as any model.

This module decides which items a session serves (chosen ids, a seeded random sample,
or the ones a stored run got wrong), builds the session's `RunSpec`, and gathers
what the reveal shows after an answer. It holds no rules of the protocol (the
episode does) and no Textual (the play screen and the tests share it).

A session is named, by default one per player and dataset (`human-ana-builtin`), so a
person's play accumulates in one run and an item is played once: someone who has
seen the gold answer cannot honestly play the item again. Re-opening a session
resumes it: the runner skips finished items and discards an item left half played.
"""
from __future__ import annotations

import getpass
import os
import random
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox.agents.human import human_agent_name, is_human
from sandbox.runner import Runner, RunSpec

MODES = ("random", "ids", "wrong", "continue")
_PLAYER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}\Z")


class PlayError(ValueError):
    """A session that cannot be played as asked (unknown items, nothing left, another dataset): say why."""


def default_player() -> str:
    """`$USER`, or the login name, made a valid player name."""
    try:
        name = os.environ.get("USER") or getpass.getuser()
    except Exception:  # no login name in some containers
        name = ""
    name = re.sub(r"[^A-Za-z0-9_.-]", "", name)
    return name if _PLAYER.match(name or "") else "player"


def player_error(name: str) -> str | None:
    """Why `name` cannot be a player name, or None."""
    if not name:
        return "a player name is needed"
    if not _PLAYER.match(name):
        return "letters, digits, '.', '_' or '-' (at most 40), starting with a letter or digit"
    return None


def dataset_key(dataset: str) -> str:
    """How a run records its dataset: `builtin` or the release directory's absolute path (as the CLI does)."""
    return dataset if dataset == "builtin" else str(Path(dataset).expanduser().resolve())


def session_name(player: str, dataset: str) -> str:
    label = dataset if dataset == "builtin" else (Path(dataset).name or "data")
    return f"human-{player}-{label}"


@dataclass(frozen=True)
class SessionRequest:
    """What a person asked to play. `mode`: random (`count` items, `seed`), ids, wrong (those `run` got wrong),
    continue (only the session's unfinished items)."""

    player: str
    dataset: str = "builtin"
    mode: str = "ids"
    ids: tuple[str, ...] = ()
    count: int = 5
    seed: int = 0
    run: str | None = None
    name: str | None = None

    @property
    def session(self) -> str:
        return self.name or session_name(self.player, self.dataset)


def session_run(store: Any, name: str) -> dict[str, Any] | None:
    """The stored run of a session, or None when it was never opened."""
    from storage import StoreError

    try:
        return store.run(name)
    except StoreError:
        return None


def recorded_items(run: dict[str, Any] | None) -> tuple[str, ...]:
    """The items a session covers, as its run records them."""
    if run is None:
        return ()
    return tuple((run.get("config") or {}).get("slice", {}).get("ids") or ())


def wrong_items(store: Any, run_name: str, fingerprint: str) -> list[str]:
    """Items the stored run answered wrongly (replicate 0), on the session's dataset only."""
    run = store.run(run_name)
    if run["dataset_fingerprint"] != fingerprint:
        raise PlayError(f"run '{run_name}' was made on another dataset ({run['dataset']})")
    return [t["item_id"] for t in store.trajectory_list(run["id"]) if t["replicate"] == 0 and not t["correct"]]


def choose_items(request: SessionRequest, corpus: Any, store: Any) -> tuple[str, ...]:
    """Every item of the session after this opening, in dataset order: what it recorded plus what was asked for.

    Raises PlayError when an id is unknown or nothing is left to play.
    """
    if request.mode not in MODES:
        raise PlayError(f"unknown way of choosing items '{request.mode}'")
    order = [i.id for i in corpus.items]
    run = session_run(store, request.session)
    if run is not None and not is_human(run["agent"]):
        raise PlayError(f"'{request.session}' is a run of {run['agent']}, not a play session; choose another name")
    recorded = recorded_items(run)
    finished = {item for item, _ in store.finished(run["id"])} if run is not None else set()
    if request.mode == "ids":
        unknown = [i for i in request.ids if i not in set(order)]
        if unknown:
            raise PlayError(f"unknown item id(s): {', '.join(unknown[:5])}")
        chosen = list(request.ids)
    elif request.mode == "random":
        pool = [i for i in order if i not in finished and i not in recorded]
        chosen = random.Random(request.seed).sample(pool, min(max(1, request.count), len(pool)))
    elif request.mode == "wrong":
        if not request.run:
            raise PlayError("name the run whose wrong answers to play")
        chosen = wrong_items(store, request.run, corpus.fingerprint)
    else:
        chosen = []
    wanted = set(recorded) | set(chosen)
    items = tuple(i for i in order if i in wanted)
    if not [i for i in items if i not in finished]:
        raise PlayError(f"nothing left to play in '{request.session}': "
                        + ("every chosen item is already played" if chosen or recorded else "no items chosen"))
    return items


def session_spec(request: SessionRequest, items: tuple[str, ...]) -> RunSpec:
    """The run of a session: the protocol's default caps, one worker, estimated tokens (see HumanAgent)."""
    return RunSpec(name=request.session, dataset=dataset_key(request.dataset), agent=human_agent_name(request.player),
                   item_ids=items, workers=1, estimate_tokens=True)


def record_items(store: Any, run_id: int, items: tuple[str, ...]) -> None:
    """Keep the session's full item list in its run (the runner records the slice only when the run is created)."""
    run = store.run_by_id(run_id)
    config = dict(run.get("config") or {})
    config["slice"] = {**(config.get("slice") or {}), "ids": list(items)}
    store.update_run(run_id, config=config)


def session_runner(request: SessionRequest, corpus: Any, store: Any, factory: Any,
                   on_event: Any = None) -> Runner:
    """The runner of a session: its items chosen, its spec built, its full item list kept in the run once it starts.

    `factory` hands the runner each item's `HumanAgent` (it may be async: see `sandbox.runner.AgentFactory`).
    """
    items = choose_items(request, corpus, store)

    def event(e: Any) -> None:
        if e.kind == "started":
            record_items(store, runner.run_id, items)
        if on_event is not None:
            on_event(e)

    runner = Runner(session_spec(request, items), corpus, store, factory=factory, on_event=event)
    return runner


REVEAL_FIELDS = ("run", "agent", "model", "ablation", "answer", "correct", "points_used", "turns", "paper_recall",
                 "section_recall", "wall_time_s", "termination", "id", "run_id")


def reveal_rows(store: Any, fingerprint: str, item_id: str, session: str) -> list[dict[str, Any]]:
    """How every stored run did on this item (replicate 0), the session's own row first and marked `you`."""
    rows = [{k: t.get(k) for k in REVEAL_FIELDS} | {"you": t["run"] == session}
            for t in store.item_trajectories(fingerprint, item_id) if t["replicate"] == 0]
    return sorted(rows, key=lambda r: not r["you"])
