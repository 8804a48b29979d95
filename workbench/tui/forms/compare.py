"""The Compare screen's model: the agreement grid's cells and the one it starts on, an item's outcome on each side,
the file the export offers and the two-run picker's check.

Every number is `workbench.service.reports.compare_report`'s (read off the UI thread by `compare_at`). Text here is
unsanitised: the screen makes it safe to show.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from workbench.service.records.compare import Agreement, ItemSide
from workbench.tui.forms.export_files import safe_stem
from workbench.views.cells import counted

CELLS = (("both_right", "only_a"), ("only_b", "both_wrong"))  # rows: A right / A wrong; columns: B right / B wrong
CELL_LABELS = {
    "both_right": "both right",
    "only_a": "only A right",
    "only_b": "only B right",
    "both_wrong": "both wrong",
}
ANSWER_CHARS = 6  # of an answer in an outcome: both runs' cells fit beside the item at 80 columns


def first_cell(agreement: Mapping[str, Agreement]) -> str:
    """The grid's cell the screen starts on: the discordant items first, where the runs differ (the first cell
    holding items, in that order)."""
    return next((c for c in ("only_a", "only_b", "both_wrong", "both_right") if agreement[c]["n"]), "only_a")


def cell_at(row: int, column: int) -> str:
    """The agreement cell at the grid's `row` and `column` (column 0 is the row's label: its first cell)."""
    return CELLS[row][max(column, 1) - 1]


def grid_position(cell: str) -> tuple[int, int]:
    """The grid's row and column of `cell` (the label column is column 0)."""
    row = next(r for r, cells in enumerate(CELLS) if cell in cells)
    return row, CELLS[row].index(cell) + 1


def outcome(side: ItemSide) -> str:
    """`✗ D · 29 pts`: right or wrong, the answer and the points spent; how it ended only when that was not an
    answer (`✗ — · budget · 30 pts`), so both runs' cells fit beside the item at 80 columns."""
    mark = "✓" if side["correct"] else "✗"
    points = counted(side.get("points") or 0, "pt")
    ending = "" if side.get("termination") == "answer" else f" · {side.get('termination')}"
    return f"{mark} {(side.get('answer') or '—')[:ANSWER_CHARS]}{ending} · {points}"


def item_kind(kind: str | None, depth: int | None) -> str:
    """An item's type and depth: `mt d2` (`?` for what is not known)."""
    return f"{kind or '?'} d{depth or '?'}"


def export_path(directory: Path, a: str, b: str) -> Path:
    """The file the export dialog offers for A vs B: `compare-A-vs-B.json` in `directory`, the name made safe."""
    return directory / f"{safe_stem(f'compare-{a}-vs-{b}', 'compare')}.json"


def pair_problem(a: str | None, b: str | None, submitting: bool) -> str | None:
    """Why the picked runs (`None`: not picked yet) cannot be compared, or None: the same run twice; on submitting,
    a side not picked too."""
    if (a is not None and a == b) or (submitting and (a is None or b is None)):
        return "pick two different runs"
    return None
