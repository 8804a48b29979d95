"""The one place where store queries meet `stats`: the CLI and the TUI both call this, so they show the same
numbers. One module per report: `run` (a run's report and diagnostics), `panel` (several runs, the paper's
Table 2), `compare` (two runs item by item), `leaderboard`. Their public names are re-exported here, so
`from workbench.service.reports import compare_report` reads as before."""

from __future__ import annotations

from workbench.service.records.columns import COLUMN_TERMS, PANEL_COLUMNS, PANEL_GROUPS
from workbench.service.reports.compare import (
    CONVERSION_SET,
    SEPARATES,
    adjust_comparison,
    compare_at,
    compare_report,
    paired_outcomes,
    separation,
    tool_use,
)

# the general-agent setting's blocks added to the reports of its runs: these three wrap the plain ones of `panel` and
# `run`, so the package hands on the wrappers, never the plain ones
from workbench.service.reports.general import diagnostics, panel_at, panel_report, run_diagnostics
from workbench.service.reports.leaderboard import MIN_COVERAGE, leaderboard
from workbench.service.reports.panel import (
    PAIRED_BY_ID,
    PANEL_LEGEND,
    RESOURCE_COLUMNS,
    PanelInputError,
    ablation_lift,
    dataset_warnings,
    item_matrix,
    marked_best,
    per_item_terms,
    replicate_spread,
    resolution_warnings,
    significant_best,
)
from workbench.service.reports.panel_tables.significance import LOWER_IS_BETTER, MEAN_COLUMNS
from workbench.service.reports.run import (
    LEGEND,
    PERCENT_KEYS,
    PROPORTION_TERMS,
    REPORT_FIELDS,
    analytics,
    counts,
    estimates_tokens,
    intervals,
    is_proportion,
    label_resolution,
    legend,
    load_table,
    measures_tokens,
    position_bias,
    report_of,
    run_report,
    section_labels,
    split_ratios,
    transition_layout,
    transition_report,
    transitions_of,
    values,
)

__all__ = [
    "COLUMN_TERMS",
    "CONVERSION_SET",
    "LEGEND",
    "LOWER_IS_BETTER",
    "MEAN_COLUMNS",
    "MIN_COVERAGE",
    "PAIRED_BY_ID",
    "PANEL_COLUMNS",
    "PANEL_GROUPS",
    "PANEL_LEGEND",
    "PERCENT_KEYS",
    "PROPORTION_TERMS",
    "REPORT_FIELDS",
    "RESOURCE_COLUMNS",
    "SEPARATES",
    "PanelInputError",
    "ablation_lift",
    "adjust_comparison",
    "analytics",
    "compare_at",
    "compare_report",
    "counts",
    "dataset_warnings",
    "diagnostics",
    "estimates_tokens",
    "intervals",
    "is_proportion",
    "item_matrix",
    "label_resolution",
    "leaderboard",
    "legend",
    "load_table",
    "marked_best",
    "measures_tokens",
    "paired_outcomes",
    "panel_at",
    "panel_report",
    "per_item_terms",
    "position_bias",
    "replicate_spread",
    "report_of",
    "resolution_warnings",
    "run_diagnostics",
    "run_report",
    "section_labels",
    "separation",
    "significant_best",
    "split_ratios",
    "tool_use",
    "transition_layout",
    "transition_report",
    "transitions_of",
    "values",
]
