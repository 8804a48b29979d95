"""Test-time scaling: the sequential budget grid with its plateau, and parallel sampling with its verification gap.

The runs go through the one runner (one run per budget level, grouped; one run with K
replicates for parallel sampling); the numbers come from `stats.plateau` and
`stats.parallel`; this module joins the two and draws the terminal plots.
"""
from __future__ import annotations

import csv
import json
import math
import random
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from sandbox.runner import RunSpec
from stats import parallel as par
from stats.bootstrap import no_variation
from stats.plateau import parse_budget, plateau, scores_from_mapping, scores_from_rows
from storage import Store

AXES = ("tokens", "points", "turns")
UNBOUNDED_TOKENS = 10**12


class ScalingInputError(ValueError):
    """A scores file or grid a user must fix (exit 2)."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


# ---------------------------------------------------------------- sequential


def parse_grid(text: str, axis: str = "tokens") -> list[str]:
    """The grid's labels in budget order; a label that repeats a budget (`10,10`, `8k,8000`) is refused, since
    each level is a run of its own and a plateau needs two distinct budgets. Points and turns are whole
    numbers: a k/M/G suffix (or a fraction) there is a token-axis habit, refused rather than read as 8000."""
    labels = [t.strip() for t in text.split(",") if t.strip()]
    seen: dict[float, str] = {}
    for label in labels:
        if axis != "tokens" and not label.isdigit():
            raise ScalingInputError(f"--grid: {label!r} is not a whole number of {axis} "
                                    "(the k/M suffix is for the token axis)")
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


def sequential_specs(base: RunSpec, axis: str, grid: list[str], protocol: str = "fresh") -> list[RunSpec]:
    """One run per budget level, named `NAME@LEVEL`, grouped under NAME, the protocol recorded.

    `fresh` starts every level from the first prompt; `continuation` (token axis only, where the
    lower level's turns replay identically) resumes each level from the one below it.
    """
    if protocol == "continuation" and axis != "tokens":
        raise ScalingInputError("--protocol continuation is defined on the token axis only: on the points and turns "
                                "axes the replayed calls would meet different caps")
    specs = []
    for i, label in enumerate(grid):
        value = int(parse_budget(label))
        scaling = {"axis": axis, "budget": label, "value": value, "protocol": protocol}
        if protocol == "continuation" and i > 0:
            scaling["continue_from"] = f"{base.name}@{grid[i - 1]}"
        spec = replace(base, name=f"{base.name}@{label}", group=base.name, kind="sequential", scaling=scaling)
        if axis == "points":
            spec.caps = replace(base.caps, budget=value)
        elif axis == "turns":
            spec.caps = replace(base.caps, max_turns=value)
        else:
            spec.context_budget = value
            spec.caps = replace(base.caps, max_tokens_total=UNBOUNDED_TOKENS)
            spec.estimate_tokens = base.agent != "llm"
        specs.append(spec)
    return specs


def _design(scaling: dict[str, Any]) -> tuple[str, str]:
    return scaling.get("axis") or "?", scaling.get("protocol") or "fresh"


def group_designs(runs: list[dict[str, Any]]) -> dict[tuple[str, str], list[str]]:
    """(axis, protocol) → the budget labels recorded under it; one key for a well-formed group."""
    out: dict[tuple[str, str], list[str]] = {}
    for r in runs:
        scaling = (r.get("config") or {}).get("scaling") or {}
        out.setdefault(_design(scaling), []).append(str(scaling.get("budget")))
    return out


def _designs_text(designs: dict[tuple[str, str], list[str]]) -> str:
    return " and ".join(f"the {axis} axis ({protocol}: {', '.join(labels)})"
                        for (axis, protocol), labels in designs.items())


def check_group(store: Store, group: str, specs: list[RunSpec]) -> None:
    """Refuse to add levels to a group recorded under another axis or protocol, before anything runs."""
    existing = group_designs([r for r in store.runs_in_group(group) if r["kind"] == "sequential"])
    wanted = _design(specs[0].scaling or {})
    others = {d: labels for d, labels in existing.items() if d != wanted}
    if others:
        raise ScalingInputError(f"group '{group}' already holds {_designs_text(others)}; a {wanted[0]}-axis "
                                f"{wanted[1]} grid needs another --run name")


def sequential_group(store: Store, group: str) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """A sequential group's runs in budget order, each with its finished trajectories.

    Read once: the plateau (`group_scores`) and the levels' costs (`group_levels`) both come from these rows.
    """
    runs = [r for r in store.runs_in_group(group) if r["kind"] == "sequential"]
    if len(runs) < 1:
        raise ScalingInputError(f"no sequential runs in group '{group}' (run `scale sequential --run {group}` first)")
    designs = group_designs(runs)
    if len(designs) > 1:
        raise ScalingInputError(f"group '{group}' mixes {_designs_text(designs)}: its budgets are not one grid; "
                                f"give each study its own --run name")
    runs.sort(key=lambda r: parse_budget(r["config"]["scaling"]["budget"]))
    return [(r, store.trajectories(r["id"])) for r in runs]


def group_scores(levels: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> tuple[list[str], list[str], np.ndarray]:
    """Per-item correctness at each budget of a `sequential_group`: (budgets, items, n×K×T)."""
    budgets = [r["config"]["scaling"]["budget"] for r, _ in levels]
    per_run = []
    for _, rows in levels:
        cells: dict[str, dict[int, float]] = {}
        for t in rows:
            cells.setdefault(t["item_id"], {})[t["replicate"]] = float(bool(t["correct"]))
        per_run.append(cells)
    items = sorted(set().union(*per_run))
    trials = max((len(c) for cells in per_run for c in cells.values()), default=1)
    y = np.full((len(items), len(levels), trials), np.nan)
    for k, cells in enumerate(per_run):
        for i, item in enumerate(items):
            for rep, v in cells.get(item, {}).items():
                if rep < trials:
                    y[i, k, rep] = v
    return budgets, items, (y[:, :, 0] if trials == 1 else y)


def load_scores(path: Path, study: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """Per-item scores from a file, as (budgets, items, n×K or n×K×T matrix); every defect is the user's (exit 2).

    JSON: {"budget": {"item": score}} (or {study: that}, chosen with --study), where a score may be
    a list of the item's trials. CSV: columns item,budget,score and optionally trial; an empty
    score is missing, as JSON null is.
    """
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScalingInputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if path.suffix.lower() == ".csv":
        if study is not None:
            raise ScalingInputError(f"--study is for a JSON file of several studies; {path} is CSV (one study)")
        return _csv_scores(path, text)
    try:
        data = json.loads(text, parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise ScalingInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    found = _non_finite(data)
    if found:
        raise ScalingInputError(f"{path}: {' → '.join(found[0])}: {found[1]} is not a score "
                                "(write null for a missing one)")
    if not isinstance(data, dict) or not data:
        raise ScalingInputError(f"{path}: expected an object of budgets")
    if study is not None and any(_is_budget(key) for key in data):
        raise ScalingInputError(f"--study: {path} holds one study (its keys are budgets)")
    if not any(_is_budget(key) for key in data):  # {study: {budget: {item: score}}}
        if study is None:
            raise ScalingInputError(f"{path} holds several studies; choose one with --study: {', '.join(data)}")
        if study not in data:
            raise ScalingInputError(f"{path}: no study '{study}' (have: {', '.join(data)})")
        data = data[study]
    try:
        return scores_from_mapping(data)
    except ValueError as exc:
        raise ScalingInputError(f"{path}: {exc}") from None


def file_plateau(path: Path, study: str | None = None, **options: Any) -> dict[str, Any]:
    """`plateau_result` of a scores file; every complaint names the file (a duplicate budget with two scores,
    a single budget, too few items on the common support)."""
    budgets, items, matrix = load_scores(path, study)
    try:
        return plateau_result(budgets, items, matrix, **options)
    except ScalingInputError as exc:
        raise ScalingInputError(f"{path}: {exc}") from None


class _NonFinite:
    """JSON's NaN/Infinity extension in a scores file, kept as a marker: Python reads NaN as a float that the
    plateau would take for a missing score, so it is refused where it stands."""

    def __init__(self, constant: str):
        self.constant = constant


def _non_finite(data: Any, where: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str] | None:
    """(path of keys, constant) of the first NaN/Infinity in the parsed file, or None."""
    if isinstance(data, _NonFinite):
        return where, data.constant
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in children:
        found = _non_finite(value, (*where, f"trial {key}" if isinstance(key, int) else repr(key)))
        if found:
            return found
    return None


def _is_budget(label: str) -> bool:
    try:
        parse_budget(label)
    except ValueError:
        return False
    return True


def _csv_scores(path: Path, text: str) -> tuple[list[str], list[str], np.ndarray]:
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    absent = [c for c in ("item", "budget", "score") if c not in header]
    if absent:
        raise ScalingInputError(f"{path}: no column {', '.join(repr(c) for c in absent)} "
                                "(the header must name item,budget,score and optionally trial)")
    keys = ("item", "budget", "score", "trial") if "trial" in header else ("item", "budget", "score")
    rows = []
    for lineno, row in enumerate(reader, 2):
        for key in keys:
            if key != "score" and not (row.get(key) or "").strip():
                raise ScalingInputError(f"{path}:{lineno}: field '{key}' is missing")
        rows.append(tuple(row.get(k) for k in keys))
    try:
        return scores_from_rows(rows, first_line=2)
    except ValueError as exc:
        raise ScalingInputError(f"{path}: {exc}") from None


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


def plateau_result(budgets, items, matrix, two_stage: bool | None = None, matched_trials: bool = False,
                   **options: Any) -> dict[str, Any]:
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
    out = result.to_dict()
    k = out.get("k_star")
    out["plateau_budget"] = out["budgets"][k - 1] if k else None
    return out


def group_plateau(store: Store, group: str, **options: Any) -> dict[str, Any]:
    """The plateau of a sequential group with its levels' costs; trials pair by index under continuation.

    The one function `scale sequential`, `scale plateau --group` and the TUI call, so they agree.
    """
    levels = sequential_group(store, group)
    budgets, items, matrix = group_scores(levels)
    scaling = levels[0][0]["config"]["scaling"]
    result = plateau_result(budgets, items, matrix, matched_trials=scaling.get("protocol") == "continuation",
                            **options)
    result["axis"], result["protocol"] = scaling.get("axis"), scaling.get("protocol", "fresh")
    result["levels"] = group_levels(store, levels)
    return result


def group_levels(store: Store, levels: list[tuple[dict[str, Any], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
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
    one call (reference §1.1, §1.10). Points and turns are shown to the agent in every footer, so a
    budget nobody used up can still have changed what the agent did: no flag there.
    """
    from sandbox.agents.continuation import PREFIX_MARK
    from sandbox.prompts import STOP_NOW

    chain: dict[tuple[str, int], tuple[float, float | None]] = {}  # (item, trial) → cumulative tokens, cost
    out = []
    for r, rows in levels:
        scaling = r["config"]["scaling"]
        axis, value, continued = scaling.get("axis"), scaling.get("value"), scaling.get("protocol") == "continuation"
        profile = store.context_profile(r["id"], STOP_NOW, PREFIX_MARK)
        level = {"budget": scaling["budget"], "run": r["name"], "n": len(rows), "measured": measures_tokens(r),
                 "correct": sum(bool(t["correct"]) for t in rows),
                 "continues": sum(t["continues"] or 0 for t in rows)}
        level["accuracy"] = level["correct"] / len(rows) if rows else None
        tokens_m = tokens_c = 0.0
        cost_m: float | None = None
        cost_c: float | None = None
        reached = []
        for t in rows:
            prof = profile.get(t["id"], {"first_context": 0, "max_context": 0, "stops": 0, "prefix_tokens": 0})
            own_tokens = (t["tokens"] or 0) - prof["prefix_tokens"]
            own_cost = t["cost_usd"]
            below = chain.get((t["item_id"], t["replicate"]), (0.0, None)) if continued else (0.0, None)
            item_tokens = below[0] + own_tokens
            item_cost = _add(below[1], own_cost)
            chain[(t["item_id"], t["replicate"])] = (item_tokens, item_cost)
            tokens_m += own_tokens
            tokens_c += item_tokens
            cost_m, cost_c = _add(cost_m, own_cost), _add(cost_c, item_cost)
            reached.append(_reached(axis, value, t, prof))
        level.update(tokens_marginal=int(tokens_m), tokens_cumulative=int(tokens_c), cost_usd_marginal=cost_m,
                     cost_usd_cumulative=cost_c,
                     accuracy_per_usd=level["correct"] / cost_c if cost_c else None,
                     accuracy_per_million_tokens=level["correct"] / (tokens_c / 1e6) if tokens_c else None)
        level.update(_reach_summary(axis, value, rows, profile, reached))
        out.append(level)
    return out


def measures_tokens(run: dict[str, Any]) -> bool:
    """Whether a run's cost and tokens were measured: a scripted agent calls no model (`reports.measures_tokens`)."""
    from workbench.reports import measures_tokens as measured

    return measured(run)


def _add(a: float | None, b: float | None) -> float | None:
    """Sum of two optional amounts; None only when both are unknown (an unpriced call adds nothing)."""
    return None if a is None and b is None else (a or 0.0) + (b or 0.0)


def _reached(axis: str | None, value: Any, t: dict[str, Any], prof: dict[str, int]) -> bool:
    """Whether this trajectory went over its level's cap (see `group_levels`)."""
    if axis == "tokens":
        return prof["max_context"] > value
    if axis == "turns":
        return (t["turns"] or 0) >= value
    if axis == "points":
        return (t["points_used"] or 0) >= value or any(a[1] == "rejected" for a in t.get("actions") or [])
    return False


def _reach_summary(axis: str | None, value: Any, rows: list[dict[str, Any]], profile: dict[int, dict[str, int]],
                   reached: list[bool]) -> dict[str, Any]:
    """n reached, the furthest any item went (context tokens, turns or points), the overhead and the two flags."""
    if axis == "tokens":
        furthest = max((profile.get(t["id"], {}).get("max_context", 0) for t in rows), default=0)
        firsts = sorted(profile[t["id"]]["first_context"] for t in rows if t["id"] in profile)
        overhead = float(np.median(firsts)) if firsts else None
    else:
        furthest = max(((t["turns"] if axis == "turns" else t["points_used"]) or 0 for t in rows), default=0)
        overhead = None
    tokens = axis == "tokens"
    return {"n_stopped": sum(profile.get(t["id"], {}).get("stops", 0) > 0 for t in rows) if tokens else None,
            "n_reached": sum(reached), "max_reached": int(furthest), "overhead_tokens": overhead,
            "never_reached": (bool(rows) and not any(reached)) if tokens else None,
            "degenerate": (overhead is not None and value <= overhead) if tokens else None}


# ---------------------------------------------------------------- parallel


def parallel_samples(store: Store, run_name: str,
                     corpus) -> tuple[dict[str, Any], list[str], list[list[dict[str, Any]]], int]:
    """The run, its items with all K samples, per item those samples in replicate order, and how many items
    still miss a sample (an interrupted run): those are left out, and `parallel_report` says how many.
    """
    run = store.run(run_name)
    by_item: dict[str, dict[int, dict[str, Any]]] = {}
    for t in store.trajectories(run["id"]):
        by_item.setdefault(t["item_id"], {})[t["replicate"]] = t
    k = run["replicates"]
    items = [i for i, reps in by_item.items() if all(r in reps for r in range(k))]
    samples = [[by_item[i][r] for r in range(k)] for i in items]
    return run, items, samples, len(by_item) - len(items)


def vote_key(sample: dict[str, Any]) -> str | None:
    """What a sample votes for: its parsed letter (`predicted_index`), not the raw answer text, so "(b)",
    "B." and "b" are one vote for B; an unparsed or missing answer abstains."""
    index = sample.get("predicted_index")
    return "ABCD"[index] if isinstance(index, int) and 0 <= index < 4 else None


def _sample_view(store: Store, traj: dict[str, Any], index: int):
    from sandbox.judges import Sample

    steps = store.steps(traj["id"])
    reads = [s["text"] for s in steps if s["kind"] == "tool" and s["delivered"]]
    transcript = [{"kind": s["kind"], "tool": s["tool_name"], "args": s["tool_args"], "text": s["text"]} for s in steps]
    return Sample(index, traj["answer"], traj["predicted_index"], reads, transcript)


def subsets(big_k: int, k: int, seed: int = 0) -> list[tuple[int, ...]]:
    """The k-subsets of the K samples every strategy at k is averaged over: the subsets pass@k averages over
    (`stats.parallel.k_subsets`: all C(K, k) of them up to 256, else 256 drawn with the report's seed), so at
    k = 1 a strategy is judged on each sample alone and at k not dividing K no sample is dropped."""
    return par.k_subsets(big_k, k, seed=seed)


async def judge_run(store: Store, run: dict[str, Any], items: list[str], samples, corpus, judge, ks: list[int],
                    n_orders: int = 8, seed: int = 0, ask: bool = True) -> dict[str, Any]:
    """Pointwise verdicts on every sample and pairwise verdicts along random orders, cached in the store.

    Pairwise orders are drawn within every k-subset of `subsets` (the subsets pass@k averages over), so
    an LLM judge may be asked up to K(K − 1) ordered pairs per item. The orders of (item, k, subset)
    come from their own seeded generator, so they do not depend on
    which other k are read (the TUI reading the recorded k, the CLI a new list, agree). With
    `ask=False` nothing is asked: a verdict not in the store is counted in `missing` (and an order
    that needs it is abandoned), so a paid judge is never called implicitly.
    """
    cache = store.judgments(run["id"], judge.name)
    missing = 0

    async def verdict(item, views, kind: str, a: int, b: int | None) -> bool | None:
        nonlocal missing
        key = (item.id, kind, a, b)
        if key not in cache:
            if not ask:
                missing += 1
                raise _Missing
            v = await (judge.pointwise(item, views()[a]) if b is None else
                       judge.pairwise(item, views()[a], views()[b]))
            store.add_judgment(run["id"], item.id, kind, judge.name, a, b, v.value, v.prompt, v.reply, v.tokens,
                               v.cost_usd)
            cache[key] = {"verdict": None if v.value is None else int(v.value)}
        value = cache[key]["verdict"]
        return None if value is None else bool(value)

    pointwise, tables, orders = [], [], {}
    for i, (item_id, rows) in enumerate(zip(items, samples)):
        item = corpus.item(item_id)
        views = _lazy(lambda rows=rows: [_sample_view(store, t, j) for j, t in enumerate(rows)])
        verdicts = []
        for j in range(len(rows)):
            try:
                verdicts.append(await verdict(item, views, "pointwise", j, None))
            except _Missing:
                verdicts.append(None)
        pointwise.append(verdicts)
        table: dict[tuple[int, int], bool] = {}
        for k in ks:
            for block in subsets(len(rows), k, seed):
                rng = random.Random(f"{seed}:{item_id}:{k}:{','.join(map(str, block))}")
                perms = []
                for _ in range(n_orders if k > 1 else 1):
                    order = list(block)
                    rng.shuffle(order)
                    perms.append(order)
                    leader = order[0]
                    try:
                        for challenger in order[1:]:
                            if (leader, challenger) not in table:  # unparsed keeps the leader
                                table[(leader, challenger)] = bool(await verdict(item, views, "pairwise", leader,
                                                                                 challenger))
                            if table[(leader, challenger)]:
                                leader = challenger
                    except _Missing:
                        continue
                orders[(i, k, block)] = perms
        tables.append(table)
    return {"pointwise": pointwise, "tables": tables, "orders": orders, "missing": missing}


class _Missing(Exception):
    """A verdict the store does not hold, in stored-verdicts-only mode."""


def _lazy(make):
    """A zero-argument function computing `make()` once, on first call (sample views read every step)."""
    box: list[Any] = []

    def get():
        if not box:
            box.append(make())
        return box[0]
    return get


def recorded_judge(run: dict[str, Any]):
    """The judge a parallel run was last read with (`--judge`, recorded), as the TUI must use it.

    `evidence` (offline, free) is the judge itself; `none` is None; `same` or a model string is a
    `StoredJudge` of that name: its stored verdicts are read, never asked for (no implicit spend).
    Runs recorded before the judge was stored read with the default, `evidence`.
    """
    from sandbox.judges import EvidenceJudge, StoredJudge

    name = ((run.get("config") or {}).get("scaling") or {}).get("judge") or "evidence"
    if name == "none":
        return None
    if name == "evidence":
        return EvidenceJudge()
    return StoredJudge(f"llm:{run['model'] if name == 'same' else name}")


async def parallel_report(store: Store, run_name: str, corpus, ks: list[int], judge=None, n_orders: int = 8,
                          seed: int = 0, verdicts: str = "ask") -> dict[str, Any]:
    """pass@k, majority vote, pointwise and pairwise selection, and the verification gap, per k, with intervals.

    `verdicts="ask"` asks the judge for any verdict not yet stored; `"stored"` never calls it (the
    TUI must not spend money implicitly) and reports the judged strategies only when every verdict
    they need is stored, saying how many are missing otherwise.
    """
    run, items, samples, incomplete = parallel_samples(store, run_name, corpus)
    big_k = run["replicates"]
    wanted = sorted(set(ks))
    ks = [k for k in wanted if 1 <= k <= big_k]
    if not items or not ks:
        raise ScalingInputError(f"run '{run_name}' has no item with {big_k} samples, or no k ≤ {big_k}")
    correct = [[bool(t["correct"]) for t in rows] for rows in samples]
    answers = [[vote_key(t) for t in rows] for rows in samples]
    golds = ["ABCD"[corpus.item(i).correct_index] for i in items]
    judged = None
    missing = 0
    if judge is not None:
        judged = await judge_run(store, run, items, samples, corpus, judge, ks, n_orders, seed, ask=verdicts == "ask")
        missing = judged["missing"]
    pass1 = par.pass_at_k_items(correct, 1)
    spend = _spend(store, run, samples, judge)
    per_k = []
    for k in ks:
        parts = subsets(big_k, k, seed)
        oracle = par.pass_at_k_items(correct, k)
        per_item = {"pass_at_k": oracle, "majority": np.array([
            np.mean([par.majority_vote([answers[i][j] for j in b], golds[i]).expected_correct for b in parts])
            for i in range(len(items))])}
        coverage = None
        if judged and not missing:
            verdicts_of = judged["pointwise"]
            per_item["pointwise"] = np.array([
                np.mean([par.pointwise_selection([correct[i][j] for j in b], [verdicts_of[i][j] for j in b])
                         for b in parts]) for i in range(len(items))])
            per_item["pairwise"] = np.array([
                np.mean([_pairwise(correct[i], judged["tables"][i], judged["orders"][(i, k, b)], b) for b in parts])
                for i in range(len(items))])
            coverage = float(np.mean([
                np.mean([par.accepted_coverage([correct[i][j] for j in b], [verdicts_of[i][j] for j in b])
                         for b in parts]) for i in range(len(items))]))
        row = _k_row(k, big_k, len(parts), per_item, pass1, spend, seed)
        row["subsets"], row["subsets_all"] = len(parts), len(parts) == math.comb(big_k, k)
        if coverage is not None:
            row["accepted_coverage"] = coverage  # the study's `self_choice_best@k`: not a selection (§3.4)
        per_k.append(row)
    return {"run": run_name, "k_max": big_k, "items": len(items), "items_incomplete": incomplete,
            "measured": measures_tokens(run),
            "ks_unavailable": [k for k in wanted if k not in ks],
            "judge": judge.name if judge else None, "verdicts": verdicts if judge else None,
            "verdicts_missing": missing if judge else None,
            "tie_rule": TIE_RULE,
            "per_k": per_k, "sampling_cost_usd": spend["sampling_usd"], "sampling_tokens": spend["sampling_tokens"],
            "judge_cost_usd": spend["judge_usd"], "judge_tokens": spend["judge_tokens"],
            "cost_rule": "at k: k/K of the sampling spend, plus the judge verdicts a strategy needs at k (pointwise: k "
                         "per item; pairwise: k − 1 per item) at the mean stored price of one verdict; accuracy per $ "
                         "and per million tokens divide by the mean spend per item"}


TIE_RULE = ("at k: the mean over the k-subsets of the K samples, as pass@k (all C(K, k) up to 256, else 256 seeded); "
            "majority: parsed letters, ties split evenly; pointwise self-choice (General AgentBench): a random accepted "
            "sample, none accepted = no answer, so k = 1 is P(correct ∧ accepted), not pass@1 (accepted_coverage: the "
            "study's self_choice_best@k, not a selection); pairwise: leader kept on ties and unparsed verdicts, random "
            "orders")


def _k_row(k: int, big_k: int, n_subsets: int, per_item: dict[str, np.ndarray], pass1: np.ndarray,
           spend: dict[str, Any], seed: int) -> dict[str, Any]:
    """One k: each strategy with its interval, its gap to pass@k with the paired interval, the relative gap and
    the selection efficiency, and what committing at k costs."""
    n = len(pass1)
    cis = par.strategies_ci(per_item, seed=seed) if n >= 2 else {}
    row: dict[str, Any] = {"k": k, "n": n, "blocks": n_subsets}  # `blocks` kept for JSON readers: the k-subsets
    for name, values in per_item.items():
        row[name] = float(np.mean(values))
        if name in cis:
            row[f"{name}_ci"] = [cis[name].low, cis[name].high]
            row[f"{name}_ci_no_variation"] = cis[name].no_variation
    sampling_usd = None if spend["sampling_usd"] is None else spend["sampling_usd"] * k / big_k
    sampling_tokens = spend["sampling_tokens"] * k / big_k
    row["sampling_cost_usd"], row["sampling_tokens"] = sampling_usd, sampling_tokens
    for name, values in per_item.items():
        if name == "pass_at_k":
            continue
        gap = par.verification_gap(per_item["pass_at_k"], values, pass1=pass1, seed=seed) if n >= 2 else None
        row[f"gap_{name}"] = float(np.mean(per_item["pass_at_k"]) - np.mean(values))
        row[f"gap_{name}_ci"] = [gap["ci"]["gap"]["low"], gap["ci"]["gap"]["high"]] if gap else None
        row[f"gap_{name}_ci_no_variation"] = bool(gap) and no_variation(*row[f"gap_{name}_ci"])
        row[f"relative_gap_{name}"] = gap["relative_gap"] if gap else None
        row[f"efficiency_{name}"] = gap.get("efficiency") if gap else None
        verdicts = {"majority": 0, "pointwise": k, "pairwise": k - 1}[name] * n
        price = spend["verdict_usd"][name]
        usd = None if sampling_usd is None or price is None else sampling_usd + price * verdicts  # unknown stays unknown
        tokens = sampling_tokens + (spend["verdict_tokens"][name] or 0) * verdicts
        row[f"cost_usd_{name}"], row[f"tokens_{name}"] = usd, tokens
        row[f"accuracy_per_usd_{name}"] = row[name] / (usd / n) if usd else None
        row[f"accuracy_per_million_tokens_{name}"] = row[name] / (tokens / n / 1e6) if tokens else None
    return row


def _spend(store: Store, run: dict[str, Any], samples, judge) -> dict[str, Any]:
    """Sampling and judging totals, and the mean price and tokens of one stored verdict of each kind.

    An offline judge (no model) costs nothing; an unpriced model's verdicts leave the cost unknown (None).
    """
    costs = [t["cost_usd"] for rows in samples for t in rows if t["cost_usd"] is not None]
    out: dict[str, Any] = {"sampling_usd": sum(costs) if costs else None,
                           "sampling_tokens": sum(t["tokens"] or 0 for rows in samples for t in rows),
                           "judge_usd": None, "judge_tokens": None,
                           "verdict_usd": {"majority": 0.0, "pointwise": None, "pairwise": None},
                           "verdict_tokens": {"majority": 0, "pointwise": None, "pairwise": None}}
    if judge is None:
        return out
    model = judge.name.startswith("llm:")
    rows = store.judgment_costs(run["id"], judge.name)
    usd_total = tokens_total = 0.0
    priced = False
    for kind, mean_usd, n_priced, mean_tokens, sum_usd, sum_tokens in rows:
        out["verdict_usd"][kind] = (mean_usd if n_priced else None) if model else 0.0
        out["verdict_tokens"][kind] = mean_tokens or 0
        usd_total += sum_usd or 0.0
        tokens_total += sum_tokens or 0
        priced = priced or bool(n_priced)
    for kind in ("pointwise", "pairwise"):
        if not model:
            out["verdict_usd"][kind] = 0.0
            out["verdict_tokens"][kind] = 0
    out["judge_usd"] = (usd_total if priced else None) if model else 0.0
    out["judge_tokens"] = int(tokens_total)
    return out


def _pairwise(correct: list[bool], pairs: dict[tuple[int, int], bool], orders: list[list[int]],
              block: tuple[int, ...]) -> float:
    """`stats.parallel.pairwise_selection` on one k-subset, its sample indices made local."""
    local = {g: n for n, g in enumerate(block)}
    table = [[pairs.get((a, b)) for b in block] for a in block]
    return par.pairwise_selection([correct[j] for j in block], table, [[local[g] for g in o] for o in orders])


# ---------------------------------------------------------------- figures (plotext; the CLI and the TUI draw the same)

Palette = dict[str, tuple[int, int, int] | str]
STRATEGIES = ("pass_at_k", "majority", "pointwise", "pairwise")
TERMINAL_PALETTE: Palette = {"line": "blue", "gain": "green", "loss": "red", "mark": "yellow", "shade": "gray",
                             "pass_at_k": "blue", "majority": "magenta", "pointwise": "cyan", "pairwise": "green"}


def flags(result: dict[str, Any]) -> list[str]:
    """The plateau's caveats in words: censored, no significant gain, borderline, degenerate variance, FPC 0,
    and budget levels that sit at or below the prompt overhead or that no item reached."""
    names = [name for name in ("censored", "no_significant_gain", "degenerate_variance", "fpc_zero")
             if result.get(name)]
    if any(t.get("borderline") for t in result["transitions"]):
        names.append("borderline")
    out = [n.replace("_", " ") for n in names]
    levels = result.get("levels") or []
    degenerate = [str(lv["budget"]) for lv in levels if lv.get("degenerate")]
    never = [str(lv["budget"]) for lv in levels if lv.get("never_reached")]
    if degenerate:
        out.append(f"at/below the prompt overhead: {', '.join(degenerate)}")
    if never:
        out.append(f"never reached: {', '.join(never)}")
    return out


LEVEL_COLUMNS = ("budget", "n", "acc", "tokens", "cost", "acc/$", "acc/Mtok", "cont.", "reached", "max", "flag")


LEVELS_NOTE = ("tokens, cost: the level's own / with the levels below it (continuation chain); acc/$, acc/Mtok: "
               "accuracy per mean chain spend per item; reached: items over the level's cap (STOP: told to answer); "
               "max: the furthest any item went (context tokens, turns or points)")


NOT_MEASURED = "—"  # a scripted agent's cost and tokens: no model, so nothing measured (as the run reports show)


def spent(usd: float | None, measured: bool = True) -> str:
    """An amount of money: `—` for a scripted agent (no model), `unpriced` for a model without prices."""
    if not measured:
        return NOT_MEASURED
    return "unpriced" if usd is None else f"${usd:.4f}"


def _pair(marginal: float | None, cumulative: float | None, fmt: str, measured: bool = True) -> str:
    """One figure when a level stands alone; `level / chain` when its answers also cost the levels below."""
    if not measured:
        return NOT_MEASURED
    if cumulative is None:
        return "unpriced"
    if marginal == cumulative:
        return format(cumulative, fmt)
    return f"{format(marginal or 0, fmt)} / {format(cumulative, fmt)}"


def level_cells(level: dict[str, Any]) -> list[str]:
    """A budget level as text cells (the CLI table and the TUI show the same)."""
    def per(value: float | None) -> str:
        return "—" if value is None else f"{value:.3g}"

    note = []
    if level.get("degenerate"):
        note.append(f"≤ overhead ({level['overhead_tokens']:,.0f})")
    if level.get("never_reached"):
        note.append("never reached")
    reached = str(level["n_reached"]) + (f" ({level['n_stopped']} STOP)" if level.get("n_stopped") else "")
    accuracy = "—" if level["accuracy"] is None else f"{100 * level['accuracy']:.1f}%"
    return [str(level["budget"]), str(level["n"]), accuracy,
            _pair(level["tokens_marginal"], level["tokens_cumulative"], ",.0f", level.get("measured", True)),
            _pair(level["cost_usd_marginal"], level["cost_usd_cumulative"], ".4f", level.get("measured", True)),
            per(level["accuracy_per_usd"]), per(level["accuracy_per_million_tokens"]), str(level["continues"]),
            reached, f"{level['max_reached']:,}", "; ".join(note)]


def trials_note(result: dict[str, Any]) -> str:
    """How T > 1 trials per item were resampled, for the plateau's header line ('' with one trial)."""
    if result.get("n_trials", 1) <= 1:
        return ""
    pairing = "matched" if result.get("matched_trials") else "unmatched"
    design = "two-stage bootstrap" if result.get("two_stage") else "cluster bootstrap"
    return f", T = {result['n_trials']} trials, {design} ({pairing} trials)"


def strategies(report: dict[str, Any]) -> list[str]:
    return [n for n in STRATEGIES if report["per_k"] and n in report["per_k"][0]]


# ---------------------------------------------------------------- tables and CSV (the CLI and the TUI show the same)

TRANSITION_CSV = ("from", "to", "d_bar", "sigma_boot", "c_k", "significant", "tested", "borderline", "improved",
                  "worsened", "sign_test_p")
SHORT = {"pass_at_k": "pass@k", "majority": "majority", "pointwise": "pointwise", "pairwise": "pairwise"}
GAP_SHORT = {"majority": "Δ maj", "pointwise": "Δ point", "pairwise": "Δ pair"}


def transition_csv(result: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    return list(TRANSITION_CSV), [[t.get(h) for h in TRANSITION_CSV] for t in result["transitions"]]


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _per(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def parallel_columns(report: dict[str, Any]) -> list[str]:
    """k, each strategy (value over its interval), and each strategy's verification gap in points."""
    names = strategies(report)
    return ["k", *(SHORT[n] for n in names), *(GAP_SHORT[n] for n in names[1:])]


def _interval(ci: list[float] | None, compact: bool) -> str:
    """A 95% interval in points: `[lo, hi]`, or `lo–hi` where columns are narrow (the TUI); "no variation" when
    every resample gave the same value (every item's value equal), which is no certainty and no interval."""
    if not ci:
        return ""
    if no_variation(*ci):
        return "\nno variation"
    lo, hi = 100 * ci[0], 100 * ci[1]
    return f"\n{lo:.1f}–{hi:.1f}" if compact else f"\n[{lo:.1f}, {hi:.1f}]"


def parallel_cells(report: dict[str, Any], row: dict[str, Any], compact: bool = False) -> list[str]:
    """Per k: each value over its 95% interval, each gap (points, pass@k − strategy) over its paired interval."""
    names = strategies(report)
    cells = [str(row["k"])]
    for name in names:
        cells.append(_pct(row[name]) + _interval(row.get(f"{name}_ci"), compact))
    for name in names[1:]:
        cells.append(f"{row[f'gap_{name}'] * 100:+.1f}" + _interval(row.get(f"gap_{name}_ci"), compact))
    return cells


def verdicts_note(report: dict[str, Any]) -> str:
    """What the judged strategies rest on when verdicts were read from the store only ('' when asked for)."""
    if report.get("verdicts") != "stored":
        return ""
    missing = report.get("verdicts_missing") or 0
    if not missing:
        return f"judge {report['judge']}: stored verdicts (never asked from here)"
    return (f"judge {report['judge']}: stored verdicts only, {missing} missing, so pointwise and pairwise are not "
            f"shown; `scale parallel --run {report['run']} --judge …` asks for them")


def cost_columns(report: dict[str, Any]) -> list[str]:
    return ["k", "sampling", *(SHORT[n] for n in strategies(report)[1:])]


def _tokens(n: float) -> str:
    return f"{n:,.0f}" if n < 1e4 else (f"{n / 1e3:.1f}k" if n < 1e6 else f"{n / 1e6:.2f}M")


def cost_cells(report: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """Per k: what sampling k of K costs; per strategy its relative gap (gap / pass@k) and efficiency
    ((strategy − pass@1)/(pass@k − pass@1)), what committing at k costs, and its accuracy per dollar and per
    million tokens."""
    measured = report.get("measured", True)

    def money(usd: float | None) -> str:
        return spent(usd, measured)

    def tokens(n: float) -> str:
        return f"{_tokens(n)} tok" if measured else NOT_MEASURED

    def per(value: float | None, unit: str) -> str:
        return f"{_per(value if measured else None)}/{unit}"

    cells = [str(row["k"]), f"{money(row['sampling_cost_usd'])}\n{tokens(row['sampling_tokens'])}"]
    for name in strategies(report)[1:]:
        efficiency = row.get(f"efficiency_{name}")
        cells.append(f"rel {_pct(row.get(f'relative_gap_{name}'))} · eff "
                     f"{'—' if efficiency is None else f'{efficiency:.2f}'}\n"
                     f"{money(row[f'cost_usd_{name}'])} · {tokens(row[f'tokens_{name}'])}\n"
                     f"{per(row[f'accuracy_per_usd_{name}'], '$')} · {per(row[f'accuracy_per_million_tokens_{name}'], 'Mtok')}")
    return cells


def parallel_csv(report: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """One row per k, numbers only: every strategy with its interval, gap, interval, relative gap, efficiency,
    cost, tokens, accuracy per dollar and per million tokens; then the k-subsets averaged over and, with a judge,
    the study's accepted coverage (`self_choice_best@k`, not a selection)."""
    names = strategies(report)
    header = ["k", "n", "blocks", "sampling_cost_usd", "sampling_tokens"]
    for name in names:
        header += [name, f"{name}_ci_low", f"{name}_ci_high"]
    for name in names[1:]:
        header += [f"gap_{name}", f"gap_{name}_ci_low", f"gap_{name}_ci_high", f"relative_gap_{name}",
                   f"efficiency_{name}", f"cost_usd_{name}", f"tokens_{name}", f"accuracy_per_usd_{name}",
                   f"accuracy_per_million_tokens_{name}"]
    coverage = any("accepted_coverage" in row for row in report["per_k"])
    header += ["subsets", "accepted_coverage"] if coverage else ["subsets"]
    rows = []
    for row in report["per_k"]:
        cells = [row["k"], row["n"], row["blocks"], row["sampling_cost_usd"], row["sampling_tokens"]]
        for name in names:
            cells += [row[name], *(row.get(f"{name}_ci") or [None, None])]
        for name in names[1:]:
            cells += [row[f"gap_{name}"], *(row.get(f"gap_{name}_ci") or [None, None]), row[f"relative_gap_{name}"],
                      row[f"efficiency_{name}"], row[f"cost_usd_{name}"], row[f"tokens_{name}"],
                      row[f"accuracy_per_usd_{name}"], row[f"accuracy_per_million_tokens_{name}"]]
        cells.append(row.get("subsets", row["blocks"]))
        if coverage:
            cells.append(row.get("accepted_coverage"))
        rows.append(cells)
    return header, rows


def _figure(width: int, height: int):
    import plotext as plt

    plt.main()  # after subplots the active figure is a subplot: reset the whole (master) figure
    plt.clear_figure()
    plt.limit_size(False, False)  # the widget's size, not the (headless or real) terminal's, bounds the figure
    plt.theme("clear")
    plt.plotsize(max(20, width), max(6, height))
    return plt


def axis_ticks(lo: float, hi: float, n: int) -> tuple[list[float], list[str]]:
    """`n` evenly spaced ticks over [lo, hi], labelled with the decimals their step needs. Set explicitly because
    plotext's own labels can read `-0.000` for a value a hair below zero; here a label rounding to zero reads 0."""
    if hi - lo < 1e-3:  # a flat series: a band around it (labels keep at most four decimals)
        mid = (lo + hi) / 2
        lo, hi = mid - 0.05, mid + 0.05
    n = max(2, n)
    step = (hi - lo) / (n - 1)
    decimals = min(4, max(0, 1 - math.floor(math.log10(step))))  # two significant digits of the step
    values = [lo + i * step for i in range(n)]
    return values, [f"{round(v, decimals) + 0.0:.{decimals}f}" for v in values]  # + 0.0 turns -0.0 into 0.0


def _yticks(plt, values: list[float], rows: int) -> None:
    """Label the y axis of the current (sub)plot (`rows` tall) over `values`' range, about one tick every other
    row."""
    ticks, labels = axis_ticks(min(values), max(values), min(6, rows // 2 + 1))
    plt.yticks(ticks, labels)


def _build(plt, palette: Palette | None) -> str:
    text = plt.build()
    return text if palette else plt.uncolorize(text)


def decision(t: dict[str, Any]) -> str:
    """A transition's decision in words (the table, the TUI and the plot label say the same)."""
    if not t.get("tested", True):
        return "not tested (Holm stopped)"
    if t["significant"]:
        return "gain (borderline)" if t.get("borderline") else "gain"
    return "no gain, borderline" if t.get("borderline") else "no significant gain"


def bar_label(t: dict[str, Any]) -> str:
    """The transition with its decision in words, so a colourless bar still says what it is."""
    if not t.get("tested", True):
        sign = "not tested"
    else:
        sign = "gain" if t["significant"] else ("borderline" if t.get("borderline") else "no gain")
    return f"{t['from']}→{t['to']} {sign}"


_SIGN_MARK = {"gain": "+", "borderline": "~", "no gain": "-", "not tested": "?"}


def bar_ticks(transitions: list[dict[str, Any]], width: int) -> list[str]:
    """One label per bar, the longest form that fits its slot: plotext drops a tick label that would overlap
    its neighbour (or the frame), so `16→32 no gain` for a few bars, `16→32 -` (+ gain, ~ borderline, - no
    gain, ? not tested; the table above says it in words) or `16→32` when many share the width, the
    transition's number if even that does not fit."""
    slot = max((width - 12) // max(len(transitions), 1) - 2, 1)  # less the y-axis labels, a margin each side
    marked = [f"{t['from']}→{t['to']} {_SIGN_MARK[bar_label(t).split(' ', 1)[1]]}" for t in transitions]
    for labels in ([bar_label(t) for t in transitions], marked, [f"{t['from']}→{t['to']}" for t in transitions]):
        if max(map(len, labels)) <= slot:
            return labels
    return [str(i) for i in range(1, len(transitions) + 1)]


def c_k_text(t: dict[str, Any]) -> str:
    return "—" if t.get("c_k") is None else f"{t['c_k']:+.4f}"


def plateau_figure(result: dict[str, Any], width: int, height: int, palette: Palette | None) -> str:
    """Accuracy per budget (line) with the plateau marked, above C_k per transition (bars coloured by sign)."""
    pal = palette or {}
    labels = [str(b) for b in result["budgets"]]
    x = list(range(1, len(labels) + 1))
    plt = _figure(width, height)
    plt.subplots(2, 1)
    plt.subplot(1, 1)
    k = result.get("k_star")
    caveats = flags(result)
    plt.title(f"accuracy by budget · plateau at {result.get('plateau_budget')} (k*={k})"
              + (f" · {', '.join(caveats)}" if caveats else ""))
    plt.plot(x, result["accuracy"], marker="dot", color=pal.get("line"))
    _yticks(plt, result["accuracy"], height // 2 - 4)
    if k:
        plt.vline(k, pal.get("mark"))
        plt.text(f"plateau {result.get('plateau_budget')}", k, max(result["accuracy"]), color=pal.get("mark"),
                 alignment="left")
    plt.xticks(x, labels)
    plt.subplot(2, 1)
    transitions = result["transitions"]
    if transitions:
        positions = list(range(1, len(transitions) + 1))
        plt.title("C_k: one-sided lower bound of the gain (coloured: significant gain or not)")
        for role, significant in (("gain", True), ("loss", False)):
            # coloured by the decision the label states (under Holm a C_k > 0 can be not significant);
            # untested transitions have no bound and no bar
            xs = [p for p, t in zip(positions, transitions) if t["significant"] is significant
                  and t.get("c_k") is not None]
            if xs:  # one series per decision, drawn only where it applies (no zero-height bars)
                plt.bar(xs, [transitions[p - 1]["c_k"] for p in xs], color=pal.get(role), width=0.5)
        bounds = [t["c_k"] for t in transitions if t.get("c_k") is not None]
        if bounds:
            _yticks(plt, [0.0, *bounds], height // 2 - 4)  # bars stand on zero
        plt.xticks(positions, bar_ticks(transitions, width))
        plt.xlim(0.5, len(transitions) + 0.5)
    return _build(plt, palette)


MARKERS = {"pass_at_k": "o", "majority": "x", "pointwise": "+", "pairwise": "*"}  # tell the lines apart uncoloured


def parallel_figure(report: dict[str, Any], width: int, height: int, palette: Palette | None) -> str:
    """pass@k and each committing strategy against k (the gap is the distance between the lines), with a legend;
    each line has its own marker, so the series are told apart without colour (NO_COLOR, an ANSI theme)."""
    pal = palette or {}
    rows = report["per_k"]
    x = [r["k"] for r in rows]
    plt = _figure(width, height)
    plt.title("pass@k vs committed accuracy" + (f" (judge {report['judge']})" if report.get("judge") else "")
              + " · ░ gap to the best strategy")
    names = strategies(report)
    best = [max(r[n] for n in names[1:]) for r in rows] if len(names) > 1 else []
    if best and len(x) > 1:
        gx, gy = gap_points(x, best, [r["pass_at_k"] for r in rows], width, height)
        if gx:
            plt.scatter(gx, gy, marker="░", color=pal.get("shade"))
    for name in names:
        plt.plot(x, [r[name] for r in rows], label=SHORT[name], marker=MARKERS[name], color=pal.get(name))
    _yticks(plt, [r[n] for r in rows for n in names], height - 5)
    plt.xticks(x, [str(k) for k in x])
    plt.xlabel("k")
    return _build(plt, palette)


def gap_points(x: list[float], low: list[float], high: list[float], width: int,
               height: int) -> tuple[list[float], list[float]]:
    """Points filling the band between two piecewise-linear curves, about two per character cell each way
    (plotext has no fill-between: a dense scatter drawn under the lines shades the band, in any theme)."""
    top = max(max(high), max(low))
    bottom = min(min(high), min(low))
    span = (top - bottom) or 1.0
    columns = max(2, 2 * width)
    step_y = span / max(2, 2 * height)
    gx: list[float] = []
    gy: list[float] = []
    for i in range(columns + 1):
        at = x[0] + (x[-1] - x[0]) * i / columns
        j = max(0, min(len(x) - 2, next((n for n in range(len(x) - 1) if x[n + 1] >= at), len(x) - 2)))
        w = (at - x[j]) / ((x[j + 1] - x[j]) or 1)
        lo = low[j] + (low[j + 1] - low[j]) * w
        hi = high[j] + (high[j + 1] - high[j]) * w
        y = lo + step_y
        while y < hi - step_y / 2:
            gx.append(at)
            gy.append(y)
            y += step_y
    return gx, gy
