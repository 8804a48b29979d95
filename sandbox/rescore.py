"""Section-recall flags of stored trajectories, recomputed under the current label resolution (PROTOCOL §3).

A trajectory stores its delivered reads as (arXiv id, resolved section index) pairs; its section-recall flags
compare them with the sections the item's labels resolve to. When the label rules change
(`sandbox.sections.LABEL_RESOLUTION`), the flags of a stored run are recomputed from those reads against the
labels as the current rules resolve them, so an old run and a new one are never compared under two rules.
"""
from __future__ import annotations

from typing import Any

from sandbox.recall import section_flags, section_reachable
from sandbox.sections import LABEL_RESOLUTION


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
        flags.append((traj["id"], {"section_recall": _flag(strict), "section_recall_any": _flag(any_),
                                   "section_recall_loose": _flag(loose),
                                   "section_reachable": int(section_reachable(item))}))
    store.set_section_flags(run["id"], flags, LABEL_RESOLUTION)
    return len(flags)
