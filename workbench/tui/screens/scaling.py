"""Test-time scaling: the plateau of a sequential budget group and the verification gap of a parallel run.

Every number comes from `workbench.service.scaling` (the functions `scale plateau` and `scale
parallel` print); this module only lays them out. The computations (a bootstrap, an
offline judge over every sample) run in a thread worker with their own store
connection, so the UI never blocks. The plots are plotext figures drawn on the main
thread (plotext 5 keeps one global figure) at the widget's size, rebuilt on resize and
on theme changes; their colours are the theme's, or none at all with a terminal-native
(ANSI) theme, where the bar labels carry the sign instead.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.color import Color, ColorParseError
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static
from textual.worker import Worker, WorkerState

from workbench.service.paths import export_dir
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.views.cells import CsvCell
from workbench.views.figures import judges_figure, parallel_figure, plateau_figure, registry_figure, strategies_figure
from workbench.views.parallel_json import JudgeTrials, ParallelReport
from workbench.views.scaling import (
    JUDGE_COLUMNS,
    JUDGE_NOTE,
    LEVEL_COLUMNS,
    SELF_CHOICE_COLUMNS,
    STRATEGY_COLUMNS,
    TRIAL_COLUMNS,
    Palette,
    agreement_text,
    comparison_rows,
    cost_cells,
    cost_columns,
    flags,
    imported_note,
    judge_cells,
    level_cells,
    parallel_cells,
    parallel_columns,
    parallel_csv,
    repricing_note,
    self_choice_cells,
    spent,
    strategies_csv,
    strategy_cells,
    strategy_note,
    strategy_summary,
    study_cells,
    study_columns,
    transition_cells,
    transition_csv,
    trial_cells,
    trials_note,
    verdicts_note,
)
from workbench.views.sequential_records import Plateau, StrategyComparison, ToolsReport

if TYPE_CHECKING:
    from workbench.service.scaling import StudyPlan
    from workbench.tui.forms.study import StudyFields
    from workbench.tui.jobs import StudyJob

# which theme variable draws what; a missing or ANSI colour makes the whole figure colourless
PALETTE_VARIABLES = {
    "line": "primary",
    "gain": "success",
    "loss": "error",
    "mark": "accent",
    "shade": "primary-background",
    "pass_at_k": "primary",
    "majority": "accent",
    "pointwise": "secondary",
    "pairwise": "warning",
}


@dataclass(frozen=True)
class Source:
    """One entry of the list: a sequential group (its plateau) or a parallel run (its verification gap)."""

    kind: str  # "sequential" | "parallel" | "strategies" | "tools" (the general-agent setting's registry-size group)
    # | "imported" (a parallel study of a scores file, shown as a sampled one)
    name: str
    detail: str
    groups: tuple[str, ...] = ()  # strategies: the sequential groups compared

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


def scaling_sources(runs: list[dict[str, Any]]) -> list[Source]:
    """Sequential groups (with their budget count) first, then parallel runs (with K), in store order."""
    tags = [(run.get("kind"), run.get("group_name")) for run in runs]
    groups, tools = _group_sizes(tags, "sequential"), _group_sizes(tags, "tools")
    parallel = [
        Source("parallel", run["name"], f"par K={run.get('replicates') or 1}")
        for run in runs
        if run.get("kind") == "parallel"
    ]
    seq = [Source("sequential", name, f"seq ×{n}") for name, n in groups.items()]
    from workbench.service.scaling import strategy_studies

    compared = [
        Source("strategies", name, f"cmp ×{len(members)}", tuple(members))
        for name, members in strategy_studies(list(groups)).items()
    ]
    return compared + seq + parallel + [Source("tools", name, f"tools ×{n}") for name, n in tools.items()]


def _group_sizes(tags: list[tuple[str | None, str | None]], kind: str) -> Counter[str]:
    """How many runs each group of `kind` has, from the runs' (kind, group) in store order (ungrouped: left out)."""
    return Counter(group for run_kind, group in tags if run_kind == kind and group)


