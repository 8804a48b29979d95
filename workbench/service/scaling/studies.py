"""A scaling study as a front end launches it: a sequential sweep (axis, grid, strategies, verifier) or a parallel
study (k, judge, trials), checked and turned into the runs to execute in order, then (parallel) judged.

The CLI's `scale sequential` / `scale parallel` and the TUI's Scaling screen ask for the same runs: the specs come
from `launch.run_spec` and `sequential_specs`, the groups from `strategy_groups`, so a study launched in the TUI
resumes from the CLI and the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from workbench.service.launch import LaunchRequest, run_spec
from workbench.service.records.parallel import ParallelReport
from workbench.service.records.sequential import StrategyName
from workbench.service.scaling.sequential import (
    ScalingInputError,
    axis_of,
    check_group,
    parse_grid,
    sequential_specs,
)
from workbench.service.scaling.strategies import check_verifier, parse_strategies, strategy_groups

KINDS = ("sequential", "parallel")


@dataclass(frozen=True)
class StudyRequest:
    """What a person chose for a study, as text where a form has text (parsed and checked by `plan_study`)."""

    kind: str
    launch: LaunchRequest
    axis: str = "tokens"
    grid: str = ""
    strategies: str = ""  # "", or continue|summarize|verifier, comma-separated
    verifier: str | None = None
    ks: str = "1,2,4"
    judge: str = "evidence"
    judge_trials: int = 1
    orders: int = 8  # pairwise orders; 1: the samples' own (the study's)
    tie_rule: str = "split"  # majority ties: split evenly (ours) or the earliest sample's (the study's)
    cost_mode: str = "cache-aware"  # how the study's report prices the calls (`costs.COST_MODES`)
    verifier_base_url: str | None = None  # an OpenAI-compatible server for a model verifier


@dataclass
class StudyPlan:
    """The runs of a study in the order they run; `groups` are the sequential groups (one per strategy)."""

    kind: str
    name: str
    specs: list[Any]
    groups: list[str] = field(default_factory=list)
    ks: list[int] = field(default_factory=list)
    judge: str = "none"
    judge_trials: int = 1
    orders: int = 8
    tie_rule: str = "split"
    cost_mode: str = "cache-aware"
    note: str | None = None  # what to say as it launches (`identical_samples_note`)


def identical_samples_note(spec: Any) -> str | None:
    """What a parallel study of `spec` (K = its replicates) must be told before it runs when its samples of an
    item cannot differ, or hardly: the oracle draws nothing, an LLM at temperature 0 answers alike, the heuristic's
    draws only break ties. Its pass@k and every strategy then sit on pass@1 (a flat plot). The paper samples a model
    at a temperature above 0: the samples are left as the agent makes them, and this says so instead. None when the
    samples differ."""
    k = spec.replicates
    if spec.agent == "oracle":
        why = f"the oracle agent is deterministic: its {k} samples of an item are identical"
    elif spec.agent == "heuristic":
        why = f"the heuristic agent's draws only break ties: most of its {k} samples of an item are identical"
    elif spec.agent == "llm" and (spec.agent_options or {}).get("temperature") == 0:
        why = f"temperature 0: the model's {k} samples of an item are (nearly) identical"
    else:
        return None
    return (
        f"{why}, so pass@k and every strategy stay near pass@1 (a flat plot); sample a model at a temperature "
        "above 0, as the paper does, or the random agent, to see k at work"
    )


def plan_study(request: StudyRequest) -> StudyPlan:
    """The study's runs, or ScalingInputError / LaunchError saying what to fix; nothing is written."""
    _check_words(request)
    if request.kind == "parallel":
        return _plan_parallel(request)
    axis = axis_of(request.axis)
    grid = parse_grid(request.grid, axis)
    names = parse_strategies(request.strategies)
    wanted: list[StrategyName | None] = [*names] or [None]  # none: the plain rule, one group
    _check_verifier_options(request, names)
    base = run_spec(request.launch)
    if request.verifier_base_url:
        base = replace(base, verifier_options={"base_url": request.verifier_base_url})
    specs, groups = [], []
    for group, strategy in strategy_groups(base.name, wanted):
        specs += sequential_specs(
            replace(base, name=group),
            axis,
            grid,
            "fresh",
            strategy,
            (request.verifier or "evidence") if strategy == "verifier" else None,
        )
        groups.append(group)
    return StudyPlan("sequential", base.name, specs, groups, cost_mode=request.cost_mode)


