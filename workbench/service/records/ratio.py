"""A ratio's counts: every report gives a ratio twice, its value (None where its denominator is 0) and its
[numerator, denominator] (`Pair`), so a reader can pool or check it; the run report, the comparison, the
general-agent setting's measures and the panel all carry them."""

from __future__ import annotations

Pair = list[float | int]  # a ratio's [numerator, denominator]
