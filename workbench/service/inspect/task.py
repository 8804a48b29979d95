"""The `agenthop` task as Inspect runs it: each item a sample, each sample one episode of our own sandbox.

The solver plays `sandbox.episode.Episode` — the loop every agent of the workbench plays — with an agent whose turns
are Inspect's model (`workbench.service.inspect.agent`), so the model reads byte for byte what our own loop sends and
the sample ends as ours ends (an answer, the budget, the turn cap, the token cap or an error). The scorer records
correctness (C/I) and the four axes' values for the one trajectory in the score's metadata (docs/inspect.md).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TypedDict

from inspect_ai import Task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageSystem, ChatMessageUser, GenerateConfig, get_model
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver

from sandbox.agents.presets import DEFAULT_MAX_TOKENS
from sandbox.corpus import Corpus
from sandbox.episode import Episode, RetryPolicy
from sandbox.extra_tools.registry import SettingRecord
from sandbox.extra_tools.setting import open_extra_tools, resolve
from sandbox.prompt_set import Prompts, load_prompts
from sandbox.prompts import ABLATIONS, build_prompt
from sandbox.records import Caps, Trajectory
from sandbox.runner import RunSpec
from sandbox.runner.store_records import item_meta
from storage.json_types import JsonObject, JsonValue
from workbench.service import paths
from workbench.service.datasets import dataset_key, open_dataset
from workbench.service.inspect.agent import InspectModelAgent
from workbench.service.inspect.calls import model_calls

TASK_NAME = "agenthop"  # Inspect's name for it: `agenthop_workbench/agenthop`
# Inspect retries a failed call itself (its own backoff): the episode counts what still fails, without waiting again
NO_WAIT = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0, retry_after_cap_s=0)
_CORPORA: dict[tuple[str, Path], Corpus] = {}  # one open corpus per dataset and cache for the process


@dataclass(frozen=True)
class TaskOptions:
    """The task's `-T` options: the dataset, how many items, the ablation, the caps, the extra tools, the prompts."""

    data: str = "builtin"
    limit: int | None = None
    ablation: str = "full"
    budget: int = 30
    max_turns: int = 20
    extra_tools: str | None = None
    prompts: str | None = None


@dataclass(frozen=True)
class Setting:
    """What every sample of one task plays under (the run identity an imported log takes back)."""

    corpus: Corpus
    base: Caps  # the caps asked for (budget, turns)
    caps: Caps  # what the episode plays under: the ablation's disabled tools and the extra tools' costs added
    ablation: str
    extra_tools: SettingRecord | None
    prompts: Prompts | None

    def record(self, data: str) -> dict[str, Any]:
        """The task's metadata in the log: what `import-inspect` rebuilds the run from."""
        return setting_record(
            dataset_key(data),
            self.base,
            self.ablation,
            self.extra_tools,
            None if self.prompts is None or self.prompts.is_default else self.prompts.digest,
        )


def setting_record(
    dataset: str, caps: Caps, ablation: str, extra_tools: SettingRecord | None, prompts: str | None
) -> dict[str, Any]:
    """The `agenthop` entry of a log's eval metadata: the dataset key, the caps asked for, the ablation, the extra
    tools' setting and the prompts' digest (None: ours). Written by the task and by `export --format inspect`."""
    return {
        "dataset": dataset,
        "caps": caps.as_dict(),
        "ablation": ablation,
        "extra_tools": extra_tools,
        "prompts": prompts,
    }


def caps_of(caps: JsonValue) -> Caps:
    """The caps a setting record or a run holds as JSON (`Caps.as_dict`); KeyError, TypeError or ValueError when they
    are not caps."""
    record = _json_object(caps)
    return Caps(
        budget=_json_int(record["budget"]),
        max_turns=_json_int(record["max_turns"]),
        max_tokens_total=_json_int(record["max_tokens_total"]),
        costs=tuple((str(k), _json_int(v)) for k, v in _json_object(record["costs"]).items()),
        disabled_tools=tuple(str(t) for t in _json_list(record.get("disabled_tools"))),
    )


def _json_object(value: JsonValue) -> JsonObject:
    """A JSON value that must be an object (TypeError otherwise)."""
    if not isinstance(value, dict):
        raise TypeError(f"not an object: {value!r}")
    return value


def _json_int(value: JsonValue) -> int:
    """A JSON value that must be a whole number or its text (TypeError or ValueError otherwise)."""
    if not isinstance(value, int | float | str):
        raise TypeError(f"not a number: {value!r}")
    return int(value)


def _json_list(value: JsonValue) -> list[JsonValue]:
    """A JSON value that must be an array, or null or absent: empty (TypeError otherwise)."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"not an array: {value!r}")
    return value


class TaskOptionError(ValueError):
    """A `-T` option the task cannot take, named with what it takes."""


def check_options(options: TaskOptions) -> None:
    """TaskOptionError for the first option out of range: Inspect prints it, and runs nothing."""
    if options.ablation not in ABLATIONS:
        raise TaskOptionError(f"-T ablation={options.ablation}: choose from {', '.join(ABLATIONS)}")
    for name, value, least in (("budget", options.budget, 0), ("max_turns", options.max_turns, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise TaskOptionError(f"-T {name}={value}: a whole number of at least {least}")
    if options.limit is not None and (
        isinstance(options.limit, bool) or not isinstance(options.limit, int) or options.limit < 1
    ):
        raise TaskOptionError(f"-T limit={options.limit}: a whole number of at least 1 (or leave it out: every item)")


def setting(options: TaskOptions) -> Setting:
    """Open the dataset and resolve the caps, extra tools and prompts (ValueError names a bad option)."""
    check_options(options)
    key = (options.data, paths.cache_dir())
    if key not in _CORPORA:
        _CORPORA[key] = open_dataset(options.data, paths.cache_dir())[0]
    extra = resolve(options.extra_tools, None, "full", 1, 0) if options.extra_tools else None
    prompts = load_prompts(options.prompts) if options.prompts else None
    base = Caps(budget=options.budget, max_turns=options.max_turns)
    spec = RunSpec(
        name=TASK_NAME,
        dataset=dataset_key(options.data),
        agent="inspect",
        caps=base,
        ablation=options.ablation,
        extra_tools=extra,
        prompts=prompts,
    )
    return Setting(_CORPORA[key], base, spec.effective_caps(), options.ablation, extra, prompts)


def offline_tokenizer() -> None:
    """Point tiktoken at the encodings litellm (a dependency) ships, unless the environment chose a directory:
    Inspect's `mockllm/model` counts its usage with tiktoken's o200k_base, which tiktoken would otherwise download,
    so the task would not run offline."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return
    bundled = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    if bundled.is_dir():
        os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(bundled))


