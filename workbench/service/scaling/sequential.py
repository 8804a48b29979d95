"""Sequential scaling: one run per budget level of a grid (the one runner plays them, grouped), the plateau of
accuracy over the levels (`stats.plateau`), and what each level spent and reached."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from stats.plateau import parse_budget, plateau
from storage import Store
from storage.rows import RunRow, StoredRun, TrajectoryRow
from workbench.service.agents import measures_tokens
from workbench.service.records.sequential import (
    Axis,
    CostMode,
    Level,
    LevelSpend,
    Plateau,
    Protocol,
    Reach,
    StrategyName,
    StrategySpend,
)

if TYPE_CHECKING:  # the runner (80 ms of imports) only names a type here: reading a plateau never needs it
    from sandbox.runner import RunSpec
    from stats.wilson import WilsonRecord

AXES: tuple[Axis, ...] = ("tokens", "points", "turns")
PROTOCOLS: tuple[Protocol, ...] = ("fresh", "continuation")


UNBOUNDED_TOKENS = 10**12


class ScalingInputError(ValueError):
    """A scores file or grid a user must fix (exit 2)."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


def parse_grid(text: str, axis: str = "tokens") -> list[str]:
    """The grid's labels in budget order; a label that repeats a budget (`10,10`, `8k,8000`) is refused, since
    each level is a run of its own and a plateau needs two distinct budgets. Points and turns are whole
    numbers: a k/M/G suffix (or a fraction) there is a token-axis habit, refused rather than read as 8000."""
    labels = [t.strip() for t in text.split(",") if t.strip()]
    seen: dict[float, str] = {}
    for label in labels:
        if label.startswith("-"):
            raise ScalingInputError(f"--grid: {label!r} is negative: a budget is a positive amount of {axis}")
        if axis != "tokens" and not label.isdigit():
            raise ScalingInputError(
                f"--grid: {label!r} is not a whole number of {axis} (the k/M suffix is for the token axis)"
            )
        try:
            value = parse_budget(label)
        except ValueError as exc:
            raise ScalingInputError(f"--grid: {exc}") from None
        if value in seen:
            raise ScalingInputError(f"--grid names the budget {seen[value]} twice ({seen[value]}, {label})")
        seen[value] = label
    if len(labels) < 2:
        raise ScalingInputError("--grid needs at least two distinct budgets, e.g. 8k,16k,32k")
    return sorted(labels, key=parse_budget)


def axis_of(text: str) -> Axis:
    """A budget axis named in words (a form's choice), as one of `AXES`; ScalingInputError for any other word."""
    for axis in AXES:
        if text == axis:
            return axis
    raise ScalingInputError(f"axis: choose from {', '.join(AXES)}, not {text!r}")


def sequential_specs(
    base: RunSpec,
    axis: Axis,
    grid: list[str],
    protocol: Protocol = "fresh",
    strategy: StrategyName | None = None,
    verifier: str | None = None,
) -> list[RunSpec]:
    """One run per budget level, named `NAME@LEVEL`, grouped under NAME, the protocol and strategy recorded.

    `fresh` starts every level from the first prompt; `continuation` (token axis only, where the
    lower level's turns replay identically) resumes each level from the one below it. The strategy
    (`sandbox.strategies`) is part of the group's identity; `continue` on the token axis is what every
    token-axis run did before strategies existed, so it is recorded as those were (no key), and they stay one
    group with it. Without a strategy the points and turns axes are caps only (`cap`, the original rule).
    """
    _check_design(axis, protocol, strategy, verifier)
    specs = []
    for i, label in enumerate(grid):
        value = int(parse_budget(label))
        below = f"{base.name}@{grid[i - 1]}" if protocol == "continuation" and i > 0 else None
        scaling = _scaling_record(axis, label, value, protocol, strategy, verifier, below)
        spec = replace(base, name=f"{base.name}@{label}", group=base.name, kind="sequential", scaling=scaling)
        _cap(spec, base, axis, value)
        specs.append(spec)
    return specs


