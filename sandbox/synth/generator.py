"""The generator of the built-in benchmark: a universe of fictional papers, items planted in it and their labels,
drawn from seeded streams in one fixed order, so a seed and a preset give the same benchmark byte for byte.

Every name is invented from syllables, so no model has seen these facts: the answer
fact of an item is written only into its gold paper(s); depth-2 gold papers are cited
only by their bridge; the three distractors come the paper's way (one stated by the
seed, one by a sibling reference, one invented).
"""

from __future__ import annotations

import random

from sandbox.synth.labels import PendingLabels, label_rows
from sandbox.synth.papers import Paper, graph_row, universe
from sandbox.synth.questions import KEEPERS, fact, grid, item_row
from sandbox.synth.sizes import NotEnoughPapers, Preset
from sandbox.synth.text import sub_number
from sandbox.synth.vocabulary import ASPECTS

RNG_STREAM = 1  # the random stream's name: GENERATOR_VERSION names the output (and the cache)
STYLE_STREAM = 2  # the stream of the text-style draws (inline titles, numbered labels), added with them
GENERATOR_VERSION = 4  # 2: a multi-target item's options are a grid over its two clauses (`questions.grid`);
#                        3: inline subsection titles, numbered labels; 4: graph nodes carry citationCount
NUMBERED_LABEL_SHARE = 0.5  # subsection labels written with their number ("3.2 …", "III-B …")


# Attempts in a row that build no item before a pool is given up as used up (a pool of 10 papers asked for 5,000
# items made 250,000 attempts, and the search for the least pool that builds repeated that at every step)
STALL = 2000


