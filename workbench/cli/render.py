"""Writing to stdout in the format asked for: a table (rich), JSON, CSV or markdown. The cells, labels and
wording come from `workbench.views` (the TUI shows the same); nothing here computes or words a value."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeVar

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from workbench.service.datasets import dataset_label
from workbench.service.items import ItemDetail, ItemTrajectory
from workbench.service.runlist import RunListing
from workbench.views.cells import fraction, shell_word, usd
from workbench.views.clip import clip_middle
from workbench.views.compare import (
    AGREEMENT_LABELS,
    ATTRIBUTION_HEADER,
    COMPARE_HEADER,
    attribution_rows,
    compare_document,
    compare_heading,
    compare_legend,
    compare_rows,
    separation_sentence,
    token_line,
)
from workbench.views.leaderboard import leaderboard_cells, leaderboard_notes, leaderboard_title
from workbench.views.panel import bigram_panel_line, panel_cells, panel_stat_lines, panel_title
from workbench.views.panel_records import PanelReport
from workbench.views.parallel_json import JudgeTrials, ParallelReport
from workbench.views.records import Board, CompareReport, Estimate, RunReport
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
from workbench.views.sequential_records import Plateau, RegistryTable, StrategyComparison, ToolsReport


def console() -> Console:
    """stdout; wide when it is not a terminal, so piped tables are not squeezed to 80 columns, and without the
    spaces Rich pads a table's lines with (a diff or a `grep ' $'` of piped output saw them)."""
    if sys.stdout.isatty():
        return Console(file=sys.stdout, highlight=False, soft_wrap=False)
    trimmed = TrimmedLines(sys.stdout)
    # Rich annotates `file` as IO[str] but only writes to it and flushes it, which TrimmedLines does
    return Console(file=trimmed, highlight=False, soft_wrap=False, width=200)  # type: ignore[arg-type]  # see above


class TrimmedLines:
    """A text stream that drops the spaces before each line's end: spaces are held back until something other
    than a line end follows them."""

    def __init__(self, out: Any):
        self.out = out
        self.held = ""

    def write(self, text: str) -> int:
        import re

        whole = self.held + text
        kept = whole.rstrip(" ")
        self.held = whole[len(kept) :]
        self.out.write(re.sub(r" +\n", "\n", kept))
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, …: the stream's own
        return getattr(self.out, name)


def on_terminal() -> bool:
    """stdout is a terminal (not a pipe or a file)."""
    return sys.stdout.isatty()


PIPED_FIGURE_ROWS = 20  # a figure's most rows off a terminal: a page of a pager, a screenful of a log


def figure_rows(asked: int) -> tuple[int, int]:
    """(rows a figure is drawn at, the most it may take): `asked` and the terminal's height less two rows (the
    prompt, the command), or PIPED_FIGURE_ROWS when not on a terminal. The figures grew to 70-75 rows to keep
    close values apart, taller than the terminal, and as tall when piped."""
    import shutil

    most = max(12, shutil.get_terminal_size().lines - 2) if on_terminal() else PIPED_FIGURE_ROWS
    return min(asked, most), most


