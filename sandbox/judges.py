"""Judges for parallel scaling: does a trajectory's answer hold up (pointwise), which of two is better (pairwise)?

`EvidenceJudge` needs no model: it accepts an answer whose distinctive words appear in
the sections the trajectory actually read (it sees what the agent saw, never the gold).
`LLMJudge` asks a model through litellm with the scaling study's prompts (test-time-scaling
§3.4–3.5): a strict auditor that ends with `<judgment>Correct|Wrong</judgment>`, and a
comparison that ends with `<choice>1|2</choice>`. The study's own prompts (its appendix: Pair-wise Self-choice
Prompt) answer `<ranking>1|2</ranking>` instead: both tags are read, the last one in the reply deciding.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from sandbox.agents.heuristic import content_words
from sandbox.prompts import DEFAULT_PROMPTS  # what a judge is sent (a run's --prompts may replace it)
from sandbox.records import Item, Usage, WireMessage
from storage.json_types import JsonValue

if TYPE_CHECKING:
    from sandbox.agents.native import NativeClient

_JUDGMENT = re.compile(r"<judgment>\s*(Correct|Wrong)\s*</judgment>", re.I)
_CHOICE = re.compile(r"<(choice|ranking)>\s*([12])\s*</\1>", re.I)


class TranscriptStep(TypedDict):
    """One step of a trajectory as a judge is shown it: its kind, the tool called, the arguments as the model wrote
    them and the text."""

    kind: str
    tool: str | None
    args: JsonValue
    text: str | None


@dataclass
class Sample:
    """One trajectory of an item as a judge sees it: its answer and what it read."""

    index: int
    answer: str | None
    predicted_index: int | None  # None: no letter parsed from the answer
    reads: list[str]  # texts of delivered reads
    transcript: list[TranscriptStep]  # in order


@dataclass
class Verdict:
    value: bool | None  # pointwise: accepted; pairwise: the challenger (second) wins
    prompt: str | None = None
    reply: str | None = None
    tokens: int | None = None
    cost_usd: float | None = None
    usage: Usage | None = None  # the judge call's token buckets (None: an offline judge, no call)


def parse_judgment(reply: str | None) -> bool | None:
    """Correct → True, Wrong → False (the last `<judgment>` tag of the reply: a model may quote the format before it
    answers); anything else is unparsed (None), never a silent acceptance."""
    found = _JUDGMENT.findall(reply or "")
    return None if not found else found[-1].lower() == "correct"


def parse_choice(reply: str | None) -> bool | None:
    """Whether the second trajectory wins: `<choice>2</choice>` (ours) or `<ranking>2</ranking>` (the study's), the
    last such tag deciding; anything else is unparsed (None)."""
    found = _CHOICE.findall(reply or "")
    return None if not found else found[-1][1] == "2"


class EvidenceJudge:
    """Accept an answer whose distinctive words were read; prefer the better-supported of two."""

    name = "evidence"

    def __init__(self, threshold: float = 0.5):
        self.threshold = threshold

    def support(self, item: Item, sample: Sample) -> float:
        i = sample.predicted_index
        if i is None or not 0 <= i < len(item.options):
            return 0.0
        opts = [content_words(o) for o in item.options]
        own = opts[i] - set().union(*(opts[j] for j in range(len(opts)) if j != i)) or opts[i]
        read = set().union(*(content_words(t) for t in sample.reads)) if sample.reads else set()
        return len(own & read) / max(len(own), 1)

    async def pointwise(self, item: Item, sample: Sample) -> Verdict:
        return Verdict(self.support(item, sample) >= self.threshold)

    async def pairwise(self, item: Item, leader: Sample, challenger: Sample) -> Verdict:
        return Verdict(self.support(item, challenger) > self.support(item, leader))


@dataclass(frozen=True)
class StoredJudge:
    """A model judge known by name only: its verdicts stored with a run are read, it is never asked.

    What the TUI uses for a run judged by an LLM, so that looking at a result never spends money
    (nor needs the provider's key).
    """

    name: str

    async def pointwise(self, item: Item, sample: Sample) -> Verdict:
        raise RuntimeError(f"judge {self.name} is read from the store only")

    async def pairwise(self, item: Item, leader: Sample, challenger: Sample) -> Verdict:
        raise RuntimeError(f"judge {self.name} is read from the store only")


def task_text(item: Item) -> str:
    options = "\n".join(f"({'ABCD'[i]}) {o}" for i, o in enumerate(item.options))
    return f"Seed paper: {item.seed_title}\nQuestion: {item.question}\nOptions:\n{options}"


def trajectory_text(sample: Sample, limit: int = 500) -> str:
    """The trajectory as JSON, each text cut to `limit` characters (the study's minimal mode)."""
    rows = [{k: (v[:limit] if isinstance(v, str) else v) for k, v in step.items()} for step in sample.transcript]
    return json.dumps(rows, ensure_ascii=False)


class LLMJudge:
    """A model judge (the same model as the run for self-choice, or an external one), through the native client
    where the model's route allows it (as the run's calls go), else through litellm."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        api_key_env: str | None = None,
        client: str = "auto",
        prompts: Any = None,
        pricing: list[dict[str, Any]] | None = None,
    ):
        from sandbox.agents.llm import ConfigError, LLMConfig, choose_native
        from sandbox.agents.native import NativeClient, base_url_for
        from sandbox.pricing import price_for

        self.config = LLMConfig(
            model=model, base_url=base_url, api_key_env=api_key_env, temperature=0.0, max_tokens=8192, client=client
        )
        self.key = self.config.api_key()
        self.name = f"llm:{model}"
        self.prompts = prompts  # the run's `sandbox.prompts.Prompts` (--prompts): what the judge is sent
        # priced as the run's own calls are: the run's recorded `[[pricing]]` rows first, then the built-in table
        self.price = price_for(model, pricing)
        route = choose_native(self.config)
        url = base_url_for(route, base_url) if route else None
        if route and url is None:
            raise ConfigError(f"no server for the judge '{model}': pass --judge-base-url")
        self.native = NativeClient(url, self.key, self.config.timeout_s) if route and url else None

    async def ask(self, system: str, user: str) -> tuple[str, Usage, float | None]:
        """One call with this system prompt: (reply text, its `Usage`, USD or None); the verifier asks through it."""
        from sandbox.pricing import cost

        messages: list[WireMessage] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        text, usage = await (self._ask_native(self.native, messages) if self.native else self._ask_litellm(messages))
        priced = cost(self.price, usage)
        return text, usage, priced["total_usd"] if priced else None

    async def _ask_litellm(self, messages: list[WireMessage]) -> tuple[str, Any]:
        from sandbox.agents.litellm_import import litellm_module
        from sandbox.agents.llm import QUIET_CALL
        from sandbox.agents.replies import classify, read_usage

        litellm = litellm_module()
        req: dict[str, Any] = {
            "model": self.config.model,
            "api_key": self.key,
            "temperature": 0.0,
            "max_tokens": 8192,
            **QUIET_CALL,
            "drop_params": True,  # a judge, not the protocol's agent: let litellm drop what a model refuses
            "messages": messages,
        }
        if self.config.base_url:
            req["api_base"] = self.config.base_url
        try:
            resp = await litellm.acompletion(**req)
        except Exception as exc:  # noqa: BLE001 — litellm's many classes: each classified
            raise classify(exc, self.key) from None
        return (resp.choices[0].message.content or ""), read_usage(getattr(resp, "usage", None))

    async def _ask_native(self, native: NativeClient, messages: list[WireMessage]) -> tuple[str, Any]:
        """The same request litellm sends a native route (temperature and max_tokens are standard parameters
        every such route takes, so `drop_params` drops nothing there)."""
        from sandbox.agents.base import ModelError, NonTransientModelError
        from sandbox.agents.replies import EMPTY_USAGE, compact, lost_response, read_usage, reply_outcome

        body = {
            "model": self.config.model.split("/", 1)[1],
            "messages": messages,
            "temperature": 0.0,
            "max_tokens": 8192,
        }
        try:
            reply = await native.post(body)
        except Exception as exc:  # noqa: BLE001 — any transport failure: a model error
            raise (
                lost_response(exc, self.config.timeout_s) or NonTransientModelError(f"{type(exc).__name__}: {exc}")
            ) from None
        outcome = reply_outcome(reply.status, reply.retry_after, reply.body, self.key)
        if isinstance(outcome, ModelError):
            raise outcome
        message = outcome["choices"][0]["message"]
        usage = outcome.get("usage")
        return (message.get("content") or ""), read_usage(compact(usage) if usage is not None else EMPTY_USAGE)

    async def pointwise(self, item: Item, sample: Sample) -> Verdict:
        texts = self.prompts or DEFAULT_PROMPTS
        user = texts.judge_pointwise_user.format(
            trajectory=trajectory_text(sample), task=task_text(item), answer=sample.answer
        )
        reply, usage, usd = await self.ask(texts.judge_pointwise, user)
        return Verdict(parse_judgment(reply), user, reply, usage.cap_quantity, usd, usage)

    async def pairwise(self, item: Item, leader: Sample, challenger: Sample) -> Verdict:
        texts = self.prompts or DEFAULT_PROMPTS
        user = texts.judge_pairwise_user.format(
            task=task_text(item),
            trajectory_1=trajectory_text(leader),
            answer_1=leader.answer,
            trajectory_2=trajectory_text(challenger),
            answer_2=challenger.answer,
        )
        reply, usage, usd = await self.ask(texts.judge_pairwise, user)
        return Verdict(parse_choice(reply), user, reply, usage.cap_quantity, usd, usage)
