"""Inspect logs of the `agenthop` task as a run in the store (`import-inspect LOG… --run NAME`), by replay.

As `import-reference` does for the reference harness's files: every sample's assistant messages are handed, one
model call at a time, to the ordinary Runner's episode (`LogReplay`), so our own sandbox executes each call under
the log's caps and every event becomes a step; each turn carries the tokens the log measured for it (its message's
`metadata["usage"]`, else its model event's usage) with its raw usage, finish reason and cut-off call, a failed model
call the log kept (`agenthop_calls`, `calls`) is raised where the episode met it, and the run is tagged with the
log's model for family and tier.
Each replayed trajectory is then checked against its sample: the tool results (without their status footers)
and the ending, answer, points and tokens the task recorded; the mismatches are kept in the run's config under
`inspect` and reported, never fatal. A log of another task, or one whose samples are not the dataset's items, is
refused before anything is written (exit 2, naming it), as is a log made with a prompts file unless the same file
is given (the replay sends it).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, TypedDict

from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool

from sandbox import pricing
from sandbox.agents.base import InfrastructureError, split_footer
from sandbox.corpus import Corpus
from sandbox.episode import RetryPolicy
from sandbox.extra_tools.registry import SettingRecord
from sandbox.prompt_set import Prompts
from sandbox.records import AssistantTurn, Caps, CapsRecord, Item, ToolSchema, WireMessage
from sandbox.runner import RunEvent, Runner, RunSpec
from storage import Store
from storage.json_types import JsonObject, JsonValue
from workbench.service.inspect.calls import CallEntry, failure, logged_calls
from workbench.service.inspect.conversation import logged_turn, usage_of
from workbench.service.inspect.task import TASK_NAME, caps_of

TASKS = (f"agenthop_workbench/{TASK_NAME}", TASK_NAME)  # the registered name, and the bare one from a source tree
CHECKED = (
    "termination",
    "answer",
    "points_used",
    "turns",
    "tokens",
    "cut_off_turns",
    "lost_calls",
    "error_kind",
    "api_errors",
    "transient_retries",
)
NO_WAIT = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0, retry_after_cap_s=0)


class InspectImportError(ValueError):
    """A log that cannot be imported: unreadable, of another task, of another dataset or setting."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2


@dataclass(frozen=True)
class LoggedSample:
    """One sample of a log: what the model said turn by turn, and what the log says came back and how it ended."""

    item_id: str
    replicate: int
    turns: tuple[AssistantTurn, ...]
    tool_texts: tuple[str, ...]  # every tool result, its footer cut
    ended: JsonObject  # the task's trajectory record as the log holds it (empty for a log that kept none)
    calls: tuple[CallEntry, ...] = ()  # every model call in order, failed ones too (`calls`; empty: not kept)


@dataclass(frozen=True)
class InspectLogs:
    """The samples of one or more logs of one setting and one model."""

    paths: tuple[Path, ...]
    model: str | None
    agent: str
    dataset: str | None
    caps: Caps
    ablation: str
    extra_tools: SettingRecord | None
    prompts: Prompts | None
    samples: dict[tuple[str, int], LoggedSample]
    family: str | None = None  # an exported run's tags (None: a log of the task, tagged by its model)
    tier: str | None = None


@dataclass
class InspectImportSummary:
    """What an import did, and how well the replay reproduced the logs."""

    run_name: str
    run_id: int
    sources: list[str]
    model: str | None
    caps: CapsRecord
    samples: int
    imported: int
    checked: int = 0
    tool_results_compared: int = 0
    tool_result_mismatches: int = 0
    field_mismatches: dict[str, int] = field(default_factory=dict)  # field -> samples
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"sample", "reason"}

    def as_dict(self) -> JsonObject:
        """The summary as JSON (what the CLI prints)."""
        return asdict(self)


