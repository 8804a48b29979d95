"""A campaign file as the runs it makes: each an ordinary run (`launch.run_spec`, the one place options become a
RunSpec; the sweeps and parallel studies through `scaling.plan_study`, as `scale` makes them), named the same way
every time, placed on its endpoint's lane, checked against the store before anything runs.

Names: `NAME-MODEL-ABLATION` for the panel's runs, `NAME-MODEL-AXIS` for a sweep's group (its levels
`…@LEVEL`, several strategies `….STRATEGY@LEVEL`), `NAME-MODEL-kK` for a parallel study. A run of the file is
therefore the run the same choices make with `run --run NAME-MODEL-ABLATION …`, and running the file again resumes
each run where it stopped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workbench.service.campaign.file import CampaignFile, CampaignFileError, ModelEntry, endpoint_of
from workbench.service.launch import LaunchError, LaunchRequest, run_spec
from workbench.service.scaling import ScalingInputError, StudyPlan, StudyRequest, check_plan, plan_study

if TYPE_CHECKING:
    from sandbox.runner import RunSpec

RunKind = Literal["run", "sweep", "parallel"]

# where a launch request's field is set in the file: the campaign's top level, its [caps], or the model's entry
TOP_FIELDS = {
    "dataset": "data",
    "seed": "seed",
    "workers": "workers",
    "ids": "ids",
    "question_type": "question_type",
    "depth": "depth",
    "limit": "limit",
    "prompts": "prompts",
}
CAPS_FIELDS = ("budget", "max_turns", "max_tokens_total")
MODEL_FIELDS = {
    "name": "name",
    "agent": "agent",
    "model": "model",
    "base_url": "base_url",
    "api_key_env": "api_key_env",
    "client": "client",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort",
    "text_tools": "text_tools",
    "timeout": "timeout",
    "rpm": "rpm",
    "concurrency": "calls_in_flight",
    "family": "family",
    "tier": "tier",
    "replicates": "replicates",
    "ablation": "ablations",
}


@dataclass(frozen=True)
class PlannedRun:
    """One run of the campaign: its spec, the endpoint whose lane it runs on, what it is part of."""

    name: str
    spec: RunSpec
    endpoint: str
    kind: RunKind
    model: str  # the model entry's name


@dataclass
class CampaignPlan:
    """Every run of a campaign in the order each lane runs them; its studies (sweeps and parallel) for their
    tables; the limit of calls in flight on each endpoint (None: the runs' own)."""

    campaign: CampaignFile
    runs: list[PlannedRun]
    studies: list[StudyPlan] = field(default_factory=list)
    endpoints: dict[str, int | None] = field(default_factory=dict)
    shard: Any = None

    def lanes(self) -> dict[str, list[PlannedRun]]:
        """The runs of each endpoint, in order: one lane runs one run at a time, the lanes all at once."""
        lanes: dict[str, list[PlannedRun]] = {}
        for run in self.runs:
            lanes.setdefault(run.endpoint, []).append(run)
        return lanes

    def panel_runs(self) -> list[str]:
        """The panel's runs (each model's ablations), in the file's order."""
        return [run.name for run in self.runs if run.kind == "run"]


def plan_campaign(campaign: CampaignFile, shard: Any = None) -> CampaignPlan:
    """The campaign's runs, or CampaignFileError naming the line and key a run's problem comes from; nothing is
    opened but the config file's `[[pricing]]` (an LLM run's), as `run_spec` reads it."""
    limits = _endpoint_limits(campaign)
    runs: list[PlannedRun] = []
    for index, model in enumerate(campaign.models):
        for ablation in model.ablations:
            name = f"{campaign.name}-{model.name}-{ablation}"
            request = _request(campaign, model, limits, name, ablation, model.replicates, shard)
            spec = _spec(campaign, index, request)
            runs.append(PlannedRun(spec.name, spec, endpoint_of(model), "run", model.name))
    studies = _sweeps(campaign, limits, shard, runs) + _parallel(campaign, limits, shard, runs)
    _check_unique(campaign, runs)
    return CampaignPlan(campaign, runs, studies, limits, shard)


def _endpoint_limits(campaign: CampaignFile) -> dict[str, int | None]:
    limits: dict[str, int | None] = {}
    for model in campaign.models:
        key = endpoint_of(model)
        limits[key] = limits.get(key) or model.calls_in_flight
    return limits


def _request(
    campaign: CampaignFile,
    model: ModelEntry,
    limits: dict[str, int | None],
    name: str,
    ablation: str,
    replicates: int,
    shard: Any,
) -> LaunchRequest:
    """The launch request of one run of `model`: the campaign's data, slice, caps and prompts, the model's
    settings, and its endpoint's limit of calls in flight, with at least as many episodes in flight (both execution
    options: changing them resumes the run)."""
    caps = {key: value for key in CAPS_FIELDS if (value := getattr(campaign.caps, key)) is not None}
    llm = model.agent == "llm"
    limit = limits.get(endpoint_of(model)) if llm else None
    # an episode has one call in flight at most: the endpoint's limit is reached only with as many episodes
    workers = max(campaign.workers, limit or 0)
    return LaunchRequest(
        dataset=campaign.data,
        agent=model.agent,
        name=name,
        model=model.model,
        base_url=model.base_url,
        client=model.client,
        api_key_env=model.api_key_env,
        temperature=model.temperature,
        top_p=model.top_p,
        top_k=model.top_k,
        max_tokens=model.max_tokens,
        reasoning_effort=model.reasoning_effort,
        text_tools=model.text_tools,
        timeout=model.timeout,
        concurrency=limit,
        rpm=model.rpm,
        ablation=ablation,
        workers=workers,
        replicates=replicates,
        seed=campaign.seed,
        ids=campaign.ids,
        question_type=campaign.question_type,
        depth=campaign.depth,
        limit=campaign.limit,
        shard=shard,
        prompts=campaign.prompts,
        family=model.family,
        tier=model.tier,
        **caps,
    )


def _where(campaign: CampaignFile, index: int, field_name: str) -> tuple[str, str]:
    """(FILE:LINE, key) of a launch request's field for the model at `index`."""
    if field_name in MODEL_FIELDS:
        key = MODEL_FIELDS[field_name]
        return campaign.where("models", index, key), f"models[{index + 1}].{key}"
    if field_name in CAPS_FIELDS:
        return campaign.where("caps", None, field_name), f"caps.{field_name}"
    key = TOP_FIELDS.get(field_name, field_name)
    return campaign.where(None, None, key), key


def _spec(campaign: CampaignFile, index: int, request: LaunchRequest) -> RunSpec:
    """`run_spec(request)`; its first problem as CampaignFileError at the file's line and key for that field."""
    try:
        return run_spec(request, names={})
    except LaunchError as exc:
        field_name, message = next(iter(exc.problems.items()))
        where, key = _where(campaign, index, field_name)
        prefix = f"{field_name}: "
        why = message[len(prefix) :] if message.startswith(prefix) else message
        raise CampaignFileError(f"{where}: {key} (run '{request.name}'): {why}") from None


def _study(campaign: CampaignFile, table: str, index: int, model_index: int, request: StudyRequest) -> StudyPlan:
    """`plan_study(request)`, its problems at the entry's line (a launch problem at the model's)."""
    try:
        return plan_study(request)
    except ScalingInputError as exc:
        why = str(exc).replace("--grid", "grid")  # said for the CLI's flag: here the entry's key
        raise CampaignFileError(f"{campaign.where(table, index, None)}: {table}[{index + 1}]: {why}") from None
    except LaunchError as exc:
        field_name, message = next(iter(exc.problems.items()))
        where, key = _where(campaign, model_index, field_name)
        raise CampaignFileError(f"{where}: {key} (run '{request.launch.name}'): {message}") from None


def _entry_models(campaign: CampaignFile, names: tuple[str, ...]) -> list[tuple[int, ModelEntry]]:
    """The models an entry names (all of them when it names none), with their indexes."""
    return [(i, m) for i, m in enumerate(campaign.models) if not names or m.name in names]


def _sweeps(campaign: CampaignFile, limits: dict[str, int | None], shard: Any, runs: list[PlannedRun]) -> list:
    """Each sweep's study per model: `scale sequential`'s runs, in their grid order, on the model's lane."""
    studies = []
    for index, sweep in enumerate(campaign.sweeps):
        for model_index, model in _entry_models(campaign, sweep.models):
            name = f"{campaign.name}-{model.name}-{sweep.axis}"
            launch = _request(campaign, model, limits, name, "full", sweep.replicates, shard)
            request = StudyRequest(
                kind="sequential",
                launch=launch,
                axis=sweep.axis,
                grid=sweep.grid,
                strategies=sweep.strategies,
                verifier=sweep.verifier,
            )
            plan = _study(campaign, "sweeps", index, model_index, request)
            runs += [PlannedRun(s.name, s, endpoint_of(model), "sweep", model.name) for s in plan.specs]
            studies.append(plan)
    return studies


def _parallel(campaign: CampaignFile, limits: dict[str, int | None], shard: Any, runs: list[PlannedRun]) -> list:
    """Each parallel study per model: one run of K replicates (`scale parallel`'s), judged at the end."""
    studies = []
    for index, entry in enumerate(campaign.parallel):
        for model_index, model in _entry_models(campaign, entry.models):
            try:
                from workbench.service.scaling import parse_ks

                k_max = max(parse_ks(entry.k))
            except ScalingInputError as exc:
                where = campaign.where("parallel", index, "k")
                raise CampaignFileError(f"{where}: parallel[{index + 1}].k: {exc}") from None
            name = f"{campaign.name}-{model.name}-k{k_max}"
            launch = _request(campaign, model, limits, name, "full", 1, shard)
            request = StudyRequest(
                kind="parallel",
                launch=launch,
                ks=entry.k,
                judge=entry.judge,
                judge_trials=entry.judge_trials,
                orders=entry.orders,
                tie_rule=entry.tie_rule,
            )
            plan = _study(campaign, "parallel", index, model_index, request)
            runs += [PlannedRun(s.name, s, endpoint_of(model), "parallel", model.name) for s in plan.specs]
            studies.append(plan)
    return studies


def _check_unique(campaign: CampaignFile, runs: list[PlannedRun]) -> None:
    """Two entries making the same run (two sweeps of one model on one axis) would run it twice."""
    seen: set[str] = set()
    for run in runs:
        if run.name in seen:
            raise CampaignFileError(f"{campaign.path}: the run '{run.name}' is made twice (two entries ask for it)")
        seen.add(run.name)


# ---------------------------------------------------------------- the plan against the store


def check_against_store(store: Any, plan: CampaignPlan, fingerprint: str) -> None:
    """Refuse, before anything runs, a run another process executes now (each lane would otherwise stop the
    campaign when it reached it), a run the store holds with another configuration (the store's own refusal, as
    `run` gets it: RunConflict, exit 2), a store holding the campaign made as another shard (or whole: the shard is
    not part of a run's identity, so the parts would mix), and a sweep into a group recorded under another design."""
    from workbench.service.errors import RunConflict, StoreError
    from workbench.service.stores import differences_phrase, identity_differences, lock_holder

    made = store_shard(store, plan)  # StoreError: the store's own parts are mixed
    asked = None if plan.shard is None else str(plan.shard)
    if made != asked and any(_stored(store, run.name) for run in plan.runs):
        held = f"as shard {made}" if made else "whole"
        run_as = f"as shard {asked}" if asked else "whole"
        raise StoreError(
            f"this store holds campaign '{plan.campaign.name}' {held}: running it {run_as} here would mix the parts; "
            f"use {'--shard ' + made if made else 'no --shard'} on this store, or another --db (then `merge`)"
        )
    for run in plan.runs:
        pid = lock_holder(store.path, run.name)
        if pid is not None:
            raise StoreError(f"run '{run.name}' is in progress in another process (pid {pid}); wait for it or stop it")
        try:
            stored = store.run(run.name)
        except StoreError:
            continue  # a new run
        differences = identity_differences(stored["identity"], run.spec.identity(fingerprint))
        if differences:
            raise RunConflict(
                f"run '{run.name}' exists with a different configuration ({differences_phrase(differences)})",
                remedy="campaign_run_changed",
                run=run.name,
            )
    for study in plan.studies:
        if study.kind == "sequential":
            check_plan(store, study)


def check_models(plan: CampaignPlan) -> None:
    """Every LLM run's model can be reached as configured (its key, a local model installed), before anything is
    written: ConfigError or LocalModelUnavailable (`workbench.service.errors`) naming the run."""
    from workbench.service.agents import check_model
    from workbench.service.errors import ConfigError, LocalModelUnavailable

    checked: set[str] = set()
    for run in plan.runs:
        spec = run.spec
        if spec.agent != "llm" or run.model in checked:
            continue
        checked.add(run.model)
        try:
            check_model(spec.model or "", spec.agent_options)
        except ConfigError as exc:
            raise ConfigError(f"run '{run.name}': {exc}") from None
        except LocalModelUnavailable as exc:
            raise LocalModelUnavailable(f"run '{run.name}': {exc}") from None


def store_shard(store: Any, plan: CampaignPlan) -> str | None:
    """The shard ("I/N") the store's runs of the campaign were made as; None when it holds none of them sharded.
    StoreError when they were made as different shards, or some sharded and some whole: running the campaign in it
    (whole, or as one shard) would mix them."""
    from storage.merge import shard_of_run
    from workbench.service.errors import StoreError

    made: dict[str | None, str] = {}  # a shard (None: the whole selection) → one run made so
    for run in plan.runs:
        try:
            row = store.run(run.name)
        except StoreError:
            row = None
        if row is not None:
            made.setdefault(shard_of_run(row), run.name)
    shards = sorted(made, key=lambda shard: shard or "")
    if len(shards) > 1:
        said = ", ".join(f"'{made[s]}' {'as shard ' + s if s else 'whole'}" for s in shards)
        raise StoreError(
            f"this store holds campaign '{plan.campaign.name}' made in parts that do not go together ({said}): "
            "run each shard in its own store (`campaign run FILE --shard I/N`), then `merge` them"
        )
    return shards[0] if shards else None


def _stored(store: Any, name: str) -> bool:
    """Whether the store holds a run of this name."""
    from workbench.service.errors import StoreError

    try:
        store.run(name)
    except StoreError:
        return False
    return True
