"""A stored scaling result read for a front end that shows it, each on a store connection of its own (the TUI's
Scaling screen computes them in a thread worker, so the UI never blocks): a group's plateau, a comparison of
strategies, a registry-size table, a parallel run read as it was recorded, a study of an imported scores file.

Each is the same result the CLI's `scale` command prints for it: the functions below only open the store, read the
run's recorded settings and call the one function the CLI calls.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from workbench.service.stores import open_store_to_read

if TYPE_CHECKING:
    from workbench.service.records.parallel import ParallelReport
    from workbench.service.records.sequential import Plateau, StrategyComparison, ToolsReport
    from workbench.service.scaling.parallel_scores import ScoredStudy


class PlateauOptions(TypedDict, total=False):
    """How a plateau is read (`scale plateau`'s flags; a key left out keeps its default) and whether only a sweep's
    finished levels are read (a sweep still filling in)."""

    population: int | None
    alpha: float
    correction: str
    n_boot: int
    seed: int
    two_stage: bool | None
    finished_only: bool


def compute_plateau(store_path: Path, group: str, options: PlateauOptions) -> Plateau:
    """The same result `scale plateau --group` prints (with the per-level costs), on its own store connection."""
    from workbench.service.scaling.sequential import group_plateau

    store = open_store_to_read(store_path)
    try:
        result = group_plateau(store, group, **options)
    finally:
        store.close()
    result["group"] = group
    return result


def compute_strategies(store_path: Path, groups: tuple[str, ...], options: PlateauOptions) -> StrategyComparison:
    """The comparison `scale strategies --group …` prints, on its own store connection."""
    from workbench.service.scaling.strategies import strategy_comparison

    store = open_store_to_read(store_path)
    try:
        return strategy_comparison(store, list(groups), **options)
    finally:
        store.close()


def compute_tools(store_path: Path, group: str) -> ToolsReport:
    """The registry-size table `scale tools` prints for a group, on its own store connection."""
    from workbench.service.scaling.tools import tools_report

    store = open_store_to_read(store_path)
    try:
        return tools_report(store, group)
    finally:
        store.close()


def compute_parallel(
    store_path: Path,
    open_corpus: Callable[[str], Any],
    run_name: str,
    ks: list[int] | None = None,
    judge: Any = None,
    n_orders: int | None = None,
) -> ParallelReport:
    """`scale parallel`'s report for a stored run, read as it was recorded: its k, its judge, its pairwise orders.

    An offline judge may fill in verdicts it lacks (free); a model judge is read from the store
    only, never asked (`verdicts="stored"`): looking at a result must not spend money.
    """
    from workbench.service.scaling.judging import is_stored_judge, recorded_judge
    from workbench.service.scaling.parallel import parallel_report

    store = open_store_to_read(store_path)
    try:
        run = store.run(run_name)
        corpus = open_corpus(run["dataset"])
        recorded = (run.get("config") or {}).get("scaling") or {}
        ks = ks or recorded.get("ks") or default_ks(run["replicates"])
        judge = judge if judge is not None else recorded_judge(run)
        verdicts = "stored" if is_stored_judge(judge) else "ask"
        return asyncio.run(
            parallel_report(
                store,
                run_name,
                corpus,
                ks,
                judge,
                seed=run["seed"],
                verdicts=verdicts,
                **recorded_reading(recorded, n_orders),
            )
        )
    finally:
        store.close()


def default_ks(big_k: int) -> list[int]:
    """Powers of two up to K, and K itself: the k a parallel run is read at when nobody says otherwise."""
    ks, k = [], 1
    while k <= big_k:
        ks.append(k)
        k *= 2
    return sorted(set(ks) | {max(1, big_k)})


class ParallelReading(TypedDict):
    """How a parallel run is read: pairwise orders, the tie rule, the judge's trials and the cost mode."""

    n_orders: int
    tie_rule: str
    judge_trials: int
    cost_mode: str


def recorded_reading(recorded: dict[str, Any], n_orders: int | None) -> ParallelReading:
    """The reading a parallel run recorded (its config's `scaling`), the defaults for what it left out; `n_orders`
    when given wins over the recorded orders."""
    return {
        "n_orders": n_orders or recorded.get("orders") or 8,
        "tie_rule": recorded.get("tie_rule") or "split",
        "judge_trials": recorded.get("judge_trials") or 1,
        "cost_mode": recorded.get("cost_mode") or "cache-aware",
    }


def compute_imported(study: ScoredStudy, path: str, seed: int = 0) -> ParallelReport:
    """`scale parallel --scores`'s report for one study of a scores file (read when it was imported)."""
    from workbench.service.scaling.imported import imported_study

    return imported_study(study, None, seed, path).to_json()
