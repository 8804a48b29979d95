"""How each provider takes the same run settings (docs/agents.md): thinking, sampling, top_k, prompt caching.

A run's settings are provider-neutral (presets, then flags). litellm maps most of them, but
not the way the reference does everywhere, so the differences are decided here, once per run:

- Anthropic: extended thinking is `thinking={"type": "enabled", "budget_tokens": N}` (`low`/`medium`/
  `high` → 4096/8192/16384, a digit string verbatim) with temperature forced to 1.0 and no
  top_p/top_k; without thinking, top_k is a top-level parameter. Cache markers go on the system
  prompt, the last tool definition and the last tool result of the latest turn that read a section.
- Gemini / Vertex: top_k as a parameter (litellm puts it in generationConfig).
- Everything else is OpenAI-compatible: top_k travels in the request body (`extra_body`).
- The GPT-5 family takes no temperature/top_p and counts `max_completion_tokens`.
- Standard OpenAI parameters a provider does not take are left out here (what litellm's
  `drop_params` would do, without its silent resend of a request that got a 422).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, cast

from sandbox.pricing import bare_model
from sandbox.records import WireMessage, WireTool
from storage.json_types import JsonObject

ANTHROPIC = "anthropic"
GOOGLE = ("gemini", "vertex_ai", "vertex_ai_beta")
THINKING_BUDGETS = {"low": 4096, "medium": 8192, "high": 16384}
EPHEMERAL: JsonObject = {"type": "ephemeral"}
OPENAI_STANDARD = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "reasoning_effort")
# Routes whose successful replies are OpenAI chat completions (a `choices` list), so a body without one is an error.
CHAT_COMPLETIONS = frozenset({"openai", "custom_openai", "hosted_vllm", "deepseek", "together_ai", "xai", "openrouter"})


def provider_of(model: str, base_url: str | None) -> str:
    """litellm's provider for this model string (the route its request will take)."""
    from sandbox.agents.litellm_import import litellm_module

    try:
        return litellm_module().get_llm_provider(model=model, api_base=base_url)[1]
    # litellm's routing raises bare Exceptions too; an unroutable model's first call says so, as a non-transient error
    except Exception:  # noqa: BLE001 — litellm raises bare Exception here
        return "unknown"


REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")  # OpenAI's names; Anthropic maps low..high


def valid_effort(effort: str) -> bool:
    """A reasoning effort some provider takes: a named one, or a positive number of (Anthropic) thinking tokens."""
    return effort in REASONING_EFFORTS or (effort.isdigit() and int(effort) > 0)


def thinking_budget(effort: str) -> int:
    """Anthropic's thinking budget for a reasoning effort: low/medium/high or a number of tokens."""
    if effort in THINKING_BUDGETS:
        return THINKING_BUDGETS[effort]
    if effort.isdigit() and int(effort) > 0:
        return int(effort)
    raise ValueError(
        f"reasoning effort {effort!r} for an Anthropic model must be low, medium, high or a number of thinking tokens"
    )


def request_params(
    provider: str, model: str, sampling: dict[str, str | int | float], supported: set[str] | None
) -> dict[str, Any]:
    """The acompletion keyword arguments for these sampling settings on this provider."""
    s = dict(sampling)
    out: dict[str, Any] = {}
    if provider == ANTHROPIC:
        effort = s.pop("reasoning_effort", None)
        if effort is not None:
            out["thinking"] = {"type": "enabled", "budget_tokens": thinking_budget(str(effort))}
            s.update(temperature=1.0)
            s.pop("top_p", None)
            s.pop("top_k", None)
    if bare_model(model).startswith("gpt-5"):
        s.pop("temperature", None)
        s.pop("top_p", None)
        s["max_completion_tokens"] = s.pop("max_tokens")
    top_k = s.pop("top_k", None)
    if top_k is not None:
        if provider == ANTHROPIC or provider in GOOGLE:
            out["top_k"] = top_k
        else:
            out["extra_body"] = {"top_k": top_k}  # OpenAI-compatible servers (vLLM, sglang, …) read it from the body
    for key, value in s.items():
        if key in OPENAI_STANDARD and supported is not None and key not in supported:
            continue
        out[key] = value
    return out


def supported_params(model: str, provider: str) -> set[str] | None:
    """The OpenAI-standard parameters litellm says this provider takes (None: it does not know)."""
    from sandbox.agents.litellm_import import litellm_module

    try:
        params = litellm_module().get_supported_openai_params(model=bare_model(model), custom_llm_provider=provider)
    except Exception:  # noqa: BLE001 — litellm raises bare Exception; it does not know
        return None
    return set(params) if params else None


def cached_tools(tools: list[WireTool]) -> list[WireTool]:
    """Anthropic: the last tool definition carries a static ephemeral cache marker."""
    if not tools:
        return tools
    return [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]


