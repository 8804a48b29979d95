"""An episode flattened for the store: the step and trajectory records the group commit writes, and the item fields
and call list stored beside each trajectory so reports need no corpus.

These run once per step or per episode, on the hot path: each names its fields one by one (no `asdict`, which
deep-copies every value)."""

from __future__ import annotations

from sandbox.recall import section_reachable
from sandbox.records import Item, Step, Trajectory
from storage.json_types import JsonValue
from storage.records import ItemMeta, StepRecord, TrajectoryRecord


def item_meta(item: Item) -> ItemMeta:
    """The item fields every report splits by, stored with each trajectory so reports need no corpus."""
    return {
        "question_type": item.question_type,
        "kind": item.kind,
        "depth": item.depth,
        "reasoning_type": item.reasoning_type,
        "consensus_tier": item.consensus_tier,
        "venue": item.venue,
        "correct_index": item.correct_index,
        "n_gold": len(item.gold_paper_ids),
        "section_reachable": int(section_reachable(item)),
    }


def paper_role(item: Item, paper: JsonValue) -> str | None:
    """What a named paper is to this item: gold, bridge, seed or other (None when no paper is named)."""
    if not isinstance(paper, str):
        return None
    if paper in item.gold_paper_ids:
        return "gold"
    if paper in item.bridge_paper_ids:
        return "bridge"
    return "seed" if paper == item.seed_paper_id else "other"


def actions(item: Item, steps: list[Step]) -> list[list[JsonValue]]:
    """Every call as [tool, status, paper, role, delivered]: what trajectory analytics need, without texts."""
    out: list[list[JsonValue]] = []
    for s in steps:
        if s.kind != "tool":
            continue
        paper = s.tool_args.get("paper_id") if isinstance(s.tool_args, dict) else None
        paper = paper if isinstance(paper, str) else None
        out.append([s.tool_name, s.status, paper, paper_role(item, paper), int(s.delivered)])
    return out


def step_record(step: Step) -> StepRecord:
    """A step flattened for the store, its ledger's meters in place of the ledger (the values themselves, not copies:
    `asdict` would deep-copy every tool argument on the hot path)."""
    ledger = step.ledger
    return {
        "index": step.index,
        "turn": step.turn,
        "kind": step.kind,
        "text": step.text,
        "tool_name": step.tool_name,
        "tool_args": step.tool_args,
        "tool_call_id": step.tool_call_id,
        "cost": step.cost,
        "status": step.status,
        "paper_id": step.paper_id,
        "arxiv_id": step.arxiv_id,
        "section_index": step.section_index,
        "delivered": step.delivered,
        "usage": step.usage,
        "cost_usd": step.cost_usd,
        "elapsed_s": step.elapsed_s,
        "reasoning_chars": step.reasoning_chars,
        "hop": step.hop,
        "finish_reason": step.finish_reason,
        "points_used": ledger.points_used,
        "points_left": ledger.points_left,
        "tokens": ledger.tokens,
        "rejections": ledger.rejections,
    }


def trajectory_record(traj: Trajectory) -> TrajectoryRecord:
    """A trajectory's fields for the store, in the dataclass's order (the values themselves: `asdict` deep-copies
    every value, ~0.1 ms per episode, and the store only reads them)."""
    return {
        "item_id": traj.item_id,
        "termination": traj.termination,
        "answer": traj.answer,
        "predicted_index": traj.predicted_index,
        "correct": traj.correct,
        "reasoning": traj.reasoning,
        "turns": traj.turns,
        "model_calls": traj.model_calls,
        "points_used": traj.points_used,
        "tokens": traj.tokens,
        "prompt_tokens": traj.prompt_tokens,
        "completion_tokens": traj.completion_tokens,
        "cache_read_tokens": traj.cache_read_tokens,
        "cache_creation_tokens": traj.cache_creation_tokens,
        "tool_calls": traj.tool_calls,
        "turns_with_calls": traj.turns_with_calls,
        "tool_errors": traj.tool_errors,
        "api_errors": traj.api_errors,
        "transient_retries": traj.transient_retries,
        "paper_recall": traj.paper_recall,
        "paper_recall_any": traj.paper_recall_any,
        "section_recall": traj.section_recall,
        "section_recall_any": traj.section_recall_any,
        "section_recall_loose": traj.section_recall_loose,
        "reads": traj.reads,
        "cost_usd": traj.cost_usd,
        "wall_time_s": traj.wall_time_s,
        "error": traj.error,
        "error_kind": traj.error_kind,
        "continues": traj.continues,
        "chosen_type": traj.chosen_type,
        "cut_off_turns": traj.cut_off_turns,
        "lost_calls": traj.lost_calls,
    }
