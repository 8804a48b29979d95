"""Writing the built-in benchmark: `generate` builds it in memory and writes the release's four JSON Lines files (and
a README) through a staged directory, so the one loader serves this and the real release."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from sandbox import release
from sandbox.synth.generator import GENERATOR_VERSION, Generator
from sandbox.synth.pool import minimum_papers
from sandbox.synth.sizes import PRESETS, NotEnoughPapers, Preset
from sandbox.synth.text import paper_sections


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
        write(gen, partial)
    return out


def write(gen: Generator, out: Path) -> None:
    """The built benchmark's files under `out`; the papers' texts are drawn as they are written (after the labels,
    from the generator's stream)."""
    for rel in (release.QA_FILE, release.GRAPHS_FILE, release.PAPERS_FILE, release.LABELS_FILE):
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
    with open(out / release.PAPERS_FILE, "w", encoding="utf-8") as fh:
        for p in gen.papers:
            if p.has_text:
                rec = {"arxiv_id": p.arxiv_id, "title": p.title, "sections": paper_sections(gen.rng, gen.preset, p)}
                fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
    _write_jsonl(out / release.QA_FILE, gen.items)
    _write_jsonl(out / release.GRAPHS_FILE, gen.graphs)
    _write_jsonl(out / release.LABELS_FILE, gen.labels)
    (out / "README.md").write_text(
        f"AgentHop-format synthetic benchmark (generator v{GENERATOR_VERSION}, seed {gen.seed}): "
        f"{len(gen.items)} items, {sum(p.has_text for p in gen.papers)} papers with text."
        " All papers are fictional.\n"
    )


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
