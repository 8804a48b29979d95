"""The one place where store queries meet `stats`: the CLI and the TUI both call this, so they show the same numbers.

A run is read column-wise (`Store.trajectory_columns`: only the fields a report needs, no step texts)
into a `stats.axes.Table`, so every axis is one array operation and the full diagnostics of a
19-run × 1,011-item × 3-replicate study take seconds. Every choice of definition the paper leaves
open is stated in the report's `legend` (PROTOCOL §3).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from stats import axes
from stats.axes import Table
from stats.ratio import Ratio
from storage import Store

PERCENT_KEYS = ("paper_recall", "section_recall", "conversion", "accuracy", "rate")
REPORT_FIELDS = tuple(dict.fromkeys(("id",) + axes.COLUMNS))
PAIRED_BY_ID = "items are paired by id only, and an id may name a different question in each"


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


def load_table(store: Store, run: dict[str, Any], extra: tuple[str, ...] = ()) -> tuple[Table, dict[str, list]]:
    """A run's final trajectories as a Table, plus the lists of the `extra` fields: actions decoded, the
    tool sequences as stored text (`ngrams.Encoded.from_json` reads them without a string per call)."""
    cols = store.trajectory_columns(run["id"], REPORT_FIELDS + extra, raw=("tool_sequence",))
    n = len(cols["id"])
    return Table.from_columns(cols, n), {k: cols[k] for k in extra}


def run_report(store: Store, name: str) -> dict[str, Any]:
    """The foundation report of one run: accuracy, the four axes, terminations, splits, attribution."""
    run = store.run(name)
    return report_of(run, load_table(store, run)[0])


def split_ratios(table: Table) -> dict[str, dict[str, Ratio]]:
    """Accuracy by question type × depth, reasoning type, consensus tier and venue."""
    return {"type_depth": axes.type_depth(table), "reasoning_type": axes.splits(table, "reasoning_type"),
            "consensus_tier": axes.splits(table, "consensus_tier"), "venue": axes.splits(table, "venue")}


def measures_tokens(run: dict[str, Any]) -> bool:
    """Whether a run's trajectories carry token counts (`sandbox.agents.registry.measures_tokens`): a scripted
    agent's 0 tokens must not win a "fewest tokens" cell."""
    from sandbox.agents.registry import measures_tokens as measured

    return measured(run["agent"], run.get("identity"))


def estimates_tokens(run: dict[str, Any]) -> bool:
    """Whether a run's token counts are an estimate (characters / 4 of the conversation each turn), not a
    provider's count: runs made with `estimate_tokens` (a person's play always is)."""
    from sandbox.agents.human import is_human

    identity = run.get("identity") if isinstance(run.get("identity"), dict) else {}
    return is_human(run["agent"]) or bool(identity.get("estimate_tokens"))


def report_of(run: dict[str, Any], records: list[dict[str, Any]] | Table) -> dict[str, Any]:
    """`run_report` from records (dicts or a Table) already loaded (the panel loads each run once)."""
    table = Table.of(records)
    four = axes.four_axes(table)
    if not measures_tokens(run):
        four["resource"]["avg_tokens"] = Ratio(0, 0)  # no model, no tokens: unmeasured, not zero
    acc = four.pop("accuracy")
    acc_kind = axes.accuracy_by_kind(table)
    splits = split_ratios(table)
    ceiling = axes.section_ceiling(table)
    cost = table["cost_usd"]
    priced = ~np.isnan(cost)
    return {
        "run": run["name"],
        "agent": run["agent"],
        "model": run["model"],
        "dataset": run["dataset"],
        "ablation": run["ablation"],
        "status": run["status"],
        "n": table.n,
        "planned": run["planned"],
        "correct": int(acc.num),
        "accuracy": acc.value,
        "accuracy_by_type": values(acc_kind),  # st / mt / all, beside the foundation issue's `accuracy`
        "axes": values(four),
        "counts": {"accuracy": acc.as_list(), "accuracy_by_type": counts(acc_kind), **counts(four),
                   "splits": counts(splits),
                   "section_recall_ceiling": counts(ceiling["ceiling"])},
        "terminations": axes.terminations(table),
        "splits": values(splits),
        "section_recall_ceiling": {"unreachable": ceiling["unreachable"], "unknown": ceiling["unknown"],
                                   **values(ceiling["ceiling"])},
        "attribution": axes.attribution(table),
        "cost_usd": float(cost[priced].sum()) if priced.any() else None,
        "priced": bool(priced.all()) and table.n > 0,
        "label_resolution": label_resolution(run),
    }


def label_resolution(run: dict[str, Any]) -> dict[str, Any]:
    """The label rules (PROTOCOL §3) the run's section-recall numbers were computed under, beside the current
    ones: they differ only for a run stored under older rules whose dataset could not be opened to recompute."""
    from sandbox.sections import run_resolution
    from sandbox.sections import LABEL_RESOLUTION

    return {"version": run_resolution(run), "current": LABEL_RESOLUTION}


def section_labels(store: Store, run: dict[str, Any], corpus: Any = None) -> dict[str, Any]:
    """The labels behind section recall: the items whose section recall is capped (some gold paper has no direct
    label resolved to a readable section, `section_reachable` = 0) and, with the run's corpus, how many labels
    of the run's items resolved to no section (`unresolved`: matched none; `unknown_paper`: no text for its
    arXiv id), with the direct ones among them, which are what caps an item."""
    cols = store.trajectory_columns(run["id"], ("item_id", "section_reachable"))
    items = list(dict.fromkeys(cols["item_id"]))
    capped = sorted({i for i, r in zip(cols["item_id"], cols["section_reachable"]) if r == 0})
    out: dict[str, Any] = {**label_resolution(run), "capped_items": capped, "unresolved": None,
                           "unresolved_direct": None, "by_method": None}
    if corpus is None or corpus.fingerprint != run["dataset_fingerprint"]:
        return out
    labels = [lab for i in items if i in {it.id for it in corpus.items} for lab in corpus.item(i).labels]
    missing = [lab for lab in labels if lab.section_index is None]
    by_method: dict[str, int] = {}
    for lab in labels:
        by_method[lab.method] = by_method.get(lab.method, 0) + 1
    out.update(unresolved=len(missing), unresolved_direct=sum(lab.relevance == "direct" for lab in missing),
               by_method=by_method)
    return out


# ---------------------------------------------------------------- diagnostics (issue: four axes + analytics)

