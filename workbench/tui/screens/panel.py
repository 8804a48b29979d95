"""The panel as the AgentHop paper reads it: Table 2 over the runs' common items, grouped by tier and family, with
the best (*) and tier leader (†) marks; the fingerprints with their tests and words; the panel statistics; the
further tables and figures, one tab each; export to JSON, CSV or Markdown.

Every number comes from one `workbench.service.reports.panel_report` call and every cell from the views
(`lineage`, `fingerprints`, `panel_tables`, `panel_figures`, `panel_document`) — what `--batch report --panel`
prints — so the screen and the command cannot disagree.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import cast

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import (
    Button,
    DataTable,
    LoadingIndicator,
    OptionList,
    SelectionList,
    Static,
    TabbedContent,
    TabPane,
)
from textual.widgets.option_list import Option
from textual.worker import Worker, WorkerState

from workbench.service.paths import export_dir
from workbench.service.records.panel import PanelReport
from workbench.tui.forms import panel as form
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.dialogs import ExportModal
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import sanitize
from workbench.tui.widgets.wide import ColumnsMoved, ScrollHint, WideTable

FIGURE_MARGIN = 8  # the pane's padding and its vertical scrollbar: a plot drawn this much narrower never wraps


def fill(table: DataTable, header: tuple[str, ...], rows: list[tuple[str, ...]], bold_first: bool = False) -> None:
    """A DataTable of text cells (plain text, never markup): the first column left, the rest right-aligned."""
    table.clear(columns=True)
    for i, col in enumerate(header):
        table.add_column(Text(col, justify="left" if i == 0 else "right"), key=f"c{i}")
    for row in rows:
        table.add_row(
            *(
                Text(
                    sanitize(cell),
                    justify="left" if i == 0 else "right",
                    style="bold" if bold_first and i == 0 and not cell.startswith("  ") else "",
                )
                for i, cell in enumerate(row)
            )
        )


def rich_table(title: str, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> Table:
    """A titled table of plain-text cells (the CLI prints the same with `render`)."""
    table = Table(title=Text(title), title_justify="left", expand=False)
    for i, col in enumerate(header):
        table.add_column(Text(col), justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*(Text(sanitize(c)) for c in row))
    return table


class PanelPickModal(ModalScreen[list[str] | None]):
    """Pick the runs of a panel (space toggles; enter or OK shows it; at least two), or a saved panel."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="panelpick.cancel")]
    # both lists take a share of the terminal's height, so the buttons stay on screen at 80×24
    DEFAULT_CSS = """
    PanelPickModal #panel-saved { height: auto; max-height: 15vh; }
    PanelPickModal #panel-pick { height: auto; max-height: 30vh; }
    """

    def __init__(self, names: list[str], chosen: list[str] | None = None, saved: dict[str, list[str]] | None = None):
        super().__init__(classes="dialog-screen")
        self.names = names
        self.chosen = set(chosen or [])
        # saved panels, each with the runs of it that are still in the store (two at least, or it is not offered)
        self.saved = form.offered_panels(saved or {}, names)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text("Runs of the panel (space marks, enter shows)"), classes="dialog-title")
            if self.saved:
                yield OptionList(
                    *(
                        Option(Text(f"saved: {sanitize(k)} ({len(v)} runs)"), id=k)
                        for k, v in sorted(self.saved.items())
                    ),
                    id="panel-saved",
                )
            yield SelectionList[str](*((sanitize(n), n, n in self.chosen) for n in self.names), id="panel-pick")
            yield Static("", classes="field-error", id="panel-pick-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Show panel", id="ok", variant="primary")

    def on_mount(self) -> None:
        """The saved panels take the focus when there are some and fewer than two runs are marked (enter then
        opens one); otherwise the runs list."""
        if self.saved and len(self.chosen) < 2:
            saved = self.query_one("#panel-saved", OptionList)
            saved.highlighted = 0
            saved.focus()
        else:
            self.query_one(SelectionList).focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:  # every option is a saved panel, by its name
            self.dismiss(self.saved[event.option.id])

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)

    def on_key(self, event) -> None:
        if event.key == "enter" and isinstance(self.focused, SelectionList):
            event.stop()
            self._submit()

    def _submit(self) -> None:
        picked = form.picked_runs(self.names, self.query_one(SelectionList).selected)
        problem = form.pick_problem(picked)
        if problem:
            self.query_one("#panel-pick-error", Static).update(Text(problem))
            return
        self.dismiss(picked)

    def action_cancel(self) -> None:
        self.dismiss(None)


