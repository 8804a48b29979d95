"""Play sessions: a person's play is a run whose agent is `human:NAME`, executed by the same `Runner` as any model.

This module decides which items a session serves (chosen ids, a seeded random sample,
or the ones a stored run got wrong), builds the session's `RunSpec`, and gathers
what the reveal shows after an answer. It holds no rules of the protocol (the
episode does) and no Textual (the play screen and the tests share it).

A session is named, by default one per player and dataset (`human-ana-builtin`), so a
person's play accumulates in one run and an item is played once: someone who has
seen the gold answer cannot honestly play the item again. That holds across sessions
too: a new session (another name, the items a run got wrong, a random sample) leaves
out the items this player finished in any session on the dataset, unless asked to
include them; a play of such an item is then marked `replayed`.

Re-opening a session resumes it: the runner skips finished items. An item left midway
is not thrown away: its attempt is kept as a finished, non-final attempt ended by
`error` with `error_kind` 'abandoned' (as failed sample-level attempts are kept), and
the later play of that item, which starts after seeing those tool results, is marked
`resumed` (not when it was left before its first tool call: nothing was seen then).
A marked play keeps its trajectory (every diagnostic reads it) with the mark in
`error_kind` and a sentence in `error`; the leaderboard leaves it out.
"""

from __future__ import annotations

import getpass
import os
import random
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from sandbox.agents.human import ABANDONED, REPLAYED, RESUMED, human_agent_name, is_human
from sandbox.datasets import dataset_key, dataset_label
from sandbox.runner import Runner, RunSpec
from storage.rows import ItemTrajectoryRow, RunRow, StoredRun

if TYPE_CHECKING:
    from storage import Store

MODES = ("random", "ids", "wrong", "continue")
ABANDONED_NOTE = "left midway by the player: the tool results shown are kept as this attempt"
_PLAYER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,39}\Z")


class PlayError(ValueError):
    """A session that cannot be played as asked (unknown items, nothing left, another dataset): say why."""


def default_player() -> str:
    """`$USER`, or the login name, made a valid player name."""
    try:
        name = os.environ.get("USER") or getpass.getuser()
    except (OSError, KeyError, ImportError):  # no login name in some containers (no passwd entry, no pwd module)
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


def session_name(player: str, dataset: str) -> str:
    return f"human-{player}-{dataset_label(dataset)}"


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
    include_played: bool = False  # serve items this player finished in another session (marked `replayed`)

    @property
    def session(self) -> str:
        return self.name or session_name(self.player, self.dataset)


def session_run(store: Store, name: str) -> StoredRun | None:
    """The stored run of a session, or None when it was never opened."""
    from storage import StoreError

    try:
        return store.run(name)
    except StoreError:
        return None


def recorded_items(run: RunRow | None) -> tuple[str, ...]:
    """The items a session covers, as its run records them."""
    if run is None:
        return ()
    chosen = run["config"].get("slice")
    ids = chosen.get("ids") if isinstance(chosen, dict) else None
    return tuple(str(i) for i in ids) if isinstance(ids, list) else ()


def wrong_items(store: Any, run_name: str, fingerprint: str) -> list[str]:
    """Items the stored run answered wrongly (replicate 0), on the session's dataset only."""
    run = store.run(run_name)
    if run["dataset_fingerprint"] != fingerprint:
        raise PlayError(f"run '{run_name}' was made on another dataset ({run['dataset']})")
    return [t["item_id"] for t in store.trajectory_list(run["id"]) if t["replicate"] == 0 and not t["correct"]]


@dataclass(frozen=True)
class History:
    """What a player has done on a dataset, across sessions: item → the session where they finished it, or
    left it midway (an abandoned attempt not finished since)."""

    finished: dict[str, str]
    abandoned: dict[str, str]


def player_history(store: Any, player: str, fingerprint: str) -> History:
    finished: dict[str, str] = {}
    abandoned: dict[str, str] = {}
    for t in store.agent_history(human_agent_name(player), fingerprint):
        if t["status"] == "done" and t["final"]:
            finished.setdefault(t["item_id"], t["run"])
        elif t["status"] != "done" or (t["error_kind"] == ABANDONED and t["tool_calls"]):
            # left midway after a tool result (a crash leaves it unfinished); left before any call, nothing was seen
            # that a fresh play does not show, so the next play is not marked
            abandoned.setdefault(t["item_id"], t["run"])
    return History(finished, {i: s for i, s in abandoned.items() if i not in finished})


