"""What `scale` prints: the plateau (`plateau`), the sequential strategies compared (`strategies`), pass@k against
the strategies with their costs, judges and the study's readings (`parallel`), and the registry-size table
(`tools`): JSON, CSV or tables with their text figures."""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from rich.console import Console
from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import cells_table, console, csv_text, figure_rows, print_json, use_color
from workbench.service.records.parallel import JudgeTrials, ParallelReport
from workbench.service.records.sequential import Plateau, RegistryTable, StrategyComparison, ToolsReport


def registry_table(registry: RegistryTable) -> Table:
    """The registry-size table of the general-agent setting: `scale tools` prints it, and so does the panel of
    that setting's runs."""
    from workbench.views.general import REGISTRY_HEADER, registry_rows

    reg = Table(
        title=Text(
            "registry size (the general-agent setting): accuracy against the plain run on common "
            "items, and the mechanism by the study's rule"
        ),
        title_justify="left",
    )
    for i, col in enumerate(REGISTRY_HEADER):
        reg.add_column(col, justify="left" if i in (0, 2, len(REGISTRY_HEADER) - 1) else "right")
    for row in registry_rows(registry):
        reg.add_row(*map(Text, row))
    return reg


def print_registry(registry: ToolsReport, fmt: str) -> None:
    """`scale tools`: the group's registry-size table and the rule it reads the mechanism by."""
    if fmt == "json":
        print_json(registry)
        return
    from workbench.views.general import REGISTRY_NOTE

    out = console()
    out.print(registry_table(registry))
    out.print(REGISTRY_NOTE, markup=False, style="dim")
    out.print(registry["rule"], markup=False, style="dim")


_Result = TypeVar("_Result", bound=Mapping[str, Any])  # a scaling result: a JSON document


def _printed_as_data(result: _Result, fmt: str, csv_table: Callable[[_Result], tuple]) -> bool:
    """Print a scaling result as JSON (strict: scaling outputs are plain Python by construction) or as the CSV
    `csv_table` lays out, and say so; False for the formats drawn as tables."""
    if fmt == "json":
        print_json(result, strict=True)
        return True
    if fmt == "csv":
        header, rows = csv_table(result)
        sys.stdout.write(csv_text(rows, tuple(header)))
        return True
    return False


def print_plateau(result: Plateau, fmt: str) -> None:
    """The plateau: transitions with d̄, σ, C_k and the decision; in table mode also the plot."""
    from workbench.views.scaling import transition_csv

    if _printed_as_data(result, fmt, transition_csv):
        return
    from workbench.views.figures import plateau_figure
    from workbench.views.scaling import TERMINAL_PALETTE

    out = console()
    out.print(_plateau_line(result), markup=False)
    out.print(_transitions_table(result))
    if result.get("levels"):
        _print_levels(out, result)
    if len(result["budgets"]) >= 2:
        rows, most = figure_rows(22)
        sys.stdout.write(plateau_figure(result, 78, rows, TERMINAL_PALETTE if use_color() else None, most) + "\n")


def _plateau_line(result: Plateau) -> str:
    """The plateau's one-line verdict: k*, its budget, the sample and the correction, and its caveats."""
    from workbench.views.scaling import flags, trials_note

    caveats = flags(result)
    first = f", k*_first = {result['k_star_first']}" if result.get("k_star_first") is not None else ""
    fragile = " (borderline: one flipped decision moves it)" if result.get("k_star_borderline") else ""
    return (
        f"plateau: k* = {result['k_star']} → {result['plateau_budget']}{fragile}{first} (n = {result['n']}, dropped "
        f"{result['n_dropped']}, FPC = {result['fpc']:.3f}, z = {result['z'] or 0:.3f}, {result['correction']}"
        f"{trials_note(result)})" + (f" · {'; '.join(caveats)}" if caveats else "")
    )


TRANSITION_COLUMNS = ("transition", "d̄", "σ_boot", "C_k", "decision", "improved / worsened", "sign test p")


def _transitions_table(result: Plateau) -> Table:
    """A row per transition between adjacent levels: d̄, σ, C_k, the decision and the sign test."""
    from workbench.views.scaling import transition_cells

    rows = map(transition_cells, result["transitions"])
    return cells_table(None, TRANSITION_COLUMNS, rows, left={0, 4})


def _print_levels(out: Console, result: Plateau) -> None:
    """The levels' table with its note (and the strategy's, if any)."""
    from workbench.views.scaling import LEVEL_COLUMNS, LEVELS_NOTE, level_cells, strategy_note

    title = f"levels · {result.get('axis')} axis, {result.get('protocol')}"
    left = {i for i, h in enumerate(LEVEL_COLUMNS) if i == 0 or h == "flag"}
    out.print(cells_table(title, LEVEL_COLUMNS, map(level_cells, result["levels"]), left=left))
    out.print(LEVELS_NOTE, markup=False)
    note = strategy_note(result)
    if note:
        out.print(note, markup=False)


def print_strategies(comparison: StrategyComparison, fmt: str) -> None:
    """The sequential strategies compared: each one's plateau, a row per (strategy, level), and the overlay."""
    from workbench.views.scaling import strategies_csv

    if _printed_as_data(comparison, fmt, strategies_csv):
        return
    from workbench.views.figures import strategies_figure
    from workbench.views.scaling import (
        STRATEGY_COLUMNS,
        TERMINAL_PALETTE,
        comparison_rows,
        strategy_cells,
        strategy_summary,
    )

    out = console()
    for line in strategy_summary(comparison):
        out.print(line, markup=False)
    table = Table(title=Text(f"strategies · {comparison['axis']} axis"), title_justify="left")
    for i, h in enumerate(STRATEGY_COLUMNS):
        table.add_column(h, justify="left" if i < 2 else "right")
    for row in comparison_rows(comparison):
        table.add_row(*map(Text, strategy_cells(row)))
    out.print(table)
    out.print(comparison["rule"], markup=False)
    rows, most = figure_rows(20)
    sys.stdout.write(strategies_figure(comparison, 78, rows, TERMINAL_PALETTE if use_color() else None, most) + "\n")