def default_ks(big_k: int) -> list[int]:
    """Powers of two up to K, and K itself: the k a parallel run is read at when nobody says otherwise."""
    ks, k = [], 1
    while k <= big_k:
        ks.append(k)
        k *= 2
    return sorted(set(ks) | {max(1, big_k)})


# ---------------------------------------------------------------- computations (thread workers)


class PlateauOptions(TypedDict, total=False):
    """How a plateau is read (`scale plateau`'s flags; a key left out keeps its default) and whether only a sweep's
    finished levels are read (a sweep still filling in)."""

    population: int | None
    alpha: float
    correction: str
    n_boot: int
    seed: int
    two_stage: bool | None
    finished_only: bool


def compute_plateau(store_path: Path, group: str, options: PlateauOptions) -> Plateau:
    """The same result `scale plateau --group` prints (with the per-level costs), on its own store connection."""
    from workbench.service import scaling
    from workbench.service.stores import open_store

    store = open_store(store_path)
    try:
        result = scaling.group_plateau(store, group, **options)
    finally:
        store.close()
    result["group"] = group
    return result


def compute_strategies(store_path: Path, groups: tuple[str, ...], options: PlateauOptions) -> StrategyComparison:
    """The comparison `scale strategies --group …` prints, on its own store connection."""
    from workbench.service import scaling
    from workbench.service.stores import open_store

    store = open_store(store_path)
    try:
        return scaling.strategy_comparison(store, list(groups), **options)
    finally:
        store.close()


def compute_tools(store_path: Path, group: str) -> ToolsReport:
    """The registry-size table `scale tools` prints for a group, on its own store connection."""
    from workbench.service import scaling
    from workbench.service.stores import open_store

    store = open_store(store_path)
    try:
        return scaling.tools_report(store, group)
    finally:
        store.close()


def compute_parallel(
    store_path: Path,
    open_corpus: Callable[[str], Any],
    run_name: str,
    ks: list[int] | None = None,
    judge: Any = None,
    n_orders: int | None = None,
) -> ParallelReport:
    """`scale parallel`'s report for a stored run, read as it was recorded: its k, its judge, its pairwise orders.

    An offline judge may fill in verdicts it lacks (free); a model judge is read from the store
    only, never asked (`verdicts="stored"`): looking at a result must not spend money.
    """
    from workbench.service import scaling
    from workbench.service.stores import open_store

    store = open_store(store_path)
    try:
        run = store.run(run_name)
        corpus = open_corpus(run["dataset"])
        recorded = (run.get("config") or {}).get("scaling") or {}
        ks = ks or recorded.get("ks") or default_ks(run["replicates"])
        judge = judge if judge is not None else scaling.recorded_judge(run)
        verdicts = "stored" if scaling.is_stored_judge(judge) else "ask"
        return asyncio.run(
            scaling.parallel_report(
                store,
                run_name,
                corpus,
                ks,
                judge,
                seed=run["seed"],
                verdicts=verdicts,
                **recorded_reading(recorded, n_orders),
            )
        )
    finally:
        store.close()


class ParallelReading(TypedDict):
    """How a parallel run is read: pairwise orders, the tie rule, the judge's trials and the cost mode."""

    n_orders: int
    tie_rule: str
    judge_trials: int
    cost_mode: str


def recorded_reading(recorded: dict[str, Any], n_orders: int | None) -> ParallelReading:
    """The reading a parallel run recorded (its config's `scaling`), the defaults for what it left out; `n_orders`
    when given wins over the recorded orders."""
    return {
        "n_orders": n_orders or recorded.get("orders") or 8,
        "tie_rule": recorded.get("tie_rule") or "split",
        "judge_trials": recorded.get("judge_trials") or 1,
        "cost_mode": recorded.get("cost_mode") or "cache-aware",
    }


def compute_imported(study: Any, path: str, seed: int = 0) -> ParallelReport:
    """`scale parallel --scores`'s report for one study of a scores file (read when it was imported)."""
    from workbench.service.scaling import imported_study

    return imported_study(study, None, seed, path).to_json()


