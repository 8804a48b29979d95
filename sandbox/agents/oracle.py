"""The oracle: told the gold papers and their labelled sections, it navigates straight to them and answers right.

It is the upper bound and a self-check: on a well-formed benchmark it must reach 100%
accuracy and 100% paper and section recall, so any shortfall is a bug in the data or in us.
Told to answer now (STOP) it answers at once; `replay` walks its plan through a replayed prefix.
"""

from __future__ import annotations

from sandbox.agents.base import answer_now, call, same_calls, summary_requested, turn_number
from sandbox.records import AssistantTurn, Item, ToolSchema, WireMessage
from sandbox.sections import alias
from storage.json_types import JsonObject


class OracleAgent:
    name = "oracle"

    def __init__(self, item: Item):
        self.item = item
        self.plan = self._plan()

    def _plan(self) -> list[tuple[str, JsonObject]]:
        item = self.item
        plan: list[tuple[str, JsonObject]] = [("get_references", {"paper_id": item.seed_paper_id})]
        for bridge in item.bridge_paper_ids:
            plan.append(("get_references", {"paper_id": bridge}))
        for gold_id, gold_arx in zip(item.gold_paper_ids, item.gold_arxiv_ids, strict=True):
            plan.append(("list_sections", {"paper_id": gold_id}))
            plan.append(("read_section", {"paper_id": gold_id, "section": alias(self._section(gold_arx))}))
        letter = "ABCD"[item.correct_index]
        plan.append(("submit_answer", {"answer": letter, "reasoning": "The labelled gold sections state it."}))
        return plan

    def _section(self, arxiv_id: str) -> int:
        """The first direct label's section of this paper, else any resolved label's, else the first section."""
        labels = [lab for lab in self.item.labels if lab.arxiv_id == arxiv_id]
        direct = [lab.section_index for lab in labels if lab.relevance == "direct" and lab.section_index is not None]
        resolved = [lab.section_index for lab in labels if lab.section_index is not None]
        chosen = direct or resolved
        return chosen[0] if chosen else 0

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        return self._decide(messages, tools)

    async def replay(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...], turn: AssistantTurn) -> None:
        """Advance the plan past a replayed turn; a stored call that was not the plan's next puts that step back."""
        mine = self._decide(messages, tools)
        if not turn.tool_calls or same_calls(mine, turn):
            return
        undone, actual = mine.tool_calls[0], turn.tool_calls[0]
        self.plan = [p for p in self.plan if p != (actual.name, actual.args)]
        if undone.name != "submit_answer":
            self.plan.insert(0, (undone.name, undone.args))

    def _decide(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        offered = {t["name"] for t in tools}
        while self.plan and self.plan[0][0] not in offered:
            self.plan.pop(0)
        if summary_requested(messages):
            left = [name for name, _ in self.plan]
            return AssistantTurn(
                text=f"Tried: the labelled route from the seed. Collected: the gold sections read. "
                f"Current answer: {'ABCD'[self.item.correct_index]}. Remaining: "
                f"{', '.join(left) or 'nothing'}.",
                tool_calls=[],
            )
        answer = ("submit_answer", {"answer": "ABCD"[self.item.correct_index], "reasoning": "oracle"})
        name, args = answer if answer_now(messages) or not self.plan else self.plan.pop(0)
        return AssistantTurn(text=None, tool_calls=[call(name, turn_number(messages), **args)])
