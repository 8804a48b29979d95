"""Sequential-scaling strategies: what an agent is told when it submits before its budget is spent (an *extension*).

The scaling study (§4.3, Fig. 6, Table 14) compares three:

- `continue` (its "Ours"): the submit is answered with the continue instruction and the agent goes on with its
  whole history (the token axis's EXTEND, `sandbox.prompts.CONTINUE`).
- `summarize` ("Memory"): the agent is asked to summarize its work (`SUMMARIZE_PROMPT`); its reply is a turn like any
  other (its tokens count against its budget) and then *replaces* the conversation: the system prompt, the task and
  the summary are all it sees afterwards. The episode stores the summary turn and marks the replacement.
- `verifier`: a separate verifier summarizes the trajectory factually, without hints or next steps
  (`VERIFIER_PROMPT`), and the agent receives that as its revision message. The verifier's calls, tokens and cost are
  recorded on steps of their own, never charged to the agent's budget (as in the study). A verifier that fails
  (error, timeout, empty reply) is a recorded error step, and that extension falls back to the continue
  instruction: the episode never crashes or hangs on it.

Where an extension happens: on the token axis, a submit below the context budget (as for `continue` since the
start); on the points and turns axes, once a strategy is chosen, a submit while the cap leaves room to work (a point,
and turns to work and answer), unless the agent resubmits straight after an extension without doing anything
(it declined to go on: the answer stands, so a scripted agent out of ideas never loops).
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

from sandbox.records import Item

STRATEGIES = ("continue", "summarize", "verifier")
VERIFIER_TIMEOUT_S = 120.0
# how a failed verifier's error step begins: the verifier's, not the agent's (no model turn of the agent; the store's
# strategy spend counts them, the reference summary leaves them out of the agent's turns)
VERIFIER_ERROR = "Verifier error "


@dataclass
class Assessment:
    """A verifier's summary of a trajectory and what producing it cost (zero for the scripted verifier), its input in
    the agent's buckets (`sandbox.records.Usage`): `prompt_tokens` the non-cached input, cache reads and writes apart,
    so its tokens are counted as the agent's are."""

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = None
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0


class VerifierFailed(Exception):
    """The verifier gave nothing usable: an error, a timeout, an empty reply."""


def _calls(steps: list[Any]) -> list[Any]:
    return [s for s in steps if getattr(s, "kind", None) == "tool"]


class EvidenceVerifier:
    """The scripted verifier: a factual summary of the stored steps, for offline runs and tests. It never looks at
    the gold answer, and like the study's verifier it says what was done and found, never what to do next."""

    name = "evidence"

    async def assess(self, item: Item, steps: list[Any], answer: Any) -> Assessment:
        calls = _calls(steps)
        used = Counter(s.tool_name for s in calls if s.tool_name != "submit_answer")
        reads = []
        for s in calls:
            if s.tool_name == "read_section" and s.delivered:
                reads.append(f"{s.paper_id or s.arxiv_id} §{s.section_index}")
        tried = ", ".join(f"{name} ×{n}" for name, n in sorted(used.items())) or "no tool yet"
        found = "; ".join(dict.fromkeys(reads)) or "no section read"
        return Assessment(f"Tried: {tried}. Read: {found}. Current answer: {answer_text(answer)}.")


def answer_text(answer: Any) -> str:
    """The answer a refused submit carried, as the summaries name it."""
    if isinstance(answer, dict):
        answer = answer.get("answer")
    return str(answer) if answer not in (None, "") else "none"


class LLMVerifier:
    """A model verifier through the native client or litellm, as the judges are asked (`sandbox.judges.LLMJudge`)."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        client: str = "auto",
        instructions: str | None = None,
        pricing: list[dict[str, Any]] | None = None,
    ):
        from sandbox.judges import LLMJudge
        from sandbox.prompts import VERIFIER_PROMPT

        # priced by the run's recorded `[[pricing]]` rows first, as the agent's calls are
        self.asker = LLMJudge(model, base_url=base_url, api_key_env=api_key_env, client=client, pricing=pricing)
        self.name = f"llm:{model}"
        self.instructions = instructions or VERIFIER_PROMPT  # the run's `Prompts.verifier` (--prompts)

    async def assess(self, item: Item, steps: list[Any], answer: Any) -> Assessment:
        from sandbox.judges import task_text

        rows = [
            {"kind": s.kind, "tool": s.tool_name, "args": s.tool_args, "text": (s.text or "")[:500]}
            for s in steps
            if s.kind in ("assistant", "tool")
        ]
        user = (
            f"## Task\n{task_text(item)}\n---\n## Trajectory\n{json.dumps(rows, ensure_ascii=False, default=str)}"
            f"\n---\nThe agent's current answer: {answer_text(answer)}\nSummarize the trajectory."
        )
        text, usage, usd = await self.asker.ask(self.instructions, user)
        return Assessment(
            text,
            prompt_tokens=usage.prompt,
            completion_tokens=usage.completion,
            cost_usd=usd,
            cache_read_tokens=usage.cache_read,
            cache_creation_tokens=usage.cache_creation,
        )


def make_verifier(
    name: str,
    base_url: str | None = None,
    api_key_env: str | None = None,
    client: str = "auto",
    instructions: str | None = None,
    pricing: list[dict[str, Any]] | None = None,
):
    """`evidence` is the scripted verifier; anything else a model string (ConfigError when it cannot be reached),
    told `instructions` (the run's `Prompts.verifier`; None: ours) and priced by the run's `pricing` rows first."""
    if name == "evidence":
        return EvidenceVerifier()
    return LLMVerifier(
        name, base_url=base_url, api_key_env=api_key_env, client=client, instructions=instructions, pricing=pricing
    )


@dataclass
class Strategy:
    """What an episode does at an extension (see the module docstring)."""

    name: str = "continue"
    verifier: Any = None
    timeout_s: float = VERIFIER_TIMEOUT_S

    async def assess(self, item: Item, steps: list[Any], answer: Any) -> Assessment:
        """The verifier's assessment, or VerifierFailed saying why (never another exception, never a hang)."""
        try:
            result = await asyncio.wait_for(self.verifier.assess(item, steps, answer), self.timeout_s)
        except TimeoutError:
            raise VerifierFailed(f"no reply within {self.timeout_s:g} s") from None
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 — the contract: any failure, named
            raise VerifierFailed(f"{type(exc).__name__}: {exc}") from None
        if not (result.text or "").strip():
            raise VerifierFailed("an empty reply")
        return result