LEGEND = {
    "accuracy": "Accuracy = correct ÷ all trajectories; non-submissions (any ending but answer) count as wrong.",
    "delivered_read": "A delivered read is an executed read_section that returned section text (not rejected, "
                      "not an error, not 'not found', not a metadata-only paper).",
    "paper_recall": "Paper recall = every gold paper has at least one delivered read (paper_recall_any, looser: "
                    "at least one gold paper).",
    "section_recall": "Section recall = every gold paper has a delivered read of a section that a direct label "
                      "resolves to (section_recall_any: at least one gold paper; section_recall_loose: direct or "
                      "supporting labels).",
    "label_resolution": "Labels resolve to a top-level section by the authors' audit-pipeline rules (PROTOCOL §3), "
                        "in order: exact header, normalised header, unique substring either way, word overlap "
                        "(>= 2 label words, >= 60 % in the header), the label in a section's body (heading-like "
                        "occurrences first); 'label_resolution' names the rules' version the numbers were "
                        "computed under, and stored runs are recomputed from their reads when it changes.",
    "section_recall_ceiling": "Items where some gold paper has no direct label resolved to a readable section can "
                              "never reach section recall: 'unreachable' counts their trajectories and the ST/MT/all "
                              "shares are the highest section recall attainable ('unknown': stored before this was "
                              "recorded).",
    "conversion": "Conversion = P(correct | paper recall), conversion_section = P(correct | section recall), each "
                  "over ST, MT and all trajectories.",
    "calls_per_turn": "Calls per turn = tool calls (rejected and unknown ones included) ÷ assistant turns that "
                      "emitted at least one call.",
    "avg_tokens": "Mean tokens = the cap quantity (non-cached prompt + completion + cache creation) of the final "
                  "attempt; failed sample-level attempts are kept apart (native runs: earlier attempts; imported "
                  "runs: the run's replay record) and not counted. Scripted agents call no model: their tokens "
                  "are not measured (—) unless the run estimates them (characters / 4).",
    "avg_turns": "Mean turns = model turns, the model calls that returned a reply; turns used up by API errors "
                 "are not model turns.",
    "avg_points": "Mean points = budget points charged (rejected calls cost nothing).",
    "cap_rates": "Max Tokens / Max Turns / Max Budgets = share of trajectories ended by token_limit / max_turns / "
                 "budget (two consecutive rejections); error_rate and non_submission_rate likewise.",
    "splits": "Accuracy per question type × depth (st_d1 …), reasoning type, consensus tier and venue; a missing "
              "value is '?'.",
    "attribution": "Wrong answers by the option type chosen (distractor types): no_answer when nothing valid was "
                   "submitted, unknown when the item lists no type.",
    "position_bias": "Letters predicted (valid answers only), letters of the gold answers, and accuracy per gold "
                     "letter [correct, items].",
    "bigrams": "Bigram Δ-accuracy = accuracy of trajectories containing the bigram − of those without; Fisher's "
               "exact two-sided p, Bonferroni over all 49 bigrams (significant: 49·p < 0.05). Unknown tool names "
               "break adjacency; rejected calls count (the agent chose them).",
    "top_trigram": "Top trigram = the most frequent trigram by occurrences (ties: trajectories containing it, then "
                   "name); concentration = occurrence_share = its occurrences ÷ all trigram occurrences; "
                   "trajectory_share = trajectories containing it ÷ all. by_trajectories (second figure) = the "
                   "trigram contained in the most trajectories.",
    "transitions": "7×7 transition matrix: row = tool called, column = the next call; probabilities normalised per "
                   "row (a tool never followed by a call has a row of zeros).",
    "non_submission": "Non-submission = trajectories that ended without an answer, per ending, over all.",
    "intervals": "95% intervals. Proportions (accuracy, recalls, conversion, cap and error rates): Wilson score "
                 "interval, clustered by item when items have replicates (Wilson at the effective n = trajectories "
                 "÷ design effect; all-equal outcomes: n = items), so 60/60 reads [94.0%, 100%]. Means and ratios "
                 "of sums (calls per turn, tokens, turns, points): percentile bootstrap (B = 10,000, seed 0) "
                 "resampling items with all their replicates; 'no variation' when every resample gives the same "
                 "value. Each interval's n = the items in its own denominator (an MT interval counts MT items), "
                 "with its trajectories beside it; unmeasured tokens have no interval.",
    "reference": "Under 'reference', the reference evaluator's own numbers (summary.json, agenthop-eval-v1): recall "
                 "of any gold paper with failed reads counted, sections matched by header on 500-character "
                 "outputs, seed reads counted as wasted.",
    "counts": "Every ratio's [numerator, denominator] is under 'counts' (and under each analytics block).",
    "mcp": "Runs of agent mcp:<client> were played by an MCP client through serve-mcp. Its model's tokens are not "
           "visible to the server: they are unmeasured (—, never 0), so the token cap never ends such an episode and "
           "Max Tokens is 0 by construction. A turn is one tool call (a client that batches calls sends them one "
           "by one, each a turn); wall time includes the client's own thinking and transport.",
}


def legend() -> dict[str, str]:
    """Every definition the report uses where the paper is ambiguous, keyed for stable lookup (PROTOCOL §3)."""
    from stats.stopping import LEGEND as STOPPING

    return {**LEGEND, **STOPPING}


def position_bias(records: list[dict[str, Any]] | Table) -> dict[str, Any]:
    """Which letters the agent picks, where the gold letters are, and accuracy per gold letter (reference §5.3)."""
    table = Table.of(records)
    letters = "ABCD"
    pred, gold, ok = table["predicted_index"], table["correct_index"], table["correct"]
    predicted = {k: int((pred == i).sum()) for i, k in enumerate(letters)}
    at = {k: gold == i for i, k in enumerate(letters)}
    return {"predicted_distribution": predicted,
            "correct_position_distribution": {k: int(m.sum()) for k, m in at.items()},
            "accuracy_when_correct_at": {k: [int((m & ok).sum()), int(m.sum())] for k, m in at.items() if m.any()}}


