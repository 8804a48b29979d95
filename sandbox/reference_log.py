"""The reference harness's per-sample trajectory file (docs/protocol.md#parity): parsing, its 500-character
log truncation, and checking a replay of it against what it logged.

Results produced by the authors' harness come in by replay (docs/protocol.md#parity): our sandbox re-executes
the logged calls, which restores the full tool outputs the reference cut to 500 characters. The
check here says whether our outputs agree with the logged prefixes, and whether termination,
answer and points agree; disagreement is reported, never fatal, because it is exactly what a
user importing results needs to see.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Required, TypedDict

from sandbox.records import ToolCall
from storage.json_types import JsonObject, JsonValue

LOG_LIMIT = 500
ELLIPSIS = "..."
TOKEN_LIMIT_PREFIX = "[HARNESS] Token limit reached"
EMPTY_RESPONSE_PREFIX = "[HARNESS] Empty response"
ABANDONED_PREFIX = "Abandoned after "
DISABLED_MARK = "REJECTED: Tool '"
_TOKEN_LIMIT = re.compile(r"Token limit reached \(([\d,]+) > ([\d,]+)\)")
MAX_EXAMPLES = 3
HEAD = 120  # characters of each side shown in a mismatch example


class ReferenceLogError(ValueError):
    """A trajectory file that is not in the reference's format (what is wrong, without the path)."""


def truncate(text: str) -> str:
    """The reference's logging of a tool output: the first 500 characters plus "..." when longer."""
    return text if len(text) <= LOG_LIMIT else text[:LOG_LIMIT] + ELLIPSIS


def output_matches(ours: str, logged: str) -> bool:
    """Whether our full output is what the reference logged: equal, or (for a truncated log) our text
    is longer than 500 characters and starts with the logged text minus its trailing "..."."""
    if ours == logged:
        return True
    if len(logged) == LOG_LIMIT + len(ELLIPSIS) and logged.endswith(ELLIPSIS):
        return len(ours) > LOG_LIMIT and ours.startswith(logged[:LOG_LIMIT])
    return False


# ---------------------------------------------------------------- parsed records


@dataclass(frozen=True)
class LoggedResult:
    """One `tool_results` entry: the output is truncated as logged; cost is what was charged."""

    name: str
    args: Any
    output: str
    cost: int


@dataclass(frozen=True)
class LoggedTurn:
    """One `turns` record: an assistant turn, an error record, or a harness note."""

    turn: int
    role: str
    content: str | None
    tool_calls: tuple[ToolCall, ...]
    results: tuple[LoggedResult, ...]
    prompt_tokens: int
    completion_tokens: int

    @property
    def kind(self) -> str:
        """`assistant`, `error`, `abandoned` (transient retries exhausted), `token_limit` or `empty`."""
        text = self.content or ""
        if self.role == "error":
            return "abandoned" if text.startswith(ABANDONED_PREFIX) else "error"
        if text.startswith(TOKEN_LIMIT_PREFIX):
            return "token_limit"
        if text.startswith(EMPTY_RESPONSE_PREFIX) and not self.tool_calls:
            return "empty"
        return "assistant"

    def token_limit_numbers(self) -> tuple[int, int] | None:
        """(cumulative, cap) from a token-limit note, when the text carries them."""
        m = _TOKEN_LIMIT.search(self.content or "")
        return (int(m.group(1).replace(",", "")), int(m.group(2).replace(",", ""))) if m else None


@dataclass(frozen=True)
class ReferenceLog:
    """One reference trajectory file, typed. Optional top-level keys are None when absent."""

    sample_id: str
    model: str | None
    turns: tuple[LoggedTurn, ...]
    terminated_by: str | None
    predicted_answer: Any
    predicted_index: int | None
    is_correct: bool | None
    correct_index: int | None
    budget_total: int | None
    budget_used: int | None
    total_turns: int | None
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    wall_time_s: float | None
    tool_errors: int | None
    api_error_count: int
    transient_retry_count: int
    retry_count: int
    question_type: str | None = None  # copied from the sample by the reference (§4): checks the dataset
    depth: int | None = None

    @property
    def results(self) -> list[LoggedResult]:
        """Every logged tool result, in order."""
        return [r for t in self.turns for r in t.results]

    @property
    def disabled_tools(self) -> set[str]:
        """Tools the run had disabled, recognised by the reference's disabled-tool rejection text."""
        return {r.name for r in self.results if r.output.startswith(DISABLED_MARK) and "is disabled" in r.output}

    @classmethod
    def from_json(cls, obj: Any) -> ReferenceLog:
        """Parse a decoded trajectory file; raises ReferenceLogError naming the offending key."""
        if not isinstance(obj, dict):
            raise ReferenceLogError(f"must be a JSON object, got {type(obj).__name__}")
        sample_id = obj.get("sample_id")
        if not isinstance(sample_id, str) or not sample_id:
            raise ReferenceLogError("'sample_id' is missing or not a string")
        turns = obj.get("turns")
        if not isinstance(turns, list):
            raise ReferenceLogError("'turns' is missing or not a list")
        model = obj.get("model")
        return cls(
            sample_id=sample_id,
            model=model if isinstance(model, str) else None,
            turns=tuple(_turn(t, i) for i, t in enumerate(turns)),
            terminated_by=_opt(obj, "terminated_by", str),
            predicted_answer=obj.get("predicted_answer"),
            predicted_index=_opt(obj, "predicted_index", int),
            is_correct=_opt(obj, "is_correct", bool),
            correct_index=_opt(obj, "correct_index", int),
            budget_total=_opt(obj, "budget_total", int),
            budget_used=_opt(obj, "budget_used", int),
            total_turns=_opt(obj, "total_turns", int),
            prompt_tokens=_opt_count(obj, "total_prompt_tokens"),
            completion_tokens=_opt_count(obj, "total_completion_tokens"),
            cache_read_tokens=_opt_count(obj, "cache_read_tokens"),
            cache_creation_tokens=_opt_count(obj, "cache_creation_tokens"),
            wall_time_s=_opt(obj, "wall_time_s", (int, float)),
            tool_errors=_opt(obj, "tool_errors", int),
            api_error_count=_opt_count(obj, "api_error_count"),
            transient_retry_count=_opt_count(obj, "transient_retry_count"),
            retry_count=_opt_count(obj, "retry_count"),
            question_type=_opt(obj, "question_type", str),
            depth=_opt(obj, "depth", int),
        )


