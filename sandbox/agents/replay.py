"""The replay agent: re-issues a reference trajectory's logged turns so our own sandbox executes them.

The reference logs tool outputs cut to 500 characters; replaying the calls through our tools
restores the full texts (and the section indices of reads) while the episode loop re-applies
budget, turn and token rules. The agent only ever returns what the log says the model did:

* an assistant record → its text and tool calls (logged ids and args) with the logged per-turn
  prompt/completion tokens, so the token ledger and the status footers match;
* an `error` record → `NonTransientModelError` (consumes a turn, five in a row end as `error`);
* an "Abandoned after k transient retries" record → `TransientModelError` on every call until the
  episode gives up, as the reference did;
* the empty-response note → an empty turn (the episode ends as `error`);
* the token-limit note → a turn whose usage crosses the cap (its calls were discarded, so none).

Per-turn records carry no cache tokens, so the trajectory's cache-read and cache-creation totals
are given on the last successful call — never earlier, so no earlier turn can cross the cap. On
the token-limit note, cache-creation tokens are topped up until the cumulative cap quantity equals
the logged "Token limit reached (N > cap)" figure (at least cap + 1), so the crossing is reproduced
even when the note carries no tokens of its own.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping

from sandbox.agents.base import InfrastructureError, NonTransientModelError, TransientModelError
from sandbox.records import AssistantTurn, Caps, Item, ToolSchema, Usage, WireMessage
from sandbox.reference_log import LoggedTurn, ReferenceLog

_ABANDONED = re.compile(r"^Abandoned after \d+ transient retries: (.*)$", re.S)
MODEL_CALL_KINDS = ("assistant", "token_limit", "empty")


class ReplayAgent:
    """Returns a reference log's turns one model call at a time; see the module docstring."""

    name = "replay"

    def __init__(self, log: ReferenceLog, caps: Caps):
        self.log = log
        self.caps = caps
        self.pos = 0  # next record to return
        self.given = 0  # cap quantity handed out so far
        self.overrun = 0  # model calls asked for after the log ran out
        self._sticky: str | None = None  # the transient failure being repeated
        calls = [i for i, t in enumerate(log.turns) if t.kind in MODEL_CALL_KINDS]
        self._last_call = calls[-1] if calls else -1

    @property
    def unused(self) -> int:
        """Records the episode never asked for (it ended earlier than the reference did)."""
        return len(self.log.turns) - self.pos

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        if self._sticky is not None:
            raise TransientModelError(self._sticky, retry_after=0)
        if self.pos >= len(self.log.turns):
            self.overrun += 1
            raise InfrastructureError(
                f"replay log exhausted: the reference logged {len(self.log.turns)} turn records and ended as "
                f"{self.log.terminated_by!r}"
            )
        index, record = self.pos, self.log.turns[self.pos]
        self.pos += 1
        kind = record.kind
        if kind == "abandoned":
            m = _ABANDONED.match(record.content or "")
            self._sticky = m.group(1) if m else (record.content or "transient failure")
            raise TransientModelError(self._sticky, retry_after=0)
        if kind == "error":
            raise NonTransientModelError(record.content or "")
        usage = self._usage(record, index)
        if kind in ("token_limit", "empty"):
            return AssistantTurn(text=None, usage=usage)
        return AssistantTurn(text=record.content, tool_calls=list(record.tool_calls), usage=usage)

    def _usage(self, record: LoggedTurn, index: int) -> Usage:
        usage = Usage(prompt=record.prompt_tokens, completion=record.completion_tokens)
        if index == self._last_call:
            usage.cache_read = self.log.cache_read_tokens
            usage.cache_creation = self.log.cache_creation_tokens
            if record.kind == "token_limit":
                numbers = record.token_limit_numbers()
                target = max(numbers[0] if numbers else 0, self.caps.max_tokens_total + 1)
                usage.cache_creation += max(0, target - (self.given + usage.cap_quantity))
            else:
                room = self.caps.max_tokens_total - (self.given + usage.prompt + usage.completion)
                usage.cache_creation = max(0, min(usage.cache_creation, room))
        self.given += usage.cap_quantity
        return usage


def replay_factory(logs: Mapping[str, ReferenceLog], caps: Caps, agents: dict[str, ReplayAgent] | None = None):
    """A Runner agent factory replaying `logs[item.id]`; built agents are kept in `agents` for the check."""

    def make(item: Item, replicate: int, attempt: int) -> ReplayAgent:
        agent = ReplayAgent(logs[item.id], caps)
        if agents is not None:
            agents[item.id] = agent
        return agent

    return make


DEFAULT_CAPS = Caps()


def caps_from_logs(logs: Iterable[ReferenceLog], default: Caps = DEFAULT_CAPS) -> Caps:
    """The caps a set of logs was produced under, as far as the logs show it (the reference records no config).

    Budget: the most common `budget_total`. Turns: the turn count of max_turns endings, else the
    default (raised if any log has more turns). Token cap: the figure in a token-limit note, else the
    default. Disabled tools: those answered with the disabled-tool rejection.
    """
    logs = list(logs)
    budgets = Counter(log.budget_total for log in logs if log.budget_total is not None)
    budget = budgets.most_common(1)[0][0] if budgets else default.budget
    disabled = sorted(set().union(*(log.disabled_tools for log in logs)) | set(default.disabled_tools))
    return Caps(
        budget=budget,
        max_turns=_logged_max_turns(logs, default.max_turns),
        max_tokens_total=_logged_token_cap(logs, default.max_tokens_total),
        costs=default.costs,
        disabled_tools=tuple(disabled),
    )


def _logged_max_turns(logs: list[ReferenceLog], default: int) -> int:
    """The turn cap: the turn count of the max_turns endings, else `default` (raised to the longest log's)."""
    spans = [max((t.turn for t in log.turns), default=-1) + 1 for log in logs]
    capped = [s for log, s in zip(logs, spans, strict=True) if log.terminated_by == "max_turns"]
    return max(1, max(capped) if capped else max([default, *spans]))


def _logged_token_cap(logs: list[ReferenceLog], default: int) -> int:
    """The token cap: the most common figure the token-limit notes state, else `default`."""
    token_caps = [n[1] for log in logs for t in log.turns if t.kind == "token_limit" and (n := t.token_limit_numbers())]
    return Counter(token_caps).most_common(1)[0][0] if token_caps else default
