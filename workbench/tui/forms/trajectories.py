"""A run's trajectory list, its model: the sorts `s` steps through, a trajectory's row of cells, which rows a
filter keeps and in what order, and where the cursor goes when the rows change.

Text here is unsanitised: the screen makes each cell safe to show and clips the RESULT cell to RESULT_CELLS
terminal cells (Rich measures them).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from storage.rows import TrajectoryListRow
from workbench.views.cells import usd

RESULT_CELLS = 8  # ✓ or ✗, a space and the answer's first 6 cells (the screen clips, measuring cells)


def none_last(value: Any) -> tuple[bool, Any]:
    """A sort key putting None after every value."""
    return value is None, value if value is not None else 0


# `s` cycles through these: sort name → key of a trajectory row (None values last)
SORTS: dict[str, Callable[[TrajectoryListRow], Any]] = {
    "stored": lambda t: t["id"],
    "item": lambda t: (t["item_id"], t.get("replicate") or 0),
    "result": lambda t: (bool(t.get("correct")), t["id"]),
    "termination": lambda t: (t.get("termination") or "", t["id"]),
    "points": lambda t: none_last(t.get("points_used")),
    "turns": lambda t: none_last(t.get("turns")),
    "tokens": lambda t: none_last(t.get("tokens")),
    "calls": lambda t: none_last(t.get("tool_calls")),
    "cost": lambda t: none_last(t.get("cost_usd")),
}


def cells(t: TrajectoryListRow, tokens_measured: bool = True) -> tuple[str, ...]:
    """The row of a trajectory, one plain string per column (the screen's COLUMNS, in order); TOKENS is "—" for a
    run whose tokens are not measured (a scripted agent), as the reports say."""
    return (
        t["item_id"],
        str(t.get("replicate", 0)),
        kind_cell(t.get("kind"), t.get("depth")),
        result_cell(t.get("answer"), bool(t.get("correct"))),
        t.get("termination") or "",
        str(t.get("points_used") or 0),
        str(t.get("turns") or 0),
        f"{t.get('tokens') or 0:,}" if tokens_measured else "—",
        str(t.get("tool_calls") or 0),
        recall_cell(bool(t.get("paper_recall")), bool(t.get("section_recall"))),
        usd(t.get("cost_usd"), 3),
    )


def kind_cell(kind: str | None, depth: int | None) -> str:
    """The item's kind and depth: "mt d3"."""
    return (kind or "?") + (f" d{depth}" if depth else "")


def result_cell(answer: str | None, correct: bool) -> str:
    """✓ or ✗ and the answer given: "✓ B" (the screen clips it to RESULT_CELLS)."""
    return f"{'✓' if correct else '✗'} {answer or '—'}"


def recall_cell(paper: bool, section: bool) -> str:
    """Paper recall and section recall, each ● (reached) or ○."""
    return ("●" if paper else "○") + " " + ("●" if section else "○")


def appended(old: Sequence[int], new: Sequence[int]) -> bool:
    """Whether the trajectory ids `new` are the `old` ones with more after them (a run in progress)."""
    # strict=False: new is the longer list, compared with old over old's length
    return bool(old) and len(new) > len(old) and all(a == b for a, b in zip(old, new, strict=False))


def matches(t: TrajectoryListRow, query: str) -> bool:
    """Every word of `query` in the row's item id, type, depth, ending, answer, outcome (correct/wrong, ✓/✗) or the
    kind of option a wrong answer chose."""
    if not query:
        return True
    outcome = "correct ✓" if t.get("correct") else "wrong ✗"
    depth = f"d{t['depth']}" if t.get("depth") else ""
    hay = " ".join(
        str(v)
        for v in (
            t.get("item_id"),
            t.get("kind"),
            depth,
            t.get("termination"),
            t.get("answer"),
            t.get("chosen_type"),
            outcome,
        )
        if v
    ).lower()
    return all(word in hay for word in query.lower().split())


def view_rows(rows: Sequence[TrajectoryListRow], query: str, column: str, reverse: bool) -> list[TrajectoryListRow]:
    """The rows the filter `query` keeps, sorted by `column` (stored order unless asked otherwise)."""
    kept = [t for t in rows if matches(t, query)]
    if column != "stored" or reverse:
        kept.sort(key=SORTS[column], reverse=reverse)
    return kept


def kept_cursor(old_ids: Sequence[int], ids: Sequence[int], cursor: int) -> int:
    """Where the cursor goes when the rows shown change from `old_ids` to `ids`: on the trajectory it was on (at
    `cursor` among `old_ids`), else on the first row."""
    current = old_ids[cursor] if 0 <= cursor < len(old_ids) else None
    return ids.index(current) if current in ids else 0


def next_sort(column: str) -> str:
    """The sort after `column` in the order `s` steps through."""
    names = list(SORTS)
    return names[(names.index(column) + 1) % len(names)]


def header_sort(column: str) -> str:
    """The sort a click on the header `column` asks for (a column that sorts by nothing: stored order)."""
    return column if column in SORTS else "stored"