class Generator:
    """The benchmark in memory: its universe of papers, the items planted in it (gold papers picked, facts planted,
    options and graph rows made) and their labels, drawn from seeded streams in one fixed order (`writing.write`
    puts it on disk)."""

    def __init__(self, seed: int, preset: Preset):
        self.seed = seed
        self.preset = preset
        # the stream is seeded as in v1: a version that changes what a few draws mean keeps the rest of the benchmark
        self.rng = random.Random(f"agenthop-synth-{RNG_STREAM}-{seed}")
        self.used: set[str] = set()
        self.papers: list[Paper] = []
        self.items: list[dict] = []
        self.graphs: list[dict] = []
        self.labels: list[dict] = []
        self._pending_labels: list[PendingLabels] = []
        # a stream of its own for the label styles, so they never shift the draws that shape items
        self.style_rng = random.Random(f"agenthop-synth-style-{STYLE_STREAM}-{seed}")

    def build_universe(self) -> None:
        """The papers and their citations (`papers.universe`), first of the draws."""
        self.papers = universe(self.rng, self.used, self.seed, self.preset)

    def _text_refs(self, paper: Paper) -> list[Paper]:
        return [self.papers[r] for r in paper.refs if self.papers[r].has_text]

    def _pick_gold(self, seed: Paper, depth: int, exclude: set[int]) -> tuple[Paper, Paper | None] | None:
        """A gold paper (and its bridge at depth 2) for this seed, or None if the seed has none."""
        d1 = [p for p in self._text_refs(seed) if p.index not in exclude]
        self.rng.shuffle(d1)
        if depth == 1:
            return (d1[0], None) if d1 else None
        for bridge in d1:
            cands = self._two_hop_golds(seed, bridge, exclude)
            if cands:
                return self.rng.choice(cands), bridge
        return None

    def _two_hop_golds(self, seed: Paper, bridge: Paper, exclude: set[int]) -> list[Paper]:
        """The papers with text that the bridge cites and that are two hops from the seed only through it: not
        cited by the seed, nor by any other paper the seed cites (the first 30 references of each), nor taken
        (`exclude`)."""
        seed_refs = set(seed.refs[:30])
        others = set()
        for r in seed.refs[:30]:
            if r != bridge.index:
                others.update(self.papers[r].refs[:30])
        taken = seed_refs | others | {seed.index} | exclude
        return [g for g in self._text_refs(bridge) if g.index not in taken and g.index in bridge.refs[:30]]

    def build_items(self) -> None:
        """`preset.items` items, the four kinds in turn (single- and multi-target, depth 1 and 2), each on a seed
        paper drawn from those citing three papers with text; `NotEnoughPapers` when the pool cannot hold them."""
        kinds = [("st", 1), ("st", 2), ("mt", 1), ("mt", 2)]
        seeds = [p for p in self.papers if p.has_text and len(self._text_refs(p)) >= 3]
        if not seeds:  # a pool of a few papers has no paper citing three others with text
            raise NotEnoughPapers(0, self.preset.items, self.preset.papers)
        counters = {"st": 0, "mt": 0}
        attempts = idle = 0
        while len(self.items) < self.preset.items and attempts < self.preset.items * 50 and idle < STALL:
            attempts += 1
            idle += 1
            kind, depth = kinds[len(self.items) % 4]
            seed = self.rng.choice(seeds)
            made = self._make_item(seed, kind, depth, counters)
            if made:
                self.items.append(made)
                idle = 0
        if len(self.items) < self.preset.items:
            raise NotEnoughPapers(len(self.items), self.preset.items, self.preset.papers)

    def _make_item(self, seed: Paper, kind: str, depth: int, counters: dict[str, int]) -> dict | None:
        """One item on `seed` (its gold papers `depth` hops away, two for `kind` mt), with its facts planted in the
        papers, its graph and its pending labels; None when the seed's neighbourhood cannot hold it. The random
        draws are made in one fixed order, so that a seed and a preset give the same benchmark byte for byte."""
        n_gold = 2 if kind == "mt" else 1
        picked = self._pick_golds(seed, depth, n_gold)
        if picked is None:
            return None
        golds, exclude = picked
        siblings = [p for p in self._text_refs(seed) if p.index not in exclude]
        if not siblings:
            return None
        wrong = self.rng.choice(siblings)
        taken = {t.split(" of ")[0].lower() for g, _ in golds for t, _ in g.facts + g.top_facts}
        free = [a for a in ASPECTS if a not in taken]
        if len(free) < n_gold:
            return None
        aspects = self.rng.sample(free, n_gold)
        counters[kind] += 1
        item_id = f"{kind}_{counters[kind]:04d}"
        clauses: dict[str, list[str]] = {k: [] for k in ("correct", "seed_only", "wrong_paper", "no_context")}
        gold_sections = [
            (gold, self._plant(seed, gold, bridge, wrong, aspect, clauses))
            for (gold, bridge), aspect in zip(golds, aspects, strict=True)
        ]
        if kind == "mt":
            # one draw for the whole grid: the other draws (and every byte of the benchmark) keep their order
            clauses = grid(clauses, KEEPERS[int(self.rng.random() * len(KEEPERS))])
        item = item_row(self.rng, item_id, seed, kind, depth, golds, aspects, clauses)
        self.graphs.append(graph_row(self.papers, item_id, seed))
        self._pending_labels.append((item_id, seed, gold_sections))
        return item

    def _pick_golds(
        self, seed: Paper, depth: int, n_gold: int
    ) -> tuple[list[tuple[Paper, Paper | None]], set[int]] | None:
        """`n_gold` distinct (gold, bridge) pairs `depth` hops from the seed, and the papers they take."""
        golds: list[tuple[Paper, Paper | None]] = []
        exclude = {seed.index}
        for _ in range(n_gold):
            pick = self._pick_gold(seed, depth, exclude)
            if pick is None:
                return None
            golds.append(pick)
            exclude.add(pick[0].index)
            if pick[1] is not None:
                exclude.add(pick[1].index)
        return golds, exclude

    def _plant(
        self, seed: Paper, gold: Paper, bridge: Paper | None, wrong: Paper, aspect: str, clauses: dict[str, list[str]]
    ) -> str:
        """Plant one aspect's fact: the true statement in the gold paper, a variant in the seed, another in the
        wrong paper, the bridge's reuse of it; the options' clauses grow by one each. Returns the gold section's
        label (what the recall labels name)."""
        _, statements = fact(self.rng, self.used, aspect)
        for k, s in statements.items():
            clauses[k].append(f"its {aspect} {s}")
        sentence = f"The {aspect} of {gold.method} {statements['correct']}, which we found essential."
        sub_title = f"{aspect.title()} of {gold.method.split()[0]}"
        # A one-word aspect's fact gets a section of its own: as a subsection its label ("Curriculum of X")
        # would share 2 of its 3 words with a sibling header ("4 Initialisation of X"), which the word-overlap
        # step of the label rules (docs/protocol.md "Section labels") would take for it.
        if self.rng.random() < 0.6 and " " in aspect:
            gold.facts.append((sub_title, sentence))
            label_section = sub_title  # numbered when rendered; resolved in the Method section's body
            if self.style_rng.random() < NUMBERED_LABEL_SHARE:  # its number as rendered: j = 2, 3, …
                label_section = f"{sub_number(gold, 3, len(gold.facts) + 1)} {sub_title}"
        else:
            gold.top_facts.append((sub_title, sentence))
            label_section = sub_title
        seed.facts.append(
            (
                f"Our Variant of {gold.method.split()[0]}",
                f"Unlike the original, our {aspect} {statements['seed_only']}.",
            )
        )
        wrong.asides.append(f"In our design, the {aspect} {statements['wrong_paper']}.")
        if bridge is not None:
            bridge.notes.append(f"Our {bridge.method} reuses a component from {gold.title}, namely its {aspect}.")
            seed.notes.append(f"We build on {bridge.method}, which introduced a component we adopt.")
        else:
            seed.notes.append(f"We adopt the {aspect} of {gold.method}.")
        return label_section

    def build_labels(self) -> None:
        """The items' recall labels (`labels.label_rows`), drawn after every item."""
        self.labels = label_rows(self.rng, self._pending_labels)
