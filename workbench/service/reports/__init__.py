"""The one place where store queries meet `stats`: the CLI and the TUI both call this, so they show the same
numbers. One module per report: `run` (a run's report and diagnostics), `panel` (several runs, the paper's
Table 2), `compare` (two runs item by item), `leaderboard`. Their public names are re-exported here, so
`from workbench.service.reports import compare_report` reads as before."""
from __future__ import annotations

from workbench.views.columns import COLUMN_TERMS, PANEL_COLUMNS, PANEL_GROUPS
from workbench.service.reports.run import (PERCENT_KEYS, REPORT_FIELDS, values, counts, load_table, run_report, split_ratios,
    measures_tokens, estimates_tokens, report_of, label_resolution, section_labels, LEGEND, legend, position_bias,
    analytics, PROPORTION_TERMS, is_proportion, intervals, diagnostics, transition_report, transitions_of,
    transition_layout, run_diagnostics)
from workbench.service.reports.panel import (PAIRED_BY_ID, LOWER_IS_BETTER, MEAN_COLUMNS,
    RESOURCE_COLUMNS, PANEL_LEGEND, item_matrix, replicate_spread, dataset_warnings, resolution_warnings,
    panel_report, per_item_terms, significant_best, ablation_lift)
from workbench.service.reports.compare import (paired_outcomes, tool_use, CONVERSION_SET, compare_report, adjust_comparison,
    SEPARATES, separation)
from workbench.service.reports.leaderboard import (MIN_COVERAGE, leaderboard)
# the general-agent setting's blocks added to the reports of its runs (these three wrap the plain ones above)
from workbench.service.reports.general import diagnostics, run_diagnostics, panel_report, panel_at  # noqa: F811
