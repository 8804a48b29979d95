"""The reference evaluator's `summary.json` (docs/protocol.md#parity), reproduced field for field — its quirks included.

docs/protocol.md#parity promises that a user can reconcile our numbers with a published `summary.json`,
so these are the reference's own definitions, not ours: reads include failed reads, recall is
"any gold paper" and header-to-header fuzzy matching on the 500-character-truncated output,
the first matching label decides soft vs hard, seed reads are wasted reads, `p50` is the upper
median, and every ratio is `pct(num, den) = round(num / den, 4)` (0.0 when den == 0).

Pure: it takes records shaped like the reference's trajectory files and sample metadata, and
the header normaliser to use (the sandbox's `norm`, passed in so this package imports nothing
of ours). A trajectory record has the keys of the reference's trajectory files that the evaluator reads:

    sample_id, question_type, depth, reasoning_type, correct_index, predicted_index, is_correct,
    terminated_by, total_turns (default len(turns)), total_prompt_tokens, total_completion_tokens,
    cache_read_tokens, cache_creation_tokens, wall_time_s, tool_errors, api_error_count,
    transient_retry_count, retry_count,
    turns: [{role, prompt_tokens, completion_tokens, tool_calls: [{name, args}],
             tool_results: [{name, args, output (as logged: truncated), cost}]}]

A sample is `{venue, consensus_tier, filter_agreement, distractor_types, gold_arxiv_ids,
bridge_arxiv_ids, nodes: {s2 id: arXiv id}, labels: [{arxiv_id, section, relevance}] (file order)}`;
a missing sample is `{}` (its metadata counts as "?", its reads as nothing), as in the reference.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

SCHEMA_VERSION = "agenthop-eval-v1"
LETTERS = "ABCD"
REJECTED = "REJECTED"
_HEADER = re.compile(r"^===\s*(.+?)\s*===")

Record = Mapping[str, Any]
Norm = Callable[[str], str]
CostFn = Callable[[Mapping[str, int]], dict[str, float] | None]  # token totals → the dollar breakdown


class Bucket(TypedDict):
    """Accuracy of the trajectories with one value of a field."""

    n: int
    correct: int
    accuracy: float


class PositionBias(TypedDict):
    predicted_distribution: dict[str, int]
    correct_position_distribution: dict[str, int]
    accuracy_when_correct_at: dict[str, float]


class Accuracy(TypedDict):
    """The accuracy block (§5.3)."""

    overall: float
    by_type: dict[str, Bucket]
    by_depth: dict[str, Bucket]
    by_reasoning: dict[str, Bucket]
    by_venue: dict[str, Bucket]
    by_consensus_tier: dict[str, Bucket]
    by_filter_agreement: dict[str, Bucket]
    mt_d2_by_bridge_necessary: dict[str, Bucket]
    conditional_on_termination: dict[str, Bucket]
    position_bias: PositionBias


class FailureAttribution(TypedDict):
    """What the wrong answers picked (§5.4)."""

    n_wrong: int
    counts: dict[str, int]
    rates: dict[str, float]


class PatternBucket(TypedDict):
    n: int
    share: float
    correct: int
    accuracy: float


class PatternGroup(TypedDict):
    """The navigation-pattern buckets of one type/depth group."""

    total: int
    buckets: dict[str, PatternBucket]


class Retrieval(TypedDict):
    """The retrieval block (§5.5)."""

    paper_recall: float
    section_recall_soft: float
    section_recall_hard: float
    conversion_rate: float
    conversion_denominator: int
    min_navigation_rate: float
    wasted_read_rate: float
    total_read_calls: int
    navigation_patterns: dict[str, PatternGroup]


class Spread(TypedDict):
    """The reference's summary statistics of a list of values."""

    mean: float
    p50: float
    p90: float
    p95: float
    n: int


