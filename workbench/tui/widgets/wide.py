"""Tables wider than the terminal: their first columns stay while the others scroll (←/→ on the focused table), and
a line under the table says how many columns are out of view on either side and which keys scroll them.

A table that scrolls sideways posts `ColumnsMoved` when the columns in view change (a scroll, a resize, new
columns); its screen redraws the table's `ScrollHint` from `ColumnSpan`, the columns out of view on each side.
`WideTable` is a DataTable that does so; `tables.RowTable` does the same for its own lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from workbench.views.cells import counted


@dataclass(frozen=True)
class ColumnSpan:
    """How many of a table's scrolling columns are out of view to the left and to the right."""

    left: int = 0
    right: int = 0


def column_span(widths: Sequence[int], fixed: int, scroll_x: float, width: int) -> ColumnSpan:
    """The columns out of view of a table whose columns are `widths` cells wide (padding included), the first
    `fixed` of them always drawn, scrolled `scroll_x` cells into a view `width` cells wide. A column cut at an edge
    counts as out of view: its header is not whole."""
    if width <= 0:
        return ColumnSpan()
    start = sum(widths[:fixed])  # the scrolling columns are drawn from there
    left = right = 0
    x = start
    for w in widths[fixed:]:
        drawn_from, drawn_to = x - scroll_x, x + w - scroll_x
        if drawn_from < start:
            left += 1
        elif drawn_to > width:
            right += 1
        x += w
    return ColumnSpan(left, right)


def next_stop(widths: Sequence[int], fixed: int, scroll_x: float, direction: int, max_x: float) -> float:
    """Where ←/→ scrolls a table to: the next column's start in `direction` (so the first scrolling column drawn is
    whole, never cut by the fixed ones), within 0 and `max_x`."""
    stops, x = [0], 0
    for w in widths[fixed:]:
        x += w
        stops.append(x)
    if direction > 0:
        target = next((stop for stop in stops if stop > scroll_x), max_x)
    else:
        target = next((stop for stop in reversed(stops) if stop < scroll_x), 0)
    return max(0.0, min(float(target), max_x))


def stop_width(widths: Sequence[int], fixed: int, width: int) -> int:
    """The width to scroll over for a table whose columns are `widths` wide in a view `width` cells wide: its
    columns', plus what lets the last scroll stop at a column's start (the scrolling columns that fit from that
    column on shown whole, not the one before them cut by the fixed columns)."""
    total = sum(widths)
    room = width - sum(widths[:fixed])
    if total <= width or room <= 0:
        return total
    rest = sum(widths[fixed:])
    stop = 0
    for w in widths[fixed:]:
        if rest - stop <= room:
            break
        stop += w
    return max(total, sum(widths[:fixed]) + stop + room)


def hint_text(span: ColumnSpan) -> str:
    """` ← 2 columns · 3 more columns → (←/→ scroll)`, or '' when every column is in view."""
    parts = []
    if span.left:
        parts.append(f"← {counted(span.left, 'column')}")
    if span.right:
        parts.append(f"{counted(span.right, 'more column')} →")
    return f" {' · '.join(parts)} (←/→ scroll)" if parts else ""


class ColumnsMoved(Message):
    """The columns in view of `table` changed: its screen redraws the table's hint."""

    def __init__(self, table: Widget, span: ColumnSpan):
        super().__init__()
        self.table = table
        self.span = span


class ScrollHint(Static):
    """The line under a wide table: what is out of view and how to scroll to it; hidden while nothing is."""

    DEFAULT_CSS = """
    ScrollHint { height: 1; color: $text-muted; }
    """

    def show_span(self, span: ColumnSpan) -> None:
        text = hint_text(span)
        self.display = bool(text)
        self.update(Text(text))


def data_table_span(table: DataTable) -> ColumnSpan:
    """A DataTable's columns out of view (its `fixed_columns` first ones always drawn)."""
    widths = [column.get_render_width(table) for column in table.columns.values()]
    width = table.scrollable_content_region.width or table.size.width
    return column_span(widths, table.fixed_columns, table.scroll_x, width)


class WideTable(DataTable):
    """A DataTable that posts `ColumnsMoved` whenever the columns out of view change (scroll, resize, columns)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._span: ColumnSpan | None = None

    def columns_changed(self) -> None:
        """Call after filling the table: its hint is redrawn once the new widths are measured."""
        self._span = None
        self.call_after_refresh(self._check_span)

    def _check_span(self) -> None:
        span = data_table_span(self)
        if span != self._span:
            self._span = span
            self.post_message(ColumnsMoved(self, span))

    def action_cursor_right(self) -> None:
        self._scroll_columns(1)

    def action_cursor_left(self) -> None:
        self._scroll_columns(-1)

    def _scroll_columns(self, direction: int) -> None:
        """←/→ on a row cursor: one column at a time (DataTable scrolled a few cells, cutting the column drawn beside
        the fixed ones); a cell cursor moves as DataTable's does."""
        if self.cursor_type in ("cell", "column"):
            super().action_cursor_right() if direction > 0 else super().action_cursor_left()
            return
        widths = [column.get_render_width(self) for column in self.columns.values()]
        x = next_stop(widths, self.fixed_columns, self.scroll_x, direction, self.max_scroll_x)
        self.scroll_to(x=x, animate=False)

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_x(old_value, new_value)
        self._check_span()

    def on_resize(self) -> None:
        self.call_after_refresh(self._check_span)