def cache_marked(messages: list[WireMessage]) -> list[WireMessage]:
    """Anthropic: markers on the system prompt and on the last tool result of the latest read_section turn.

    The reference moves the tool-result marker each time a turn reads a section (earlier ones
    are removed), so at any moment exactly that turn's last result carries it; computing it
    from the history gives the same request without state.
    """
    out = list(messages)
    if out and out[0].get("role") == "system":
        out[0] = {**out[0], "cache_control": EPHEMERAL}
    for i in range(len(out) - 1, -1, -1):
        msg = out[i]
        if msg.get("role") == "assistant" and any(
            (tc.get("function") or {}).get("name") == "read_section" for tc in msg.get("tool_calls") or ()
        ):
            last = i
            while last + 1 < len(out) and out[last + 1].get("role") == "tool":
                last += 1
            if last > i:
                out[last] = {**out[last], "cache_control": EPHEMERAL}
            break
    return out


# The native client (`native.py`) serves these litellm routes: OpenAI-compatible chat completions that litellm
# sends on unchanged. Model families of OpenAI's own catalogue that litellm transforms (the o-series moves the
# system prompt and renames max_tokens, the GPT-5 family may go to the Responses API, audio/search/realtime
# models take other parameters) stay on litellm; so do bare names (`gpt-4.1`: litellm decides their route).
NATIVE_ROUTES = {"openai/": "openai", "hosted_vllm/": "hosted_vllm"}
# OpenAI catalogue models whose chat request litellm leaves alone, except that it knows they take no reasoning_effort.
OPENAI_PLAIN = re.compile(
    r"(gpt-3\.5-turbo|gpt-4|gpt-4-turbo|gpt-4o|gpt-4o-mini|gpt-4\.1|gpt-4\.1-mini|gpt-4\.1-nano)"
    r"(-\d{4}(-\d{2}-\d{2})?|-\d{4}-preview|-preview|-16k)?"
)
# Every other name from OpenAI's catalogue (litellm's `open_ai_chat_completion_models`); gpt-oss is an open model.
OPENAI_TRANSFORMED = re.compile(
    r"(gpt-(?!oss)|o\d|chatgpt|chat-latest|computer-use|codex|daybreak|ft:|\d+-x-\d+/|"
    r"(high|medium|low|standard|hd)/|omni-|openai/|sora|text-|tts-|whisper|dall-e|"
    r"davinci|babbage)"
)


def native_provider(model: str) -> str | None:
    """The litellm route a model takes if the native client can send its request unchanged, else None."""
    for prefix, provider in NATIVE_ROUTES.items():
        if model.startswith(prefix):
            name = model[len(prefix) :]
            if provider == "openai" and OPENAI_TRANSFORMED.match(name) and not OPENAI_PLAIN.fullmatch(name):
                return None
            return provider
    return None


def native_supported(provider: str, model: str) -> set[str]:
    """What `supported_params` says for a native route, without litellm: every standard parameter, except
    reasoning_effort for OpenAI's own non-reasoning models (litellm forwards it for any model it does not know)."""
    if provider == "openai" and OPENAI_PLAIN.fullmatch(bare_model(model)):
        return set(OPENAI_STANDARD) - {"reasoning_effort"}
    return set(OPENAI_STANDARD)


def wire_body(request: dict[str, Any], messages: list[WireMessage] | None = None) -> dict[str, Any]:
    """The JSON body litellm posts for a native route's acompletion arguments: the bare model name, message
    fields that are null left out (an assistant turn of tool calls only has `content: null`), and the
    `extra_body` fields (top_k) at the top level, as the OpenAI SDK merges them. `messages`: the request's
    messages already so written (`wire_message`, by a `ConvertedOnce`)."""
    body = {k: v for k, v in request.items() if k != "extra_body"}
    body["model"] = request["model"].split("/", 1)[1]
    body["messages"] = messages if messages is not None else [wire_message(m) for m in request["messages"]]
    body.update(request.get("extra_body") or {})
    return body


def wire_message(message: WireMessage) -> WireMessage:
    """A message as the wire carries it: its fields that are null left out."""
    if None not in message.values():
        return message
    return cast(WireMessage, {k: v for k, v in message.items() if v is not None})


class ConvertedOnce:
    """Each message of an episode's history converted once: the whole history is sent again every turn, and a
    message never changes once appended (a summary replaces messages with new ones, converted when first met).
    Holds the messages it converted (so an id is never reused while it is kept), for as long as the episode."""

    def __init__(self, convert: Callable[[WireMessage], WireMessage]):
        self.convert = convert
        self._done: dict[int, tuple[WireMessage, WireMessage]] = {}  # id of a message -> (it, its conversion)

    def __call__(self, messages: list[WireMessage]) -> list[WireMessage]:
        done, out = self._done, []
        for message in messages:
            hit = done.get(id(message))
            if hit is None or hit[0] is not message:
                hit = done[id(message)] = (message, self.convert(message))
            out.append(hit[1])
        return out