class PanelScreen(WorkbenchNode, Screen):
    """Table 2 grouped, fingerprints, statistics and figures of the runs `names`; `r` picks other runs."""

    HELP_TITLE = "Panel"
    # below 112 columns the tab keys give their room (their numbers are on the tabs), so r and e stay in the footer
    FOOTER_WIDE_ONLY = frozenset(
        {"panel.tab_table2", "panel.tab_fingerprints", "panel.tab_tables", "panel.tab_figures", "panel.tab_statistics"}
    )
    BINDINGS = [
        Binding("1", "tab('table2')", "Table 2", id="panel.tab_table2"),
        Binding("2", "tab('fingerprints')", "Fingerprints", id="panel.tab_fingerprints"),
        Binding("3", "tab('tables')", "Tables", id="panel.tab_tables"),
        Binding("4", "tab('figures')", "Figures", id="panel.tab_figures"),
        Binding("5", "tab('statistics')", "Statistics", id="panel.tab_statistics"),
        Binding("r", "pick", "Pick runs", id="panel.pick"),
        Binding("s", "save", "Save panel", id="panel.save", show=False),
        Binding("e", "export", "Export", id="panel.export"),
        Binding("escape,q", "back", "Back", id="panel.back"),
    ]

    def __init__(self, names: list[str]):
        super().__init__()
        self.names = list(names)
        self.panel: PanelReport | None = None

    def compose(self) -> ComposeResult:
        yield Static(Text(" Panel"), id="panel-title", classes="title-bar")
        yield LoadingIndicator(id="panel-loading")
        with TabbedContent(initial="table2", id="panel-tabs"):
            with TabPane("1 Table 2", id="table2"):
                # the runs' names stay while the fifteen columns scroll; the hint says what is out of view
                yield WideTable(id="panel-table2", cursor_type="row", zebra_stripes=True, fixed_columns=1)
                yield ScrollHint(id="panel-table2-hint")
                yield Static("", id="panel-table2-note", classes="panel-note")
            with TabPane("2 Fingerprints", id="fingerprints"), VerticalScroll():
                yield Static("", id="panel-fp-title", classes="panel-heading")
                yield DataTable(id="panel-fingerprints", cursor_type="row", fixed_columns=1)
                yield Static("", id="panel-tests-title", classes="panel-heading")
                yield DataTable(id="panel-family-tests", cursor_type="row", fixed_columns=1)
                yield Static("", id="panel-trigrams", classes="panel-note")
            with TabPane("3 Tables", id="tables"), VerticalScroll():
                yield Static("", id="panel-tables")
            with TabPane("4 Figures", id="figures"), VerticalScroll():
                yield Static("", id="panel-figures")
            with TabPane("5 Statistics", id="statistics"), VerticalScroll():
                yield Static("", id="panel-statistics")
        yield KeysFooter()

    def on_mount(self) -> None:
        if len(self.names) < 2:
            self.query_one("#panel-loading").display = False
            self.query_one("#panel-tabs").display = False
            self.call_after_refresh(self.action_pick)
            return
        self._load()

    def _load(self) -> None:
        self.query_one("#panel-loading").display = True
        self.query_one("#panel-tabs").display = False
        self.query_one("#panel-title", Static).update(Text(" Panel · " + ", ".join(sanitize(n) for n in self.names)))
        from workbench.service.reports import panel_at

        self.run_worker(
            partial(panel_at, self.app.store_path, self.names, self.app.cache_dir),
            name="panel",
            group="panel",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.name != "panel" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        self.query_one("#panel-loading").display = False
        if event.state == WorkerState.ERROR:
            self.query_one("#panel-title", Static).update(Text(f" cannot build the panel: {event.worker.error}"))
            return
        self.panel = panel = cast("PanelReport", event.worker.result)  # `panel_at`'s, on SUCCESS
        self.query_one("#panel-tabs").display = True
        self.render_panel(panel)

    def render_panel(self, panel: PanelReport) -> None:
        from workbench.views import fingerprints, panel_tables
        from workbench.views.panel import bigram_panel_line, panel_stat_lines, panel_title

        marks = form.title_marks(panel)
        self.query_one("#panel-title", Static).update(
            Text(" " + sanitize(panel_title(panel, len(panel["rows"]))) + marks)
        )
        header, rows = form.table2_rows(panel)
        table2 = self.query_one("#panel-table2", WideTable)
        fill(table2, header, rows, bold_first=True)
        table2.columns_changed()
        if self.query_one(TabbedContent).active == "table2":
            table2.focus()  # ←/→ scroll it at once, no Tab first
        warnings = [f"warning: {w}" for w in panel.get("warnings", [])]
        self.query_one("#panel-table2-note", Static).update(
            Text(
                "\n".join(
                    [
                        *warnings,
                        "* panel best, † tier leader: as they stand, among the evaluated (full-tool) runs; "
                        "‡ a tier leader's conversion separated from the runner-up (McNemar, p < 0.05); the "
                        "paired tests are in the Tables tab; e exports JSON / CSV / Markdown (as --batch report "
                        "--panel)",
                    ]
                )
            )
        )
        (fp_title, fp_table), (tests_title, tests_table) = fingerprints.titled_tables(panel)[:2]
        self.query_one("#panel-fp-title", Static).update(Text(fp_title))
        fill(self.query_one("#panel-fingerprints", DataTable), *fp_table, bold_first=True)
        self.query_one("#panel-tests-title", Static).update(Text(tests_title))
        fill(self.query_one("#panel-family-tests", DataTable), *tests_table)
        self.query_one("#panel-trigrams", Static).update(
            Text("\n".join(fingerprints.trigram_lines(panel) + fingerprints.fingerprint_notes(panel)))
        )
        stats = [*panel_stat_lines(panel), bigram_panel_line(panel), *form.lift_lines(panel)]
        stats += panel_tables.extra_lines(panel)
        self.query_one("#panel-statistics", Static).update(Text("\n".join(sanitize(s) for s in stats if s)))
        tables = fingerprints.titled_tables(panel)[2:] + panel_tables.extra_tables(panel)
        self.query_one("#panel-tables", Static).update(
            Group(
                *(
                    rich_table(title, header, rows) if rows else Text(f"{title}: {panel_tables.EMPTY}")
                    for title, (header, rows) in tables
                )
            )
        )
        self.draw_figures()

    def draw_figures(self) -> None:
        """The figures sized to the Figures pane (its scroll area's width, less the scrollbar), redrawn when the
        terminal is resized, so no plot row wraps."""
        from workbench.views.panel_figures import figures_text

        if self.panel is None:
            return
        width = self.size.width - FIGURE_MARGIN
        self.query_one("#panel-figures", Static).update(
            Text(figures_text(self.panel, width=width, height=max(12, self.app.size.height // 2)), no_wrap=True)
        )

    def on_resize(self, event: events.Resize) -> None:
        self.draw_figures()

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "table2":
            self.query_one("#panel-table2").focus()

    def on_columns_moved(self, event: ColumnsMoved) -> None:
        self.query_one(f"#{event.table.id}-hint", ScrollHint).show_span(event.span)

    def action_save(self) -> None:
        """Save these runs as a named panel (in the app's state file), offered first by the run picker."""
        from workbench.tui import config as config_file
        from workbench.tui.screens.dialogs import NameModal

        def check(value: str) -> str | None:
            return None if value.strip() else "a name is needed"

        def done(name: str | None) -> None:
            if name:
                config_file.remember(self.app.state_path, "panels", name.strip(), list(self.names))
                self.notify(f"saved panel '{name.strip()}' ({len(self.names)} runs)", timeout=2)

        self.app.push_screen(NameModal("Save this panel as", "panel", check), done)

    def action_pick(self) -> None:
        from workbench.tui import config as config_file

        names = self.app.run_names()
        saved = config_file.saved_panels(config_file.load_quietly(self.app.state_path))

        def picked(chosen: list[str] | None) -> None:
            if chosen:
                self.names = chosen
                self._load()
            elif self.panel is None:
                self.app.pop_screen()

        self.app.push_screen(PanelPickModal(names, self.names, saved), picked)

    def action_export(self) -> None:
        """Ask where; the format follows the file's suffix (.json, .csv, .md): the very text of
        `--batch report --panel --format json|csv|markdown`."""
        if self.panel is None:
            return
        panel = self.panel

        def chosen(answer: tuple[Path, bool] | None) -> None:
            if answer:
                self.write_export(panel, answer[0])

        self.app.push_screen(PanelExportModal("panel", export_dir() / "panel.json"), chosen)

    def write_export(self, panel: PanelReport, path: Path) -> None:
        from workbench.views.panel_document import EXPORT_FORMATS, panel_document

        path = path.expanduser().resolve()
        fmt = EXPORT_FORMATS.get(path.suffix.lower())
        if fmt is None:
            self.notify(f"{path.name}: end the name in .json, .csv or .md to choose the format", severity="error")
            return
        try:
            path.write_text(panel_document(panel, fmt), encoding="utf-8")
        except OSError as exc:
            self.notify(f"could not write {path}: {exc}", severity="error")
            return
        self.notify(f"wrote {path} (as --batch report --panel --format {fmt})", timeout=5)

    def action_back(self) -> None:
        self.app.pop_screen()


class PanelExportModal(ExportModal):
    """The runs screen's export dialog for one file whose suffix (.json, .csv, .md) chooses the format."""

    def on_mount(self) -> None:
        self.query_one(".dialog-title", Static).update(Text("Export the panel (.json, .csv or .md)"))
        self.query_one("#export-steps").display = False

    def _error(self, value: str) -> str | None:
        """The dialog's own checks, then `forms.panel.export_problem` (the file's directory must exist)."""
        return super()._error(value) or form.export_problem(value)
