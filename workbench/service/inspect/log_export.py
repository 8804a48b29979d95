"""A stored run as an Inspect log (`export RUN --format inspect --out FILE.eval`), which `inspect view` opens and
`inspect_ai.log.read_eval_log` reads.

One sample per final trajectory (its item id, its replicate as the epoch): the opening the agent was sent, then its
steps as messages — each model reply an assistant message with its calls and its usage in `metadata["usage"]`, each
tool result and each nudge as sent — its score C or I with the four axes, ending, points and tokens in the score's
metadata, and the whole trajectory record in the sample's metadata, as the `agenthop` task writes them. Each
assistant message's metadata keeps what its call measured (`TurnFacts`: usage, raw usage, finish reason, a call
cut off mid-way). Harness notes that stand for a model call (a reply over the token cap, an empty reply) are
assistant messages with the note in `metadata["harness"]`, so an import replays them; API errors and retries are
not messages: the sample's `agenthop_calls` keeps every model call in order, the failed ones with their kind and
message (`calls.model_calls`), so an import meets them where the run did.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from inspect_ai.log import (
    EvalConfig,
    EvalDataset,
    EvalLog,
    EvalMetric,
    EvalPlan,
    EvalResults,
    EvalSample,
    EvalScore,
    EvalSpec,
    EvalStats,
    write_eval_log,
)
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageSystem,
    ChatMessageTool,
    ChatMessageUser,
)
from inspect_ai.tool import ToolCall as InspectCall

from sandbox.agents.registry import measures_tokens
from sandbox.corpus import Corpus
from sandbox.prompts import build_prompt
from storage import Store
from storage.json_types import JsonObject
from storage.rows import RunRow, TrajectoryRow
from workbench.service.inspect.calls import MODEL_CALL_NOTES, model_calls
from workbench.service.inspect.conversation import TurnFacts, TurnUsage
from workbench.service.inspect.task import TASK_NAME, caps_of, setting_record, trajectory_score

TASK = f"agenthop_workbench/{TASK_NAME}"
SCORER = "agenthop_score"


def export_inspect(store: Store, run_name: str, corpus: Corpus, out: Path) -> int:
    """Write run `run_name` to `out` (`.eval` or `.json`) as an Inspect log; returns the number of samples."""
    run = store.run(run_name)
    record = setting_record(run["dataset"], caps_of(run["caps"]), run["ablation"], None, None)
    record["agent"] = run["agent"]  # the agent that played, and its model (None: no model): an import keeps them
    record["model"] = run["model"]
    # the run's tags (`run --family/--tier`, `runs tag`): an import keeps them, as `merge` and the JSONL export do
    record["family"], record["tier"] = run.get("family"), run.get("tier")
    trajectories = store.trajectories(run["id"])
    measured = measures_tokens(run["agent"], run.get("identity"))
    samples = [_sample(store, corpus, run, t, measured) for t in trajectories]
    correct = sum(1 for t in trajectories if t["correct"])
    created = run.get("created_at") or datetime.now(UTC).isoformat(timespec="seconds")
    log = EvalLog(
        status="success",
        eval=EvalSpec(
            created=created,
            task=TASK,
            task_registry_name=TASK,
            task_args={
                "data": run["dataset"],
                "ablation": run["ablation"],
                "budget": record["caps"]["budget"],
                "max_turns": record["caps"]["max_turns"],
            },
            dataset=EvalDataset(name=corpus.source, samples=len(samples)),
            model=run["model"] or f"agenthop/{run['agent']}",
            config=EvalConfig(epochs=max((t["replicate"] for t in trajectories), default=0) + 1),
            metadata={"agenthop": record, "run": run_name},
        ),
        plan=EvalPlan(),
        results=EvalResults(
            total_samples=len(samples),
            completed_samples=len(samples),
            scores=[
                EvalScore(
                    name=SCORER,
                    scorer=SCORER,
                    metrics={"accuracy": EvalMetric(name="accuracy", value=correct / len(samples) if samples else 0)},
                )
            ],
        ),
        stats=EvalStats(started_at=run.get("started_at") or created, completed_at=run.get("finished_at") or created),
        samples=samples,
    )
    write_eval_log(log, str(out))
    return len(samples)


# a trajectory's token counts: a run that measured none (a scripted agent's) exports them as null, never as 0
TOKEN_FIELDS = ("tokens", "prompt_tokens", "completion_tokens", "cache_read_tokens", "cache_creation_tokens")


def _sample(store: Store, corpus: Corpus, run: RunRow, trajectory: TrajectoryRow, measured: bool) -> EvalSample:
    item = corpus.item(trajectory["item_id"])
    prompt = build_prompt(item, caps_of(run["caps"]), run["ablation"])
    opening: list[ChatMessage] = [
        ChatMessageSystem(content=prompt.system),
        ChatMessageUser(content=prompt.first_message),
    ]
    record = {k: v for k, v in trajectory.items() if k not in ("id", "run_id", "actions")}
    if not measured:
        record.update(dict.fromkeys(TOKEN_FIELDS, None))
    score = trajectory_score(record)
    steps = store.steps(trajectory["id"])
    return EvalSample(
        id=item.id,
        epoch=int(trajectory["replicate"]) + 1,
        input=opening,
        target="ABCD"[item.correct_index],
        messages=[*opening, *step_messages(steps)],
        metadata={"agenthop": record, "agenthop_calls": model_calls((s["kind"], s.get("text") or "") for s in steps)},
        scores={SCORER: score},
        total_time=trajectory.get("wall_time_s"),
    )


def step_messages(steps: Sequence[dict[str, Any]]) -> list[ChatMessage]:
    """A trajectory's stored steps as the conversation's messages (see the module docstring)."""
    out = []
    for k, step in enumerate(steps):
        message = _step_message(step, steps[k + 1] if k + 1 < len(steps) else None)
        if message is not None:
            out.append(message)
    return out


CUT_OFF = "cut off mid-call: "  # the text of the step that follows a reply the completion limit cut off mid-call


def _step_message(step: dict[str, Any], after: dict[str, Any] | None) -> ChatMessage | None:
    """One step as its message: a model turn (with the call cut off in it, which the next step names), a tool result,
    a nudge, a harness note of a model call; else none."""
    kind, text = step["kind"], step.get("text") or ""
    if kind == "assistant":
        calls = [_logged_call(c) for c in step.get("tool_args") or []]
        cut = (after.get("text") or "") if after is not None and after["kind"] == "cutoff" else ""
        facts = _facts(step, cut.removeprefix(CUT_OFF) if cut.startswith(CUT_OFF) else None)
        return ChatMessageAssistant(content=text, tool_calls=calls or None, metadata=facts.as_metadata())
    if kind == "tool":
        return ChatMessageTool(content=text, tool_call_id=step.get("tool_call_id"), function=step.get("tool_name"))
    if kind == "nudge":
        return ChatMessageUser(content=text)
    if kind == "harness" and text.startswith(MODEL_CALL_NOTES):
        return ChatMessageAssistant(content="", metadata={**_facts(step, None).as_metadata(), "harness": text})
    return None


def _logged_call(call: JsonObject) -> InspectCall:
    """A stored call as Inspect's (arguments that are not an object are logged as `{}`)."""
    args = call["args"]
    return InspectCall(id=str(call["id"]), function=str(call["name"]), arguments=args if isinstance(args, dict) else {})


def _facts(step: dict[str, Any], cut_off: str | None) -> TurnFacts:
    """What a model turn's step recorded of its call: its usage (raw usage too), finish reason, a call cut off."""
    stored = step.get("usage")
    usage = TurnUsage.from_metadata(stored) or TurnUsage(0, 0, 0, 0)
    raw = stored.get("raw") if isinstance(stored, dict) else None
    finish = step.get("finish_reason")
    return TurnFacts(
        usage, raw if isinstance(raw, dict) else None, finish if isinstance(finish, str) else None, cut_off
    )