def _check_design(axis: Axis, protocol: Protocol, strategy: StrategyName | None, verifier: str | None) -> None:
    """Refuse a design that cannot run: continuation off the token axis or with a strategy that rewrites or reviews
    the history, a verifier without the verifier strategy."""
    if protocol == "continuation" and axis != "tokens":
        raise ScalingInputError(
            "--protocol continuation is defined on the token axis only: on the points and turns "
            "axes the replayed calls would meet different caps"
        )
    if protocol == "continuation" and strategy in ("summarize", "verifier"):
        raise ScalingInputError(
            f"--protocol continuation replays the level below turn by turn; the {strategy} strategy "
            "rewrites or reviews the history between turns: use --protocol fresh"
        )
    if verifier is not None and strategy != "verifier":
        raise ScalingInputError("--verifier is for --strategy verifier")


def _scaling_record(
    axis: Axis,
    label: str,
    value: int,
    protocol: Protocol,
    strategy: StrategyName | None,
    verifier: str | None,
    continue_from: str | None,
) -> dict[str, str | int]:
    """What a level records of its design (the run's `scaling`): axis, budget, protocol, the strategy unless it is
    the token axis's original `continue`, the verifier, and under continuation the level it resumes."""
    scaling: dict[str, str | int] = {"axis": axis, "budget": label, "value": value, "protocol": protocol}
    if strategy is not None and not (strategy == "continue" and axis == "tokens"):
        scaling["strategy"] = strategy
    if strategy == "verifier":
        scaling["verifier"] = verifier or "evidence"
    if continue_from is not None:
        scaling["continue_from"] = continue_from
    return scaling


def _cap(spec: RunSpec, base: RunSpec, axis: Axis, value: int) -> None:
    """Put the level's budget on its axis: the points or turns cap, or the context budget (the token axis, whose
    total-token cap is lifted so the budget alone decides)."""
    if axis == "points":
        spec.caps = replace(base.caps, budget=value)
    elif axis == "turns":
        spec.caps = replace(base.caps, max_turns=value)
    else:
        spec.context_budget = value
        spec.caps = replace(base.caps, max_tokens_total=UNBOUNDED_TOKENS)
        spec.estimate_tokens = base.agent != "llm"


def strategy_of(scaling: dict[str, Any]) -> str:
    """The sequential strategy a level ran under: the recorded one, else the original rule (`continue` on the token
    axis, `cap` on the points and turns axes)."""
    recorded = scaling.get("strategy")
    if recorded == "verifier":
        return f"verifier:{scaling.get('verifier') or 'evidence'}"
    return recorded or ("continue" if scaling.get("axis") == "tokens" else "cap")


def _design(scaling: dict[str, Any]) -> tuple[str, str, str]:
    return scaling.get("axis") or "?", scaling.get("protocol") or "fresh", strategy_of(scaling)


def recorded_scaling(run: RunRow) -> dict[str, Any]:
    """What a run recorded of its scaling design (`config.scaling`: `_scaling_record`'s keys for a level), {} when
    it recorded none."""
    scaling = run["config"].get("scaling")
    return scaling if isinstance(scaling, dict) else {}


def group_designs(runs: list[StoredRun]) -> dict[tuple[str, str, str], list[str]]:
    """(axis, protocol, strategy) → the budget labels recorded under it; one key for a well-formed group."""
    out: dict[tuple[str, str, str], list[str]] = {}
    for r in runs:
        scaling = recorded_scaling(r)
        out.setdefault(_design(scaling), []).append(str(scaling.get("budget")))
    return out


def _design_text(axis: str, protocol: str, strategy: str) -> str:
    default = strategy == ("continue" if axis == "tokens" else "cap")
    return protocol if default else f"{protocol}, {strategy} strategy"


def _designs_text(designs: dict[tuple[str, str, str], list[str]]) -> str:
    return " and ".join(
        f"the {axis} axis ({_design_text(axis, protocol, strategy)}: {', '.join(labels)})"
        for (axis, protocol, strategy), labels in designs.items()
    )


