"""The launch form's fields: their values as typed or chosen, the names its messages give them, which apply to the
choices made, and the `LaunchRequest` they read as (what cannot be read as typed: a message by field).

Numbers are typed as text, so reading them is the form's part; their bounds, like every other rule of a run, are
the launch service's (`workbench.service.launch`), which `workbench.tui.forms.launch` asks.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypedDict

from sandbox.records import DEFAULT_WORKERS, Caps
from storage.json_types import JsonValue
from workbench.service.launch import LaunchRequest


@dataclass(frozen=True)
class LaunchFields:
    """Each field of the launch form as the person left it: the text typed, or the value of the choice made; the
    defaults are a new run's. Each attribute is named as the form's widget for it."""

    dataset_kind: str = "builtin"  # "builtin" or "release" (a release directory, or a Hub release `hf:…`)
    path: str = ""
    agent: str = "heuristic"
    model: str = ""
    base_url: str = ""
    client: str = "auto"
    ablation: str = "full"
    budget: str = str(Caps.budget)
    max_turns: str = str(Caps.max_turns)
    max_tokens: str = str(Caps.max_tokens_total)
    question_type: str = "any"
    depth: str = "any"
    limit: str = ""
    ids: str = ""
    workers: str = str(DEFAULT_WORKERS)
    replicates: str = "1"
    seed: str = "0"
    name: str = ""
    local_threads: str = ""
    # the general-agent setting: which registry (none, builtin, a FILE.json, an MCP server's command)
    extra_kind: str = "none"
    extra_source: str = ""
    extra_count: str = ""
    extra_detail: str = "full"
    extra_cost: str = "1"
    extra_timeout: str = "30"  # seconds per forwarded call of an MCP server registry
    distractible: str = ""
    prompts: str = ""
    family: str = ""
    tier: str = "auto"


FIELD_NAMES = tuple(f.name for f in fields(LaunchFields))
EXTRA_KINDS = (("none", "none"), ("built-in tools", "builtin"), ("tools file", "file"), ("MCP server", "mcp"))

# The form's name of each launch request field, in its messages ("points: must be at most 100,000")
LABELS = {
    "name": "name",
    "agent": "agent",
    "model": "model",
    "base_url": "base URL",
    "client": "client",
    "ablation": "ablation",
    "budget": "points",
    "max_turns": "turns",
    "max_tokens_total": "tokens",
    "limit": "limit",
    "workers": "workers",
    "replicates": "replicates",
    "seed": "seed",
    "ids": "ids",
    "question_type": "type",
    "depth": "depth",
    "dataset": "release directory",
    "local_threads": "threads",
    "extra_tools": "extra tools",
    "extra_tools_count": "tool count",
    "extra_tools_detail": "detail",
    "extra_tools_cost": "tool cost",
    "extra_tools_timeout": "tool timeout",
    "distractible": "distractible",
    "prompts": "prompts file",
    "family": "family",
    "tier": "tier",
}
# request field → form field, where they differ
FIELD_IDS = {
    "max_tokens_total": "max_tokens",
    "dataset": "path",
    "extra_tools": "extra_source",
    "extra_tools_count": "extra_count",
    "extra_tools_detail": "extra_detail",
    "extra_tools_cost": "extra_cost",
    "extra_tools_timeout": "extra_timeout",
}
NUMBERS = ("budget", "max_turns", "max_tokens_total", "limit", "workers", "replicates", "seed")  # typed as text


def disabled_fields(v: LaunchFields) -> dict[str, bool]:
    """Each field that applies to some choices only → whether it is off for `v`'s: the release path (a release),
    the LLM fields (the LLM agent; threads: a local/ model, whose server runs here), the extra tools' fields (a
    registry; the source: a file or an MCP server; the timeout: an MCP server's calls) and the heuristic's
    distractible knob."""
    llm = v.agent == "llm"
    kind = v.extra_kind
    return {
        "path": v.dataset_kind == "builtin",
        "model": not llm,
        "base_url": not llm,
        "client": not llm,
        "local_threads": not (llm and v.model.strip().startswith("local/")),
        "extra_source": kind in ("none", "builtin"),
        "extra_count": kind == "none",
        "extra_detail": kind == "none",
        "extra_cost": kind == "none",
        "extra_timeout": kind != "mcp",
        "distractible": v.agent != "heuristic",
    }


def _int(v: LaunchFields, key: str, errors: dict[str, str], label: str, optional: bool = False) -> int | None:
    """The whole number typed in field `key` ("1_000" and "1,000" too), or None with the field's message; its
    bounds are the launch service's."""
    typed = getattr(v, key)
    text = typed.strip().replace("_", "").replace(",", "")
    if not text:
        if not optional:
            errors[key] = f"{label}: a number is needed"
        return None
    try:
        return int(text)
    except ValueError:
        errors[key] = f"{label}: '{typed}' is not a whole number"
        return None