class Tools(TypedDict):
    """The tools block (§5.6)."""

    usage_counts: dict[str, int]
    usage_per_sample_mean: dict[str, float]
    budget_spend_by_tool: dict[str, int]
    budget_share_by_tool: dict[str, float]
    rejection_rate: float
    turn_stats: Spread
    terminated_by: dict[str, int]


class TurnProfile(TypedDict):
    """Mean tokens at one turn-record position."""

    turn: int
    n_samples: int
    mean_prompt_tokens: float
    mean_completion_tokens: float


class WallTime(Spread):
    total_minutes: float


class Pricing(TypedDict):
    """A model's price: provider, dollars per million input and output tokens, the cache read and write multipliers."""

    provider: str
    input_per_m: float
    output_per_m: float
    cache_read_mult: float
    cache_write_mult: float


class PriceFields(TypedDict):
    """The pricing as the cost block prints it: every field None when the model is unpriced."""

    provider: str | None
    input_per_m: float | None
    output_per_m: float | None
    cache_read_mult: float | None
    cache_write_mult: float | None


class Cost(PriceFields):
    """The cost block (§5.7): the model's pricing (None when unpriced), tokens, dollars, wall time."""

    pricing_found: bool
    tokens: dict[str, int]
    per_sample_mean_tokens: dict[str, float]
    cache_hit_rate: float
    cost_usd: dict[str, float] | None
    wall_time: WallTime
    trajectory_profile: list[TurnProfile]


class Errors(TypedDict):
    """The errors block (§5.8)."""

    api_error_total: int
    transient_retry_total: int
    tool_call_error_total: int
    samples_with_transient_retries: list[str]
    retry_count_histogram: dict[str, int]
    retried_then_succeeded: list[str]
    retried_then_failed: list[str]


def pct(num: float, den: float) -> float:
    """The reference's ratio: rounded to 4 places, 0.0 for an empty denominator."""
    return round(num / den, 4) if den else 0.0


def summary(
    trajectories: Sequence[Record],
    samples: Mapping[str, Record],
    *,
    norm: Norm,
    fingerprint: Mapping[str, Any],
    config: Mapping[str, Any],
    pricing: Pricing | None = None,
    cost_fn: CostFn | None = None,
) -> dict[str, Any]:
    """The whole `summary.json`. `pricing` holds provider, input_per_m, output_per_m, cache_read_mult and
    cache_write_mult (None when the model is unpriced); `cost_fn` turns the token totals into `cost_usd`."""
    n = len(trajectories)
    if n == 0:
        return {"schema_version": SCHEMA_VERSION, "empty": True}
    sample_of = [samples.get(sid, {}) if isinstance(sid := t.get("sample_id"), str) else {} for t in trajectories]
    facts = [read_facts(t, s, norm) for t, s in zip(trajectories, sample_of, strict=True)]
    return {
        "fingerprint": dict(fingerprint),
        "config": dict(config),
        "total": n,
        "correct": sum(_ok(t) for t in trajectories),
        "accuracy": accuracy(trajectories, sample_of),
        "failure_attribution": failure_attribution(trajectories, sample_of),
        "retrieval": retrieval(trajectories, facts),
        "tools": tools(trajectories),
        "cost": cost(trajectories, pricing, cost_fn),
        "errors": errors(trajectories),
    }


def _ok(t: Record) -> bool:
    return bool(t.get("is_correct"))


# ---------------------------------------------------------------- accuracy (§5.3)


def buckets(pairs: Iterable[tuple[str, bool]]) -> dict[str, Bucket]:
    """`{key: {n, correct, accuracy}}`, sorted by key string."""
    table: dict[str, list[int]] = {}
    for key, ok in pairs:
        cell = table.setdefault(str(key), [0, 0])
        cell[0] += 1
        cell[1] += int(ok)
    return {k: Bucket(n=n, correct=c, accuracy=pct(c, n)) for k, (n, c) in sorted(table.items())}


