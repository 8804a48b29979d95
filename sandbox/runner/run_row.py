"""The run's row in the store: its columns and config as created, and what a resume records into it (what this launch
asked for, the servers and clients it used, the tags the person chose again)."""

from __future__ import annotations

import json
from typing import Required, TypedDict

from sandbox.citations import HOP_RULE
from sandbox.corpus import Corpus
from sandbox.extra_tools.registry import SettingRecord
from sandbox.prompt_set import to_toml
from sandbox.prompts import Prompts, template_hash
from sandbox.records import Caps, SliceRecord
from sandbox.runner.spec import READING_OPTIONS, RunSpec
from sandbox.sections import LABEL_RESOLUTION
from storage import Store
from storage.json_types import JsonObject, JsonValue
from storage.records import RunFields

VERSION = "0.1.0"


class RunConfig(TypedDict, total=False):
    """A run's config as created (`run_config`): how its samples are read (`scaling`), its execution (server
    addresses, clients, workers) and its selection; `extra_tools` on a general-agent run only, `clients` on an LLM
    run only. A resume adds what it asked for (`resumed_config`)."""

    scaling: Required[JsonObject | None]
    context_budget: Required[int | None]
    agent_options: Required[JsonObject]
    base_urls: Required[list[str]]
    workers: Required[int]
    slice: Required[SliceRecord]
    extra_tools: SettingRecord
    clients: list[str]
    pricing: list[JsonObject]  # the `[[pricing]]` rows the run's calls were priced by (the config file's)


class Origin(TypedDict):
    """The Hub repository and commit a run's dataset was opened from (None for a directory or the built-in one)."""

    dataset_repo: str | None
    dataset_revision: str | None


def prompt_hash(prompts: Prompts) -> str:
    """What a run records as its `prompt_hash`: the templates' hash for ours (as every run before `--prompts`
    recorded), the set's digest for any other, so two runs' prompts differ exactly when their hashes do."""
    return template_hash() if prompts.is_default else prompts.digest


def run_fields(spec: RunSpec, corpus: Corpus, caps: Caps, client: str | None) -> RunFields:
    """The run's row as created: what ran, on what data, under which caps, prompts and settings. `client`: which
    model client the run's calls use (None for a scripted run)."""
    return {
        "kind": spec.kind,
        "agent": spec.agent,
        "model": spec.model,
        "dataset": spec.dataset,
        "dataset_fingerprint": corpus.fingerprint,
        "ablation": spec.ablation,
        "seed": spec.seed,
        "replicates": spec.replicates,
        "caps": caps.as_dict(),
        "version": VERSION,
        "prompt_hash": prompt_hash(spec.prompt_set()),
        "prompts": to_toml(spec.prompt_set()),
        "group_name": spec.group,
        "label_resolution": LABEL_RESOLUTION,
        "hop_rule": HOP_RULE,
        "family": spec.family,
        "tier": spec.tier,
        **dataset_origin(corpus),
        "config": json.dumps(run_config(spec, corpus, client), sort_keys=True),
    }


def run_config(spec: RunSpec, corpus: Corpus, client: str | None) -> RunConfig:
    """The run's config as created: how its samples are read, its server, its workers and its selection."""
    config: RunConfig = {
        "scaling": spec.scaling,
        "context_budget": spec.context_budget,
        "agent_options": spec.identity(corpus.fingerprint)["agent_options"],
        "base_urls": [spec.agent_options["base_url"]] if spec.agent_options.get("base_url") else [],
        "workers": spec.workers,
        "slice": slice_record(spec),
    }
    if spec.extra_tools:  # the general-agent setting, with its registry's size in the prompt
        config["extra_tools"] = spec.extra_tools
    if client:  # an LLM run: which model client sent its calls (more than one after a resume through another)
        config["clients"] = [client]
    pricing = spec.agent_options.get("pricing")
    if pricing:  # the prices its calls were charged at: a report reprices (study cost mode) by the same rows
        config["pricing"] = [row for row in pricing if isinstance(row, dict)]
    return config


