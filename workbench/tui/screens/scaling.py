"""Test-time scaling: the plateau of a sequential budget group and the verification gap of a parallel run.

Every number comes from `workbench.service.scaling` (the functions `scale plateau` and `scale parallel` print);
which source is computed how, how a launched study is followed and what the dialogs accept are the screen's plain
model's (`workbench.tui.forms.scaling`); this module only lays them out. The computations (a bootstrap, an offline
judge over every sample) run in a thread worker with their own store connection, so the UI never blocks. The plots
are `workbench.tui.widgets.plot.PlotView`s: plotext figures at the widget's size in the theme's colours.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from workbench.service.paths import export_dir
from workbench.service.records.parallel import JudgeTrials, ParallelReport
from workbench.service.records.sequential import Plateau, StrategyComparison, ToolsReport
from workbench.tui.forms.scaling import (
    Imported,
    ScalingResult,
    Source,
    WatchedStudy,
    computation,
    export_format,
    export_path,
    export_path_problem,
    imported_studies,
    judge_tables,
    listed_sources,
    reading_judge,
    reading_options,
    scores_path_problem,
    source_by_key,
    study_drawable,
    study_progress,
    study_source,
    study_state,
)
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.tui.widgets.plot import PlotView
from workbench.views.figures import judges_figure, parallel_figure, plateau_figure, registry_figure, strategies_figure
from workbench.views.scaling import (
    JUDGE_COLUMNS,
    JUDGE_NOTE,
    LEVEL_COLUMNS,
    SELF_CHOICE_COLUMNS,
    STRATEGY_COLUMNS,
    TRIAL_COLUMNS,
    agreement_text,
    comparison_rows,
    cost_cells,
    cost_columns,
    export_text,
    flags,
    imported_note,
    judge_cells,
    level_cells,
    parallel_cells,
    parallel_columns,
    repricing_note,
    self_choice_cells,
    spent,
    strategy_cells,
    strategy_note,
    strategy_summary,
    study_cells,
    study_columns,
    transition_cells,
    trial_cells,
    trials_note,
    verdicts_note,
)

if TYPE_CHECKING:
    from workbench.service.scaling.results import PlateauOptions
    from workbench.tui.forms.study import StudyFields
    from workbench.tui.jobs import StudyJob

TRANSITION_COLUMNS = ("transition", "d̄", "σ_boot", "C_k", "decision", "↑ / ↓", "sign test p")

NO_SOURCES = (
    "No sequential groups or parallel runs in the store yet.\n\n"
    "Press n to launch a study here, i to import a parallel scores file, or make one with "
    "`agenthop-tui --batch scale sequential --axis points --grid 10,20,30 --run NAME` or "
    "`scale parallel --k 1,2,4 --run NAME`."
)


def study_text(job: WatchedStudy) -> Text:
    """A launched study's state: one line for the study, one per level with its episodes done and accuracy so far."""
    progress = study_progress(job)
    return Text.assemble((progress.name, "bold"), progress.status, *("\n" + line for line in progress.levels))


class SourceTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Show", id="scaling.show")]


def judges_caption(judged: bool, trials: JudgeTrials | None) -> Text:
    """The note over the judges' table (when `judged`) and the agreement of the judge's repeated `trials`."""
    caption = Text(JUDGE_NOTE if judged else "", style="dim")
    if trials:
        caption.append("\n" + agreement_text(trials), style="")
    return caption


