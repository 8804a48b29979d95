"""The sequential strategies compared (the scaling study's Figure 6 / Table 14): one sequential group per strategy on
one axis, each with its plateau (k*), and per level the accuracy with its Wilson interval, what the agent spent and
what its verifier spent.

The groups are read by `group_plateau`, so each strategy's k* and levels are the ones `scale plateau --group` gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from sandbox.strategies import STRATEGIES
from stats.wilson import wilson
from storage import Store
from workbench.service.scaling.sequential import ScalingInputError, group_plateau

COMPARISON_RULE = (
    "per strategy its own group's plateau (k* = the largest budget reached by a significant gain); per "
    "level: accuracy with its 95% Wilson interval over the level's trajectories, the agent's cumulative "
    "tokens and cost, and the verifier's calls, tokens and cost (not charged to the agent)"
)


StrategyName = TypeVar("StrategyName", bound=str | None)  # a strategy's name, or None for the plain caps


def strategy_groups(name: str, strategies: Sequence[StrategyName]) -> list[tuple[str, StrategyName]]:
    """(group, strategy) for `scale sequential --strategy A,B,…`: one strategy keeps the --run name as its group;
    several get a group each, `NAME.strategy`, which `strategy_comparison` then reads together."""
    if len(strategies) == 1:
        return [(name, strategies[0])]
    return [(f"{name}.{s}", s) for s in strategies]


def check_verifier(name: str, base_url: str | None = None) -> None:
    """A model verifier can be configured (its key, its server) before anything runs or is written; the scripted
    `evidence` verifier always can."""
    from sandbox.agents.llm import ConfigError
    from sandbox.strategies import make_verifier

    if name == "evidence":
        return
    try:
        make_verifier(name, base_url=base_url)
    except ConfigError as exc:
        raise ScalingInputError(f"--verifier: {exc}") from None


def strategy_studies(groups: list[str]) -> dict[str, list[str]]:
    """The comparisons `strategy_groups` made, found again among group names: NAME → its `NAME.strategy` groups (two
    or more), in the order of STRATEGIES. What the TUI lists as one comparison each."""
    found: dict[str, dict[str, str]] = {}
    for group in groups:
        name, _, strategy = group.rpartition(".")
        if name and strategy in STRATEGIES:
            found.setdefault(name, {})[strategy] = group
    return {name: [by[s] for s in STRATEGIES if s in by] for name, by in found.items() if len(by) >= 2}


def strategy_comparison(store: Store, groups: list[str], **plateau_options: Any) -> dict[str, Any]:
    """Each group's strategy, plateau and levels, on one axis (groups on different axes are not one figure)."""
    if not groups:
        raise ScalingInputError("name at least one sequential group to compare")
    studies = []
    for group in dict.fromkeys(groups):
        result = group_plateau(store, group, **plateau_options)
        studies.append(_study(group, result))
    axes = {s["axis"] for s in studies}
    if len(axes) > 1:
        raise ScalingInputError(
            f"the groups sweep different axes ({', '.join(sorted(axes))}): compare groups of one axis"
        )
    return {"axis": axes.pop(), "studies": studies, "rule": COMPARISON_RULE}


def _study(group: str, result: dict[str, Any]) -> dict[str, Any]:
    levels = []
    for level in result["levels"]:
        ci = wilson(level["correct"], level["n"]) if level["n"] else None
        levels.append({**level, "accuracy_ci": [ci.low, ci.high] if ci else None})
    return {
        "group": group,
        "strategy": result["strategy"],
        "axis": result["axis"],
        "protocol": result["protocol"],
        "k_star": result["k_star"],
        "plateau_budget": result["plateau_budget"],
        "censored": result.get("censored"),
        "no_significant_gain": result.get("no_significant_gain"),
        "n": result["n"],
        "budgets": result["budgets"],
        "transitions": result["transitions"],
        "levels": levels,
    }