def form_request(v: LaunchFields, options: dict[str, JsonValue] | None, errors: dict[str, str]) -> LaunchRequest:
    """The launch request of the form's values (`errors` gets what cannot be read as typed). The LLM fields of a
    scripted agent are disabled, so they are not chosen; `options` are a relaunched run's (None for a new run,
    which gets the model's defaults as `--batch run` does)."""
    typed = {key: _int(v, FIELD_IDS.get(key, key), errors, LABELS[key], optional=key == "limit") for key in NUMBERS}
    numbers: dict[str, Any] = {key: n for key, n in typed.items() if n is not None}  # unread: the request's default
    return LaunchRequest(
        **_llm_request(v, options, errors),  # before the extra tools: a form's errors keep the fields' order
        **_extra_request(v, errors),
        **_choice_request(v),
        agent=v.agent,
        name=v.name,
        relaunch=options is not None,
        ablation=v.ablation,
        **numbers,
    )


class _ChoiceFields(TypedDict):
    """The launch request's fields chosen from a list or typed as text: the data, its slice, prompts and tags."""

    dataset: str
    ids: tuple[str, ...]
    question_type: str | None
    depth: int | None
    prompts: str | None
    family: str | None
    tier: str | None


def _choice_request(v: LaunchFields) -> _ChoiceFields:
    """The data, slice, prompts file, family and tier fields of the request ("any", "auto" and blank: not chosen)."""
    return {
        "dataset": "builtin" if v.dataset_kind == "builtin" else v.path.strip(),
        "ids": tuple(i.strip() for i in v.ids.replace(" ", ",").split(",") if i.strip()),
        "question_type": None if v.question_type == "any" else v.question_type,
        "depth": None if v.depth == "any" else int(v.depth),
        "prompts": v.prompts.strip() or None,
        "family": v.family.strip() or None,
        "tier": None if v.tier == "auto" else v.tier,
    }


class _LlmFields(TypedDict):
    """The launch request's LLM fields, as the form sets them."""

    model: str | None
    base_url: str | None
    client: str | None
    local_threads: int | None
    options: dict[str, JsonValue]


class _ExtraFields(TypedDict, total=False):
    """The launch request's general-agent fields the form sets (one left out keeps the request's default)."""

    extra_tools: str | None
    extra_tools_count: int | None
    extra_tools_detail: str
    extra_tools_cost: int
    extra_tools_timeout: float
    distractible: float


def _llm_request(v: LaunchFields, options: dict[str, JsonValue] | None, errors: dict[str, str]) -> _LlmFields:
    """The LLM fields of the request: model, base URL, client, a local model's threads, and a relaunched run's
    other agent options (the fields say base_url, client and local_threads); all unset for a scripted agent."""
    if v.agent != "llm":
        return {"model": None, "base_url": None, "client": None, "local_threads": None, "options": {}}
    local = v.model.strip().startswith("local/")
    skip = ("base_url", "client", "local_threads")
    return {
        "model": v.model.strip() or None,
        "base_url": v.base_url.strip() or None,
        "client": None if v.client == "auto" else v.client,
        "local_threads": _int(v, "local_threads", errors, LABELS["local_threads"], optional=True) if local else None,
        "options": {k: o for k, o in (options or {}).items() if k not in skip},
    }


def _extra_request(v: LaunchFields, errors: dict[str, str]) -> _ExtraFields:
    """The general-agent setting's request fields from the form: the registry (`builtin`, the file typed, or
    `mcp:` and the command typed), its count, detail and cost, and the heuristic's distractible knob."""
    out = _extra_tools_request(v, errors) if v.extra_kind != "none" else _ExtraFields()
    text = v.distractible.strip() if v.agent == "heuristic" else ""
    if text:
        try:
            out["distractible"] = float(text)
        except ValueError:
            errors["distractible"] = f"distractible: '{text}' is not a number (a probability, 0 to 1)"
    return out


def _extra_tools_request(v: LaunchFields, errors: dict[str, str]) -> _ExtraFields:
    """The extra tools' request fields when the form adds a registry (a field that cannot be read: its message in
    `errors`)."""
    kind, source = v.extra_kind, v.extra_source.strip()
    if kind != "builtin" and not source:
        errors["extra_source"] = "extra tools: a tools file or the command that starts the MCP server is needed"
    out = _ExtraFields(
        extra_tools=_registry(kind, source),
        extra_tools_count=_int(v, "extra_count", errors, "tool count", optional=True),
        extra_tools_detail=v.extra_detail,
    )
    cost = _int(v, "extra_cost", errors, "tool cost")
    if cost is not None:
        out["extra_tools_cost"] = cost
    timeout = _mcp_timeout(v, errors) if kind == "mcp" else None
    if timeout is not None:
        out["extra_tools_timeout"] = timeout
    return out


def _registry(kind: str, source: str) -> str | None:
    """The extra-tools registry of the form's kind and source: `builtin`, `mcp:COMMAND` or the tools file."""
    if kind == "builtin":
        return "builtin"
    return (f"mcp:{source}" if kind == "mcp" else source) or None


def _mcp_timeout(v: LaunchFields, errors: dict[str, str]) -> float | None:
    """Seconds per forwarded call of an MCP registry (30 when blank); None, with the message in `errors`, when
    the field is not a number."""
    timeout = v.extra_timeout.strip()
    try:
        return float(timeout) if timeout else 30.0
    except ValueError:
        errors["extra_timeout"] = f"tool timeout: '{timeout}' is not a number of seconds"
        return None
