"""Two runs side by side: the compared axes with Δ, interval and p; the agreement grid down to an item;
the two trajectories of that item stepped together; tool use and failures of each.

Every number comes from `workbench.service.reports.compare_report` and every cell string from
`workbench.views.compare.compare_rows`, the very functions `--batch compare` prints, so the screen
and the headless command cannot disagree.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Button, DataTable, LoadingIndicator, Select, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from workbench.service.paths import export_dir
from workbench.service.records.compare import CompareReport, ItemPair
from workbench.tui.forms import compare as form
from workbench.tui.forms.compare import CELLS, outcome
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.dialogs import ExportModal
from workbench.tui.screens.stepping import SteppingScreen
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.itempane import options_text
from workbench.tui.widgets.meters import theme_style
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.tui.widgets.stepview import StepView
from workbench.tui.widgets.wide import ColumnsMoved, ScrollHint, WideTable
from workbench.views.cells import counted
from workbench.views.compare import axis_words


class GridTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "List items", id="compare.cell")]


class PairTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Step both", id="compare.open")]


class CompareScreen(WorkbenchNode, Screen):
    """A vs B on their common items; `x` swaps the sides, `e` writes the report as JSON."""

    HELP_TITLE = "Compare"
    FOOTER_WIDE_ONLY = frozenset({"compare.swap", "compare.export"})  # in ? help only, below 112 columns
    BINDINGS = [
        Binding("1", "tab('axes')", "Axes", id="compare.tab_axes"),
        Binding("2", "tab('agreement')", "Agreement", id="compare.tab_agreement"),
        Binding("3", "tab('tools')", "Tool use", id="compare.tab_tools"),
        Binding("4", "tab('failures')", "Failures", id="compare.tab_failures"),
        Binding("x", "swap", "Swap A/B", id="compare.swap"),
        Binding("e", "export", "Export JSON", id="compare.export"),
        Binding("escape,q", "back", "Back", id="compare.back"),
    ]

    def __init__(self, a: str, b: str):
        super().__init__()
        self.a, self.b = a, b
        self.report: CompareReport | None = None
        self.cell: str | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {self.a} (A) vs {self.b} (B)"), id="compare-title", classes="title-bar")
        yield Static("", id="compare-summary")
        yield LoadingIndicator(id="compare-loading")
        with TabbedContent(initial="axes", id="compare-tabs"):
            with TabPane("Axes", id="axes"):
                # the axis names stay while the columns scroll; the line under the table says what is out of view,
                # the next one what the row under the cursor measures (the names are the paper's short ones)
                yield WideTable(id="compare-axes", cursor_type="row", zebra_stripes=True, fixed_columns=1)
                yield ScrollHint(id="compare-axes-hint")
                yield Static("", id="compare-axis-words")
                yield Static("", id="compare-legend")
            with TabPane("Agreement", id="agreement"), Horizontal(id="compare-agreement"):
                with Vertical(id="compare-grid-box"):
                    yield GridTable(id="compare-grid", cursor_type="cell")
                    yield Static("", id="compare-grid-note")
                yield PairTable(id="compare-items", cursor_type="row", zebra_stripes=True)
            with TabPane("Tool use", id="tools"), VerticalScroll(), Horizontal(id="compare-tools"):
                yield Static("", id="compare-tools-a")
                yield Static("", id="compare-tools-b")
            with TabPane("Failures", id="failures"):
                yield Static("", id="compare-failures")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#compare-tabs").display = False
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self._render_tools())
        self._load()

    def _load(self) -> None:
        self.query_one("#compare-loading").display = True
        self.query_one("#compare-tabs").display = False
        from workbench.service.reports import compare_at

        self.run_worker(
            partial(compare_at, self.app.store_path, self.a, self.b),
            name="compare",
            group="compare",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "compare" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        self.query_one("#compare-loading").display = False
        if event.state == WorkerState.ERROR:
            self.query_one("#compare-summary", Static).update(Text(f"cannot compare: {event.worker.error}"))
            return
        self.report = event.worker.result
        self.query_one("#compare-tabs").display = True
        self.render_report()

    # ------------------------------------------------------------ rendering

    def render_report(self) -> None:
        from workbench.views.compare import (
            COMPARE_HEADER,
            compare_heading,
            compare_legend,
            compare_rows,
            separation_sentence,
            token_line,
        )

        cmp = self.report
        assert cmp is not None
        self.query_one("#compare-title", Static).update(Text(" " + compare_heading(cmp)))
        summary = Text(separation_sentence(cmp["separation"]), style="bold")
        for warning in cmp.get("warnings", []):
            summary.append(f"\nwarning: {warning}", style=theme_style(self.app, "warning"))
        from workbench.views.general import compare_lines

        for line in compare_lines(cmp):  # a side in the general-agent setting: its out-of-domain measures
            summary.append(f"\n{line}", style="")
        self.query_one("#compare-summary", Static).update(summary)
        table = self.query_one("#compare-axes", WideTable)
        table.clear(columns=True)
        for _i, col in enumerate(COMPARE_HEADER):
            table.add_column(col, key=col)
        for row in compare_rows(cmp):
            table.add_row(
                *(Text(cell, justify="left" if i == 0 else "right") for i, cell in enumerate(row)), key=row[0]
            )
        table.columns_changed()
        tokens = token_line(cmp)
        self.query_one("#compare-legend", Static).update(Text(compare_legend(cmp) + (f"\n{tokens}" if tokens else "")))
        self._render_grid(cmp)
        self._render_tools()
        self._render_failures(cmp)
        table.focus()

    def _render_grid(self, cmp: CompareReport) -> None:
        grid = self.query_one("#compare-grid", GridTable)
        grid.clear(columns=True)
        grid.add_column("", key="a")
        grid.add_column(Text("B right"), key="b_right")
        grid.add_column(Text("B wrong"), key="b_wrong")
        for label, cells in zip(("A right", "A wrong"), CELLS, strict=True):
            grid.add_row(
                Text(label, style="bold"),
                *(Text(f"{cmp['agreement'][c]['n']:>4}", justify="right") for c in cells),
                key=label,
            )
        if self.cell is None:  # start on the discordant items, where the runs differ
            self.cell = form.first_cell(cmp["agreement"])
        row, column = form.grid_position(self.cell)
        grid.move_cursor(row=row, column=column)
        self.query_one("#compare-grid-note", Static).update(
            Text(
                f"{cmp['n_common']} common items. Enter on a cell lists its items; enter on an item steps both "
                "trajectories together.",
                style="dim",
            )
        )
        items = self.query_one("#compare-items", PairTable)
        if not items.columns:
            for key, label in (("item", "ITEM"), ("type", "TYPE"), ("a", "A"), ("b", "B")):
                items.add_column(label, key=key)
        self.show_cell(self.cell)

    def show_cell(self, cell: str) -> None:
        """List the items of one agreement cell."""
        cmp = self.report
        if cmp is None:
            return
        self.cell = cell
        items = self.query_one("#compare-items", PairTable)
        items.clear()
        for item_id in cmp["agreement"][cell]["items"]:
            pair = cmp["items"][item_id]
            kind = form.item_kind(pair.get("kind"), pair.get("depth"))
            a, b = (Text(sanitize(outcome(pair[side]))) for side in ("a", "b"))
            items.add_row(Text(sanitize(item_id)), Text(kind), a, b, key=item_id)
        label = form.CELL_LABELS[cell]
        items.border_title = f"{label} · {counted(cmp['agreement'][cell]['n'], 'item')}"

    def _render_tools(self) -> None:
        from workbench.tui.widgets.diagnostics import blendable, heatmap
        from workbench.views.report import trigram_line

        cmp = self.report
        if cmp is None:
            return
        colors = blendable(self.app.theme_variables)
        for side in ("a", "b"):
            use = cmp["tool_use"][side]
            out = Table.grid()
            name = cmp[side]
            out.add_row(Text(f"{side.upper()} = {name}", style="bold"))
            out.add_row(heatmap(use["transitions"], colors))
            top = use["top_trigram"]
            out.add_row(Text(trigram_line(top), style="" if top else "dim"))
            out.add_row(Text(""))
            self.query_one(f"#compare-tools-{side}", Static).update(out)

    def _render_failures(self, cmp: CompareReport) -> None:
        from workbench.views.compare import ATTRIBUTION_HEADER, attribution_rows

        table = Table(
            title=Text(
                "How the runs end, and what wrong answers chose (rates among each run's wrong "
                "answers; Δ with a paired bootstrap 95% interval over the common items)"
            ),
            title_justify="left",
            show_edge=False,
        )
        table.add_column("")
        table.add_column(Text(f"A {clip(cmp['a'], 20)}"), justify="right")
        table.add_column(Text(f"B {clip(cmp['b'], 20)}"), justify="right")
        table.add_column(Text(ATTRIBUTION_HEADER[3]), justify="right")
        table.add_column(Text(ATTRIBUTION_HEADER[4]), justify="right")
        for term in cmp["terminations"]["a"]:
            table.add_row(
                Text(f"ended by {term}"),
                Text(str(cmp["terminations"]["a"][term])),
                Text(str(cmp["terminations"]["b"][term])),
                Text(""),
                Text(""),
            )
        table.add_section()
        for row in attribution_rows(cmp):  # the very cells --batch compare prints
            table.add_row(*map(Text, row))
        self.query_one("#compare-failures", Static).update(table)

    # ------------------------------------------------------------ events and actions

    def on_columns_moved(self, event: ColumnsMoved) -> None:
        self.query_one(f"#{event.table.id}-hint", ScrollHint).show_span(event.span)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The axis under the cursor, in words."""
        if event.data_table.id == "compare-axes" and event.row_key.value is not None:
            words = axis_words(str(event.row_key.value))
            self.query_one("#compare-axis-words", Static).update(Text(words, style="italic"))

    def on_data_table_cell_selected(self, event: DataTable.CellSelected) -> None:
        if event.data_table.id != "compare-grid":
            return
        event.stop()
        row, column = event.coordinate.row, event.coordinate.column
        if column == 0:
            return
        self.show_cell(form.cell_at(row, column))
        self.query_one("#compare-items").focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "compare-items" or self.report is None:
            return
        event.stop()
        ids = [str(k.value) for k in event.data_table.rows]
        self.app.push_screen(SplitStepperScreen(self.report, ids, event.cursor_row))

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        focus = {"axes": "#compare-axes", "agreement": "#compare-grid"}.get(tab)
        if focus:
            self.query_one(focus).focus()

    def action_swap(self) -> None:
        self.a, self.b = self.b, self.a
        self.cell = None
        self._load()

    def action_export(self) -> None:
        """Ask where (the runs screen's export dialog: it confirms before replacing a file), offering a file in
        `export_dir()` as every TUI export does (not the working directory), then write."""
        if self.report is None:
            return
        report, a, b = self.report, self.a, self.b

        def chosen(answer: tuple[Path, bool] | None) -> None:
            if answer:
                self.write_export(report, answer[0])

        self.app.push_screen(CompareExportModal(f"{a} vs {b}", form.export_path(export_dir(), a, b)), chosen)

    def write_export(self, report: CompareReport, path: Path) -> None:
        from workbench.views.compare import compare_document

        path = path.expanduser().resolve()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(compare_document(report), indent=2, default=str) + "\n", encoding="utf-8")
        except OSError as exc:
            self.notify(f"could not write {path}: {exc}", severity="error")
            return
        self.notify(f"wrote {path} (the same JSON as --batch compare --format json)", timeout=5)

    def action_back(self) -> None:
        self.app.pop_screen()