class LogReplay:
    """An agent returning a logged sample's assistant turns, one per model call (an `Agent`)."""

    name = "inspect-replay"

    def __init__(self, sample: LoggedSample, price: pricing.Price | None = None):
        self.sample = sample
        self.price = price  # the model's price: each turn's cost from its logged usage, as our own loop prices it
        self.pos = 0
        self.call = 0  # the model calls answered so far (`LoggedSample.calls`), failed ones included

    async def act(self, messages: list[WireMessage], tools: tuple[ToolSchema, ...]) -> AssistantTurn:
        """The next logged reply; where the log kept a failed call in its place, the error the episode met."""
        calls = self.sample.calls
        if self.call < len(calls):
            self.call += 1
            entry = calls[self.call - 1]
            if not isinstance(entry, str):  # a failed call (REPLY is the only text): raised where the episode met it
                raise failure(entry)
        if self.pos >= len(self.sample.turns):
            raise InfrastructureError(f"replay log exhausted: the sample logged {len(self.sample.turns)} model replies")
        self.pos += 1
        turn = self.sample.turns[self.pos - 1]
        priced = pricing.cost(self.price, turn.usage)
        return replace(turn, cost_usd=priced["total_usd"]) if priced else turn


def read_logs(paths: Sequence[Path], corpus: Corpus, prompts: Prompts | None = None) -> InspectLogs:
    """Read and check the logs, touching no store (InspectImportError names the first problem). `prompts`: the
    prompts file the task was given (`-T prompts`), which the replay sends in its turn."""
    logs = [_read(path) for path in paths]
    first = logs[0]
    record = _setting(paths[0], first)
    _same_prompts(paths[0], record, prompts)
    samples: dict[tuple[str, int], LoggedSample] = {}
    for path, log in zip(paths, logs, strict=True):
        _same_setting(path, log, paths[0], first, record)
        for logged in _finished_samples(path, log, corpus):
            samples.setdefault((logged.item_id, logged.replicate), logged)
    if not samples:
        raise InspectImportError(f"{paths[0]}: no finished sample to import")
    return InspectLogs(
        paths=tuple(paths),
        model=record.get("model", first.eval.model),  # an exported run's own model (None: none)
        agent=str(record.get("agent") or "inspect"),
        dataset=record.get("dataset"),
        caps=caps_of(record["caps"]),
        ablation=str(record.get("ablation") or "full"),
        extra_tools=record.get("extra_tools"),
        prompts=prompts,
        samples=samples,
        family=record.get("family"),
        tier=record.get("tier"),
    )


def _same_setting(path: Path, log: EvalLog, first_path: Path, first: EvalLog, record: Mapping[str, Any]) -> None:
    """A log of the same model and setting as the first one given."""
    if log.eval.model != first.eval.model:
        raise InspectImportError(f"{path}: model {log.eval.model!r}, not {first.eval.model!r} as in {first_path}")
    if _setting(path, log) != record:
        raise InspectImportError(f"{path}: another setting (caps, ablation, extra tools) than {first_path}")


def _finished_samples(path: Path, log: EvalLog, corpus: Corpus) -> list[LoggedSample]:
    """The log's samples Inspect finished (one it could not finish has nothing to replay)."""
    return [_logged(path, sample, corpus) for sample in log.samples or [] if sample.error is None]


def logged_dataset(path: Path) -> str:
    """The dataset a log's task was run on (its setting's key: `builtin` or a release directory)."""
    record = _setting(path, _read(path, header_only=True))
    return str(record.get("dataset") or "builtin")


def _read(path: Path, header_only: bool = False) -> EvalLog:
    try:
        log = read_eval_log(str(path), header_only=header_only)
    except FileNotFoundError:
        raise InspectImportError(f"{path}: no such file") from None
    except PermissionError:
        raise InspectImportError(f"{path}: cannot be read (permission denied)") from None
    except Exception:  # noqa: BLE001 — any other reader failure (a zip without its directory, JSON of another shape)
        # is a file that is not a log; the reader's own words ("EOCD not found", a pydantic dump) would not help
        raise InspectImportError(f"{path}: not an Inspect log (.eval or .json)") from None
    if log.eval.task not in TASKS:
        raise InspectImportError(
            f"{path}: a log of the task {log.eval.task!r}; only logs of {TASKS[0]} can be imported"
        )
    return log


