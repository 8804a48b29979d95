"""One agent on one item under one set of caps: the reference harness's loop (docs/protocol.md#rules), for every agent.

Each event becomes a `Step` handed to `on_step` as it happens (the runner commits it);
the episode ends with a `Trajectory`. Nothing raises out of `run` for a model's or an
agent's misbehaviour: every ending is one of the five terminations.
"""

from __future__ import annotations

import asyncio
import re
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypedDict

from sandbox.agents.base import (
    STOP_TEXT,
    SUMMARIZE_TEXT,
    Agent,
    InfrastructureError,
    ModelError,
    NonTransientModelError,
    RefusedRequest,
    TransientModelError,
    arguments_json,
)
from sandbox.agents.continuation import ConversationIds, unique_ids
from sandbox.corpus import ItemView
from sandbox.ledger import Ledger
from sandbox.prompts import DEFAULT_PROMPTS, Prompt
from sandbox.recall import delivered_read, paper_flags, section_flags
from sandbox.records import (
    AssistantTurn,
    Caps,
    ErrorKind,
    Step,
    StepUsage,
    Termination,
    ToolCall,
    Trajectory,
    WireMessage,
)
from sandbox.strategies import VERIFIER_ERROR, Strategy, VerifierFailed
from sandbox.tools import run_tool
from sandbox.words import reasoning_span
from storage.errors import StoreError
from storage.json_types import JsonValue

_ANSWER = re.compile(r"^\s*\(?([A-Da-d])\)?[.:)]?\s*$")
_TOOL_ERROR_PREFIXES = ("Unknown tool", "Error calling", "Tool '")


def parse_answer(answer: Any) -> int:
    """The reference's letter parser: `A`, `(a)`, `B.`, `C:`, `D)` → 0..3; anything else → -1."""
    if not isinstance(answer, str):
        return -1
    m = _ANSWER.match(answer)
    return "ABCD".index(m.group(1).upper()) if m else -1


def chosen_type(item, predicted: int) -> str:
    """What the chosen option was: `correct`, a distractor type, `no_answer` or `unknown` (docs/metrics.md)."""
    if predicted < 0:
        return "no_answer"
    if predicted == item.correct_index:
        return "correct"
    types = item.distractor_types
    if not types or predicted >= len(types) or types[predicted] == "correct":
        return "unknown"
    return types[predicted]


class CallFields(TypedDict):
    """What every step of one tool call records of the call: its tool, its arguments as the model wrote them
    (`{"_raw": text}` when they were not JSON) and its id."""

    tool_name: str
    tool_args: JsonValue
    tool_call_id: str


@dataclass(frozen=True)
class RetryPolicy:
    """Backoff for model-call failures. The reference sleeps 30–120 s; tests pass small values."""

    max_transient: int = 10
    transient_base_s: float = 2.0
    transient_cap_s: float = 60.0
    max_consecutive_errors: int = 5
    error_base_s: float = 2.0
    error_cap_s: float = 15.0

    retry_after_cap_s: float = 600.0

    def transient_delay(self, k: int, retry_after: float | None) -> float:
        """The server's Retry-After when it gave one (capped), else capped exponential backoff."""
        if retry_after is not None and retry_after >= 0:
            return min(retry_after, self.retry_after_cap_s)
        return min(self.transient_base_s * 2 ** min(k - 1, 10), self.transient_cap_s)

    def error_delay(self, consecutive: int) -> float:
        return min(self.error_base_s * 2 ** (consecutive - 1), self.error_cap_s)


StepSink = Callable[[Step], Awaitable[None] | None]


