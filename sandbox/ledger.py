"""The running account of one episode: points, turns, tokens and consecutive rejections (docs/protocol.md#rules).

Pure and synchronous, so the budget rules can be property-tested on their own.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.records import Caps, LedgerState, Usage

DISABLED = "REJECTED: Tool '{name}' is disabled in this run. Use only the tools listed in the system prompt."
INSUFFICIENT = (
    "REJECTED: Insufficient budget ({left} remaining, {name} costs {cost}). You cannot use this tool. "
    "Call submit_answer immediately with your best guess based on evidence gathered so far."
)


@dataclass
class Decision:
    """What the ledger says about one call: `execute` (with its cost), `disabled` or `rejected`."""

    verdict: str
    cost: int = 0
    message: str | None = None


class Ledger:
    """Accept, reject or terminate; never lets points go negative."""

    def __init__(self, caps: Caps):
        self.caps = caps
        self.points_left = caps.budget
        self.turn_index = 0  # 0-based turns consumed (model turns and error turns)
        self.model_calls = 0
        self.rejections = 0  # consecutive budget rejections, across turns
        self.prompt = self.completion = self.cache_read = self.cache_creation = 0

    @property
    def points_used(self) -> int:
        return self.caps.budget - self.points_left

    @property
    def tokens(self) -> int:
        """The cap quantity: non-cached prompt + completion + cache creation, cumulative."""
        return self.prompt + self.completion + self.cache_creation

    def add_usage(self, usage: Usage) -> bool:
        """Count one call's tokens; True when the cumulative cap quantity now exceeds the cap (strict `>`)."""
        self.model_calls += 1
        self.prompt += max(0, usage.prompt)
        self.completion += max(0, usage.completion)
        self.cache_read += max(0, usage.cache_read)
        self.cache_creation += max(0, usage.cache_creation)
        return self.tokens > self.caps.max_tokens_total

    def decide(self, name: str) -> Decision:
        """Check one call against the running budget, in the reference's order: disabled, unaffordable, execute."""
        if name in self.caps.disabled_tools:
            return Decision("disabled", 0, DISABLED.format(name=name))
        cost = self.caps.cost(name) if isinstance(name, str) else 0
        if name != "submit_answer" and self.points_left < cost:
            self.rejections += 1
            return Decision("rejected", 0, INSUFFICIENT.format(left=self.points_left, name=name, cost=cost))
        self.points_left -= cost
        self.rejections = 0
        return Decision("execute", cost)

    @property
    def double_rejected(self) -> bool:
        return self.rejections >= 2

    @property
    def exhausted(self) -> bool:
        return self.points_left <= 0

    def state(self) -> LedgerState:
        return LedgerState(self.turn_index + 1, self.points_used, self.points_left, self.tokens, self.rejections)
