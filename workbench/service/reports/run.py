"""A run's report: accuracy, the four axes (search, synthesis, tool use, resource), terminations, splits and
attribution, with their intervals and the analytics (n-grams, transitions, stopping) of its diagnostics.

A run is read column-wise (`Store.trajectory_columns`: only the fields a report needs, no step texts)
into a `stats.axes.Table`, so every axis is one array operation and the full diagnostics of a
19-run × 1,011-item × 3-replicate study take seconds. Every choice of definition the paper leaves
open is stated in the report's `legend` (docs/protocol.md "What is measured").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from sandbox.records import ErrorKind, Termination
from storage.rows import LightTrajectoryRow, RunRow, TrajectoryRow

if TYPE_CHECKING:
    from stats.bootstrap import Interval as Resampled
from stats import axes
from stats.axes import Table
from stats.ratio import Ratio
from stats.stopping import Trajectory
from storage import Store
from workbench.service.records.report import (
    Analytics,
    CutOff,
    Interval,
    LabelResolution,
    PositionBias,
    ReportCounts,
    RunReport,
    RunTransitions,
    SectionLabels,
    SectionRecallCeiling,
    TransitionLayout,
)
from workbench.service.reports.hops import read_hops
from workbench.service.reports.prompts import report_note

PERCENT_KEYS = ("paper_recall", "section_recall", "conversion", "accuracy", "rate")


REPORT_FIELDS = tuple(dict.fromkeys(("id", *axes.COLUMNS)))


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


def load_table(store: Store, run: RunRow, extra: tuple[str, ...] = ()) -> tuple[Table, dict[str, list]]:
    """A run's final trajectories as a Table, plus the lists of the `extra` fields: actions decoded, the
    tool sequences as stored text (`ngrams.Encoded.from_json` reads them without a string per call)."""
    cols = store.trajectory_columns(run["id"], REPORT_FIELDS + extra, raw=("tool_sequence",))
    n = len(cols["id"])
    return Table.from_columns(cols, n), {k: cols[k] for k in extra}


def run_report(store: Store, name: str) -> RunReport:
    """The foundation report of one run: accuracy, the four axes, terminations, splits, attribution."""
    run = store.run(name)
    return report_of(run, load_table(store, run)[0])


def split_ratios(table: Table) -> dict[str, dict[str, Ratio]]:
    """Accuracy by question type × depth, reasoning type, consensus tier and venue."""
    return {
        "type_depth": axes.type_depth(table),
        "reasoning_type": axes.splits(table, "reasoning_type"),
        "consensus_tier": axes.splits(table, "consensus_tier"),
        "venue": axes.splits(table, "venue"),
    }


def measures_tokens(run: RunRow) -> bool:
    """Whether a run's trajectories carry token counts (`sandbox.agents.registry.measures_tokens`): a scripted
    agent's 0 tokens must not win a "fewest tokens" cell."""
    from sandbox.agents.registry import measures_tokens as measured

    return measured(run["agent"], run.get("identity"))


def estimates_tokens(run: RunRow) -> bool:
    """Whether a run's token counts are an estimate (characters / 4 of the conversation each turn), not a
    provider's count: runs made with `estimate_tokens` (a person's play always is)."""
    from sandbox.agents.human import is_human

    identity = run.get("identity")
    return is_human(run["agent"]) or (isinstance(identity, dict) and bool(identity.get("estimate_tokens")))


def report_of(run: RunRow, records: Sequence[LightTrajectoryRow] | Table) -> RunReport:
    """`run_report` from records (dicts or a Table) already loaded (the panel loads each run once)."""
    table = Table.of(records)
    four = axes.four_axes(table)
    if not measures_tokens(run):
        for key in ("avg_tokens", "avg_prompt_tokens", "cache_hit_rate"):
            four["resource"][key] = Ratio(0, 0)  # no model, no tokens: unmeasured, not zero
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
        "dataset_repo": run.get("dataset_repo"),  # the Hub repository and commit (None: not from the Hub)
        "dataset_revision": run.get("dataset_revision"),
        "ablation": run["ablation"],
        "status": run["status"],
        "n": table.n,
        "planned": run["planned"],
        "correct": int(acc.num),
        "accuracy": acc.value,
        "accuracy_by_type": values(acc_kind),  # st / mt / all, beside the foundation issue's `accuracy`
        "axes": values(four),
        "counts": report_counts(acc, acc_kind, four, splits, ceiling["ceiling"]),
        # stats counts by the closed sets of words (sandbox.records.TERMINATIONS, the error kinds) as plain strings
        "terminations": cast("dict[Termination, int]", axes.terminations(table)),
        "error_kinds": cast("dict[ErrorKind, int]", axes.error_kinds(table)),  # why the `error` endings ended so
        "splits": values(splits),
        "section_recall_ceiling": ceiling_values(ceiling),
        "attribution": axes.attribution(table),
        "cut_off": cut_off(table),
        "cost_usd": float(cost[priced].sum()) if priced.any() else None,
        "priced": bool(priced.all()) and table.n > 0,
        "label_resolution": label_resolution(run),
    }