def accuracy(trajs: Sequence[Record], samples: Sequence[Record]) -> Accuracy:
    pairs = list(zip(trajs, samples, strict=True))
    mt_d2 = [(t, s) for t, s in pairs if _is_mt_d2(t)]
    return Accuracy(
        overall=pct(sum(_ok(t) for t in trajs), len(trajs)),
        by_type=_by_trajectory(trajs, lambda t: t.get("question_type") or "?"),
        by_depth=_by_trajectory(trajs, lambda t: f"d{t.get('depth')}"),
        by_reasoning=_by_trajectory(trajs, lambda t: t.get("reasoning_type") or "?"),
        by_venue=_by_sample(pairs, lambda s: s.get("venue") or "?"),
        by_consensus_tier=_by_sample(pairs, lambda s: s.get("consensus_tier") or "?"),
        by_filter_agreement=_by_sample(pairs, lambda s: f"agree_{s.get('filter_agreement')}"),
        # the loader never copies `bridge_necessary`, so in the reference this is always "unlabeled"
        mt_d2_by_bridge_necessary=_by_sample(mt_d2, lambda s: _necessity(s.get("bridge_necessary"))),
        conditional_on_termination=_by_trajectory(trajs, lambda t: str(t.get("terminated_by"))),
        position_bias=position_bias(trajs),
    )


def _is_mt_d2(t: Record) -> bool:
    return t.get("question_type") == "multi-target" and t.get("depth") == 2


def _by_trajectory(trajs: Sequence[Record], key: Callable[[Record], str]) -> dict[str, Bucket]:
    """Accuracy buckets keyed by a trajectory's field."""
    return buckets((key(t), _ok(t)) for t in trajs)


def _by_sample(pairs: Sequence[tuple[Record, Record]], key: Callable[[Record], str]) -> dict[str, Bucket]:
    """Accuracy buckets keyed by a field of the trajectory's sample."""
    return buckets((key(s), _ok(t)) for t, s in pairs)


def _necessity(value: Any) -> str:
    return "necessary" if value is True else "optional" if value is False else "unlabeled"


def _letter(index: Any) -> str | None:
    return LETTERS[index] if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < 4 else None


def position_bias(trajs: Sequence[Record]) -> PositionBias:
    """Predicted letters (valid predictions only), gold letters, and accuracy per gold letter that occurs."""
    predicted = Counter(_letter(t.get("predicted_index")) for t in trajs)
    gold = Counter(_letter(t.get("correct_index")) for t in trajs)
    right = Counter(_letter(t.get("correct_index")) for t in trajs if _ok(t))
    return PositionBias(
        predicted_distribution={x: predicted.get(x, 0) for x in LETTERS},
        correct_position_distribution={x: gold.get(x, 0) for x in LETTERS},
        accuracy_when_correct_at={x: pct(right.get(x, 0), gold[x]) for x in LETTERS if gold.get(x)},
    )


# ---------------------------------------------------------------- failure attribution (§5.4)


def chosen_distractor(t: Record, sample: Record) -> str:
    """What a wrong answer picked: `no_answer`, a distractor type, or `unknown` (also for a "correct" entry)."""
    pred = t.get("predicted_index")
    if not isinstance(pred, int) or pred < 0:
        return "no_answer"
    types = sample.get("distractor_types")
    if not isinstance(types, (list, tuple)) or pred >= len(types) or types[pred] == "correct":
        return "unknown"
    return str(types[pred])


def failure_attribution(trajs: Sequence[Record], samples: Sequence[Record]) -> FailureAttribution:
    wrong = [(t, s) for t, s in zip(trajs, samples, strict=True) if not _ok(t)]
    counts = Counter(chosen_distractor(t, s) for t, s in wrong)
    return FailureAttribution(
        n_wrong=len(wrong),
        counts=dict(sorted(counts.items())),
        rates={k: pct(v, len(wrong)) for k, v in sorted(counts.items())},
    )


# ---------------------------------------------------------------- retrieval (§5.5)