def _color() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    import os

    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def print_json(obj: Any, strict: bool = False) -> None:
    """JSON on stdout. `strict` refuses non-JSON types (a numpy bool would otherwise print as the truthy
    string "False"): the scaling outputs are plain Python by construction, so a stray type is our bug."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=None if strict else str) + "\n")


def _csv(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _markdown(rows: list[tuple], header: tuple) -> str:
    def esc(cell: object) -> str:
        return str(cell).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


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
        sys.stdout.write(_csv(tidy_report_rows(report), TIDY_HEADER))
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
        + _markdown(report_rows(report) + detail_rows(report), REPORT_HEADER)
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


def print_panel(panel: PanelReport, fmt: str) -> None:
    from workbench.views import lineage

    if fmt in ("json", "csv", "markdown"):  # the very text the TUI's Panel screen exports
        sys.stdout.write(lineage.panel_document(panel, fmt))
        return
    out = console()
    for warning in panel.get("warnings", []):
        out.print(f"warning: {warning}", markup=False, style="bold")
    out.print(_panel_table(panel))
    for line in panel_stat_lines(panel) + _lift_lines(panel) + _external_lines(panel):
        out.print(line, markup=False)
    bigrams = bigram_panel_line(panel)
    if bigrams:
        out.print(bigrams, markup=False)
    if panel.get("registry"):  # the general-agent setting's registry-size table
        out.print(_registry_table(panel["registry"]))
    _print_fingerprints(out, panel)
    for line in legend_lines(panel.get("legend")):
        out.print(line, markup=False, style="dim")


def _panel_table(panel: PanelReport) -> Table:
    """Table 2: the runs by tier and family, each column under its group, the marks named in the title."""
    from workbench.views import lineage

    header, rows = panel_cells(panel)
    table = Table(title=_panel_heading(panel, len(rows)), title_justify="left")
    first = {g["columns"][0]: g["group"] for g in panel.get("groups", []) if g["group"]}
    for i, col in enumerate(header):
        # the run / group label never wraps: a tier · family label split over two lines reads as two groups
        table.add_column(f"{first.get(col, '')}\n{col}", justify="left" if i == 0 else "right", no_wrap=i == 0)
    _, sections = lineage.grouped_table(panel)
    for label, cells in sections:
        table.add_row(Text(label, style="bold"), end_section=False)
        for row in cells:
            table.add_row(*map(Text, row))
        table.add_section()
    return table


def _panel_heading(panel: PanelReport, n_rows: int) -> str:
    """Table 2's title, with the tier marks named when some cell carries one."""
    return (
        panel_title(panel, n_rows)
        + (" · † tier leader" if any((panel.get("tier_best") or {}).values()) else "")
        + (" · ‡ conversion separated in its tier" if any((panel.get("tier_shaded") or {}).values()) else "")
    )


def _lift_lines(panel: PanelReport) -> list[str]:
    """Each full-tool run's accuracy lift over its closed-book counterpart, in points."""
    return [
        f"tool lift {lift['full']} vs {lift['closed_book']}: {lift['lift'] * 100:+.1f} pts"
        for lift in panel.get("ablation_lift", [])
        if lift["lift"] is not None
    ]


def _external_lines(panel: PanelReport) -> list[str]:
    """Spearman's ρ against the external scores (`--external`), why it is undefined, or none without them."""
    ext = panel.get("external")
    if not ext:
        return []
    if ext.get("error"):
        return [f"Spearman vs external scores: {ext['error']}"]
    if ext.get("rho") is None:
        return [f"Spearman vs external scores: undefined (n = {ext['n']})"]
    return [
        f"Spearman vs external scores: ρ = {ext['rho']:.3f}, p = {ext['p']:.3g} "
        f"({ext.get('p_method', 'asymptotic')}, n = {ext['n']})"
    ]


def _registry_table(registry: RegistryTable) -> Table:
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
    out.print(_registry_table(registry))
    out.print(REGISTRY_NOTE, markup=False, style="dim")
    out.print(registry["rule"], markup=False, style="dim")


