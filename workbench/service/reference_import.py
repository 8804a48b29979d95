"""Importing the reference harness's results: its trajectory files become one run in our store, by replay.

Each `experiments/{model}/{sample_id}.json` is replayed through our own sandbox by the ordinary
Runner with a `ReplayAgent` per item, so the run is resumable like any other and every diagnostic
works on it, with the full tool outputs the reference logged only 500 characters of. After replay
each trajectory is checked against its log (outputs by the truncation rule, termination, answer,
points) and the mismatches are kept in the run's config under `replay`; they are reported, never
fatal. What a replay cannot observe is then taken from the log: the wall time, the transient
retries that succeeded, the API errors of failed sample-level attempts, and `retry_count` as the
final attempt's number.

Tokens are kept as a native run keeps them: the trajectory's token fields and `tokens` (the cap
quantity) are the final attempt's, as the replay measured them from the logged per-turn usage;
what failed attempts added to the log's totals (prompt and completion tokens; the log gives cache
tokens only as totals, so those stay with the final attempt) is kept apart, per sample, in the
run's `replay.samples[id].failed_attempts`, and added back where the reference's own figures are
reproduced (`summary.json`), so an imported run's mean tokens mean the same as a native run's.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from sandbox import pricing
from sandbox.agents.replay import ReplayAgent, caps_from_logs, replay_factory
from sandbox.corpus import Corpus
from sandbox.episode import RetryPolicy
from sandbox.records import Caps, CapsRecord, Usage
from sandbox.reference_log import MAX_EXAMPLES, ReferenceLog, ReferenceLogError, ReplayCheck, check_replay
from sandbox.runner import RunEvent, Runner, RunSpec
from storage import Store
from storage.json_types import JsonObject, JsonValue
from storage.rows import RunRow, TrajectoryRow

SUMMARY_FILE = "summary.json"
NO_WAIT = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0, retry_after_cap_s=0)


class ReferenceImportError(ValueError):
    """Nothing importable: a missing directory, no trajectory files, several models mixed, or no known sample."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


class MismatchExample(TypedDict):
    """A sample whose replay differs from its log: the fields that differ and its first differing output."""

    sample_id: str
    fields: JsonObject  # field -> [logged, ours]
    outputs: list[JsonValue]


class RunTags(TypedDict):
    """A RunSpec's family and tier, and which of them were chosen (not derived)."""

    family: str | None
    tier: str | None
    tagged: tuple[str, ...]


@dataclass
class ImportSummary:
    """What an import did. Mismatch figures cover every checked trajectory of the run, earlier imports included."""

    run_name: str
    run_id: int
    source: str
    model: str | None
    caps: CapsRecord
    files: int  # trajectory files found in the directory
    imported: int  # replayed by this call
    already_done: int  # finished by an earlier import into the same run (resume)
    unreadable: list[dict[str, str]] = field(default_factory=list)  # {"path", "error"}
    unknown_samples: list[dict[str, str]] = field(default_factory=list)  # {"path", "sample_id"}
    skipped: list[dict[str, str]] = field(default_factory=list)  # {"path", "sample_id", "reason"}
    checked: int = 0
    outputs_compared: int = 0
    output_mismatches: int = 0
    samples_with_output_mismatches: int = 0
    field_mismatches: dict[str, int] = field(default_factory=dict)  # field -> number of samples
    examples: list[MismatchExample] = field(default_factory=list)

    def as_dict(self) -> JsonObject:
        """The summary as JSON (what the CLI prints)."""
        return asdict(self)


def import_reference(
    exp_dir: Path | str,
    corpus: Corpus,
    store: Store,
    run_name: str,
    model: str | None = None,
    *,
    caps: Caps | None = None,
    dataset: str | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    force: bool = False,
    family: str | None = None,
    tier: str | None = None,
) -> ImportSummary:
    """Replay a reference experiment directory into run `run_name`; see the module docstring.

    `exp_dir` is a model directory (`experiments/gpt-4.1`), or its parent when `model` names it.
    `model` (optional) keeps only files of that model; by default the files' `model` field names the
    run's model and must be the same in all of them. `caps` default to what the logs show
    (`caps_from_logs`). Raises ReferenceImportError (a ValueError) when nothing can be imported,
    and storage.RunConflict (a StoreError) when the run exists with another configuration. Logs that do not
    fit the dataset (unknown sample ids; correct_index, question type or depth not the item's) are refused
    before anything is written — they were run on another release — unless `force`. `family` and `tier` tag the
    run (default: derived from the logged model, `workbench.service.families`).
    """
    return asyncio.run(
        import_reference_async(
            exp_dir,
            corpus,
            store,
            run_name,
            model,
            caps=caps,
            dataset=dataset,
            on_event=on_event,
            force=force,
            family=family,
            tier=tier,
        )
    )


