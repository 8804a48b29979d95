"""What `report --panel` prints: Table 2 grouped by tier and family, the panel's statistics, the fingerprints
and the paper's further tables and figures (the TUI's Panel screen shows the same cells)."""

from __future__ import annotations

import sys
from typing import Any

from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import console
from workbench.cli.render.scaling import registry_table
from workbench.service.records.panel import PanelReport
from workbench.views.panel import bigram_panel_line, panel_cells, panel_stat_lines, panel_title
from workbench.views.report import legend_lines


def print_panel(panel: PanelReport, fmt: str) -> None:
    from workbench.views.panel_document import panel_document

    if fmt in ("json", "csv", "markdown"):  # the very text the TUI's Panel screen exports
        sys.stdout.write(panel_document(panel, fmt))
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
        out.print(registry_table(panel["registry"]))
    _print_fingerprints(out, panel)
    for line in legend_lines(panel.get("legend")):
        out.print(line, markup=False, style="dim")


def _panel_table(panel: PanelReport) -> Table:
    """Table 2: the runs by tier and family, each column under its group, the marks named in the title."""
    from workbench.views.lineage import grouped_table

    header, rows = panel_cells(panel)
    table = Table(title=_panel_heading(panel, len(rows)), title_justify="left")
    first = {g["columns"][0]: g["group"] for g in panel.get("groups", []) if g["group"]}
    for i, col in enumerate(header):
        # the run / group label never wraps: a tier · family label split over two lines reads as two groups
        table.add_column(f"{first.get(col, '')}\n{col}", justify="left" if i == 0 else "right", no_wrap=i == 0)
    _, sections = grouped_table(panel)
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


def _print_fingerprints(out: Any, panel: PanelReport) -> None:
    """The fingerprint tables (per run and family, and the family tests), the top trigrams per family, and the
    panel's further tables and figures (`workbench.views.fingerprints`, `panel_tables`, `panel_figures`)."""
    from workbench.views import fingerprints, panel_tables
    from workbench.views.panel_figures import figures_text

    for title, (header, rows) in fingerprints.titled_tables(panel) + panel_tables.extra_tables(panel):
        if not rows:
            out.print(f"{title}: {panel_tables.EMPTY}", markup=False)
            continue
        table = Table(title=title, title_justify="left")
        for i, col in enumerate(header):
            table.add_column(col, justify="left" if i == 0 else "right")
        for row in rows:
            table.add_row(*map(Text, row))
        out.print(table)
    for line in (
        fingerprints.trigram_lines(panel) + fingerprints.fingerprint_notes(panel) + panel_tables.extra_lines(panel)
    ):
        out.print(line, markup=False)
    figures = figures_text(panel, width=min(out.width, 100) - 2, height=max(12, min(out.height, 40) // 2))
    if figures:
        out.print(Text(figures))
