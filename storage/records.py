"""The records the store is given to write: a run's creation fields, a trajectory's item fields and outcome, a step.

The runner builds each one whole (`sandbox.runner.store_records`: `step_record`, `trajectory_record`, `item_meta`;
`sandbox.runner.run_row.run_fields`); the store reads by key and writes NULL for a key a record leaves out (imports
and benchmarks write a few columns), so only the keys the store cannot do without are required. Key order is the
producer's field order: a trajectory's record is also written out as JSON (an Inspect sample's metadata).
"""

from __future__ import annotations

from typing import Required, TypedDict

from storage.json_types import JsonObject, JsonValue


class CapsRecord(TypedDict, total=False):
    """The caps as a run records them (`sandbox.records.Caps.as_dict` writes every key; a key a stored run lacks
    reads as the protocol's value, `sandbox.records.recorded_limits`)."""

    budget: int
    max_turns: int
    max_tokens_total: int
    costs: dict[str, int]
    disabled_tools: list[str]


class StepUsage(TypedDict, total=False):
    """The usage a step records: the four token buckets and the provider's raw usage record (the episode writes
    every key; a bucket a stored step lacks reads as 0)."""

    prompt: int
    completion: int
    cache_read: int
    cache_creation: int
    raw: JsonObject | None


# apart from `storage.rows.RunRow`: a run is given in part (its prompts as text, config text or object), read whole
class RunFields(TypedDict, total=False):
    """A run's columns as created (`sandbox.runner.run_row.run_fields`), beside its name and identity. `config` is JSON
    text or an object the store encodes; `prompts` is the prompts file's text, which the store keeps once, by hash."""

    kind: str
    agent: str
    model: str | None
    dataset: str
    dataset_fingerprint: str
    ablation: str
    seed: int
    replicates: int
    planned: int
    caps: CapsRecord
    version: str
    prompt_hash: str | None
    prompts: str
    group_name: str | None
    label_resolution: str
    hop_rule: str
    family: str | None
    tier: str | None
    dataset_repo: str | None
    dataset_revision: str | None
    config: JsonObject | str


class StepRecord(TypedDict, total=False):
    """One step flattened for the store: the episode's `Step` with its ledger's meters in place of the ledger."""

    index: Required[int]
    turn: Required[int]
    kind: Required[str]
    text: str | None
    tool_name: str | None
    tool_args: JsonValue  # the arguments as the model wrote them (`{"_raw": text}` when they were not JSON)
    tool_call_id: str | None
    cost: int
    status: str | None
    paper_id: str | None
    arxiv_id: str | None
    section_index: int | None
    delivered: bool
    usage: StepUsage | None
    cost_usd: float | None
    elapsed_s: float
    reasoning_chars: int | None
    hop: int | None
    finish_reason: str | None
    points_used: Required[int]
    points_left: Required[int]
    tokens: Required[int]
    rejections: Required[int]


class ItemMeta(TypedDict, total=False):
    """The item fields every report splits by, stored with each trajectory so reports need no corpus."""

    question_type: str
    kind: str
    depth: int
    reasoning_type: str
    consensus_tier: str
    venue: str
    correct_index: int
    budget_level: str | None
    n_gold: int
    section_reachable: int


class TrajectoryRecord(TypedDict, total=False):
    """A trajectory's outcome for the store: the episode's `Trajectory`, its tool sequence and its actions."""

    item_id: str
    termination: str
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
    section_recall: bool | None
    section_recall_any: bool | None
    section_recall_loose: bool | None
    reads: list[tuple[str, int]]
    cost_usd: float | None
    wall_time_s: float
    error: str | None
    error_kind: str | None
    continues: int
    chosen_type: str | None
    cut_off_turns: int
    lost_calls: int
    tool_sequence: list[str | None]  # each tool call's tool, in order
    actions: list[list[JsonValue]]  # each call as [tool, status, paper, role, delivered]


__all__ = ["CapsRecord", "ItemMeta", "RunFields", "StepRecord", "StepUsage", "TrajectoryRecord"]