def _tags(derived: tuple[str | None, str | None], family: str | None, tier: str | None) -> RunTags:
    """The RunSpec's family and tier (chosen, else derived from the logged model) and which were chosen."""
    return {
        "family": derived[0],
        "tier": derived[1],
        "tagged": tuple(k for k, v in (("family", family), ("tier", tier)) if v),
    }


async def import_reference_async(
    exp_dir: Path | str,
    corpus: Corpus,
    store: Store,
    run_name: str,
    model: str | None = None,
    *,
    caps: Caps | None = None,
    dataset: str | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    force: bool = False,
    family: str | None = None,
    tier: str | None = None,
) -> ImportSummary:
    """`import_reference` for callers already inside an event loop (the TUI)."""
    from workbench.service import families

    directory, paths, loaded, run_model, caps = load_logs(exp_dir, corpus, model, caps, force)
    if not loaded.logs:
        raise ReferenceImportError(
            f"{directory}: nothing to import ({len(paths)} trajectory files, {len(loaded.unreadable)} unreadable, "
            f"{len(loaded.unknown)} for samples not in the dataset, {len(loaded.skipped)} skipped)"
        )
    ids = tuple(item.id for item in corpus.items if item.id in loaded.logs)  # dataset order
    spec = RunSpec(
        name=run_name,
        dataset=dataset or corpus.source,
        agent="replay",
        model=run_model,
        caps=caps,
        workers=1,
        item_ids=ids,
        max_attempts=1,
        retry=NO_WAIT,
        agent_options={"source": str(directory.resolve())},
        **_tags(families.chosen_or_derived(run_model, family, tier), family, tier),
    )
    agents: dict[str, ReplayAgent] = {}
    runner = Runner(spec, corpus, store, factory=replay_factory(loaded.logs, caps, agents), on_event=on_event)
    result = await runner.run()
    run = store.run(run_name)
    samples = _check_and_patch(store, run, loaded.logs, agents, run_model)
    return _summary(run, directory, run_model, caps, len(paths), len(agents), result["skipped"], loaded, samples)


def load_logs(
    exp_dir: Path | str, corpus: Corpus, model: str | None = None, caps: Caps | None = None, force: bool = False
) -> tuple[Path, list[Path], _Loaded, str, Caps]:
    """Read and check the logs, touching no store: (directory, files, logs kept and set aside, the run's model,
    caps). The CLI calls it before it opens the store, so a refused import writes nothing."""
    directory = trajectory_dir(Path(exp_dir), model)
    paths = trajectory_files(directory)
    loaded = _Loaded(known={item.id for item in corpus.items})
    for path in paths:
        loaded.add(path, model)
    run_model = _run_model(loaded.logs, model, directory)
    caps = caps or caps_from_logs(loaded.logs.values())
    loaded.drop_other_budgets(caps.budget)
    if not force:
        check_same_release(loaded, corpus, directory)
    return directory, paths, loaded, run_model, caps


def check_same_release(loaded: _Loaded, corpus: Corpus, directory: Path) -> None:
    """Refuse logs made on another release: replaying them would store a run whose every mismatch is the
    dataset's, not the model's. The reference copies correct_index, question_type and depth from the sample
    into each log (§4), so each is compared with the item of the same id. Unknown sample ids alone are only
    listed in the summary (`unknown_samples`): a log directory may cover a larger release than --data."""
    differ = _release_differences(loaded, corpus)
    if not differ:
        return
    problems = [
        f"{name} differs for {len(cases)} of {len(loaded.logs)} samples ({cases[0]})" for name, cases in differ.items()
    ]
    if loaded.unknown:  # alone they are only listed (a log directory may hold samples of a larger release)
        ids = ", ".join(u["sample_id"] for u in loaded.unknown[:3])
        problems.append(
            f"{len(loaded.unknown)} sample id(s) not in the dataset ({ids}{' …' if len(loaded.unknown) > 3 else ''})"
        )
    raise ReferenceImportError(
        f"{directory} does not match the dataset {corpus.source}: {'; '.join(problems)}. "
        "Check --data (the release the logs were run on), or pass --force to import anyway"
    )


def _release_differences(loaded: _Loaded, corpus: Corpus) -> dict[str, list[str]]:
    """Field → the samples whose log records another correct_index, question_type or depth than the item."""
    items = {item.id: item for item in corpus.items}
    differ: dict[str, list[str]] = {}
    for sid, log in loaded.logs.items():
        item = items[sid]
        for name, logged, ours in (
            ("correct_index", log.correct_index, item.correct_index),
            ("question_type", log.question_type, item.question_type),
            ("depth", log.depth, item.depth),
        ):
            if logged is not None and logged != ours:
                differ.setdefault(name, []).append(f"{sid}: log {logged!r}, dataset {ours!r}")
    return differ


