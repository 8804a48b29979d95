"""What `run` and `report` print of one run: its report (the axes, the diagnostics, the legend) in the format
asked for, or the estimate of a dry run."""

from __future__ import annotations

import json
import sys

from rich.console import Group
from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import console, csv_text, print_json
from workbench.service.records.estimate import Estimate
from workbench.service.records.report import RunReport
from workbench.views.cells import shell_word
from workbench.views.markdown import markdown_table
from workbench.views.report import (
    REPORT_HEADER,
    TIDY_HEADER,
    analytics_lines,
    completeness,
    detail_rows,
    label_lines,
    legend_lines,
    report_rows,
    tidy_report_rows,
    transition_table,
)


def report_block(report: RunReport) -> Group:
    """The axes table with its title and terminations on lines of their own (`views.report.report_block`)."""
    from workbench.views.report import report_block as block

    return block(report)


def print_report(report: RunReport, fmt: str, brief: bool = False) -> None:
    """The report in `fmt`; `brief` (after a run, as a table) prints the four axes and where the rest is."""
    if fmt == "json":
        print_json(report)
        return
    legend = legend_lines(report.get("legend"))
    if fmt == "csv":
        sys.stdout.write(csv_text(tidy_report_rows(report), TIDY_HEADER))
    elif fmt == "markdown":
        sys.stdout.write(_report_markdown(report, legend))
    elif brief:  # (a table after a run)
        out = console()
        out.print(report_block(report))
        out.print(
            f"the full diagnostics (splits, analytics, stopping behaviour, legend): agenthop-tui --batch report "
            f"{shell_word(report['run'])}",
            markup=False,
            style="dim",
        )
    else:
        _print_full_report(report, legend)


def _report_markdown(report: RunReport, legend: list[str]) -> str:
    """One run's report as Markdown: its heading, whether it is partial, the rows, the legend."""
    partial = completeness(report)
    return (
        f"### {report['run']}\n\n"
        + (f"**{partial[3:]}**\n\n" if partial else "")
        + markdown_table(REPORT_HEADER, report_rows(report) + detail_rows(report))
        + "".join(f"\n- {line}" for line in legend)
        + ("\n" if legend else "")
    )


def _print_full_report(report: RunReport, legend: list[str]) -> None:
    """The table: the four axes, the diagnostics, the transitions, the analytics and label lines, the legend."""
    out = console()
    out.print(report_block(report))
    details = Table(title="diagnostics", title_justify="left")
    for col in ("section", "metric", "ST", "MT", "all"):
        details.add_column(col, justify="left" if col in ("section", "metric") else "right")
    for row in detail_rows(report, full=False):
        details.add_row(*map(Text, row))
    out.print(details)
    if report.get("analytics"):
        out.print(transition_table(report["analytics"]["transitions"]))
    general = report.get("general_setting")
    if general and general["transitions"]:  # the general setting: out-of-domain = other
        out.print(transition_table(general["transitions"]))
    for line in analytics_lines(report):
        out.print(line, markup=False)
    for line in label_lines(report):
        out.print(line, markup=False)
    for line in legend:
        out.print(line, markup=False, style="dim")


def print_estimate(est: Estimate, item_ids: list[str], llm: bool, fmt: str) -> None:
    """`--dry-run`: the estimate as JSON, or its lines."""
    from workbench.views.estimate import dry_run_text

    if fmt == "json":
        sys.stdout.write(json.dumps(est, indent=2) + "\n")
        return
    sys.stdout.write(dry_run_text(est, item_ids, llm))
