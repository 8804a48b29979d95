"""The Panel screen's model: Table 2 as one table of group label rows and runs, the title's marks, the tool lifts'
lines, the saved panels the picker offers, and the checks of the run picker and the export dialog.

Every number is `workbench.service.reports.panel_report`'s (read off the UI thread by `panel_at`) and every cell the
views' (`lineage`): what `--batch report --panel` prints. The views are
imported inside the functions that use them, so this module, which the screen's module imports, stays light to
import. Text here is unsanitised: the screen makes it safe to show.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.service.records.panel import PanelReport
from workbench.tui.forms.export_files import missing_directory

GROUP_INDENT = "  "  # before a run's name under its group's label row in Table 2


def table2_rows(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Table 2 as one table: each group's label row (tier · family), then its runs (their names indented)."""
    from workbench.views.lineage import grouped_table

    header, sections = grouped_table(panel)
    rows: list[tuple[str, ...]] = []
    for label, cells in sections:
        rows.append((label, *([""] * (len(header) - 1))))
        rows.extend(tuple([GROUP_INDENT + cells_row[0], *cells_row[1:]]) for cells_row in cells)
    return header, rows


def title_marks(panel: PanelReport) -> str:
    """What the title adds of Table 2's marks: the tier leader's † and the separated conversion's ‡, when any."""
    leader = " · † tier leader" if any((panel.get("tier_best") or {}).values()) else ""
    shaded = " · ‡ conversion separated in its tier" if any((panel.get("tier_shaded") or {}).values()) else ""
    return leader + shaded


def lift_lines(panel: PanelReport) -> list[str]:
    """The Statistics tab's tool lifts: `tool lift full vs closed-book: +12.5 pts`, each measured one."""
    return [
        f"tool lift {x['full']} vs {x['closed_book']}: {x['lift'] * 100:+.1f} pts"
        for x in panel.get("ablation_lift", [])
        if x["lift"] is not None
    ]


def offered_panels(saved: Mapping[str, Sequence[str]], names: Sequence[str]) -> dict[str, list[str]]:
    """The saved panels the picker offers, each with its runs still in the store (`names`): two at least, or it is
    not offered."""
    kept = {key: [n for n in runs if n in names] for key, runs in saved.items()}
    return {key: runs for key, runs in kept.items() if len(runs) >= 2}


def picked_runs(names: Sequence[str], selected: Sequence[str]) -> list[str]:
    """The runs marked in the picker, in the store's order."""
    return [n for n in names if n in selected]


def pick_problem(picked: Sequence[str]) -> str | None:
    """Why the picked runs make no panel, or None."""
    return "mark at least two runs" if len(picked) < 2 else None


def export_problem(value: str) -> str | None:
    """Why the export file `value` cannot be written, beyond the export dialog's own checks: its directory must exist
    (the CLI refuses a missing one too), so a typo in it is never created."""
    return missing_directory(value)