def check_group(store: Store, group: str, specs: list[RunSpec]) -> None:
    """Refuse to add levels to a group recorded under another axis or protocol, before anything runs."""
    existing = group_designs([r for r in store.runs_in_group(group) if r["kind"] == "sequential"])
    wanted = _design(specs[0].scaling or {})
    others = {d: labels for d, labels in existing.items() if d != wanted}
    if others:
        raise ScalingInputError(
            f"group '{group}' already holds {_designs_text(others)}; a {wanted[0]}-axis "
            f"{_design_text(*wanted)} grid needs another --run name"
        )


def sequential_group(store: Store, group: str, finished_only: bool = False) -> list[StoredLevel]:
    """A sequential group's runs in budget order, each with its finished trajectories.

    Read once: the plateau (`group_scores`) and the levels' costs (`group_levels`) both come from these rows.
    `finished_only` leaves out levels still running or cut short (a sweep watched as it fills in: a level half
    done would drop the items it has not reached from every level's common support).
    """
    runs = [
        r
        for r in store.runs_in_group(group)
        if r["kind"] == "sequential" and (not finished_only or r["status"] == "done")
    ]
    if len(runs) < 1:
        raise ScalingInputError(
            f"no sequential runs in group '{group}' (`scale sequential` makes them, its --run naming the group)"
        )
    designs = group_designs(runs)
    if len(designs) > 1:
        raise ScalingInputError(
            f"group '{group}' mixes {_designs_text(designs)}: its budgets are not one grid; "
            f"give each study its own --run name"
        )
    runs.sort(key=lambda r: parse_budget(recorded_scaling(r)["budget"]))
    return [StoredLevel(r, store.trajectories(r["id"])) for r in runs]


@dataclass(frozen=True)
class StoredLevel:
    """One budget level of a sequential group as stored: its run and its finished trajectories."""

    run: StoredRun
    trajectories: list[TrajectoryRow]


def group_scores(levels: list[StoredLevel]) -> tuple[list[str], list[str], np.ndarray]:
    """Per-item correctness at each budget of a `sequential_group`: (budgets, items, n×K×T)."""
    budgets = [recorded_scaling(level.run)["budget"] for level in levels]
    per_run = [_correct_by_item(level) for level in levels]
    items = sorted(set().union(*per_run))
    trials = max((len(c) for cells in per_run for c in cells.values()), default=1)
    y = np.full((len(items), len(levels), trials), np.nan)
    for k, cells in enumerate(per_run):
        for i, item in enumerate(items):
            for rep, v in cells.get(item, {}).items():
                if rep < trials:
                    y[i, k, rep] = v
    return budgets, items, (y[:, :, 0] if trials == 1 else y)


def _correct_by_item(level: StoredLevel) -> dict[str, dict[int, float]]:
    """A level's correctness (1.0 or 0.0) per item and replicate."""
    cells: dict[str, dict[int, float]] = {}
    for t in level.trajectories:
        cells.setdefault(t["item_id"], {})[t["replicate"]] = float(bool(t["correct"]))
    return cells


def use_two_stage(n_trials: int, population: int | None, two_stage: bool | None = None) -> bool:
    """Whether the plateau resamples trials inside items as well as items (§2.5).

    `None` decides automatically: two-stage exactly when there are T > 1 trials per item *and* a
    population size. The cluster bootstrap over instance means already carries the run-to-run
    variance, but the FPC multiplies all of it, so with N = n it would erase that variance and
    make C_k = d̄_k (§6.1's pitfall); the two-stage bootstrap applies the FPC to the
    between-instance part only.
    """
    if two_stage is not None:
        return two_stage
    return n_trials > 1 and population is not None


