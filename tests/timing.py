"""What two reports of the same work may differ in: when it ran and how long it took, read off before comparing."""

from __future__ import annotations

from typing import Any

# the keys of wall-clock times and durations in a report or a summary (at any depth)
TIMING = frozenset(
    {"completed_at", "wall_time", "wall_time_s", "p50", "p90", "p95", "mean_wall_time_s", "started_at", "finished_at"}
)


def without_timing(obj: Any, timing: frozenset[str] = TIMING) -> Any:
    """`obj` (parsed JSON) with every key in `timing` left out, at any depth."""
    if isinstance(obj, dict):
        return {k: without_timing(v, timing) for k, v in obj.items() if k not in timing}
    if isinstance(obj, list):
        return [without_timing(v, timing) for v in obj]
    return obj
