"""The sequential strategies compared (the scaling study's Figure 6 / Table 14): one sequential group per strategy on
one axis, each with its plateau (k*), and per level the accuracy with its Wilson interval, what the agent spent and
what its verifier spent.

The groups are read by `group_plateau`, so each strategy's k* and levels are the ones `scale plateau --group` gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sandbox.strategies import STRATEGIES
from storage import Store
from workbench.service.records.sequential import Plateau, StrategyComparison, StrategyLevel, StrategyName, StrategyStudy
from workbench.service.scaling.sequential import ScalingInputError, group_plateau

COMPARISON_RULE = (
    "per strategy its own group's plateau (k* = the largest budget reached by a significant gain); per "
    "level: accuracy with its 95% Wilson interval (clustered by item when items have replicates: Wilson at the "
    "effective n = trajectories ÷ design effect), the agent's cumulative "
    "tokens per trajectory and cost, and the verifier's calls, tokens and cost (not charged to the agent)"
)


_Strategy = TypeVar("_Strategy", bound=str | None)  # a strategy's name, or None for the plain caps


def strategy_groups(name: str, strategies: Sequence[_Strategy]) -> list[tuple[str, _Strategy]]:
    """(group, strategy) for `scale sequential --strategy A,B,…`: one strategy keeps the --run name as its group;
    several get a group each, `NAME.strategy`, which `strategy_comparison` then reads together."""
    if len(strategies) == 1:
        return [(name, strategies[0])]
    return [(f"{name}.{s}", s) for s in strategies]


STRATEGY_NAMES: tuple[StrategyName, ...] = ("continue", "summarize", "verifier")  # `sandbox.strategies.STRATEGIES`


def parse_strategies(text: str) -> list[StrategyName]:
    """Comma-separated strategy names (a form's text) as names of `STRATEGY_NAMES`, in the order given;
    ScalingInputError naming the unknown ones."""
    names = [s.strip() for s in text.split(",") if s.strip()]
    known = [n for name in names for n in STRATEGY_NAMES if n == name]
    if len(known) < len(names):
        bad = [s for s in names if s not in STRATEGY_NAMES]
        raise ScalingInputError(f"strategy {', '.join(bad)}: choose from {', '.join(STRATEGY_NAMES)}")
    return known


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


def comparison_groups(store: Store, groups: Sequence[str]) -> list[str]:
    """The groups named, each one as stored; a NAME with no sequential runs of its own stands for the comparison
    `scale sequential --run NAME --strategy A,B` made (`NAME.continue`, `NAME.summarize`, `NAME.verifier`)."""
    out: list[str] = []
    for group in dict.fromkeys(groups):
        if any(r["kind"] == "sequential" for r in store.runs_in_group(group)):
            out.append(group)
            continue
        members = [g for g, _ in strategy_groups(group, STRATEGY_NAMES) if store.runs_in_group(g)]
        out += members or [group]  # none: `group_plateau` says the group is empty
    return list(dict.fromkeys(out))


def strategy_comparison(store: Store, groups: list[str], **plateau_options: Any) -> StrategyComparison:
    """Each group's strategy, plateau and levels, on one axis and over the same items (groups on different axes or
    items are not one figure); groups whose grids or seeds differ are compared, and the differences named in
    `differences`."""
    if not groups:
        raise ScalingInputError("name at least one sequential group to compare")
    studies = []
    designs = {}
    for group in comparison_groups(store, groups):
        result = group_plateau(store, group, **plateau_options)
        studies.append(_study(group, result))
        designs[group] = _design_of(store, group)
    axes = {s["axis"] for s in studies}
    if len(axes) > 1:
        raise ScalingInputError(
            f"the groups sweep different axes ({', '.join(sorted(axes))}): compare groups of one axis"
        )
    _check_items(designs)
    return StrategyComparison(
        axis=axes.pop(), studies=studies, rule=COMPARISON_RULE, differences=_differences(studies, designs)
    )


@dataclass(frozen=True)
class _Design:
    """The items and seeds a group's levels ran on."""

    items: set[str] = field(default_factory=set)
    seeds: set[Any] = field(default_factory=set)  # the runs' recorded seeds, as stored


def _design_of(store: Store, group: str) -> _Design:
    """The items and seeds a group's levels ran on (its finished trajectories, its runs' recorded seeds)."""
    design = _Design()
    for run in store.runs_in_group(group):
        if run["kind"] != "sequential":
            continue
        design.seeds.add(run.get("seed"))
        design.items.update(t["item_id"] for t in store.trajectories(run["id"]))
    return design


def _check_items(designs: dict[str, _Design]) -> None:
    """Refuse groups over different items: their accuracies are of different questions, not of the strategies."""
    first, *rest = designs
    for group in rest:
        a, b = designs[first].items, designs[group].items
        if a != b:
            raise ScalingInputError(
                f"groups '{first}' ({len(a)} items) and '{group}' ({len(b)} items) cover different items "
                f"({len(a - b)} only in '{first}', {len(b - a)} only in '{group}'): compare groups run on the "
                "same items (the same --limit, --ids and filters)"
            )


def _differences(studies: list[StrategyStudy], designs: dict[str, _Design]) -> list[str]:
    """What differs between the groups besides the strategy, in words: their grids and their seeds."""
    out = []
    grids = {s["group"]: ",".join(map(str, s["budgets"])) for s in studies}
    if len(set(grids.values())) > 1:
        out.append("grids differ: " + "; ".join(f"{g} {grid}" for g, grid in grids.items()))
    seeds = {g: ",".join(sorted(map(str, d.seeds))) for g, d in designs.items()}
    if len(set(seeds.values())) > 1:
        out.append("seeds differ: " + "; ".join(f"{g} {seed}" for g, seed in seeds.items()))
    return out


def _study(group: str, result: Plateau) -> StrategyStudy:
    """A group's plateau as the comparison shows it: each level with its interval's bounds and its tokens per
    trajectory."""
    levels = []
    for level in result.get("levels", []):
        ci = level["accuracy_interval"]
        # the level's cumulative tokens over its trajectories (with T trials an item has T of them): per trajectory
        per_trajectory = (
            level["tokens_cumulative"] / level["n"] if level["n"] and level["tokens_cumulative"] is not None else None
        )
        levels.append(
            StrategyLevel(
                **level, accuracy_ci=[ci["low"], ci["high"]] if ci else None, tokens_per_trajectory=per_trajectory
            )
        )
    return StrategyStudy(
        group=group,
        strategy=result["strategy"],
        axis=result["axis"],
        protocol=result["protocol"],
        k_star=result["k_star"],
        plateau_budget=result["plateau_budget"],
        censored=result.get("censored"),
        no_significant_gain=result.get("no_significant_gain"),
        n=result["n"],
        budgets=result["budgets"],
        transitions=result["transitions"],
        levels=levels,
    )