def analytics(records: list[dict[str, Any]] | Table, actions: list[Any] | None = None,
              sequences: Any = None) -> dict[str, Any]:
    """Trajectory analytics of one run: bigram Δ-accuracy, top trigram, transitions, stopping behaviour.

    `records` as dicts (with `actions` and `tool_sequence`), or a Table with the compact `actions` and the
    tool sequences (lists of names or a `stats.ngrams.Encoded`) beside it.
    """
    from stats import ngrams, stopping

    table = Table.of(records)
    if not isinstance(records, Table):
        actions = [r.get("actions") or [] for r in records]
        sequences = [r.get("tool_sequence") or [] for r in records]
    actions = actions if actions is not None else [[]] * table.n
    enc = ngrams.Encoded.of(sequences if sequences is not None else [[a[0] for a in acts or []] for acts in actions])
    correct = table["correct"]
    bigrams = ngrams.bigram_delta_accuracy(enc, correct) if table.n else []
    kinds, ends, golds = table["kind"], table["termination"], table["n_gold"]
    # the stored paper-recall flag (None where unknown) defines Table 9's population, as it defines paper recall
    recalls = np.where(table.known("paper_recall"), table["paper_recall"], None)
    trajectories = [{"kind": k, "correct": bool(c), "termination": e, "n_gold": None if g != g else int(g),
                     "paper_recall": None if r is None else bool(r), "actions": a or []}
                    for k, c, e, g, r, a in zip(kinds, correct, ends, golds, recalls, actions)]
    return {
        "bigrams": [b for b in bigrams if b["n_with"]],
        "significant_bigrams": [b for b in bigrams if b["significant"]],
        "top_trigram": ngrams.top_trigram(enc),
        "transitions": ngrams.transition_matrix(enc),
        "stopping": stopping.stopping_behaviour(trajectories),
    }


PROPORTION_TERMS = ("accuracy", "paper_recall", "section_recall", "conversion", "conversion_section",
                    "max_tokens_rate", "max_turns_rate", "max_budget_rate", "error_rate")


def is_proportion(key: str) -> bool:
    """Whether a `stats.axes.ratio_terms` key is a proportion (0/1 outcomes over trajectories: a Wilson interval)
    rather than a mean or a ratio of sums (calls per turn, tokens, turns, points: a bootstrap interval)."""
    return key.partition(".")[0] in PROPORTION_TERMS


def intervals(records: list[dict[str, Any]] | Table, n_boot: int = 10_000, seed: int = 0,
              tokens_measured: bool = True) -> dict[str, Any]:
    """95% intervals of every ratio of the report, keys as `stats.axes.ratio_terms`.

    Proportions (accuracy; recall and conversion by ST / MT / all; cap and error rates) get Wilson score
    intervals clustered by item (`stats.wilson.clustered_wilson`); means and ratios of sums (calls per turn,
    mean tokens, turns, points) a percentile bootstrap over items with all their replicates, one chunked draw.
    Each interval states its own `n` (items with at least one trajectory in that ratio's denominator) and
    `n_trajectories` (those trajectories), not the run's. None where a ratio is undefined, and for tokens a
    run did not measure (`tokens_measured=False`: a scripted agent's tokens have no interval, not 0–0)."""
    from stats.bootstrap import by_cluster, ratio_intervals
    from stats.wilson import clustered_wilson

    table = Table.of(records)
    terms = axes.ratio_terms(table)
    out: dict[str, Any] = {k: None for k in terms}
    if table.n < 2 or len(set(table["item_id"].tolist())) < 2:
        return out
    num = np.column_stack([v[0] for v in terms.values()])
    den = np.column_stack([v[1] for v in terms.values()])
    _, (item_num, item_den) = by_cluster(table["item_id"], num, den)
    found = ratio_intervals(num, den, clusters=table["item_id"], n_boot=n_boot, seed=seed)
    for j, (key, iv) in enumerate(zip(terms, found)):
        own = {"n": int((item_den[:, j] > 0).sum()), "n_trajectories": int((den[:, j] > 0).sum())}
        if key == "avg_tokens" and not tokens_measured:
            continue
        if is_proportion(key):
            w = clustered_wilson(item_num[:, j], item_den[:, j])
            if w is not None:
                out[key] = {**w.as_dict(), **own, "n_boot": None, "seed": None, "no_variation": False}
        elif iv is not None:
            out[key] = {**iv.as_dict(), **own, "method": "bootstrap, clustered by item"}
    return out


def diagnostics(store: Store, name: str, ci: bool = False, corpus: Any = None) -> dict[str, Any]:
    """The full single-run report: the foundation report plus position bias, analytics, the legend and
    (optionally) intervals; with the run's `corpus`, also the reference evaluator's own numbers."""
    from stats.ngrams import Encoded

    run = store.run(name)
    table, extra = load_table(store, run, ("actions", "tool_sequence"))
    report = report_of(run, table)
    report["position_bias"] = position_bias(table)
    report["analytics"] = analytics(table, extra["actions"], Encoded.from_json(extra["tool_sequence"]))
    if ci:
        report["intervals"] = intervals(table, tokens_measured=measures_tokens(run))
    report["section_labels"] = section_labels(store, run, corpus)
    if corpus is not None:
        from workbench.summary import reference_block

        report["reference"] = reference_block(store, name, corpus)
    report["legend"] = legend()
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
PANEL_GROUPS = (("", ("accuracy",)), ("Search", ("PR st", "PR mt", "SR st", "SR mt")),
                ("Synthesis", ("Conv st", "Conv mt")), ("Tool use", ("calls/turn",)),
                ("Resources", ("tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget")))