def report_counts(
    acc: Ratio, acc_kind: dict[str, Ratio], four: dict[str, Any], splits: dict[str, dict[str, Ratio]], ceiling: Any
) -> ReportCounts:
    """Every ratio of the report as [numerator, denominator]: accuracy, the four axes, splits, the ceiling."""
    axes_counts = counts(four)
    return {
        "accuracy": acc.as_list(),
        "accuracy_by_type": counts(acc_kind),
        "search": axes_counts["search"],
        "synthesis": axes_counts["synthesis"],
        "tool_use": axes_counts["tool_use"],
        "resource": axes_counts["resource"],
        "splits": counts(splits),
        "section_recall_ceiling": counts(ceiling),
    }


def ceiling_values(ceiling: axes.SectionCeiling) -> SectionRecallCeiling:
    """`stats.axes.section_ceiling` as the report gives it: the unreachable and unknown counts, then the highest
    section recall attainable by question type."""
    attainable = values(ceiling["ceiling"])
    return {
        "unreachable": ceiling["unreachable"],
        "unknown": ceiling["unknown"],
        "st": attainable["st"],
        "mt": attainable["mt"],
        "all": attainable["all"],
    }


def cut_off(table: Table) -> CutOff:
    """Replies the completion limit cut off (finish_reason `length`), the calls lost inside them (a call the reply
    ended in the middle of: shown, never run) and the trajectories with at least one such reply."""
    turns = table.amount("cut_off_turns")
    return {
        "turns": int(turns.sum()),
        "calls_lost": int(table.amount("lost_calls").sum()),
        "trajectories": int((turns > 0).sum()),
    }


def label_resolution(run: RunRow) -> LabelResolution:
    """The label rules (docs/protocol.md#section-labels) the run's section-recall numbers were computed under,
    beside the current ones: they differ only for a run stored under older rules whose dataset could not be opened to
    recompute."""
    from sandbox.sections import LABEL_RESOLUTION, run_resolution

    return {"version": run_resolution(run), "current": LABEL_RESOLUTION}


def section_labels(store: Store, run: RunRow, corpus: Any = None) -> SectionLabels:
    """The labels behind section recall: the items whose section recall is capped (some gold paper has no direct
    label resolved to a readable section, `section_reachable` = 0) and, with the run's corpus, how many labels
    of the run's items resolved to no section (`unresolved`: matched none; `unknown_paper`: no text for its
    arXiv id), with the direct ones among them, which are what caps an item."""
    cols = store.trajectory_columns(run["id"], ("item_id", "section_reachable"))
    items = list(dict.fromkeys(cols["item_id"]))
    capped = sorted({i for i, r in zip(cols["item_id"], cols["section_reachable"], strict=True) if r == 0})
    resolution = label_resolution(run)
    out: SectionLabels = {
        "version": resolution["version"],
        "current": resolution["current"],
        "capped_items": capped,
        "unresolved": None,
        "unresolved_direct": None,
        "by_method": None,
    }
    if corpus is None or corpus.fingerprint != run["dataset_fingerprint"]:
        return out
    out["unresolved"], out["unresolved_direct"], out["by_method"] = _label_counts(corpus, items)
    return out


def _label_counts(corpus: Any, items: list[str]) -> tuple[int, int, dict[str, int]]:
    """How the labels of `items` resolved: (how many matched no section, how many of those are direct, the count by
    resolution method)."""
    known = {it.id for it in corpus.items}
    labels = [lab for i in items if i in known for lab in corpus.item(i).labels]
    missing = [lab for lab in labels if lab.section_index is None]
    by_method: dict[str, int] = {}
    for lab in labels:
        by_method[lab.method] = by_method.get(lab.method, 0) + 1
    return len(missing), sum(lab.relevance == "direct" for lab in missing), by_method