@dataclass(frozen=True)
class ReadFacts:
    """What one trajectory's reads amount to under the reference's definitions."""

    reads: tuple[tuple[str, str], ...]  # (arXiv id, read section name)
    gold: frozenset[str]
    reached: frozenset[str]  # gold papers with ≥1 read
    bridge_read: bool
    soft: bool
    hard: bool
    wasted: int
    searched: bool
    navigated: bool  # ≥1 get_references or search_papers call
    correct: bool


def read_section_name(output: str, args: Any) -> str:
    """The header of a leading `=== … ===` in the logged output, else the raw `section` argument."""
    m = _HEADER.match(output)
    if m:
        return m.group(1)
    section = args.get("section", "") if isinstance(args, Mapping) else ""
    return section if isinstance(section, str) else ""


def reads_of(t: Record, nodes: Mapping[str, str | None]) -> list[tuple[str, str]]:
    """`read_section` results on graph nodes with an arXiv id, not rejected — failed reads included."""
    reads = (_read_of(r, nodes) for r in _tool_results([t]) if r.get("name") == "read_section")
    return [read for read in reads if read is not None]


def _read_of(result: Record, nodes: Mapping[str, str | None]) -> tuple[str, str] | None:
    """(arXiv id, section name) of one read_section result; None off the graph's arXiv nodes, or rejected."""
    args = result.get("args")
    pid = args.get("paper_id") if isinstance(args, Mapping) else None
    arxiv = nodes.get(pid) if isinstance(pid, str) else None
    output = result.get("output") or ""
    if not arxiv or output.startswith((REJECTED, "[ERROR")):
        return None
    return arxiv, read_section_name(output, args)


def sections_match(read: str, label: str, norm: Norm) -> bool:
    """The evaluator's fuzzy header match: raw or normalised substring either way, or ≥60% of the
    read's (≥2) normalised words in the label. No body-text rule, no subsection→parent mapping."""
    if not read or not label:
        return False
    r, lab = read.lower(), label.lower()
    if r in lab or lab in r:
        return True
    nr, nl = norm(read), norm(label)
    if nr and nl and (nr in nl or nl in nr):
        return True
    words = set(nr.split())
    return len(words) >= 2 and len(words & set(nl.split())) / len(words) >= 0.6


def labels_by_paper(sample: Record) -> dict[str, list[Record]]:
    """Labels grouped by arXiv id in file order; labels without an arXiv id are dropped (as the evaluator does)."""
    grouped: dict[str, list[Record]] = {}
    for lab in sample.get("labels") or ():
        arxiv = lab.get("arxiv_id")
        if isinstance(arxiv, str) and arxiv:
            grouped.setdefault(arxiv, []).append(lab)
    return grouped


def _called(t: Record) -> set[str | None]:
    """The names of the tools a trajectory called."""
    return {c.get("name") for turn in _turns(t) for c in turn.get("tool_calls") or ()}


def read_facts(t: Record, sample: Record, norm: Norm) -> ReadFacts:
    reads = reads_of(t, sample.get("nodes") or {})
    gold = frozenset(sample.get("gold_arxiv_ids") or ())
    bridge = frozenset(sample.get("bridge_arxiv_ids") or ())
    soft, hard = _section_recall(reads, gold, labels_by_paper(sample), norm)
    calls = _called(t)
    return ReadFacts(
        reads=tuple(reads),
        gold=gold,
        reached=frozenset(a for a, _ in reads if a in gold),
        bridge_read=any(a in bridge for a, _ in reads),
        soft=soft,
        hard=hard,
        wasted=sum(1 for a, _ in reads if a not in gold | bridge),
        searched="search_papers" in calls,
        navigated=bool(calls & {"search_papers", "get_references"}),
        correct=_ok(t),
    )