def _opt(obj: JsonObject, key: str, kind: type | tuple[type, ...]) -> Any:
    """The value of an optional key, type-checked (a bool never passes for a number)."""
    value = obj.get(key)
    if value is None:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if (isinstance(value, bool) and bool not in kinds) or not isinstance(value, kinds):
        raise ReferenceLogError(f"'{key}' has the wrong type ({type(value).__name__})")
    return value


def _opt_count(obj: JsonObject, key: str) -> int:
    """The value of an optional count, type-checked; 0 when it is missing."""
    return _opt(obj, key, int) or 0


def _turn(raw: JsonValue, pos: int) -> LoggedTurn:
    if not isinstance(raw, dict):
        raise ReferenceLogError(f"turns[{pos}] is not an object")
    role = raw.get("role")
    if role not in ("assistant", "error"):
        raise ReferenceLogError(f"turns[{pos}].role must be 'assistant' or 'error', got {role!r}")
    calls, results = _call_lists(raw, pos)
    content, turn = raw.get("content"), raw.get("turn")
    return LoggedTurn(
        turn=turn if isinstance(turn, int) else pos,
        role=role,
        content=content if isinstance(content, str) or content is None else str(content),
        tool_calls=tuple(_call(c, pos, i) for i, c in enumerate(calls)),
        results=tuple(_result(r, pos, i) for i, r in enumerate(results)),
        prompt_tokens=_count(raw, "prompt_tokens", pos),
        completion_tokens=_count(raw, "completion_tokens", pos),
    )


def _call_lists(raw: JsonObject, pos: int) -> tuple[list[JsonValue], list[JsonValue]]:
    """A turn's `tool_calls` and `tool_results` (empty when missing), which must be lists."""
    calls = raw.get("tool_calls") or []
    results = raw.get("tool_results") or []
    if not isinstance(calls, list) or not isinstance(results, list):
        raise ReferenceLogError(f"turns[{pos}]: tool_calls and tool_results must be lists")
    return calls, results


def _call(raw: Any, pos: int, i: int) -> ToolCall:
    if not isinstance(raw, dict) or not isinstance(raw.get("name"), str):
        raise ReferenceLogError(f"turns[{pos}].tool_calls[{i}] needs a string 'name'")
    given_id = raw.get("id")
    call_id = given_id if isinstance(given_id, str) and given_id else f"replay_{pos}_{i}"
    return ToolCall(id=call_id, name=raw["name"], args=raw.get("args", {}))


def _result(raw: Any, pos: int, i: int) -> LoggedResult:
    if not isinstance(raw, dict):
        raise ReferenceLogError(f"turns[{pos}].tool_results[{i}] is not an object")
    output, cost = raw.get("output"), raw.get("cost", 0)
    if not isinstance(output, str):
        raise ReferenceLogError(f"turns[{pos}].tool_results[{i}].output must be a string")
    if isinstance(cost, bool) or not isinstance(cost, int):
        raise ReferenceLogError(f"turns[{pos}].tool_results[{i}].cost must be an integer")
    return LoggedResult(name=str(raw.get("name")), args=raw.get("args"), output=output, cost=cost)


def _count(raw: JsonObject, key: str, pos: int) -> int:
    value = raw.get(key) or 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ReferenceLogError(f"turns[{pos}].{key} must be a non-negative integer")
    return value


# ---------------------------------------------------------------- the check


class ReplayExample(TypedDict, total=False):
    """One mismatch between a replayed tool result and the logged one, as the check reports it: where and what
    (`problem`: missing | extra | tool | output | cost), a window of each side's text around the first difference,
    and each side's tool and cost."""

    position: Required[int]
    problem: Required[str]
    first_difference: int
    tool: str | None
    logged: str
    logged_cost: int
    ours: str
    our_cost: int


