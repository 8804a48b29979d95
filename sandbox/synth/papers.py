"""The universe of fictional papers: each one's title, authors, abstract and year, which older papers it cites and how
often it is cited, and an item's neighbourhood of that citation graph as the release's graphs file holds it."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field

from sandbox.synth.sizes import Preset
from sandbox.synth.vocabulary import FIELDS, FILLER, FIRST, NOUNS, word

INLINE_KEY = 3  # the version the inline-title draws were keyed on (v3): kept, so a later version moves none of them
CITATION_STREAM = 3  # the stream of the citation-count draws, its own so the items' draws never shift
INLINE_SHARE = 0.4  # papers whose subsection titles run inline in the Method paragraph, as ar5iv text has them


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


def universe(rng: random.Random, used: set[str], seed: int, preset: Preset) -> list[Paper]:
    """The papers of the benchmark, half with full text (the pool) and half metadata-only, in publication order,
    each citing older ones; the invented words they use are added to `used`."""
    papers: list[Paper] = []
    p = preset
    n_meta = p.papers
    total = p.papers + n_meta
    kinds = [True] * p.papers + [False] * n_meta
    rng.shuffle(kinds)
    arxiv_serial = 0
    for i, has_text in enumerate(kinds):
        year = 2014 + (i * 12) // total
        method = f"{word(rng, used).capitalize()} {rng.choice(NOUNS)}"
        fld = rng.choice(FIELDS)
        lead = rng.choice(("Towards", "Revisiting", "Scaling", "Learning", "Rethinking"))
        title = f"{method}: {lead} {fld.title()}"
        arxiv = None
        if has_text or rng.random() < 0.5:
            arxiv_serial += 1
            arxiv = f"{year % 100:02d}{1 + arxiv_serial % 12:02d}.{arxiv_serial:05d}"
        abstract = (
            ""
            if rng.random() < 0.05
            else (
                f"We introduce {method}, a method for {fld}. "
                f"{rng.choice(FILLER).format(n=rng.randint(2, 9), field=fld, name=method)} "
                f"{rng.choice(FILLER).format(n=rng.randint(2, 9), field=fld, name=method)}"
            )
        )
        authors = [
            {"name": f"{rng.choice(FIRST)} {word(rng, used).capitalize()}"} for _ in range(rng.choice((1, 2, 3, 4)))
        ]
        s2id = hashlib.sha1(f"synth-{seed}-{i}".encode()).hexdigest()
        papers.append(
            Paper(
                i,
                s2id,
                arxiv,
                has_text,
                title,
                method,
                fld,
                None if rng.random() < 0.04 else year,
                abstract,
                authors,
                roman=rng.random() < 0.2,
            )
        )
        papers[-1].inline = random.Random(f"inline-{INLINE_KEY}-{seed}-{i}").random() < INLINE_SHARE
    for paper in papers:
        k = rng.randint(*p.refs)
        older = range(0, max(paper.index, 1))
        if paper.index < 2:
            continue
        paper.refs = rng.sample(older, min(k, paper.index))
    _count_citations(papers, seed)
    return papers


def _count_citations(papers: list[Paper], seed: int) -> None:
    """Each paper's citationCount: the papers of the universe citing it, scaled by a heavy-tailed draw for the
    world outside it (so the count spreads like real ones and Table 19's quartiles have distinct ranks), from
    a stream of its own so adding it kept every other draw."""
    rng = random.Random(f"agenthop-synth-citations-{CITATION_STREAM}-{seed}")
    cited = [0] * len(papers)
    for paper in papers:
        for r in paper.refs:
            cited[r] += 1
    for paper in papers:
        paper.citation_count = cited[paper.index] * rng.randint(3, 40) + int(rng.paretovariate(1.2)) - 1


def graph_row(papers: list[Paper], item_id: str, seed: Paper) -> dict:
    """The item's row of graphs/full.jsonl: the seed's neighbourhood."""
    nodes, edges = _neighbourhood(papers, seed)
    return {
        "sample_id": item_id,
        "nodes": {papers[i].s2id: _node(papers[i]) for i in nodes},
        "edges": {papers[s].s2id: [papers[d].s2id for d in refs] for s, refs in edges.items()},
    }


def _neighbourhood(papers: list[Paper], seed: Paper) -> tuple[dict[int, None], dict[int, list[int]]]:
    """The seed, the papers it cites and the papers they cite (the first 30 references of each), and those edges."""
    nodes: dict[int, None] = {seed.index: None}
    edges: dict[int, list[int]] = {seed.index: seed.refs[:30]}
    for r in seed.refs[:30]:
        nodes[r] = None
    for r in seed.refs[:30]:
        ref = papers[r]
        if ref.refs:
            edges[r] = ref.refs[:30]
            for rr in ref.refs[:30]:
                nodes.setdefault(rr, None)
    return nodes, edges


def _node(p: Paper) -> dict:
    """A paper as a node of the release's graphs: a paper off arXiv has an empty or a null arxivId, one in seven has
    no authors."""
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
