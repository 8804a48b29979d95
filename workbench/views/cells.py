"""The cells every view prints: a count with its noun, a percentage, a number, points, and `—` where nothing was
measured. One helper each, so the CLI and the TUI word a value the same way."""
from __future__ import annotations


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 paper`, `0 papers`, `2 papers`: a count with its noun in the right number (`plural` when not noun + s)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _frac(counts: list | None) -> str:
    return "" if not counts else f"{counts[0]:g}/{counts[1]}"


def _delta(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pts"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"
