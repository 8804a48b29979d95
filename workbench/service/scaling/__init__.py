"""Test-time scaling: the sequential budget grid with its plateau, and parallel sampling with its verification gap.

The runs go through the one runner (one run per budget level, grouped; one run with K replicates for parallel
sampling); the numbers come from `stats.plateau` and `stats.parallel`. One module per concern: `sequential`,
`scorefiles` (a study measured elsewhere), `parallel`, `judging`; their public names are re-exported here. The
tables and figures are drawn in `workbench.views.scaling` and `workbench.views.figures`.
"""
from __future__ import annotations

from workbench.service.scaling.sequential import (AXES, UNBOUNDED_TOKENS, ScalingInputError, parse_grid, sequential_specs,
    group_designs, check_group, sequential_group, group_scores, use_two_stage, plateau_result, group_plateau,
    group_levels, measures_tokens, strategy_of)
from workbench.service.scaling.strategies import (check_verifier, strategy_groups, strategy_studies, strategy_comparison,
    COMPARISON_RULE)
from workbench.service.scaling.scorefiles import (load_scores, file_plateau)
from workbench.service.scaling.judging import (subsets, judge_run, recorded_judge, make_judge, is_stored_judge)
from workbench.service.scaling.parallel import (parallel_samples, vote_key, parallel_report, TIE_RULE, parse_ks)
from workbench.service.scaling.studies import (StudyRequest, StudyPlan, plan_study, check_plan, judge_study)
from workbench.service.scaling.tools import (parse_counts, parse_details, tools_specs, tools_group, tools_report)