class Episode:
    """Runs `agent` on the item behind `view`; see the module docstring."""

    def __init__(
        self,
        view: ItemView,
        agent: Agent,
        caps: Caps,
        prompt: Prompt,
        on_step: StepSink | None = None,
        retry: RetryPolicy = RetryPolicy(),
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        context_budget: int | None = None,
        before_call: Callable[[], Awaitable[None]] | None = None,
        strategy: Strategy | None = None,
        extra_tools: Any = None,
    ):
        self.view = view
        self.item = view.item
        self.agent = agent
        self.caps = caps
        self.prompt = prompt
        self.texts = prompt.texts or DEFAULT_PROMPTS  # the nudges, instructions and footer in force (--prompts)
        self.on_step = on_step
        self.before_call = before_call  # the runner commits the steps so far here: one write per turn, not per step
        self.retry = retry
        self.sleep = sleep
        self.ledger = Ledger(caps)
        self.tokens_measured = getattr(agent, "tokens_measured", True)  # the footer's count, or "not measured"
        self.extra_tools = extra_tools  # the general-agent setting's out-of-domain tools (sandbox.extra_tools)
        self.messages: list[WireMessage] = [
            {"role": "system", "content": prompt.system},
            {"role": "user", "content": prompt.first_message},
        ]
        self.steps: list[Step] = []
        self.reads: list[tuple[str, int]] = []
        self._hops: dict[str, int] | None = None  # hop distance from the seed of each paper it reaches (`_hop`)
        self.answer: Any = None
        self.reasoning: str | None = None
        self.submitted = False
        self.tool_calls = self.turns_with_calls = self.tool_errors = 0
        self.api_errors = self.transient_retries = 0
        self.cut_off_turns = self.lost_calls = 0
        self.cost_usd: float | None = None
        self.error: str | None = None
        self.error_kind: ErrorKind | None = None
        self.context_budget = context_budget  # sequential scaling on the token axis (EXTEND / STOP)
        self.context_tokens = 0
        self.continues = 0
        self.stopping = False
        self.stop_sent = False
        # a sequential strategy chosen (`sandbox.strategies`): None keeps the original rule
        # (EXTEND on the token axis only)
        self.strategy = strategy
        self.summary_pending = False  # the agent was asked to summarize: its next turn is the summary
        self.worked_since_extend = True  # a tool call other than submit since the last extension
        self.summaries = self.verifier_errors = 0
        # every call id of the episode so far: ids stay unique within the trajectory even after a summary replaced
        # the history the agent's own renaming looks at (issue 22's rule meeting issue 23's summarize strategy)
        self.call_ids: set[str] = set()
        self.conversation_ids = ConversationIds()  # the call ids its messages hold, read as they grow
        self._t0 = time.monotonic()

    # ------------------------------------------------------------ events

    async def _emit(self, kind: str, **fields: Any) -> Step:
        step = Step(
            index=len(self.steps),
            turn=self.ledger.turn_index + 1,
            kind=kind,
            ledger=self.ledger.state(),
            elapsed_s=round(time.monotonic() - self._t0, 4),
            **fields,
        )
        self.steps.append(step)
        if self.on_step is not None:
            result = self.on_step(step)
            if result is not None:  # an async sink's awaitable (a plain function's None is not awaited)
                await result
        return step

    # ------------------------------------------------------------ loop

    async def run(self) -> Trajectory:
        """Play the episode to one of the five terminations."""
        stop_text = STOP_TEXT.set(self.texts.stop)  # a scripted agent reads it (`answer_now`, `summary_requested`)
        summarize_text = SUMMARIZE_TEXT.set(self.texts.summarize)
        try:
            termination = await self._loop()
        except (asyncio.CancelledError, StoreError):  # the store failing (a full disk) is the run's, not the episode's
            raise
        # our bug or an agent's: the traceback is emitted, the episode ends as error, the run goes on
        except Exception as exc:  # noqa: BLE001 — recorded with its traceback
            self.error = f"{type(exc).__name__}: {exc}"
            self.error_kind = "exception"
            await self._emit("error", text=traceback.format_exc(limit=8))
            termination = "error"
        finally:
            STOP_TEXT.reset(stop_text)
            SUMMARIZE_TEXT.reset(summarize_text)
        return self._trajectory(termination)

    async def _loop(self) -> Termination:
        consecutive_errors = 0
        while self.ledger.turn_index < self.caps.max_turns:
            try:
                turn = await self._call_model()
            except InfrastructureError as exc:
                self.error, self.error_kind = str(exc), exc.kind  # infra, or unreachable (the runner stops the run)
                await self._emit("error", text=f"Infrastructure error: {exc}")
                return "error"
            except RefusedRequest as exc:  # the same request would be refused again: not re-sent, the episode ends
                self.api_errors += 1
                turn_no = self.ledger.turn_index + 1
                self.error = f"context window full at turn {turn_no}: {exc}" if exc.overflow else str(exc)
                self.error_kind = exc.kind
                await self._emit(
                    "error", text=f"API error: {self.error} (not sent again: the same request would be refused again)"
                )
                return "error"
            except NonTransientModelError as exc:
                self.api_errors += 1
                consecutive_errors += 1
                await self._emit("error", text=f"API error: {exc}")
                if consecutive_errors >= self.retry.max_consecutive_errors:
                    self.error, self.error_kind = str(exc), "api_errors"
                    return "error"
                self.ledger.turn_index += 1
                await self.sleep(self.retry.error_delay(consecutive_errors))
                continue
            except _TransientExhausted as exc:
                self.error, self.error_kind = str(exc), "transient_exhausted"
                await self._emit("error", text=str(exc))
                return "error"
            consecutive_errors = 0
            turn = unique_ids(turn, self.messages, self.call_ids, held=self.conversation_ids)
            self.call_ids.update(c.id for c in turn.tool_calls)
            ending = await self._take_turn(turn)
            if ending:
                return ending
            self.ledger.turn_index += 1
        if consecutive_errors:  # the cap ended it, but its last turns failed: the trajectory says so (its error
            # steps show them; no step is added, so a replayed reference log keeps its turn count)
            last = next(s.text for s in reversed(self.steps) if s.kind == "error")
            self.error = f"the turn cap came after {consecutive_errors} failed model calls in a row; the last: {last}"
            self.error_kind = "api_errors_at_cap"
        return "max_turns"

    async def _call_model(self) -> AssistantTurn:
        k = 0
        while True:
            if self.before_call is not None:
                await self.before_call()
            try:
                return await self.agent.act(self.messages, self.prompt.tools)
            except TransientModelError as exc:
                k += 1
                self.transient_retries += 1
                if k > self.retry.max_transient:
                    raise _TransientExhausted(f"Abandoned after {k} transient retries: {exc}") from exc
                delay = self.retry.transient_delay(k, exc.retry_after)
                await self._emit(
                    "retry", text=f"Transient error (retry {k} of {self.retry.max_transient} in {delay:.1f}s): {exc}"
                )
                await self.sleep(delay)
            except ModelError:
                raise
            except Exception as exc:
                raise NonTransientModelError(f"{type(exc).__name__}: {exc}") from exc

    async def _take_turn(self, turn: AssistantTurn) -> Termination | None:
        """Apply one model turn; the termination if it ends the episode."""
        crossed = self._count_usage(turn)
        usage: StepUsage = {
            "prompt": turn.usage.prompt,
            "completion": turn.usage.completion,
            "cache_read": turn.usage.cache_read,
            "cache_creation": turn.usage.cache_creation,
            "raw": turn.usage.raw,
        }
        if crossed:
            await self._emit(
                "harness",
                usage=usage,
                cost_usd=turn.cost_usd,
                text=(
                    f"[HARNESS] Token limit reached ({self.ledger.tokens:,} > {self.caps.max_tokens_total:,})."
                    " Forcing termination."
                ),
            )
            return "token_limit"
        if self.summary_pending:
            await self._replace_history(turn, usage)
            return None
        calls = turn.tool_calls
        if turn.finish_reason == "length":
            self.cut_off_turns += 1
        if not calls and not turn.text and not turn.cut_off:  # the reference tests `not text`: whitespace is text
            # and gets the nudge; as there, the turn is logged as the harness's note in place of the empty reply
            self.error, self.error_kind = "empty response", "empty_response"
            keys = sorted(turn.raw) if isinstance(turn.raw, dict) else []
            await self._emit(
                "harness",
                usage=usage,
                cost_usd=turn.cost_usd,
                text=f"[HARNESS] Empty response — terminated as error. Raw dump keys: {keys}",
                finish_reason=turn.finish_reason,  # what the server said ("stop"), kept as for any reply
            )
            return "error"
        await self._emit(
            "assistant",
            text=turn.text,
            usage=usage,
            cost_usd=turn.cost_usd,
            reasoning_chars=reasoning_span(turn.text, turn.reasoning),
            finish_reason=turn.finish_reason,
            tool_args=[{"id": c.id, "name": c.name, "args": c.args} for c in calls] or None,
        )
        if turn.cut_off:  # the completion limit ended the reply inside a call: it is not run, but shown and counted
            self.lost_calls += 1
            await self._emit("cutoff", text=f"cut off mid-call: {turn.cut_off}")
        if not calls:
            return await self._prose_reply(turn)
        return await self._run_calls(turn, calls)

    def _count_usage(self, turn: AssistantTurn) -> bool:
        """Add the turn's cost and tokens to the episode's; whether the token cap is crossed. Over the context
        budget the episode is stopping."""
        if turn.cost_usd is not None:
            self.cost_usd = (self.cost_usd or 0.0) + turn.cost_usd
        crossed = self.ledger.add_usage(turn.usage)
        self.context_tokens = turn.usage.prompt + turn.usage.cache_read + turn.usage.cache_creation
        if self.context_budget is not None and self.context_tokens > self.context_budget:
            self.stopping = True
        return crossed

    async def _prose_reply(self, turn: AssistantTurn) -> Termination | None:
        """A reply without a call: nudged to use the tools (or told to answer now, over the context budget)."""
        if self.stop_sent:
            return "token_limit"  # the forced final call answered in prose, which is never accepted
        self.messages.append(turn.raw or {"role": "assistant", "content": turn.text})
        if self.stopping:  # over the context budget: STOP, with or without tool calls (docs/scaling.md)
            await self._stop()
            return None
        nudge = self.texts.nudge + self._footer()
        self.messages.append({"role": "user", "content": nudge})
        await self._emit("nudge", text=nudge)
        return None

    async def _run_calls(self, turn: AssistantTurn, calls: list[ToolCall]) -> Termination | None:
        """Run the turn's calls in order and give the agent their results; the termination if one ends it."""
        self.turns_with_calls += 1
        results = [await self._execute(call) for call in calls]
        footer = self._footer()
        if self.submitted:
            return "answer"
        self.messages.append(turn.raw or _assistant_message(turn))
        for call, text in zip(calls, results, strict=True):
            self.messages.append({"role": "tool", "tool_call_id": call.id, "name": call.name, "content": text + footer})
        if self.ledger.double_rejected:
            return "budget"
        if self.stopping:
            if self.stop_sent:
                return "token_limit"  # the forced final call did not submit
            await self._stop()
        elif self.ledger.exhausted:
            self.messages.append({"role": "user", "content": self.texts.exhausted_nudge})
            await self._emit("nudge", text=self.texts.exhausted_nudge)
        return None

    def _footer(self) -> str:
        """The status line as the prompt set words it, from the ledger as it stands."""
        return self.texts.footer(self.ledger.state(), self.tokens_measured)

    async def _stop(self) -> None:
        """Tell the agent to answer now; its next turn is the last (docs/scaling.md#sequential-scaling)."""
        self.stop_sent = True
        self.messages.append({"role": "user", "content": self.texts.stop})
        await self._emit("nudge", text=self.texts.stop)

    async def _execute(self, call: ToolCall) -> str:
        """One call against the running budget; returns the text the agent sees (before the footer)."""
        self.tool_calls += 1
        decision = self.ledger.decide(call.name)
        fields: CallFields = {"tool_name": call.name, "tool_args": call.args, "tool_call_id": call.id}
        if decision.verdict != "execute":
            await self._emit("tool", text=decision.message, status=decision.verdict, cost=0, **fields)
            return decision.message or ""
        if self.extra_tools is not None and isinstance(call.name, str) and call.name in self.extra_tools.names:
            outcome = await self.extra_tools.call(call.name, call.args)
        else:
            outcome = run_tool(self.view, call.name, call.args)
        if outcome.text.startswith(_TOOL_ERROR_PREFIXES):
            self.tool_errors += 1
        if call.name == "submit_answer" and self._extend():
            self.continues += 1
            self.worked_since_extend = False
            message = await self._extension(call)
            await self._emit("tool", text=message, status="extended", cost=0, **fields)
            return message
        if call.name != "submit_answer":
            self.worked_since_extend = True
        if call.name == "submit_answer":
            args = call.args if isinstance(call.args, dict) else {}
            self.answer = args.get("answer", "")
            reasoning = args.get("reasoning", "")
            self.reasoning = reasoning if isinstance(reasoning, str) else str(reasoning)
            self.submitted = True
        read = delivered_read(outcome.delivered, outcome.arxiv_id, outcome.section_index)
        hop = None
        if read is not None:
            self.reads.append(read)
            hop = self._hop(outcome.paper_id)
        await self._emit(
            "tool",
            text=outcome.text,
            status=outcome.status,
            cost=decision.cost,
            paper_id=outcome.paper_id,
            arxiv_id=outcome.arxiv_id,
            section_index=outcome.section_index,
            delivered=outcome.delivered,
            hop=hop,
            **fields,
        )
        return outcome.text

    def _hop(self, paper_id: str | None) -> int | None:
        """Citation hops from the item's seed to the paper read (None: no citation path reaches it), over the
        item's own graph by the rule of the dataset's depth check (`sandbox.citations`). The distances are found
        once per episode, at its first read: an episode that reads nothing never builds the graph."""
        if self._hops is None:
            from sandbox.citations import item_hops

            self._hops = item_hops(self.view.edges, self.view.nodes, self.item.seed_paper_id)
        return self._hops.get(paper_id) if paper_id is not None else None

    def _extend(self) -> bool:
        """On the token axis, a submit below the context budget is answered with the continue instruction (or the
        chosen strategy's message); with a strategy chosen, on the points and turns axes too, while the agent keeps
        working between extensions (`sandbox.strategies`).

        Only while the agent can still act: at least one point and two turns left (one to work, one to
        answer; a summary takes a third), so EXTEND never turns an answer into a non-submission by another cap.
        """
        turns_needed = 3 if self.strategy is not None and self.strategy.name == "summarize" else 2
        room = self.ledger.points_left >= 1 and self.ledger.turn_index + turns_needed < self.caps.max_turns
        if self.context_budget is not None:
            return not self.stopping and room
        return self.strategy is not None and room and self.worked_since_extend

    async def _extension(self, call: ToolCall) -> str:
        """The message a refused submit is answered with, by the strategy."""
        strategy = self.strategy
        name = strategy.name if strategy is not None else "continue"
        if name == "summarize":
            self.summary_pending = True
            return self.texts.summarize
        if strategy is not None and name == "verifier":
            try:
                found = await strategy.assess(self.item, self.steps, call.args)
            except VerifierFailed as exc:
                self.verifier_errors += 1
                await self._emit(
                    "error",
                    text=f"{VERIFIER_ERROR}({strategy.verifier.name}): {exc}; "
                    "this extension gets the continue instruction",
                )
                return self.texts.continue_
            usage: StepUsage = {
                "prompt": found.prompt_tokens,
                "completion": found.completion_tokens,
                "cache_read": found.cache_read_tokens,
                "cache_creation": found.cache_creation_tokens,
                "raw": {"verifier": strategy.verifier.name},
            }
            await self._emit("verifier", text=found.text, usage=usage, cost_usd=found.cost_usd)
            return f"{self.texts.revision_head}\n{found.text}\n\n{self.texts.revision_tail}"
        return self.texts.continue_

    async def _replace_history(self, turn: AssistantTurn, usage: StepUsage) -> None:
        """The summary turn: stored (its calls recorded, not run), then the conversation is replaced by the system
        prompt, the task and the summary; a budget crossed by the summary call is told to answer now."""
        self.summary_pending = False
        self.summaries += 1
        if turn.finish_reason == "length":  # a reply like any: the completion limit cutting it off is counted
            self.cut_off_turns += 1
        summary = (turn.text or "").strip() or "(no summary was written)"
        await self._emit(
            "summary",
            text=turn.text,
            usage=usage,
            cost_usd=turn.cost_usd,
            reasoning_chars=reasoning_span(turn.text, turn.reasoning),
            finish_reason=turn.finish_reason,
            tool_args=[{"id": c.id, "name": c.name, "args": c.args} for c in turn.tool_calls] or None,
        )
        dropped = len(self.messages) - 2
        content = f"{self.texts.summary_head}\n{summary}\n\n{self.texts.continue_}"
        self.messages[2:] = [{"role": "user", "content": content + self._footer()}]
        await self._emit(
            "history",
            text=f"[HARNESS] History replaced by the summary: {dropped} messages dropped; "
            "the agent now sees the system prompt, the task and the summary.",
        )
        if self.stopping:
            await self._stop()

    def _trajectory(self, termination: Termination) -> Trajectory:
        predicted = parse_answer(self.answer) if termination == "answer" else -1
        paper_all, paper_any = paper_flags(self.item, self.reads)
        sec_all, sec_any, sec_loose = section_flags(self.item, self.reads)
        ledger = self.ledger
        answer = self.answer if isinstance(self.answer, str) or self.answer is None else str(self.answer)
        return Trajectory(
            item_id=self.item.id,
            termination=termination,
            answer=answer,
            predicted_index=predicted,
            correct=predicted == self.item.correct_index,
            reasoning=self.reasoning,
            turns=min(ledger.turn_index + 1, self.caps.max_turns) if self.steps else 0,
            model_calls=ledger.model_calls,
            points_used=ledger.points_used,
            tokens=ledger.tokens,
            prompt_tokens=ledger.prompt,
            completion_tokens=ledger.completion,
            cache_read_tokens=ledger.cache_read,
            cache_creation_tokens=ledger.cache_creation,
            tool_calls=self.tool_calls,
            turns_with_calls=self.turns_with_calls,
            tool_errors=self.tool_errors,
            api_errors=self.api_errors,
            transient_retries=self.transient_retries,
            paper_recall=paper_all,
            paper_recall_any=paper_any,
            section_recall=sec_all,
            section_recall_any=sec_any,
            section_recall_loose=sec_loose,
            reads=list(self.reads),
            cost_usd=self.cost_usd,
            wall_time_s=round(time.monotonic() - self._t0, 4),
            error=self.error,
            error_kind=self.error_kind,
            chosen_type=chosen_type(self.item, predicted),
            continues=self.continues,
            cut_off_turns=self.cut_off_turns,
            lost_calls=self.lost_calls,
        )


class _TransientExhausted(Exception):
    """More than `max_transient` transient failures in one turn."""


def _assistant_message(turn: AssistantTurn) -> WireMessage:
    return {
        "role": "assistant",
        "content": turn.text,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_json(c.args)}}
            for c in turn.tool_calls
        ],
    }
