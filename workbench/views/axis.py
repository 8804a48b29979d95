"""A figure's y axis laid out on whole text rows: plotext's own axis puts two different values on one row (or two
bars of different values at one height) when a panel is short, and ticks at uneven rows. The figures
(`workbench.views.figures`) ask `value_axis` for the rows their values need and grow when they must."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

NICE_STEPS = (1.0, 2.0, 2.5, 5.0)  # tick steps are these times a power of ten
ROWS_PER_TICK = (1, 2, 3, 4, 5, 10, 20)  # a tick every this many rows: evenly spaced on screen
MAX_TICKS = 9  # more tick labels than this crowd the axis
MAX_AXIS_ROWS = 100  # a panel never grows past this many rows (values closer than its row step may then share one)


@dataclass(frozen=True)
class ValueAxis:
    """A y axis laid out on whole rows: row `r` (0 at the bottom) is the value `lo + r * step`, and a tick at a
    round value sits every `every` rows. plotext puts a value `v` on row floor(0.5 + (rows − 1)(v − lo)/(hi − lo)),
    so with `hi = lo + (rows − 1) * step` two values at least `step` apart never share a row."""

    lo: float
    step: float
    rows: int
    every: int
    decimals: int

    @property
    def hi(self) -> float:
        return self.lo + (self.rows - 1) * self.step

    @property
    def ticks(self) -> list[float]:
        return [self.lo + r * self.step for r in range(0, self.rows, self.every)]

    @property
    def labels(self) -> list[str]:
        return [f"{round(v, self.decimals) + 0.0:.{self.decimals}f}" for v in self.ticks]  # + 0.0: never -0.00

    def row(self, value: float) -> int:
        """The row plotext draws `value` on (its own mapping, `plotext._utility.get_matrix_data`)."""
        return math.floor(round(0.5 + (self.rows - 1) * (value - self.lo) / (self.hi - self.lo), 8))


def _min_gap(values: list[float]) -> float:
    points = sorted(set(values))
    return min((b - a for a, b in itertools.pairwise(points)), default=math.inf)


def value_axis(values: list[float], rows: int, bars: bool = False, limit: int | None = None) -> ValueAxis:
    """The y axis for `values` on about `rows` rows, with more rows when two different values would otherwise
    share a row (or, with `bars` standing on zero, two bars of different values would be equally tall): the row
    step is at most the smallest gap between values. Ticks are round values at equal row intervals, 2 to 9 of
    them, a tick step at most ⅔ of the values' span (the axis is mostly values, not margin).

    Of the layouts that keep the values apart, the tallest that fits in `rows`, else the shortest that does not
    (the figure grows and scrolls rather than merge two values), else (closer than MAX_AXIS_ROWS can tell apart)
    the finest. A flat series gets a band of ±0.05 around it.

    With `limit`, no layout taller than `limit` rows (unless none is that short): the figure fits the terminal
    (a 40-row terminal got plots 70-75 rows tall), and values closer than its rows can tell may share a row."""
    points = sorted({round(float(v), 9) for v in values} | ({0.0} if bars else set()))  # 1e-9 apart: one value
    gap = min(_min_gap(points), _min_gap([abs(v) for v in points]) if bars else math.inf)
    low, high = points[0], points[-1]
    if len(points) == 1:
        low, high = low - 0.05, high + 0.05
    return _chosen(_layouts(low, high, limit), gap, rows)


def _layouts(low: float, high: float, limit: int | None) -> list[ValueAxis]:
    """Every layout of round ticks over [low, high] within MAX_AXIS_ROWS and 2 to MAX_TICKS ticks; with `limit`,
    those no taller than it (the shortest when none is)."""
    layouts = [
        a
        for tick in _tick_steps(high - low)
        for every in ROWS_PER_TICK
        for a in [_layout(low, high, tick, every)]
        if a.rows <= MAX_AXIS_ROWS and 1 <= (a.rows - 1) // every <= MAX_TICKS - 1
    ]
    if limit is not None:
        layouts = [a for a in layouts if a.rows <= limit] or [min(layouts, key=lambda a: a.rows)]
    return layouts


def _chosen(layouts: list[ValueAxis], gap: float, rows: int) -> ValueAxis:
    """Of the layouts whose row step keeps values `gap` apart on rows of their own, the tallest within `rows`, else
    the shortest; the finest step when none keeps them apart."""
    apart = [a for a in layouts if a.step <= gap * (1 + 1e-9)]
    if not apart:
        return min(layouts, key=lambda a: (a.step, a.rows))
    within = [a for a in apart if a.rows <= rows]
    if within:
        return max(within, key=lambda a: (a.rows, len(a.ticks)))
    return min(apart, key=lambda a: (a.rows, -len(a.ticks)))


def _tick_steps(span: float) -> list[float]:
    """Round tick steps from a sixth of the span (with the ends rounded out, up to 9 ticks) to ⅔ of it."""
    steps = []
    for power in range(math.floor(math.log10(span / 6)) - 1, math.floor(math.log10(span)) + 1):
        steps += [nice * 10.0**power for nice in NICE_STEPS if span / 8 <= nice * 10.0**power <= span / 1.5]
    return steps


def _layout(low: float, high: float, tick: float, every: int) -> ValueAxis:
    """Ticks `tick` apart every `every` rows, from the tick at or below `low` to the one at or above `high`."""
    first = math.floor(low / tick + 1e-9)
    last = max(math.ceil(high / tick - 1e-9), first + 1)
    digits = -math.floor(math.log10(tick) + 1e-12)
    decimals = max(0, digits + (1 if round(tick * 10.0**digits, 6) % 1 else 0))  # 2.5 needs one more
    return ValueAxis(
        lo=first * tick, step=tick / every, rows=(last - first) * every + 1, every=every, decimals=decimals
    )