def plateau_result(
    budgets, items, matrix, two_stage: bool | None = None, matched_trials: bool = False, **options: Any
) -> Plateau:
    """`stats.plateau.plateau` as a JSON-ready dict; bad input (n < 2, invalid N, …) is the user's to fix.

    `matrix` is n×K or n×K×T; `matched_trials` pairs trial t across budgets (the continuation
    protocol, one chain per trial); `two_stage` None = `use_two_stage`'s automatic choice.
    """
    distinct = {parse_budget(b) for b in budgets}
    if len(distinct) < 2:  # one level has no transition: a "k* = None" would read as a result
        have = ", ".join(map(str, budgets)) or "none"
        raise ScalingInputError(f"need at least two distinct budgets for a plateau (have: {have})")
    n_trials = matrix.shape[2] if np.ndim(matrix) == 3 else 1
    stage = use_two_stage(n_trials, options.get("population"), two_stage)
    try:
        result = plateau(matrix, budgets, items=items, two_stage=stage, matched_trials=matched_trials, **options)
    except ValueError as exc:
        raise ScalingInputError(str(exc)) from None
    out = cast(Plateau, result.to_dict())  # `PlateauResult.to_dict`'s keys, field by field
    k = out["k_star"]
    out["plateau_budget"] = out["budgets"][k - 1] if k else None
    return out


def group_plateau(
    store: Store, group: str, cost_mode: CostMode = "cache-aware", finished_only: bool = False, **options: Any
) -> Plateau:
    """The plateau of a sequential group with its levels' costs; trials pair by index under continuation.

    The one function `scale sequential`, `scale plateau --group` and the TUI call, so they agree.
    `cost_mode` "study" prices the levels by the study's rule (`costs.COST_MODES`), on fresh groups only.
    """
    levels = sequential_group(store, group, finished_only)
    if cost_mode == "study" and (recorded_scaling(levels[0].run).get("protocol") == "continuation"):
        raise ScalingInputError(
            "--cost-mode study prices trajectories from their token counts, which under the "
            "continuation protocol include the replayed prefix: use it on fresh groups"
        )
    budgets, items, matrix = group_scores(levels)
    scaling = recorded_scaling(levels[0].run)
    result = plateau_result(budgets, items, matrix, matched_trials=scaling.get("protocol") == "continuation", **options)
    result["axis"], result["protocol"] = scaling["axis"], scaling.get("protocol", "fresh")  # `_scaling_record`
    result["strategy"], result["group"] = strategy_of(scaling), group
    result["levels"] = group_levels(store, levels, cost_mode)
    result["cost_mode"] = cost_mode
    return result


def group_levels(store: Store, levels: list[StoredLevel], cost_mode: CostMode = "cache-aware") -> list[Level]:
    """Each budget level's accuracy, cost and tokens, and whether its budget was ever reached (`levels` as
    `sequential_group` reads them).

    Money and tokens come two ways. *Marginal*: what this level spent itself (under continuation,
    its replayed prefix is not spent again, so it is left out). *Cumulative*: what its answers
    cost in all, i.e. the chain of lower levels (their forced STOP calls included) plus this
    level's marginal; under the fresh protocol every level stands alone and the two are equal.
    Accuracy per dollar and per million tokens use the cumulative figures, so they are the price
    of a level's answers; they are accuracy over the mean spend per item (= correct answers per
    dollar, per million tokens), None when nothing was priced or counted.

    A level's cap is *reached* by an item that went over it: a call's context above the token
    budget (it is then told to STOP), the turn cap used up, or the points spent or a call refused
    for lack of them. Two flags, on the token axis only, where the agent never sees the budget
    (only EXTEND below it and STOP above it): `never_reached`, no item went over it, so every
    episode ran as it would under any larger budget; `degenerate`, a budget at or below the
    prompt overhead (the median context of the first call), where every episode is stopped after
    one call (docs/scaling.md#sequential-scaling). Points and turns are shown to the agent in every footer, so a
    budget nobody used up can still have changed what the agent did: no flag there.

    A scripted agent calls no model: its tokens and cost are not measured and are None (shown `—`), never 0; so are
    a scripted verifier's.
    """
    from sandbox.agents.continuation import PREFIX_MARK
    from sandbox.prompt_set import from_stored

    chain: dict[tuple[str, int], tuple[float, float | None]] = {}  # (item, trial) → cumulative tokens, cost
    out: list[Level] = []
    for level in levels:
        r, rows = level.run, level.trajectories
        scaling = recorded_scaling(r)
        axis, value = scaling.get("axis"), scaling.get("value")
        profile = store.context_profile(r["id"], from_stored(r.get("prompts")).stop, PREFIX_MARK)
        measured = measures_tokens(r["agent"], r.get("identity"))
        correct = sum(bool(t["correct"]) for t in rows)
        spent = _level_spend(level, profile, chain if scaling.get("protocol") == "continuation" else None, cost_mode)
        reached = [_reached(axis, value, t, _profile(profile, t)) for t in rows]
        out.append(
            Level(
                budget=scaling["budget"],
                run=r["name"],
                n=len(rows),
                measured=measured,
                correct=correct,
                continues=sum(t["continues"] or 0 for t in rows),
                accuracy=correct / len(rows) if rows else None,
                accuracy_interval=level_interval(rows),
                **(spent.figures(correct) if measured else NOT_MEASURED_SPEND),
                **_reach_summary(axis, value, level, profile, reached),
                **_verifier_spend(cast(StrategySpend, store.strategy_spend(r["id"])), r, scaling, cost_mode),
            )
        )
    return out


