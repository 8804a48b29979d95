"""How far from the seed a run's reads went: each delivered read's stored citation-hop distance (steps.hop), by
bucket, for gold and non-gold reads, and beyond the item's depth.

Our diagnostic, not the paper's: it builds on the paper's notion of an item's depth (the hops from the seed to its
gold papers; docs/metrics.md) and measures it on what the agent read. The hops are recorded by the episode
(`sandbox.episode`), or backfilled from stored reads for runs stored before (`workbench.service.relabel`); a run whose
hops were never measured reports `measured: false` and its numbers as None ("—"), never as zero.
"""

from __future__ import annotations

from sandbox.citations import hops_stale, within_depth
from sandbox.recall import stored_reads
from storage import Store
from storage.rows import RunRow
from workbench.service.records.ratio import Pair
from workbench.service.records.report import ReadHops

BUCKETS = ("0", "1", "2", "3+", "unreachable")
LEGEND = {
    "read_hops": "Read hops (our diagnostic) = citation hops from the item's seed to the paper of each delivered "
    "read, by the shortest chain of 'cites' edges over the item's graph: the rule of the dataset's check "
    "that every gold paper is within the item's depth (0 = the seed; unreachable = no citation path, "
    "the paper found by search only). mean_hop over reachable reads, gold and non-gold apart; "
    "beyond_depth = reads farther than the item's depth or unreachable ÷ all reads. Not measured (—) "
    "for a run stored before hops were recorded whose dataset cannot be opened.",
}


def bucket(hop: int | None) -> str:
    """The report's bucket of a hop distance: 0 (the seed), 1, 2, 3+ or unreachable."""
    if hop is None:
        return "unreachable"
    return str(hop) if hop < 3 else "3+"


def read_hops(store: Store, run: RunRow) -> ReadHops:
    """The run's delivered reads by hop from the seed (final trajectories), gold and non-gold reads' mean hop and
    the share beyond the item's depth, each with its counts."""
    steps = store.delivered_steps(run["id"])
    reads = [(r["trajectory_id"], r["depth"], r["paper_id"], r["hop"]) for r in stored_reads(steps)]
    measured = not hops_stale(run)
    out: ReadHops = {
        "measured": measured,
        "reads": len(reads),
        "by_hop": None,
        "mean_hop": None,
        "beyond_depth": None,
        "counts": None,
    }
    if not measured:
        return out
    golds = _gold_papers(store, run)
    by_hop = dict.fromkeys(BUCKETS, 0)
    gold: Pair = [0, 0]  # [hops summed, reachable reads]
    non_gold: Pair = [0, 0]
    beyond = 0
    for tid, depth, paper, hop in reads:
        by_hop[bucket(hop)] += 1
        beyond += not within_depth(hop, depth or 0)
        if hop is not None:
            side = gold if paper in golds.get(tid, ()) else non_gold
            side[0] += hop
            side[1] += 1
    out["by_hop"] = by_hop
    out["mean_hop"] = {"gold": _mean(gold), "non_gold": _mean(non_gold)}
    out["beyond_depth"] = beyond / len(reads) if reads else None
    out["counts"] = {"mean_hop": {"gold": gold, "non_gold": non_gold}, "beyond_depth": [beyond, len(reads)]}
    return out


def _mean(pair: Pair) -> float | None:
    """[sum, count] as their mean (None: nothing counted)."""
    return pair[0] / pair[1] if pair[1] else None


def _gold_papers(store: Store, run: RunRow) -> dict[int, set[str]]:
    """Per trajectory, the papers its calls named that are gold for its item (the role stored with each call)."""
    cols = store.trajectory_columns(run["id"], ("id", "actions"))
    return {
        tid: {a[2] for a in acts or () if len(a) > 3 and a[3] == "gold"}
        for tid, acts in zip(cols["id"], cols["actions"], strict=True)
    }