def _section_recall(
    reads: list[tuple[str, str]], gold: frozenset[str], labels: Mapping[str, Sequence[Record]], norm: Norm
) -> tuple[bool, bool]:
    """(soft, hard) section recall of a trajectory's reads of gold papers: a read matched a label (soft), and the
    label it matched first is a direct one (hard)."""
    soft = hard = False
    for arxiv, name in reads:
        if arxiv not in gold:
            continue
        for lab in labels.get(arxiv, ()):
            section = lab.get("section")
            if sections_match(name, section if isinstance(section, str) else "", norm):
                soft = True  # the FIRST matching label decides: a supporting one masks a later direct one
                hard = hard or lab.get("relevance") == "direct"
                break
    return soft, hard


def retrieval(trajs: Sequence[Record], facts: Sequence[ReadFacts]) -> Retrieval:
    n = len(trajs)
    reached = [f for f in facts if f.reached]
    total_reads = sum(len(f.reads) for f in facts)
    return Retrieval(
        paper_recall=pct(len(reached), n),
        section_recall_soft=pct(sum(f.soft for f in facts), n),
        section_recall_hard=pct(sum(f.hard for f in facts), n),
        conversion_rate=pct(sum(f.correct for f in reached), len(reached)),
        conversion_denominator=len(reached),
        min_navigation_rate=pct(sum(f.navigated for f in facts), n),
        wasted_read_rate=pct(sum(f.wasted for f in facts), total_reads),
        total_read_calls=total_reads,
        navigation_patterns=navigation_patterns(trajs, facts),
    )


PATTERN_GROUPS = ("st_d1", "st_d2", "mt_d1", "mt_d2")


def pattern_group(t: Record) -> str:
    return f"{'mt' if t.get('question_type') == 'multi-target' else 'st'}_d{t.get('depth')}"


def pattern_bucket(group: str, f: ReadFacts) -> str:
    """The navigation-pattern bucket of one trajectory in its type/depth group."""
    return _PATTERN_BUCKETS[group](f)


def _st_d1_bucket(f: ReadFacts) -> str:
    return "reached_target" if f.reached else "missed"


def _st_d2_bucket(f: ReadFacts) -> str:
    if not f.reached:
        return "bridge_only" if f.bridge_read else "neither"
    if f.bridge_read:
        return "bridge_and_target"
    return "target_only_via_search" if f.searched else "target_only_skipped_bridge"


def _mt_reach(f: ReadFacts) -> str:
    """How many of a multi-target item's gold papers were reached."""
    k, n = len(f.reached), len(f.gold)
    return "reached_0" if k == 0 else "reached_all" if k == n else f"reached_{k}_of_{n}"


def _mt_d2_bucket(f: ReadFacts) -> str:
    if not f.reached:
        return "reached_0_bridge" if f.bridge_read else "reached_0"
    via = "via_bridge" if f.bridge_read else "via_search" if f.searched else "via_seed_cite"
    return f"{_mt_reach(f)}__{via}"


_PATTERN_BUCKETS: dict[str, Callable[[ReadFacts], str]] = {
    "st_d1": _st_d1_bucket,
    "st_d2": _st_d2_bucket,
    "mt_d1": _mt_reach,
    "mt_d2": _mt_d2_bucket,
}


def navigation_patterns(trajs: Sequence[Record], facts: Sequence[ReadFacts]) -> dict[str, PatternGroup]:
    """Groups st_d1/st_d2/mt_d1/mt_d2 that have trajectories.

    Shape: `{total, buckets: {name: {n, share, correct, accuracy}}}`.
    """
    groups: dict[str, list[ReadFacts]] = {}
    for t, f in zip(trajs, facts, strict=True):
        group = pattern_group(t)
        if group in PATTERN_GROUPS:
            groups.setdefault(group, []).append(f)
    return {group: _pattern_group(group, groups[group]) for group in PATTERN_GROUPS if groups.get(group)}


