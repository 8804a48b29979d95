"""Sane bounds of a run's numbers, shared by the launch form and the `--batch run` flags, and of `synth`'s sizes.

A value past them is a typo, not a configuration: `--budget 999999999999999999999` would
create the run's row and then fail inside SQLite (its integers stop at 2**63 − 1) with an
ExceptionGroup, leaving a failed run behind. Checking here refuses it before anything is
written, with the bound in the message. The low bounds refuse degenerate
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
    "top_k": (1, 1_000_000),
    "local_threads": (1, 4_096),  # the local model server's threads
    "extra_tools_count": (0, 10_000),  # out-of-domain tools offered (the general-agent setting); 0 = the plain run
    "extra_tools_cost": (0, 100_000),  # points an out-of-domain call costs
    # `synth` sizes: a benchmark is built in memory before it is written. At the largest (5,000 items over 10,000
    # papers, preset paper) that took 44 s, 0.43 GB of memory and 0.85 GB on disk on 2 cores under load; 100,000
    # items ran for minutes with memory growing before it could say a word
    "synth_items": (1, 5_000),
    "synth_papers": (1, 10_000),
}
# name → (lowest, highest, whether the lowest itself is allowed): the ranges providers accept for sampling, and
# positive seconds, rates and dollars (a NaN or an infinity is never a setting)
FLOAT_BOUNDS: dict[str, tuple[float, float, bool]] = {
    "temperature": (0.0, 2.0, True),
    "top_p": (0.0, 1.0, False),
    "timeout": (0.0, 86_400.0, False),
    "rpm": (0.0, 1_000_000.0, False),
    "max_run_cost": (0.0, 1_000_000_000.0, True),
    "alpha": (0.0, 0.5, False),  # a one-sided family-wise level; above ½ no gain could fail to be "certified"
    "distractible": (0.0, 1.0, True),  # the heuristic's out-of-domain call probability
}


def float_out_of_bounds(name: str, value: float) -> str | None:
    """Why the real number `value` is not acceptable for `name` ("must be between 0 and 2"), or None."""
    low, high, closed = FLOAT_BOUNDS[name]
    if not (low <= value <= high) or (value == low and not closed):  # NaN fails every comparison
        return f"must be between {low:g} and {high:g}" if closed else f"must be above {low:g} and at most {high:g}"
    return None


def out_of_bounds(name: str, value: int) -> str | None:
    """Why `value` is not acceptable for `name` ("must be at most 100,000"), or None."""
    low, high = RUN_BOUNDS[name]
    if value < low:
        return f"must be at least {low:,}"
    if value > high:
        return f"must be at most {high:,}"
    return None
