"""The sizes of a generated benchmark: `Preset` and the named presets, and `NotEnoughPapers`, the refusal of a pool
too small for the items asked for."""

from __future__ import annotations

from dataclasses import dataclass


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


class NotEnoughPapers(ValueError):
    """The pool is too small for the items asked for: each gold paper carries only a few distinct facts."""

    def __init__(self, built: int, wanted: int, papers: int, suggested_papers: int | None = None):
        self.built, self.wanted, self.papers = built, wanted, papers
        self.suggested_papers = suggested_papers
        enough = f"; {suggested_papers} papers would do" if suggested_papers else ""
        super().__init__(f"could build only {built} of {wanted} items from {papers} papers{enough}")