def _print_fingerprints(out: Any, panel: PanelReport) -> None:
    """The fingerprint tables (per run and family, and the family tests), the top trigrams per family, and the
    panel's further tables (`workbench.views.lineage`)."""
    from workbench.views import lineage

    for title, (header, rows) in lineage.titled_tables(panel) + lineage.extra_tables(panel):
        if not rows:
            out.print(f"{title}: {lineage.EMPTY}", markup=False)
            continue
        table = Table(title=title, title_justify="left")
        for i, col in enumerate(header):
            table.add_column(col, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*map(Text, row))
        out.print(table)
    for line in lineage.trigram_lines(panel) + lineage.fingerprint_notes(panel) + lineage.extra_lines(panel):
        out.print(line, markup=False)
    figures = lineage.figures_text(panel, width=min(out.width, 100) - 2, height=max(12, min(out.height, 40) // 2))
    if figures:
        out.print(Text(figures))


NAME_ROOM = {"run": 32, "who": 24}  # the leaderboard's name columns: never narrower than their names up to this


def print_leaderboard(boards: list[Board], fmt: str) -> None:
    if fmt == "json":
        print_json(boards)
        return
    out = console()
    if not boards:
        out.print("no play sessions yet: people play in the TUI (agenthop-tui, then P)", markup=False)
    for board in boards:
        out.print(_board_table(board))
        for line in leaderboard_notes(board):
            out.print(line, markup=False, style="dim")


def _board_table(board: Board) -> Table:
    """One leaderboard as a table whose name columns keep their room (`NAME_ROOM`) on a narrow terminal."""
    header, rows = leaderboard_cells(board)
    table = Table(title=Text(leaderboard_title(board)), title_justify="left")
    names = _name_widths(header, rows)
    for col in header:
        # a narrow terminal squeezes the numbers, not the names: clipped at their end, three runs named
        # alike read `openai_fake-model-…`; beyond their room they lose their middle instead
        table.add_column(
            col,
            justify="left" if col in ("run", "who") else "right",
            no_wrap=col in names,
            min_width=names.get(col),
        )
    for row in rows:
        table.add_row(
            *(
                Text(clip_middle(cell, names[col]) if col in names else cell)
                for col, cell in zip(header, row, strict=True)
            )
        )
    return table


def _name_widths(header: tuple, rows: list[tuple]) -> dict[str, int]:
    """The name columns' widths: their longest cell (or label), up to their room."""
    return {
        col: min(NAME_ROOM[col], max(len(col), *(len(r[i]) for r in rows)))
        for i, col in enumerate(header)
        if col in NAME_ROOM
    }


def print_compare(cmp: CompareReport, fmt: str) -> None:
    if fmt == "json":
        print_json(compare_document(cmp))
        return
    out = console()
    out.print(compare_heading(cmp), markup=False)
    for warning in cmp.get("warnings", []):
        out.print(f"warning: {warning}", markup=False, style="bold")
    out.print(separation_sentence(cmp["separation"]), markup=False, style="bold")
    table = Table(title_justify="left")
    for col in COMPARE_HEADER:
        table.add_column(col, justify="left" if col == "axis" else "right")
    for row in compare_rows(cmp):
        table.add_row(*map(Text, row))
    out.print(table)
    tokens = token_line(cmp)
    if tokens:
        out.print(tokens, markup=False)
    out.print(compare_legend(cmp), markup=False, style="dim")
    agree = " · ".join(f"{AGREEMENT_LABELS[k]} {v['n']}" for k, v in cmp["agreement"].items())
    out.print(f"agreement: {agree}", markup=False)
    out.print(_attribution_table(cmp))
    for side in ("a", "b"):
        out.print(_endings_line(cmp, side), markup=False)
    from workbench.views.general import compare_lines

    for line in compare_lines(cmp):  # the general-agent setting's sides
        out.print(line, markup=False)


def _attribution_table(cmp: CompareReport) -> Table:
    """Distractor attribution side by side, as the compare screen's Failures tab shows it."""
    attribution = Table(
        title=Text(
            "distractor attribution: rates among each run's wrong answers, Δ with a paired "
            "bootstrap interval over the common items"
        ),
        title_justify="left",
    )
    for col in ATTRIBUTION_HEADER:
        attribution.add_column(col, justify="left" if col == ATTRIBUTION_HEADER[0] else "right")
    for row in attribution_rows(cmp):
        attribution.add_row(*map(Text, row))
    return attribution


def _endings_line(cmp: CompareReport, side: str) -> str:
    """One side's terminations and its top trigram."""
    terms = " · ".join(f"{k} {v}" for k, v in cmp["terminations"][side].items() if v)
    use = cmp["tool_use"].get(side)
    top = use["top_trigram"] if use else None
    trigram = (
        f" · top trigram {' → '.join(top['trigram'])} ({top['occurrence_share'][0]}/"
        f"{top['occurrence_share'][1]} trigram occurrences)"
        if top
        else ""
    )
    return f"{side.upper()}: endings: {terms}{trigram}"


def print_runs(rows: list[RunListing], fmt: str) -> None:
    from workbench.views.cells import dataset_cell, lineage_cell

    if fmt == "json":
        print_json(rows)
        return
    table = Table(title="runs", title_justify="left")
    for col in ("name", "agent / model", "family · tier", "data", "done", "acc", "cost", "status"):
        table.add_column(col, justify="right" if col in ("done", "acc", "cost") else "left")
    for r in rows:
        agent = r["agent"] + (f" {r['model']}" if r["model"] else "")
        if r["ablation"] != "full":
            agent += f" [{r['ablation']}]"
        cost = "unpriced" if r["cost_usd"] is None and r["model"] else usd(r["cost_usd"])
        cells = (
            r["name"],
            agent,
            lineage_cell(r.get("family"), r.get("tier")),
            dataset_cell(r["dataset"], r.get("dataset_repo"), r.get("dataset_revision")),
            f"{r['done']}/{r['planned']}",
            fraction(r["accuracy"]),
            cost,
            r["status"],
        )
        table.add_row(*map(Text, cells))
    console().print(table)


_Result = TypeVar("_Result", bound=Mapping[str, Any])  # a scaling result: a JSON document


def _printed_as_data(result: _Result, fmt: str, csv_table: Callable[[_Result], tuple]) -> bool:
    """Print a scaling result as JSON (strict: scaling outputs are plain Python by construction) or as the CSV
    `csv_table` lays out, and say so; False for the formats drawn as tables."""
    if fmt == "json":
        print_json(result, strict=True)
        return True
    if fmt == "csv":
        header, rows = csv_table(result)
        sys.stdout.write(_csv(rows, tuple(header)))
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
        sys.stdout.write(plateau_figure(result, 78, rows, TERMINAL_PALETTE if _color() else None, most) + "\n")


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
    return _cells_table(None, TRANSITION_COLUMNS, rows, left={0, 4})


def _print_levels(out: Console, result: Plateau) -> None:
    """The levels' table with its note (and the strategy's, if any)."""
    from workbench.views.scaling import LEVEL_COLUMNS, LEVELS_NOTE, level_cells, strategy_note

    title = f"levels · {result.get('axis')} axis, {result.get('protocol')}"
    left = {i for i, h in enumerate(LEVEL_COLUMNS) if i == 0 or h == "flag"}
    out.print(_cells_table(title, LEVEL_COLUMNS, map(level_cells, result["levels"]), left=left))
    out.print(LEVELS_NOTE, markup=False)
    note = strategy_note(result)
    if note:
        out.print(note, markup=False)


def _cells_table(
    title: str | None, columns: Sequence[str], rows: Iterable[Iterable[str]], left: Collection[int] = ()
) -> Table:
    """A table of text cells under a left-justified title: columns right-justified but those at `left`."""
    table = Table(title=None if title is None else Text(title), title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i in left else "right")
    for row in rows:
        table.add_row(*map(Text, row))
    return table


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
    sys.stdout.write(strategies_figure(comparison, 78, rows, TERMINAL_PALETTE if _color() else None, most) + "\n")


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
    out.print(_cells_table(title, parallel_columns(report), (parallel_cells(report, r) for r in report["per_k"])))
    costs_title = (
        "gap size and cost at k: rel = Δ / pass@k, eff = (strategy − pass@1)/(pass@k − pass@1); "
        "cost = k/K of the sampling + the verdicts a strategy needs"
    )
    out.print(_cells_table(costs_title, cost_columns(report), (cost_cells(report, r) for r in report["per_k"])))
    _print_parallel_notes(out, report)
    rows, most = figure_rows(18)
    sys.stdout.write(parallel_figure(report, 78, rows, TERMINAL_PALETTE if _color() else None, most) + "\n")
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
        sys.stdout.write(_csv(rows, tuple(header)))
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
        out.print(_cells_table("judges measured", JUDGE_COLUMNS, map(judge_cells, report["judges"]), left={0, 1}))
        out.print(JUDGE_NOTE, markup=False)
    rows = [r for r in report["per_k"] if "self_choice" in r]
    if rows:
        out.print(
            _cells_table(f"self-choice · judge {report['judge']}", SELF_CHOICE_COLUMNS, map(self_choice_cells, rows))
        )
    trials = report.get("judge_trials")
    if trials:
        _print_trials(out, trials)
    if len(report.get("judges") or []) > 0:
        height, most = figure_rows(14)
        palette = TERMINAL_PALETTE if _color() else None
        sys.stdout.write(judges_figure(report["judges"], 78, height, palette, most) + "\n")


def _print_trials(out: Console, trials: JudgeTrials) -> None:
    """The judges' agreement over repeated trials, and per k their spread (Table 6)."""
    from workbench.views.scaling import TRIAL_COLUMNS, agreement_text, trial_cells

    out.print(agreement_text(trials), markup=False)
    per_k = trials["per_k"]
    if per_k:
        title = f"over {trials['trials']} judge trials (Table 6)"
        out.print(_cells_table(title, TRIAL_COLUMNS, map(trial_cells, per_k)))


def print_items(view, rows: list, flt, fmt: str) -> None:
    """The item browser's list (workbench.service.items rows): the same columns and numbers as the TUI."""
    if fmt == "json":
        print_json(
            {
                "dataset": view.spec,
                "fingerprint": view.fingerprint,
                "runs": view.runs,
                "stale_runs": view.stale_runs,
                "filters": flt.active(),
                "n": len(rows),
                "total": len(view.rows),
                "items": [r.as_dict() for r in rows],
            }
        )
        return
    out = console()
    out.print(_items_table(view, rows, flt))
    if view.note():
        out.print(f"note: {view.note()}", markup=False)


ITEM_COLUMNS = ("item", "type", "depth", "reasoning", "tier", "venue", "right", "question")


def _items_table(view, rows: list, flt) -> Table:
    """The item list: one row per item, the question clipped to its column."""
    name = dataset_label(view.spec)
    filters = " · ".join(f"{k} {v}" for k, v in flt.active().items())
    table = Table(
        title=Text(
            f"{name} · {len(rows)} of {len(view.rows)} items · right out of {len(view.runs)} runs"
            + (f" · {filters}" if filters else "")
        ),
        title_justify="left",
    )
    for col in ITEM_COLUMNS:
        table.add_column(
            col,
            justify="right" if col in ("depth", "right") else "left",
            no_wrap=col != "question",
            max_width=70 if col == "question" else None,
        )
    for r in rows:
        table.add_row(*map(Text, _item_cells(r)))
    return table


def _item_cells(r) -> tuple[str, ...]:
    """An item's cells in `ITEM_COLUMNS` order."""
    question = " ".join(r.question.split())
    return (
        r.id,
        r.kind,
        str(r.depth),
        r.reasoning,
        r.tier,
        r.venue,
        r.right_text,
        question[:67] + "…" if len(question) > 68 else question,
    )


def print_item(detail: ItemDetail, tree: tuple[Any, list[str]], fmt: str) -> None:
    """One item: its fields, question and options (gold and distractor types shown), its tree (plain data from
    `neighbourhood.text_tree`, drawn here), its stored trajectories."""
    if fmt == "json":
        print_json(detail)
        return
    out = console()

    def say(line: str = "") -> None:
        out.print(Text(line))  # a Text: dataset text is never read as markup

    say(
        f"{detail['id']} · {detail['kind']} d{detail['depth']} · {detail['reasoning']} · {detail['tier']} · "
        f"{detail['venue']} · right {detail['right']}/{detail['ran']} runs ({detail['outcome']})"
    )
    say()
    say("Q " + " ".join(detail["question"].split()))
    for line in _option_lines(detail):
        say(line)
    nb = detail["neighbourhood"]
    say()
    say(
        f"neighbourhood: {nb['papers']} papers ({nb['full_text']} full text, {nb['metadata_only']} metadata-only), "
        f"{nb['citations']} citations · ● seed ◇ bridge ★ gold · full/meta = full text or metadata only"
    )
    from workbench.views.tree import plain_tree

    for drawn in plain_tree(*tree):  # rich renderables of Text: dataset text is never read as markup
        out.print(drawn)
    if detail.get("labels"):
        from workbench.service.items import label_line

        say()
        say("recall labels → the section each resolved to (rule):")
        for lab in detail["labels"]:
            say("  " + label_line(lab))
    say()
    trajectories = detail["trajectories"]
    if not trajectories:
        say("no stored trajectories on this item")
        return
    out.print(_item_trajectories(trajectories))


def _option_lines(detail: ItemDetail) -> list[str]:
    """The item's options, the gold one marked, each with its distractor type."""
    types, gold = detail["distractor_types"], detail["gold"]
    lines = []
    for i, option in enumerate(detail["options"]):
        letter = "ABCD"[i]
        kind = "gold" if letter == gold else (types[i] if i < len(types) else "distractor")
        lines.append(f"{'●' if letter == gold else ' '} ({letter}) {kind:<12} {' '.join(option.split())}")
    return lines


def _item_trajectories(trajectories: list[ItemTrajectory]) -> Table:
    """The stored trajectories of one item: run, who, replicate, answer, outcome, ending, resources, recall."""
    table = Table(title=Text(f"stored trajectories ({len(trajectories)})"), title_justify="left")
    for col in ("run", "agent / model", "rep", "answer", "correct", "ending", "points", "turns", "recall P/S"):
        table.add_column(col, justify="right" if col in ("rep", "points", "turns") else "left")
    for t in trajectories:
        recall = ("●" if t["paper_recall"] else "○") + " " + ("●" if t["section_recall"] else "○")
        agent = t["agent"] + ("" if t["ablation"] == "full" else f" [{t['ablation']}]")
        cells = (
            t["run"],
            agent,
            str(t["replicate"]),
            t["answer"] or "—",
            "✓" if t["correct"] else "✗",
            t["termination"] or "",
            str(t["points"]),
            str(t["turns"]),
            recall,
        )
        table.add_row(*map(Text, cells))
    return table


def print_merge(rows: list[dict[str, Any]], dest: str, fmt: str) -> None:
    """What `merge` did, per run: copied, already there, left out as unfinished; the run's state after it."""
    if fmt == "json":
        print_json({"store": dest, "runs": rows})
        return
    table = Table(title=f"merged into {dest}", title_justify="left")
    for col in ("run", "copied", "identical", "unfinished left out", "done", "status"):
        table.add_column(col, justify="left" if col in ("run", "status") else "right")
    for r in rows:
        name = r["name"] + (" (new)" if r["created"] else "")
        table.add_row(
            *map(
                Text,
                (
                    name,
                    str(r["copied"]),
                    str(r["identical"]),
                    str(r["partial_skipped"]),
                    f"{r['finished']}/{r['planned']}",
                    r["status"],
                ),
            )
        )
    console().print(table)


def print_estimate(est: Estimate, item_ids: list[str], llm: bool, fmt: str) -> None:
    """`--dry-run`: the estimate as JSON, or its lines."""
    from workbench.views.estimate import dry_run_text

    if fmt == "json":
        sys.stdout.write(json.dumps(est.to_json(), indent=2) + "\n")
        return
    sys.stdout.write(dry_run_text(est, item_ids, llm))
