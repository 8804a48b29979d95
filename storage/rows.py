"""The store's rows as typed records, column by column.

A column added by a later migration is present on every row (NULL on rows written before it), so every key is
required. JSON columns come back decoded: a run's `caps`, `config` and `identity` are objects whose keys the store
does not fix (each launch path writes its own), a trajectory's `reads`, `tool_sequence` and `actions` are lists
(empty when NULL). The narrower readers (a run's trajectory list, its tool calls, …) return the columns they
select, each as its own record.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from storage.json_types import JsonObject, JsonValue


# apart from `storage.records.RunFields`: a run is read whole (id, status, times, its prompts' hash), given in part
class RunRow(TypedDict):
    """A run as stored (`runs`), its JSON columns decoded."""

    id: int
    name: str
    kind: str
    agent: str
    model: str | None
    dataset: str
    dataset_fingerprint: str
    ablation: str
    seed: int
    replicates: int
    caps: JsonObject
    config: JsonObject
    identity: JsonObject
    version: str
    prompt_hash: str | None
    status: str
    planned: int
    created_at: str
    started_at: str | None
    finished_at: str | None
    group_name: str | None
    note: str | None
    label_resolution: str | None
    hop_rule: str | None
    prompts_text: str | None
    family: str | None
    tier: str | None
    dataset_repo: str | None
    dataset_revision: str | None


class StoredRun(RunRow):
    """A run with the prompts file it was sent, None when it recorded none (`Store.run`, `Store.runs_in_group`)."""

    prompts: str | None


class RunListRow(RunRow):
    """A run with its progress over its finished final trajectories (`Store.runs`): how many, how many correct,
    their summed cost (None when none is costed) and how many are costed."""

    done: int
    n_correct: int
    cost: float | None
    n_costed: int


class LightTrajectoryRow(TypedDict):
    """A finished trajectory without its per-call actions, reads and reasoning (`Store.trajectories(light=True)`):
    what reports over tens of thousands of trajectories read."""

    id: int
    run_id: int
    item_id: str
    replicate: int
    attempt: int
    final: int
    kind: str | None
    depth: int | None
    question_type: str | None
    reasoning_type: str | None
    consensus_tier: str | None
    venue: str | None
    correct_index: int | None
    termination: str | None
    answer: str | None
    predicted_index: int | None
    correct: int | None
    turns: int | None
    model_calls: int | None
    points_used: int | None
    tokens: int | None
    prompt_tokens: int | None
    completion_tokens: int | None
    cache_read_tokens: int | None
    cache_creation_tokens: int | None
    tool_calls: int | None
    turns_with_calls: int | None
    tool_errors: int | None
    api_errors: int | None
    transient_retries: int | None
    paper_recall: int | None
    paper_recall_any: int | None
    section_recall: int | None
    section_recall_any: int | None
    section_recall_loose: int | None
    tool_sequence: list[str]  # the tools called, in order
    cost_usd: float | None
    wall_time_s: float | None
    error: str | None
    error_kind: str | None
    continues: int
    chosen_type: str | None
    cut_off_turns: int | None
    lost_calls: int | None


class TrajectoryRow(LightTrajectoryRow):
    """A trajectory as stored (`trajectories`), its JSON columns decoded."""

    status: str
    reasoning: str | None
    reads: list[JsonValue]
    actions: list[JsonValue]
    budget_level: str | None
    started_at: str | None
    finished_at: str | None
    n_gold: int | None
    section_reachable: int | None


class TrajectoryListRow(TypedDict):
    """A finished final trajectory with the columns a list shows (`Store.LIST_FIELDS`): no texts, no sequences."""

    id: int
    item_id: str
    replicate: int
    attempt: int
    kind: str | None
    question_type: str | None
    depth: int | None
    correct: int | None
    termination: str | None
    answer: str | None
    predicted_index: int | None
    chosen_type: str | None
    points_used: int | None
    turns: int | None
    tokens: int | None
    tool_calls: int | None
    paper_recall: int | None
    section_recall: int | None
    cost_usd: float | None
    wall_time_s: float | None
    error: str | None


class ItemTrajectoryRow(TrajectoryListRow):
    """A trajectory on one item with the run that made it (`Store.item_trajectories`)."""

    run: str
    agent: str
    model: str | None
    ablation: str
    run_kind: str
    run_id: int


class HistoryRow(TypedDict):
    """One attempt of an agent on an item, final or not, finished or not, with its run (`Store.agent_history`)."""

    id: int
    item_id: str
    replicate: int
    attempt: int
    status: str
    final: int
    termination: str | None
    error_kind: str | None
    correct: int | None
    tool_calls: int | None
    run: str
    run_id: int


class ToolCallRow(TypedDict):
    """One tool call of a finished final trajectory, without texts (`Store.tool_calls`)."""

    trajectory_id: int
    item_id: str
    replicate: int
    turn: int
    tool_name: str  # a tool step always names its tool
    status: str | None
    cost: int


class DeliveredStep(TypedDict):
    """A tool step whose call delivered text, with its trajectory's item and depth (`Store.delivered_steps`)."""

    trajectory_id: int
    item_id: str
    depth: int | None
    idx: int
    paper_id: str | None
    arxiv_id: str | None
    section_index: int | None
    delivered: int
    hop: int | None