def _pattern_group(group: str, members: Sequence[ReadFacts]) -> PatternGroup:
    """One type/depth group's trajectories by navigation-pattern bucket."""
    table: dict[str, list[int]] = {}
    for f in members:
        cell = table.setdefault(pattern_bucket(group, f), [0, 0])
        cell[0] += 1
        cell[1] += int(f.correct)
    return PatternGroup(
        total=len(members),
        buckets={
            name: PatternBucket(n=k, share=pct(k, len(members)), correct=c, accuracy=pct(c, k))
            for name, (k, c) in sorted(table.items())
        },
    )


# ---------------------------------------------------------------- tools (§5.6)


def spread(values: Sequence[float]) -> Spread:
    """The reference's stats: mean (2 dp), p50 = sorted[n//2] (upper median), p90/p95 = sorted[min(int(q·n), n−1)]."""
    v = sorted(values)
    n = len(v)
    if n == 0:
        return Spread(mean=0.0, p50=0, p90=0, p95=0, n=0)
    return Spread(
        mean=round(sum(v) / n, 2),
        p50=v[n // 2],
        p90=v[min(int(0.9 * n), n - 1)],
        p95=v[min(int(0.95 * n), n - 1)],
        n=n,
    )


def total_turns(t: Record) -> int:
    """`len(turns)`: assistant turns plus error records plus the token-limit note."""
    value = t.get("total_turns")
    return value if isinstance(value, int) else len(t.get("turns") or ())


def _turns(t: Record) -> Sequence[Record]:
    """A trajectory's turn records (none when absent)."""
    return t.get("turns") or ()


def _tool_results(trajs: Sequence[Record]) -> list[Record]:
    """Every tool result of every turn, in order."""
    return [r for t in trajs for turn in _turns(t) for r in turn.get("tool_results") or ()]


def _rejected(result: Record) -> bool:
    return (result.get("output") or "").startswith(REJECTED + ":")


def tools(trajs: Sequence[Record]) -> Tools:
    n = len(trajs)
    usage = _tool_usage(trajs)
    results = _tool_results(trajs)
    spend = _budget_spend(results)
    total_spend = max(sum(spend.values()), 1)
    return Tools(
        usage_counts=dict(sorted(usage.items())),
        usage_per_sample_mean={k: round(v / n, 2) for k, v in sorted(usage.items())},
        budget_spend_by_tool=dict(sorted(spend.items())),
        budget_share_by_tool={k: round(v / total_spend, 4) for k, v in sorted(spend.items())},
        rejection_rate=pct(sum(_rejected(r) for r in results), len(results)),
        turn_stats=spread([total_turns(t) for t in trajs]),
        terminated_by=dict(sorted(Counter(str(t.get("terminated_by")) for t in trajs).items())),
    )


def _tool_usage(trajs: Sequence[Record]) -> Counter[str]:
    """Calls per tool name, over every turn's tool calls."""
    return Counter(str(c.get("name")) for t in trajs for turn in _turns(t) for c in turn.get("tool_calls") or ())


def _budget_spend(results: Sequence[Record]) -> Counter[str]:
    """Points charged per tool name, over the results that were not rejected."""
    spend: Counter[str] = Counter()
    for r in results:
        if not _rejected(r):
            spend[str(r.get("name"))] += r.get("cost") or 0
    return spend


# ---------------------------------------------------------------- cost (§5.7)


PRICE_KEYS = ("provider", "input_per_m", "output_per_m", "cache_read_mult", "cache_write_mult")


def token_totals(trajs: Sequence[Record]) -> dict[str, int]:
    regular = sum(t.get("total_prompt_tokens") or 0 for t in trajs)
    read = sum(t.get("cache_read_tokens") or 0 for t in trajs)
    creation = sum(t.get("cache_creation_tokens") or 0 for t in trajs)
    completion = sum(t.get("total_completion_tokens") or 0 for t in trajs)
    return {
        "regular_input": regular,
        "cache_read": read,
        "cache_creation": creation,
        "completion": completion,
        "total_input": regular + read + creation,
    }


def trajectory_profile(trajs: Sequence[Record]) -> list[TurnProfile]:
    """Mean prompt/completion tokens at each turn-record position (error and harness records included)."""
    longest = max((len(_turns(t)) for t in trajs), default=0)
    return [_turn_profile(k, [_turns(t)[k] for t in trajs if len(_turns(t)) > k]) for k in range(longest)]


def _turn_profile(k: int, at: Sequence[Record]) -> TurnProfile:
    """Mean prompt and completion tokens of the turn records `at` position `k`."""
    return TurnProfile(
        turn=k,
        n_samples=len(at),
        mean_prompt_tokens=_mean_tokens(at, "prompt_tokens"),
        mean_completion_tokens=_mean_tokens(at, "completion_tokens"),
    )


def _mean_tokens(records: Sequence[Record], key: str) -> float:
    return round(sum(r.get(key) or 0 for r in records) / len(records), 1)


def cost(trajs: Sequence[Record], pricing: Pricing | None, cost_fn: CostFn | None) -> Cost:
    n = len(trajs)
    tokens = token_totals(trajs)
    wall = [float(t.get("wall_time_s") or 0.0) for t in trajs]
    return Cost(
        pricing_found=pricing is not None,
        **_price_fields(pricing),
        tokens=tokens,
        per_sample_mean_tokens={
            k: round(tokens[k] / n, 1) for k in ("regular_input", "cache_read", "cache_creation", "completion")
        },
        cache_hit_rate=pct(tokens["cache_read"], tokens["total_input"]),
        cost_usd=cost_fn(tokens) if (pricing is not None and cost_fn is not None) else None,
        wall_time=WallTime(**spread(wall), total_minutes=round(sum(wall) / 60, 2)),
        trajectory_profile=trajectory_profile(trajs),
    )


def _price_fields(pricing: Pricing | None) -> PriceFields:
    if pricing is None:
        return PriceFields(
            provider=None, input_per_m=None, output_per_m=None, cache_read_mult=None, cache_write_mult=None
        )
    return PriceFields(
        provider=pricing["provider"],
        input_per_m=pricing["input_per_m"],
        output_per_m=pricing["output_per_m"],
        cache_read_mult=pricing["cache_read_mult"],
        cache_write_mult=pricing["cache_write_mult"],
    )


# ---------------------------------------------------------------- errors (§5.8)


def errors(trajs: Sequence[Record]) -> Errors:
    """The errors block: API errors, transient retries and tool errors in total, and which samples were retried
    (and whether the retry succeeded)."""
    retries = Counter(int(_count(t, "retry_count")) for t in trajs)
    retried = _having(trajs, "retry_count")
    return Errors(
        api_error_total=_total(trajs, "api_error_count"),
        transient_retry_total=_total(trajs, "transient_retry_count"),
        tool_call_error_total=_total(trajs, "tool_errors"),
        samples_with_transient_retries=_sample_ids(_having(trajs, "transient_retry_count")),
        retry_count_histogram={str(k): v for k, v in sorted(retries.items())},
        retried_then_succeeded=_sample_ids(t for t in retried if not _errored(t)),
        retried_then_failed=_sample_ids(t for t in retried if _errored(t)),
    )


def _total(trajs: Sequence[Record], key: str) -> int:
    return sum(_count(t, key) for t in trajs)


def _having(trajs: Sequence[Record], key: str) -> list[Record]:
    """The trajectories whose count `key` is above 0."""
    return [t for t in trajs if _count(t, key) > 0]


def _errored(t: Record) -> bool:
    return t.get("terminated_by") == "error"


def _count(t: Record, key: str) -> Any:
    """A count field of a trajectory, 0 when absent or null."""
    return t.get(key) or 0


def _sample_ids(trajs: Iterable[Record]) -> list[str]:
    return sorted(str(t.get("sample_id")) for t in trajs)