def import_scores(path: Path) -> list[tuple[Source, Any]]:
    """A source for each study of a parallel scores file, with the study read; ScalingInputError says what is wrong
    with the file (the same words as `scale parallel --scores`)."""
    from workbench.service.scaling import load_parallel_scores

    return [(Source("imported", s.name, f"file K={s.k_max}"), s) for s in load_parallel_scores(path)]


# ---------------------------------------------------------------- plain-text cells (shared by tables and CSV)


TRANSITION_COLUMNS = ("transition", "d̄", "σ_boot", "C_k", "decision", "↑ / ↓", "sign test p")


def export_text(kind: str, result: dict[str, Any], fmt: str) -> str:
    """The shown result as JSON (everything) or CSV (the table's rows as numbers, one per transition or k)."""
    if fmt == "json":
        return json.dumps(result, indent=2, sort_keys=True) + "\n"
    rows: list[list[CsvCell]]
    if kind == "tools":
        from workbench.views.general import REGISTRY_HEADER, registry_rows

        header, rows = list(REGISTRY_HEADER), [list(r) for r in registry_rows(cast(ToolsReport, result))]
    else:
        header, rows = (
            transition_csv(cast(Plateau, result))
            if kind == "sequential"
            else strategies_csv(cast(StrategyComparison, result))
            if kind == "strategies"
            else parallel_csv(cast(ParallelReport, result))
        )
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def export_format(path: Path) -> str:
    return "csv" if path.suffix.lower() == ".csv" else "json"


def study_text(job) -> Text:
    """A launched study's state: one line for the study, one per level with its episodes done and accuracy so far."""
    marks = {"done": "✓", "running": "▶", "starting": "·", "interrupted": "⊘", "failed": "✗"}
    text = Text.assemble(
        (f"study {job.name}", "bold"),
        f" · {job.status}",
        f" · {job.message}" if job.message else "",
        " · x cancels" if job.active else "",
    )
    for level in job.progress():
        acc = f", accuracy {100 * level['correct'] / level['done']:.1f}%" if level["done"] else ""
        text.append(f"\n  {marks.get(level['status'], '·')} {level['run']}: {level['done']}/{level['planned']}{acc}")
    return text


# ---------------------------------------------------------------- figures (main thread only)


def theme_palette(variables: dict[str, str]) -> Palette | None:
    """RGB of the theme colours the figures use, or None when one is missing or terminal-native (ANSI)."""
    palette: Palette = {}
    for role, name in PALETTE_VARIABLES.items():
        try:
            color = Color.parse(variables[name])
        except (KeyError, ColorParseError):  # a theme without the variable, or not a colour
            return None
        if color.ansi is not None or color.a == 0:
            return None
        palette[role] = color.rgb
    return palette


MIN_PLOT_ROWS = 12  # the plot's height before its figure asks for more (themes/scaling.tcss: 50vh, at least 12)


