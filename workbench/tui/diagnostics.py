"""Diagnostics of one run: the four axes and failure rates exactly as the report computes them, and the
7×7 tool transition matrix as a heat map in the theme's colours.

No metric is computed here: the numbers come from `workbench.reports` (the same
functions the --batch report prints), this module only lays them out.
"""
from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.color import Color
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

SHORT = {"get_paper_info": "info", "get_references": "refs", "search_papers": "search", "list_sections": "list",
         "read_section": "read", "think": "think", "submit_answer": "submit"}


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _frac(pair: list | None) -> str:
    return "" if not pair else f" ({pair[0]:g}/{pair[1]})"


def failures_table(report: dict[str, Any]) -> Table:
    """Terminations, error and non-submission rates, and what wrong answers chose (attribution)."""
    table = Table(title="Failures", title_justify="left", expand=False, show_edge=False, pad_edge=False)
    table.add_column("ending / choice")
    table.add_column("n", justify="right")
    table.add_column("share", justify="right")
    n = report["n"] or 0
    for term, count in report["terminations"].items():
        table.add_row(Text(term), Text(str(count)), Text(_pct(count / n if n else None)))
    r, c = report["axes"]["resource"], report["counts"]["resource"]
    table.add_row(Text("error rate"), Text(""), Text(_pct(r.get("error_rate")) + _frac(c.get("error_rate"))))
    table.add_row(Text("non-submission"), Text(""),
                  Text(_pct(r.get("non_submission_rate")) + _frac(c.get("non_submission_rate"))))
    att = report.get("attribution") or {}
    if att.get("n_wrong"):
        table.add_section()
        for kind, count in att.get("counts", {}).items():
            table.add_row(Text(f"wrong → {kind}"), Text(str(count)), Text(_pct(att["rates"].get(kind))))
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


def heatmap(transitions: dict[str, Any], colors: tuple[Color, Color] | None) -> Table:
    """Rows: the tool called; columns: the tool called next. Cell colour: the row share; text: the count."""
    names = transitions["names"]
    table = Table(title=Text(f"Tool transitions: row = tool called, column = the next call; shade = share of the row "
                             f"({transitions['n']} trajectories)"), title_justify="left",
                  show_edge=False, pad_edge=False, box=None, padding=(0, 0), collapse_padding=True)
    table.add_column("", justify="right", no_wrap=True)
    for name in names:
        table.add_column(Text(f"{SHORT.get(name, name)[:6]:^7}"), justify="center", no_wrap=True, min_width=7)
    for name, counts, rates in zip(names, transitions["counts"], transitions["rates"]):
        cells: list[Text] = []
        for count, rate in zip(counts, rates):
            label = f"{count}" if count else "·"
            cells.append(Text(f"{label:^7}", style=_cell_style(count, rate or 0.0, colors)))
        table.add_row(Text(f"{SHORT.get(name, name)} "), *cells)
    return table


def blendable(variables: dict[str, str]) -> tuple[Color, Color] | None:
    """(surface, primary) of the theme when both are real colours, else None (ANSI themes)."""
    try:
        low = Color.parse(variables["surface"])
        high = Color.parse(variables["primary"])
    except Exception:
        return None
    if low.a == 0 or low.ansi is not None or high.ansi is not None:
        return None
    return low, high


class DiagnosticsPanel(VerticalScroll):
    """Built on first show (`load`), rebuilt on theme changes (the heat map takes the theme's colours)."""

    def __init__(self, run_name: str, **kwargs):
        super().__init__(**kwargs)
        self.run_name = run_name
        self.report: dict[str, Any] | None = None
        self.transitions: dict[str, Any] | None = None

    def compose(self) -> ComposeResult:
        yield Static("computing…", id="diag-axes")
        with Horizontal(id="diag-lower"):
            yield Static("", id="diag-failures")
            yield Static("", id="diag-heatmap")

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.render_all())

    def load(self) -> None:
        from workbench.reports import run_report, transition_report

        store = self.app.store
        self.report = run_report(store, self.run_name)
        self.transitions = transition_report(store, self.run_name)
        self.render_all()

    def render_all(self) -> None:
        if self.report is None or self.transitions is None:
            return
        from workbench.render import report_table

        report = self.report
        axes = report_table(report)
        # the report's title holds the run name: never let it be read as markup
        model = f" {report['model']}" if report.get("model") else ""
        axes.title = Text(f"{report['run']} · {report['agent']}{model} · {report['dataset']} · n={report['n']}")
        self.query_one("#diag-axes", Static).update(axes)
        self.query_one("#diag-failures", Static).update(failures_table(report))
        if report["n"]:
            content = heatmap(self.transitions, blendable(self.app.theme_variables))
        else:
            content = Text.assemble("Tool transitions\n", ("no finished trajectories yet", "dim"))
        self.query_one("#diag-heatmap", Static).update(content)