def print_parallel(report: ParallelReport, fmt: str) -> None:
    """pass@k and each strategy per k with intervals and gaps, then what each k costs; or JSON, or CSV."""
    from workbench.views.figures import parallel_figure
    from workbench.views.scaling import (
        TERMINAL_PALETTE,
        cost_cells,
        cost_columns,
        parallel_cells,
        parallel_columns,
        parallel_csv,
    )

    if _printed_as_data(report, fmt, parallel_csv):
        return
    title = (
        f"{report['run']} · {report['items']} items · K = {report['k_max']}"
        + (f" · judge {report['judge']}" if report["judge"] else "")
        + " · Δ = pass@k − strategy, points [paired 95% interval]"
    )
    out = console()
    out.print(cells_table(title, parallel_columns(report), (parallel_cells(report, r) for r in report["per_k"])))
    costs_title = (
        "gap size and cost at k: rel = Δ / pass@k, eff = (strategy − pass@1)/(pass@k − pass@1); "
        "cost = k/K of the sampling + the verdicts a strategy needs"
    )
    out.print(cells_table(costs_title, cost_columns(report), (cost_cells(report, r) for r in report["per_k"])))
    _print_parallel_notes(out, report)
    rows, most = figure_rows(18)
    sys.stdout.write(parallel_figure(report, 78, rows, TERMINAL_PALETTE if use_color() else None, most) + "\n")
    _print_study(out, report)
    _print_judges(out, report)


def _print_parallel_notes(out: Console, report: ParallelReport) -> None:
    """What the parallel tables leave out (unfinished items, k beyond K), the tie rule, repricing and import notes."""
    from workbench.views.scaling import imported_note, repricing_note

    if report.get("items_incomplete"):
        out.print(
            f"{report['items_incomplete']} item(s) still miss some of the K samples and are left out "
            "(run the same command again to finish them)",
            markup=False,
        )
    if report.get("ks_unavailable"):
        out.print(
            f"k = {', '.join(map(str, report['ks_unavailable']))} exceed K = {report['k_max']}: not shown", markup=False
        )
    out.print(report["tie_rule"], markup=False)
    if repricing_note(report):
        out.print(repricing_note(report), markup=False)
    if imported_note(report):
        out.print(imported_note(report), markup=False)


def _print_study(out, report: ParallelReport) -> None:
    """The study's readings of the same samples (GA-Bench Tables 15-18), labelled as the study's."""
    from workbench.views.scaling import study_cells, study_columns

    if not report.get("study"):
        return
    table = Table(title=Text(f"the study's readings · {report['run']}"), title_justify="left")
    for column in study_columns(report):
        table.add_column(column, justify="right")
    for r in report["study"]:
        table.add_row(*map(Text, study_cells(report, r)))
    out.print(table)
    out.print(report["study_note"], markup=False)


def print_parallel_files(reports: list[ParallelReport], fmt: str, source: str) -> None:
    """`scale parallel --scores`: every study of the file as `print_parallel` shows a sampled run; JSON holds them
    all under `studies`, CSV one table with a `study` column."""
    from workbench.views.scaling import parallel_files_csv

    if fmt == "json":
        print_json({"source": source, "studies": reports}, strict=True)
        return
    if fmt == "csv":
        header, rows = parallel_files_csv(reports)
        sys.stdout.write(csv_text(rows, tuple(header)))
        return
    for report in reports:
        print_parallel(report, fmt)


def _print_judges(out: Console, report: ParallelReport) -> None:
    """The judges measured, the study's self-choice beside the committed accuracy, and the trials' spread."""
    from workbench.views.figures import judges_figure
    from workbench.views.scaling import (
        JUDGE_COLUMNS,
        JUDGE_NOTE,
        SELF_CHOICE_COLUMNS,
        TERMINAL_PALETTE,
        judge_cells,
        self_choice_cells,
    )

    if report.get("judges"):
        out.print(cells_table("judges measured", JUDGE_COLUMNS, map(judge_cells, report["judges"]), left={0, 1}))
        out.print(JUDGE_NOTE, markup=False)
    rows = [r for r in report["per_k"] if "self_choice" in r]
    if rows:
        out.print(
            cells_table(f"self-choice · judge {report['judge']}", SELF_CHOICE_COLUMNS, map(self_choice_cells, rows))
        )
    trials = report.get("judge_trials")
    if trials:
        _print_trials(out, trials)
    if len(report.get("judges") or []) > 0:
        height, most = figure_rows(14)
        palette = TERMINAL_PALETTE if use_color() else None
        sys.stdout.write(judges_figure(report["judges"], 78, height, palette, most) + "\n")


def _print_trials(out: Console, trials: JudgeTrials) -> None:
    """The judges' agreement over repeated trials, and per k their spread (Table 6)."""
    from workbench.views.scaling import TRIAL_COLUMNS, agreement_text, trial_cells

    out.print(agreement_text(trials), markup=False)
    per_k = trials["per_k"]
    if per_k:
        title = f"over {trials['trials']} judge trials (Table 6)"
        out.print(cells_table(title, TRIAL_COLUMNS, map(trial_cells, per_k)))