def _setting(path: Path, log: EvalLog) -> dict[str, Any]:
    """The task's setting the log's eval metadata holds (`agenthop`), its caps checked."""
    record = (log.eval.metadata or {}).get("agenthop")
    if not isinstance(record, dict):
        raise InspectImportError(f"{path}: eval.metadata.agenthop is missing (the task's setting)")
    try:
        caps_of(record["caps"])
    except (KeyError, TypeError, ValueError) as exc:
        raise InspectImportError(f"{path}: eval.metadata.agenthop.caps is not a setting's caps ({exc})") from None
    return record


def _same_prompts(path: Path, record: Mapping[str, Any], prompts: Prompts | None) -> None:
    """The replay sends `prompts` (None: ours): they must be the ones the log's task sent (its digest)."""
    logged = record.get("prompts")
    given = None if prompts is None or prompts.is_default else prompts.digest
    if logged == given:
        return
    if given is None:
        raise InspectImportError(
            f"{path}: made with a prompts file (digest {logged}); pass that file with --prompts to replay it"
        )
    raise InspectImportError(
        f"{path}: made with {'our prompts' if logged is None else f'prompts {logged}'}, "
        f"not the --prompts file (digest {given})"
    )


def _logged(path: Path, sample: EvalSample, corpus: Corpus) -> LoggedSample:
    """A sample of an item of the dataset (with the dataset's answer as its target): its turns, tool texts, ending."""
    item_id = str(sample.id)
    try:
        item = corpus.item(item_id)
    except KeyError:
        raise InspectImportError(f"{path}: sample {item_id!r} is not an item of the dataset {corpus.source}") from None
    _same_item(path, sample, item)
    tools = tuple(split_footer(m.text)[0] for m in sample.messages if isinstance(m, ChatMessageTool))
    metadata = sample.metadata or {}
    ended = metadata.get("agenthop")
    return LoggedSample(
        item_id,
        int(sample.epoch) - 1,
        _logged_turns(sample),
        tools,
        ended if isinstance(ended, dict) else {},
        logged_calls(metadata.get("agenthop_calls")),
    )


def _logged_turns(sample: EvalSample) -> tuple[AssistantTurn, ...]:
    """The sample's assistant turns, each with the usage its message carries, else its model event's."""
    events = [e.output.usage for e in sample.events if isinstance(e, ModelEvent) and e.error is None]
    turns = []
    for k, message in enumerate(m for m in sample.messages if isinstance(m, ChatMessageAssistant)):
        turn = logged_turn(message)
        if "usage" not in (message.metadata or {}) and k < len(events):  # a log whose messages carry none
            turn.usage = usage_of(events[k])
        turns.append(turn)
    return tuple(turns)


def _same_item(path: Path, sample: EvalSample, item: Item) -> None:
    target = sample.target if isinstance(sample.target, str) else "".join(sample.target)
    if target and target != "ABCD"[item.correct_index]:
        raise InspectImportError(
            f"{path}: sample {item.id!r} has target {target!r}, the dataset's answer is "
            f"{'ABCD'[item.correct_index]!r} (a log of another release?)"
        )


def import_inspect(
    logs: InspectLogs,
    corpus: Corpus,
    store: Store,
    run_name: str,
    *,
    dataset: str,
    on_event: Callable[[RunEvent], None] | None = None,
    family: str | None = None,
    tier: str | None = None,
) -> InspectImportSummary:
    """Replay `logs` into run `run_name` and check each trajectory against its sample (see the module docstring)."""
    spec = _replay_spec(logs, corpus, run_name, dataset, family or logs.family, tier or logs.tier)
    price = pricing.find_price(logs.model) if logs.model else None  # as import-reference prices its logs

    def factory(item: Item, replicate: int, attempt: int) -> LogReplay:
        sample = logs.samples.get((item.id, replicate))
        if sample is None:  # an item logged in some epochs only: the missing ones end at once as errors
            sample = LoggedSample(item.id, replicate, (), (), {})
        return LogReplay(sample, price)

    result = asyncio.run(Runner(spec, corpus, store, factory=factory, on_event=on_event).run())
    run = store.run(run_name)
    summary = InspectImportSummary(
        run_name=run_name,
        run_id=run["id"],
        sources=[str(p) for p in logs.paths],
        model=logs.model,
        caps=logs.caps.as_dict(),
        samples=len(logs.samples),
        imported=len(logs.samples) - int(result.get("skipped") or 0),
    )
    _check(store, run, logs, summary)
    return summary


