"""One run: its trajectories (enter opens the stepper) and its diagnostics, in two tabs."""
from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static, TabbedContent, TabPane

from workbench.tui.diagnostics import DiagnosticsPanel
from workbench.tui.tables import TrajectoryTable
from workbench.tui.plaintext import clip, sanitize

COLUMNS = (("item", "ITEM"), ("rep", "REP"), ("type", "TYPE"), ("result", "RESULT"), ("termination", "ENDING"),
           ("points", "POINTS"), ("turns", "TURNS"), ("tokens", "TOKENS"), ("calls", "CALLS"),
           ("recall", "RECALL P/S"), ("cost", "COST"))


def cells(t: dict[str, Any]) -> list[Any]:
    ok = bool(t.get("correct"))
    answer = sanitize(t.get("answer") or "—")
    result = Text(f"{'✓' if ok else '✗'} {clip(answer, 6)}")
    recall = ("●" if t.get("paper_recall") else "○") + " " + ("●" if t.get("section_recall") else "○")
    cost = "—" if t.get("cost_usd") is None else f"${t['cost_usd']:.3f}"
    kind = (t.get("kind") or "?") + (f" d{t['depth']}" if t.get("depth") else "")
    return [Text(sanitize(t["item_id"])), Text(str(t.get("replicate", 0)), justify="right"), Text(kind), result,
            Text(sanitize(t.get("termination") or "")), Text(str(t.get("points_used") or 0), justify="right"),
            Text(str(t.get("turns") or 0), justify="right"), Text(f"{t.get('tokens') or 0:,}", justify="right"),
            Text(str(t.get("tool_calls") or 0), justify="right"), Text(recall, justify="center"),
            Text(cost, justify="right")]


class RunScreen(Screen):
    HELP_TITLE = "Run"
    BINDINGS = [
        Binding("1", "tab('trajectories')", "Trajectories", id="run.tab_trajectories"),
        Binding("2", "tab('diagnostics')", "Diagnostics", id="run.tab_diagnostics"),
        Binding("w", "watch", "Live", id="run.watch"),
        Binding("e", "export", "Export", id="run.export"),
        Binding("R", "refresh", "Refresh", id="run.refresh", show=False),
        Binding("escape,q", "back", "Back", id="run.back"),
    ]

    def __init__(self, name: str, tab: str = "trajectories"):
        super().__init__()
        self.run_name = name
        self.initial_tab = tab
        self.run: dict[str, Any] = {}
        self.rows: list[dict[str, Any]] = []
        self._version: int | None = None
        self._diagnostics_loaded = False

    def compose(self) -> ComposeResult:
        yield Static("", id="run-title", classes="title-bar")
        with TabbedContent(initial=self.initial_tab, id="run-tabs"):
            with TabPane("Trajectories", id="trajectories"):
                yield TrajectoryTable(id="trajectory-table", cursor_type="row", zebra_stripes=True)
            with TabPane("Diagnostics", id="diagnostics"):
                yield DiagnosticsPanel(self.run_name, id="diagnostics-panel")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#trajectory-table", DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.reload(force=True)
        self.set_interval(1.0, self.reload, name="run-poll")
        if self.initial_tab == "diagnostics":
            self._load_diagnostics()
        else:
            table.focus()

    def reload(self, force: bool = False) -> None:
        store = self.app.store
        version = store.data_version()
        if not force and version == self._version:
            return
        self._version = version
        try:
            self.run = store.run(self.run_name)
        except Exception:
            self.notify(f"run '{self.run_name}' is gone", severity="warning")
            return
        self.rows = store.trajectory_list(self.run["id"])
        self._title()
        table = self.query_one("#trajectory-table", DataTable)
        row = table.cursor_row
        if [r["id"] for r in self.rows[: table.row_count]] == [int(k.value) for k in table.rows] and table.row_count:
            for t in self.rows[table.row_count:]:
                table.add_row(*cells(t), key=str(t["id"]))
        else:
            table.clear()
            for t in self.rows:
                table.add_row(*cells(t), key=str(t["id"]))
            if row is not None and self.rows:
                table.move_cursor(row=min(row, len(self.rows) - 1), animate=False)
        if self._diagnostics_loaded and not force:
            self._load_diagnostics()

    def _title(self) -> None:
        r = self.run
        n, correct = len(self.rows), sum(1 for t in self.rows if t.get("correct"))
        acc = f"{correct / n:.3f}" if n else "—"
        agent = r["agent"] + (f" {r['model']}" if r.get("model") else "")
        ablation = "" if r.get("ablation") == "full" else f" · {r['ablation']}"
        dataset = r["dataset"] if r["dataset"] == "builtin" else r["dataset"].rstrip("/").rsplit("/", 1)[-1]
        self.query_one("#run-title", Static).update(Text.assemble(
            (f" {sanitize(r['name'])}", "bold"),
            f"  ·  {sanitize(agent)}{ablation}  ·  {sanitize(dataset)}  ·  {n}/{r['planned']} done  ·  acc {acc}  ·  {r['status']}"))

    def _load_diagnostics(self) -> None:
        self._diagnostics_loaded = True
        self.query_one(DiagnosticsPanel).load()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "diagnostics" and not self._diagnostics_loaded:
            self._load_diagnostics()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def action_open(self) -> None:
        from workbench.tui.stepper import StepperScreen

        table = self.query_one("#trajectory-table", DataTable)
        if not self.rows or table.cursor_row is None:
            return
        ids = [int(k.value) for k in table.rows]
        self.app.push_screen(StepperScreen(self.run, ids, table.cursor_row))

    def action_tab(self, tab: str) -> None:
        self.query_one(TabbedContent).active = tab
        if tab == "diagnostics":
            if not self._diagnostics_loaded:
                self._load_diagnostics()
            self.query_one(DiagnosticsPanel).focus()
        else:
            self.query_one("#trajectory-table").focus()

    def action_watch(self) -> None:
        self.app.watch_run(self.run_name)

    def action_export(self) -> None:
        self.app.export_run(self.run_name)

    def action_refresh(self) -> None:
        self.reload(force=True)
        if self._diagnostics_loaded:
            self._load_diagnostics()

    def action_back(self) -> None:
        self.app.pop_screen()
