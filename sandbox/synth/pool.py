"""The least pool of papers that builds a number of items with a seed: the `--papers` a refused `synth` names, found
by building (generation is deterministic and in memory), not estimated."""

from __future__ import annotations

import math
from dataclasses import replace

from sandbox.synth.generator import Generator
from sandbox.synth.sizes import NotEnoughPapers, Preset

EXACT_UP_TO = 400  # items: above, the pool suggested is a round one that builds rather than the least that does


def suggest_papers(built: int, wanted: int, papers: int) -> int:
    """A first guess at a pool that builds `wanted` items: the observed items-per-paper rate with a quarter to
    spare, in tens. Only the starting point of `minimum_papers`, which checks."""
    return max(papers + 10, math.ceil(papers * wanted / max(built, 1) * 1.25 / 10) * 10)


def _built(seed: int, preset: Preset) -> int:
    """How many of `preset.items` the pool builds (all of them: it builds)."""
    gen = Generator(seed, preset)
    gen.build_universe()
    try:
        gen.build_items()
    except NotEnoughPapers as exc:
        return exc.built
    return preset.items


def _builds(seed: int, preset: Preset) -> bool:
    return _built(seed, preset) == preset.items


def minimum_papers(seed: int, preset: Preset, built: int) -> int:
    """A pool above `preset.papers` (which failed, building `built` items) that builds `preset.items` with this
    seed. Generation is deterministic and in memory, so the number a user is told to try is one that was built,
    not an estimate.

    Up to EXACT_UP_TO items it is the smallest such pool: bisection between the failing pool and one that builds
    (the rate-based guess, doubled until it does), milliseconds a step. Above, each build costs seconds and
    bisection took a minute for 5,000 items, so the pools tried are a quarter of the items (a full pool builds
    about four items a paper), then a quarter more each time, in tens: one or two builds, within a few tenths of
    the smallest."""
    low, wanted = preset.papers, preset.items
    if wanted > EXACT_UP_TO:
        high = max(low + 10, math.ceil(wanted / 4 / 10) * 10)
        while _built(seed, replace(preset, papers=high)) < wanted:
            high = math.ceil(high * 1.25 / 10) * 10
        return high
    high = suggest_papers(built, wanted, low)
    while not _builds(seed, replace(preset, papers=high)):
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if _builds(seed, replace(preset, papers=mid)):
            high = mid
        else:
            low = mid
    return high