LOWER_IS_BETTER = {"tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}
MEAN_COLUMNS = {"calls/turn", "tokens", "turns", "points"}
RESOURCE_COLUMNS = {"calls/turn", "tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}
PANEL_LEGEND = {
    "columns": "accuracy; Search: paper recall (PR) and section recall (SR) for single-target (st) and "
               "multi-target (mt) items; Synthesis: conversion = P(correct | paper recall); Tool use: calls per "
               "turn; Resources: mean tokens, model turns, points, and the shares ended by each cap.",
    "best": "* marks the best cell of a column (highest, or lowest for resources) only where it beats the runner-up "
            "significantly (p < 0.05, two-sided, on the common items both have a value for), as the paper shades its "
            "Table 2: McNemar's exact test for the 0/1 columns (accuracy, recalls, conversion on the items both "
            "recalled, cap rates) with one trajectory per item; with replicates, and for calls per turn, tokens, "
            "turns and points, the exact sign test on the per-item values (an item's mean over its replicates; it is "
            "McNemar's test when each item has one 0/1 outcome). No mark otherwise, a tie at the top included; "
            "'best_tests' has each column's test. Not adjusted across columns. Tool-use and resource columns "
            "compare full-tool runs only: an ablation (closed-book, no-search, gold-given) uses fewer turns and "
            "points by construction, so its cells there are never best (its row names the ablation).",
    "cronbach_alpha": "Cronbach's α with the items as the components and the runs as the respondents (the paper's "
                      "orientation, Appendix E.1): k/(k−1)·(1 − Σ item variances across runs ÷ variance of the run "
                      "totals), k = items. item_total_correlation: per item, the corrected item-total correlation in "
                      "the same orientation: Pearson r across the runs between the item's correctness and the run's "
                      "total over the other items (negative: strong runs miss it, weak ones get it).",
    "counts": "Every cell's [numerator, denominator] is in the row's 'counts'.",
    "replicates": "Run-to-run mean / std / range of accuracy over the replicates of each run; std is the population "
                  "SD (ddof = 0) of the replicates' accuracies, as the paper's Table 17.",
    "common_items": "Every cell, best mark, tool lift and the Spearman accuracy are over the items every run "
                    "answered (all their replicates; a row's n counts those trajectories, n_all all of the run's), "
                    "as the paper's Table 2 compares models on one item set; Cronbach's α, item coverage and "
                    "item-total correlations use the same items (replicate 0). Bigram means and replicate spread "
                    "are over each run's own trajectories.",
    "external": "Spearman's ρ between run accuracy and the external scores; p exact (all orderings) for n ≤ 9.",
    "bigram_panel": "Bigram panel = mean Δ-accuracy across runs (over the runs where Δ is defined) of the bigrams "
                    "present in at least half of the runs (n_present; the paper: ≥ 10 of 19 models).",
}


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def item_matrix(runs_records: list[list[dict[str, Any]] | Table]) -> tuple[list[str], list[list[int]]]:
    """Items answered by every run (replicate 0) and the item × run correctness matrix."""
    per_run = []
    for records in runs_records:
        t = Table.of(records)
        first = t["replicate"] == 0
        per_run.append(dict(zip(t["item_id"][first].tolist(), t["correct"][first].astype(int).tolist())))
    common = [i for i in per_run[0] if all(i in run for run in per_run[1:])] if per_run else []
    return common, [[run[i] for run in per_run] for i in common]


def replicate_spread(records: list[dict[str, Any]] | Table) -> dict[str, Any] | None:
    """Run-to-run mean / std / range of accuracy over the replicates of one run."""
    from stats.significance import run_spread

    t = Table.of(records)
    reps = t["replicate"]
    levels = sorted(set(reps[~np.isnan(reps)].tolist()))
    if len(levels) < 2:
        return None
    return run_spread([float(t["correct"][reps == r].mean()) for r in levels])


def dataset_warnings(runs: list[dict[str, Any]], who: str) -> list[str]:
    """A warning when runs paired by item id were made on different datasets (fingerprints differ)."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        groups.setdefault(run["dataset_fingerprint"], []).append(run["name"])
    if len(groups) < 2:
        return []
    listed = " | ".join(", ".join(names) for names in groups.values())
    return [f"{who} ran on different datasets (their fingerprints differ: {listed}): {PAIRED_BY_ID}"]


def resolution_warnings(runs: list[dict[str, Any]], who: str) -> list[str]:
    """A warning when runs' section recall was computed under different label rules (a run stored under older
    rules whose dataset could not be opened to recompute it): their section recalls are not comparable."""
    groups: dict[str, list[str]] = {}
    for run in runs:
        groups.setdefault(label_resolution(run)["version"], []).append(run["name"])
    if len(groups) < 2:
        return []
    listed = " | ".join(f"version {v}: {', '.join(names)}" for v, names in sorted(groups.items()))
    return [f"{who}' section recall was computed under different label resolutions ({listed}): not comparable"]


def panel_report(store: Store, names: list[str], external: dict[str, float] | None = None) -> dict[str, Any]:
    """A multi-run table shaped like the paper's Table 2 (grouped, best cell marked), plus panel statistics."""
    from stats import ngrams
    from stats.significance import coverage_histogram, cronbach_alpha, item_total_correlations, spearman

    runs = [store.run(n) for n in names]
    loaded = [load_table(store, run, ("tool_sequence",)) for run in runs]
    tables = [t for t, _ in loaded]
    common, matrix = item_matrix(tables)
    # Table 2 compares models on one benchmark: every cell is over the items all runs answered (all their
    # replicates), so a best mark never compares different item sets; `n_all` keeps each run's own count
    on_common = [t.subset(np.isin(t["item_id"], common)) for t in tables]
    reports = [report_of(run, t) for run, t in zip(runs, on_common)]
    rows = []
    for rep, table in zip(reports, tables):
        rows.append({"run": rep["run"], "agent": rep["agent"], "model": rep["model"], "ablation": rep["ablation"],
                     "n": rep["n"], "n_all": table.n, **{col: _dig(rep, path) for col, path in PANEL_COLUMNS},
                     "counts": {col: _dig(rep["counts"], path[1:] if path[0] == "axes" else path)
                                for col, path in PANEL_COLUMNS}})
    best, best_tests = significant_best(rows, {r["run"]: per_item_terms(t) for r, t in zip(rows, on_common)})
    panel: dict[str, Any] = {"warnings": dataset_warnings(runs, "the runs") + resolution_warnings(runs, "the runs"),
        "groups": [
        {"group": g, "columns": list(cols)} for g, cols in PANEL_GROUPS], "rows": rows, "best": best,
        "best_tests": best_tests, "n_common_items": len(common)}
    if len(names) >= 2 and len(common) >= 2:
        panel["cronbach_alpha"] = cronbach_alpha(matrix)
        panel["coverage"] = coverage_histogram(matrix)
        if len(names) >= 3 and len(common) >= 2:
            itc = item_total_correlations(matrix)
            panel["item_total_correlation"] = {i: (None if v != v else float(v)) for i, v in zip(common, itc)}
    per_run = [ngrams.bigram_delta_accuracy(ngrams.Encoded.from_json(extra["tool_sequence"]), t["correct"])
               for t, extra in loaded if t.n]
    panel["bigram_panel"] = ngrams.panel_bigrams(per_run)
    panel["replicates"] = {n: replicate_spread(t) for n, t in zip(names, tables)}
    panel["ablation_lift"] = ablation_lift(reports)
    if external:
        pairs = [(r["accuracy"], external[r["run"]]) for r in rows if r["run"] in external and r["accuracy"] is not None]
        panel["external"] = spearman([p[0] for p in pairs], [p[1] for p in pairs]) if len(pairs) >= 3 else {
            "error": f"need at least 3 runs with external scores, got {len(pairs)}"}
    panel["legend"] = PANEL_LEGEND
    return panel


def best_cells(rows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The run(s) with the best value per column; a column where every candidate ties has no best cell.
    Tool-use and resource columns consider full-tool runs only (see PANEL_LEGEND["best"])."""
    best: dict[str, list[str]] = {}
    for col, _ in PANEL_COLUMNS:
        pool = [r for r in rows if r[col] is not None and (col not in RESOURCE_COLUMNS or r["ablation"] == "full")]
        vals = [r[col] for r in pool]
        if len(set(vals)) > 1:
            top = (min if col in LOWER_IS_BETTER else max)(vals)
            best[col] = [r["run"] for r in pool if r[col] == top]
    return best


def per_item_terms(table: Table) -> dict[str, dict[str, tuple[float, float]]]:
    """Per panel column: item id → (numerator, denominator) summed over the item's trajectories (its replicates),
    the per-item values the best-cell tests pair across runs."""
    from stats.bootstrap import by_cluster

    terms = axes.ratio_terms(table)
    keys = [COLUMN_TERMS[c] for c, _ in PANEL_COLUMNS]
    ids = list(dict.fromkeys(table["item_id"].tolist()))
    if not ids:
        return {c: {} for c, _ in PANEL_COLUMNS}
    _, (num, den) = by_cluster(table["item_id"], *_stacked(terms, keys))
    return {col: {i: (float(num[r, j]), float(den[r, j])) for r, i in enumerate(ids)}
            for j, (col, _) in enumerate(PANEL_COLUMNS)}


def significant_best(rows: list[dict[str, Any]], per_item: dict[str, dict[str, dict[str, tuple[float, float]]]],
                     alpha: float = 0.05) -> tuple[dict[str, list[str]], dict[str, dict[str, Any]]]:
    """The best cell per column, kept only where it beats the runner-up significantly (see PANEL_LEGEND["best"]).

    Candidates are `best_cells`' pool; the runner-up is the next value (every run sharing it must be beaten).
    The test pairs the two runs' per-item values (numerator ÷ denominator over the item's trajectories) on the
    items both have a value for: McNemar's exact test when each is one 0/1 outcome, otherwise the exact sign
    test on the per-item values (the same test, generalised). Marked when p < `alpha` and the items agree in
    direction with the cells. Returns (column → marked runs, column → the test)."""
    best: dict[str, list[str]] = {}
    tests: dict[str, dict[str, Any]] = {}
    for col, _ in PANEL_COLUMNS:
        pool = [r for r in rows if r[col] is not None and (col not in RESOURCE_COLUMNS or r["ablation"] == "full")]
        values = sorted({r[col] for r in pool}, reverse=col not in LOWER_IS_BETTER)
        if len(values) < 2:
            continue
        top = [r["run"] for r in pool if r[col] == values[0]]
        runners = [r["run"] for r in pool if r[col] == values[1]]
        if len(top) > 1:
            tests[col] = {"best": top, "runner_up": runners, "marked": False, "p": None,
                          "reason": "several runs share the best value"}
            continue
        found = [_best_test(col, per_item[top[0]][col], per_item[r][col]) for r in runners]
        worst = max(found, key=lambda t: t["p"])
        marked = all(t["p"] < alpha and t["agrees"] for t in found)
        tests[col] = {"best": top, "runner_up": runners, "marked": marked, **{k: v for k, v in worst.items()
                                                                             if k != "agrees"}}
        if marked:
            best[col] = top
    return best, tests


def _best_test(col: str, first: dict[str, tuple[float, float]], second: dict[str, tuple[float, float]]) -> dict[str, Any]:
    """The paired test of one column between the best run (`first`) and a runner-up, on items both have a value for."""
    from stats.significance import paired_sign_test

    items = [i for i in first if i in second and first[i][1] > 0 and second[i][1] > 0]
    a = [first[i][0] / first[i][1] for i in items]
    b = [second[i][0] / second[i][1] for i in items]
    binary = col not in MEAN_COLUMNS and all(first[i][1] == 1 and second[i][1] == 1 for i in items)
    test = paired_sign_test(a, b)
    better = test["second_higher"] if col in LOWER_IS_BETTER else test["first_higher"]
    worse = test["first_higher"] if col in LOWER_IS_BETTER else test["second_higher"]
    return {"test": "McNemar exact" if binary else "sign test on per-item values", "n": test["n"],
            "best_better": better, "runner_up_better": worse, "p": test["p"], "agrees": better > worse}


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


_CAPS = {"MaxTok": "token_limit", "MaxTurn": "max_turns", "MaxBudget": "budget"}
_RECALL = {"PR": "paper_recall", "SR": "section_recall"}


# the compared axes by their `stats.axes.ratio_terms` keys: one definition of each ratio for values and intervals
COLUMN_TERMS = {"accuracy": "accuracy", "PR st": "paper_recall.st", "PR mt": "paper_recall.mt",
                "SR st": "section_recall.st", "SR mt": "section_recall.mt", "Conv st": "conversion.st",
                "Conv mt": "conversion.mt", "calls/turn": "calls_per_turn", "tokens": "avg_tokens",
                "turns": "avg_turns", "points": "avg_points", "MaxTok": "max_tokens_rate",
                "MaxTurn": "max_turns_rate", "MaxBudget": "max_budget_rate"}


def _stacked(terms: dict[str, tuple[Any, Any]], keys: list[str]) -> tuple[Any, Any]:
    """(numerators, denominators) as (items × statistics) arrays, columns in `keys` order."""
    return (np.column_stack([terms[k][0] for k in keys]).astype(float),
            np.column_stack([terms[k][1] for k in keys]).astype(float))


def paired_outcomes(axis: str, a: dict[str, Any], b: dict[str, Any]) -> tuple[bool, bool] | None:
    """The 0/1 outcomes McNemar compares for one item on a binary axis; None when the item is not in the
    test (another split; for conversion, not recalled by both; a side that did not measure the outcome, e.g.
    section recall on a dataset without recall labels) or the axis is not binary. An unmeasured outcome is
    never read as 0: that would test measured recall against nothing."""
    head, _, kind = axis.partition(" ")
    if kind and a.get("kind") != kind:
        return None
    if axis == "accuracy":
        return bool(a.get("correct")), bool(b.get("correct"))
    if head in _RECALL:
        return _measured_pair(a, b, _RECALL[head])
    if head == "Conv":
        if not (a.get("paper_recall") and b.get("paper_recall")):
            return None
        return bool(a.get("correct")), bool(b.get("correct"))
    if axis in _CAPS:
        return a.get("termination") == _CAPS[axis], b.get("termination") == _CAPS[axis]
    return None


def _measured_pair(a: dict[str, Any], b: dict[str, Any], key: str) -> tuple[bool, bool] | None:
    """Both sides' 0/1 value of `key`, or None when either side did not measure it (None in the record)."""
    if a.get(key) is None or b.get(key) is None:
        return None
    return bool(a[key]), bool(b[key])


def _mcnemar_or_none(pairs: list[tuple[bool, bool] | None]) -> dict[str, Any] | None:
    """Exact McNemar over the measured pairs; None when no item has both sides measured."""
    from stats.significance import mcnemar_exact

    kept = [p for p in pairs if p is not None]
    return mcnemar_exact([x for x, _ in kept], [y for _, y in kept]) if kept else None


def _side(t: dict[str, Any]) -> dict[str, Any]:
    """What the agreement grid and the split stepper need of one run's trajectory on an item."""
    return {"id": t["id"], "answer": t.get("answer"), "predicted_index": t.get("predicted_index"), "correct": bool(t.get("correct")), "termination": t.get("termination"),
            "points": t.get("points_used"), "turns": t.get("turns"), "tokens": t.get("tokens"),
            "paper_recall": bool(t.get("paper_recall")), "section_recall": bool(t.get("section_recall"))}


def tool_use(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Transitions (as `transition_report` lays them out) and the top trigram of some trajectories."""
    from stats.ngrams import top_trigram

    sequences = [r.get("tool_sequence") or [] for r in records]
    return {"transitions": transition_layout(sequences), "top_trigram": top_trigram(sequences)}


CONVERSION_SET = "items both runs recalled (paper recall), the paper's Table 12 set"


def compare_report(store: Store, a: str, b: str, n_boot: int = 10_000, seed: int = 0) -> dict[str, Any]:
    """Two runs on their common items (replicate 0): per-axis values, Δ = B − A with a paired bootstrap 95%
    interval, exact McNemar on every 0/1 axis, the agreement grid with item ids, distractor attribution,
    terminations, tool use, and the sentence naming what separates them.

    A and B values are the diagnostics' own (`report_of` over the common items), so they equal what
    `report` prints for the same trajectories — except conversion: its A, B, Δ, interval and McNemar are all
    on the items both runs recalled (the paper's Table 12 set, `n` in the row), the marginal conversions
    (each run over its own recalled items, what `report` prints) beside them as `a_marginal` / `b_marginal`.
    The p-values of the comparison (every row's test and the all-split tests under `tests`) are
    Holm-adjusted together (`p_holm`), and the sentence uses the adjusted p.
    """
    from stats.bootstrap import no_variation, paired_ratio_deltas

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
    both = {kind: np.array([ta[i].get("kind") == kind and bool(ta[i]["paper_recall"]) and bool(tb[i]["paper_recall"])
                            for i in common], dtype=bool) for kind in ("st", "mt")}
    intervals: list[tuple[float | None, float | None, float | None]] = [(None, None, None)] * len(names)
    if len(common) >= 2:
        keys = [COLUMN_TERMS[c] for c in names]
        num_a, den_a = _stacked(axes.ratio_terms(Table.of(recs_a)), keys)
        num_b, den_b = _stacked(axes.ratio_terms(Table.of(recs_b)), keys)
        for j, col in enumerate(names):  # conversion: correct over the items both recalled, on both sides
            if col.startswith("Conv"):
                mask = both[col.split()[1]].astype(float)
                den_a[:, j] = den_b[:, j] = mask
                num_a[:, j] = [float(bool(ta[i]["correct"])) for i in common] * mask
                num_b[:, j] = [float(bool(tb[i]["correct"])) for i in common] * mask
        intervals = paired_ratio_deltas(num_a, den_a, num_b, den_b, n_boot=n_boot, seed=seed)
    rows = []
    for (col, path), (_, low, high) in zip(PANEL_COLUMNS, intervals):
        va, vb = _dig(ra, path), _dig(rb, path)
        row: dict[str, Any] = {"axis": col}
        if col.startswith("Conv"):
            on = [i for i, keep in zip(common, both[col.split()[1]]) if keep]
            row.update({"a_marginal": va, "b_marginal": vb, "set": CONVERSION_SET,
                        "counts_marginal": {"a": _dig(ra["counts"], path[1:]), "b": _dig(rb["counts"], path[1:])}})
            va = float(np.mean([bool(ta[i]["correct"]) for i in on])) if on else None
            vb = float(np.mean([bool(tb[i]["correct"]) for i in on])) if on else None
        delta = None if va is None or vb is None else vb - va
        row.update({"a": va, "b": vb, "delta": delta, "ci_low": None if delta is None else low,
                    "ci_high": None if delta is None else high, "p": None, "test": None, "n": None})
        row["ci_no_variation"] = delta is not None and no_variation(row["ci_low"], row["ci_high"])
        if delta is not None:  # a side with no value on this axis has nothing to test
            row["test"] = _mcnemar_or_none([paired_outcomes(col, ta[i], tb[i]) for i in common])
            row["p"] = None if row["test"] is None else row["test"]["p"]
            row["n"] = row["test"]["n"] if row["test"] is not None else len(common)
        rows.append(row)
    tests = {"accuracy": rows[0]["test"]}
    recalled = [i for i in common if ta[i]["paper_recall"] and tb[i]["paper_recall"]]
    tests["conversion_common_recalled"] = _mcnemar_or_none([(bool(ta[i]["correct"]), bool(tb[i]["correct"]))
                                                            for i in recalled])
    for key in ("paper_recall", "section_recall"):
        tests[key] = _mcnemar_or_none([_measured_pair(ta[i], tb[i], key) for i in common])
    holm = adjust_comparison(rows, tests)
    warnings = []
    if run_a["dataset_fingerprint"] != run_b["dataset_fingerprint"]:
        warnings.append(f"A and B ran on different datasets (their fingerprints differ): {PAIRED_BY_ID}")
    warnings += resolution_warnings([run_a, run_b], "A and B")
    estimated = [side for side, run in (("A", run_a), ("B", run_b)) if estimates_tokens(run)]
    if estimated:
        who = " and ".join(estimated)
        warnings.append(f"{who}'s tokens are estimated (characters / 4 of the conversation each turn), not counted "
                        f"by a model provider: the tokens row{' compares two estimates' if len(estimated) == 2 else ' compares an estimate with a count'}")
    attribution_delta = _attribution_deltas(recs_a, recs_b, n_boot, seed)
    return {"a": a, "b": b, "warnings": warnings, "n_common": len(common), "only_in_a": len(ta) - len(common), "only_in_b": len(tb) - len(common),
            "runs": {"a": _run_label(run_a), "b": _run_label(run_b)}, "rows": rows, "tests": tests, "holm": holm,
            "n_boot": n_boot, "seed": seed,
            "agreement": {k: {"n": len(v), "items": v} for k, v in grid.items()},
            "items": {i: {"kind": ta[i].get("kind"), "depth": ta[i].get("depth"), "a": _side(ta[i]), "b": _side(tb[i])}
                      for i in common},
            "attribution": {"a": ra["attribution"], "b": rb["attribution"], "delta": attribution_delta},
            "terminations": {"a": ra["terminations"], "b": rb["terminations"]},
            "tool_use": {"a": tool_use(recs_a), "b": tool_use(recs_b)},
            "summary": separating_axis(rows, family=holm["m"])}


def adjust_comparison(rows: list[dict[str, Any]], tests: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """Holm-adjust every p-value of one comparison together: each row's McNemar test and the all-split tests
    (`tests`; its accuracy test is the accuracy row's own, counted once). Sets `p_holm` on each row and test
    dict in place; returns the family (names of the tests, in order) and its size m."""
    from stats.multiplicity import holm

    family: list[tuple[str, dict[str, Any]]] = []
    seen: set[int] = set()
    for name, test in [(r["axis"], r["test"]) for r in rows] + [(f"all: {k}", t) for k, t in tests.items()]:
        if test is not None and id(test) not in seen:
            seen.add(id(test))
            family.append((name, test))
    for (_, test), adjusted in zip(family, holm([t["p"] for _, t in family])):
        test["p_holm"] = adjusted
    for row in rows:
        row["p_holm"] = None if row["test"] is None else row["test"]["p_holm"]
    return {"method": "Holm (1979) step-down over every McNemar test of this comparison", "m": len(family),
            "family": [name for name, _ in family]}


def _attribution_deltas(recs_a: list[dict[str, Any]], recs_b: list[dict[str, Any]], n_boot: int,
                        seed: int) -> dict[str, dict[str, float | None]]:
    """Per option type chosen by wrong answers: its rate among each run's wrong answers (as `axes.attribution`),
    Δ = B − A, and a paired bootstrap 95% interval over the common items (`axes.attribution_terms`)."""
    from stats.bootstrap import no_variation, paired_ratio_deltas

    ta, tb = Table.of(recs_a), Table.of(recs_b)
    kinds = sorted(set(axes.attribution(ta)["counts"]) | set(axes.attribution(tb)["counts"]))
    if not kinds:
        return {}
    num_a, den_a = _stacked(axes.attribution_terms(ta, kinds), kinds)
    num_b, den_b = _stacked(axes.attribution_terms(tb, kinds), kinds)
    found = paired_ratio_deltas(num_a, den_a, num_b, den_b, n_boot=n_boot, seed=seed) if len(recs_a) >= 2 else \
        [(None, None, None)] * len(kinds)
    out = {}
    for j, k in enumerate(kinds):
        wrong_a, wrong_b = den_a[:, j].sum(), den_b[:, j].sum()
        ra = float(num_a[:, j].sum() / wrong_a) if wrong_a else None
        rb = float(num_b[:, j].sum() / wrong_b) if wrong_b else None
        delta = None if ra is None or rb is None else rb - ra
        _, low, high = found[j]
        out[k] = {"a": ra, "b": rb, "delta": delta,
                  "ci_low": None if delta is None else low, "ci_high": None if delta is None else high,
                  "ci_no_variation": delta is not None and no_variation(low, high)}
    return out


def _run_label(run: dict[str, Any]) -> dict[str, Any]:
    return {"name": run["name"], "agent": run["agent"], "model": run["model"], "ablation": run["ablation"],
            "dataset": run["dataset"], "dataset_fingerprint": run["dataset_fingerprint"]}


SEPARATES = 0.05  # a difference is announced only when its Holm-adjusted p is below this


def separating_axis(rows: list[dict[str, Any]], family: int | None = None) -> str:
    """A plain-language sentence naming the recall or conversion split that separates the runs most among
    those whose Holm-adjusted McNemar p (`p_holm`) is below 0.05; when none is, it says no axis separates
    the runs (a difference the comparison's own adjusted test does not support is never announced)."""
    shares = {r["axis"]: r for r in rows if r["axis"].startswith(("PR", "SR", "Conv")) and r["delta"] is not None}
    if not shares:
        return "No recall or conversion split can be compared."
    if all(abs(r["delta"]) < 1e-12 for r in shares.values()):
        return "A and B do not differ on recall or conversion."
    over = f" over {family} tests" if family else ""
    supported = {k: r for k, r in shares.items() if r.get("p_holm") is not None and r["p_holm"] < SEPARATES}
    if not supported:
        return (f"No axis separates the runs: no recall or conversion difference has a McNemar p < 0.05 after "
                f"Holm's adjustment{over}.")
    axis, row = max(supported.items(), key=lambda kv: abs(kv[1]["delta"]))
    kind, split = axis.split()
    from workbench.render import counted

    what = {"PR": "retrieves the gold papers", "SR": "reads the labelled sections",
            "Conv": "converts"}[kind]
    same_recall = shares.get(f"PR {split}")
    lead = "retrieves as well as A but " if kind == "Conv" and same_recall and abs(same_recall["delta"]) < 0.02 else ""
    where = "single-target" if split == "st" else "multi-target"
    if kind == "Conv" and row.get("n") is not None:
        where = f"the {row['n']} {where} items both recalled"
    else:
        where += " items"
    direction = "more" if row["delta"] > 0 else "less"
    points = counted(round(abs(row["delta"]) * 100), "percentage point")
    return (f"B {lead}{what} {points} {direction} than A on {where} (McNemar p = {row['p_holm']:.2g} after Holm's "
            f"adjustment{over}).")


def transition_report(store: Store, name: str) -> dict[str, Any]:
    """The 7×7 tool transition matrix of a run (counts and row shares), from each trajectory's tool sequence."""
    from stats.ngrams import Encoded

    run = store.run(name)
    texts = store.trajectory_columns(run["id"], ("tool_sequence",), raw=("tool_sequence",))["tool_sequence"]
    return transitions_of(run, Encoded.from_json(texts))


def transitions_of(run: dict[str, Any], sequences: Any) -> dict[str, Any]:
    """`transition_report` from tool sequences already loaded (lists of names, or `stats.ngrams.Encoded`)."""
    return {"run": run["name"], **transition_layout(sequences)}


def transition_layout(sequences: Any) -> dict[str, Any]:
    """The 7×7 transition matrix as the heat maps draw it: tool names, counts, row shares, trajectories."""
    from stats.ngrams import Encoded, transition_matrix

    enc = Encoded.of(sequences)
    tm = transition_matrix(enc)
    return {"names": tm["tools"], "counts": tm["counts"], "rates": tm["probabilities"], "n": enc.n}


def run_diagnostics(store: Store, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`run_report` and `transition_report` of one run from a single read of its trajectories (the TUI's tab)."""
    from stats.ngrams import Encoded

    run = store.run(name)
    table, extra = load_table(store, run, ("tool_sequence",))
    return report_of(run, table), transitions_of(run, Encoded.from_json(extra["tool_sequence"]))


# ---------------------------------------------------------------- humans vs models (play)


MIN_COVERAGE = 0.5  # a leaderboard row is ranked when it covers at least this share of the items people played


def leaderboard(store: Store, min_coverage: float = MIN_COVERAGE, n_boot: int = 10_000,
                seed: int = 0) -> list[dict[str, Any]]:
    """Per dataset that people have played: every player and every evaluation run on the items people played.

    A person is one row over all their sessions on the dataset (`human:NAME` runs combined, an item counted
    once: its first play); plays marked `resumed` or `replayed` (made after seeing the item's tool results or
    gold answer) are left out and counted in `excluded`. A model is one row per run. The items are those some
    person played (replicate 0, unmarked). Each row is `report_of` over its trajectories on those items, with
    `n` items covered and the Wilson score 95% interval of accuracy over them (`stats.wilson`; one play per item). Rows covering at
    least `min_coverage` of the items are ranked by accuracy (then items covered, then name); the others follow,
    unranked, saying why. Scaling levels and parallel runs are not evaluation runs and are left out.
    """
    from sandbox.agents.human import MARKED, is_human

    runs = [r for r in store.runs() if r["kind"] == "eval"]
    boards = []
    for fingerprint in dict.fromkeys(r["dataset_fingerprint"] for r in runs if is_human(r["agent"])):
        same = [r for r in runs if r["dataset_fingerprint"] == fingerprint]
        entrants: dict[str, list[dict[str, Any]]] = {}  # a player (their agent) or a model run (its name)
        for run in same:
            entrants.setdefault(run["agent"] if is_human(run["agent"]) else run["name"], []).append(run)
        records: dict[str, list[dict[str, Any]]] = {}
        excluded: dict[str, int] = {}
        for key, group in entrants.items():
            seen: set[str] = set()
            kept, marked = [], 0
            for run in group:
                for t in store.trajectories(run["id"], light=True):
                    if t["replicate"] != 0:
                        continue
                    if is_human(run["agent"]) and t.get("error_kind") in MARKED:
                        marked += 1
                        continue
                    if t["item_id"] not in seen:
                        seen.add(t["item_id"])
                        kept.append(t)
            records[key], excluded[key] = kept, marked
        played = list(dict.fromkeys(t["item_id"] for key, group in entrants.items() if is_human(group[0]["agent"])
                                    for t in records[key]))
        wanted = set(played)
        rows = []
        for key, group in entrants.items():
            mine = [t for t in records[key] if t["item_id"] in wanted]
            if not mine:
                continue
            rows.append(_board_row(key, group, mine, len(played), excluded[key], min_coverage, n_boot, seed))
        ranked = sorted((r for r in rows if r["ranked"]), key=_board_order)
        unranked = sorted((r for r in rows if not r["ranked"]), key=_board_order)
        for rank, row in enumerate(ranked, 1):
            row["rank"] = rank
        dataset = next(r["dataset"] for r in same if is_human(r["agent"]))
        boards.append({"dataset": dataset, "fingerprint": fingerprint, "n_items": len(played), "items": played,
                       "min_coverage": min_coverage, "rows": ranked + unranked, "best": best_cells(ranked),
                       "n_boot": n_boot, "seed": seed})
    return boards


def _board_order(row: dict[str, Any]) -> tuple:
    return -(row["accuracy"] or 0.0), -row["n"], row["run"]


def _board_row(key: str, group: list[dict[str, Any]], records: list[dict[str, Any]], n_items: int, excluded: int,
               min_coverage: float, n_boot: int, seed: int) -> dict[str, Any]:
    """One leaderboard row: `report_of` over the entrant's trajectories, its coverage and accuracy interval."""
    from sandbox.agents.human import is_human
    from stats.wilson import wilson

    human = is_human(group[0]["agent"])
    rep = report_of({**group[0], "name": key}, records)
    sessions = [r["name"] for r in group]
    n = rep["n"]
    ci = wilson(rep["correct"], n) if n else None  # accuracy is a proportion: Wilson (one play per item)
    coverage = n / n_items if n_items else 0.0
    ranked = coverage >= min_coverage
    name = sessions[-1] + (f" +{len(sessions) - 1}" if len(sessions) > 1 else "")  # the latest session (+ others)
    return {"run": key, "name": name, "runs": sessions, "agent": rep["agent"], "model": rep["model"],
            "ablation": rep["ablation"], "human": human, "n": n, "correct": rep["correct"], "coverage": coverage,
            "accuracy_ci": None if ci is None else [ci.low, ci.high], "excluded": excluded, "ranked": ranked,
            "rank": None,
            "unranked": None if ranked else f"covers {n} of the {n_items} items played (fewer than "
                                            f"{min_coverage:.0%})",
            **{col: _dig(rep, path) for col, path in PANEL_COLUMNS}}