@dataclass(frozen=True)
class SessionPlan:
    """A session's items and what the player saw of them before: `left_out` (finished in another session, not
    served), `replayed` (finished elsewhere, served because asked: the play is marked) and `resumed` (left midway
    before: the play is marked)."""

    items: tuple[str, ...]
    left_out: dict[str, str]
    replayed: dict[str, str]
    resumed: dict[str, str]

    def mark(self, item_id: str) -> tuple[str, str] | None:
        """(error_kind, sentence) for a play of `item_id` in this session, or None for a fresh one."""
        if item_id in self.replayed:
            return REPLAYED, f"replayed: the gold answer was shown before (finished in '{self.replayed[item_id]}')"
        if item_id in self.resumed:
            return RESUMED, f"resumed after seeing tool results (left midway in '{self.resumed[item_id]}')"
        return None


def plan_session(request: SessionRequest, corpus: Any, store: Any) -> SessionPlan:
    """Every item of the session after this opening, in dataset order: what it recorded plus what was asked for,
    less what the player finished in another session (unless `include_played`).

    Raises PlayError when an id is unknown or nothing is left to play.
    """
    if request.mode not in MODES:
        raise PlayError(f"unknown way of choosing items '{request.mode}'")
    order = [i.id for i in corpus.items]
    run = _session_of_player(store, request.session)
    recorded = recorded_items(run)
    finished = {item for item, _ in store.finished(run["id"])} if run is not None else set()
    history = player_history(store, request.player, corpus.fingerprint)
    elsewhere = _played_in_other_sessions(history.finished, request.session)
    chosen = _chosen(request, corpus, store, order, _taken(request, recorded, finished, elsewhere))
    left_out = {} if request.include_played else _played_elsewhere(chosen, recorded, elsewhere)
    items = _session_items(order, recorded, chosen, left_out)
    pending = [i for i in items if i not in finished]
    if not pending:
        raise PlayError(_nothing_left(request.session, bool(chosen or recorded), left_out))
    return SessionPlan(items, left_out, _among(pending, elsewhere), _among(pending, history.abandoned))


def _taken(
    request: SessionRequest, recorded: tuple[str, ...], finished: set[str], elsewhere: dict[str, str]
) -> set[str]:
    """The items a new choice leaves out: the session's own, and (unless `include_played`) those played elsewhere."""
    return set(recorded) | finished | (set() if request.include_played else set(elsewhere))


def _played_in_other_sessions(finished: dict[str, str], session: str) -> dict[str, str]:
    """The items the player finished (item → session) in sessions other than `session`."""
    return {i: s for i, s in finished.items() if s != session}


def _session_items(
    order: list[str], recorded: tuple[str, ...], chosen: list[str], left_out: dict[str, str]
) -> tuple[str, ...]:
    """The session's items in dataset order: those it recorded and those this request chose that are not left out."""
    wanted = set(recorded) | {i for i in chosen if i not in left_out}
    return tuple(i for i in order if i in wanted)


def _played_elsewhere(chosen: list[str], recorded: tuple[str, ...], elsewhere: dict[str, str]) -> dict[str, str]:
    """The newly chosen items the player finished in another session (item → that session)."""
    return {i: elsewhere[i] for i in chosen if i not in recorded and i in elsewhere}


def _among(items: list[str], sessions: dict[str, str]) -> dict[str, str]:
    """`sessions` (item → session) cut to `items`, in their order."""
    return {i: sessions[i] for i in items if i in sessions}


def _session_of_player(store: Store, session: str) -> StoredRun | None:
    """The session's stored run (None when new); PlayError when the name is taken by a run that is no session."""
    run = session_run(store, session)
    if run is not None and not is_human(run["agent"]):
        raise PlayError(f"'{session}' is a run of {run['agent']}, not a play session; choose another name")
    return run


def _chosen(request: SessionRequest, corpus: Any, store: Any, order: list[str], taken: set[str]) -> list[str]:
    """The items the request asks for, by its mode; a random sample is drawn from the items not `taken`."""
    if request.mode == "ids":
        unknown = [i for i in request.ids if i not in set(order)]
        if unknown:
            raise PlayError(f"unknown item id(s): {', '.join(unknown[:5])}")
        return list(request.ids)
    if request.mode == "random":
        pool = [i for i in order if i not in taken]
        return random.Random(request.seed).sample(pool, min(max(1, request.count), len(pool)))
    if request.mode == "wrong":
        if not request.run:
            raise PlayError("name the run whose wrong answers to play")
        return wrong_items(store, request.run, corpus.fingerprint)
    return []


