"""A person as an agent: each turn waits for one tool call from the UI, so a human plays under the same `Episode`.

Nothing about the rules lives here. The episode charges the same costs, applies the
same caps, sends the same rejection texts, exhausted nudge and status footer, and
ends with the same five terminations as for a model; this class only carries a
person's call in and tells the UI what the agent was shown.

A human turn is exactly one tool call (`think` is the notes field, `submit_answer`
the answer): a model may batch several calls in one turn, a person may not, and a
person never sends plain text, so a human never receives the plain-text nudge.

Token usage: a person's turn has no provider count. Play sessions run with
`RunSpec.estimate_tokens`, so the runner wraps this agent in `EstimatedUsage`
(characters / 4 of the whole conversation each turn, raw usage marked
`estimated`): the TOKENS meter and the 200K cap then mean for a person what they
mean for a model that reads the same text every turn.

Quitting mid-item is cancellation: the task running the episode is cancelled while
`act` waits and nothing is finished by the episode; the play session keeps what was
played as an abandoned attempt (`workbench.service.play`), and the item is played again from
its first turn, marked `resumed`.
"""

from __future__ import annotations

from collections.abc import Callable

from sandbox.agents.external import ExternalAgent, NotYourTurn, Observation

__all__ = ["ExternalAgent", "HumanAgent", "NotYourTurn", "Observation", "human_agent_name", "is_human"]

HUMAN_PREFIX = "human:"
# How a person's record marks what they saw before (workbench.service.play): an attempt left midway is kept, ended by
# `error` with this error_kind; a later play of an item after seeing its tool results or its gold answer
# carries one of MARKED as its error_kind, and the leaderboard leaves it out.
ABANDONED, RESUMED, REPLAYED = "abandoned", "resumed", "replayed"
MARKED = (RESUMED, REPLAYED)


def human_agent_name(player: str) -> str:
    """The agent string a person's runs carry (`human:NAME`), which reports use to tell people from models."""
    return f"{HUMAN_PREFIX}{player}"


def is_human(agent: str | None) -> bool:
    return bool(agent) and str(agent).startswith(HUMAN_PREFIX)


class HumanAgent(ExternalAgent):
    """A person: one call per turn from the play screen; call ids `human_{n}`, an empty text per turn."""

    turn_text = ""

    def __init__(self, player: str, on_turn: Callable[[Observation], None] | None = None):
        super().__init__(human_agent_name(player), on_turn)

    def call_id(self) -> str:
        return f"human_{self._calls}"
