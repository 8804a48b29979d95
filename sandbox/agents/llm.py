"""Any model through litellm, under the AgentHop protocol: native function calling or text tool calls.

litellm is imported on first use, with its offline settings (local cost map, no `.env`
autoload, no banner, quiet logger, no internal retries or resends), so nothing else pays
for its import and the episode loop alone decides what a failure means. A reply is read,
and a failure classified, once for both clients (`replies`): by the HTTP status the server
actually sent (see `wire`) and, when no response came back, by exception type; never by
message text.
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from typing import Any, cast

from sandbox.agents import providers
from sandbox.agents.base import ModelError, NonTransientModelError, ServerUnreachable, arguments_json
from sandbox.agents.continuation import ConversationIds, unique_ids
from sandbox.agents.limits import RateLimiter
from sandbox.agents.litellm_import import litellm_module, without_litellm_logging
from sandbox.agents.native import NativeClient, base_url_for
from sandbox.agents.presets import DEFAULT_MAX_TOKENS, preset_for
from sandbox.agents.replies import (
    EMPTY_USAGE,
    NO_KEY,
    ReplyFunction,
    ReplyMessage,
    classify,
    compact,
    decode_arguments,
    litellm_message,
    litellm_usage,
    lost_response,
    read_usage,
    refused_locally,
    reply_outcome,
    scrub,
)
from sandbox.agents.textcalls import prose, reply_calls
from sandbox.agents.wire import Clients, Wire, recording
from sandbox.pricing import Price, cost, price_for
from sandbox.records import TOOL_NAMES, AssistantTurn, ToolCall, ToolSchema, WireMessage, WireTool
from sandbox.words import merge_reasoning
from storage.json_types import JsonObject

KEY_ENV = {
    "openai/": "OPENAI_API_KEY",
    "anthropic/": "ANTHROPIC_API_KEY",
    "gemini/": "GEMINI_API_KEY",
    "deepseek/": "DEEPSEEK_API_KEY",
    "together_ai/": "TOGETHERAI_API_KEY",
    "xai/": "XAI_API_KEY",
    "openrouter/": "OPENROUTER_API_KEY",
    "gpt-": "OPENAI_API_KEY",
    "o1-": "OPENAI_API_KEY",
    "o3-": "OPENAI_API_KEY",
    "o4-": "OPENAI_API_KEY",
    "claude-": "ANTHROPIC_API_KEY",
    "gemini-": "GEMINI_API_KEY",
    "deepseek-": "DEEPSEEK_API_KEY",
}
# No litellm-side retries (the episode owns the policy), and zero custom prices: we price calls from our own
# table, and litellm's per-call cost lookup otherwise costs about a third of its CPU time per call.
QUIET_CALL = {"num_retries": 0, "max_retries": 0, "input_cost_per_token": 0.0, "output_cost_per_token": 0.0}


class ConfigError(ValueError):
    """An LLM run that cannot start: a missing key, a bad option."""


@dataclass
class LLMConfig:
    """What a run asks of its model. `api_key_env` names a variable; the key itself is never stored."""

    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = None
    reasoning_effort: str | None = None
    text_tools: bool = False
    timeout_s: float = 600.0
    concurrency: int | None = None
    rpm: float | None = None
    client: str = "auto"  # litellm | native | auto (native where the route allows it; see providers.native_provider)
    extra: JsonObject = field(default_factory=dict)  # provider parameters passed through unread

    def sampling(self) -> dict[str, str | int | float]:
        """Preset values for this model, overridden by what the user set."""
        chosen = preset_for(self.model)
        for key in ("temperature", "top_p", "top_k", "max_tokens", "reasoning_effort"):
            value = getattr(self, key)
            if value is not None:
                chosen[key] = value
        chosen.setdefault("max_tokens", DEFAULT_MAX_TOKENS)
        return chosen

    def key_env(self) -> str | None:
        if self.api_key_env:
            return self.api_key_env
        for prefix, var in KEY_ENV.items():
            if self.model.startswith(prefix):
                return var
        return None

    def api_key(self) -> str:
        """The key from the environment; a local server (`--base-url`) may go without one."""
        var = self.key_env()
        key = os.environ.get(var) if var else None
        if key:
            return key
        if self.base_url:
            return NO_KEY
        raise ConfigError(
            f"no API key: set {var or 'the provider key variable'} (or pass --api-key-env VAR, "
            "or --base-url for a local server)"
        )

    def check(self) -> None:
        """Fail before a run starts: a missing key, or settings the provider would refuse on every call."""
        self.api_key()
        Session.open(self)


CLIENTS = ("auto", "native", "litellm")


@dataclass
class Session:
    """What every episode of a run shares about its provider: the route, the request parameters, the client.

    `client` is which one sends the calls: "native" (our pooled httpx client, `native.py`) for the
    OpenAI-compatible routes whose request litellm sends unchanged, "litellm" for every other
    provider. The native route never imports litellm.
    """

    provider: str
    params: dict[str, Any]
    client: str
    clients: Clients | None = None
    native: NativeClient | None = None

    @classmethod
    def open(cls, config: LLMConfig) -> Session:
        native = choose_native(config)
        provider = native or providers.provider_of(config.model, config.base_url)
        sampling = config.sampling()
        supported = (
            providers.native_supported(provider, config.model)
            if native
            else providers.supported_params(config.model, provider)
        )
        try:
            params = providers.request_params(provider, config.model, sampling, supported)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        budget = (params.get("thinking") or {}).get("budget_tokens")
        if budget is not None and budget >= sampling["max_tokens"]:
            raise ConfigError(
                f"the thinking budget ({budget:,} tokens) must be below --max-tokens "
                f"({sampling['max_tokens']:,}); raise --max-tokens or lower --reasoning-effort"
            )
        if native:
            url = base_url_for(native, config.base_url)
            if url is None:
                raise ConfigError(f"no server for '{config.model}': pass --base-url (or set HOSTED_VLLM_API_BASE)")
            return cls(provider, params, "native", native=NativeClient(url, config.api_key(), config.timeout_s))
        return cls(
            provider, params, "litellm", clients=Clients(provider, config.api_key(), config.base_url, config.timeout_s)
        )

    async def aclose(self) -> None:
        if self.native is not None:
            await self.native.aclose()


def choose_native(config: LLMConfig) -> str | None:
    """The native route for this run's model, or None for litellm; `--client native` on a route it cannot
    serve is refused rather than sent differently from what litellm would send."""
    if config.client not in CLIENTS:
        raise ConfigError(f"--client must be one of {', '.join(CLIENTS)} (got {config.client!r})")
    if config.client == "litellm":
        return None
    route = providers.native_provider(config.model)
    if route is None and config.client == "native":
        raise ConfigError(
            f"--client native serves OpenAI-compatible chat models (openai/…, hosted_vllm/…, local/…); "
            f"'{config.model}' goes through litellm: use --client auto or litellm"
        )
    return route


class LLMAgent:
    """One episode's model: sends the conversation, returns the assistant turn."""

    name = "llm"
    yields_in_act = True  # every call awaits a server's reply: the runner need not yield to the event loop per step

    def __init__(self, config: LLMConfig, limiter: RateLimiter, price: Price | None, session: Session | None = None):
        self.config = config
        self.text_tools = config.text_tools
        self.limiter = limiter
        self.price = price
        self.key = config.api_key()
        self.session = session or Session.open(config)
        self.anthropic = self.session.provider == providers.ANTHROPIC
        self._tools: tuple[tuple[ToolSchema, ...], list[WireTool]] | None = None
        # the tools a call written as text may name: the protocol's and those offered (the general-agent setting's)
        self.names: frozenset[str] = frozenset(TOOL_NAMES)
        self._names_of: tuple[ToolSchema, ...] | None = None  # the tools `names` was built from
        self.conversation_ids = ConversationIds()  # the episode's call ids, read as its history grows
        # the history as each client sends it, each message converted once per episode
        self._bare_history = providers.ConvertedOnce(bare_message)
        self._wire_history = providers.ConvertedOnce(providers.wire_message)

    def _tool_list(self, tools: tuple[ToolSchema, ...]) -> list[WireTool]:
        """The tools field, built once per episode (the schemas do not change between turns)."""
        if self._tools is None or self._tools[0] is not tools:
            built: list[WireTool] = [{"type": "function", "function": schema} for schema in tools]
            self._tools = (tools, providers.cached_tools(built) if self.anthropic else built)
        return self._tools[1]

    def request(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> dict[str, Any]:
        """The litellm.acompletion arguments for this turn: the call itself plus how to send it."""
        cfg = self.config
        req: dict[str, Any] = {
            **self.call(messages, tools),
            "api_key": self.key,
            "timeout": cfg.timeout_s,
            **QUIET_CALL,
        }
        if cfg.base_url:
            req["api_base"] = cfg.base_url
        return req

    def call(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> dict[str, Any]:
        """What this turn asks the model, whichever client sends it: model, messages, tools, sampling, extras."""
        cfg = self.config
        req: dict[str, Any] = {"model": cfg.model}
        if self.text_tools:
            req["messages"] = text_history(messages)
        else:  # the tool name is kept on tool messages for text mode only; providers want the bare OpenAI shape
            req["messages"] = self._bare_history(messages)
            req["tools"] = self._tool_list(tools)
        if self.anthropic:
            req["messages"] = providers.cache_marked(req["messages"])
        req.update(self.session.params)
        req.update(cfg.extra)
        return req

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        if self._names_of is not tools:  # the episode's tools, the same tuple every turn
            self._names_of = tools
            self.names = frozenset(TOOL_NAMES) | {t["name"] for t in tools if isinstance(t.get("name"), str)}
        native = self.session.native
        if native is not None:
            return await self._act_native(native, messages, tools)
        litellm = litellm_module()
        req = self.request(messages, tools)
        clients = self.session.clients
        assert clients is not None  # `Session.open` gives every litellm session its clients
        client = clients.client()
        if client is not None:
            req["client"] = client
        async with self.limiter.slot():
            with recording() as wire, without_litellm_logging():
                try:
                    response = await litellm.acompletion(**req)
                except asyncio.CancelledError:
                    raise
                # litellm raises dozens of classes (its own, httpx's, the SDKs'): `failure` classifies each one
                except Exception as exc:  # noqa: BLE001 — every one classified below, none swallowed
                    raise self.failure(exc, wire) from None
        if response is None or not getattr(response, "choices", None):
            what = "no response" if response is None else "a response without choices"
            raise NonTransientModelError(f"the provider returned {what} (HTTP {wire.status})")
        try:
            return unique_ids(self.parse(response), messages, held=self.conversation_ids)
        except ModelError:
            raise
        # a response we cannot read, however the reading fails, is the provider's fault, not a turn
        except Exception as exc:  # noqa: BLE001 — a model error naming the exception, none swallowed
            raise NonTransientModelError(scrub(f"unreadable response: {type(exc).__name__}: {exc}", self.key)) from None

    async def _act_native(
        self, native: NativeClient, messages: list[WireMessage], tools: tuple[ToolSchema, ...]
    ) -> AssistantTurn:
        """The same call through the native client: the same body, read and classified by the same functions."""
        request = self.call(messages, tools)
        # the bare history is made of the same message objects turn after turn; a text-mode history is rebuilt
        # from new ones every call, which a memo would only hold on to
        sent = None if self.text_tools else self._wire_history(request["messages"])
        body = providers.wire_body(request, sent)
        async with self.limiter.slot():
            try:
                reply = await native.post(body)
            except asyncio.CancelledError:
                raise
            # any transport failure (httpx's, h2's, the OS's) is classified by `failure`
            except Exception as exc:  # noqa: BLE001 — every one classified below, none swallowed
                raise self.failure(exc, None) from None
        outcome = reply_outcome(reply.status, reply.retry_after, reply.body, self.key)
        if isinstance(outcome, ModelError):
            raise outcome
        try:
            choice = outcome["choices"][0]
            turn = self.turn(choice["message"], outcome.get("usage"), choice.get("finish_reason"))
            return unique_ids(turn, messages, held=self.conversation_ids)
        except ModelError:
            raise
        # a reply we cannot read, however the reading fails, is the provider's fault, not a turn
        except Exception as exc:  # noqa: BLE001 — a model error naming the exception, none swallowed
            raise NonTransientModelError(scrub(f"unreadable response: {type(exc).__name__}: {exc}", self.key)) from None

    def failure(self, exc: Exception, wire: Wire | None) -> ModelError:
        """A call that raised: by what the server sent if anything came back, else by the kind of transport
        failure; the same words from either client (the exception's own text differs between them). A refused
        connection to this machine is `ServerUnreachable` (nothing listens there: not retried), naming the
        address and, for a local model, its server's log."""
        if (
            wire is not None
            and wire.status is not None
            and wire.body is not None
            and (wire.status >= 400 or self.session.provider in providers.CHAT_COMPLETIONS)
        ):
            outcome = reply_outcome(wire.status, wire.retry_after, wire.body, self.key)
            if isinstance(outcome, ModelError):
                return outcome
        if wire is None or wire.status is None:
            address = self.session.native.base_url if self.session.native is not None else self.config.base_url
            if refused_locally(exc, address):
                from sandbox.agents.local_model import server_note

                return ServerUnreachable(
                    f"nothing is listening at {address} (connection refused){server_note(address)}"
                )
            lost = lost_response(exc, self.config.timeout_s)
            if lost is not None:
                return lost
        return classify(exc, self.key, wire)

    def parse(self, response: Any) -> AssistantTurn:
        """A litellm response, read as the native client reads the server's JSON."""
        choice = response.choices[0]
        return self.turn(
            litellm_message(choice.message), litellm_usage(response), getattr(choice, "finish_reason", None)
        )

    def turn(self, msg: ReplyMessage, usage: JsonObject | None, finish_reason: str | None = None) -> AssistantTurn:
        """Text, tool calls (native, else parsed from the text), usage and cost of one OpenAI-shaped message.

        `raw`, the message the history sends back, shows each call once, in the client's own form:
        in text-tool mode the text (native calls written into it as `<tool_call>` blocks), in native
        mode the structured calls, with the text they were parsed from (and a call cut off mid-way)
        taken out of the prose. `text` keeps the reply verbatim for the stepper either way. A reply
        cut off by the completion limit (`finish_reason` "length") inside a call keeps that fragment
        as `cut_off`: the episode shows and counts it instead of dropping it silently.
        """
        content = msg.get("content") if isinstance(msg.get("content"), str) else None
        reasoning = reasoning_of(msg)
        read = reply_calls(content, structured_calls(msg), finish_reason, self.names)
        calls = read.calls
        usage_read = read_usage(compact(usage) if usage is not None else EMPTY_USAGE)
        priced = cost(self.price, usage_read)
        if self.text_tools:
            written = read.native and not read.in_text  # calls that came only as tool_calls: written into the text
            raw: WireMessage = {"role": "assistant", "content": with_tagged_calls(content, calls if written else [])}
        else:
            raw = native_history(msg, content, calls, read.spans, reasoning)
        return AssistantTurn(
            text=merge_reasoning(content, reasoning),
            tool_calls=calls,
            usage=usage_read,
            raw=raw,
            cost_usd=priced["total_usd"] if priced else None,
            reasoning=reasoning,
            finish_reason=finish_reason if isinstance(finish_reason, str) else None,
            cut_off=read.cut_off,
        )


def reasoning_of(msg: ReplyMessage) -> str | None:
    """The reply's reasoning text, under whichever name the server gives it."""
    reasoning = msg.get("reasoning_content") or msg.get("reasoning") or None
    return reasoning if isinstance(reasoning, str) else None


def structured_calls(msg: ReplyMessage) -> list[ToolCall]:
    """The message's native `tool_calls`, arguments decoded (a call without an id is numbered)."""
    calls = []
    for i, tc in enumerate(msg.get("tool_calls") or []):
        fn: ReplyFunction = tc.get("function") or {}
        calls.append(ToolCall(tc.get("id") or f"call_{i}", fn.get("name") or "", decode_arguments(fn.get("arguments"))))
    return calls


def native_history(
    msg: ReplyMessage,
    content: str | None,
    calls: list[ToolCall],
    spans: list[tuple[int, int]],
    reasoning: str | None,
) -> WireMessage:
    """The assistant message a native-mode history sends back: the prose without the call text in `spans`, the
    calls as structured `tool_calls`, and the thinking the provider needs replayed."""
    raw: WireMessage = {"role": "assistant", "content": content}
    if content and spans:
        kept = prose(content, spans)
        raw["content"] = kept or None  # nothing but calls (or a cut-off one): no prose to send
    if calls:
        raw["tool_calls"] = [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_json(c.args)}}
            for c in calls
        ]
    elif raw["content"] is None:  # a lone call cut off mid-way: an assistant message needs some content
        raw["content"] = ""
    thinking = msg.get("thinking_blocks")
    if thinking:  # Anthropic: signed thinking blocks must be replayed with a tool_use when thinking is on
        raw["thinking_blocks"] = thinking
    elif reasoning:
        raw["reasoning_content"] = reasoning
    return raw