NOT_MEASURED_SPEND = LevelSpend(
    tokens_marginal=None,
    tokens_cumulative=None,
    cost_usd_marginal=None,
    cost_usd_cumulative=None,
    accuracy_per_usd=None,
    accuracy_per_million_tokens=None,
)
"""A scripted agent's level: it calls no model, so its tokens and cost are not measured (None), never 0."""


@dataclass
class _Spent:
    """A level's tokens and cost: its own (marginal) and with the chain of levels below it (cumulative)."""

    tokens_marginal: float = 0.0
    tokens_cumulative: float = 0.0
    cost_marginal: float | None = None
    cost_cumulative: float | None = None

    def figures(self, correct: int) -> LevelSpend:
        """The level's spend as reported, with accuracy per dollar and per million tokens of its answers."""
        tokens, cost = self.tokens_cumulative, self.cost_cumulative
        return LevelSpend(
            tokens_marginal=int(self.tokens_marginal),
            tokens_cumulative=int(tokens),
            cost_usd_marginal=self.cost_marginal,
            cost_usd_cumulative=cost,
            accuracy_per_usd=correct / cost if cost else None,
            accuracy_per_million_tokens=correct / (tokens / 1e6) if tokens else None,
        )


def _profile(profile: dict[int, dict[str, int]], t: TrajectoryRow) -> dict[str, int]:
    """A trajectory's context profile (`Store.context_profile`); zeros for one without calls."""
    return profile.get(t["id"], {"first_context": 0, "max_context": 0, "stops": 0, "prefix_tokens": 0})


def _level_spend(
    level: StoredLevel,
    profile: dict[int, dict[str, int]],
    chain: dict[tuple[str, int], tuple[float, float | None]] | None,
    cost_mode: CostMode,
) -> _Spent:
    """What a level's trajectories spent, their replayed prefix left out; under continuation (`chain`, the
    cumulative tokens and cost per (item, trial) so far, extended here) each answer also costs the levels below."""
    from workbench.service.scaling.costs import trajectory_cost

    out = _Spent()
    for t in level.trajectories:
        own_tokens = (t["tokens"] or 0) - _profile(profile, t)["prefix_tokens"]
        own_cost = trajectory_cost(level.run, t, cost_mode)
        key = (t["item_id"], t["replicate"])
        below = chain.get(key, (0.0, None)) if chain is not None else (0.0, None)
        item_tokens, item_cost = below[0] + own_tokens, _add(below[1], own_cost)
        if chain is not None:
            chain[key] = (item_tokens, item_cost)
        out.tokens_marginal += own_tokens
        out.tokens_cumulative += item_tokens
        out.cost_marginal, out.cost_cumulative = _add(out.cost_marginal, own_cost), _add(out.cost_cumulative, item_cost)
    return out


