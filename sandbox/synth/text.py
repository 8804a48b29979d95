"""A paper's full text: its numbered sections (introduction, related work, a Method section with the planted facts as
subsections, a section per top-level fact, experiments with a results table, conclusion, appendices) written from
filler sentences, numbered in arabic or roman numerals, subsection titles on their own line or run inline."""

from __future__ import annotations

import random
import string

from sandbox.synth.papers import Paper
from sandbox.synth.sizes import Preset
from sandbox.synth.vocabulary import FILLER


def paper_sections(rng: random.Random, preset: Preset, p: Paper) -> list[dict]:
    """The paper's sections as the release's papers file holds them ({header, text}), its facts, notes and asides
    written in among filler drawn from `rng` (the generator's stream: the texts are drawn as they are written)."""
    lo, hi = preset.section_paragraphs
    num = _roman if p.roman else str
    sections = []
    intro = _filler(rng, p, rng.randint(lo, hi))
    if p.notes:
        intro += "\n\n" + " ".join(p.notes)
    sections.append((f"{num(1)} Introduction", intro))
    related = _filler(rng, p, rng.randint(lo, hi))
    if p.asides:
        related += "\n\n" + " ".join(p.asides)
    sections.append((f"{num(2)} Related Work", related))
    # ar5iv rolls subsection titles into the parent's text: on a line of their own, or (inline papers) inside
    # one paragraph that runs on after the title ("… baselines. 3.2 Curriculum Pacing of X We evaluate …")
    title_end, part_sep = (" ", " ") if p.inline else ("\n", "\n\n")
    method_parts = [f"{sub_number(p, 3, 1)} Overview{title_end}{_filler(rng, p, rng.randint(lo, hi))}"]
    for j, (title, sentence) in enumerate(p.facts, 2):
        method_parts.append(
            f"{sub_number(p, 3, j)} {title}{title_end}{_filler(rng, p, 1)} {sentence} {_filler(rng, p, 1)}"
        )
    sections.append((f"{num(3)} Method", part_sep.join(method_parts)))
    k = 4
    for title, sentence in p.top_facts:
        sections.append((f"{num(k)} {title}", f"{_filler(rng, p, 1)} {sentence} {_filler(rng, p, 1)}"))
        k += 1
    table = _table(rng, p)
    exp_paras = preset.long_section_paragraphs if rng.random() < preset.long_share else rng.randint(lo, hi)
    sections.append((f"{num(k)} Experiments", f"{_filler(rng, p, exp_paras)}\n\n{table}"))
    sections.append((f"{num(k + 1)} Conclusion", _filler(rng, p, 1)))
    if p.roman:
        sections.append(("Apdx: Implementation Details", _filler(rng, p, rng.randint(lo, hi))))
    else:
        sections.append(("Apdx_A: Proofs", _filler(rng, p, rng.randint(lo, hi))))
        if rng.random() < 0.5:
            sections.append(("Apdx_B.2: Additional Results", _filler(rng, p, 1)))
    return [{"header": h, "text": t} for h, t in sections]


def _filler(rng: random.Random, p: Paper, n: int) -> str:
    """`n` paragraphs of four filler sentences about the paper's method and field."""
    sents = []
    for _ in range(n * 4):
        sents.append(rng.choice(FILLER).format(n=rng.randint(2, 9), field=p.field_name, name=p.method))
    paras = [" ".join(sents[i : i + 4]) for i in range(0, len(sents), 4)]
    return "\n\n".join(paras)


def _table(rng: random.Random, p: Paper) -> str:
    """The Experiments section's results table (Markdown): the paper's method and two baselines."""
    rows = ["Table 1: Main results.", "| Method | Score | Params |", "|---|---|---|"]
    for name in (p.method, "Baseline", "Strong baseline"):
        rows.append(f"| {name} | {rng.uniform(40, 90):.1f} | {rng.randint(10, 900)}M |")
    return "\n".join(rows)


def sub_number(p: Paper, i: int, j: int) -> str:
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