def _nothing_left(session: str, any_items: bool, left_out: dict[str, str]) -> str:
    """Why a session has nothing to play: all played, or none chosen, and where the left-out ones were played."""
    why = "every chosen item is already played" if any_items else "no items chosen"
    if left_out:
        why += f" (in {', '.join(sorted(set(left_out.values())))})"
    return f"nothing left to play in '{session}': {why}"


def choose_items(request: SessionRequest, corpus: Any, store: Any) -> tuple[str, ...]:
    """The items of `plan_session`."""
    return plan_session(request, corpus, store).items


def session_spec(request: SessionRequest, items: tuple[str, ...]) -> RunSpec:
    """The run of a session: the protocol's default caps, one worker, estimated tokens (see HumanAgent)."""
    return RunSpec(
        name=request.session,
        dataset=dataset_key(request.dataset),
        agent=human_agent_name(request.player),
        item_ids=items,
        workers=1,
        estimate_tokens=True,
    )


def record_items(store: Any, run_id: int, items: tuple[str, ...]) -> None:
    """Keep the session's full item list in its run (the runner records the slice only when the run is created)."""
    run = store.run_by_id(run_id)
    config = dict(run.get("config") or {})
    config["slice"] = {**(config.get("slice") or {}), "ids": list(items)}
    store.update_run(run_id, config=config)


def abandon(store: Any, run_id: int | None) -> list[int]:
    """Keep the session's items left midway as abandoned attempts (see the module docstring)."""
    return store.abandon_unfinished(run_id, ABANDONED_NOTE) if run_id is not None else []


def session_runner(
    request: SessionRequest,
    corpus: Any,
    store: Any,
    factory: Any,
    on_event: Any = None,
    plan: SessionPlan | None = None,
    deferred: tuple[str, ...] = (),
) -> Runner:
    """The runner of a session: its items chosen (`plan`, else planned here), its spec built, its full item list
    kept in the run once it starts, and each play of an item the player saw before marked when it finishes.
    `deferred`: items the person left midway in this sitting, not played again in it (the run still lists them,
    so re-opening the session plays them, marked `resumed` once tool results were seen).

    `factory` hands the runner each item's `HumanAgent` (it may be async: see `sandbox.runner.AgentFactory`).
    """
    existing = session_run(store, request.session)
    if existing is not None:
        abandon(store, existing["id"])  # an item left midway (a crash, a killed terminal) is kept, not discarded
    chosen = plan or plan_session(request, corpus, store)

    def event(e: Any) -> None:
        if e.kind == "started":
            assert runner.run_id is not None  # the runner creates or resumes its run before it says it started
            record_items(store, runner.run_id, chosen.items)
        elif e.kind == "trajectory" and (marked := chosen.mark(e.item_id)):
            tid = store.final_trajectory_id(runner.run_id, e.item_id, e.replicate)
            kind, sentence = marked
            store.update_trajectory(tid, error_kind=kind, error=sentence)
        if on_event is not None:
            on_event(e)

    items = tuple(i for i in chosen.items if i not in deferred)
    runner = Runner(session_spec(request, items), corpus, store, factory=factory, on_event=event)
    return runner


class RevealRow(TypedDict):
    """How one stored run did on the item played (its replicate-0 trajectory), `you` on the session's own."""

    run: str
    agent: str
    model: str | None
    ablation: str
    answer: str | None
    correct: int | None
    points_used: int | None
    turns: int | None
    paper_recall: int | None
    section_recall: int | None
    wall_time_s: float | None
    termination: str | None
    id: int
    run_id: int
    you: bool


def _reveal_row(t: ItemTrajectoryRow, session: str) -> RevealRow:
    return {
        "run": t["run"],
        "agent": t["agent"],
        "model": t["model"],
        "ablation": t["ablation"],
        "answer": t["answer"],
        "correct": t["correct"],
        "points_used": t["points_used"],
        "turns": t["turns"],
        "paper_recall": t["paper_recall"],
        "section_recall": t["section_recall"],
        "wall_time_s": t["wall_time_s"],
        "termination": t["termination"],
        "id": t["id"],
        "run_id": t["run_id"],
        "you": t["run"] == session,
    }


def reveal_rows(store: Store, fingerprint: str, item_id: str, session: str) -> list[RevealRow]:
    """How every stored run did on this item (replicate 0), the session's own row first and marked `you`."""
    rows = [_reveal_row(t, session) for t in store.item_trajectories(fingerprint, item_id) if t["replicate"] == 0]
    return sorted(rows, key=lambda r: not r["you"])
