"""Out-of-domain tool use in the general-agent setting (the scaling study, arXiv 2602.18998 §2.2 and App. B.8).

The study measures *tool confusion* as the share of an agent's tool calls that go to tools of other domains
(Gemini-2.5-Flash: ~5 % on SWE-Bench up to ~50 % on WebVoyager) and tells it from *context overhead* (a larger
registry in the prompt) by one rule: a drop in accuracy with a high out-of-domain share is confusion; a drop with
few such calls points to overhead. Definitions used here (stated in the report's legend):

- a *call* is every tool call the agent made, rejected ones included (what the agent chose to do, as the n-gram
  analytics count it); the out-of-domain share = out-of-domain calls / all calls, pooled over trajectories, with
  a Wilson 95 % interval over calls; also per item, per tool, and the share of trajectories with at least one;
- *points out of domain* = points charged for executed out-of-domain calls (rejected calls cost nothing), over
  all points charged;
- *turns out of domain* = assistant turns whose every call was out of domain, over turns with at least one call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypedDict

from stats.ngrams import TOOLS, TransitionMatrix
from stats.ratio import Ratio
from stats.wilson import wilson

CHARGED = (
    "ok",
    "error",
    "not_found",
    "metadata_only",
    "no_sections",
    "unresolved",
    "empty",
    "unknown_tool",
    "extended",
)  # every executed status: what a rejected or disabled call is not
UNCHARGED = ("rejected", "disabled")

# the study's rule, made a number: a drop with at least this out-of-domain share is tool confusion
CONFUSION_SHARE = 0.10


@dataclass(frozen=True)
class Call:
    """One tool call of a trajectory: its turn, tool name, status and the points it was charged."""

    turn: int
    name: str
    status: str | None
    cost: int


class OffDomainMeasures(TypedDict):
    """Out-of-domain measures of one run (see `measures`)."""

    share: Ratio
    share_interval: list[float] | None
    trajectories_with_any: Ratio
    per_tool: dict[str, int]
    per_item: dict[str, list[int]]
    points: Ratio
    points_per_trajectory: Ratio
    turns: Ratio
    turns_per_trajectory: Ratio
    rejected: int
    calls: int
    trajectories: int


def measures(trajectories: Sequence[dict[str, Any]], extra: Collection[str]) -> OffDomainMeasures:
    """Out-of-domain measures of one run. Each trajectory is {"item_id", "calls": [Call, …]}; `extra` the names of
    the out-of-domain tools offered."""
    extra = set(extra)
    calls = ood = with_any = points = ood_points = turns = ood_turns = rejected = 0
    per_tool: Counter[str] = Counter()
    per_item: dict[str, list[int]] = {}
    for t in trajectories:
        item = per_item.setdefault(str(t["item_id"]), [0, 0])
        by_turn: dict[int, list[bool]] = {}
        n_ood = 0
        for c in t["calls"]:
            out = c.name in extra
            calls += 1
            item[1] += 1
            by_turn.setdefault(c.turn, []).append(out)
            if c.status not in UNCHARGED:
                points += c.cost
                ood_points += c.cost if out else 0
            if out:
                n_ood += 1
                item[0] += 1
                per_tool[c.name] += 1
                rejected += c.status in UNCHARGED
        ood += n_ood
        with_any += n_ood > 0
        turns += len(by_turn)
        ood_turns += sum(all(flags) for flags in by_turn.values())
    n = len(trajectories)
    interval = wilson(ood, calls) if calls else None
    return OffDomainMeasures(
        share=Ratio(ood, calls),
        share_interval=None if interval is None else [interval.low, interval.high],
        trajectories_with_any=Ratio(with_any, n),
        per_tool=dict(sorted(per_tool.items(), key=lambda kv: (-kv[1], kv[0]))),
        per_item=per_item,
        points=Ratio(ood_points, points),
        points_per_trajectory=Ratio(ood_points, n),
        turns=Ratio(ood_turns, turns),
        turns_per_trajectory=Ratio(ood_turns, n),
        rejected=rejected,
        calls=calls,
        trajectories=n,
    )


Mechanism = Literal["no drop", "tool confusion", "context overhead", "unmeasured"]


def mechanism(
    drop_significant: bool | None, delta: float | None, share: float | None, threshold: float = CONFUSION_SHARE
) -> Mechanism:
    """Which mechanism a setting's accuracy change points to, by the study's rule (App. B.8):
    `no drop` (accuracy did not fall significantly), `tool confusion` (a significant drop with an out-of-domain
    share ≥ threshold), `context overhead` (a significant drop with fewer such calls), or `unmeasured`."""
    if delta is None or share is None or drop_significant is None:
        return "unmeasured"
    if delta >= 0 or not drop_significant:
        return "no drop"
    return "tool confusion" if share >= threshold else "context overhead"


OTHER = "other"


def transitions_with_other(sequences: Sequence[Sequence[str]], extra: Collection[str]) -> TransitionMatrix:
    """The tool-to-tool transition matrix with every out-of-domain call as one `other` tool (8 × 8): row a,
    column b counts calls of b directly after a; rows normalised to shares (a row with no successor is zeros).
    A name that is neither a protocol tool nor an offered extra (a hallucinated tool) breaks adjacency, as in
    `stats.ngrams`; the 7 × 7 block equals `ngrams.transition_matrix` on sequences without out-of-domain calls."""
    names = [*TOOLS, OTHER]
    index = {n: i for i, n in enumerate(TOOLS)}
    extra = set(extra)
    counts = [[0] * len(names) for _ in names]
    for seq in sequences:
        prev = None
        for name in seq:
            code = index.get(name, len(TOOLS) if name in extra else None)
            if prev is not None and code is not None:
                counts[prev][code] += 1
            prev = code
    totals = [sum(row) for row in counts]
    probs = [[c / t if t else 0.0 for c in row] for row, t in zip(counts, totals, strict=True)]
    return TransitionMatrix(tools=names, counts=counts, row_totals=totals, probabilities=probs)
