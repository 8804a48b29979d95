"""Table 2 as the paper reads it, as text cells: the runs grouped by tier and family, with the best (*), tier
leader (†) and shaded conversion (‡) marks, and beside them the paired test behind each mark.

Shared by `report --panel` (table, Markdown) and the TUI's Panel screen, so both print the same cells."""

from __future__ import annotations

from workbench.service.records.columns import PANEL_COLUMNS
from workbench.service.records.panel import LineageGroup, PanelReport, PanelRow, cell
from workbench.views.cells import NOT_MEASURED, num, pct, sig

BEST_MARK, TIER_MARK, SHADE_MARK = " *", " †", " ‡"
TIER_LABELS = {
    "closed-frontier": "Closed Frontier",
    "open-frontier": "Open Frontier",
    "compute-efficient": "Compute-Efficient",
}  # the paper's names of workbench.service.families.TIERS
MEAN_LIKE = ("calls/turn", "tokens", "turns", "points")


def section_label(group: LineageGroup) -> str:
    """`Closed Frontier · GPT`; `untiered · no family` for runs nobody tagged and no model names."""
    tier = TIER_LABELS.get(group["tier"], "untiered") if group["tier"] else "untiered"
    return f"{tier} · {group['family'] or 'no family'}"


def run_cells(panel: PanelReport, row: PanelRow) -> tuple[str, ...]:
    """One run's Table 2 cells with * (panel best) and † (tier leader) as they stand, ‡ where a tier leader's
    conversion cell is separated from the tier's runner-up by the paired test (the paper's shading)."""
    tier = row.get("tier") or ""
    marks = (
        (panel["best"], BEST_MARK),
        ((panel.get("tier_best") or {}).get(tier, {}), TIER_MARK),
        ((panel.get("tier_shaded") or {}).get(tier, {}), SHADE_MARK),
    )
    cells = [_run_cell(row, col, marks) for col, _ in PANEL_COLUMNS]
    name = row["run"] if row.get("ablation", "full") == "full" else f"{row['run']} [{row['ablation']}]"
    return (name, *cells)


def _run_cell(row: PanelRow, col: str, marks: tuple[tuple[dict[str, list[str]], str], ...]) -> str:
    """One Table 2 cell of a run with each mark (*, †, ‡) whose column lists the run, in that order."""
    v = cell(row, col)
    text = num(v, 0 if col == "tokens" else 2) if col in MEAN_LIKE else pct(v)
    return text + "".join(mark for marked, mark in marks if row["run"] in marked.get(col, ()))


def grouped_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, list[tuple[str, ...]]]]]:
    """(header, [(section label, rows)]) in the panel's lineage order (tier, family, accuracy)."""
    by_run = {r["run"]: r for r in panel["rows"]}
    header = ("run", *(c for c, _ in PANEL_COLUMNS))
    groups = panel.get("lineage") or [{"tier": None, "family": None, "runs": list(by_run)}]
    return header, [(section_label(g), [run_cells(panel, by_run[name]) for name in g["runs"]]) for g in groups]


def best_test_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Beside the marks: per column, the best run(s), the runner-up, the paired test and whether it separates
    them (the panel's, then each tier's)."""
    header = ("scope", "column", "best", "runner-up", "test", "n", "p", "separated")
    rows: list[tuple[str, ...]] = []
    scopes = [("panel", panel.get("best_tests") or {})] + [
        (TIER_LABELS.get(tier, tier), tests) for tier, tests in (panel.get("tier_best_tests") or {}).items()
    ]
    for scope, tests in scopes:
        for col, t in tests.items():
            rows.append(
                (
                    scope,
                    col,
                    ", ".join(t["best"]),
                    ", ".join(t["runner_up"]),
                    t.get("test") or t.get("reason") or NOT_MEASURED,
                    str(t.get("n", NOT_MEASURED)),
                    sig(t["p"]) if t.get("p") is not None else NOT_MEASURED,
                    "yes" if t["separated"] else "no",
                )
            )
    return header, rows
