"""Sane bounds of a run's numbers, shared by the launch form and the `--batch run` flags.

A value past them is a typo, not a configuration: `--budget 999999999999999999999` used to
pass, create the run's row and then fail inside SQLite (its integers stop at 2**63 − 1)
with an ExceptionGroup, leaving a failed run behind. Checking here refuses it before
anything is written, with the bound in the message. The low bounds refuse degenerate
runs the same way: 0 points or 0 turns end every episode before it starts.
"""
from __future__ import annotations

# name → (lowest, highest) accepted value
RUN_BOUNDS: dict[str, tuple[int, int]] = {
    "budget": (1, 100_000),  # points per episode (the protocol's is 30); 0 would refuse every paid call
    "max_turns": (1, 10_000),
    "max_tokens_total": (1, 1_000_000_000),  # tokens per episode (200K)
    "limit": (1, 10_000_000),
    "workers": (1, 256),
    "replicates": (1, 1_000),
    "seed": (0, 2**63 - 1),
    "max_tokens": (1, 10_000_000),  # per model call
    "concurrency": (1, 10_000),
    "max_run_tokens": (0, 2**62),
}


def out_of_bounds(name: str, value: int) -> str | None:
    """Why `value` is not acceptable for `name` ("must be at most 100,000"), or None."""
    low, high = RUN_BOUNDS[name]
    if value < low:
        return f"must be at least {low:,}"
    if value > high:
        return f"must be at most {high:,}"
    return None