def slice_record(spec: RunSpec) -> SliceRecord:
    """The selection as recorded in the run's config; `shard` ("I/N") only on a sharded run, so an unsharded
    run's config is what it always was."""
    out: SliceRecord = {
        "ids": list(spec.item_ids),
        "question_type": spec.question_type,
        "depth": spec.depth,
        "limit": spec.limit,
    }
    if spec.shard is not None:
        out["shard"] = str(spec.shard)
    return out


def dataset_origin(corpus: Corpus) -> Origin:
    """The Hub repository and commit the dataset was opened from (None for a directory or the built-in one)."""
    origin = getattr(corpus, "origin", None)
    return {
        "dataset_repo": origin.repo if origin else None,
        "dataset_revision": origin.commit if origin else None,
    }


def record_resume(store: Store, run_id: int, spec: RunSpec, corpus: Corpus, client: str | None) -> None:
    """What a resume asked for that the run did not record yet: written in one update, so every report reads
    what was sampled and how.

    More replicates (`scale parallel --k 1,2,16` on a K = 8 run) raise the recorded K (never
    lower it: the samples beyond a smaller request stay valid); the k a parallel run is read at
    become every k ever asked for, and its judge and pairwise orders the ones asked for last.
    The server address is an execution option (it may change between resumes): the run keeps every one used.
    A resume from the Hub records the repository and the commit it resolved to (the data is the same: the
    fingerprint matched), so the run names the commit it was last fetched at.
    """
    row = store.run_by_id(run_id)
    updates: dict[str, str | int] = {
        k: v for k, v in dataset_origin(corpus).items() if isinstance(v, str) and v and row.get(k) != v
    }
    if spec.replicates > (row["replicates"] or 1):
        updates["replicates"] = spec.replicates
    stored = row["config"] or {}
    config = resumed_config(stored, spec, client)
    if config != stored:
        updates["config"] = json.dumps(config, sort_keys=True)
    if updates:
        store.update_run(run_id, **updates)


def resumed_config(stored: JsonObject, spec: RunSpec, client: str | None) -> JsonObject:
    """The run's config with what this launch adds: its reading of the samples, its server, its client."""
    config = dict(stored)
    scaling = config.get("scaling")
    recorded = dict(scaling) if isinstance(scaling, dict) else {}
    reading = _merged_reading(recorded, spec.scaling or {})
    if reading != recorded:
        config["scaling"] = reading
    url = spec.agent_options.get("base_url")
    for key, value in (("base_urls", url), ("clients", client)):
        used = _listed(config.get(key))
        if value and value not in used:
            config[key] = [*used, value]
    return config


def retag(store: Store, run_id: int, spec: RunSpec) -> None:
    """A resume keeps the run's family and tier (set at creation or by `runs tag`), except those the person
    chose again with this launch."""
    stored = store.run_by_id(run_id)
    changed = {key: getattr(spec, key) for key in spec.tagged if stored.get(key) != getattr(spec, key)}
    if changed:
        store.update_run(run_id, **changed)


def _merged_reading(recorded: JsonObject, asked: JsonObject) -> JsonObject:
    """A parallel run's reading after a resume: the options asked for last win, the k become every k ever asked."""
    reading = dict(recorded)
    for option in READING_OPTIONS:
        if asked.get(option) is not None:
            reading[option] = asked[option]
    if asked.get("ks"):
        ks: list[JsonValue] = [*sorted(_ks(recorded.get("ks")) | _ks(asked["ks"]))]
        reading["ks"] = ks
    return reading


def _ks(value: JsonValue) -> set[int]:
    """The k a parallel run's reading names (none when it names none)."""
    return {k for k in value if isinstance(k, int)} if isinstance(value, list) else set()


def _listed(value: JsonValue) -> list[JsonValue]:
    """A config's list (the base URLs or clients a run used); empty when it records none."""
    return value if isinstance(value, list) else []
