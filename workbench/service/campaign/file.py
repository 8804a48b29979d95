"""A campaign file: the panel's (or a study's) runs as one TOML file, read into typed records.

The file names the data, the caps and the prompts once; then each model (its model string, how it is reached,
its family and tier, the calls it may have in flight on its endpoint, its client options) with the runs to make of
it (each ablation, with its replicates), and optionally the sweeps (`scale sequential` grids) and the parallel
studies to run on some of the models. `workbench.service.campaign.plan` turns it into runs.

Every problem is a `CampaignFileError` naming the file, the line and the key (`panel.toml:14: models[2].ablations:
unknown 'open-book'`): the CLI says it in one line and exits 2, before anything is opened or run.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.service.launch import ABLATIONS, AGENTS, CLIENTS
from workbench.service.runname import label_problem

KEY_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")  # a campaign's or a model's part of a run's name


class CampaignFileError(ValueError):
    """A campaign file that cannot be used: `FILE:LINE: KEY: why`, one line."""

    exit_code = 2  # a user's mistake: said in one line, exit 2, nothing run


@dataclass(frozen=True)
class Caps:
    """The caps every run of the campaign plays under (None: the protocol's)."""

    budget: int | None = None
    max_turns: int | None = None
    max_tokens_total: int | None = None


@dataclass(frozen=True)
class ModelEntry:
    """One `[[models]]` entry: who plays, how it is reached, and which runs to make of it."""

    name: str  # its part of its runs' names
    agent: str
    model: str | None
    base_url: str | None
    api_key_env: str | None
    family: str | None
    tier: str | None
    calls_in_flight: int | None  # at most this many calls at once on its endpoint
    client: str | None
    temperature: float | None
    top_p: float | None
    top_k: int | None
    max_tokens: int | None
    reasoning_effort: str | None
    text_tools: bool | None
    timeout: float | None
    rpm: float | None
    ablations: tuple[str, ...]
    replicates: int
    line: int  # where its `[[models]]` header is


@dataclass(frozen=True)
class SweepEntry:
    """One `[[sweeps]]` entry: a `scale sequential` grid for some models."""

    models: tuple[str, ...]
    axis: str
    grid: str
    strategies: str
    verifier: str | None
    replicates: int
    line: int


@dataclass(frozen=True)
class ParallelEntry:
    """One `[[parallel]]` entry: a `scale parallel` study for some models (K samples per item, judged)."""

    models: tuple[str, ...]
    k: str
    judge: str
    judge_trials: int
    orders: int
    tie_rule: str
    line: int


@dataclass(frozen=True)
class CampaignFile:
    """A campaign file, read and checked; `source` locates a key for a later problem (a run's refusal)."""

    path: Path
    name: str
    data: str
    seed: int
    workers: int
    limit: int | None
    ids: tuple[str, ...]
    question_type: str | None
    depth: int | None
    prompts: str | None
    caps: Caps
    models: tuple[ModelEntry, ...]
    sweeps: tuple[SweepEntry, ...]
    parallel: tuple[ParallelEntry, ...]
    source: KeyLines

    def where(self, table: str | None, index: int | None, key: str | None) -> str:
        """`FILE:LINE` of a key (or of its table's header when the key is not written)."""
        return f"{self.path}:{self.source.line(table, index, key)}"


class KeyLines:
    """Where each table and key of a TOML file is written: `tomllib` keeps no positions, so the lines are scanned
    (headers `[t]` and `[[t]]`, counted per array of tables, and `key =` lines below them)."""

    HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?")
    KEY = re.compile(r"^\s*\"?([A-Za-z0-9_-]+)\"?\s*=")

    def __init__(self, text: str):
        self.keys: dict[tuple[str | None, int | None, str], int] = {}
        self.headers: dict[tuple[str, int | None], int] = {}
        table: str | None = None
        index: int | None = None
        counts: dict[str, int] = {}
        for number, line in enumerate(text.splitlines(), 1):
            header = self.HEADER.match(line)
            if header:
                table = header.group(2)
                if header.group(1) == "[[":
                    index = counts.get(table, 0)
                    counts[table] = index + 1
                else:
                    index = None
                self.headers.setdefault((table, index), number)
                continue
            key = self.KEY.match(line)
            if key:
                self.keys.setdefault((table, index, key.group(1)), number)

    def line(self, table: str | None, index: int | None, key: str | None) -> int:
        if key is not None and (table, index, key) in self.keys:
            return self.keys[(table, index, key)]
        if table is not None:
            return self.headers.get((table, index), 1)
        return 1


# ---------------------------------------------------------------- reading values


class _Table:
    """One TOML table being read: its values taken one by one with their types checked, its unknown keys refused."""

    def __init__(self, values: Any, where: _Where, table: str | None, index: int | None = None):
        self.where, self.table, self.index = where, table, index
        if not isinstance(values, dict):
            raise self.error(None, f"must be a table, got {_toml_type(values)}")
        self.values: dict[str, Any] = values
        self.taken: set[str] = set()

    def label(self, key: str | None) -> str:
        base = self.table if self.index is None else f"{self.table}[{self.index + 1}]"
        if key is None:
            return base or "the file"
        return f"{base}.{key}" if base else key

    def error(self, key: str | None, why: str) -> CampaignFileError:
        return CampaignFileError(f"{self.where.at(self.table, self.index, key)}: {self.label(key)}: {why}")

    def get(self, key: str, kind: type | tuple[type, ...], default: Any = None, required: bool = False) -> Any:
        self.taken.add(key)
        if key not in self.values:
            if required:
                raise self.error(None, f"'{key}' is needed")
            return default
        value = self.values[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if isinstance(value, bool) and bool not in kinds:
            raise self.error(key, f"must be {_kind_words(kinds)}, got a boolean")
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if not isinstance(value, kinds):
            raise self.error(key, f"must be {_kind_words(kinds)}, got {_toml_type(value)}")
        return value

    def positive(self, key: str, default: int | None = None) -> int | None:
        value = self.get(key, int, default)
        if value is not None and value < 1:
            raise self.error(key, f"must be at least 1, got {value}")
        return value

    def words(self, key: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        value = self.get(key, list, None)
        if value is None:
            return default
        if not all(isinstance(v, str) for v in value):
            raise self.error(key, "must be a list of strings")
        return tuple(value)

    def choice(self, key: str, choices: tuple[str, ...], default: str | None = None) -> str | None:
        value = self.get(key, str, default)
        if value is not None and value not in choices:
            raise self.error(key, f"unknown '{value}' (choose from {', '.join(choices)})")
        return value

    def done(self) -> None:
        """Refuse a key the table does not take (a typo would be ignored silently)."""
        for key in self.values:
            if key not in self.taken:
                raise self.error(key, f"unknown key (known: {', '.join(sorted(self.taken))})")


@dataclass(frozen=True)
class _Where:
    path: Path
    lines: KeyLines

    def at(self, table: str | None, index: int | None, key: str | None) -> str:
        return f"{self.path}:{self.lines.line(table, index, key)}"


def _kind_words(kinds: tuple[type, ...]) -> str:
    names = {int: "a whole number", float: "a number", str: "text (a TOML string)", bool: "true or false"}
    names[list] = "a list"
    names[dict] = "a table"
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {int: "a whole number", float: "a number", str: "a string", list: "a list", dict: "a table"}.get(
        type(value), type(value).__name__
    )


# ---------------------------------------------------------------- the file


TOP_TABLES = ("caps", "runs", "models", "sweeps", "parallel")
QUESTION_TYPES = ("single-target", "multi-target", "st", "mt")


def load_campaign(path: str | Path) -> CampaignFile:
    """The campaign file at `path`, checked in full; CampaignFileError (file, line, key) on the first problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CampaignFileError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise CampaignFileError(f"{path}: not UTF-8 text") from None
    return parse_campaign(text, path)


def parse_campaign(text: str, path: Path) -> CampaignFile:
    """`text` (the file at `path`) as a campaign."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        line = found.group(1) if found else max(1, len(text.splitlines()))
        why = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)).replace("end of document", "the end")
        raise CampaignFileError(f"{path}:{line}: not TOML: {why}") from None
    where = _Where(path, KeyLines(text))
    top = _Table(data, where, None)
    name = _name(top, "name", required=True)
    caps_table = _Table(top.get("caps", dict, {}), where, "caps")
    caps = Caps(
        budget=caps_table.positive("budget"),
        max_turns=caps_table.positive("max_turns"),
        max_tokens_total=caps_table.positive("max_tokens_total"),
    )
    caps_table.done()
    runs = _Table(top.get("runs", dict, {}), where, "runs")
    ablations = _ablations(runs, ("full",))
    replicates = runs.positive("replicates", 1) or 1
    runs.done()
    models = tuple(
        _model(entry, where, i, ablations, replicates) for i, entry in enumerate(top.get("models", list, []))
    )
    campaign = CampaignFile(
        path=path,
        name=name,
        data=top.get("data", str, "builtin"),
        seed=_non_negative(top, "seed"),
        workers=top.positive("workers", 8) or 8,
        limit=top.positive("limit"),
        ids=top.words("ids"),
        question_type=top.choice("question_type", QUESTION_TYPES),
        depth=_depth(top),
        prompts=top.get("prompts", str),
        caps=caps,
        models=models,
        sweeps=tuple(_sweep(entry, where, i) for i, entry in enumerate(top.get("sweeps", list, []))),
        parallel=tuple(_parallel(entry, where, i) for i, entry in enumerate(top.get("parallel", list, []))),
        source=where.lines,
    )
    top.done()
    _check_models(campaign, top, where)
    return campaign


def _name(table: _Table, key: str, required: bool = False, default: str | None = None) -> str:
    value = table.get(key, str, default, required=required)
    problem = label_problem(value or "", "a name", 40)
    if problem:
        raise table.error(key, problem)
    if not KEY_NAME.match(value):
        raise table.error(key, "letters, digits, '.', '_' and '-' only (it is part of run names)")
    return value


def _non_negative(table: _Table, key: str) -> int:
    value = table.get(key, int, 0)
    if value < 0:
        raise table.error(key, f"must be 0 or more, got {value}")
    return value


def _depth(table: _Table) -> int | None:
    value = table.get("depth", int)
    if value is not None and value not in (1, 2):
        raise table.error("depth", f"must be 1 or 2, got {value}")
    return value


def _ablations(table: _Table, default: tuple[str, ...]) -> tuple[str, ...]:
    values = table.words("ablations", default)
    for value in values:
        if value not in ABLATIONS:
            raise table.error("ablations", f"unknown '{value}' (choose from {', '.join(ABLATIONS)})")
    if not values:
        raise table.error("ablations", "is empty: name at least one (full, no-search, closed-book, gold-given)")
    if len(set(values)) < len(values):
        raise table.error("ablations", "names an ablation twice")
    return values


def _model(values: Any, where: _Where, index: int, ablations: tuple[str, ...], replicates: int) -> ModelEntry:
    table = _Table(values, where, "models", index)
    model = table.get("model", str)
    agent = table.choice("agent", AGENTS, "llm" if model is not None else None)
    if agent is None:
        raise table.error(None, "'model' is needed (a litellm model string), or 'agent' for a scripted agent")
    entry = ModelEntry(
        name=_name(table, "name", required=True),
        agent=agent,
        model=model,
        base_url=table.get("base_url", str),
        api_key_env=table.get("api_key_env", str),
        family=table.get("family", str),
        tier=table.get("tier", str),
        calls_in_flight=table.positive("calls_in_flight"),
        client=table.choice("client", CLIENTS),
        temperature=table.get("temperature", float),
        top_p=table.get("top_p", float),
        top_k=table.positive("top_k"),
        max_tokens=table.positive("max_tokens"),
        reasoning_effort=table.get("reasoning_effort", str),
        text_tools=table.get("text_tools", bool),
        timeout=table.get("timeout", float),
        rpm=table.get("rpm", float),
        ablations=_ablations(table, ablations),
        replicates=table.positive("replicates", replicates) or 1,
        line=where.lines.line("models", index, None),
    )
    table.done()
    if entry.calls_in_flight is not None and entry.agent != "llm":
        raise table.error("calls_in_flight", "applies to agent llm only (a scripted agent calls no endpoint)")
    return entry


def _sweep(values: Any, where: _Where, index: int) -> SweepEntry:
    table = _Table(values, where, "sweeps", index)
    grid = table.get("grid", (str, list), required=True)
    entry = SweepEntry(
        models=table.words("models"),
        axis=table.choice("axis", ("tokens", "points", "turns"), "tokens") or "tokens",
        grid=",".join(str(v) for v in grid) if isinstance(grid, list) else grid,
        strategies=table.get("strategies", str, ""),
        verifier=table.get("verifier", str),
        replicates=table.positive("replicates", 1) or 1,
        line=where.lines.line("sweeps", index, None),
    )
    table.done()
    return entry


def _parallel(values: Any, where: _Where, index: int) -> ParallelEntry:
    table = _Table(values, where, "parallel", index)
    k = table.get("k", (str, list), "1,2,4,8")
    entry = ParallelEntry(
        models=table.words("models"),
        k=",".join(str(v) for v in k) if isinstance(k, list) else k,
        judge=table.get("judge", str, "evidence"),
        judge_trials=table.positive("judge_trials", 1) or 1,
        orders=table.positive("orders", 8) or 8,
        tie_rule=table.choice("tie_rule", ("split", "first"), "split") or "split",
        line=where.lines.line("parallel", index, None),
    )
    table.done()
    return entry


def _check_models(campaign: CampaignFile, top: _Table, where: _Where) -> None:
    """Model names unique; the models a sweep or a study names exist; the models sharing an endpoint agree on
    its calls in flight (one limit per endpoint)."""
    if not campaign.models:
        raise top.error("models", "none given: add a [[models]] entry (a model, or a scripted agent) to run")
    seen: dict[str, int] = {}
    for i, model in enumerate(campaign.models):
        if model.name in seen:
            raise CampaignFileError(
                f"{where.at('models', i, 'name')}: models[{i + 1}].name: '{model.name}' is also "
                f"models[{seen[model.name] + 1}]'s name (each model's runs need a name of their own)"
            )
        seen[model.name] = i
    named = [("sweeps", i, e.models) for i, e in enumerate(campaign.sweeps)]
    named += [("parallel", i, e.models) for i, e in enumerate(campaign.parallel)]
    for table, i, models in named:
        for name in models:
            if name not in seen:
                raise CampaignFileError(
                    f"{where.at(table, i, 'models')}: {table}[{i + 1}].models: no model named '{name}' "
                    f"(the models are {', '.join(seen)})"
                )
    limits: dict[str, tuple[int, int]] = {}
    for i, model in enumerate(campaign.models):
        if model.calls_in_flight is None:
            continue
        key = endpoint_of(model)
        if key in limits and limits[key][0] != model.calls_in_flight:
            first = limits[key][1]
            raise CampaignFileError(
                f"{where.at('models', i, 'calls_in_flight')}: models[{i + 1}].calls_in_flight: "
                f"{model.calls_in_flight}, but models[{first + 1}] gives its endpoint {key} "
                f"{limits[key][0]}: one endpoint has one limit"
            )
        limits.setdefault(key, (model.calls_in_flight, i))


def endpoint_of(model: ModelEntry) -> str:
    """Where a model's calls go: its base URL, else its provider (the model string's first part); the scripted
    agents share one lane ("scripted": they call nothing, and run on this machine's cores)."""
    if model.agent != "llm":
        return "scripted"
    if model.base_url:
        return model.base_url.rstrip("/")
    provider, _, rest = (model.model or "").partition("/")
    return provider if rest else "openai"