class CompareExportModal(ExportModal):
    """The runs screen's export dialog (path, directory check, confirm before replacing) for one JSON file:
    its title names the comparison and the every-step checkbox, which means nothing here, is hidden."""

    def on_mount(self) -> None:
        self.query_one(".dialog-title", Static).update(Text(f"Export the comparison {self.run_name} as JSON"))
        self.query_one("#export-steps").display = False


class SplitStepperScreen(SteppingScreen):
    """The two runs' trajectories of one item, stepped together turn by turn (or one side alone)."""

    HELP_TITLE = "Compare · two trajectories"
    FOOTER_WIDE_ONLY = frozenset({"split.prev", "split.next_item"})  # in ? help only, below 112 columns
    END_OF_LIST = "no more items in this cell"
    BINDINGS = [
        Binding("right,l", "step(1)", "Next turn (both)", id="split.next"),
        Binding("left,h", "step(-1)", "Prev (both)", id="split.prev"),
        Binding("L", "step_one(1)", "Next turn (focused side)", id="split.next_one", show=False),
        Binding("H", "step_one(-1)", "Prev turn (focused side)", id="split.prev_one", show=False),
        Binding("0", "first", "First turn", id="split.first", show=False),
        Binding("dollar_sign", "last", "Last turn", id="split.last", key_display="$", show=False),
        Binding("d", "decision(1)", "Decision", id="split.next_decision"),
        Binding("D", "decision(-1)", "Previous decision (focused side)", id="split.prev_decision", show=False),
        Binding("n", "browse(1)", "Next item", id="split.next_item"),
        Binding("p", "browse(-1)", "Previous item", id="split.prev_item", show=False),
        Binding("g", "toggle_gold", "Gold", id="split.gold"),
        Binding("y", "copy_step", "Copy step", id="split.copy_step", show=False),
        Binding("escape,q", "back", "Back", id="split.back"),
    ]

    def __init__(self, report: CompareReport, item_ids: list[str], index: int = 0):
        super().__init__(item_ids, index)
        self.report = report
        self.runs: dict[str, dict[str, Any]] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="split-title", classes="title-bar")
        with VerticalScroll(id="split-item"):
            yield Static("", id="split-item-text")
        with Horizontal(id="split-body"):
            for side in ("a", "b"):
                with Vertical(classes="split-side", id=f"split-{side}"):
                    yield Static("", classes="split-head", id=f"split-head-{side}")
                    yield StepView(id=f"split-view-{side}")
        yield KeysFooter()

    def view(self, side: str) -> StepView:
        return self.query_one(f"#split-view-{side}", StepView)

    def step_views(self) -> list[StepView]:
        return [self.view("a"), self.view("b")]

    def on_mount(self) -> None:
        store = self.app.store
        self.runs = {side: store.run(self.report[side]) for side in ("a", "b")}
        self.view("a").transcript.focus()
        self.load(self.index)

    @property
    def item_id(self) -> str:
        return self.ids[self.index]

    def load(self, index: int) -> None:
        self.index = index
        store = self.app.store
        pair = self.report["items"][self.item_id]
        run = self.runs["a"]  # the item's corpus: both runs answered it, from A's release
        self.ctx = self.app.corpora.cached(run["dataset"], self.item_id)
        for side in ("a", "b"):
            self.show_trajectory(self.view(side), store.steps(pair[side]["id"]), self.runs[side])
        self.redraw()
        if self.ctx is None:
            self.load_context(run)

    def redraw(self) -> None:
        """The title bar, each side's head and the item pane (the transcripts and meters are the StepViews')."""
        pair = self.report["items"][self.item_id]
        self.query_one("#split-title", Static).update(
            Text(
                f" {self.item_id} · {form.item_kind(pair.get('kind'), pair.get('depth'))} · item {self.index + 1}/"
                f"{len(self.ids)} · A = {self.report['a']} · B = {self.report['b']}"
            )
        )
        ok, bad = theme_style(self.app, "success"), theme_style(self.app, "error")
        for side in ("a", "b"):
            s = pair[side]
            head = Text(f" {side.upper()} {clip(sanitize(self.report[side]), 28)} ", style="bold")
            head.append(f"{'✓ correct' if s['correct'] else '✗ wrong'}", style=ok if s["correct"] else bad)
            head.append(
                f" ({sanitize(s.get('answer') or '—')}) · {s['termination']} · paper recall "
                f"{'●' if s['paper_recall'] else '○'} section {'●' if s['section_recall'] else '○'}"
            )
            self.query_one(f"#split-head-{side}", Static).update(head)
        self.query_one("#split-item-text", Static).update(self._item_text(pair))

    def _item_text(self, pair: ItemPair) -> Text:
        t = Text()
        item = self.ctx.item if self.ctx else None
        if item is None:
            t.append(sanitize(self.ctx.note if self.ctx and self.ctx.note else "loading the item…"), style="dim")
            return t
        t.append("Q ", style="bold")
        t.append(sanitize(item.question))

        def chosen_by(i: int) -> tuple[str, Style] | None:
            sides = [side.upper() for side in ("a", "b") if pair[side]["predicted_index"] == i]
            return (f"◀ {'+'.join(sides)} ", Style(bold=True)) if sides else None

        t.append_text(
            options_text(item, self.reveal, theme_style(self.app, "success"), Style(dim=True), chosen_by, width=150)
        )
        return t


