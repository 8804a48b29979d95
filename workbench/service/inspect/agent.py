"""The agent an Inspect sample plays with: our episode's turns answered by Inspect's model.

The episode (`sandbox.episode`) keeps the loop — costs, caps, rejections, nudges, footers and its five endings —
and asks this agent for each turn; the agent sends the episode's history and our seven tool schemas through
`Model.generate`, so Inspect's providers, retries, rate limits and transcript apply to every call. It remembers the
last request and each measured usage, from which the sample's messages are written (`conversation`).
"""

from __future__ import annotations

from inspect_ai.model import ChatMessage, Model, ModelOutput

from sandbox.agents.base import RefusedRequest
from sandbox.records import TOOL_NAMES, AssistantTurn, Step, ToolSchema, WireMessage
from workbench.service.inspect.conversation import TurnFacts, reply_message, to_inspect, tool_info, turn_from_output


class InspectModelAgent:
    """An `Agent` (sandbox.agents.base) whose every turn is one `generate` of an Inspect model."""

    name = "inspect"
    tokens_measured = True

    def __init__(self, model: Model):
        self.model = model
        self.usages: list[TurnFacts] = []  # per answered call, in order: the assistant messages' metadata
        self.sent: list[WireMessage] = []  # the last request's history
        self.reply: WireMessage | None = None  # the last answer, as our message
        self.output: ModelOutput | None = None

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        self.sent = list(messages)
        output = await self.model.generate(to_inspect(messages), tools=[tool_info(t) for t in tools])
        if output.stop_reason == "model_length":
            # Inspect's answer to a request the server refused for a full context window (its providers turn the
            # refusal into an output): our loop ends the episode there, as `error` / `context_overflow`
            raise RefusedRequest(output.message.text or "the conversation no longer fits the model", overflow=True)
        names = TOOL_NAMES + tuple(t["name"] for t in tools if isinstance(t.get("name"), str))
        turn = turn_from_output(output, names)
        self.output, self.reply = output, turn.raw or reply_message(turn)
        self.usages.append(TurnFacts.of(turn))
        return turn

    def conversation(self, history: list[WireMessage], steps: list[Step]) -> list[ChatMessage]:
        """The whole conversation as Inspect messages: the episode's history when it holds the last answer; else
        the last request, its answer and that answer's tool results (the episode ends on a submit, or a crossed
        cap, before they are sent back: they carry no status footer)."""
        if self.reply is None or len(history) > len(self.sent):
            return to_inspect(history, self.usages)
        last = max((k for k, s in enumerate(steps) if s.kind == "assistant"), default=len(steps))
        results: list[WireMessage] = [
            {"role": "tool", "tool_call_id": s.tool_call_id, "name": s.tool_name, "content": s.text or ""}
            for s in steps[last + 1 :]
            if s.kind == "tool"
        ]
        return to_inspect([*self.sent, self.reply, *results], self.usages)
