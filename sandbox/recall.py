"""Per-trajectory recall flags from delivered reads (docs/protocol.md#what-is-measured), computed where the reads
happen.

A delivered read is an executed `read_section` that returned section text; each carries the
resolved section index, so recall is index equality, never string matching.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from sandbox.records import Item


def delivered_read(delivered: Any, arxiv_id: str | None, section_index: int | None) -> tuple[str, int] | None:
    """The (arXiv id, section index) a call read when it is a delivered read, else None: the one test of what
    counts as a read, asked by the recall flags, the hop of each read from the seed and the hops' backfill.

    Only an executed `read_section` that returned section text is `delivered` (`sandbox.tools`); it carries the
    resolved index, so a failed, rejected or metadata-only call, or any other tool, is no read."""
    if delivered and arxiv_id is not None and section_index is not None:
        return arxiv_id, int(section_index)
    return None


def stored_reads(steps: Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The delivered reads among a run's stored steps (`Store.delivered_steps`): what the hops' backfill and the
    hops report both walk."""
    return (s for s in steps if delivered_read(s["delivered"], s["arxiv_id"], s["section_index"]) is not None)


def paper_flags(item: Item, reads: Iterable[tuple[str, int]]) -> tuple[bool, bool]:
    """(every gold paper read, any gold paper read)."""
    read_papers = {arx for arx, _ in reads}
    hits = [g in read_papers for g in item.gold_arxiv_ids]
    return bool(hits) and all(hits), any(hits)


def section_flags(item: Item, reads: Iterable[tuple[str, int]]) -> tuple[bool | None, bool | None, bool | None]:
    """(every gold paper has a read of a direct-labelled section, any gold paper has one, every gold paper
    has a read of a direct-or-supporting-labelled section); all None when the dataset has no labels at all,
    because then section recall is not 0 but unmeasured."""
    if not item.labelled:
        return None, None, None
    read_set = set(reads)
    direct_hits = [
        _read_any(read_set, gold, _labelled_sections(item, gold, direct=True)) for gold in item.gold_arxiv_ids
    ]
    loose_hits = [
        _read_any(read_set, gold, _labelled_sections(item, gold, direct=False)) for gold in item.gold_arxiv_ids
    ]
    strict = bool(direct_hits) and all(direct_hits)
    return strict, any(direct_hits), bool(loose_hits) and all(loose_hits)


def _labelled_sections(item: Item, gold: str, direct: bool) -> set[int]:
    """The resolved sections of a gold paper the item's labels name: the `direct` ones only, or any relevance."""
    return {
        lab.section_index
        for lab in item.labels
        if lab.arxiv_id == gold and lab.section_index is not None and (lab.relevance == "direct" or not direct)
    }


def _read_any(read_set: set[tuple[str, int]], gold: str, sections: set[int]) -> bool:
    """Whether any of the paper's `sections` was read."""
    return any((gold, idx) in read_set for idx in sections)


def section_reachable(item: Item) -> bool:
    """Whether section recall can be reached at all: every gold paper has a `direct` label resolved to a
    readable section (an item whose label did not resolve caps every agent's section recall)."""
    golds = item.gold_arxiv_ids
    return bool(golds) and all(
        any(lab.arxiv_id == gold and lab.relevance == "direct" and lab.section_index is not None for lab in item.labels)
        for gold in golds
    )
