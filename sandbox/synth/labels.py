"""The recall labels of the built-in benchmark: for each item, the sections an agent should have read (the analysis
rows of the release's labels file), with the deliberate defects of the real release."""

from __future__ import annotations

import random

from sandbox.synth.papers import Paper

# Defects of the real release that the generator copies on purpose, so the built-in benchmark exercises the
# import's handling of them: the import's warning kind → what is injected. Said once as a note, never warned.
DELIBERATE_DEFECTS = {
    "empty_arxiv_id": "about 8 % of items carry an extra supporting label without an arxiv_id",
}

PendingLabels = tuple[str, Paper, list[tuple[Paper, str]]]
"""An item's labels to write: its id, its seed paper, and each gold paper with the section that states its fact."""


def label_rows(rng: random.Random, pending: list[PendingLabels]) -> list[dict]:
    """The rows of labels/full.jsonl, one per item in item order: each gold paper's section that states the fact
    (direct), the seed's introduction (supporting), and now and then a label without an arXiv id, as the real
    release has."""
    rows: list[dict] = []
    for item_id, seed, golds in pending:
        labels = []
        for gold, section in golds:
            labels.append(
                {
                    "paper": gold.title,
                    "arxiv_id": gold.arxiv_id,
                    "section": section,
                    "relevance": "direct",
                    "what_it_contains": "states the mechanism asked about",
                }
            )
        labels.append(
            {
                "paper": seed.title,
                "arxiv_id": seed.arxiv_id,
                "section": "Introduction",
                "relevance": "supporting",
                "what_it_contains": "names the adopted component",
            }
        )
        if rng.random() < 0.08:  # the real release has such labels: no arXiv id
            labels.append(
                {
                    "paper": seed.title,
                    "arxiv_id": "",
                    "section": "Related Work",
                    "relevance": "supporting",
                    "what_it_contains": "context",
                }
            )
        rows.append(
            {
                "sample_id": item_id,
                "analysis": {
                    "query_quality": {
                        "verdict": "pass",
                        "natural": True,
                        "unambiguous": True,
                        "requires_target": True,
                        "note": "",
                    },
                    "answer_validity": {"verdict": "pass", "claims": []},
                    "chain_coherence": None,
                    "synthesis_check": None,
                    "section_recall_labels": labels,
                    "structural_integrity": {"verdict": "pass", "missing_sections": [], "note": ""},
                },
            }
        )
    return rows
