"""TUI fixtures: isolated locations, a built-in benchmark generated once, and a store with fixed runs.

The store is built once per session through the real runner (scripted agents, one
worker, so the row order is fixed) and copied into each test's tmp dir. Every test
runs with its tmp dir as the working directory, so paths on screen are short and the
same on every machine.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from tui_support import BracketAgent

from sandbox.records import Caps


def _build_store(path: Path, cache: Path) -> None:
    from sandbox.datasets import open_dataset
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    corpus, _ = open_dataset("builtin", cache)
    store = Store(path)
    specs = [
        (RunSpec(name="heur-s0", dataset="builtin", agent="heuristic", limit=6, workers=1), None),
        (
            RunSpec(
                name="oracle-nosearch", dataset="builtin", agent="oracle", ablation="no-search", limit=4, workers=1
            ),
            None,
        ),
        (
            RunSpec(
                name="scripted-[b]llm[/b]",
                dataset="builtin",
                agent="llm",
                model="scripted/brackets",
                limit=2,
                workers=1,
                caps=Caps(),
            ),
            lambda item, rep, attempt: BracketAgent(item),
        ),
        (RunSpec(name="random-s1", dataset="builtin", agent="random", seed=1, limit=5, workers=1), None),
    ]
    for spec, factory in specs:
        asyncio.run(Runner(spec, corpus, store, factory=factory).run())
    store.close()
    corpus.close()


@pytest.fixture(scope="session")
def builtin_cache(tmp_path_factory) -> Path:
    """A corpus cache holding the built-in benchmark (generated and imported once)."""
    from sandbox.datasets import open_dataset

    cache = tmp_path_factory.mktemp("cache")
    corpus, _ = open_dataset("builtin", cache)
    corpus.close()
    return cache


@pytest.fixture(scope="session")
def seeded_store_file(tmp_path_factory, builtin_cache) -> Path:
    path = tmp_path_factory.mktemp("seed") / "store.sqlite"
    _build_store(path, builtin_cache)
    return path


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch, builtin_cache):
    """No test touches the user's store, cache or config; the cwd is the tmp dir; no cursor blink."""
    monkeypatch.setenv("AGENTHOP_DB", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("AGENTHOP_CACHE", str(builtin_cache))
    monkeypatch.setenv("AGENTHOP_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("AGENTHOP_STATE", str(tmp_path / "state.toml"))
    monkeypatch.setenv("AGENTHOP_EXPORTS", str(tmp_path))  # exports offered by default land here, not in ~/Downloads
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("textual.widgets._input.Input.cursor_blink", False)
    return tmp_path


@pytest.fixture
def seeded(tmp_path, seeded_store_file) -> Path:
    """This test's own copy of the seeded store (at ./store.sqlite)."""
    target = tmp_path / "store.sqlite"
    shutil.copy(seeded_store_file, target)
    return target
