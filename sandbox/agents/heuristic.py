"""The heuristic baseline: an honest non-LLM navigator that sees only what the tools return.

It ranks papers by keyword overlap between the question and their titles and
abstracts, reads the most promising sections while the budget lasts, and picks the
option whose distinctive words have the most support in what it read. Seeded: ties
and an occasional exploratory pick depend on the seed, so replicates can differ.

Told to answer now (the token axis's STOP), it submits its best guess at once. Joining a
conversation half-way (the continuation protocol replays a prefix of stored turns), it is
walked through the prefix by `replay`, which takes the same decisions (and random draws) it
would have taken live, so a continued run is the fresh run at the higher budget.

Offered out-of-domain tools (the general-agent setting, `sandbox.extra_tools`), it can be made *distractible*:
each call it makes is, with probability `distractible` and independently of everything else, a call to one of
those tools (drawn uniformly, its required arguments filled with placeholders) instead of the call it planned,
which waits for the next turn. Every call is out of domain with probability p whatever came before, so the
expected out-of-domain share of its calls is exactly p (tests check the observed share against its binomial
interval). The draws come from a generator of their own: without extra tools the agent is the plain one.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Any

from sandbox.agents.base import (
    answer_now,
    call,
    last_budget_used,
    same_calls,
    summary_requested,
    tool_results,
    turn_number,
)
from sandbox.records import TOOL_NAMES, AssistantTurn, Caps, Item, ToolSchema, WireMessage
from sandbox.tools import listed_papers, listed_sections
from storage.json_types import JsonObject, JsonValue

_WORD = re.compile(r"\w+")
STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "to",
        "for",
        "from",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "that",
        "this",
        "these",
        "those",
        "which",
        "what",
        "how",
        "why",
        "does",
        "do",
        "did",
        "its",
        "it",
        "their",
        "there",
        "than",
        "as",
        "at",
        "into",
        "onto",
        "seed",
        "paper",
        "papers",
        "work",
        "works",
        "cited",
        "cites",
        "according",
        "earlier",
        "study",
        "studies",
        "describes",
        "describe",
        "statement",
        "both",
        "correctly",
        "introduced",
        "them",
        "combines",
        "combine",
        "adopts",
        "adopt",
        "builds",
        "build",
        "reuses",
        "reuse",
        "from",
        "one",
    ]
)
READ_COST, NAV_COST = 5, 1


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in STOP and len(w) > 2}


@dataclass
class Candidate:
    paper_id: str
    text: str = ""
    has_text: bool = False
    visited: bool = False
    expanded: bool = False


@dataclass
class _State:
    candidates: dict[str, Candidate] = field(default_factory=dict)
    reads: list[tuple[str, str]] = field(default_factory=list)  # (paper id, text)
    pending: list[tuple[str, JsonObject]] = field(default_factory=list)  # calls to make: (tool, arguments)
    listing_for: str | None = None
    reading: str | None = None
    used: int = 0


class HeuristicAgent:
    name = "heuristic"

    def __init__(
        self,
        item: Item,
        rng: random.Random,
        budget: int = Caps.budget,
        explore: float = 0.2,
        distractible: float = 0.0,
        distraction_rng: random.Random | None = None,
    ):
        self.item = item
        self.rng = rng
        self.distractible = distractible
        self.distraction_rng = distraction_rng or random.Random(0)
        self.budget = budget
        self.explore = explore
        self.q = content_words(item.question)
        self.s = _State()
        self.s.pending = [
            ("get_references", {"paper_id": item.seed_paper_id}),
            ("search_papers", {"query": " ".join(sorted(self.q)), "top_k": 10}),
        ]

    # ------------------------------------------------------------ observing

    def _observe(self, messages: list[WireMessage]) -> None:
        for text in tool_results(messages):
            self._note_candidates(text)
            if text.startswith("Sections for paper") and self.s.listing_for:
                self._choose_section(self.s.listing_for, listed_sections(text))
            elif text.startswith("===") and self.s.reading:
                self.s.reads.append((self.s.reading, text))
                self.s.reading = None
        used = last_budget_used(messages, ("user", "assistant", "tool"))
        self.s.used = self.s.used if used is None else used

    def _note_candidates(self, text: str) -> None:
        """Add the papers a result lists to the candidates (their title and abstract to the text scored)."""
        for entry in listed_papers(text):
            if entry.has_text is None:  # an entry whose full-text line cannot be read is no candidate
                continue
            cand = self.s.candidates.setdefault(entry.paper_id, Candidate(entry.paper_id))
            cand.text = f"{cand.text} {entry.title} {entry.abstract}"
            cand.has_text = entry.has_text

    def _choose_section(self, pid: str, sections: list[tuple[str, str]]) -> None:
        self.s.listing_for = None
        if not sections:
            return

        def score(entry: tuple[str, str]) -> tuple[float, float]:
            words = content_words(entry[1])
            bonus = 0.5 if "method" in words else 0.0
            return (len(words & self.q) + bonus, self.rng.random())

        best = max(sections, key=score)
        self.s.pending.insert(0, ("read_section", {"paper_id": pid, "section": best[0]}))

    def _issued(self, name: str, args: Any) -> None:
        """Remember what the call just made will answer: a section listing or a read of that paper."""
        pid = args.get("paper_id") if isinstance(args, dict) else None
        self.s.listing_for = pid if name == "list_sections" else None
        self.s.reading = pid if name == "read_section" else None
        cand = self.s.candidates.get(pid) if isinstance(pid, str) else None
        if cand is not None and name == "list_sections":
            cand.visited = True
        if cand is not None and name == "get_references":
            cand.expanded = True

    # ------------------------------------------------------------ choosing

    def _score(self, cand: Candidate) -> float:
        overlap = len(content_words(cand.text) & self.q)
        return overlap - (2.0 if cand.paper_id == self.item.seed_paper_id else 0.0)

    def _next_paper(self) -> Candidate | None:
        pool = [c for c in self.s.candidates.values() if c.has_text and not c.visited]
        if not pool:
            return None
        pool.sort(key=lambda c: (self._score(c), self.rng.random()), reverse=True)
        if len(pool) > 1 and self.rng.random() < self.explore:
            return pool[1]
        return pool[0]

    def _plan(self) -> None:
        """Queue the next navigation: list and read the best unvisited paper, expanding its references."""
        left = self.budget - self.s.used
        if left < READ_COST + NAV_COST:
            return
        cand = self._next_paper()
        if cand is None:
            return
        cand.visited = True
        self.s.pending.append(("list_sections", {"paper_id": cand.paper_id}))
        if not cand.expanded and left >= 2 * (READ_COST + NAV_COST) + NAV_COST and self._score(cand) > 0:
            cand.expanded = True
            self.s.pending.append(("get_references", {"paper_id": cand.paper_id}))

    # ------------------------------------------------------------ answering

    def choose_option(self) -> int:
        """The option whose distinctive words are best supported by what was read (seed reads count less)."""
        opts = [content_words(o) for o in self.item.options]
        scores = []
        for i, words in enumerate(opts):
            others = set().union(*(opts[j] for j in range(4) if j != i))
            own = words - others or words
            support = 0.0
            for pid, text in self.s.reads:
                weight = 0.3 if pid == self.item.seed_paper_id else 1.0
                support += weight * len(own & content_words(text)) / max(len(own), 1)
            scores.append((support, self.rng.random(), i))
        return max(scores)[2]

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        return self._decide(messages, tools)

    async def replay(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...], turn: AssistantTurn) -> None:
        """Be walked through a replayed turn: decide as if live (same state changes, same random draws).

        Should the stored turn differ from that decision (a prefix from another version or agent),
        the call actually made is what the state remembers (and is dropped from the queue), and the
        undone decision is queued again.
        """
        mine = self._decide(messages, tools)
        if same_calls(mine, turn) or not turn.tool_calls:
            return
        undone, actual = mine.tool_calls[0], turn.tool_calls[0]
        done = (actual.name, actual.args)
        self.s.pending = [p for p in self.s.pending if p != done]  # already made: never again
        if undone.name != "submit_answer" and (undone.name, undone.args) != done:
            self.s.pending.insert(0, (undone.name, dict(undone.args)))
        self._issued(actual.name, actual.args)

    def _decide(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        self._observe(messages)
        n = turn_number(messages)
        if answer_now(messages):
            return self._submit(n)
        if summary_requested(messages):
            return AssistantTurn(self.summary())
        distraction = self._distraction(tools, n)
        if distraction is not None:
            return distraction
        queued = self._next_call({t["name"] for t in tools}, n)
        return queued if queued is not None else self._submit(n)

    def _next_call(self, offered: set[str], n: int) -> AssistantTurn | None:
        """The next queued call among the tools offered (planning more when the queue is empty), or None when
        nothing is left to do or the budget cannot pay for it (the pending call is dropped)."""
        self.s.pending = [p for p in self.s.pending if p[0] in offered]
        if not self.s.pending:
            self._plan()
            self.s.pending = [p for p in self.s.pending if p[0] in offered]
        if not self.s.pending:
            return None
        name, args = self.s.pending.pop(0)
        cost = READ_COST if name == "read_section" else NAV_COST
        if self.budget - self.s.used < cost:
            return None
        self._issued(name, args)
        return AssistantTurn(None, [call(name, n, **args)])

    def summary(self) -> str:
        """The summarize strategy's four points, from what it has done (its state is its memory: it keeps it when
        the conversation is replaced). Deterministic: no random draw, so a summary never shifts later choices."""
        read = ", ".join(dict.fromkeys(pid for pid, _ in self.s.reads)) or "none"
        left = sum(1 for c in self.s.candidates.values() if c.has_text and not c.visited)
        return (
            f"Tried: keyword-ranked navigation from the seed ({len(self.s.candidates)} candidate papers seen). "
            f"Collected: {len(self.s.reads)} section(s) read, from {read}. "
            f"Current state: the answer goes to the option best supported by those reads. "
            f"Remaining: {left} unvisited candidate(s) with full text."
        )

    def _distraction(self, tools: tuple[ToolSchema, ...], n: int) -> AssistantTurn | None:
        """With probability `distractible`, a call to one of the out-of-domain tools offered (None otherwise, or when
        none is offered: the draw is made only then, so a plain run is untouched)."""
        extra = [t for t in tools if t["name"] not in TOOL_NAMES]
        if not extra or self.distractible <= 0 or self.distraction_rng.random() >= self.distractible:
            return None
        tool = extra[self.distraction_rng.randrange(len(extra))]
        return AssistantTurn(None, [call(tool["name"], n, **placeholder_arguments(tool))])

    def _submit(self, n: int) -> AssistantTurn:
        letter = "ABCD"[self.choose_option()]
        return AssistantTurn(
            None,
            [
                call(
                    "submit_answer",
                    n,
                    answer=letter,
                    reasoning=f"Best supported by {len(self.s.reads)} section(s) read.",
                )
            ],
        )


_PLACEHOLDERS: dict[str, JsonValue] = {
    "string": "example",
    "integer": 1,
    "number": 1.0,
    "boolean": False,
    "array": [],
    "object": {},
}


def placeholder_arguments(schema: ToolSchema) -> JsonObject:
    """The required arguments of a tool schema, each a placeholder of its type."""
    params = schema.get("parameters") or {}
    props, required = params.get("properties"), params.get("required")
    known = props if isinstance(props, dict) else {}
    names = required if isinstance(required, list) else []
    return {name: _placeholder(known.get(name)) for name in names if isinstance(name, str)}


def _placeholder(prop: JsonValue) -> JsonValue:
    """A placeholder of the property's JSON type ("example" for a type not listed)."""
    kind = prop.get("type") if isinstance(prop, dict) else None
    return _PLACEHOLDERS.get(kind, "example") if isinstance(kind, str) else "example"