LEGEND = {
    "accuracy": "Accuracy = correct ÷ all trajectories; non-submissions (any ending but answer) count as wrong.",
    "delivered_read": "A delivered read is an executed read_section that returned section text (not rejected, "
    "not an error, not 'not found', not a metadata-only paper).",
    "paper_recall": "Paper recall = every gold paper has at least one delivered read (paper_recall_any, looser: "
    "at least one gold paper).",
    "section_recall": "Section recall = every gold paper has a delivered read of a section that a direct label "
    "resolves to (section_recall_any: at least one gold paper; section_recall_loose: direct or "
    "supporting labels).",
    "label_resolution": "Labels resolve to a top-level section by the authors' audit-pipeline rules (docs: Protocol), "
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
    "avg_prompt_tokens": "Mean prompt tokens = the prompt tokens sent per trajectory, cache reads included "
    "(non-cached prompt + cache read + cache creation), beside the protocol's count (avg_tokens), "
    "which leaves cache reads out: with a server-side prefix cache the protocol's count depends on "
    "what the cache held, this one does not. cache_hit_rate = cache-read tokens ÷ those prompt "
    "tokens, over the run.",
    "api_error_rate": "Error rate = trajectories that ended in error ÷ all; api_error_rate = trajectories with "
    "at least one API error (a request the server refused, an unreadable reply), whatever their ending, ÷ all. "
    "A refused request (HTTP 400/413/422, not a rate limit) is never re-sent: it ends the episode "
    "(a full context window: 'context window full at turn T').",
    "cut_off": "Cut off = replies the completion limit ended (finish_reason 'length'); calls lost = calls such a reply "
    "ended in the middle of, shown as a 'cut off mid-call' step and never run.",
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
    """Every definition the report uses where the paper is ambiguous, keyed for stable lookup
    (docs/protocol.md#what-is-measured)."""
    from stats.stopping import LEGEND as STOPPING
    from workbench.service.reports.hops import LEGEND as HOPS

    return {**LEGEND, **STOPPING, **HOPS}


def position_bias(records: Sequence[LightTrajectoryRow] | Table) -> PositionBias:
    """Which letters the agent picks, where the gold letters are, and accuracy per gold letter (docs/metrics.md)."""
    table = Table.of(records)
    letters = "ABCD"
    pred, gold, ok = table["predicted_index"], table["correct_index"], table["correct"]
    predicted = {k: int((pred == i).sum()) for i, k in enumerate(letters)}
    at = {k: gold == i for i, k in enumerate(letters)}
    return {
        "predicted_distribution": predicted,
        "correct_position_distribution": {k: int(m.sum()) for k, m in at.items()},
        "accuracy_when_correct_at": {k: [int((m & ok).sum()), int(m.sum())] for k, m in at.items() if m.any()},
    }


def analytics(
    records: Sequence[TrajectoryRow] | Table, actions: list[Any] | None = None, sequences: Any = None
) -> Analytics:
    """Trajectory analytics of one run: bigram Δ-accuracy, top trigram, transitions, stopping behaviour.

    `records` as dicts (with `actions` and `tool_sequence`), or a Table with the compact `actions` and the
    tool sequences (lists of names or a `stats.ngrams.Encoded`) beside it.
    """
    from stats import ngrams, stopping

    table = Table.of(records)
    actions, sequences = _actions_and_sequences(records, table.n, actions, sequences)
    enc = ngrams.Encoded.of(sequences)
    bigrams = ngrams.bigram_delta_accuracy(enc, table["correct"]) if table.n else []
    trajectories = stopping_rows(table, actions)
    return {
        "bigrams": [b for b in bigrams if b["n_with"]],
        "significant_bigrams": [b for b in bigrams if b["significant"]],
        "top_trigram": ngrams.top_trigram(enc),
        "transitions": ngrams.transition_matrix(enc),
        "stopping": stopping.stopping_behaviour(trajectories),
    }


def _actions_and_sequences(
    records: Sequence[TrajectoryRow] | Table, n: int, actions: list[Any] | None, sequences: Any
) -> tuple[list[Any], Any]:
    """Each trajectory's compact actions and tool sequence: from the records when they are dicts, else as given;
    no actions: none per trajectory, no sequences: each trajectory's actions' tool names."""
    if not isinstance(records, Table):
        return _record_actions(records)
    actions = actions if actions is not None else [[]] * n
    if sequences is None:
        sequences = [[a[0] for a in acts or []] for acts in actions]
    return actions, sequences


def _record_actions(records: Sequence[TrajectoryRow]) -> tuple[list[Any], list[Any]]:
    """The actions and tool sequences of trajectories given as dicts (none: empty)."""
    return [r.get("actions") or [] for r in records], [r.get("tool_sequence") or [] for r in records]


def stopping_rows(table: Table, actions: list[Any]) -> list[Trajectory]:
    """What `stats.stopping.stopping_behaviour` reads of each trajectory: kind, correctness, termination, gold
    count, paper recall (None where unknown: the stored flag defines Table 9's population, as it defines paper
    recall) and the compact actions."""
    recalls = [
        r if known else None for known, r in zip(table.known("paper_recall"), table["paper_recall"], strict=True)
    ]
    columns = zip(table["kind"], table["correct"], table["termination"], table["n_gold"], recalls, actions, strict=True)
    return [
        {
            "kind": k,
            "correct": bool(c),
            "termination": e,
            "n_gold": None if math.isnan(g) else int(g),
            "paper_recall": None if r is None else bool(r),
            "actions": a or [],
        }
        for k, c, e, g, r, a in columns
    ]


PROPORTION_TERMS = (
    "accuracy",
    "paper_recall",
    "section_recall",
    "conversion",
    "conversion_section",
    "max_tokens_rate",
    "max_turns_rate",
    "max_budget_rate",
    "error_rate",
    "api_error_rate",
)


def is_proportion(key: str) -> bool:
    """Whether a `stats.axes.ratio_terms` key is a proportion (0/1 outcomes over trajectories: a Wilson interval)
    rather than a mean or a ratio of sums (calls per turn, tokens, turns, points: a bootstrap interval)."""
    return key.partition(".")[0] in PROPORTION_TERMS


def intervals(
    records: Sequence[LightTrajectoryRow] | Table, n_boot: int = 10_000, seed: int = 0, tokens_measured: bool = True
) -> dict[str, Interval | None]:
    """95% intervals of every ratio of the report, keys as `stats.axes.ratio_terms`.

    Proportions (accuracy; recall and conversion by ST / MT / all; cap and error rates) get Wilson score
    intervals clustered by item (`stats.wilson.clustered_wilson`); means and ratios of sums (calls per turn,
    mean tokens, turns, points) a percentile bootstrap over items with all their replicates, one chunked draw.
    Each interval states its own `n` (items with at least one trajectory in that ratio's denominator) and
    `n_trajectories` (those trajectories), not the run's. None where a ratio is undefined, and for tokens a
    run did not measure (`tokens_measured=False`: a scripted agent's tokens have no interval, not 0–0)."""
    from stats.bootstrap import by_cluster, ratio_intervals

    table = Table.of(records)
    terms = axes.ratio_terms(table)
    out: dict[str, Interval | None] = dict.fromkeys(terms)
    if table.n < 2 or len(set(table["item_id"].tolist())) < 2:
        return out
    num = np.column_stack([v[0] for v in terms.values()])
    den = np.column_stack([v[1] for v in terms.values()])
    _, (item_num, item_den) = by_cluster(table["item_id"], num, den)
    found = ratio_intervals(num, den, clusters=table["item_id"], n_boot=n_boot, seed=seed)
    for j, (key, iv) in enumerate(zip(terms, found, strict=True)):
        if key == "avg_tokens" and not tokens_measured:
            continue
        own = {"n": int((item_den[:, j] > 0).sum()), "n_trajectories": int((den[:, j] > 0).sum())}
        out[key] = _wilson_interval(item_num[:, j], item_den[:, j], own) if is_proportion(key) else _bootstrap(iv, own)
    return out


def _wilson_interval(successes: np.ndarray, trials: np.ndarray, own: dict[str, int]) -> Interval | None:
    """A proportion's Wilson interval clustered by item (None: no trial), with its own n and n_trajectories."""
    from stats.wilson import clustered_wilson

    w = clustered_wilson(successes, trials)
    if w is None:
        return None
    # the interval's own keys, then its n, in the JSON's order: the record's keys all given
    return cast("Interval", {**w.as_dict(), **own, "n_boot": None, "seed": None, "no_variation": False})


def _bootstrap(iv: Resampled | None, own: dict[str, int]) -> Interval | None:
    """A mean's or ratio of sums' bootstrap interval (`stats.bootstrap.ratio_intervals`'), with its own n."""
    if iv is None:
        return None
    return cast("Interval", {**iv.as_dict(), **own, "method": "bootstrap, clustered by item"})


def diagnostics(store: Store, name: str, ci: bool = False, corpus: Any = None) -> RunReport:
    """The full single-run report: the foundation report plus position bias, analytics, the legend and
    (optionally) intervals; with the run's `corpus`, also the reference evaluator's own numbers."""
    run = store.run(name)
    table, extra = load_table(store, run, ("actions", "tool_sequence"))
    report = report_of(run, table)
    report["position_bias"] = position_bias(table)
    report["analytics"] = analytics(table, extra["actions"], encoded_sequences(extra["tool_sequence"]))
    if ci:
        report["intervals"] = intervals(table, tokens_measured=measures_tokens(run))
    report["section_labels"] = section_labels(store, run, corpus)
    report["read_hops"] = read_hops(store, run)
    if corpus is not None:
        from workbench.service.summary import reference_block

        report["reference"] = reference_block(store, name, corpus)
    report["legend"] = legend()
    note = report_note(run)
    if note:
        report["legend"]["prompts"] = note
    return report


def _dig(obj: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def transition_report(store: Store, name: str) -> RunTransitions:
    """The 7×7 tool transition matrix of a run (counts and row shares), from each trajectory's tool sequence."""
    run = store.run(name)
    texts = store.trajectory_columns(run["id"], ("tool_sequence",), raw=("tool_sequence",))["tool_sequence"]
    return transitions_of(run, encoded_sequences(texts))


def transitions_of(run: RunRow, sequences: Any) -> RunTransitions:
    """`transition_report` from tool sequences already loaded (lists of names, or `stats.ngrams.Encoded`)."""
    return {"run": run["name"], **transition_layout(sequences)}


def transition_layout(sequences: Any) -> TransitionLayout:
    """The 7×7 transition matrix as the heat maps draw it: tool names, counts, row shares, trajectories."""
    from stats.ngrams import Encoded, transition_matrix

    enc = Encoded.of(sequences)
    tm = transition_matrix(enc)
    return {"names": tm["tools"], "counts": tm["counts"], "rates": tm["probabilities"], "n": enc.n}


def run_diagnostics(store: Store, name: str) -> tuple[RunReport, RunTransitions]:
    """`run_report` and `transition_report` of one run from a single read of its trajectories (the TUI's tab)."""
    run = store.run(name)
    table, extra = load_table(store, run, ("tool_sequence",))
    report = report_of(run, table)
    report["read_hops"] = read_hops(store, run)
    return report, transitions_of(run, encoded_sequences(extra["tool_sequence"]))


def encoded_sequences(texts: Sequence[str | None]) -> Any:
    """The tool sequences as the store keeps them (JSON arrays of tool names, None = no calls), encoded for
    `stats.ngrams` without building a string per call: the store's encoding is read here, so stats only ever
    receives plain sequences or their codes.

    When no text holds a backslash, no string in it can contain an escaped quote, so the token `"read_section"`
    can only be a whole array element and is replaced by its code before one parse of all texts; names that are
    not tools stay strings and become UNKNOWN. Texts with a backslash take the ordinary path.
    """
    import itertools
    import json

    from stats.ngrams import CODE, UNKNOWN, Encoded

    joined = "[" + ",".join(t if t else "[]" for t in texts) + "]"
    if "\\" in joined:
        return Encoded.of([s or [] for s in json.loads(joined)])
    for name, code in CODE.items():
        joined = joined.replace(f'"{name}"', str(code))
    lists = json.loads(joined)
    lengths = np.fromiter(map(len, lists), dtype=np.int64, count=len(lists))
    flat = itertools.chain.from_iterable(lists)
    codes = np.fromiter(
        (c if type(c) is int else UNKNOWN for c in flat) if '"' in joined else flat,
        dtype=np.int64,
        count=int(lengths.sum()),
    )
    return Encoded(codes, np.repeat(np.arange(len(lists)), lengths), len(lists))
