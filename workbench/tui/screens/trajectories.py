"""One run: its trajectories (enter opens the stepper; `/` filters, `s` sorts) and its diagnostics, in two tabs.

A run can hold thousands of trajectories: the list is a `RowTable`, which draws only the
rows on screen, so opening, filtering and sorting a 3,000-trajectory run costs what the
rows on screen cost. The store is polled once a second, but the rows are re-read only
when this run moved on (its status, count or last trajectory), not on every commit of
some other run writing to the same store; the diagnostics are computed off the UI thread.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Input, Static, TabbedContent, TabPane

from storage.rows import TrajectoryListRow
from workbench.service.agents import measures_tokens
from workbench.service.datasets import dataset_label
from workbench.tui.forms import trajectories as form
from workbench.tui.forms.trajectories import RESULT_CELLS, appended, cells
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.diagnostics import DiagnosticsPanel
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.tui.widgets.tables import Column, RowTable, TrajectoryTable, clicked_sort
from workbench.tui.widgets.wide import ColumnsMoved, ScrollHint
from workbench.views.cells import fraction

COLUMNS = (
    Column("item", "ITEM"),
    Column("rep", "REP", "right"),
    Column("type", "TYPE"),
    Column("result", "RESULT"),
    Column("termination", "ENDING"),
    Column("points", "POINTS", "right"),
    Column("turns", "TURNS", "right"),
    Column("tokens", "TOKENS", "right"),
    Column("calls", "CALLS", "right"),
    Column("recall", "RECALL P/S", "center"),
    Column("cost", "COST", "right"),
)


def shown_cells(t: TrajectoryListRow, tokens_measured: bool) -> tuple[str, ...]:
    """A trajectory's row as drawn: each cell sanitised (drawn as text, never markup), RESULT clipped."""
    return tuple(
        clip(sanitize(cell), RESULT_CELLS) if column.key == "result" else sanitize(cell)
        for column, cell in zip(COLUMNS, cells(t, tokens_measured), strict=True)
    )


class RunScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Run"
    BINDINGS = [
        Binding("1", "tab('trajectories')", "Trajectories", id="run.tab_trajectories", show=False),  # on the tabs
        Binding("2", "tab('diagnostics')", "Diagnostics", id="run.tab_diagnostics", show=False),
        Binding("slash", "filter", "Filter", id="run.filter", key_display="/"),
        Binding("s", "sort", "Sort", id="run.sort", show=False),
        Binding("S", "sort_reverse", "Reverse sort", id="run.sort_reverse", show=False),
        Binding("w", "watch", "Live", id="run.watch"),
        Binding("e", "export", "Export", id="run.export"),
        Binding("f5", "refresh", "Refresh", id="run.refresh", key_display="F5", show=False),  # R is relaunch on Runs
        Binding("escape,q", "back", "Back", id="run.back"),
    ]
    TRAJECTORY_ACTIONS = {"filter", "sort", "sort_reverse"}

    def __init__(self, name: str, tab: str = "trajectories"):
        super().__init__()
        self.run_name = name
        self.initial_tab = tab
        self.run: dict[str, Any] = {}
        self.rows: list[TrajectoryListRow] = []  # every finished trajectory, in stored order
        self.shown: list[TrajectoryListRow] = []  # filtered and sorted: what the table shows
        self.sort_column = "stored"
        self.sort_reverse = False
        self.progress: tuple | None = None
        self._version: int | None = None
        self._query = ""
        self._cells: dict[int, tuple[str, ...]] = {}  # trajectory id → its row, built once

    def compose(self) -> ComposeResult:
        yield Static("", id="run-title", classes="title-bar")
        with TabbedContent(initial=self.initial_tab, id="run-tabs"):
            with TabPane("1 Trajectories", id="trajectories"):
                yield Input(placeholder="/ filter: item id, st/mt, d1/d2, ending, correct/wrong…", id="run-filter")
                yield TrajectoryTable(COLUMNS, id="trajectory-table", fixed_columns=1)  # the item stays in view
                yield ScrollHint(id="trajectory-table-hint")
            with TabPane("2 Diagnostics", id="diagnostics"):
                yield DiagnosticsPanel(self.run_name, id="diagnostics-panel")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(RowTable)
        self.reload(force=True)
        self.set_interval(1.0, self.reload, name="run-poll")
        if self.initial_tab == "diagnostics":
            self.query_one(DiagnosticsPanel).focus()
        else:
            table.focus()

    # ------------------------------------------------------------ data

    @property
    def tab(self) -> str:
        return self.query_one(TabbedContent).active

    def reload(self, force: bool = False) -> None:
        """Re-read the run when it moved on (any commit moves `data_version`; only this run's rows matter)."""
        from workbench.service.errors import StoreError

        store = self.app.store
        version = store.data_version()
        if not force and version == self._version:
            return
        self._version = version
        try:
            run = store.run(self.run_name)
        except StoreError:
            self.notify(f"run '{self.run_name}' is gone", severity="warning")
            return
        progress = store.run_progress(run["id"])
        if not force and progress == self.progress:
            return
        self.run, self.progress = run, progress
        self.rows = store.trajectory_list(run["id"])
        self._title()
        self.render_rows()
        self._diagnostics()

    def _title(self) -> None:
        r = self.run
        n, correct = len(self.rows), sum(1 for t in self.rows if t.get("correct"))
        acc = fraction(correct / n if n else None)
        agent = r["agent"] + (f" {r['model']}" if r.get("model") else "")
        ablation = "" if r.get("ablation") == "full" else f" · {r['ablation']}"
        dataset = dataset_label(r["dataset"])
        rest = (
            f"  ·  {clip(sanitize(agent), 30)}{ablation}  ·  {sanitize(dataset)}  ·  {n}/{r['planned']} done  ·  "
            f"acc {acc}  ·  {r['status']}"
        )
        if len(self.shown) != n and self.rows:
            rest += f"  ·  showing {len(self.shown):,}"
        room = max(12, (self.size.width or self.app.size.width) - len(rest) - 1)  # the name gives way, not the rest
        title = Text.assemble((f" {clip(sanitize(r['name']), room)}", "bold"), rest)
        self.query_one("#run-title", Static).update(title)

    def on_resize(self) -> None:
        if self.run:
            self._title()  # the name is clipped to the width

    def view_rows(self) -> list[TrajectoryListRow]:
        """The rows as filtered and sorted now."""
        query = self._query = self.query_one("#run-filter", Input).value.strip()
        return form.view_rows(self.rows, query, self.sort_column, self.sort_reverse)

    def render_rows(self) -> None:
        """Show `view_rows()`, the cursor kept on the same trajectory (rows only appended: just add them)."""
        rows = self.view_rows()
        table = self.query_one(RowTable)
        self._label_columns()
        old = self.shown
        self.shown = rows
        query = self._query
        table.empty_note = f"no trajectories match '{query}'" if query and not rows else ""
        table.refresh()
        old_ids, ids = [t["id"] for t in old], [t["id"] for t in rows]
        if appended(old_ids, ids):
            table.append_rows([self._row(t) for t in rows[len(old) :]])
        elif old_ids != ids or table.row_count != len(rows):
            self._refill(table, old_ids, ids)
        self._title()

    def _refill(self, table: RowTable, old_ids: list[int], ids: list[int]) -> None:
        """Fill the table with the rows shown (trajectories `ids`), the cursor kept on the trajectory it was on
        among `old_ids` (else on the first)."""
        table.set_rows([self._row(t) for t in self.shown], cursor=form.kept_cursor(old_ids, ids, table.cursor_row))

    def _row(self, t: TrajectoryListRow) -> tuple[str, ...]:
        row = self._cells.get(t["id"])
        if row is None:
            row = self._cells[t["id"]] = shown_cells(
                t, measures_tokens(self.run.get("agent"), self.run.get("identity"))
            )
        return row

    def _label_columns(self) -> None:
        self.query_one(RowTable).show_sort(
            None if self.sort_column == "stored" else self.sort_column, self.sort_reverse
        )

    # ------------------------------------------------------------ diagnostics

    def _diagnostics(self) -> None:
        """Bring the diagnostics up to date with the run, when the tab is in view (otherwise on showing it)."""
        if self.tab == "diagnostics" and self.run and self.progress is not None:
            self.query_one(DiagnosticsPanel).load(self.run["id"], self.progress)

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        self.refresh_bindings()
        if event.pane.id == "diagnostics":
            self._diagnostics()

    # ------------------------------------------------------------ events

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Filtering and sorting belong to the trajectories tab."""
        return not (action in self.TRAJECTORY_ACTIONS and self.tab != "trajectories")

    def on_columns_moved(self, event: ColumnsMoved) -> None:
        self.query_one("#trajectory-table-hint", ScrollHint).show_span(event.span)

    def on_row_table_row_selected(self, event: RowTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def on_row_table_header_selected(self, event: RowTable.HeaderSelected) -> None:
        event.stop()
        column = form.header_sort(event.column)
        self.sort_column, self.sort_reverse = clicked_sort(self.sort_column, self.sort_reverse, column)
        self.render_rows()

    def on_input_changed(self, event: Input.Changed) -> None:
        # Input also posts Changed when it is shown again (switching tabs): refill only on a new query
        if event.input.id == "run-filter" and event.value.strip() != self._query:
            self.render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "run-filter":
            self.query_one("#trajectory-table").focus()

    def on_key(self, event: events.Key) -> None:
        """↓ in the filter goes to the list, as enter does (the box has no ↓ of its own)."""
        if event.key == "down" and self.focused is self.query_one("#run-filter"):
            event.stop()
            self.query_one("#trajectory-table").focus()

    # ------------------------------------------------------------ actions

    def action_open(self) -> None:
        from workbench.tui.screens.stepper import StepperScreen

        table = self.query_one(RowTable)
        if not (0 <= table.cursor_row < len(self.shown)):
            return
        self.app.push_screen(StepperScreen(self.run, [t["id"] for t in self.shown], table.cursor_row))

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "diagnostics":
            self._diagnostics()
            self.query_one(DiagnosticsPanel).focus()
        else:
            self.query_one("#trajectory-table").focus()

    def action_filter(self) -> None:
        self.query_one("#run-filter", Input).focus()

    def action_sort(self) -> None:
        self.sort_column = form.next_sort(self.sort_column)
        self.notify(f"sorted by {self.sort_column}", timeout=1.5)
        self.render_rows()

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.render_rows()

    def action_watch(self) -> None:
        self.app.watch_run(self.run_name)

    def action_export(self) -> None:
        self.app.export_run(self.run_name)

    def action_refresh(self) -> None:
        self.reload(force=True)

    def action_back(self) -> None:
        """Clear a filter first (escape in the filter box or with one set); then back."""
        box = self.query_one("#run-filter", Input)
        if box.has_focus or box.value:
            if box.value:
                box.value = ""
            self.query_one("#trajectory-table").focus()
            return
        self.app.pop_screen()