def with_tagged_calls(content: str | None, calls: list[ToolCall]) -> str:
    """Text-tool history for a reply whose calls came as structured `tool_calls` (a server that parses them out
    of the text): the calls written back as the `<tool_call>` blocks the prompt asks for, so the model sees
    each call it made once, as text, beside the results that answer it."""
    blocks = [
        f'<tool_call>{{"name": {json.dumps(c.name)}, "arguments": {arguments_json(c.args)}}}</tool_call>' for c in calls
    ]
    return "\n".join([content, *blocks] if content else blocks)


def bare_message(message: WireMessage) -> WireMessage:
    """A message in the bare OpenAI shape: a tool result without the tool's name (which text mode keeps)."""
    if message.get("role") != "tool":
        return message
    return cast(WireMessage, {k: v for k, v in message.items() if k != "name"})


def text_history(messages: list[WireMessage]) -> list[WireMessage]:
    """Text-tools history: assistant text only; each turn's results as one user message of tagged blocks."""
    out: list[WireMessage] = []
    pending: list[str] = []
    for msg in messages:
        if msg.get("role") == "tool":
            pending.append(f'<tool_result name="{msg.get("name", "")}">\n{msg.get("content", "")}\n</tool_result>')
            continue
        if pending:
            out.append({"role": "user", "content": "\n\n".join(pending)})
            pending = []
        if msg.get("role") == "assistant":
            out.append({"role": "assistant", "content": msg.get("content") or ""})
        else:
            out.append(msg)
    if pending:
        out.append({"role": "user", "content": "\n\n".join(pending)})
    return out


