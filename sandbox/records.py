"""Plain records shared by the sandbox: items, caps, tool calls, steps and trajectories.

They are dataclasses rather than dicts so that every field has one name and one type
across the loader, the tools, the episode loop and the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Required, TypedDict, TypeGuard, get_args

from storage.json_types import JsonObject, JsonValue
from storage.records import CapsRecord, StepUsage  # the store's records, named here for the sandbox and front ends

# The closed word sets the records carry, named once: the store, the reports and the screens read these words.
Termination = Literal["answer", "budget", "token_limit", "max_turns", "error"]  # how an episode ended
TERMINATIONS: tuple[Termination, ...] = get_args(Termination)


def is_termination(word: object) -> TypeGuard[Termination]:
    """Whether a stored word (the store's `termination` column is plain text) is one of the `Termination` words."""
    return word in TERMINATIONS


# Why an episode ended in `error` (the model error's kind, the episode's own, a person's play marked), or why an
# attempt was left unfinished; None for an episode that did not end in error.
ErrorKind = Literal[
    "api_error",
    "transient",
    "refused",
    "context_overflow",
    "infra",
    "unreachable",
    "exception",
    "api_errors",
    "transient_exhausted",
    "api_errors_at_cap",
    "empty_response",
    "abandoned",
    "resumed",
    "replayed",
]
RunEventKind = Literal["started", "step", "retry", "trajectory", "finished"]  # what the runner tells its caller

RunStatus = Literal["running", "done", "interrupted", "failed"]  # a run's `status` column


class RunResult(TypedDict):
    """What `Runner.run` returns to the CLI and the TUI: how the run ended and its totals for this session."""

    run_id: int
    status: RunStatus
    stop_reason: str | None  # why it stopped early (a person, a run-wide limit, the model server gone, a full disk)
    limit: str | None  # the run-wide limit that stopped it: tokens | cost
    unreachable: str | None  # the model server's error when it refused a connection
    store_full: str | None  # the store's error when its disk filled up (the run stopped, what was committed kept)
    done: int
    planned: int
    correct: int
    skipped: int  # finished before this session
    elapsed_s: float


class VerifierOptions(TypedDict, total=False):
    """How to reach a model verifier (its server, key variable, client, timeout): execution options of a run, not
    its identity; which verifier it is, is (`sandbox.runner.RunSpec.scaling["verifier"]`)."""

    base_url: str | None
    api_key_env: str | None
    client: str
    timeout_s: float


class SliceRecord(TypedDict, total=False):
    """The selection a run's config records; `shard` ("I/N") only on a sharded run."""

    ids: Required[list[str]]
    question_type: Required[str | None]
    depth: Required[int | None]
    limit: Required[int | None]
    shard: str


ChatRole = Literal["system", "user", "assistant", "tool"]  # who speaks an OpenAI-style chat message


class WireFunction(TypedDict):
    """The function a tool call names, as an OpenAI-style message carries it: its arguments are JSON text."""

    name: str
    arguments: str


class WireToolCall(TypedDict):
    """One tool call in an assistant message's `tool_calls`."""

    id: str
    type: Literal["function"]
    function: WireFunction


class WireMessage(TypedDict, total=False):
    """One message of the conversation an agent is given and the history a model is sent (OpenAI-style).

    `name` is the tool a tool message answers (text-tool histories name it; providers are sent the message without
    it); a tool message rebuilt from a stored step carries the step's id and tool, which a step may lack (None).
    `reasoning_content` and `thinking_blocks` are the provider's thinking, replayed with the assistant turn.
    """

    role: Required[ChatRole]
    content: str | None
    tool_calls: list[WireToolCall]
    tool_call_id: str | None
    name: str | None
    reasoning_content: str
    thinking_blocks: list[JsonObject]
    cache_control: JsonObject  # Anthropic's prompt-cache marker (`sandbox.agents.providers.cache_marked`)


class WireTool(TypedDict, total=False):
    """A tool as a request's `tools` list carries it: the schema in OpenAI's function wrapper, and Anthropic's
    prompt-cache marker on the last one (`sandbox.agents.providers.cached_tools`)."""

    type: Required[Literal["function"]]
    function: Required[ToolSchema]
    cache_control: JsonObject


class ToolSchema(TypedDict, total=False):
    """A tool as an agent is shown it (OpenAI's function object without the wrapper): the schema of its arguments
    is any JSON Schema; a registry shown by `names` leaves the description out."""

    name: Required[str]
    description: str
    parameters: JsonObject


TOOL_COSTS: dict[str, int] = {
    "get_paper_info": 1,
    "get_references": 1,
    "search_papers": 1,
    "list_sections": 1,
    "read_section": 5,
    "think": 0,
    "submit_answer": 0,
}
TOOL_NAMES: tuple[str, ...] = tuple(TOOL_COSTS)


@dataclass(frozen=True)
class Label:
    """One auditor section label, resolved once at import to a top-level section index (or None)."""

    arxiv_id: str
    section: str
    relevance: str
    section_index: int | None
    method: str  # a step of `sandbox.sections.LABEL_METHODS`, or unresolved | unknown_paper


# an item's consensus tier as the release grades its filters' agreement, strictest first: reports list them so
CONSENSUS_TIERS = ("gold", "silver", "bronze")


def consensus_order(tier: str) -> tuple[int, str]:
    """A sort key putting consensus tiers in CONSENSUS_TIERS' order, any other after them alphabetically."""
    return (CONSENSUS_TIERS.index(tier) if tier in CONSENSUS_TIERS else len(CONSENSUS_TIERS), tier)


class QARow(TypedDict, total=False):
    """A QA row of a release as the import checked it (`sandbox.release.check_item`) and the corpus keeps it, its
    gold, bridge and seed arXiv ids the graph's; `item_from_row` makes the Item of it (the reference loader's
    defaults for what is absent or null)."""

    id: Required[str]
    question: Required[str]
    options: Required[list[str]]
    correct_index: Required[int]
    depth: Required[int]
    question_type: str | None
    reasoning_type: str | None
    cognitive_skill: str | None
    venue: str | None
    consensus_tier: str | None
    distractor_types: list[str] | None
    seed_paper_id: Required[str]
    seed_arxiv_id: str | None
    seed_title: str | None
    gold_paper_ids: Required[list[str]]
    gold_arxiv_ids: list[str] | None
    bridge_paper_ids: list[str] | None
    bridge_arxiv_ids: list[str] | None
    filter_agreement: JsonValue


@dataclass(frozen=True)
class Item:
    """One four-option question with its seed, gold and bridge papers."""

    id: str
    question_type: str
    depth: int
    reasoning_type: str
    cognitive_skill: str
    venue: str
    consensus_tier: str
    question: str
    options: tuple[str, ...]
    correct_index: int
    distractor_types: tuple[str, ...] | None
    seed_paper_id: str
    seed_arxiv_id: str
    seed_title: str
    gold_paper_ids: tuple[str, ...]
    gold_arxiv_ids: tuple[str, ...]
    bridge_paper_ids: tuple[str, ...]
    bridge_arxiv_ids: tuple[str, ...]
    filter_agreement: Any = None
    labels: tuple[Label, ...] = ()
    labelled: bool = True  # False when the dataset has no recall-labels file: section recall is unmeasured

    @property
    def multi_target(self) -> bool:
        """True for multi-target items (legacy `dfs` too)."""
        return self.question_type in ("multi-target", "dfs") or self.id.startswith("mt_")

    @property
    def kind(self) -> str:
        """`st` or `mt`, the split every report uses."""
        return "mt" if self.multi_target else "st"


DEFAULT_WORKERS = 8  # episodes played at once unless a run says: `run --workers`, the launch form's Workers, RunSpec


@dataclass(frozen=True)
class Caps:
    """The limits of one episode. Defaults are the protocol's (profile agenthop-v1)."""

    budget: int = 30
    max_turns: int = 20
    max_tokens_total: int = 200_000
    costs: tuple[tuple[str, int], ...] = tuple(TOOL_COSTS.items())
    disabled_tools: tuple[str, ...] = ()

    def cost(self, name: str) -> int:
        """Points a call to `name` costs; unknown tools cost nothing."""
        return dict(self.costs).get(name, 0)

    def as_dict(self) -> CapsRecord:
        """A JSON-able view, recorded with every run."""
        return {
            "budget": self.budget,
            "max_turns": self.max_turns,
            "max_tokens_total": self.max_tokens_total,
            "costs": dict(self.costs),
            "disabled_tools": list(self.disabled_tools),
        }


def recorded_limits(caps: CapsRecord | None) -> tuple[int, int, int]:
    """(points, turns, tokens) of the caps a run recorded (`Caps.as_dict`), the protocol's where one is missing:
    the one place the TUI, the launch form and the reference summary read them."""
    caps = caps or {}
    return (
        int(caps.get("budget", Caps.budget)),
        int(caps.get("max_turns", Caps.max_turns)),
        int(caps.get("max_tokens_total", Caps.max_tokens_total)),
    )


@dataclass
class Usage:
    """Token usage of one model call, in the reference's four buckets, plus the provider's raw record."""

    prompt: int = 0  # non-cached prompt tokens
    completion: int = 0
    cache_read: int = 0
    cache_creation: int = 0
    raw: JsonObject | None = None  # passed through unread: what the provider reported, in its own words

    @property
    def cap_quantity(self) -> int:
        """What counts against the token cap: non-cached prompt + completion + cache creation."""
        return self.prompt + self.completion + self.cache_creation


@dataclass
class ToolCall:
    """A call as the agent emitted it; `args` is a dict, or `{"_raw": text}` for undecodable JSON."""

    id: str
    name: str
    args: Any


@dataclass
class AssistantTurn:
    """What an agent returns for one model turn."""

    text: str | None
    tool_calls: list[ToolCall] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = None
    raw: WireMessage | None = None  # provider-native message, replayed into history
    reasoning: str | None = None  # the provider's reasoning (thinking) text, which `text` holds too (sandbox.words)
    finish_reason: str | None = None  # why the model stopped (stop | tool_calls | length | …), as the provider said
    cut_off: str | None = None  # the unfinished call a reply cut off by the completion limit ended with (not run)


@dataclass
class LedgerState:
    """The ledger as it stands after a step: what the meters show."""

    turn: int
    points_used: int
    points_left: int
    tokens: int
    rejections: int


@dataclass
class Step:
    """One event of an episode, in order: an assistant turn, a tool call and result, a nudge, an error."""

    index: int
    turn: int
    kind: str  # assistant | tool | nudge | harness | error | retry | cutoff
    ledger: LedgerState
    text: str | None = None
    tool_name: str | None = None
    tool_args: Any = None
    tool_call_id: str | None = None
    cost: int = 0
    status: str | None = None  # tool: ok | rejected | disabled | error | not_found | metadata_only
    paper_id: str | None = None
    arxiv_id: str | None = None
    section_index: int | None = None
    delivered: bool = False
    usage: StepUsage | None = None
    cost_usd: float | None = None
    elapsed_s: float = 0.0
    reasoning_chars: int | None = None  # assistant: how much of `text` is the provider's reasoning (sandbox.words)
    hop: int | None = None  # a delivered read: citation hops from the item's seed to the paper read (None: unreachable)
    finish_reason: str | None = None  # assistant: why the model stopped, as the provider said (`length`: cut off)


@dataclass
class Trajectory:
    """The outcome of one episode: termination, answer, correctness, resources, recall flags."""

    item_id: str
    termination: Termination
    answer: str | None
    predicted_index: int
    correct: bool
    reasoning: str | None
    turns: int
    model_calls: int
    points_used: int
    tokens: int
    prompt_tokens: int
    completion_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    tool_calls: int
    turns_with_calls: int
    tool_errors: int
    api_errors: int
    transient_retries: int
    paper_recall: bool
    paper_recall_any: bool
    section_recall: bool | None  # None: unmeasured (the dataset has no recall labels)
    section_recall_any: bool | None
    section_recall_loose: bool | None
    reads: list[tuple[str, int]]
    cost_usd: float | None
    wall_time_s: float
    error: str | None = None
    error_kind: ErrorKind | None = None
    continues: int = 0
    chosen_type: str | None = None  # correct | seed_only | wrong_paper | no_context | no_answer | unknown
    cut_off_turns: int = 0  # replies the completion limit cut off (finish_reason `length`)
    lost_calls: int = 0  # calls those replies ended inside of, which could not be read and were not run
