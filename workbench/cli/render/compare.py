"""What `compare` prints: two runs on their common items, the separating axis, the attribution of wrong answers,
each side's endings."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import console, print_json
from workbench.service.records.compare import CompareReport
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
