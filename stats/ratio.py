"""A ratio that keeps its numerator and denominator, so every reported share can be checked by hand."""

from __future__ import annotations

from dataclasses import dataclass

Pair = list[float | int]  # a ratio as a report gives it: [numerator, denominator]


@dataclass(frozen=True)
class Ratio:
    num: float
    den: float  # a count, or a sum of amounts (whole in practice: `axes._py` keeps whole sums ints)

    @property
    def value(self) -> float | None:
        """None when nothing was counted (an empty split is not 0%)."""
        return self.num / self.den if self.den else None

    def as_list(self) -> Pair:
        return [self.num, self.den]


def share(flags) -> Ratio:
    """The share of true values among `flags`."""
    flags = list(flags)
    return Ratio(sum(1 for f in flags if f), len(flags))
