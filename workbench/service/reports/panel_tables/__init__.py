"""The paper's further panel tables and figures (AgentHop §4, App. E), computed with the panel in one call.

Each is over the panel's common items (as Table 2), each run's trajectories there, all replicates unless said. One
module per family of tables: `behaviour` (the action-based Tables 3, 9 and 14, early submission), `outcomes` (Table
10's type × depth grid, Table 15's non-answers, Figure 5), `difficulty` (Figure 4, the item-total summary),
`significance` (the paired column test; Table 12 and our pairwise accuracy tests; the paper's Table 13 is the
bigram panel, given by the panel), `stability` (Table 17), `ablation` (Table 4),
`generations` (Figure 2), `contact` (Table 11), `strata` (Table 19); `grouping` holds how they group runs, `legend`
their words. Tables 11, 17 across stored runs and 19 need the store or the dataset: the panel calls them itself.
"""

from __future__ import annotations

from stats.axes import Table
from workbench.service.records.panel import PanelBigram, PanelRow, PanelTables
from workbench.service.reports.panel_tables.ablation import table4
from workbench.service.reports.panel_tables.behaviour import (
    RunBehaviour,
    early_submission,
    table3_entry,
    table9,
    table14,
)
from workbench.service.reports.panel_tables.difficulty import figure4, itc_summary
from workbench.service.reports.panel_tables.generations import figure2
from workbench.service.reports.panel_tables.outcomes import figure5, table10, table15
from workbench.service.reports.panel_tables.significance import ItemTerms, pairwise_accuracy, table12
from workbench.service.reports.panel_tables.stability import table17


def panel_tables(
    rows: list[PanelRow],
    tables: list[Table],
    behaviours: list[RunBehaviour],
    itc: dict[str, float | None] | None,
    per_item: dict[str, dict[str, ItemTerms]],
    pool: list[bool],
    bigrams: list[PanelBigram],
) -> PanelTables:
    """Every further table and figure of the panel; `tables` are each run's trajectories on the common items,
    `behaviours` their `run_behaviour`, `per_item` each run's per-item column terms, `pool` which rows are
    evaluated models (full-tool runs: Figures 4 and 5, the early-submission mean, Tables 12–14), in `rows`
    order, and `bigrams` the evaluated models' bigram panel (Table 13). Tables 4, 11 and 19 read the ablation
    runs as ablations of their model."""
    models = [(r, t, b) for r, t, b, keep in zip(rows, tables, behaviours, pool, strict=True) if keep]
    m_rows, m_tables, m_behaviours = [m[0] for m in models], [m[1] for m in models], [m[2] for m in models]
    return {
        "table3": [table3_entry(r, b.table3) for r, b in zip(rows, behaviours, strict=True)],
        "table17": table17(rows, tables),
        "figure2": figure2(m_rows, m_tables),
        "table4": table4(rows, tables),
        "table9": table9(rows, behaviours),
        "table10": table10(rows, tables),
        "table12": table12(m_rows, per_item),
        "table13": bigrams,
        "pairwise_accuracy": pairwise_accuracy(m_rows, per_item),
        "table14": table14(m_rows, m_behaviours),
        "table15": table15(rows, tables),
        "early_submit": early_submission(m_rows, m_behaviours),
        "item_total_summary": itc_summary(itc),
        "figure5": figure5(m_rows, m_tables),
        "figure4": figure4(m_rows, m_tables),
    }