class RunPairModal(ModalScreen[tuple[str, str] | None]):
    """Pick the two runs to compare (the palette's entry; on the runs screen, mark two with space)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="pair.cancel")]

    def __init__(self, names: list[str], a: str | None = None, b: str | None = None):
        super().__init__(classes="dialog-screen")
        self.names = names
        a = a or (names[0] if names else None)
        self.initial = (a, b or next((n for n in names if n != a), None))

    def compose(self) -> ComposeResult:
        options = [(n, n) for n in self.names]
        with Vertical(classes="dialog"):
            yield Static(Text("Compare two runs on their common items"), classes="dialog-title")
            yield Select(options, value=self.initial[0] or Select.BLANK, prompt="run A", id="pair-a")
            yield Select(options, value=self.initial[1] or Select.BLANK, prompt="run B", id="pair-b")
            yield Static("", id="pair-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Compare", id="ok", variant="primary")

    def _values(self) -> tuple[str | None, str | None]:
        """The runs picked (None: not yet)."""
        a, b = self.query_one("#pair-a", Select).value, self.query_one("#pair-b", Select).value
        return (None if a == Select.BLANK else str(a)), (None if b == Select.BLANK else str(b))

    def on_select_changed(self, event: Select.Changed) -> None:
        self.query_one("#pair-error", Static).update(Text(form.pair_problem(*self._values(), submitting=False) or ""))

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id != "ok":
            self.dismiss(None)
            return
        a, b = self._values()
        problem = form.pair_problem(a, b, submitting=True)
        if problem or a is None or b is None:
            self.query_one("#pair-error", Static).update(Text(problem or ""))
            return
        self.dismiss((a, b))

    def action_cancel(self) -> None:
        self.dismiss(None)
