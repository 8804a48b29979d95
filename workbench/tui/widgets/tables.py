"""Row-cursor tables whose enter key says what it does on each screen (and can be remapped by id), and
`RowTable`, a table for thousands of rows that draws only the rows on screen.

A run holds up to a few thousand trajectories. Textual's DataTable measures and renders
every row it is given (about a millisecond each on a busy machine, and again after every
change), so a 3,000-row list paused the run screen for a second. `RowTable` keeps rows
as tuples of plain strings and builds a `Strip` only for the lines in view (the line API,
as TranscriptView does): opening, filtering and sorting cost what the rows on screen cost.
Cells are drawn as Segments, so untrusted text is never parsed as markup.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import DataTable

from workbench.tui.widgets.wide import ColumnsMoved, ColumnSpan, column_span, next_stop, stop_width


def clear_rows(table: DataTable) -> None:
    """Remove every row and let each column shrink back to its header: a DataTable column only ever widens as
    rows come, so cells fitted to a narrower terminal would otherwise keep the old widths."""
    table.clear()
    for column in table.columns.values():
        column.content_width = column.label.cell_len


def keep_scrolled(table: DataTable, top: float) -> None:
    """Scroll a table whose rows were just replaced (`clear_rows` scrolls it to its top) back to `top`, moved only as
    far as keeps the cursor's row in view, at once. DataTable scrolls to its cursor after the next refresh: a frame
    was drawn from the top meanwhile, the cursor's row out of sight (a live table rebuilt ten times a second showed
    other rows than the one enter follows). Rows one line high."""
    header = table.header_height if table.show_header else 0
    body = max(1, (table.scrollable_content_region.height or table.size.height) - header)
    rows, cursor = table.row_count, table.cursor_row
    top = min(max(int(top), cursor - body + 1), cursor, max(0, rows - body))
    table.virtual_size = Size(table.virtual_size.width, rows + header)  # DataTable measures the new rows only on idle
    table.scroll_to(y=max(0, top), animate=False, immediate=True)


def column_room(table: DataTable, widths: Sequence[int], rows: int | None = None) -> int:
    """Cells left for one more column beside columns whose content is `widths` wide (padding and the vertical
    scrollbar counted), so the last column is clipped instead of scrolled off or covered by the scrollbar.

    With more `rows` (default: the table's) than its height shows, the vertical scrollbar takes its full width
    (2 cells): counting 1 left the columns a cell too wide, and a horizontal scrollbar appeared on the row
    above the footer."""
    pad = 2 * table.cell_padding
    shown = (table.size.height or table.app.size.height) - (1 if table.show_header else 0)
    scrolls = (table.row_count if rows is None else rows) > shown
    scrollbar = max(1, table.styles.scrollbar_size_vertical) if scrolls else 1
    return (table.size.width or table.app.size.width) - scrollbar - sum(w + pad for w in widths) - pad


class RunsTable(DataTable):
    # Home/End go to the first and last run: DataTable's own move a row cursor to the first and last column,
    # which on a row cursor is nowhere
    BINDINGS = [
        Binding("enter", "select_cursor", "Open", id="runs.open"),
        Binding("home", "scroll_top", "First run", show=False, id="runs.first"),
        Binding("end", "scroll_bottom", "Last run", show=False, id="runs.last"),
    ]


class EpisodeTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Follow", id="live.follow")]


class ItemsTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Open item", id="items.open")]


class ItemTrajectoryTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Step through", id="items.open_trajectory")]


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    justify: str = "left"  # left | right | center


PAD = 1  # cells of padding either side of a cell, as DataTable draws them


def clicked_sort(column: str, reverse: bool, clicked: str) -> tuple[str, bool]:
    """(column, reverse) after a click on the `clicked` header, the same on every list: a click on the column the
    rows are sorted by reverses the order; a click on another sorts ascending by it."""
    return (column, not reverse) if clicked == column else (clicked, False)


def _fit(text: str, width: int, justify: str) -> str:
    """`text` justified in exactly `width` cells (cropped when longer)."""
    size = cell_len(text)
    if size >= width:
        return set_cell_size(text, width)
    gap = width - size
    if justify == "right":
        return " " * gap + text
    if justify == "center":
        return " " * (gap // 2) + text + " " * (gap - gap // 2)
    return text + " " * gap


class RowTable(ScrollView, can_focus=True):
    """A header line and rows of plain strings with a row cursor; only the rows on screen are drawn.

    `set_rows` replaces the rows, `append_rows` adds at the end (a live run). Column widths fit the widest
    cell (measured once per row, as strings). Enter or a click on the cursor row posts `RowSelected`; a click on
    a header posts `HeaderSelected`.
    """

    BINDINGS = [
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("home", "cursor_to(0)", "First row", show=False),
        Binding("end", "cursor_to(-1)", "Last row", show=False),
        Binding("right", "scroll_columns(1)", "Scroll right", show=False),
        Binding("left", "scroll_columns(-1)", "Scroll left", show=False),
        Binding("enter", "select", "Select", show=False),
    ]
    COMPONENT_CLASSES = {"rowtable--header", "rowtable--cursor", "rowtable--even-row"}

    cursor_row: reactive[int] = reactive(0, always_update=True)

    class RowSelected(Message):
        def __init__(self, table: RowTable, index: int):
            super().__init__()
            self.table = table
            self.index = index

    class HeaderSelected(Message):
        def __init__(self, table: RowTable, column: str):
            super().__init__()
            self.table = table
            self.column = column

    def __init__(self, columns: Sequence[Column] = (), *, zebra_stripes: bool = True, fixed_columns: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.columns: list[Column] = list(columns)
        self.fixed_columns = fixed_columns  # the first columns, drawn in place while the others scroll sideways
        self._span: ColumnSpan | None = None
        self.rows: list[tuple[str, ...]] = []
        self.zebra_stripes = zebra_stripes
        self.sort_column: str | None = None
        self.sort_reverse = False
        self.empty_note = ""  # drawn under the header while there are no rows (a filter that matches nothing)
        self._widths: list[int] = self._label_widths()

    # ------------------------------------------------------------ content

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def show_sort(self, column: str | None, reverse: bool = False) -> None:
        """Mark the column the rows are sorted by with ▲ (or ▼ when reversed) in the header."""
        self.sort_column, self.sort_reverse = column, reverse
        self.refresh()

    def _label_widths(self) -> list[int]:
        return [cell_len(c.label) + 1 for c in self.columns]  # a cell for the sort arrow

    def set_rows(self, rows: list[tuple[str, ...]], cursor: int | None = None) -> None:
        self.rows = rows
        self._widths = self._label_widths()
        self._measure(rows)
        self._resize()
        index = self.cursor_row if cursor is None else cursor
        self.cursor_row = max(0, min(index, len(rows) - 1))
        self.refresh()

    def append_rows(self, rows: list[tuple[str, ...]]) -> None:
        self.rows.extend(rows)
        self._measure(rows)
        self._resize()
        self.refresh()

    def _measure(self, rows: list[tuple[str, ...]]) -> None:
        widths = self._widths
        for i in range(len(widths)):
            widest = max((cell_len(r[i]) for r in rows), default=0)
            widths[i] = max(widths[i], widest)

    def _resize(self) -> None:
        view = self.scrollable_content_region.width or self.size.width
        width = stop_width(self._column_widths(), self.fixed_columns, view) if self.fixed_columns else None
        self.virtual_size = Size(width or sum(self._column_widths()), len(self.rows) + 1)
        self.call_after_refresh(self._check_span)

    # ------------------------------------------------------------ columns out of view

    def _column_widths(self) -> list[int]:
        return [w + 2 * PAD for w in self._widths]

    def _check_span(self) -> None:
        """Post `ColumnsMoved` when the columns out of view changed (a scroll, a resize, wider cells)."""
        width = self.scrollable_content_region.width or self.size.width
        span = column_span(self._column_widths(), self.fixed_columns, self.scroll_x, width)
        if span != self._span:
            self._span = span
            self.post_message(ColumnsMoved(self, span))

    def watch_scroll_x(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_x(old_value, new_value)
        self._check_span()

    def on_resize(self) -> None:
        self._resize()  # the last scroll stop depends on the view's width

    def move_cursor(self, row: int) -> None:
        self.cursor_row = row

    # ------------------------------------------------------------ drawing

    @property
    def _body_height(self) -> int:
        """Lines for rows (the header takes the first)."""
        return max(1, (self.scrollable_content_region.height or self.size.height) - 1)

    def _line(self, cells: Sequence[str], style: Style) -> Strip:
        """One Segment per cell (so a screenshot places each cell at its column too)."""
        pad = Segment(" " * PAD, style)
        segments: list[Segment] = []
        for cell, width, column in zip(cells, self._widths, self.columns, strict=True):
            segments += (pad, Segment(_fit(cell, width, column.justify), style), pad)
        return Strip(segments)

    def _label(self, column: Column, width: int) -> str:
        if column.key != self.sort_column:
            return column.label
        arrow = "▼" if self.sort_reverse else "▲"
        return column.label + (" " if cell_len(column.label) + 2 <= width else "") + arrow

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width or self.size.width
        base = self.rich_style
        x0 = int(self.scroll_x)
        if y == 0:
            style = base + self.get_component_rich_style("rowtable--header", partial=True)
            strip = self._line([self._label(c, w) for c, w in zip(self.columns, self._widths, strict=True)], style)
        else:
            index = int(self.scroll_y) + y - 1
            if not self.rows and index == 0 and self.empty_note:
                note = Segment(" " * PAD + self.empty_note, base + Style(dim=True))
                return Strip([note]).crop(0, width).extend_cell_length(width, base)
            if index >= len(self.rows):
                return Strip.blank(width, base)
            style = self._row_style(base, index)
            strip = self._line(self.rows[index], style)
        fixed = sum(self._column_widths()[: self.fixed_columns])
        if not fixed:
            return strip.crop(x0, x0 + width).extend_cell_length(width, style)
        # the fixed columns in place, the others scrolled `x0` cells under them
        return Strip.join([strip.crop(0, fixed), strip.crop(fixed + x0, x0 + width)]).extend_cell_length(width, style)

    def _row_style(self, base: Style, index: int) -> Style:
        """Row `index`'s style: the widget's, striped on even rows (when zebra), highlighted under the cursor."""
        style = base
        if self.zebra_stripes and index % 2:
            style += self.get_component_rich_style("rowtable--even-row", partial=True)
        if index == self.cursor_row:
            style += self.get_component_rich_style("rowtable--cursor", partial=True)
        return style

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ------------------------------------------------------------ cursor

    def validate_cursor_row(self, value: int) -> int:
        return max(0, min(value, len(self.rows) - 1)) if self.rows else 0

    def watch_cursor_row(self, value: int) -> None:
        top = int(self.scroll_y)
        if value < top:
            self.scroll_to(y=value, animate=False, immediate=True)
        elif value >= top + self._body_height:
            self.scroll_to(y=value - self._body_height + 1, animate=False, immediate=True)
        self.refresh()

    def action_cursor(self, delta: int) -> None:
        self.cursor_row += delta

    def action_cursor_to(self, index: int) -> None:
        if self.rows:
            self.cursor_row = index % len(self.rows)

    def action_page(self, direction: int) -> None:
        self.cursor_row += direction * max(1, self._body_height - 1)

    def action_scroll_columns(self, direction: int) -> None:
        """One column to the right or left (the first scrolling column drawn whole)."""
        x = next_stop(self._column_widths(), self.fixed_columns, self.scroll_x, direction, self.max_scroll_x)
        self.scroll_to(x=x, animate=False)

    def action_select(self) -> None:
        if self.rows:
            self.post_message(self.RowSelected(self, self.cursor_row))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        if offset.y == 0:
            fixed = sum(self._column_widths()[: self.fixed_columns])
            x, left = offset.x + (int(self.scroll_x) if offset.x >= fixed else 0), 0
            for column, width in zip(self.columns, self._widths, strict=True):
                left += width + 2 * PAD
                if x < left:
                    self.post_message(self.HeaderSelected(self, column.key))
                    return
            return
        index = int(self.scroll_y) + offset.y - 1
        if 0 <= index < len(self.rows):
            if index == self.cursor_row:
                self.post_message(self.RowSelected(self, index))
            else:
                self.cursor_row = index


class TrajectoryTable(RowTable):
    BINDINGS = [Binding("enter", "select", "Step through", id="run.open")]
