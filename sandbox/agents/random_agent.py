"""The random baseline: valid random tool calls over what it has seen, then a random answer (≈25% accuracy).

Told to answer now (STOP) it guesses at once; walked through a replayed prefix (continuation) it
makes the same random draws it would have made live (`replay`).
"""

from __future__ import annotations

import random
import re

from sandbox.agents.base import answer_now, call, last_budget_used, same_calls, tool_results, turn_number
from sandbox.records import AssistantTurn, Caps, Item, ToolCall, ToolSchema, WireMessage

PAPER_ID = re.compile(r"\[\d+\] (\S+)")
ALIAS = re.compile(r"^  \(([A-Z]+)\) ", re.M)
NAVIGATION = ("get_paper_info", "get_references", "search_papers", "list_sections")


class RandomAgent:
    name = "random"

    def __init__(self, item: Item, rng: random.Random, budget: int = Caps.budget):
        self.item = item
        self.rng = rng
        self.budget = budget
        self.seen: list[str] = [item.seed_paper_id]
        self.aliases: dict[str, list[str]] = {}
        self.last_paper: str | None = None
        self.n = 0  # the number of the turn being decided (ids are call_<n>)

    def _observe(self, messages: list[WireMessage]) -> int:
        """Learn paper ids and section aliases from the last results; return points used so far."""
        for text in tool_results(messages):
            for pid in PAPER_ID.findall(text):
                if pid not in self.seen:
                    self.seen.append(pid)
            found = ALIAS.findall(text)
            if found and self.last_paper:
                self.aliases[self.last_paper] = found
        return last_budget_used(messages, ("tool", "user")) or 0

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        return self._decide(messages, tools)

    async def replay(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...], turn: AssistantTurn) -> None:
        """Decide as if live on a replayed turn; if the stored call differs, remember the paper it named."""
        mine = self._decide(messages, tools)
        if turn.tool_calls and not same_calls(mine, turn):
            args = turn.tool_calls[0].args
            pid = args.get("paper_id") if isinstance(args, dict) else None
            self.last_paper = pid if isinstance(pid, str) else self.last_paper

    def _decide(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        left = self.budget - self._observe(messages)
        self.n = turn_number(messages)
        offered = {t["name"] for t in tools}
        if answer_now(messages) or left < 1 or self.rng.random() < 0.12 or not (offered & set(NAVIGATION)):
            return self._submit()
        return AssistantTurn(None, [self._call(self.rng.choice(self._options(offered, left)))])

    def _options(self, offered: set[str], left: int) -> list[str]:
        """The tools to draw from: the navigation offered, and reading twice as likely once a section is known."""
        options = [n for n in NAVIGATION if n in offered]
        if left >= 5 and self.aliases and "read_section" in offered:
            options += ["read_section"] * 2
        return options

    def _call(self, name: str) -> ToolCall:
        """A call of `name` with random arguments: a known section, words of the question, or a paper seen."""
        if name == "read_section":
            pid = self.rng.choice(sorted(self.aliases))
            return call(name, self.n, paper_id=pid, section=self.rng.choice(self.aliases[pid]))
        if name == "search_papers":
            words = [w for w in re.findall(r"\w+", self.item.question) if len(w) > 3]
            query = " ".join(self.rng.sample(words, min(3, len(words)))) or "method"
            return call(name, self.n, query=query)
        pid = self.rng.choice(self.seen)
        self.last_paper = pid
        return call(name, self.n, paper_id=pid)

    def _submit(self) -> AssistantTurn:
        letter = self.rng.choice("ABCD")
        return AssistantTurn(None, [call("submit_answer", self.n, answer=letter, reasoning="a random guess")])
