"""Test-time scaling: the sequential budget grid with its plateau, and parallel sampling with its verification gap.

The runs go through the one runner (one run per budget level, grouped; one run with K replicates for parallel
sampling); the numbers come from `stats.plateau` and `stats.parallel`. One module per concern: `sequential`,
`scorefiles` (a study measured elsewhere), `parallel`, `parallel_scores` and `imported` (a parallel study
measured elsewhere), `readings` (the study's own readings), `parallel_records` (what a parallel study returns),
`judging`; their public names are re-exported here (`results`, a stored source's result as a screen reads it, is
imported by its own path). The
tables and figures are drawn in `workbench.views.scaling` and `workbench.views.figures`.
"""

from __future__ import annotations

from workbench.service.scaling.imported import file_parallel, imported_study
from workbench.service.scaling.judging import (
    is_stored_judge,
    judge_run,
    make_judge,
    recorded_judge,
    stored_only,
    subsets,
)
from workbench.service.scaling.parallel import (
    TIE_RULE,
    parallel_report,
    parallel_samples,
    parallel_study,
    parse_ks,
    vote_key,
)
from workbench.service.scaling.parallel_records import ParallelStudy
from workbench.service.scaling.parallel_scores import ScoredStudy, ScoredTask, load_parallel_scores
from workbench.service.scaling.scorefiles import file_plateau, load_scores
from workbench.service.scaling.sequential import (
    AXES,
    UNBOUNDED_TOKENS,
    ScalingInputError,
    check_group,
    group_designs,
    group_levels,
    group_plateau,
    group_scores,
    measures_tokens,
    parse_grid,
    plateau_result,
    sequential_group,
    sequential_specs,
    strategy_of,
    use_two_stage,
)
from workbench.service.scaling.strategies import (
    COMPARISON_RULE,
    check_verifier,
    strategy_comparison,
    strategy_groups,
    strategy_studies,
)
from workbench.service.scaling.studies import StudyPlan, StudyRequest, check_plan, judge_study, plan_study
from workbench.service.scaling.tools import parse_counts, parse_details, tools_group, tools_report, tools_specs

__all__ = [
    "AXES",
    "COMPARISON_RULE",
    "TIE_RULE",
    "UNBOUNDED_TOKENS",
    "ParallelStudy",
    "ScalingInputError",
    "ScoredStudy",
    "ScoredTask",
    "StudyPlan",
    "StudyRequest",
    "check_group",
    "check_plan",
    "check_verifier",
    "file_parallel",
    "file_plateau",
    "group_designs",
    "group_levels",
    "group_plateau",
    "group_scores",
    "imported_study",
    "is_stored_judge",
    "judge_run",
    "judge_study",
    "load_parallel_scores",
    "load_scores",
    "make_judge",
    "measures_tokens",
    "parallel_report",
    "parallel_samples",
    "parallel_study",
    "parse_counts",
    "parse_details",
    "parse_grid",
    "parse_ks",
    "plan_study",
    "plateau_result",
    "recorded_judge",
    "sequential_group",
    "sequential_specs",
    "stored_only",
    "strategy_comparison",
    "strategy_groups",
    "strategy_of",
    "strategy_studies",
    "subsets",
    "tools_group",
    "tools_report",
    "tools_specs",
    "use_two_stage",
    "vote_key",
]