class PlotView(WorkbenchNode, Static):
    """A plotext figure at this widget's width, as tall as it needs: rebuilt when it resizes, when the theme
    changes, or on new data."""

    def __init__(self, **kwargs: Any):
        super().__init__("", **kwargs)
        self.draw: Callable[[int, int, Palette | None, int], str] | None = None
        self.text = Text("")  # the figure as last built (what is on screen)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.rebuild())

    def show(self, draw: Callable[[int, int, Palette | None, int], str] | None) -> None:
        self.draw = draw
        self.rebuild()

    def on_resize(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """Draw at this widget's width and half the screen's height (at least MIN_PLOT_ROWS), then take the
        figure's own height: a figure grows when its values need more rows to stay apart, up to the screen's
        height (it grew to 70 rows in a 40-row terminal)."""
        width = self.content_size.width
        height = max(MIN_PLOT_ROWS, self.app.size.height // 2)
        if self.draw is None or width < 10:
            self.text = Text("")
        else:
            most = max(MIN_PLOT_ROWS, self.app.size.height)  # the body scrolls: the plot alone fits the screen
            figure = self.draw(width, height, theme_palette(self.app.theme_variables), most)
            self.text = Text.from_ansi(figure, no_wrap=True)
            self.styles.height = len(self.text.plain.splitlines())
        self.update(self.text)


# ---------------------------------------------------------------- the screen


class SourceTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Show", id="scaling.show")]


def judges_caption(judged: bool, trials: JudgeTrials | None) -> Text:
    """The note over the judges' table (when `judged`) and the agreement of the judge's repeated `trials`."""
    caption = Text(JUDGE_NOTE if judged else "", style="dim")
    if trials:
        caption.append("\n" + agreement_text(trials), style="")
    return caption


def study_state(job: StudyJob) -> tuple[str, int, int]:
    """What redraws a study's result when it changes: its status, its finished levels and, for a parallel study,
    its samples in rounds of K (an item's K samples, at the earliest)."""
    sampled = sum(level["done"] for level in job.progress()) if job.plan.kind == "parallel" else 0
    return job.status, job.finished_levels, sampled // max(1, *(job.plan.ks or [1]))


def study_drawable(job: StudyJob, rounds: int) -> bool:
    """Whether a study has a result to draw: it ended, a sweep has two levels, or a parallel study sampling has
    `rounds` of K samples."""
    if job.status in ("done", "stopped", "failed"):
        return True
    if job.plan.kind == "sequential":
        return job.finished_levels >= 2
    return job.plan.kind == "parallel" and job.status == "running" and rounds >= 1


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
        self.plateau_options = PlateauOptions(**(plateau_options or {}))
        self.judge = judge
        self.imported: dict[str, tuple[Source, Any, str]] = {}  # key → (source, study read, its file)
        self.sources: list[Source] = []
        self.pending: Source | None = None
        self.shown: Source | None = None
        self.result: dict[str, Any] | None = None
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
            self._caption(
                Text(
                    "No sequential groups or parallel runs in the store yet.\n\n"
                    "Press n to launch a study here, i to import a parallel scores file, or make one with "
                    "`agenthop-tui --batch scale sequential --axis points --grid 10,20,30 --run NAME` or "
                    "`scale parallel --k 1,2,4 --run NAME`.",
                    style="dim",
                )
            )
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
        self.sources = scaling_sources(store.runs() if store is not None else [])
        self.sources += [source for source, _, _ in self.imported.values()]
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
        options = PlateauOptions(**self.plateau_options)
        if self.study is not None and self.study.active:
            options["finished_only"] = True  # a sweep filling in: the levels done so far
        self.worker = self.run_worker(
            self._computation(source, options),
            thread=True,
            exclusive=True,
            group="scaling",
            name=source.key,
            exit_on_error=False,
        )

    def _computation(self, source: Source, options: PlateauOptions) -> partial[Any]:
        """The computation of `source`'s result (shown by `show` as its kind's), to run in a thread worker."""
        if source.kind == "sequential":
            return partial(compute_plateau, self.app.store_path, source.name, options)
        if source.kind == "strategies":
            return partial(compute_strategies, self.app.store_path, source.groups, options)
        if source.kind == "tools":
            return partial(compute_tools, self.app.store_path, source.name)
        if source.kind == "imported":
            _, study, path = self.imported[source.key]
            return partial(compute_imported, study, path)
        judge = self.judge
        if self._sampling(source):  # verdicts come after the sampling: meanwhile only those stored are read
            from workbench.service.scaling import stored_only

            judge = stored_only(self.study.plan.judge if self.study is not None else "evidence")
        return partial(compute_parallel, self.app.store_path, self.app.corpora.corpus, source.name, None, judge)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker is not self.worker or self.pending is None:
            return
        if event.state == WorkerState.SUCCESS:
            self.show(self.pending, cast("dict[str, Any]", worker.result))  # the computation's, on SUCCESS
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

    def show(self, source: Source, result: dict[str, Any]) -> None:
        self.shown, self.result = source, result
        self.query_one("#scaling-body").loading = False
        parallel = source.kind in ("parallel", "imported")  # an imported study shows as a sampled one
        report = cast(ParallelReport, result) if parallel else None  # compute_parallel's or compute_imported's
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
        judges = report["judges"] if report else []
        self_choice = [r for r in report["per_k"] if "self_choice" in r] if report else []
        judge_trials = report["judge_trials"] if report else None
        trials = (judge_trials["per_k"] if judge_trials else None) or []
        self._fill_or_hide("#scaling-judges", JUDGE_COLUMNS, [judge_cells(j) for j in judges])
        self._fill_or_hide("#scaling-self-choice", SELF_CHOICE_COLUMNS, [self_choice_cells(r) for r in self_choice], 0)
        self._fill_or_hide("#scaling-trials", TRIAL_COLUMNS, [trial_cells(r) for r in trials], 0)

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
        key = event.row_key.value
        source = next((s for s in self.sources if s.key == key), None)
        if source is not None:
            self.select(source)

    # ------------------------------------------------------------ importing a study measured elsewhere

    def action_import_scores(self) -> None:
        from workbench.tui.screens.dialogs import NameModal

        def check(value: str) -> str | None:
            if not value:
                return "a file path is needed"
            return None if Path(value).expanduser().is_file() else "no such file"

        self.app.push_screen(
            NameModal(
                "Import a parallel scores file",
                "",
                check,
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
            found = import_scores(path)
        except ScalingInputError as exc:
            self.notify(str(exc), severity="error", timeout=8)
            return
        for source, study in found:
            self.imported[source.key] = (source, study, str(path))
        self._load_sources()
        self.query_one("#scaling-caption").display = True
        self.query_one("#scaling-sources").focus()
        self.select(found[0][0], force=True)

    # ------------------------------------------------------------ launching a study

    def action_new_study(self) -> None:
        from workbench.tui.screens.study_form import StudyForm

        if self.study is not None and self.study.active:
            self.notify(f"study '{self.study.name}' is running (x cancels it)", severity="warning", timeout=4)
            return
        self.app.push_screen(StudyForm(self._plan), self._launch)

    def _plan(self, values: StudyFields):
        """(plan, None), or (None, the problem) for the form's error line; nothing is written."""
        from workbench.service.launch import LaunchError
        from workbench.service.scaling import ScalingInputError, check_plan, plan_study
        from workbench.tui.forms.study import study_request

        try:
            plan = plan_study(study_request(values))
            store = self.app.open_store(create=False)
            if store is not None:
                check_plan(store, plan)
        except (LaunchError, ScalingInputError, ValueError) as exc:
            return None, str(exc)
        return plan, None

    def _launch(self, plan) -> None:
        from workbench.tui.jobs import StudyJob

        if plan is None:
            return
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

    def study_source(self, plan: StudyPlan) -> Source | None:
        """Where the study `plan`'s result shows: its comparison, its one group, or its parallel run."""
        if plan.kind == "parallel":
            key = Source("parallel", plan.name, "").key
        elif len(plan.groups) > 1:
            key = Source("strategies", plan.name, "").key
        else:
            key = Source("sequential", plan.groups[0], "").key
        return next((s for s in self.sources if s.key == key), None)

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
        source = self.study_source(job.plan)
        if source is not None:
            self.select(source, force=True)

    def _sampling(self, source: Source) -> bool:
        """Whether `source` is the parallel study this screen watches, still sampling (not yet judged)."""
        job = self.study
        return (
            job is not None
            and job.status == "running"
            and job.plan.kind == "parallel"
            and source.kind == "parallel"
            and source.name == job.plan.name
        )

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
        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in source.name) or "scaling"
        default = export_dir() / f"scaling-{safe}.json"

        def check(value: str) -> str | None:
            if not value:
                return "a file path is needed"
            return "that is a directory; name a file" if Path(value).expanduser().is_dir() else None

        def chosen(value: str | None) -> None:
            if value:
                self.write_export(source, result, Path(value).expanduser())

        self.app.push_screen(NameModal("Export as JSON (or CSV: end the name with .csv)", str(default), check), chosen)

    def write_export(self, source: Source, result: dict[str, Any], path: Path) -> None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(export_text(source.kind, result, export_format(path)))
        except OSError as exc:
            self.notify(f"export failed: {exc}", severity="error")
            return
        self.notify(f"exported {source.name} to {path}", timeout=4)
