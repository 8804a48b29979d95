"""An item's question and its four options: the fact planted in a gold paper (a mechanism with four disjoint
wordings: the correct one, the seed's variant, the wrong paper's, an invented one), the question asking for it,
the options (a 2×2 grid over the clauses of a multi-target item) and the item's row of the release."""

from __future__ import annotations

import random

from sandbox.synth.papers import Paper
from sandbox.synth.vocabulary import MECHANISMS, REASONING, SKILLS, TIERS, VENUES, word

# Which distractor of a multi-target item keeps the first gold's clause and which the second's (see `grid`)
KEEPERS = (("seed_only", "wrong_paper"), ("wrong_paper", "seed_only"))


def fact(rng: random.Random, used: set[str], aspect: str) -> tuple[str, dict[str, str]]:
    """A mechanism template and four disjoint term pairs: correct, seed-only, wrong-paper, invented."""
    mech = rng.choice(MECHANISMS)
    terms = {
        k: f"{word(rng, used)} {rng.choice(('scores', 'weights', 'states', 'gradients', 'margins', 'tokens'))}"
        for k in ("correct", "seed_only", "wrong_paper", "no_context")
    }
    anchor = f"{word(rng, used)} {rng.choice(('blocks', 'windows', 'batches', 'layers', 'heads'))}"
    return mech, {k: mech.format(a=v, b=anchor) for k, v in terms.items()}


def item_row(
    rng: random.Random,
    item_id: str,
    seed: Paper,
    kind: str,
    depth: int,
    golds: list[tuple[Paper, Paper | None]],
    aspects: list[str],
    clauses: dict[str, list[str]],
) -> dict:
    """The item's row of qa/full.jsonl: the options in a shuffled order, the question, its labels."""
    options = {k: _sentence("; ".join(v)) for k, v in clauses.items()}
    order = ["correct", "seed_only", "wrong_paper", "no_context"]
    rng.shuffle(order)
    bridges = [b for _, b in golds if b is not None]
    question = _question(seed, golds, aspects, depth)
    return {
        "id": item_id,
        "question_type": "multi-target" if kind == "mt" else "single-target",
        "depth": depth,
        "reasoning_type": rng.choice(REASONING),
        "cognitive_skill": rng.choice(SKILLS),
        "venue": rng.choice(VENUES),
        "consensus_tier": rng.choice(TIERS),
        "question": question,
        "options": [options[k] for k in order],
        "correct_index": order.index("correct"),
        "distractor_types": order,
        "seed_paper_id": seed.s2id,
        "seed_arxiv_id": seed.arxiv_id,
        "seed_title": seed.title,
        "gold_paper_ids": [g.s2id for g, _ in golds],
        "gold_arxiv_ids": [g.arxiv_id for g, _ in golds],
        "bridge_paper_ids": [b.s2id for b in bridges],
        "bridge_arxiv_ids": [b.arxiv_id for b in bridges],
        "filter_agreement": 3,
    }


def _question(seed: Paper, golds, aspects, depth: int) -> str:
    """The item's question: which aspect of which cited (depth 1) or earlier (depth 2) work it asks about, of one
    gold paper or of both."""
    if len(golds) == 1:
        gold, bridge = golds[0]
        if depth == 1:
            return (
                f"The seed paper adopts the {aspects[0]} of {gold.method} from a work it cites. "
                f"According to that cited work, how does the {aspects[0]} work?"
            )
        return (
            f"The seed paper builds on {bridge.method}, which reuses the {aspects[0]} of an earlier work. "
            f"According to that earlier work, how does the {aspects[0]} work?"
        )
    parts = []
    for (gold, bridge), aspect in zip(golds, aspects, strict=True):
        parts.append(
            f"the {aspect} of {gold.method}"
            if depth == 1
            else f"the {aspect} that {bridge.method} reuses from an earlier work"
        )
    return (
        f"The seed paper combines {parts[0]} with {parts[1]}. According to the works that introduced them, "
        f"which statement describes both correctly?"
    )


def grid(clauses: dict[str, list[str]], keepers: tuple[str, str]) -> dict[str, list[str]]:
    """A multi-target item's options as a 2×2 grid over its two clauses (one per gold paper).

    `keepers[0]` keeps the first gold's clause with its own wrong second clause, `keepers[1]` its own wrong first
    clause with the second gold's clause, and `no_context` pairs those two wrong clauses. So each gold paper
    alone leaves two options standing and only both decide the item; and every clause is in exactly two options,
    so the option texts alone point at none. (Were the third distractor also to keep a correct clause, the answer
    would be the one option without a clause of its own: readable without any paper.)
    """
    first, second = keepers
    correct = clauses["correct"]
    wrong_first, wrong_second = clauses[second][0], clauses[first][1]
    return {
        "correct": correct,
        first: [correct[0], wrong_second],
        second: [wrong_first, correct[1]],
        "no_context": [wrong_first, wrong_second],
    }


def _sentence(text: str) -> str:
    """Clauses as an option's sentence: capitalised, with a full stop."""
    return text[:1].upper() + text[1:] + "."
