"""Reading a stored step as the protocol defines it, for the front ends that show one (stepper, play, compare).

What counts as a delivered read, the reasoning and content of an assistant's text, which papers and sections a
tool's output listed, and whether a run's read hops are current: each rule is the sandbox's own (one definition),
offered here so that no front end reaches into the sandbox to ask. All of it is pure and light.
"""

from __future__ import annotations

from sandbox.citations import hops_stale
from sandbox.recall import delivered_read
from sandbox.tools import available_sections, info_title, listed_papers, listed_sections
from sandbox.words import Words, split_words

__all__ = [
    "Words",
    "available_sections",
    "delivered_read",
    "hops_stale",
    "info_title",
    "listed_papers",
    "listed_sections",
    "split_words",
]