def build_task(options: TaskOptions) -> Task:
    """The task: the dataset's first `limit` items as samples, the episode as solver, correctness and axes as score."""
    offline_tokenizer()
    played = setting(options)
    items = played.corpus.items[: options.limit] if options.limit is not None else played.corpus.items
    samples = []
    for item in items:
        prompt = build_prompt(item, played.caps, played.ablation, texts=played.prompts)
        samples.append(
            Sample(
                id=item.id,
                input=[ChatMessageSystem(content=prompt.system), ChatMessageUser(content=prompt.first_message)],
                target="ABCD"[item.correct_index],
                metadata=dict(item_meta(item)),  # Inspect takes a plain dict
            )
        )
    return Task(
        dataset=MemoryDataset(samples, name=played.corpus.source),
        solver=agenthop_episode(played),
        scorer=agenthop_score(),
        # our loop's completion limit per call, sent as ours sends it (`inspect eval --max-tokens` overrides it)
        config=GenerateConfig(max_tokens=DEFAULT_MAX_TOKENS),
        metadata={"agenthop": played.record(options.data)},
    )


@solver
def agenthop_episode(played: Setting) -> Solver:
    """One episode of our sandbox per sample, its turns generated by the task's model."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        item = played.corpus.item(str(state.sample_id))
        agent = InspectModelAgent(get_model())
        async with open_extra_tools(played.extra_tools) as extra:
            prompt = build_prompt(item, played.caps, played.ablation, texts=played.prompts, extra_tools=extra)
            episode = Episode(played.corpus.view(item), agent, played.caps, prompt, retry=NO_WAIT, extra_tools=extra)
            trajectory = await episode.run()
        state.messages = agent.conversation(episode.messages, episode.steps)
        if agent.output is not None:
            state.output = agent.output
        state.metadata["agenthop"] = trajectory_record(trajectory)
        # every model call in order, the failed ones too (they leave no message): what a replay of the log meets
        state.metadata["agenthop_calls"] = model_calls((s.kind, s.text or "") for s in episode.steps)
        state.completed = True
        return state

    return solve


def trajectory_record(trajectory: Trajectory) -> JsonObject:
    """The trajectory as the sample's metadata keeps it (JSON values only)."""
    record = asdict(trajectory)
    record["reads"] = [list(read) for read in trajectory.reads]
    return record


class Axes(TypedDict):
    """One trajectory's values on the four axes (docs/metrics.md), as a score's metadata holds them."""

    paper_recall: JsonValue
    section_recall: JsonValue
    conversion: bool | None
    calls_per_turn: float | None
    tokens: JsonValue
    turns: JsonValue
    points: JsonValue


def trajectory_axes(record: Mapping[str, Any]) -> Axes:
    """The four axes' values for one trajectory (docs/metrics.md): search (paper and section recall), synthesis
    (conversion: its correctness when it recalled every gold paper, else not counted), tool use (calls per turn
    that called) and resources (cap tokens, turns, points). A run's axes are these values pooled."""
    recalled = record.get("paper_recall")
    calling = record.get("turns_with_calls") or 0
    return {
        "paper_recall": recalled,
        "section_recall": record.get("section_recall"),
        "conversion": bool(record["correct"]) if recalled else None,
        "calls_per_turn": (record.get("tool_calls") or 0) / calling if calling else None,
        "tokens": record.get("tokens"),
        "turns": record.get("turns"),
        "points": record.get("points_used"),
    }


def trajectory_score(record: Mapping[str, Any]) -> Score:
    """A trajectory's Inspect score, the same for a sample the task played and for a stored run exported: C/I, the
    answer, the ending, and in the metadata the four axes' values and the tokens."""
    return Score(
        value=CORRECT if record["correct"] else INCORRECT,
        answer=record.get("answer"),
        explanation=f"ended by {record['termination']}",
        metadata={
            **trajectory_axes(record),
            "termination": record["termination"],
            "predicted_index": record["predicted_index"],
            "chosen_type": record["chosen_type"],
            "prompt_tokens": record["prompt_tokens"],
            "completion_tokens": record["completion_tokens"],
        },
    )


@scorer(metrics=[accuracy(), stderr()])
def agenthop_score() -> Scorer:
    """C when the submitted letter is the item's answer; the metadata holds the axes, the ending and the tokens."""

    async def score(state: TaskState, target: Target) -> Score:
        record = state.metadata.get("agenthop")
        if not isinstance(record, dict):
            return Score(value=INCORRECT, explanation="no episode was played for this sample")
        return trajectory_score(record)

    return score
