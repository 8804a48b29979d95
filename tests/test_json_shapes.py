"""Every `--batch … --format json` output held to a golden file: its keys, nesting, value types and (where the run is
deterministic) values, and its exact text (two-space indent, ASCII escapes, key order).

Other tools read these outputs, so a refactor of what produces them (typed records between the floors) must leave
them byte-identical. The goldens live in tests/data/json_shapes/: `core.json` (run report, compare, leaderboard,
runs, items, estimates), `panel.json` (`report --panel`) and `scaling.json` (`scale …`), kept apart so a change to
the panel or scaling outputs made on purpose regenerates only its own file:

    AGENTHOP_UPDATE_GOLDENS=1 pytest -q tests/test_json_shapes.py -k panel

A value that differs between two runs of the same command (a timestamp, a wall time) is replaced by its type, so the
golden holds that it is there and what it is, but not the moment it was taken.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox.agents.human import HumanAgent
from sandbox.datasets import open_dataset
from storage import Store
from tests.cli_inprocess import batch
from workbench.service.play import SessionRequest, session_runner

GOLDENS = Path(__file__).parent / "data" / "json_shapes"
UPDATE = os.environ.get("AGENTHOP_UPDATE_GOLDENS") == "1"

# Keys whose values are taken from the clock: held by type only.
VOLATILE = frozenset({"created_at", "started_at", "finished_at", "updated_at", "wall_seconds", "elapsed", "seconds"})

CORE: dict[str, tuple[str, ...]] = {
    "report": ("report", "h"),
    "report-two": ("report", "h", "r"),
    "compare": ("compare", "h", "r"),
    "leaderboard": ("leaderboard",),
    "runs": ("runs",),
    "items": ("items",),
    "items-show": ("items", "--show", "st_0001"),
    "estimate-scripted": ("run", "--agent", "oracle", "--run", "o", "--limit", "3", "--dry-run"),
    "estimate-llm": (
        "run",
        "--agent",
        "llm",
        "--model",
        "openai/gpt-4.1",
        "--run",
        "l",
        "--limit",
        "2",
        "--dry-run",
    ),
}
PANEL: dict[str, tuple[str, ...]] = {
    "panel": ("report", "--panel", "h", "r"),
}
SCALING: dict[str, tuple[str, ...]] = {
    "plateau": ("scale", "plateau", "--group", "g"),
    "strategies": ("scale", "strategies", "--group", "g"),
}
# Commands that write runs: each is run once, by the fixture, and what it printed is held.
SCALING_RUNS: dict[str, tuple[str, ...]] = {
    "sequential": (
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "5,10",
        "--limit",
        "3",
        "--run",
        "g",
        "--agent",
        "heuristic",
        "--quiet",
    ),
    "parallel": ("scale", "parallel", "--k", "1,2", "--limit", "4", "--agent", "random", "--run", "p", "--quiet"),
}


def _answer(item: Any) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("get_paper_info", {"paper_id": item.seed_paper_id}),
        ("submit_answer", {"answer": "ABCD"[item.correct_index]}),
    ]


async def _play(corpus: Any, store: Store, request: SessionRequest) -> Any:
    """A person's session through the real runner: they read the seed's card and answer right."""

    async def factory(item: Any, replicate: int, attempt: int) -> HumanAgent:
        agent = HumanAgent(request.player)

        async def person() -> None:
            for name, args in _answer(item):
                await agent.turn()
                agent.send(name, args)

        asyncio.get_running_loop().create_task(person())
        return agent

    return await session_runner(request, corpus, store, factory).run()


@pytest.fixture(scope="module")
def shapes(tmp_path_factory, shared_cache) -> Iterator[tuple[Path, dict[str, str]]]:
    """A store with a heuristic and a random run on six built-in items, a person's session on three of them, a
    sequential group and a parallel study; and the JSON the run-writing scale commands printed."""
    db = tmp_path_factory.mktemp("shapes") / "store.sqlite"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTHOP_CACHE", str(shared_cache))
        mp.setenv("AGENTHOP_DB", str(db))
        mp.setenv("AGENTHOP_CONFIG", str(db.parent / "config.toml"))
        mp.setenv("AGENTHOP_STATE", str(db.parent / "state.toml"))
        for agent in ("heuristic", "random"):
            _main("run", "--agent", agent, "--run", agent[0], "--limit", "6", "--quiet", "--db", str(db))
        corpus, _ = open_dataset("builtin", shared_cache)
        store = Store(db)
        try:
            ids = tuple(i.id for i in corpus.items[:3])
            asyncio.run(_play(corpus, store, SessionRequest("ana", ids=ids)))
        finally:
            store.close()
            corpus.close()
        # The run-writing scale commands, once each: what they print is held like any other output.
        printed = {name: _main(*args, "--format", "json", "--db", str(db)) for name, args in SCALING_RUNS.items()}
        yield db, printed


def _main(*args: str) -> str:
    """`--batch ARGS` in this process, for a module fixture (which has no capsys): its stdout; exit 0 asserted."""
    from workbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["--batch", *args]) == 0
    return out.getvalue()


def _mask(value: Any, key: str | None = None) -> Any:
    if key in VOLATILE and value is not None:
        return f"<{type(value).__name__}>"
    if isinstance(value, dict):
        return {k: _mask(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return value


def _check(capsys, db: Path, golden: str, name: str, args: tuple[str, ...]) -> None:
    proc = batch(capsys, *args, "--format", "json", "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    _hold(proc.stdout, golden, name)


def _hold(text: str, golden: str, name: str) -> None:
    parsed = json.loads(text)
    assert text == json.dumps(parsed, indent=2) + "\n", "the output's text is not indent-2 ASCII JSON"
    path = GOLDENS / golden
    held = json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
    if UPDATE:
        held[name] = _mask(parsed)
        GOLDENS.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dict(sorted(held.items())), indent=2) + "\n", encoding="utf-8")
        return
    assert name in held, f"no golden for {name!r}: run with AGENTHOP_UPDATE_GOLDENS=1 on main's code"
    assert _mask(parsed) == held[name]
    # and in the same key order: the text of two equal dicts may differ
    assert json.dumps(_mask(parsed), indent=2) == json.dumps(held[name], indent=2)


@pytest.mark.parametrize("name", list(CORE))
def test_core_json_outputs_hold_their_shape(shapes, capsys, name):
    _check(capsys, shapes[0], "core.json", name, CORE[name])


@pytest.mark.parametrize("name", list(PANEL))
def test_panel_json_outputs_hold_their_shape(shapes, capsys, name):
    _check(capsys, shapes[0], "panel.json", name, PANEL[name])


@pytest.mark.parametrize("name", list(SCALING_RUNS))
def test_scaling_runs_json_outputs_hold_their_shape(shapes, name):
    _hold(shapes[1][name], "scaling.json", name)


@pytest.mark.parametrize("name", list(SCALING))
def test_scaling_json_outputs_hold_their_shape(shapes, capsys, name):
    _check(capsys, shapes[0], "scaling.json", name, SCALING[name])