class ScalingScreen(WorkbenchNode, Screen):
    """Sources on the left; the selected one's plot, caveats and tables on the right."""

    HELP_TITLE = "Scaling"
    BINDINGS = [
        Binding("e", "export", "Export", id="scaling.export"),
        Binding("n", "new_study", "New study", id="scaling.new_study"),
        Binding("i", "import_scores", "Import scores", id="scaling.import_scores"),
        Binding("x", "cancel_study", "Cancel study", id="scaling.cancel_study", show=False),
        Binding("R", "recompute", "Recompute", id="scaling.recompute", show=False),
        Binding("escape,q", "back", "Back", id="scaling.back"),
    ]

    def __init__(self, plateau_options: PlateauOptions | None = None, judge: Any = None):
        super().__init__()
        self.plateau_options: PlateauOptions = plateau_options.copy() if plateau_options else {}
        self.judge = judge
        self.imported: dict[str, Imported] = {}  # source key → the study read from a scores file
        self.sources: list[Source] = []
        self.pending: Source | None = None
        self.shown: Source | None = None
        self.result: ScalingResult | None = None
        self.worker: Worker | None = None
        self.study: StudyJob | None = None  # the study launched from here or running when the screen opened

    def compose(self) -> ComposeResult:
        yield Static("", id="scaling-title", classes="title-bar")
        yield Static("", id="scaling-progress")
        with Horizontal(id="scaling-main"):
            yield SourceTable(id="scaling-sources", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="scaling-body"):  # the plot at a readable height; the tables scroll below
                yield Static("", id="scaling-caption")
                yield PlotView(id="scaling-plot")
                yield DataTable(id="scaling-table", cursor_type="row", show_cursor=False)
                yield DataTable(id="scaling-levels", cursor_type="row", show_cursor=False)
                yield Static("", id="scaling-study-caption")
                yield DataTable(id="scaling-study", cursor_type="row", show_cursor=False)
                yield Static("", id="scaling-judges-caption")
                yield DataTable(id="scaling-judges", cursor_type="row", show_cursor=False)
                yield DataTable(id="scaling-self-choice", cursor_type="row", show_cursor=False)
                yield DataTable(id="scaling-trials", cursor_type="row", show_cursor=False)
                yield PlotView(id="scaling-judges-plot")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one("#scaling-title", Static).update(
            Text(" Scaling · sequential plateaus and parallel sampling", style="bold")
        )
        table = self.query_one("#scaling-sources", DataTable)
        table.add_column("SOURCE", key="source")
        table.add_column("KIND", key="detail")
        self._load_sources()
        self.query_one("#scaling-levels").display = False
        self.query_one("#scaling-progress").display = False
        self.study = next((job for job in self.app.studies.values() if job.active), None)
        if self.study is not None:  # a study launched before this screen opened: watch it too
            self.study.listeners.append(self._watch_study)
        self._seen: tuple[str, int, int] | None = None
        self.set_interval(0.5, self._watch_study)
        if not self.sources:
            self._caption(Text(NO_SOURCES, style="dim"))
            self.query_one("#scaling-table").display = False
            return
        table.focus()
        self.select(self.sources[0])

    def _load_sources(self) -> None:
        """The sources list from the store (again when a launched study adds groups or runs)."""
        table = self.query_one("#scaling-sources", DataTable)
        at = self.sources[table.cursor_row].key if 0 <= table.cursor_row < len(self.sources) else None
        table.clear()
        store = self.app.open_store(create=False)
        self.sources = listed_sources(store.runs() if store is not None else [], self.imported)
        for source in self.sources:
            table.add_row(Text(clip(sanitize(source.name), 16)), Text(source.detail, style="dim"), key=source.key)
        keys = [source.key for source in self.sources]
        if at in keys:  # the cursor stays on the source it was on
            table.move_cursor(row=keys.index(at))

    # ------------------------------------------------------------ computing

    def select(self, source: Source, force: bool = False) -> None:
        """Compute `source` in a thread worker (the previous computation's result is dropped if it comes late)."""
        if source == self.shown and not force:
            return
        self.pending = source
        self.query_one("#scaling-body").loading = True
        self.worker = self.run_worker(
            computation(
                source,
                self.app.store_path,
                self.app.corpora.corpus,
                reading_options(self.plateau_options, self.study),  # a sweep filling in: the levels done so far
                reading_judge(self.judge, self.study, source),
                self.imported,
            ),
            thread=True,
            exclusive=True,
            group="scaling",
            name=source.key,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker is not self.worker or self.pending is None:
            return
        if event.state == WorkerState.SUCCESS:
            self.show(self.pending, cast("ScalingResult", worker.result))  # the computation's, on SUCCESS
        elif event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.query_one("#scaling-body").loading = False
            self.shown, self.result = None, None  # enter on it again retries
            self._show_judges(None)
            self._show_study(None)
            self.query_one("#scaling-plot", PlotView).show(None)
            self.query_one("#scaling-table").display = False
            self.query_one("#scaling-levels").display = False
            self._caption(Text(f"{self.pending.name}: {worker.error or 'cancelled'}", style="bold"))

    # ------------------------------------------------------------ showing

    def show(self, source: Source, result: ScalingResult) -> None:
        self.shown, self.result = source, result
        self.query_one("#scaling-body").loading = False
        parallel = source.kind in ("parallel", "imported")  # an imported study shows as a sampled one
        report = cast(ParallelReport, result) if parallel else None  # a parallel run's or an imported study's
        self._show_judges(report)
        self._show_study(report)
        if source.kind == "sequential":
            self._show_plateau(cast(Plateau, result))  # compute_plateau's
        elif source.kind == "strategies":
            self._show_strategies(cast(StrategyComparison, result))  # compute_strategies's
        elif source.kind == "tools":
            self._show_registry(cast(ToolsReport, result))  # compute_tools's
        else:
            self._show_parallel(cast(ParallelReport, result))

    def _show_study(self, report: ParallelReport | None) -> None:
        """The study's readings of the same samples (GA-Bench Tables 15-18), labelled as the study's."""
        rows = report["study"] if report else []
        caption = self.query_one("#scaling-study-caption", Static)
        caption.display = bool(rows)
        if not rows or report is None:
            self.query_one("#scaling-study").display = False
            return
        caption.update(Text.assemble(("the study's readings", "bold"), "\n", (report["study_note"], "dim")))
        self._fill("#scaling-study", study_columns(report), [study_cells(report, r, compact=True) for r in rows], 0)

    def _caption(self, text: Text) -> None:
        self.query_one("#scaling-caption", Static).update(text)

    def _fill(self, table_id: str, columns: list[str] | tuple[str, ...], rows: list[list[str]], left: int = 2) -> None:
        """Replace a table's columns and rows (the first `left` columns left-aligned, numbers right-aligned)."""
        table = self.query_one(table_id, DataTable)
        table.clear(columns=True)
        for i, column in enumerate(columns):
            table.add_column(Text(column, justify="left" if i < left else "right"), key=str(i))
        for row in rows:
            height = max(c.count("\n") + 1 for c in row)
            table.add_row(
                *(Text(sanitize(c), justify="left" if i < left else "right") for i, c in enumerate(row)), height=height
            )
        table.display = True

    def _fill_or_hide(self, table_id: str, columns: tuple[str, ...], rows: list[list[str]], left: int = 2) -> None:
        """`_fill` the table with `rows`, or hide it when there are none."""
        if rows:
            self._fill(table_id, columns, rows, left)
        else:
            self.query_one(table_id).display = False

    def _show_plateau(self, result: Plateau) -> None:
        caveats = flags(result)
        caption = Text.assemble(
            (f"{result['group']}", "bold"),
            f" · plateau at {result['plateau_budget']} (k* = {result['k_star']})",
            f" · n = {result['n']}, dropped {result['n_dropped']} · {result['correction']}",
            f", z = {result['z'] or 0:.3f}, FPC = {result['fpc']:.3f}{trials_note(result)}",
        )
        if caveats:
            caption.append("  ")
            caption.append(" · ".join(caveats), style="bold reverse")
        note = strategy_note(result)
        if note:
            caption.append("\n" + note)
        self._caption(caption)
        self.query_one("#scaling-plot", PlotView).show(partial(plateau_figure, result))
        self._fill("#scaling-table", TRANSITION_COLUMNS, [transition_cells(t) for t in result["transitions"]], left=1)
        self._fill("#scaling-levels", LEVEL_COLUMNS, [level_cells(lv) for lv in result.get("levels", [])], left=1)

    def _show_strategies(self, comparison: StrategyComparison) -> None:
        """The strategies overlaid (the study's Figure 6): each one's k*, the curves with intervals, a row per level."""
        caption = Text("\n".join(strategy_summary(comparison)), style="bold")
        caption.append("\n")
        caption.append(comparison["rule"], style="dim")
        self._caption(caption)
        self.query_one("#scaling-plot", PlotView).show(partial(strategies_figure, comparison))
        self._fill("#scaling-table", STRATEGY_COLUMNS, [strategy_cells(r) for r in comparison_rows(comparison)])
        self.query_one("#scaling-levels").display = False

    def _show_judges(self, report: ParallelReport | None) -> None:
        """The judges measured, the study's self-choice beside the committed accuracy, the trials' agreement and
        spread, and the judges' figure: the numbers `scale parallel` prints under its tables."""
        judges = report["judges"] if report else []
        trials = report["judge_trials"] if report else None
        box = self.query_one("#scaling-judges-caption", Static)
        box.update(judges_caption(bool(judges), trials))
        box.display = bool(judges or trials)
        self._show_judge_tables(report)
        plot = self.query_one("#scaling-judges-plot", PlotView)
        plot.display = bool(judges)
        plot.show(partial(judges_figure, judges) if judges else None)

    def _show_judge_tables(self, report: ParallelReport | None) -> None:
        """The judges' table, the study's self-choice per k and the judge trials' spread per k (each hidden when the
        parallel `report` has none)."""
        tables = judge_tables(report)
        self._fill_or_hide("#scaling-judges", JUDGE_COLUMNS, [judge_cells(j) for j in tables.judges])
        self._fill_or_hide(
            "#scaling-self-choice", SELF_CHOICE_COLUMNS, [self_choice_cells(r) for r in tables.self_choice], 0
        )
        self._fill_or_hide("#scaling-trials", TRIAL_COLUMNS, [trial_cells(r) for r in tables.trials], 0)

    def _show_registry(self, registry: ToolsReport) -> None:
        from workbench.views.general import REGISTRY_HEADER, registry_rows

        caption = Text.assemble(
            (registry["group"], "bold"),
            f" · registry size (the general-agent setting) · against {registry['plain'] or 'no plain run'}\n",
        )
        caption.append(registry["rule"], style="dim")
        self._caption(caption)
        self.query_one("#scaling-plot", PlotView).show(partial(registry_figure, registry))
        self._fill("#scaling-table", REGISTRY_HEADER, [list(r) for r in registry_rows(registry)], left=1)
        self.query_one("#scaling-levels").display = False

    def _show_parallel(self, report: ParallelReport) -> None:
        measured = report.get("measured", True)
        sampling = spent(report.get("sampling_cost_usd"), measured)
        imported = report.get("origin") == "imported"  # its spend is in the note below: the file carries none
        unmeasured = "" if measured or imported else " (scripted agent: no model, cost and tokens not measured)"
        caption = Text.assemble(
            (report["run"], "bold"),
            f" · {report['items']} items · K = {report['k_max']}",
            f" · judge {report['judge'] or 'none'}",
            f" · sampling {sampling}{unmeasured}",
            "\nΔ = pass@k − strategy in points over its paired 95% interval; rel = Δ / pass@k; "
            "eff = (strategy − pass@1)/(pass@k − pass@1); cost to commit at k",
        )
        note = verdicts_note(report)
        if note:
            caption.append("\n")
            caption.append(note, style="bold reverse" if report.get("verdicts_missing") else "")
        caption.append("\n")
        caption.append(report["tie_rule"], style="dim")
        if repricing_note(report):
            caption.append("\n" + repricing_note(report))
        if imported_note(report):
            caption.append("\n" + imported_note(report))
        self._caption(caption)
        self.query_one("#scaling-plot", PlotView).show(partial(parallel_figure, report))
        self._fill(
            "#scaling-table",
            parallel_columns(report),
            [parallel_cells(report, r, compact=True) for r in report["per_k"]],
            left=0,
        )
        self._fill("#scaling-levels", cost_columns(report), [cost_cells(report, r) for r in report["per_k"]], left=0)

    # ------------------------------------------------------------ events and actions

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id != "scaling-sources":
            return
        event.stop()
        source = source_by_key(self.sources, event.row_key.value)
        if source is not None:
            self.select(source)

    # ------------------------------------------------------------ importing a study measured elsewhere

    def action_import_scores(self) -> None:
        from workbench.tui.screens.dialogs import NameModal

        self.app.push_screen(
            NameModal(
                "Import a parallel scores file",
                "",
                scores_path_problem,
                hint="a path: JSON or CSV, as `scale parallel --scores` reads",  # under the title: a title is cut
            ),
            self.import_file,
        )

    def import_file(self, value: str | None) -> None:
        """Each study of the file joins the sources (nothing is written to the store) and the first is shown; a bad
        file is named in a notice, as the CLI names it."""
        from workbench.service.scaling import ScalingInputError

        if not value:
            return
        path = Path(value).expanduser()
        try:
            found = imported_studies(path)
        except ScalingInputError as exc:
            self.notify(str(exc), severity="error", timeout=8)
            return
        for entry in found:
            self.imported[entry.source.key] = entry
        self._load_sources()
        self.query_one("#scaling-caption").display = True
        self.query_one("#scaling-sources").focus()
        self.select(found[0].source, force=True)

    # ------------------------------------------------------------ launching a study

    def action_new_study(self) -> None:
        from workbench.tui.screens.study_form import StudyForm

        if self.study is not None and self.study.active:
            self.notify(f"study '{self.study.name}' is running (x cancels it)", severity="warning", timeout=4)
            return
        self.app.push_screen(StudyForm(self._plan), self._launch)

    def _plan(self, values: StudyFields):
        """(plan, None), or (None, the problem) for the form's error line (`forms.study.planned_study`)."""
        from workbench.tui.forms.study import planned_study

        return planned_study(values, self.app.open_store(create=False))

    def _launch(self, plan) -> None:
        from workbench.tui.jobs import StudyJob

        if plan is None:
            return
        if plan.note:  # samples that cannot differ: a flat plot, said before it is drawn
            self.notify(plan.note, title="study", severity="warning", timeout=12)
        self.app.open_store(create=True)
        job = StudyJob(plan, self.app.store_path, self.app.cache_dir)
        job.listeners.append(self._watch_study)
        self.app.studies[plan.name] = job
        self.study, self._seen = job, None
        job.start(self.app)
        self._watch_study()

    def action_cancel_study(self) -> None:
        if self.study is not None and self.study.active:
            self.study.cancel()

    def on_unmount(self) -> None:
        job = self.study
        if job is not None and self._watch_study in job.listeners:
            job.listeners.remove(self._watch_study)

    def _watch_study(self) -> None:
        """Live progress per level; the result redrawn as levels finish (a sweep) or when judged (parallel)."""
        if not self.is_attached:
            return
        job = self.study
        box = self.query_one("#scaling-progress", Static)
        if job is None:
            box.display = False
            return
        box.display = True
        box.update(study_text(job))
        key = study_state(job)
        if key == self._seen:
            return
        self._seen = key
        if not study_drawable(job, key[2]):
            return
        self._load_sources()
        self.query_one("#scaling-caption").display = True
        self.query_one("#scaling-table").display = True
        source = study_source(job.plan, self.sources)
        if source is not None:
            self.select(source, force=True)

    def action_recompute(self) -> None:
        """The list read again (runs another process added since: a sweep run from the CLI) and the result in view
        recomputed."""
        self._load_sources()
        if self.shown is not None:
            self.select(self.shown, force=True)

    def on_screen_resume(self) -> None:
        """Back on this screen: the list as the store stands now (a group's count grows while its sweep runs)."""
        self._load_sources()

    def action_back(self) -> None:
        self.app.pop_screen()

    def action_export(self) -> None:
        from workbench.tui.screens.dialogs import NameModal

        if self.result is None or self.shown is None:
            self.notify("nothing to export yet", severity="warning", timeout=2)
            return
        source, result = self.shown, self.result
        default = export_path(export_dir(), source)

        def chosen(value: str | None) -> None:
            if value:
                self.write_export(source, result, Path(value).expanduser())

        self.app.push_screen(
            NameModal("Export as JSON (or CSV: end the name with .csv)", str(default), export_path_problem), chosen
        )

    def write_export(self, source: Source, result: ScalingResult, path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(export_text(source.kind, result, export_format(path)))
        except OSError as exc:
            self.notify(f"export failed: {exc}", severity="error")
            return
        self.notify(f"exported {source.name} to {path}", timeout=4)
