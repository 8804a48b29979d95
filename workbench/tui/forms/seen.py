"""What a player has been shown so far: paper ids with their titles, and the section aliases of each listed paper.

Completion and the clickable lists of the play screen offer only these, never the
item's neighbourhood, so they save typing 40-character ids without giving anything
away. They are read from the tool texts the player saw (formats are the reference's,
to the character: `sandbox.tools`); rejected and failed calls show nothing new.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.service.steps import available_sections, info_title, listed_papers, listed_sections


@dataclass
class Seen:
    """Papers in the order they were first shown (id → title) and, per paper, its sections as (alias, header)."""

    papers: dict[str, str] = field(default_factory=dict)
    sections: dict[str, list[tuple[str, str]]] = field(default_factory=dict)

    @classmethod
    def from_seed(cls, seed_id: str, seed_title: str) -> Seen:
        """The seed is in the task the agent is given, so it is seen from the start."""
        return cls({seed_id: seed_title})

    def add_paper(self, pid: str, title: str = "") -> None:
        if title or pid not in self.papers:
            self.papers[pid] = title or self.papers.get(pid, "")

    def update(self, step: Any) -> bool:
        """Take in one step of the episode (a live `Step`); True when something new was seen."""
        if step.kind != "tool" or step.status in ("rejected", "disabled") or not step.text:
            return False
        before = (dict(self.papers), {k: list(v) for k, v in self.sections.items()})
        args = step.tool_args if isinstance(step.tool_args, dict) else {}
        self._take(step.tool_name, step.status, step.text, str(args.get("paper_id")))
        return (self.papers, self.sections) != before

    def _take(self, name: str, status: str, text: str, paper_id: str) -> None:
        """What a shown tool text names: listed papers, a paper's title, its sections (the sections a read that did
        not resolve lists)."""
        if name in ("get_references", "search_papers"):
            for entry in listed_papers(text):
                self.add_paper(entry.paper_id, entry.title.strip())
        elif name == "get_paper_info" and status == "ok":
            self.add_paper(paper_id, info_title(text).strip())
        elif name == "list_sections" and status == "ok":
            self.add_paper(paper_id)
            self.sections[paper_id] = listed_sections(text)
        elif name == "read_section" and status == "unresolved":
            listing = available_sections(text)
            if listing is not None:
                self.sections[paper_id] = listing