# ---------------------------------------------------------------- files


def model_dir_name(model: str, strategy: str = "direct") -> str:
    """The reference's experiment directory for a model: `/` → `_`, plus `_{strategy}` unless direct."""
    name = model.replace("/", "_")
    return name if strategy == "direct" else f"{name}_{strategy}"


def trajectory_dir(exp_dir: Path, model: str | None) -> Path:
    """The directory holding the sample files: `exp_dir` itself, or `exp_dir/{model dir}` when `model` is given."""
    if not exp_dir.is_dir():
        raise ReferenceImportError(f"{exp_dir} is not a directory")
    if trajectory_files(exp_dir):
        return exp_dir
    if model is not None:
        candidate = exp_dir / model_dir_name(model)
        if candidate.is_dir() and trajectory_files(candidate):
            return candidate
    subdirs = sorted(p.name for p in exp_dir.iterdir() if p.is_dir() and trajectory_files(p))
    hint = f"; it has model directories: {', '.join(subdirs[:8])}" if subdirs else ""
    raise ReferenceImportError(f"{exp_dir} has no trajectory files (*.json besides {SUMMARY_FILE}){hint}")


def trajectory_files(directory: Path) -> list[Path]:
    """`*.json` directly in `directory` (so `_failed_attempts/` is excluded), minus `summary.json`, sorted."""
    return sorted(p for p in directory.glob("*.json") if p.is_file() and p.name != SUMMARY_FILE)


@dataclass
class _Loaded:
    """The logs to replay, keyed by sample id, and every file that was set aside, with why."""

    known: set[str]
    logs: dict[str, ReferenceLog] = field(default_factory=dict)
    paths: dict[str, Path] = field(default_factory=dict)
    unreadable: list[dict[str, str]] = field(default_factory=list)
    unknown: list[dict[str, str]] = field(default_factory=list)
    skipped: list[dict[str, str]] = field(default_factory=list)

    def add(self, path: Path, model: str | None) -> None:
        try:
            log = ReferenceLog.from_json(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, ReferenceLogError) as exc:
            self.unreadable.append({"path": str(path), "error": _reason(exc)})
            return
        sid = log.sample_id
        if sid in self.logs:
            self._skip(path, sid, f"duplicate sample_id (also in {self.paths[sid].name})")
        elif model is not None and log.model is not None and log.model != model:
            self._skip(path, sid, f"model {log.model!r} is not {model!r}")
        elif sid not in self.known:
            self.unknown.append({"path": str(path), "sample_id": sid})
        else:
            self.logs[sid], self.paths[sid] = log, path

    def drop_other_budgets(self, budget: int) -> None:
        for sid, log in list(self.logs.items()):
            if log.budget_total is not None and log.budget_total != budget:
                self._skip(self.paths[sid], sid, f"budget_total {log.budget_total} differs from the run's {budget}")
                del self.logs[sid]

    def _skip(self, path: Path, sid: str, reason: str) -> None:
        self.skipped.append({"path": str(path), "sample_id": sid, "reason": reason})


