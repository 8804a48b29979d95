"""Section-recall flags of stored trajectories, recomputed under the current label resolution
(docs/protocol.md#section-labels), and the hop of each stored read from the seed, for runs stored before hops
were recorded.

A trajectory stores its delivered reads as (arXiv id, resolved section index) pairs; its section-recall flags
compare them with the sections the item's labels resolve to. When the label rules change
(`sandbox.sections.LABEL_RESOLUTION`), the flags of a stored run are recomputed from those reads against the
labels as the current rules resolve them, so an old run and a new one are never compared under two rules. The hop
of a read is a function of the read's paper and the item's graph alone, so a run stored before hops were recorded
gets them from its stored reads as exactly as a new run's episodes record them.
"""

from __future__ import annotations

from typing import Any

from sandbox.citations import HOP_RULE, hops_stale, item_hops
from sandbox.recall import section_flags, section_reachable, stored_reads
from sandbox.sections import LABEL_RESOLUTION, is_stale


def _flag(value: bool | None) -> int | None:
    return None if value is None else int(value)


def rescore(store: Any, run: dict[str, Any], corpus: Any) -> int | None:
    """Recompute every finished trajectory's section-recall flags (and whether its item can reach section recall)
    from its stored reads, write them with the current resolution version, and return how many were rewritten.
    None, and nothing written, when `corpus` is not the dataset the run was made on (its items might differ)."""
    if corpus.fingerprint != run["dataset_fingerprint"] or corpus.label_resolution != LABEL_RESOLUTION:
        return None
    flags = []
    for traj in store.trajectories(run["id"], final_only=False):
        try:
            item = corpus.item(traj["item_id"])
        except KeyError:
            continue
        reads = [(arx, idx) for arx, idx in traj["reads"] or []]
        strict, any_, loose = section_flags(item, reads)
        flags.append(
            (
                traj["id"],
                {
                    "section_recall": _flag(strict),
                    "section_recall_any": _flag(any_),
                    "section_recall_loose": _flag(loose),
                    "section_reachable": int(section_reachable(item)),
                },
            )
        )
    store.set_section_flags(run["id"], flags, LABEL_RESOLUTION)
    return len(flags)


def rehop(store: Any, run: dict[str, Any], corpus: Any) -> int | None:
    """Write the hop from the seed of every delivered read of the run's finished trajectories (`Episode._hop`'s
    rule, over each item's graph), record the current hop rule and return how many reads were measured. None, and
    nothing written, when `corpus` is not the dataset the run was made on."""
    if corpus.fingerprint != run["dataset_fingerprint"]:
        return None
    steps = store.delivered_steps(run["id"], final_only=False)
    hops: dict[str, dict[str, int] | None] = {}
    out = []
    for read in stored_reads(steps):
        item_id = read["item_id"]
        if item_id not in hops:
            hops[item_id] = _item_hops(corpus, item_id)
        seed_hops = hops[item_id]
        if seed_hops is not None:
            out.append((read["trajectory_id"], read["idx"], seed_hops.get(read["paper_id"])))
    store.set_step_hops(run["id"], out, HOP_RULE)
    return len(out)


def _item_hops(corpus: Any, item_id: str) -> dict[str, int] | None:
    try:
        item = corpus.item(item_id)
    except KeyError:
        return None
    view = corpus.view(item)
    return item_hops(view.edges, view.nodes, item.seed_paper_id)


# Each measurement a stored run can be behind on, as (is the run behind?, recompute it from the stored reads), in
# the order they are brought current: the one list the runner's resume and the front ends' start-up check go by.
RECOMPUTED = ((is_stale, rescore), (hops_stale, rehop))
