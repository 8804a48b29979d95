"""The panel as one document: JSON, the tidy CSV or Markdown (warnings, Table 2 grouped, the statistics, every
further table, the notes and the legend). `report --panel --format` prints it and the TUI's Panel screen
exports it, so both are one text."""

from __future__ import annotations

from workbench.service.records.panel import PanelReport
from workbench.views.fingerprints import fingerprint_notes, titled_tables, trigram_lines
from workbench.views.lineage import grouped_table
from workbench.views.markdown import markdown_table
from workbench.views.panel_tables import EMPTY, extra_lines, extra_tables

EXPORT_FORMATS = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown"}


def panel_document(panel: PanelReport, fmt: str) -> str:
    """The panel as a file's text in `fmt` (json, csv, markdown): exactly what `report --panel --format fmt`
    prints, so the TUI's export and the CLI's output are one text."""
    import csv
    import io
    import json

    from workbench.views.panel import PANEL_TIDY_HEADER, tidy_all_rows
    from workbench.views.report import legend_lines

    if fmt == "json":
        return json.dumps(panel, indent=2, sort_keys=False, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(PANEL_TIDY_HEADER)
        writer.writerows(tidy_all_rows(panel))
        return buf.getvalue()
    if fmt == "markdown":
        legend = legend_lines(panel.get("legend"))
        return panel_markdown(panel) + "".join(f"\n- {line}" for line in legend) + ("\n" if legend else "")
    raise ValueError(f"unknown panel format '{fmt}' (json, csv, markdown)")


def panel_markdown(panel: PanelReport) -> str:
    """The whole panel as Markdown: warnings, Table 2 grouped, the statistics lines, every further table, the
    trigram lines (the legend is added by the caller)."""
    from workbench.views.panel import bigram_panel_line, panel_stat_lines, panel_title

    parts = [f"> warning: {w}\n\n" for w in panel.get("warnings", [])]
    parts.append(f"**{panel_title(panel, len(panel['rows']))}**\n\n" + grouped_markdown(panel))
    stats = [*panel_stat_lines(panel), bigram_panel_line(panel)]
    parts.append("".join(f"\n{line}\n" for line in stats if line))
    for title, (header, rows) in titled_tables(panel) + extra_tables(panel):
        parts.append(f"\n**{title}**\n\n" + (markdown_table(header, rows) if rows else f"{EMPTY}\n"))
    notes = trigram_lines(panel) + fingerprint_notes(panel) + extra_lines(panel)
    parts.append("".join(f"\n- {line}" for line in notes) + ("\n" if notes else ""))
    return "".join(parts)


def grouped_markdown(panel: PanelReport) -> str:
    """Table 2 grouped as one Markdown table, each group opened by a bold row naming tier and family."""
    header, sections = grouped_table(panel)
    rows: list[tuple[str, ...]] = []
    for label, cells in sections:
        rows.append((f"**{label}**", *([""] * (len(header) - 1))))
        rows.extend(cells)
    return markdown_table(header, rows)
