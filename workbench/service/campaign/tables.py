"""A campaign's results: the panel over its runs (what `report --panel` gives on them) and each study's tables
(a sweep's plateau, or its strategies compared; a parallel study's pass@k and gaps, judged now), as data.

Only finished runs are read: a run the campaign left unfinished is named in `left_out`, and a study with an
unfinished run is left out whole (its plateau would silently drop the items it has not reached).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.service.campaign.plan import CampaignPlan
from workbench.service.campaign.status import RunState
from workbench.service.scaling import StudyPlan


@dataclass
class CampaignTables:
    """The panel (None with fewer than one finished run), each sweep's table and each parallel study's report, in
    the file's order; `left_out`: the runs not finished, so not in them."""

    panel: Any = None  # workbench.views.records.PanelReport
    plateaus: list[tuple[str, Any]] = field(default_factory=list)  # (group, Plateau)
    comparisons: list[tuple[str, Any]] = field(default_factory=list)  # (name, StrategyComparison)
    parallel: list[Any] = field(default_factory=list)  # ParallelReport
    left_out: list[str] = field(default_factory=list)


async def campaign_tables(
    store: Any,
    plan: CampaignPlan,
    states: list[RunState],
    corpus: Any,
    cache_dir: Path,
    judging: Callable[[str], Callable[[str, int, int], None] | None] = lambda _name: None,
) -> CampaignTables:
    """The campaign's tables from `store`; a parallel study's judge is asked what it was not asked yet (a model
    judge spends: `judging(run)` is its progress callback)."""
    from workbench.service import reports

    finished = {s.name for s in states if s.finished}
    tables = CampaignTables(left_out=[s.name for s in states if not s.finished])
    panel = [name for name in plan.panel_runs() if name in finished]
    if panel:
        tables.panel = reports.panel_report(store, panel, None, cache_dir=cache_dir)
    for study in plan.studies:
        if not all(spec.name in finished for spec in study.specs):
            continue
        if study.kind == "sequential":
            _sequential(store, study, tables)
        else:
            report = await _parallel(store, study, corpus, judging(study.name))
            if report is not None:
                tables.parallel.append(report)
    return tables


def _sequential(store: Any, study: StudyPlan, tables: CampaignTables) -> None:
    from workbench.service import scaling

    if len(study.groups) > 1:
        tables.comparisons.append((study.name, scaling.strategy_comparison(store, study.groups)))
    else:
        tables.plateaus.append((study.name, scaling.group_plateau(store, study.groups[0])))


async def _parallel(store: Any, study: StudyPlan, corpus: Any, progress: Any) -> Any:
    from workbench.service.scaling import parallel_report
    from workbench.service.scaling.studies import judge_of

    spec = study.specs[0]
    return await parallel_report(
        store,
        spec.name,
        corpus,
        study.ks,
        judge_of(study.judge, spec),
        n_orders=study.orders,
        seed=spec.seed,
        tie_rule=study.tie_rule,
        judge_trials=study.judge_trials,
        cost_mode=study.cost_mode,
        progress=progress,
    )
