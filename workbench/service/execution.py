"""Executing a run for a front end: its items, its runner, a shard's parse — the one door to `sandbox.runner`.

Every run, from any front end, is executed by the same `sandbox.runner.Runner` (resumable, each step committed as
it happens); a front end gets one here, watches its events (`RunEvent`, a plain record) and asks it to stop.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.runner import RunEvent, Runner, RunSpec


def select_items(corpus: Any, spec: RunSpec) -> list[Any]:
    """The items the run covers, in order (InvalidSlice, `workbench.service.errors`, names a slice that is empty or
    unknown ids)."""
    from sandbox.runner import select_items as selected

    return selected(corpus, spec)


def runner(
    spec: RunSpec, corpus: Any, store: Any, on_event: Callable[[RunEvent], None] | None = None, factory: Any = None
) -> Runner:
    """The runner of `spec` on `corpus`, writing to `store`; `await runner.run()` executes it, `request_stop()`
    lets the episodes in flight finish."""
    from sandbox.runner import Runner

    return Runner(spec, corpus, store, factory=factory, on_event=on_event)


def parse_shard(text: str) -> Any:
    """`I/N` as the run's shard (ValueError with the reason otherwise)."""
    from sandbox.shard import parse_shard as parsed

    return parsed(text)
