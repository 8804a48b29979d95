"""The launch service: what a person chose for a run, checked and turned into the `RunSpec` the runner executes.

The only place that turns a user's choices into a RunSpec: `--batch run` and `scale` (`workbench.cli.run`) and the
TUI's launch form (`workbench.tui.forms.launch`) both call `run_spec`, so the same choices make the same run
from either (the same `[[pricing]]`, the same bounds, the same recorded LLM options). Each front end keeps only
its parsing (argparse's types; the form's text fields) and its presentation: how it names a field (`names`:
`--max-turns` or "turns") and where a message shows.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sandbox.records import DEFAULT_WORKERS, Caps
from storage.json_types import JsonObject, JsonValue

if TYPE_CHECKING:  # named for the annotation only: the registry is imported when a setting is asked for
    from sandbox.extra_tools.registry import SettingRecord
from workbench.service import families, runname
from workbench.service.limits import FLOAT_BOUNDS, RUN_BOUNDS, float_out_of_bounds, out_of_bounds

AGENTS = ("heuristic", "oracle", "random", "llm")  # the agents a launched run plays (people play in the TUI)
ABLATIONS = ("full", "no-search", "closed-book", "gold-given")
# Who sends an LLM run's calls: sandbox.agents.llm.CLIENTS, not imported (that module costs 0.25 s at the form)
CLIENTS = ("auto", "native", "litellm")
QUESTION_TYPES = ("single-target", "multi-target", "st", "mt")
DEPTHS = (1, 2)

# The settings only the LLM agent reads, in the order a refusal names them, and the agent option each records
LLM_SETTINGS = (
    "model",
    "base_url",
    "api_key_env",
    "env_file",
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "reasoning_effort",
    "text_tools",
    "timeout",
    "concurrency",
    "rpm",
    "client",
    "local_threads",
    "options",
)
RECORDED = {
    "base_url": "base_url",
    "api_key_env": "api_key_env",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_tokens",
    "reasoning_effort": "reasoning_effort",
    "text_tools": "text_tools",
    "timeout": "timeout_s",
    "concurrency": "concurrency",
    "rpm": "rpm",
    "client": "client",
    "local_threads": "local_threads",
}


@dataclass(frozen=True)
class LaunchRequest:
    """What a person chose for a run, as plain values; None is "not chosen" (the protocol's or the agent's default).

    `dataset` is "builtin" or a release directory as typed (the run records its `dataset_key`; the default name
    takes the directory's name as typed, so running the same command again resumes the same run). `options` are
    agent options without a setting of their own: a relaunched run's, kept as they were recorded."""

    dataset: str = "builtin"
    agent: str = "heuristic"
    name: str | None = None
    model: str | None = None
    base_url: str | None = None
    client: str | None = None
    api_key_env: str | None = None
    env_file: str | None = None  # read by the CLI before the run; an LLM-only setting, never recorded
    temperature: float | None = None
    top_p: float | None = None
    top_k: int | None = None
    max_tokens: int | None = None  # per model call
    reasoning_effort: str | None = None
    text_tools: bool | None = None  # None: the model's default (`agent_defaults`: text tools for a local model)
    timeout: float | None = None
    concurrency: int | None = None
    rpm: float | None = None
    local_threads: int | None = None  # a local/ model's server threads (None: one less than the cores)
    options: Mapping[str, JsonValue] = field(default_factory=dict)  # a relaunched run's agent options, as recorded
    relaunch: bool = False  # `options` are a stored run's, as recorded: the model's defaults are not added to them
    ablation: str = "full"
    budget: int = Caps.budget
    max_turns: int = Caps.max_turns
    max_tokens_total: int = Caps.max_tokens_total
    workers: int = DEFAULT_WORKERS
    replicates: int = 1
    seed: int = 0
    ids: tuple[str, ...] = ()
    question_type: str | None = None
    depth: int | None = None
    limit: int | None = None
    max_run_tokens: int = 0
    max_run_cost: float = 0.0
    shard: Any = None  # sandbox.shard.Shard: this host's part of the selection
    # the general-agent setting (sandbox.extra_tools): "builtin", a FILE.json or "mcp:COMMAND"; None = the plain run
    extra_tools: str | None = None
    extra_tools_count: int | None = None  # None: every tool of the registry
    extra_tools_timeout: float = 30.0  # seconds per forwarded call of an `mcp:` registry (execution, not identity)
    extra_tools_detail: str = "full"
    extra_tools_cost: int = 1
    distractible: float | None = None  # the heuristic's out-of-domain call probability
    prompts: str | None = None  # a prompts file (TOML) replacing the texts sent to the agent and the judges
    family: str | None = None  # the model family (default: derived from the model string, workbench.service.families)
    tier: str | None = None  # the capability tier (closed-frontier, open-frontier, compute-efficient; default: derived)


class LaunchError(ValueError):
    """Every problem of a request, as request field → message (a message names its field as the caller does)."""

    exit_code = 2  # a user's mistake: the CLI prints each problem in one line and exits 2 (ExitCode.USAGE)

    def __init__(self, problems: dict[str, str]):
        super().__init__("; ".join(problems.values()))
        self.problems = problems


def default_run_name(request: LaunchRequest, existing: Collection[str] = ()) -> str:
    """The name a run gets when none is chosen (`workbench.service.runname.default_name`); with `existing`, the first of
    `name`, `name-2`, … not among them (the form proposes a new run; the CLI resumes by running the same command)."""
    base = runname.default_name(request.agent, request.model, request.dataset, request.ablation, request.seed)
    if request.distractible:
        base += f"-distractible{request.distractible:g}"
    if request.extra_tools and request.extra_tools_count != 0:
        count = "all" if request.extra_tools_count is None else request.extra_tools_count
        base += f"-tools{count}" + ("" if request.extra_tools_detail == "full" else f"-{request.extra_tools_detail}")
    return runname.unique_name(base, existing)


def run_spec(request: LaunchRequest, existing: Collection[str] = (), names: Mapping[str, str] | None = None):
    """The `sandbox.runner.RunSpec` of `request`, or LaunchError with every problem; nothing is read but the config
    file's `[[pricing]]` (an LLM run's). `names` says how the caller's user names each field (default: its name)."""
    from sandbox.datasets import dataset_key
    from sandbox.runner import RunSpec

    names = names or {}
    problems = request_problems(request, names)
    agent_options = _agent_options(request, problems, names)
    extra_tools = _extra_tools(request, problems, names) if not problems else None
    prompts = _prompts(request, problems, names)
    if problems:
        raise LaunchError(problems)
    model = request.model if request.agent == "llm" else None
    family, tier = families.chosen_or_derived(model, request.family, request.tier)
    return RunSpec(
        name=request.name.strip() if request.name is not None else default_run_name(request, existing),
        dataset=dataset_key(request.dataset),
        agent=request.agent,
        model=request.model if request.agent == "llm" else None,
        seed=request.seed,
        caps=Caps(budget=request.budget, max_turns=request.max_turns, max_tokens_total=request.max_tokens_total),
        ablation=request.ablation,
        replicates=request.replicates,
        workers=request.workers,
        item_ids=tuple(dict.fromkeys(request.ids)),
        question_type=request.question_type,
        depth=request.depth,
        limit=request.limit,
        agent_options=agent_options,
        max_run_tokens=request.max_run_tokens,
        max_run_cost=request.max_run_cost,
        shard=request.shard,
        extra_tools=extra_tools,
        prompts=prompts,
        family=family,
        tier=tier,
        tagged=tuple(key for key in ("family", "tier") if getattr(request, key)),
    )


def _agent_options(request: LaunchRequest, problems: dict[str, str], names: Mapping[str, str]) -> JsonObject:
    """The run's agent options: an LLM's settings (when nothing else is wrong), the heuristic's distractibility, an
    MCP registry's call timeout (a problem when it is not positive)."""
    agent_options: JsonObject = {}
    if request.agent == "llm" and not problems:
        agent_options = llm_options(request, problems, names)
    if request.distractible:
        agent_options["distractible"] = request.distractible
    if (request.extra_tools or "").startswith("mcp:"):
        if not request.extra_tools_timeout or request.extra_tools_timeout <= 0:
            problems["extra_tools_timeout"] = (
                f"{names.get('extra_tools_timeout', 'extra_tools_timeout')}: must be > 0 seconds"
            )
        agent_options["extra_tools_timeout_s"] = float(request.extra_tools_timeout or 0)
    return agent_options


def _extra_tools(request: LaunchRequest, problems: dict[str, str], names: Mapping[str, str]) -> SettingRecord | None:
    """The general-agent setting's record (`sandbox.extra_tools.setting.resolve`: the registry read, listed or
    started once), or None; a registry that cannot be used is added to `problems`."""
    if not request.extra_tools:
        return None
    from sandbox.extra_tools.registry import RegistryError
    from sandbox.extra_tools.setting import resolve

    try:
        return resolve(
            request.extra_tools,
            request.extra_tools_count,
            request.extra_tools_detail,
            request.extra_tools_cost,
            request.seed,
        )
    except RegistryError as exc:
        problems["extra_tools"] = f"{names.get('extra_tools', 'extra_tools')}: {exc}"
        return None


def _prompts(request: LaunchRequest, problems: dict[str, str], names: Mapping[str, str]):
    """The prompt set of `request.prompts` (None: ours), checked in full before anything runs; a file that cannot be
    used is a problem naming its line, key and placeholder."""
    from sandbox.prompt_set import PromptsError, load_prompts

    path = (request.prompts or "").strip()
    if not path:
        return None
    try:
        return load_prompts(path)
    except PromptsError as exc:
        problems["prompts"] = f"{names.get('prompts', 'prompts')}: {exc}"
        return None


def request_problems(request: LaunchRequest, names: Mapping[str, str]) -> dict[str, str]:
    """Field → message for each choice that cannot make a run (the first problem of each field)."""
    problems: dict[str, str] = dict(_agent_problems(request, names))
    steps: tuple[Callable[[LaunchRequest], Iterable[tuple[str, str]]], ...] = (
        _name_problems,
        _llm_problems,
        _tool_problems,
        _slice_problems,
        _bound_problems,
        _family_problems,
    )
    for step in steps:
        for key, problem in step(request):
            problems.setdefault(key, f"{names.get(key, key)}: {problem}")
    return problems


Problems = Iterator[tuple[str, str]]  # (field, what is wrong with it), in the order a form shows them


def _name_problems(request: LaunchRequest) -> Problems:
    problem = runname.name_problem(request.name) if request.name is not None else None
    if problem:
        yield "name", problem


def _llm_problems(request: LaunchRequest) -> Problems:
    """The model settings of an LLM run: a model, an http(s) base URL, a known client, threads for local models."""
    if request.agent != "llm":
        return
    if not (request.model or "").strip():
        yield "model", "a model is needed for the llm agent (a litellm model string such as openai/gpt-4.1)"
    yield from _server_problems(request)
    if request.local_threads is not None and not (request.model or "").startswith("local/"):
        yield "local_threads", "applies to local/ models only (their server runs on this machine)"


def _server_problems(request: LaunchRequest) -> Problems:
    """How an LLM run reaches its model: an http(s) base URL, a known client."""
    if request.base_url is not None and not request.base_url.startswith(("http://", "https://")):
        yield "base_url", "must start with http:// or https://"
    if request.client is not None and request.client not in CLIENTS:
        yield "client", f"unknown '{request.client}'"


def _tool_problems(request: LaunchRequest) -> Problems:
    """The ablation, the distractible heuristic, and the extra tools' settings."""
    if request.ablation not in ABLATIONS:
        yield "ablation", f"unknown '{request.ablation}'"
    if request.distractible and request.agent != "heuristic":
        yield "distractible", "applies to the heuristic agent only"
    yield from _extra_tools_problems(request)


def _extra_tools_problems(request: LaunchRequest) -> Problems:
    """The general-agent setting: no extra tools in a closed-book run, their settings only with them, a known
    detail."""
    if request.extra_tools and request.ablation == "closed-book":
        yield "extra_tools", "a closed-book run offers no tools to be distracted from (only submit_answer)"
    if not request.extra_tools and (
        request.extra_tools_count is not None or request.extra_tools_detail != "full" or request.extra_tools_cost != 1
    ):
        yield (
            "extra_tools",
            "the count, detail and cost of extra tools need --extra-tools (builtin, FILE.json or mcp:COMMAND)",
        )
    if request.extra_tools_detail not in ("full", "short", "names"):
        yield "extra_tools_detail", f"unknown '{request.extra_tools_detail}' (choose from full, short, names)"


def _slice_problems(request: LaunchRequest) -> Problems:
    if request.question_type is not None and request.question_type not in QUESTION_TYPES:
        yield "question_type", f"unknown '{request.question_type}'"
    if request.depth is not None and request.depth not in DEPTHS:
        yield "depth", f"must be 1 or 2, got {request.depth}"


def _family_problems(request: LaunchRequest) -> Problems:
    family = families.family_problem(request.family) if request.family is not None else None
    if family:
        yield "family", family
    tier = families.tier_problem(request.tier) if request.tier is not None else None
    if tier:
        yield "tier", tier


def _agent_problems(request: LaunchRequest, names: Mapping[str, str]) -> dict[str, str]:
    """A person, an unknown agent, or LLM settings given to a scripted agent (which would ignore them silently:
    `--agent oracle --model x` would look like a model run)."""
    from sandbox.agents.human import is_human

    agent = request.agent
    if is_human(agent):
        return {
            "agent": f"'{agent}' is a person, and people play in the TUI, not in --batch: run agenthop-tui and "
            "press P (or ctrl+p, 'Play the benchmark…'); --batch leaderboard, report and compare then "
            "read the play"
        }
    if agent not in AGENTS:
        return {"agent": f"{names.get('agent', 'agent')}: unknown '{agent}'"}
    given = [key for key in LLM_SETTINGS if _chosen(getattr(request, key))]
    if agent != "llm" and given:
        verb = "applies" if len(given) == 1 else "apply"
        return {
            given[0]: f"{', '.join(names.get(k, k) for k in given)} {verb} to {names.get('agent', 'agent')} llm only"
        }
    return {}


def _chosen(value: Any) -> bool:
    """A setting was given: not None, not a flag left off, not empty options (0 is a temperature)."""
    return value is not None and value is not False and not (isinstance(value, Mapping) and not value)


def _bound_problems(request: LaunchRequest) -> list[tuple[str, str]]:
    """The numbers past `workbench.service.limits`' bounds (the same bounds the CLI's number types apply when
    parsing)."""
    found = []
    for bounds, problem_of in ((RUN_BOUNDS, out_of_bounds), (FLOAT_BOUNDS, float_out_of_bounds)):
        for key in bounds:
            value = getattr(request, key, None)
            problem = problem_of(key, value) if value is not None else None
            if problem:
                found.append((key, problem))
    return found


def llm_options(request: LaunchRequest, problems: dict[str, str], names: Mapping[str, str]) -> JsonObject:
    """The agent options an LLM run records: the relaunched run's, the settings chosen (the key's variable name,
    never the key), and the config file's `[[pricing]]` unless the relaunched run has its own, so a run costs the
    same wherever it was started. A broken config file or a dollar limit without prices is added to `problems`."""
    from sandbox.agents.local_model import agent_defaults
    from workbench.service.config import ConfigFileError, pricing_overrides

    options: JsonObject = dict(request.options)
    options.update(
        {recorded: getattr(request, key) for key, recorded in RECORDED.items() if getattr(request, key) is not None}
    )
    if not request.relaunch:  # a new run: the model's defaults where the user set nothing (a relaunch keeps its own)
        for key, value in agent_defaults(request.model).items():
            options.setdefault(key, value)
    if "pricing" not in options:
        try:
            pricing = pricing_overrides()
        except ConfigFileError as exc:
            problems["pricing"] = str(exc)
            return options
        if pricing:
            options["pricing"] = [*pricing]
    if request.max_run_cost and request.model:  # `request_problems` has made sure an llm run names its model
        _check_cost_limit(request.model, options, request.max_run_cost, problems)
    return options


def _check_cost_limit(model: str, options: JsonObject, max_run_cost: float, problems: dict[str, str]) -> None:
    """A dollar limit needs the model's price (a problem when none is known)."""
    from sandbox.agents.llm import ConfigError, check_cost_limit

    try:
        check_cost_limit(model, options, max_run_cost)
    except ConfigError as exc:
        problems["max_run_cost"] = str(exc)