def _check_words(request: StudyRequest) -> None:
    """The request's kind, cost mode and tie rule are among the words each allows."""
    from workbench.service.scaling.costs import COST_MODES
    from workbench.service.scaling.parallel import TIE_RULES

    if request.kind not in KINDS:
        raise ScalingInputError(f"a study is {' or '.join(KINDS)}, not {request.kind!r}")
    if request.cost_mode not in COST_MODES:
        raise ScalingInputError(f"cost mode: choose from {', '.join(COST_MODES)}, not {request.cost_mode!r}")
    if request.tie_rule not in TIE_RULES:
        raise ScalingInputError(f"tie rule: choose from {', '.join(TIE_RULES)}, not {request.tie_rule!r}")


def _check_verifier_options(request: StudyRequest, names: list[StrategyName]) -> None:
    """A verifier, or its base URL, only with the verifier strategy; the verifier itself usable as given."""
    if request.verifier and "verifier" not in names:
        raise ScalingInputError("a verifier is for the verifier strategy")
    if request.verifier_base_url and "verifier" not in names:
        raise ScalingInputError("a verifier base URL is for the verifier strategy")
    check_verifier(request.verifier or "evidence", request.verifier_base_url)


def _plan_parallel(request: StudyRequest) -> StudyPlan:
    from workbench.service.scaling.parallel import parse_ks

    ks = parse_ks(request.ks)
    if request.judge_trials < 1:
        raise ScalingInputError("judge trials must be at least 1")
    if request.orders < 1:
        raise ScalingInputError("--orders must be at least 1")
    spec = run_spec(request.launch)
    spec = replace(
        spec,
        replicates=max(ks),
        kind="parallel",
        scaling={
            "mode": "parallel",
            "ks": ks,
            "judge": request.judge,
            "orders": request.orders,
            "tie_rule": request.tie_rule,
            "judge_trials": request.judge_trials,
            "cost_mode": request.cost_mode,
        },
    )
    judge_of(request.judge, spec)  # a model judge that cannot be reached is refused before anything runs
    return StudyPlan(
        "parallel",
        spec.name,
        [spec],
        [],
        ks,
        request.judge,
        request.judge_trials,
        orders=request.orders,
        tie_rule=request.tie_rule,
        cost_mode=request.cost_mode,
        note=identical_samples_note(spec),
    )


def check_plan(store, plan: StudyPlan) -> None:
    """Refuse a sweep into a group recorded under another axis or strategy, before anything runs."""
    for group in plan.groups:
        check_group(store, group, [s for s in plan.specs if s.group == group])


def judge_of(name: str, spec):
    """The judge a parallel study asks: `evidence` (offline), `none`, `same` (the run's model) or a model string;
    `scaling.judging.make_judge`'s (so the study's judge is told the run's judge prompts, `--prompts`, as the CLI's
    is), its refusals as ScalingInputError."""
    from sandbox.agents.llm import ConfigError
    from workbench.service.scaling.judging import make_judge

    try:
        return make_judge(name, spec)
    except ScalingInputError:  # a name that is no judge: said as it is
        raise
    except ConfigError as exc:  # a ValueError too: caught first
        raise ScalingInputError(f"judge: {exc}") from None
    except ValueError:
        raise ScalingInputError("judge 'same' needs an LLM run (agent llm with a model)") from None


async def judge_study(store_path: Path, cache_dir: Path, plan: StudyPlan) -> ParallelReport | None:
    """A finished parallel study judged: every verdict it needs asked (launching it was the request to spend), on
    its own store and corpus; the report `scale parallel` prints. None when the study has no judge."""
    from sandbox.datasets import open_dataset
    from storage import Store
    from workbench.service.scaling.parallel import parallel_report

    spec = plan.specs[0]
    judge = judge_of(plan.judge, spec)
    if judge is None:
        return None
    corpus, _ = open_dataset(spec.dataset, cache_dir)
    store = Store(store_path)
    try:
        return await parallel_report(
            store,
            spec.name,
            corpus,
            plan.ks,
            judge,
            n_orders=plan.orders,
            seed=spec.seed,
            tie_rule=plan.tie_rule,
            judge_trials=plan.judge_trials,
            cost_mode=plan.cost_mode,
        )
    finally:
        store.close()
        corpus.close()