class VerifierUsage(TypedDict):
    prompt: int
    completion: int
    cache_read: int
    cache_creation: int


class StrategySpend(TypedDict):
    """What a sequential strategy's own steps did and cost over a run (`Store.strategy_spend`)."""

    summaries: int
    replacements: int
    verifier_calls: int
    verifier_tokens: int
    verifier_cost_usd: float | None
    verifier_errors: int
    verifier_usage: VerifierUsage


class JudgmentRow(TypedDict):
    """A judge's stored verdict on a sample (pointwise: `sample_b` None) or a pair of samples (`Store.judgments`):
    1/0, None when its reply was not parsed; what it cost."""

    id: int
    run_id: int
    item_id: str
    kind: str
    judge: str
    sample_a: int
    sample_b: int | None
    verdict: int | None
    prompt: str | None
    reply: str | None
    tokens: int | None
    cost_usd: float | None
    created_at: str
    prompt_tokens: int | None
    completion_tokens: int | None
    cache_read_tokens: int | None
    cache_creation_tokens: int | None


class VerdictRow(TypedDict):
    """An auditor's verdict on an item (`Store.verdicts`: the latest per item); the checks 1/0, None when not
    assessed."""

    id: int
    dataset_fingerprint: str
    item_id: str
    reviewer: str
    verdict: str
    note: str | None
    question_ok: int | None
    gold_supported: int | None
    labels_accurate: int | None
    created_at: str


LabelAction = Literal["add", "remove", "reclassify", "undo"]  # the store refuses any other (`Store.add_label_edit`)


class LabelEditRow(TypedDict):
    """An auditor's edit of an item's section labels (`Store.label_edits`); `undoes`: the edit an undo row takes
    back (None on other rows)."""

    id: int
    dataset_fingerprint: str
    item_id: str
    action: LabelAction
    arxiv_id: str
    section: str
    relevance: str | None
    reviewer: str
    created_at: str
    undoes: int | None


class LiveEpisodeRow(TypedDict):
    """A trajectory in flight as its committed steps leave it (`Store.live_episodes`): how many steps it has, the
    ledger of its last one (None before its first), and of the steps after those a reader had already read, their
    cost and the last tool call (None when there is none among them). No texts."""

    trajectory_id: int
    item_id: str
    replicate: int
    n_steps: int
    turn: int | None
    points_used: int | None
    tokens: int | None
    rejections: int | None
    new_cost_usd: float | None
    tool_name: str | None
    tool_args: str | None  # JSON text: the reader decodes the one call it shows


class FinishedRow(TypedDict):
    """A final trajectory as it finished (`Store.finished_since`): its outcome, ledger, cost and error, and when."""

    id: int
    item_id: str
    replicate: int
    termination: str | None
    correct: int | None
    cost_usd: float | None
    error: str | None
    finished_at: str | None
    turns: int | None  # where the episode ended: its ledger as the trajectory records it
    points_used: int | None
    tokens: int | None