def _reason(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def _run_model(logs: dict[str, ReferenceLog], model: str | None, directory: Path) -> str:
    """The run's model: the one asked for, else the files' single `model` value (else the directory name)."""
    if model is not None:
        return model
    models = Counter(log.model for log in logs.values() if log.model is not None)
    if len(models) > 1:
        listed = ", ".join(f"{m} ({n})" for m, n in models.most_common(5))
        raise ReferenceImportError(f"{directory}: files from several models ({listed}); pass the model to import")
    return next(iter(models)) if models else directory.name


# ---------------------------------------------------------------- check and patch


def _check_and_patch(
    store: Store, run: RunRow, logs: dict[str, ReferenceLog], agents: dict[str, ReplayAgent], model: str
) -> dict[str, dict[str, Any]]:
    """Check every not-yet-checked trajectory of the run against its log, then patch in the logged-only figures.

    Checks are stored in the run config (`replay.samples`), so a resumed import checks only the new ones."""
    config = dict(run["config"])
    recorded = config.get("replay")
    replay: JsonObject = dict(recorded) if isinstance(recorded, dict) else {}
    checked = replay.get("samples")
    samples: dict[str, dict[str, Any]] = (
        {sid: s for sid, s in checked.items() if isinstance(s, dict)} if isinstance(checked, dict) else {}
    )
    price = pricing.find_price(model)
    for traj in store.trajectories(run["id"]):
        log = logs.get(traj["item_id"])
        if log is None or traj["item_id"] in samples:
            continue
        check = _replay_check(store, traj, log, agents.get(traj["item_id"]))
        fields = logged_only_fields(log, price, traj)
        failed = fields.pop("failed_attempts")
        store.update_trajectory(traj["id"], **fields)
        samples[traj["item_id"]] = _compact(check)
        if any(failed.values()):
            samples[traj["item_id"]]["failed_attempts"] = failed
    replay["samples"] = dict(samples)
    config["replay"] = replay
    store.update_run(run["id"], config=json.dumps(config, sort_keys=True))
    return samples


def _replay_check(store: Store, traj: Mapping[str, Any], log: ReferenceLog, agent: ReplayAgent | None) -> ReplayCheck:
    """The trajectory's replay against its log, with the log's records the episode did not reach or ran past."""
    check = check_replay(log, store.steps(traj["id"]), traj)
    if agent is not None and agent.unused:
        check.fields["records_not_replayed"] = [0, agent.unused]  # our episode ended before the reference's
    if agent is not None and agent.overrun:
        check.fields["calls_past_log"] = [0, agent.overrun]  # our episode went on after the log ended
    return check


def logged_only_fields(log: ReferenceLog, price: pricing.Price | None, replayed: TrajectoryRow) -> dict[str, Any]:
    """Trajectory fields a replay cannot observe, as the reference recorded them, and `failed_attempts`: the
    prompt and completion tokens its failed sample-level attempts added to the log's totals (log total −
    what the replay of the final attempt measured). The final attempt's tokens are the replay's own."""
    failed = {
        "prompt_tokens": log.prompt_tokens - (replayed.get("prompt_tokens") or 0),
        "completion_tokens": log.completion_tokens - (replayed.get("completion_tokens") or 0),
    }
    usage = Usage(
        prompt=replayed.get("prompt_tokens") or 0,
        completion=replayed.get("completion_tokens") or 0,
        cache_read=log.cache_read_tokens,
        cache_creation=log.cache_creation_tokens,
    )
    cost = pricing.cost(price, usage)
    return {
        "wall_time_s": log.wall_time_s if log.wall_time_s is not None else 0.0,
        "transient_retries": log.transient_retry_count,
        "api_errors": log.api_error_count,
        "cache_read_tokens": usage.cache_read,
        "cache_creation_tokens": usage.cache_creation,
        "attempt": log.retry_count,
        "cost_usd": cost["total_usd"] if cost else None,
        "failed_attempts": failed,
    }


def failed_attempt_tokens(run: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """Per sample id, the tokens failed attempts added to an imported run's logged totals ({} for other runs)."""
    samples = ((run.get("config") or {}).get("replay") or {}).get("samples") or {}
    return {sid: s["failed_attempts"] for sid, s in samples.items() if s.get("failed_attempts")}


def replay_mismatches(run: Mapping[str, Any]) -> list[str]:
    """Sample ids of an imported run whose replay did not reproduce the log (outputs or outcome fields)."""
    samples = ((run.get("config") or {}).get("replay") or {}).get("samples") or {}
    return sorted(sid for sid, s in samples.items() if s.get("output_mismatches") or s.get("fields"))


def _compact(check: ReplayCheck) -> dict[str, Any]:
    return {"outputs_compared": check.outputs_compared} if check.ok else check.as_dict()


def _summary(
    run: RunRow,
    directory: Path,
    model: str,
    caps: Caps,
    n_files: int,
    imported: int,
    already_done: int,
    loaded: _Loaded,
    samples: dict[str, dict[str, Any]],
) -> ImportSummary:
    summary = ImportSummary(
        run_name=run["name"],
        run_id=run["id"],
        source=str(directory),
        model=model,
        caps=caps.as_dict(),
        files=n_files,
        imported=imported,
        already_done=already_done,
        unreadable=loaded.unreadable,
        unknown_samples=loaded.unknown,
        skipped=loaded.skipped,
        checked=len(samples),
    )
    fields: Counter[str] = Counter()
    for sid, s in samples.items():
        summary.outputs_compared += s.get("outputs_compared", 0)
        summary.output_mismatches += s.get("output_mismatches", 0)
        summary.samples_with_output_mismatches += int(bool(s.get("output_mismatches")))
        fields.update((s.get("fields") or {}).keys())
        if (s.get("examples") or s.get("fields")) and len(summary.examples) < MAX_EXAMPLES:
            summary.examples.append(
                {"sample_id": sid, "fields": s.get("fields") or {}, "outputs": (s.get("examples") or [])[:1]}
            )
    summary.field_mismatches = dict(sorted(fields.items()))
    return summary