def config_from_options(options: dict[str, Any]) -> LLMConfig:
    known = {k: v for k, v in options.items() if k in LLMConfig.__dataclass_fields__}
    return LLMConfig(**known)


class LLMFactory:
    """The agents of one run: one session (route, client, connection pool), limiter and price shared by all."""

    def __init__(self, config: LLMConfig, session: Session, limiter: RateLimiter, price: Price | None):
        self.config, self.session, self.limiter, self.price = config, session, limiter, price

    @property
    def client(self) -> str:
        """Which client sends this run's calls ("native" or "litellm"), as the run records it."""
        return self.session.client

    def __call__(self, item: Any, replicate: int, attempt: int) -> LLMAgent:
        return LLMAgent(self.config, self.limiter, self.price, self.session)

    async def aclose(self) -> None:
        await self.session.aclose()


def llm_factory(spec: Any) -> LLMFactory:
    """An agent factory for a run: one limiter and one price shared by all its episodes."""
    from sandbox.agents.local_model import resolve

    check_cost_limit(
        spec.model, spec.agent_options, spec.max_run_cost
    )  # fail before the run (or a local server) starts
    model, options = resolve(spec.model, spec.agent_options)
    config = config_from_options({"model": model, **options})
    config.api_key()
    session = Session.open(config)
    limiter = RateLimiter(config.concurrency, config.rpm)
    price = price_for(config.model, spec.agent_options.get("pricing"))
    return LLMFactory(config, session, limiter, price)


def check_cost_limit(model: str, agent_options: dict[str, Any], max_run_cost: float) -> None:
    """A dollar limit on a model without prices would never stop anything: refuse it rather than pretend."""
    from sandbox.agents.local_model import litellm_name

    if max_run_cost and price_for(litellm_name(model), agent_options.get("pricing")) is None:
        raise ConfigError(
            f"--max-run-cost needs prices, and there are none for '{model}': add a [[pricing]] entry "
            "for it to the config file, or use --max-run-tokens"
        )