def _replay_spec(
    logs: InspectLogs, corpus: Corpus, run_name: str, dataset: str, family: str | None, tier: str | None
) -> RunSpec:
    """The run the replay makes: the logs' setting over the logged items (in dataset order), one attempt each,
    tagged with the family and tier given (a flag wins over an exported run's own tag) or derived from the model."""
    from workbench.service import families

    logged = {item_id for item_id, _ in logs.samples}
    derived = families.chosen_or_derived(logs.model, family, tier)
    return RunSpec(
        name=run_name,
        dataset=dataset,
        agent=logs.agent,
        model=logs.model,
        caps=logs.caps,
        ablation=logs.ablation,
        replicates=max(r for _, r in logs.samples) + 1,
        workers=1,
        item_ids=tuple(item.id for item in corpus.items if item.id in logged),
        max_attempts=1,
        retry=NO_WAIT,
        agent_options={"source": [str(p.resolve()) for p in logs.paths]},
        extra_tools=logs.extra_tools,
        prompts=logs.prompts,
        family=derived[0],
        tier=derived[1],
        tagged=tuple(k for k, v in (("family", family), ("tier", tier)) if v),
    )


class SampleCheck(TypedDict):
    """How one replayed trajectory compares with its logged sample (kept in the run's config)."""

    tool_results_compared: int
    tool_result_mismatches: int
    fields: dict[str, list[JsonValue]]  # a checked field that differs: [logged, replayed]


def _check(store: Store, run: Mapping[str, Any], logs: InspectLogs, summary: InspectImportSummary) -> None:
    """Compare every trajectory with its sample; the mismatches go to the run's config (`inspect.samples`)."""
    checks: dict[str, SampleCheck] = {}
    fields: dict[str, int] = {}
    for trajectory in store.trajectories(run["id"]):
        sample = logs.samples.get((trajectory["item_id"], trajectory["replicate"]))
        if sample is None:
            continue
        check = _sample_check(store, trajectory, sample)
        for key in check["fields"]:
            fields[key] = fields.get(key, 0) + 1
        summary.checked += 1
        summary.tool_results_compared += check["tool_results_compared"]
        summary.tool_result_mismatches += check["tool_result_mismatches"]
        checks[f"{trajectory['item_id']}#{trajectory['replicate']}"] = check
    summary.field_mismatches = dict(sorted(fields.items()))
    config = dict(run["config"])
    config["inspect"] = {"sources": summary.sources, "samples": checks}
    store.update_run(run["id"], config=json.dumps(config, sort_keys=True))


def _sample_check(store: Store, trajectory: Mapping[str, Any], sample: LoggedSample) -> SampleCheck:
    """The replayed tool results against the logged ones (footers cut), and the checked fields that differ."""
    replayed = [s["text"] or "" for s in store.steps(trajectory["id"]) if s["kind"] == "tool"]
    # the shorter list's length is compared pairwise; the surplus counts as mismatches
    differ = sum(1 for a, b in zip(replayed, sample.tool_texts, strict=False) if a != b)
    return {
        "tool_results_compared": min(len(replayed), len(sample.tool_texts)),
        "tool_result_mismatches": differ + abs(len(replayed) - len(sample.tool_texts)),
        "fields": {
            key: [sample.ended[key], trajectory[key]]
            for key in CHECKED  # a value the log left null (tokens no one measured) has nothing to be checked against
            if sample.ended.get(key) is not None and sample.ended[key] != trajectory[key]
        },
    }
