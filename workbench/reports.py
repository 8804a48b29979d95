"""The one place where store queries meet `stats`: the CLI and the TUI both call this, so they show the same numbers."""
from __future__ import annotations

from typing import Any

from stats import axes
from stats.ratio import Ratio
from storage import Store

PERCENT_KEYS = ("paper_recall", "section_recall", "conversion", "accuracy", "rate")


def values(obj: Any) -> Any:
    """Ratios replaced by their values, recursively."""
    if isinstance(obj, Ratio):
        return obj.value
    if isinstance(obj, dict):
        return {k: values(v) for k, v in obj.items()}
    return obj


def counts(obj: Any) -> Any:
    """Ratios replaced by [numerator, denominator], recursively (non-ratio leaves dropped)."""
    if isinstance(obj, Ratio):
        return obj.as_list()
    if isinstance(obj, dict):
        out = {k: counts(v) for k, v in obj.items()}
        return {k: v for k, v in out.items() if v is not None}
    return None


def run_report(store: Store, name: str) -> dict[str, Any]:
    """The foundation report of one run: accuracy, the four axes, terminations, splits, attribution."""
    run = store.run(name)
    return report_of(run, store.trajectories(run["id"]))


def report_of(run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """`run_report` from records already loaded (the panel loads each run once)."""
    four = axes.four_axes(records)
    acc = four.pop("accuracy")
    costs = [r["cost_usd"] for r in records if r.get("cost_usd") is not None]
    return {
        "run": run["name"],
        "agent": run["agent"],
        "model": run["model"],
        "dataset": run["dataset"],
        "ablation": run["ablation"],
        "status": run["status"],
        "n": len(records),
        "planned": run["planned"],
        "correct": int(acc.num),
        "accuracy": acc.value,
        "axes": values(four),
        "counts": {"accuracy": acc.as_list(), **counts(four)},
        "terminations": axes.terminations(records),
        "splits": {
            "type_depth": values(axes.type_depth(records)),
            "reasoning_type": values(axes.splits(records, "reasoning_type")),
            "consensus_tier": values(axes.splits(records, "consensus_tier")),
            "venue": values(axes.splits(records, "venue")),
        },
        "attribution": axes.attribution(records),
        "cost_usd": sum(costs) if costs else None,
        "priced": len(costs) == len(records) and bool(records),
    }


def runs_table(store: Store) -> list[dict[str, Any]]:
    """Rows of the runs list: name, agent/model, dataset, progress, accuracy, cost, status."""
    rows = []
    for r in store.runs():
        rows.append({
            "name": r["name"], "agent": r["agent"], "model": r["model"], "dataset": r["dataset"],
            "ablation": r["ablation"], "done": r["done"], "planned": r["planned"],
            "accuracy": (r["n_correct"] / r["done"]) if r["done"] else None,
            "cost_usd": r["cost"] if r["n_costed"] else None, "status": r["status"], "created_at": r["created_at"],
        })
    return rows


# ---------------------------------------------------------------- diagnostics (issue: four axes + analytics)

ACTION_KEYS = ("tool", "status", "paper", "paper_role", "delivered")


def with_actions(record: dict[str, Any]) -> dict[str, Any]:
    """A trajectory record whose compact actions are expanded to the dicts `stats.stopping` reads."""
    out = dict(record)
    out["actions"] = [dict(zip(ACTION_KEYS, a)) for a in record.get("actions") or []]
    out["n_gold"] = 2 if record.get("kind") == "mt" else 1
    return out


def position_bias(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Which letters the agent picks, where the gold letters are, and accuracy per gold letter (reference §5.3)."""
    letters = "ABCD"
    predicted = {k: 0 for k in letters}
    gold = {k: 0 for k in letters}
    right = {k: 0 for k in letters}
    for r in records:
        p = r.get("predicted_index")
        if isinstance(p, int) and 0 <= p < 4:
            predicted[letters[p]] += 1
        c = r.get("correct_index")
        if isinstance(c, int) and 0 <= c < 4:
            gold[letters[c]] += 1
            right[letters[c]] += int(bool(r.get("correct")))
    return {"predicted_distribution": predicted, "correct_position_distribution": gold,
            "accuracy_when_correct_at": {k: [right[k], gold[k]] for k in letters if gold[k]}}


def analytics(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Trajectory analytics of one run: bigram Δ-accuracy, top trigram, transitions, stopping behaviour."""
    from stats import ngrams, stopping

    sequences = [r.get("tool_sequence") or [] for r in records]
    correct = [bool(r.get("correct")) for r in records]
    bigrams = ngrams.bigram_delta_accuracy(sequences, correct) if records else []
    expanded = [with_actions(r) for r in records]
    return {
        "bigrams": [b for b in bigrams if b["n_with"]],
        "significant_bigrams": [b for b in bigrams if b["significant"]],
        "top_trigram": ngrams.top_trigram(sequences),
        "transitions": ngrams.transition_matrix(sequences),
        "stopping": stopping.stopping_behaviour(expanded),
    }


def intervals(records: list[dict[str, Any]], n_boot: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Bootstrap 95% intervals (seeded, vectorised) for accuracy, recall and conversion over all items."""
    from stats.bootstrap import bootstrap_mean_ci

    def ci(values: list[float]) -> dict[str, Any] | None:
        return bootstrap_mean_ci(values, n_boot=n_boot, seed=seed).as_dict() if len(values) >= 2 else None

    flag = lambda key: [float(bool(r.get(key))) for r in records]  # noqa: E731
    return {
        "accuracy": ci(flag("correct")),
        "paper_recall": ci(flag("paper_recall")),
        "section_recall": ci(flag("section_recall")),
        "conversion": ci([float(bool(r.get("correct"))) for r in records if r.get("paper_recall")]),
    }


def diagnostics(store: Store, name: str, ci: bool = False) -> dict[str, Any]:
    """The full single-run report: the foundation report plus position bias, analytics and (optionally) intervals."""
    run = store.run(name)
    records = store.trajectories(run["id"])
    report = report_of(run, records)
    report["position_bias"] = position_bias(records)
    report["analytics"] = analytics(records)
    if ci:
        report["intervals"] = intervals(records)
    return report


# ---------------------------------------------------------------- panel (paper Table 2) and comparisons

PANEL_COLUMNS = (
    ("accuracy", ("accuracy",)),
    ("PR st", ("axes", "search", "paper_recall", "st")), ("PR mt", ("axes", "search", "paper_recall", "mt")),
    ("SR st", ("axes", "search", "section_recall", "st")), ("SR mt", ("axes", "search", "section_recall", "mt")),
    ("Conv st", ("axes", "synthesis", "conversion", "st")), ("Conv mt", ("axes", "synthesis", "conversion", "mt")),
    ("calls/turn", ("axes", "tool_use", "calls_per_turn")),
    ("tokens", ("axes", "resource", "avg_tokens")), ("turns", ("axes", "resource", "avg_turns")),
    ("points", ("axes", "resource", "avg_points")),
    ("MaxTok", ("axes", "resource", "max_tokens_rate")), ("MaxTurn", ("axes", "resource", "max_turns_rate")),
    ("MaxBudget", ("axes", "resource", "max_budget_rate")),
)
LOWER_IS_BETTER = {"tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def item_matrix(runs_records: list[list[dict[str, Any]]]) -> tuple[list[str], list[list[int]]]:
    """Items answered by every run (replicate 0) and the item × run correctness matrix."""
    per_run = []
    for rows in runs_records:
        per_run.append({r["item_id"]: int(bool(r["correct"])) for r in rows if r["replicate"] == 0})
    common = [i for i in per_run[0] if all(i in run for run in per_run[1:])] if per_run else []
    return common, [[run[i] for run in per_run] for i in common]


def replicate_spread(records: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Run-to-run mean / std / range of accuracy over the replicates of one run."""
    from stats.significance import run_spread

    by_rep: dict[int, list[int]] = {}
    for r in records:
        by_rep.setdefault(r["replicate"], []).append(int(bool(r["correct"])))
    if len(by_rep) < 2:
        return None
    return run_spread([sum(v) / len(v) for _, v in sorted(by_rep.items())])


def panel_report(store: Store, names: list[str], external: dict[str, float] | None = None) -> dict[str, Any]:
    """A multi-run table shaped like the paper's Table 2 (best cell marked), plus panel statistics."""
    from stats import ngrams
    from stats.significance import coverage_histogram, cronbach_alpha, item_total_correlations, spearman

    runs = [store.run(n) for n in names]
    loaded = [store.trajectories(r["id"], light=True) for r in runs]
    reports = [report_of(run, records) for run, records in zip(runs, loaded)]
    rows = []
    for rep in reports:
        rows.append({"run": rep["run"], "agent": rep["agent"], "model": rep["model"], "ablation": rep["ablation"],
                     "n": rep["n"], **{col: _dig(rep, path) for col, path in PANEL_COLUMNS}})
    best: dict[str, list[str]] = {}
    for col, _ in PANEL_COLUMNS:
        vals = [r[col] for r in rows if r[col] is not None]
        if len(set(vals)) > 1:  # a column where every run ties has no best cell
            top = (min if col in LOWER_IS_BETTER else max)(vals)
            best[col] = [r["run"] for r in rows if r[col] == top]
    common, matrix = item_matrix(loaded)
    panel: dict[str, Any] = {"rows": rows, "best": best, "n_common_items": len(common)}
    if len(names) >= 2 and common:
        panel["cronbach_alpha"] = cronbach_alpha(matrix)
        panel["coverage"] = coverage_histogram(matrix)
        if len(names) >= 3 and len(common) >= 2:
            itc = item_total_correlations(matrix)
            panel["item_total_correlation"] = {i: (None if v != v else float(v)) for i, v in zip(common, itc)}
    sequences = [[r.get("tool_sequence") or [] for r in records] for records in loaded]
    correct = [[bool(r["correct"]) for r in records] for records in loaded]
    per_run = [ngrams.bigram_delta_accuracy(s, c) for s, c in zip(sequences, correct) if s]
    panel["bigram_panel"] = [b for b in ngrams.panel_mean_delta(per_run) if b["n_runs"]] if per_run else []
    panel["replicates"] = {n: replicate_spread(records) for n, records in zip(names, loaded)}
    panel["ablation_lift"] = ablation_lift(reports)
    if external:
        pairs = [(r["accuracy"], external[r["run"]]) for r in rows if r["run"] in external and r["accuracy"] is not None]
        panel["external"] = spearman([p[0] for p in pairs], [p[1] for p in pairs]) if len(pairs) >= 3 else {
            "error": f"need at least 3 runs with external scores, got {len(pairs)}"}
    return panel


def ablation_lift(reports: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Full-tool minus zero-tool (closed-book) accuracy for runs of the same agent and model on the same data."""
    out = []
    for full in reports:
        if full["ablation"] != "full":
            continue
        for closed in reports:
            if (closed["ablation"] == "closed-book" and closed["agent"] == full["agent"]
                    and closed["model"] == full["model"] and closed["dataset"] == full["dataset"]):
                lift = None if full["accuracy"] is None or closed["accuracy"] is None else full["accuracy"] - closed["accuracy"]
                out.append({"full": full["run"], "closed_book": closed["run"], "lift": lift})
    return out


_MEANS = {"tokens": "tokens", "turns": "turns", "points": "points_used"}
_CAPS = {"MaxTok": "token_limit", "MaxTurn": "max_turns", "MaxBudget": "budget"}
_RECALL = {"PR": "paper_recall", "SR": "section_recall"}


def axis_terms(axis: str, r: dict[str, Any]) -> tuple[float, float]:
    """Item `r`'s contribution to a compared axis as (numerator, denominator) of a ratio of sums, so that
    one paired bootstrap serves every axis (accuracy: correct / 1; Conv st: correct∧recalled / recalled
    among ST items; tokens: tokens / 1)."""
    head, _, kind = axis.partition(" ")
    in_split = float(not kind or r.get("kind") == kind)
    if axis == "accuracy":
        return float(bool(r.get("correct"))), 1.0
    if head in _RECALL:
        return float(bool(r.get(_RECALL[head]))) * in_split, in_split
    if head == "Conv":
        recalled = float(bool(r.get("paper_recall"))) * in_split
        return float(bool(r.get("correct"))) * recalled, recalled
    if axis == "calls/turn":
        return float(r.get("tool_calls") or 0), float(r.get("turns_with_calls") or 0)
    if axis in _MEANS:
        return float(r.get(_MEANS[axis]) or 0), 1.0
    return float(r.get("termination") == _CAPS[axis]), 1.0


def paired_outcomes(axis: str, a: dict[str, Any], b: dict[str, Any]) -> tuple[bool, bool] | None:
    """The 0/1 outcomes McNemar compares for one item on a binary axis; None when the item is not in the
    test (another split; for conversion, not recalled by both) or the axis is not binary."""
    head, _, kind = axis.partition(" ")
    if kind and a.get("kind") != kind:
        return None
    if axis == "accuracy":
        return bool(a.get("correct")), bool(b.get("correct"))
    if head in _RECALL:
        return bool(a.get(_RECALL[head])), bool(b.get(_RECALL[head]))
    if head == "Conv":
        if not (a.get("paper_recall") and b.get("paper_recall")):
            return None
        return bool(a.get("correct")), bool(b.get("correct"))
    if axis in _CAPS:
        return a.get("termination") == _CAPS[axis], b.get("termination") == _CAPS[axis]
    return None


def _side(t: dict[str, Any]) -> dict[str, Any]:
    """What the agreement grid and the split stepper need of one run's trajectory on an item."""
    return {"id": t["id"], "answer": t.get("answer"), "predicted_index": t.get("predicted_index"), "correct": bool(t.get("correct")), "termination": t.get("termination"),
            "points": t.get("points_used"), "turns": t.get("turns"), "tokens": t.get("tokens"),
            "paper_recall": bool(t.get("paper_recall")), "section_recall": bool(t.get("section_recall"))}


def tool_use(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Transitions (as `transition_report` lays them out) and the top trigram of some trajectories."""
    from stats.ngrams import top_trigram, transition_matrix

    sequences = [r.get("tool_sequence") or [] for r in records]
    tm = transition_matrix(sequences)
    return {"transitions": {"names": tm["tools"], "counts": tm["counts"], "rates": tm["probabilities"],
                            "n": len(sequences)}, "top_trigram": top_trigram(sequences)}


def compare_report(store: Store, a: str, b: str, n_boot: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Two runs on their common items (replicate 0): per-axis values, Δ = B − A with a paired bootstrap 95%
    interval, exact McNemar on every 0/1 axis (conversion: on the items both recalled), the agreement grid
    with item ids, distractor attribution, terminations, tool use, and the sentence naming what separates them.

    A and B values are the diagnostics' own (`report_of` over the common items), so they equal what
    `report` prints for the same trajectories.
    """
    import numpy as np

    from stats.bootstrap import paired_ratio_deltas
    from stats.significance import mcnemar_exact

    run_a, run_b = store.run(a), store.run(b)
    ta = {t["item_id"]: t for t in store.trajectories(run_a["id"]) if t["replicate"] == 0}
    tb = {t["item_id"]: t for t in store.trajectories(run_b["id"]) if t["replicate"] == 0}
    common = [i for i in ta if i in tb]
    recs_a, recs_b = [ta[i] for i in common], [tb[i] for i in common]
    ra, rb = report_of(run_a, recs_a), report_of(run_b, recs_b)
    grid: dict[str, list[str]] = {"both_right": [], "only_a": [], "only_b": [], "both_wrong": []}
    for i in common:
        ca, cb = bool(ta[i]["correct"]), bool(tb[i]["correct"])
        grid["both_right" if ca and cb else "only_a" if ca else "only_b" if cb else "both_wrong"].append(i)
    names = [col for col, _ in PANEL_COLUMNS]
    intervals: list[tuple[float | None, float | None, float | None]] = [(None, None, None)] * len(names)
    if len(common) >= 2:
        terms_a = np.array([[axis_terms(c, r) for c in names] for r in recs_a])  # (n, axes, 2)
        terms_b = np.array([[axis_terms(c, r) for c in names] for r in recs_b])
        intervals = paired_ratio_deltas(terms_a[..., 0], terms_a[..., 1], terms_b[..., 0], terms_b[..., 1],
                                        n_boot=n_boot, seed=seed)
    rows = []
    for (col, path), (_, low, high) in zip(PANEL_COLUMNS, intervals):
        va, vb = _dig(ra, path), _dig(rb, path)
        row = {"axis": col, "a": va, "b": vb, "delta": None if va is None or vb is None else vb - va,
               "ci_low": low, "ci_high": high, "p": None, "test": None}
        pairs = [o for o in (paired_outcomes(col, ta[i], tb[i]) for i in common) if o is not None]
        if pairs:
            row["test"] = mcnemar_exact([x for x, _ in pairs], [y for _, y in pairs])
            row["p"] = row["test"]["p"]
        rows.append(row)
    tests = {"accuracy": rows[0]["test"]}
    recalled = [i for i in common if ta[i]["paper_recall"] and tb[i]["paper_recall"]]
    tests["conversion_common_recalled"] = mcnemar_exact(
        [bool(ta[i]["correct"]) for i in recalled], [bool(tb[i]["correct"]) for i in recalled]) if recalled else None
    for key in ("paper_recall", "section_recall"):
        tests[key] = mcnemar_exact([bool(ta[i][key]) for i in common], [bool(tb[i][key]) for i in common]) if common else None
    warnings = []
    if run_a["dataset_fingerprint"] != run_b["dataset_fingerprint"]:
        warnings.append("A and B ran on different datasets (their fingerprints differ): items are paired by id only, "
                        "and an id may name a different question in each")
    return {"a": a, "b": b, "warnings": warnings, "n_common": len(common), "only_in_a": len(ta) - len(common), "only_in_b": len(tb) - len(common),
            "runs": {"a": _run_label(run_a), "b": _run_label(run_b)}, "rows": rows, "tests": tests,
            "n_boot": n_boot, "seed": seed,
            "agreement": {k: {"n": len(v), "items": v} for k, v in grid.items()},
            "items": {i: {"kind": ta[i].get("kind"), "depth": ta[i].get("depth"), "a": _side(ta[i]), "b": _side(tb[i])}
                      for i in common},
            "attribution": {"a": ra["attribution"], "b": rb["attribution"]},
            "terminations": {"a": ra["terminations"], "b": rb["terminations"]},
            "tool_use": {"a": tool_use(recs_a), "b": tool_use(recs_b)},
            "summary": separating_axis(rows)}


def _run_label(run: dict[str, Any]) -> dict[str, Any]:
    return {"name": run["name"], "agent": run["agent"], "model": run["model"], "ablation": run["ablation"],
            "dataset": run["dataset"], "dataset_fingerprint": run["dataset_fingerprint"]}


def separating_axis(rows: list[dict[str, Any]]) -> str:
    """A plain-language sentence naming the recall or conversion split that separates the runs most."""
    shares = {r["axis"]: r for r in rows if r["axis"].startswith(("PR", "SR", "Conv")) and r["delta"] is not None}
    if not shares:
        return "No recall or conversion split can be compared."
    axis, row = max(shares.items(), key=lambda kv: abs(kv[1]["delta"]))
    kind, split = axis.split()
    if abs(row["delta"]) < 1e-12:
        return "A and B do not differ on recall or conversion."
    what = {"PR": "retrieves the gold papers", "SR": "reads the labelled sections",
            "Conv": "converts"}[kind]
    same_recall = shares.get(f"PR {split}")
    lead = "retrieves as well as A but " if kind == "Conv" and same_recall and abs(same_recall["delta"]) < 0.02 else ""
    where = "single-target" if split == "st" else "multi-target"
    direction = "more" if row["delta"] > 0 else "less"
    sentence = f"B {lead}{what} {abs(row['delta']) * 100:.0f} points {direction} than A on {where} items"
    if row.get("p") is not None:
        sentence += f" (McNemar p = {row['p']:.2g})"
    return sentence + "."


def transition_report(store: Store, name: str) -> dict[str, Any]:
    """The 7×7 tool transition matrix of a run (counts and row shares), from each trajectory's tool sequence."""
    run = store.run(name)
    return transitions_of(run, store.trajectories(run["id"], light=True))


def transitions_of(run: dict[str, Any], records: list[dict[str, Any]]) -> dict[str, Any]:
    """`transition_report` from records already loaded."""
    from stats.ngrams import transition_matrix

    sequences = [t.get("tool_sequence") or [] for t in records]
    tm = transition_matrix(sequences)
    return {"run": run["name"], "names": tm["tools"], "counts": tm["counts"], "rates": tm["probabilities"],
            "n": len(sequences)}


def run_diagnostics(store: Store, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`run_report` and `transition_report` of one run from a single read of its trajectories (the TUI's tab)."""
    run = store.run(name)
    records = store.trajectories(run["id"])
    return report_of(run, records), transitions_of(run, records)
