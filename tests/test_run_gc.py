"""A run raises the garbage collector's first threshold while it executes, and puts it back after."""

import asyncio
import gc

from sandbox.runner import Runner, RunSpec
from sandbox.runner.collector import RUN_GC_FIRST_THRESHOLD
from storage import Store


def test_a_run_spaces_young_collections_and_restores_the_threshold(demo_corpus, tmp_path):
    before = gc.get_threshold()
    seen: list[int] = []
    try:
        gc.set_threshold(700, *before[1:])
        spec = RunSpec(name="gc", dataset="builtin", agent="heuristic", workers=2, limit=2)
        runner = Runner(
            spec, demo_corpus, Store(tmp_path / "s.sqlite"), on_event=lambda e: seen.append(gc.get_threshold()[0])
        )
        asyncio.run(runner.run())
        assert seen and min(seen) == RUN_GC_FIRST_THRESHOLD
        assert gc.get_threshold() == (700, *before[1:])
        gc.set_threshold(RUN_GC_FIRST_THRESHOLD * 2, *before[1:])  # a host that set it higher keeps its own
        asyncio.run(Runner(RunSpec(**{**vars(spec), "name": "gc2"}), demo_corpus, runner.store).run())
        assert gc.get_threshold()[0] == RUN_GC_FIRST_THRESHOLD * 2
    finally:
        gc.set_threshold(*before)
