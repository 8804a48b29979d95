"""The Live screen's model: the run's state and progress in words, which meter bars fit the table's width, and an
episode row's words (its item, its last call or how it finished) before the screen draws them.

The numbers are the source's (`workbench.tui.monitor.Snapshot`, from the runner's events or the store). Text here is
unsanitised: the screen makes it safe to show.
"""

from __future__ import annotations

from workbench.tui.monitor import EpisodeRow, Snapshot
from workbench.views.cells import duration, fraction, usd

STATUS = {
    "starting": "… starting",
    "running": "▶ running",
    "done": "✓ done",
    "interrupted": "■ interrupted",
    "failed": "✗ failed",
}
BARS = (10, 8, 8)  # meter bar widths of POINTS, TURNS, TOKENS; NARROW_BARS below WIDE columns, for LAST CALL's sake
NARROW_BARS, WIDE = (5, 4, 4), 100
LAST_CALL_MIN, LAST_CALL_MAX = 8, 48


def stats_words(s: Snapshot) -> str:
    """` 12/60  ·  acc 58.3%  ·  1.2 ep/s  ·  ETA 40s  ·  elapsed 10s  ·  cost $0.01` (ETA only while running)."""
    rate = "—" if s.rate is None else f"{s.rate:.1f} ep/s"
    eta = "—" if s.status != "running" else duration(s.eta_s)
    return (
        f" {s.done}/{s.planned}  ·  acc {fraction(s.accuracy)}  ·  {rate}  ·  ETA {eta}  ·  elapsed "
        f"{duration(s.elapsed_s)}  ·  cost {usd(s.cost_usd)}"
    )


def status_words(s: Snapshot) -> str:
    """The title's state after the run's name, and the source's message (`… starting: reading the corpus`)."""
    words = STATUS.get(s.status, s.status)
    if s.message:
        words += (": " if s.status == "starting" else "  ") + s.message
    return words


def bar_widths(width: int) -> tuple[int, int, int]:
    """The POINTS, TURNS and TOKENS meters' bar widths in a table `width` cells wide."""
    return BARS if width >= WIDE else NARROW_BARS


def last_call_width(room: int) -> int:
    """The LAST CALL column's width from the `room` the other columns leave: 8 to 48 cells."""
    return min(LAST_CALL_MAX, max(LAST_CALL_MIN, room))


def item_words(key: tuple[str, int]) -> str:
    """The ITEM cell: the item, and its replicate when not the first (`mt-0007 r2`)."""
    return key[0] + (f" r{key[1]}" if key[1] else "")


def verdict(correct: bool | None) -> str:
    """`correct ✓` or `wrong ✗`."""
    return "correct ✓" if correct else "wrong ✗"


def last_call_words(e: EpisodeRow) -> str:
    """The LAST CALL cell: the episode's latest call, or how it finished and whether it was right."""
    if not e.finished:
        return e.last_call
    return f"finished: {e.termination or '?'}, {verdict(e.correct)}"