def level_interval(rows: list[TrajectoryRow]) -> WilsonRecord | None:
    """A level's accuracy with its 95% Wilson interval, clustered by item (`stats.wilson.clustered_wilson`): with
    replicates, the trajectories of one item are correlated, so the interval is Wilson's at the effective n
    (trajectories ÷ the design effect); with one trajectory per item it is the plain Wilson. None without rows."""
    from stats.wilson import clustered_wilson

    per_item: dict[str, list[int]] = {}
    for t in rows:
        counts = per_item.setdefault(t["item_id"], [0, 0])
        counts[0] += bool(t["correct"])
        counts[1] += 1
    interval = clustered_wilson([c[0] for c in per_item.values()], [c[1] for c in per_item.values()])
    return None if interval is None else interval.as_dict()


def _verifier_spend(spend: StrategySpend, run: RunRow, scaling: dict[str, Any], cost_mode: CostMode) -> StrategySpend:
    """The store's strategy spend of a level, the verifier's calls priced by `cost_mode` as the agent's are (`study`:
    every input token at the verifier model's input price, App. C.1, by `costs.run_price`: the run's recorded
    `[[pricing]]` first); its tokens and cost None (not measured) when the verifier is the scripted one (`evidence`:
    no model, nothing to count)."""
    verifier = scaling.get("verifier") or "evidence"
    if scaling.get("strategy") != "verifier" or verifier == "evidence":
        return {**spend, "verifier_tokens": None, "verifier_cost_usd": None}
    if cost_mode == "study" and spend["verifier_calls"]:
        from sandbox.pricing import study_cost
        from sandbox.records import Usage
        from workbench.service.scaling.costs import run_price

        price = run_price(run, verifier)
        return {**spend, "verifier_cost_usd": study_cost(price, Usage(**spend["verifier_usage"]))}
    return spend


def _add(a: float | None, b: float | None) -> float | None:
    """Sum of two optional amounts; None only when both are unknown (an unpriced call adds nothing)."""
    return None if a is None and b is None else (a or 0.0) + (b or 0.0)


def _reached(axis: str | None, value: Any, t: TrajectoryRow, prof: dict[str, int]) -> bool:
    """Whether this trajectory went over its level's cap (see `group_levels`)."""
    if axis == "tokens":
        return prof["max_context"] > value
    if axis == "turns":
        return (t["turns"] or 0) >= value
    if axis == "points":
        return (t["points_used"] or 0) >= value or any(isinstance(a, list) and a[1] == "rejected" for a in t["actions"])
    return False


def _reach_summary(
    axis: str | None, value: Any, level: StoredLevel, profile: dict[int, dict[str, int]], reached: list[bool]
) -> Reach:
    """n reached, the furthest any item went (context tokens, turns or points), the overhead and the two flags."""
    if axis == "tokens":
        return _token_reach(value, level, profile, reached)
    rows = level.trajectories
    furthest = max(((t["turns"] if axis == "turns" else t["points_used"]) or 0 for t in rows), default=0)
    return Reach(
        n_stopped=None,
        n_reached=sum(reached),
        max_reached=int(furthest),
        overhead_tokens=None,
        never_reached=None,
        degenerate=None,
    )


def _token_reach(value: Any, level: StoredLevel, profile: dict[int, dict[str, int]], reached: list[bool]) -> Reach:
    """On the token axis: the items stopped and reached, the largest context, the prompt overhead (the median first
    context) and the two flags (`group_levels`)."""
    rows = level.trajectories
    furthest = max((profile.get(t["id"], {}).get("max_context", 0) for t in rows), default=0)
    firsts = sorted(profile[t["id"]]["first_context"] for t in rows if t["id"] in profile)
    overhead = float(np.median(firsts)) if firsts else None
    return Reach(
        n_stopped=sum(profile.get(t["id"], {}).get("stops", 0) > 0 for t in rows),
        n_reached=sum(reached),
        max_reached=int(furthest),
        overhead_tokens=overhead,
        never_reached=bool(rows) and not any(reached),
        degenerate=overhead is not None and value <= overhead,
    )