@dataclass
class ReplayCheck:
    """How a replay compares with its log: tool outputs (by the truncation rule) and outcome fields."""

    sample_id: str
    outputs_compared: int = 0
    output_mismatches: int = 0
    examples: list[ReplayExample] = field(default_factory=list)
    fields: dict[str, list[Any]] = field(default_factory=dict)  # name -> [logged, ours], only when they differ

    @property
    def ok(self) -> bool:
        return not self.output_mismatches and not self.fields

    def as_dict(self) -> dict[str, Any]:
        return {
            "outputs_compared": self.outputs_compared,
            "output_mismatches": self.output_mismatches,
            "examples": self.examples,
            "fields": self.fields,
        }


TURN_KINDS = ("assistant", "error", "harness")  # our steps that the reference logs as `turns` records


def check_replay(log: ReferenceLog, steps: Sequence[Mapping[str, Any]], trajectory: Mapping[str, Any]) -> ReplayCheck:
    """Compare our stored steps and trajectory row (after replay) with the log they replayed."""
    check = ReplayCheck(log.sample_id)
    _compare_results(check, [s for s in steps if s.get("kind") == "tool"], log.results)
    for name, (theirs_v, mine_v) in _logged_and_ours(log, steps, trajectory).items():
        if theirs_v is not None and theirs_v != mine_v:
            check.fields[name] = [theirs_v, mine_v]
    return check


def _compare_results(check: ReplayCheck, ours: list[Mapping[str, Any]], logged: Sequence[LoggedResult]) -> None:
    """Count the tool results compared and mismatched, position by position, keeping the first few examples."""
    for pos in range(max(len(ours), len(logged))):
        mine = ours[pos] if pos < len(ours) else None
        theirs = logged[pos] if pos < len(logged) else None
        problem = _result_problem(mine, theirs)
        if problem is None:
            check.outputs_compared += 1
            continue
        check.outputs_compared += int(mine is not None and theirs is not None)
        check.output_mismatches += 1
        if len(check.examples) < MAX_EXAMPLES:
            check.examples.append(_example(pos, problem, mine, theirs))


def _logged_and_ours(
    log: ReferenceLog, steps: Sequence[Mapping[str, Any]], trajectory: Mapping[str, Any]
) -> dict[str, tuple[Any, Any]]:
    """{field: (the log's value, ours)} for the episode's totals; the token totals only for a log without retries
    (with retries the logged totals include the failed attempts' tokens)."""
    turns = sum(1 for s in steps if s.get("kind") in TURN_KINDS)
    answer = trajectory.get("answer")
    compared = {
        "terminated_by": (log.terminated_by, trajectory.get("termination")),
        "predicted_answer": (log.predicted_answer, answer if answer is not None else ""),
        "predicted_index": (log.predicted_index, trajectory.get("predicted_index")),
        "is_correct": (log.is_correct, bool(trajectory.get("correct"))),
        "budget_used": (log.budget_used, trajectory.get("points_used")),
        "total_turns": (log.total_turns, turns),
        "correct_index": (log.correct_index, trajectory.get("correct_index")),
        "tool_errors": (log.tool_errors, trajectory.get("tool_errors")),
    }
    if log.retry_count == 0:
        compared["total_prompt_tokens"] = (log.prompt_tokens, trajectory.get("prompt_tokens"))
        compared["total_completion_tokens"] = (log.completion_tokens, trajectory.get("completion_tokens"))
    return compared


def _result_problem(mine: Mapping[str, Any] | None, theirs: LoggedResult | None) -> str | None:
    if mine is None:
        return "missing"  # logged, but our replay never made the call
    if theirs is None:
        return "extra"  # our replay made a call the log does not have
    if mine.get("tool_name") != theirs.name:
        return "tool"
    if not output_matches(mine.get("text") or "", theirs.output):
        return "output"
    if (mine.get("cost") or 0) != theirs.cost:
        return "cost"
    return None


def _example(pos: int, problem: str, mine: Mapping[str, Any] | None, theirs: LoggedResult | None) -> ReplayExample:
    """A short, readable account of one mismatch: for an output, a window around the first difference."""
    ex: ReplayExample = {"position": pos, "problem": problem}
    start = 0
    if problem == "output" and mine is not None and theirs is not None:
        ex["first_difference"] = _first_difference(mine.get("text") or "", theirs.output)
        start = max(0, ex["first_difference"] - HEAD // 3)
    if theirs is not None:
        ex["tool"], ex["logged"], ex["logged_cost"] = theirs.name, theirs.output[start : start + HEAD], theirs.cost
    if mine is not None:
        ex["tool"] = mine.get("tool_name")
        ex["ours"] = (mine.get("text") or "")[start : start + HEAD]
        ex["our_cost"] = mine.get("cost") or 0
    return ex


def _first_difference(a: str, b: str) -> int:
    for i, (x, y) in enumerate(zip(a, b, strict=False)):  # up to the shorter text: the rest is the difference
        if x != y:
            return i
    return min(len(a), len(b))
