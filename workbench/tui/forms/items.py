"""The item browser's model: how a filter in force is named, how wide the question column is, which sort comes
next and what the status line says of the rows shown.

Rows, filters and sorting themselves are `workbench.service.items`' (the functions `--batch items` uses); this
is the wording and arithmetic of the browser around them. Text here is unsanitised: the screen makes it safe to show.
"""

from __future__ import annotations

from collections.abc import Mapping

from workbench.service import items

RIGHT_LABELS = {"none": "none right", "some": "some right", "all": "all right", "unrun": "not run"}
QUESTION_MIN_WIDTH = 30
OTHER_COLUMNS_WIDTH = 72  # the cells the columns before the question take


def filter_label(name: str, value: object) -> str:
    """A filter in force, named as the filter bar names it."""
    if name == "right":
        return RIGHT_LABELS[str(value)]
    return f"{'type' if name == 'kind' else name} {value}"


def question_width(terminal_width: int) -> int:
    """The question column gets what the other columns leave of the terminal's width (at least 30)."""
    return max(QUESTION_MIN_WIDTH, terminal_width - OTHER_COLUMNS_WIDTH)


def next_sort(key: str) -> str:
    """The sort after `key` in the order `s` steps through (after the last, file order again)."""
    return items.SORTS[(items.SORTS.index(key) + 1) % len(items.SORTS)]


def status_text(shown: int, total: int, active: Mapping[str, object], sort_key: str, reverse: bool) -> str:
    """The status line: how many of the items are shown, the filters in force (x clears them) and the order."""
    parts = [f" {shown} of {total} items"]
    if active:
        parts.append("filters: " + ", ".join(filter_label(k, v) for k, v in active.items()) + " (x clears)")
    parts.append("file order" if sort_key == "file" else f"sorted by {sort_key}{' (reversed)' if reverse else ''}")
    return " · ".join(parts)
