"""Diagnostics of one run: the four axes and failure rates exactly as the report computes them, the
7×7 tool transition matrix as a heat map in the theme's colours, and the reads by hop from the seed.

No metric is computed here: the numbers come from `workbench.service.reports` (the same
functions the --batch report prints), this module only lays them out. They are computed
on a worker thread (a 3,000-trajectory run takes a good part of a second) and cached by
the run's progress, so a run writing elsewhere never makes the UI recompute them.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.color import Color, ColorParseError
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widgets import LoadingIndicator, Static
from textual.worker import Worker, WorkerState

from workbench.tui.host import WorkbenchNode
from workbench.views.cells import dataset_cell, frac, pct

if TYPE_CHECKING:
    from workbench.service.records.report import RunReport, TransitionLayout

SHORT = {
    "get_paper_info": "info",
    "get_references": "refs",
    "search_papers": "search",
    "list_sections": "list",
    "read_section": "read",
    "think": "think",
    "submit_answer": "submit",
}


def _frac(pair: list | None) -> str:
    return "" if not pair else f" ({frac(pair)})"


def failures_table(report: RunReport) -> Table:
    """Terminations, error and non-submission rates, and what wrong answers chose (attribution)."""
    table = Table(title="Failures", title_justify="left", expand=False, show_edge=False, pad_edge=False)
    table.add_column("ending / choice")
    table.add_column("n", justify="right")
    table.add_column("share", justify="right")
    n = report["n"] or 0
    for term, count in report["terminations"].items():
        table.add_row(Text(term), Text(str(count)), Text(pct(count / n if n else None)))
    for error_kind, count in report["error_kinds"].items():  # why: beside the endings they explain
        table.add_row(Text(f"  {error_kind}", style="dim"), Text(str(count)), Text(pct(count / n if n else None)))
    r, c = report["axes"]["resource"], report["counts"]["resource"]
    table.add_row(Text("error rate"), Text(""), Text(pct(r["error_rate"]) + _frac(c["error_rate"])))
    if c["api_error_rate"][0]:  # episodes that met an API error, whatever their ending
        table.add_row(Text("met an API error"), Text(""), Text(pct(r["api_error_rate"]) + _frac(c["api_error_rate"])))
    cut = report["cut_off"]
    if cut["turns"]:
        table.add_row(Text("replies cut off"), Text(str(cut["turns"])), Text(f"{cut['calls_lost']} calls lost"))
    table.add_row(
        Text("non-submission"), Text(""), Text(pct(r["non_submission_rate"]) + _frac(c["non_submission_rate"]))
    )
    att = report["attribution"]
    if att["n_wrong"]:
        table.add_section()
        for kind, count in att["counts"].items():
            table.add_row(Text(f"wrong → {kind}"), Text(str(count)), Text(pct(att["rates"].get(kind))))
    return table


def _cell_style(count: int, share: float, colors: tuple[Color, Color] | None) -> Style:
    """Background blended from the theme's surface to its primary by the row share; with a terminal-native
    (ANSI) theme, where colours cannot be blended, intensity is shown with reverse video and weight."""
    if colors is None:
        if not count:
            return Style(dim=True)
        if share >= 0.5:
            return Style(reverse=True, bold=True)
        return Style(reverse=True) if share >= 0.2 else Style(bold=True)
    low, high = colors
    if not count:
        return Style(bgcolor=low.rich_color, dim=True)
    bg = low.blend(high, 0.15 + 0.85 * share)
    return Style(bgcolor=bg.rich_color, color=bg.get_contrast_text(1.0).rich_color)


def heatmap(transitions: TransitionLayout, colors: tuple[Color, Color] | None) -> Table:
    """Rows: the tool called; columns: the tool called next. Cell colour: the row share; text: the count."""
    names = transitions["names"]
    table = Table(
        title=Text(
            f"Tool transitions: row = tool called, column = the next call; shade = share of the row "
            f"({transitions['n']} trajectories)"
        ),
        title_justify="left",
        show_edge=False,
        pad_edge=False,
        box=None,
        padding=(0, 0),
        collapse_padding=True,
    )
    table.add_column(
        "", justify="right", no_wrap=True, min_width=max((len(SHORT.get(n, n)) for n in names), default=6) + 1
    )
    for name in names:
        table.add_column(Text(f"{SHORT.get(name, name)[:6]:^7}"), justify="center", no_wrap=True, min_width=7)
    for name, counts, rates in zip(names, transitions["counts"], transitions["rates"], strict=True):
        cells: list[Text] = []
        for count, rate in zip(counts, rates, strict=True):
            label = f"{count}" if count else "·"
            cells.append(Text(f"{label:^7}", style=_cell_style(count, rate or 0.0, colors)))
        table.add_row(Text(f"{SHORT.get(name, name)} "), *cells)
    return table


def blendable(variables: dict[str, str]) -> tuple[Color, Color] | None:
    """(surface, primary) of the theme when both are real colours, else None (ANSI themes)."""
    try:
        low = Color.parse(variables["surface"])
        high = Color.parse(variables["primary"])
    except (KeyError, ColorParseError):
        return None
    if low.a == 0 or low.ansi is not None or high.ansi is not None:
        return None
    return low, high


Key = tuple[str, str, int, tuple]  # (store path, run name, run id, `Store.run_progress`: status, done, last id, rules)
CACHE_SIZE = 8
UPDATE_EVERY_S = 3.0
_cache: OrderedDict[Key, tuple[RunReport, TransitionLayout]] = OrderedDict()
_cache_lock = threading.Lock()


def cached(key: Key) -> tuple[RunReport, TransitionLayout] | None:
    """The diagnostics computed for `key`, if still cached (a run's numbers change only when its progress does)."""
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None:
            _cache.move_to_end(key)
        return hit


def compute(key: Key) -> tuple[Key, RunReport, TransitionLayout]:
    """The report and transition matrix of a run, on a worker thread with its own read-only store connection."""
    from workbench.service.reports import run_diagnostics
    from workbench.service.stores import open_store

    store = open_store(Path(key[0]), readonly=True)
    try:
        report, transitions = run_diagnostics(store, key[1])
    finally:
        store.close()
    with _cache_lock:
        _cache[key] = (report, transitions)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return key, report, transitions


class DiagnosticsPanel(WorkbenchNode, VerticalScroll):
    """Computed off the UI thread (`load`), cached by the run's progress, rebuilt on theme changes (the heat map
    takes the theme's colours). While a newer computation runs, the last numbers stay on screen."""

    def __init__(self, run_name: str, **kwargs):
        super().__init__(**kwargs)
        self.run_name = run_name
        self.report: RunReport | None = None
        self.transitions: TransitionLayout | None = None
        self.key: Key | None = None  # what is shown
        self.wanted: Key | None = None  # what should be shown
        self.pending: Key | None = None  # what is being computed
        self._last_start = 0.0
        self._timer: Timer | None = None
        self.update_every_s = UPDATE_EVERY_S

    def compose(self) -> ComposeResult:
        # a child indicator, not `self.loading`: a loading widget cannot take focus, and focus falling elsewhere
        # would switch the run screen back to its other tab
        yield LoadingIndicator(id="diag-loading")
        yield Static("", id="diag-status")
        yield Static("", id="diag-axes")
        with Horizontal(id="diag-lower"):
            yield Static("", id="diag-failures")
            yield Static("", id="diag-heatmap")
        yield Static("", id="diag-hops")
        yield Static("", id="diag-general")  # the general-agent setting's measures (hidden for a plain run)

    def on_mount(self) -> None:
        self._status("")
        self.query_one("#diag-loading").display = False
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.render_all())

    def load(self, run_id: int, progress: tuple) -> None:
        """Show the diagnostics of the run as of `progress` (status, done, last id): from the cache, or computed
        in a thread worker. One computation at a time, at most one every UPDATE_EVERY_S seconds once numbers are
        on screen: a run writing fast updates its tab every few seconds instead of keeping a core busy."""
        self.wanted = (str(self.app.store_path), self.run_name, run_id, tuple(progress))
        self._kick()

    def _kick(self) -> None:
        key = self.wanted
        if key is None or key == self.key or self.pending is not None:
            return
        hit = cached(key)
        if hit is not None:
            self._show(key, *hit)
            return
        wait = self._last_start + self.update_every_s - time.monotonic()
        if self.report is not None and wait > 0:
            if self._timer is None:
                self._timer = self.set_timer(wait, self._timed_kick)
            return
        self.pending = key
        self._last_start = time.monotonic()
        if self.report is None:
            self.query_one("#diag-loading").display = True
        self._status(f"computing the diagnostics of {key[3][1]:,} trajectories…")
        # started once the tab is painted: the worker shares the GIL with the UI thread, so drawing the tab first
        # keeps the switch itself instant
        self.call_after_refresh(
            self.run_worker,
            partial(compute, key),
            name="diagnostics",
            group="diagnostics",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _timed_kick(self) -> None:
        self._timer = None
        self._kick()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "diagnostics" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        event.stop()
        self.pending = None
        if event.state == WorkerState.ERROR:
            self.query_one("#diag-loading").display = False
            self._status(f"cannot compute the diagnostics: {worker.error}")
            return
        self._show(*cast("tuple[Key, RunReport, TransitionLayout]", worker.result))  # `compute`'s, on SUCCESS
        self._kick()  # the run moved on meanwhile

    def _show(self, key: Key, report: RunReport, transitions: TransitionLayout) -> None:
        self.key, self.report, self.transitions = key, report, transitions
        self.query_one("#diag-loading").display = False
        self._status("")
        self.render_all()

    def _status(self, text: str) -> None:
        status = self.query_one("#diag-status", Static)
        status.update(Text(text, style="dim"))
        status.display = bool(text)

    def render_all(self) -> None:
        if self.report is None or self.transitions is None:
            return
        from workbench.views.report import hop_table, report_table

        report = self.report
        axes = report_table(report)
        # the report's title holds the run name: never let it be read as markup
        model = f" {report['model']}" if report.get("model") else ""
        dataset = dataset_cell(report["dataset"], report.get("dataset_repo"), report.get("dataset_revision"))
        title = Text(f"{report['run']} · {report['agent']}{model} · {dataset} · n={report['n']}", style="italic")
        # the title and the terminations line above and below the table, as wide as the pane: as the table's own
        # title and caption they wrapped to its width (~80 cells) even at 160 columns
        caption = axes.caption if isinstance(axes.caption, Text) else Text(str(axes.caption or ""))
        caption.stylize("dim italic")
        axes.title = axes.caption = None
        self.query_one("#diag-axes", Static).update(Group(title, axes, caption))
        self.query_one("#diag-failures", Static).update(failures_table(report))
        content: RenderableType
        if report["n"]:
            content = heatmap(self.transitions, blendable(self.app.theme_variables))
        else:
            content = Text.assemble("Tool transitions\n", ("no finished trajectories yet", "dim"))
        self.query_one("#diag-heatmap", Static).update(content)
        self.query_one("#diag-hops", Static).update(hop_table(report))
        from workbench.views.general import general_table

        general = general_table(report)
        self.query_one("#diag-general", Static).update(general if general is not None else "")
        self.query_one("#diag-general").display = general is not None
