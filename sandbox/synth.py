"""The built-in benchmark: a deterministic generator of fictional papers and questions in the release format.

Every name is invented from syllables, so no model has seen these facts: the answer
fact of an item is written only into its gold paper(s); depth-2 gold papers are cited
only by their bridge; the three distractors come the paper's way (one stated by the
seed, one by a sibling reference, one invented). The output is the four JSON Lines
files of the release format (docs/data.md), so the one loader serves this and the real release.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import string
from dataclasses import dataclass, field, replace
from pathlib import Path

from sandbox import release

RNG_STREAM = 1  # the random stream's name: GENERATOR_VERSION names the output (and the cache)
STYLE_STREAM = 2  # the stream of the text-style draws (inline titles, numbered labels), added with them
GENERATOR_VERSION = 4  # 2: a multi-target item's options are a grid over its two clauses (`_grid`);
#                        3: inline subsection titles, numbered labels; 4: graph nodes carry citationCount
INLINE_KEY = 3  # the version the inline-title draws were keyed on (v3): kept, so a later version moves none of them
CITATION_STREAM = 3  # the stream of the citation-count draws, its own so the items' draws never shift

# Defects of the real release that the generator copies on purpose, so the built-in benchmark exercises the
# import's handling of them: the import's warning kind → what is injected. Said once as a note, never warned.
DELIBERATE_DEFECTS = {
    "empty_arxiv_id": "about 8 % of items carry an extra supporting label without an arxiv_id",
}
INLINE_SHARE = 0.4  # papers whose subsection titles run inline in the Method paragraph, as ar5iv text has them
NUMBERED_LABEL_SHARE = 0.5  # subsection labels written with their number ("3.2 …", "III-B …")


# Attempts in a row that build no item before a pool is given up as used up (a pool of 10 papers asked for 5,000
# items made 250,000 attempts, and the search for the least pool that builds repeated that at every step)
STALL = 2000


class NotEnoughPapers(ValueError):
    """The pool is too small for the items asked for: each gold paper carries only a few distinct facts."""

    def __init__(self, built: int, wanted: int, papers: int, suggested_papers: int | None = None):
        self.built, self.wanted, self.papers = built, wanted, papers
        self.suggested_papers = suggested_papers
        enough = f"; {suggested_papers} papers would do" if suggested_papers else ""
        super().__init__(f"could build only {built} of {wanted} items from {papers} papers{enough}")


def suggest_papers(built: int, wanted: int, papers: int) -> int:
    """A first guess at a pool that builds `wanted` items: the observed items-per-paper rate with a quarter to
    spare, in tens. Only the starting point of `minimum_papers`, which checks."""
    return max(papers + 10, math.ceil(papers * wanted / max(built, 1) * 1.25 / 10) * 10)


def _built(seed: int, preset: Preset) -> int:
    """How many of `preset.items` the pool builds (all of them: it builds)."""
    gen = Generator(seed, preset)
    gen.build_universe()
    try:
        gen.build_items()
    except NotEnoughPapers as exc:
        return exc.built
    return preset.items


EXACT_UP_TO = 400  # items: above, the pool suggested is a round one that builds rather than the least that does


def _builds(seed: int, preset: Preset) -> bool:
    return _built(seed, preset) == preset.items


def minimum_papers(seed: int, preset: Preset, built: int) -> int:
    """A pool above `preset.papers` (which failed, building `built` items) that builds `preset.items` with this
    seed. Generation is deterministic and in memory, so the number a user is told to try is one that was built,
    not an estimate.

    Up to EXACT_UP_TO items it is the smallest such pool: bisection between the failing pool and one that builds
    (the rate-based guess, doubled until it does), milliseconds a step. Above, each build costs seconds and
    bisection took a minute for 5,000 items, so the pools tried are a quarter of the items (a full pool builds
    about four items a paper), then a quarter more each time, in tens: one or two builds, within a few tenths of
    the smallest."""
    low, wanted = preset.papers, preset.items
    if wanted > EXACT_UP_TO:
        high = max(low + 10, math.ceil(wanted / 4 / 10) * 10)
        while _built(seed, replace(preset, papers=high)) < wanted:
            high = math.ceil(high * 1.25 / 10) * 10
        return high
    high = suggest_papers(built, wanted, low)
    while not _builds(seed, replace(preset, papers=high)):
        low, high = high, high * 2
    while high - low > 1:
        mid = (low + high) // 2
        if _builds(seed, replace(preset, papers=mid)):
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True)
class Preset:
    """Sizes of a generated benchmark."""

    items: int
    papers: int  # papers with full text (the pool)
    refs: tuple[int, int]  # references per paper (min, max)
    section_paragraphs: tuple[int, int]  # filler paragraphs per ordinary section
    long_section_paragraphs: int  # paragraphs of an occasional long section
    long_share: float  # share of papers with one long section


PRESETS = {
    "demo": Preset(
        items=60, papers=240, refs=(5, 9), section_paragraphs=(1, 3), long_section_paragraphs=8, long_share=0.1
    ),
    "paper": Preset(
        items=1011, papers=7205, refs=(8, 20), section_paragraphs=(6, 21), long_section_paragraphs=190, long_share=0.15
    ),
}

SYLLABLES = (
    "ka",
    "ren",
    "vo",
    "lith",
    "mar",
    "zen",
    "tor",
    "qui",
    "bel",
    "sha",
    "dro",
    "fen",
    "gal",
    "hiv",
    "jor",
    "kel",
    "lun",
    "mis",
    "nor",
    "pel",
    "ras",
    "sol",
    "tav",
    "ulm",
    "vex",
    "wyn",
    "yor",
    "zan",
    "cor",
    "dex",
    "ith",
    "oph",
    "ar",
    "en",
    "is",
    "ul",
    "ba",
    "ne",
    "ri",
    "to",
)
NOUNS = (
    "Attention",
    "Pooling",
    "Decomposition",
    "Retrieval",
    "Planning",
    "Tokenizer",
    "Encoder",
    "Distillation",
    "Alignment",
    "Sampling",
    "Routing",
    "Memory",
    "Calibration",
    "Parsing",
    "Ranking",
    "Augmentation",
)
FIELDS = (
    "long-context reasoning",
    "dense retrieval",
    "vision-language grounding",
    "speech recognition",
    "graph learning",
    "instruction tuning",
    "multilingual transfer",
    "code generation",
    "recommendation",
    "question answering",
    "image segmentation",
    "reinforcement learning from feedback",
)
ASPECTS = (
    "normalisation scheme",
    "training objective",
    "scoring function",
    "update rule",
    "sampling schedule",
    "memory layout",
    "regularisation term",
    "curriculum",
    "negative mining strategy",
    "gating mechanism",
    "initialisation",
    "stopping criterion",
)
MECHANISMS = (
    "computes {a} over {b}",
    "anneals {a} across {b}",
    "weights {a} by {b}",
    "clips {a} against {b}",
    "averages {a} within {b}",
    "ranks {a} relative to {b}",
)
VENUES = ("NeurIPS", "ICML", "ICLR", "ACL", "EMNLP", "NAACL", "CVPR", "ECCV", "SIGIR")
REASONING = ("GROUND", "METHOD", "MOTIVE", "RESULT")
# Which distractor of a multi-target item keeps the first gold's clause and which the second's (see `_grid`)
KEEPERS = (("seed_only", "wrong_paper"), ("wrong_paper", "seed_only"))
SKILLS = ("retrieve", "reason", "contrast", "assess", "synthesize", "justify")
TIERS = ("gold", "gold", "silver", "bronze")
FIRST = (
    "Ada",
    "Bram",
    "Chen",
    "Dara",
    "Elif",
    "Femi",
    "Goran",
    "Hana",
    "Ivo",
    "Jun",
    "Kira",
    "Lior",
    "Mara",
    "Nils",
    "Oona",
    "Priya",
    "Quinn",
    "Rafa",
    "Sana",
    "Tomas",
    "Uma",
    "Vera",
    "Wen",
    "Xiu",
    "Yara",
    "Zeno",
)
FILLER = (
    "We evaluate the approach on {n} benchmarks and observe consistent gains over strong baselines.",
    "Prior work on {field} has largely relied on hand-tuned heuristics that do not transfer across domains.",
    "Our analysis suggests that the improvements are not explained by model size alone.",
    "The {name} framework is trained end to end with a standard cross-entropy loss unless stated otherwise.",
    "Ablations indicate that each component contributes to the final performance.",
    "We release code and configuration files to support reproducibility.",
    "Results are averaged over {n} random seeds and reported with standard deviations.",
    "A key challenge in {field} is the mismatch between training and deployment conditions.",
    "We discuss limitations, including the cost of annotation and sensitivity to hyperparameters.",
    "The experimental protocol follows common practice in {field}.",
    "Qualitative examples show that the model attends to the relevant evidence.",
    "We further study the behaviour of {name} when the input length grows.",
    "Training converges within {n} epochs on a single accelerator.",
    "Compared with earlier systems, {name} requires fewer labelled examples.",
    "Error analysis reveals that most failures stem from ambiguous inputs.",
)


WORD_TRIES = 200  # draws of two or three syllables before a word takes four (their ~65,000 words run out)


def _word(rng: random.Random, used: set[str]) -> str:
    """A fresh invented word, never used before in this benchmark. Two or three syllables while those last (a
    pool of a few thousand papers and items uses them up, and the loop never ended); then four."""
    tries = 0
    while True:
        tries += 1
        syllables = rng.choice((2, 3, 3)) if tries <= WORD_TRIES else 4
        w = "".join(rng.choice(SYLLABLES) for _ in range(syllables))
        if w not in used and len(w) >= 5:
            used.add(w)
            return w


@dataclass
class Paper:
    """A fictional paper of the universe (full text or metadata-only)."""

    index: int
    s2id: str
    arxiv_id: str | None  # None: not on arXiv; may be set and still absent from the pool
    has_text: bool
    title: str
    method: str
    field_name: str
    year: int | None
    abstract: str
    authors: list[dict]
    refs: list[int] = field(default_factory=list)
    citation_count: int = 0  # citationCount as the real release's graph nodes carry it (Table 19's quartile)
    roman: bool = False
    inline: bool = False  # subsection titles run inline in a paragraph (ar5iv style) instead of on their own line
    facts: list[tuple[str, str]] = field(default_factory=list)  # (subsection title, sentence) in Method
    top_facts: list[tuple[str, str]] = field(default_factory=list)  # (section title, sentence): own section
    notes: list[str] = field(default_factory=list)  # sentences for the introduction
    asides: list[str] = field(default_factory=list)  # sentences for related work


class Generator:
    """Builds the universe, the items and their labels, then writes the release files."""

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
        self._pending_labels: list[tuple[str, Paper, list[tuple[Paper, str]]]] = []
        # a stream of its own for the label styles, so they never shift the draws that shape items
        self.style_rng = random.Random(f"agenthop-synth-style-{STYLE_STREAM}-{seed}")

    # ------------------------------------------------------------ universe

    def build_universe(self) -> None:
        p = self.preset
        n_meta = p.papers
        total = p.papers + n_meta
        kinds = [True] * p.papers + [False] * n_meta
        self.rng.shuffle(kinds)
        arxiv_serial = 0
        for i, has_text in enumerate(kinds):
            year = 2014 + (i * 12) // total
            method = f"{_word(self.rng, self.used).capitalize()} {self.rng.choice(NOUNS)}"
            fld = self.rng.choice(FIELDS)
            lead = self.rng.choice(("Towards", "Revisiting", "Scaling", "Learning", "Rethinking"))
            title = f"{method}: {lead} {fld.title()}"
            arxiv = None
            if has_text or self.rng.random() < 0.5:
                arxiv_serial += 1
                arxiv = f"{year % 100:02d}{1 + arxiv_serial % 12:02d}.{arxiv_serial:05d}"
            abstract = (
                ""
                if self.rng.random() < 0.05
                else (
                    f"We introduce {method}, a method for {fld}. "
                    f"{self.rng.choice(FILLER).format(n=self.rng.randint(2, 9), field=fld, name=method)} "
                    f"{self.rng.choice(FILLER).format(n=self.rng.randint(2, 9), field=fld, name=method)}"
                )
            )
            authors = [
                {"name": f"{self.rng.choice(FIRST)} {_word(self.rng, self.used).capitalize()}"}
                for _ in range(self.rng.choice((1, 2, 3, 4)))
            ]
            s2id = hashlib.sha1(f"synth-{self.seed}-{i}".encode()).hexdigest()
            self.papers.append(
                Paper(
                    i,
                    s2id,
                    arxiv,
                    has_text,
                    title,
                    method,
                    fld,
                    None if self.rng.random() < 0.04 else year,
                    abstract,
                    authors,
                    roman=self.rng.random() < 0.2,
                )
            )
            self.papers[-1].inline = random.Random(f"inline-{INLINE_KEY}-{self.seed}-{i}").random() < INLINE_SHARE
        for paper in self.papers:
            k = self.rng.randint(*p.refs)
            older = range(0, max(paper.index, 1))
            if paper.index < 2:
                continue
            paper.refs = self.rng.sample(older, min(k, paper.index))
        self._count_citations()

    def _count_citations(self) -> None:
        """Each paper's citationCount: the papers of the universe citing it, scaled by a heavy-tailed draw for the
        world outside it (so the count spreads like real ones and Table 19's quartiles have distinct ranks), from
        a stream of its own so adding it kept every other draw."""
        rng = random.Random(f"agenthop-synth-citations-{CITATION_STREAM}-{self.seed}")
        cited = [0] * len(self.papers)
        for paper in self.papers:
            for r in paper.refs:
                cited[r] += 1
        for paper in self.papers:
            paper.citation_count = cited[paper.index] * rng.randint(3, 40) + int(rng.paretovariate(1.2)) - 1

    # ------------------------------------------------------------ items

    def _text_refs(self, paper: Paper) -> list[Paper]:
        return [self.papers[r] for r in paper.refs if self.papers[r].has_text]

    def _neighbourhood(self, seed: Paper) -> tuple[dict[int, None], dict[int, list[int]]]:
        nodes: dict[int, None] = {seed.index: None}
        edges: dict[int, list[int]] = {seed.index: seed.refs[:30]}
        for r in seed.refs[:30]:
            nodes[r] = None
        for r in seed.refs[:30]:
            ref = self.papers[r]
            if ref.refs:
                edges[r] = ref.refs[:30]
                for rr in ref.refs[:30]:
                    nodes.setdefault(rr, None)
        return nodes, edges

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

    def _fact(self, aspect: str) -> tuple[str, dict[str, str]]:
        """A mechanism template and four disjoint term pairs: correct, seed-only, wrong-paper, invented."""
        mech = self.rng.choice(MECHANISMS)
        terms = {
            k: f"{_word(self.rng, self.used)} "
            f"{self.rng.choice(('scores', 'weights', 'states', 'gradients', 'margins', 'tokens'))}"
            for k in ("correct", "seed_only", "wrong_paper", "no_context")
        }
        anchor = f"{_word(self.rng, self.used)} {self.rng.choice(('blocks', 'windows', 'batches', 'layers', 'heads'))}"
        return mech, {k: mech.format(a=v, b=anchor) for k, v in terms.items()}

    def build_items(self) -> None:
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
        label_rows = [
            (gold, self._plant(seed, gold, bridge, wrong, aspect, clauses))
            for (gold, bridge), aspect in zip(golds, aspects, strict=True)
        ]
        if kind == "mt":
            # one draw for the whole grid: the other draws (and every byte of the benchmark) keep their order
            clauses = _grid(clauses, KEEPERS[int(self.rng.random() * len(KEEPERS))])
        item = self._item_record(item_id, seed, kind, depth, golds, aspects, clauses)
        self._record_graph(item_id, seed)
        self._pending_labels.append((item_id, seed, label_rows))
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
        _, statements = self._fact(aspect)
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
                label_section = f"{_sub_number(gold, 3, len(gold.facts) + 1)} {sub_title}"
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

    def _item_record(
        self,
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
        self.rng.shuffle(order)
        bridges = [b for _, b in golds if b is not None]
        question = self._question(seed, golds, aspects, depth)
        return {
            "id": item_id,
            "question_type": "multi-target" if kind == "mt" else "single-target",
            "depth": depth,
            "reasoning_type": self.rng.choice(REASONING),
            "cognitive_skill": self.rng.choice(SKILLS),
            "venue": self.rng.choice(VENUES),
            "consensus_tier": self.rng.choice(TIERS),
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

    def _record_graph(self, item_id: str, seed: Paper) -> None:
        """The item's row of graphs/full.jsonl: the seed's neighbourhood."""
        nodes, edges = self._neighbourhood(seed)
        self.graphs.append(
            {
                "sample_id": item_id,
                "nodes": {self.papers[i].s2id: self._node(self.papers[i]) for i in nodes},
                "edges": {self.papers[s].s2id: [self.papers[d].s2id for d in refs] for s, refs in edges.items()},
            }
        )

    def _question(self, seed: Paper, golds, aspects, depth: int) -> str:
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

    def _node(self, p: Paper) -> dict:
        node: dict = {
            "title": p.title,
            "arxivId": p.arxiv_id if p.arxiv_id is not None else ("" if p.index % 2 else None),
            "year": p.year,
            "abstract": p.abstract,
            "citationCount": p.citation_count,
        }
        if p.index % 7:
            node["authors"] = p.authors
        return node

    # ------------------------------------------------------------ text

    def _filler(self, p: Paper, n: int) -> str:
        sents = []
        for _ in range(n * 4):
            sents.append(self.rng.choice(FILLER).format(n=self.rng.randint(2, 9), field=p.field_name, name=p.method))
        paras = [" ".join(sents[i : i + 4]) for i in range(0, len(sents), 4)]
        return "\n\n".join(paras)

    def _sections(self, p: Paper) -> list[dict]:
        lo, hi = self.preset.section_paragraphs
        num = _roman if p.roman else str
        sections = []
        intro = self._filler(p, self.rng.randint(lo, hi))
        if p.notes:
            intro += "\n\n" + " ".join(p.notes)
        sections.append((f"{num(1)} Introduction", intro))
        related = self._filler(p, self.rng.randint(lo, hi))
        if p.asides:
            related += "\n\n" + " ".join(p.asides)
        sections.append((f"{num(2)} Related Work", related))
        # ar5iv rolls subsection titles into the parent's text: on a line of their own, or (inline papers) inside
        # one paragraph that runs on after the title ("… baselines. 3.2 Curriculum Pacing of X We evaluate …")
        title_end, part_sep = (" ", " ") if p.inline else ("\n", "\n\n")
        method_parts = [f"{_sub_number(p, 3, 1)} Overview{title_end}{self._filler(p, self.rng.randint(lo, hi))}"]
        for j, (title, sentence) in enumerate(p.facts, 2):
            method_parts.append(
                f"{_sub_number(p, 3, j)} {title}{title_end}{self._filler(p, 1)} {sentence} {self._filler(p, 1)}"
            )
        sections.append((f"{num(3)} Method", part_sep.join(method_parts)))
        k = 4
        for title, sentence in p.top_facts:
            sections.append((f"{num(k)} {title}", f"{self._filler(p, 1)} {sentence} {self._filler(p, 1)}"))
            k += 1
        table = self._table(p)
        exp_paras = (
            self.preset.long_section_paragraphs
            if self.rng.random() < self.preset.long_share
            else self.rng.randint(lo, hi)
        )
        sections.append((f"{num(k)} Experiments", f"{self._filler(p, exp_paras)}\n\n{table}"))
        sections.append((f"{num(k + 1)} Conclusion", self._filler(p, 1)))
        if p.roman:
            sections.append(("Apdx: Implementation Details", self._filler(p, self.rng.randint(lo, hi))))
        else:
            sections.append(("Apdx_A: Proofs", self._filler(p, self.rng.randint(lo, hi))))
            if self.rng.random() < 0.5:
                sections.append(("Apdx_B.2: Additional Results", self._filler(p, 1)))
        return [{"header": h, "text": t} for h, t in sections]

    def _table(self, p: Paper) -> str:
        rows = ["Table 1: Main results.", "| Method | Score | Params |", "|---|---|---|"]
        for name in (p.method, "Baseline", "Strong baseline"):
            rows.append(f"| {name} | {self.rng.uniform(40, 90):.1f} | {self.rng.randint(10, 900)}M |")
        return "\n".join(rows)

    # ------------------------------------------------------------ labels and output

    def build_labels(self) -> None:
        for item_id, seed, label_rows in self._pending_labels:
            labels = []
            for gold, section in label_rows:
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
            if self.rng.random() < 0.08:  # the real release has such labels: no arXiv id
                labels.append(
                    {
                        "paper": seed.title,
                        "arxiv_id": "",
                        "section": "Related Work",
                        "relevance": "supporting",
                        "what_it_contains": "context",
                    }
                )
            self.labels.append(
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

    def write(self, out: Path) -> None:
        for rel in (release.QA_FILE, release.GRAPHS_FILE, release.PAPERS_FILE, release.LABELS_FILE):
            (out / rel).parent.mkdir(parents=True, exist_ok=True)
        with open(out / release.PAPERS_FILE, "w", encoding="utf-8") as fh:
            for p in self.papers:
                if p.has_text:
                    rec = {"arxiv_id": p.arxiv_id, "title": p.title, "sections": self._sections(p)}
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
        _write_jsonl(out / release.QA_FILE, self.items)
        _write_jsonl(out / release.GRAPHS_FILE, self.graphs)
        _write_jsonl(out / release.LABELS_FILE, self.labels)
        (out / "README.md").write_text(
            f"AgentHop-format synthetic benchmark (generator v{GENERATOR_VERSION}, seed {self.seed}): "
            f"{len(self.items)} items, {sum(p.has_text for p in self.papers)} papers with text."
            " All papers are fictional.\n"
        )


def _sub_number(p: Paper, i: int, j: int) -> str:
    """The number of subsection j of section i: `3.2`, or `III-B` in a roman-numbered paper (a gold paper of a
    dense pool carries up to len(ASPECTS) facts, one subsection each: letters past J)."""
    return f"{_roman(i)}-{_letters(j)}" if p.roman else f"{i}.{j}"


def _letters(j: int) -> str:
    """A, B, …, Z, AA, AB, … for j = 1, 2, …: a paper that is the seed of many items in a small pool gathers more
    than 26 subsections (the letter lookup raised IndexError, an "internal error" of `synth`)."""
    out = ""
    while j > 0:
        j, rest = divmod(j - 1, 26)
        out = string.ascii_uppercase[rest] + out
    return out


def _roman(n: int) -> str:
    """Upper-case roman numeral (a gold paper of a dense pool can have more than ten top-level sections)."""
    out = ""
    for value, letters in ((50, "L"), (40, "XL"), (10, "X"), (9, "IX"), (5, "V"), (4, "IV"), (1, "I")):
        while n >= value:
            out, n = out + letters, n - value
    return out


def _grid(clauses: dict[str, list[str]], keepers: tuple[str, str]) -> dict[str, list[str]]:
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
    return text[:1].upper() + text[1:] + "."


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def generate(
    out: Path, seed: int = 0, preset: str | Preset = "demo", items: int | None = None, papers: int | None = None
) -> Path:
    """Write a benchmark to `out` (which must not exist, or be empty) and return it. Same arguments, same bytes.

    Everything is built in memory first (a too-small pool raises `NotEnoughPapers` naming the smallest pool
    that builds, and writes nothing); the files go to a hidden sibling directory renamed onto `out` at the
    end, so a failure part-way (disk full, interrupt) never leaves a half-written release under `out`."""
    p = PRESETS[preset] if isinstance(preset, str) else preset
    if items is not None or papers is not None:
        p = replace(p, items=items or p.items, papers=papers or p.papers)
    gen = Generator(seed, p)
    gen.build_universe()
    try:
        gen.build_items()
    except NotEnoughPapers as exc:
        raise NotEnoughPapers(exc.built, exc.wanted, exc.papers, minimum_papers(seed, p, exc.built)) from None
    gen.build_labels()
    with release.staged_directory(out) as partial:
        gen.write(partial)
    return out
