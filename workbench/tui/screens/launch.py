"""The launch form (modal): dataset, agent, ablation, caps, slice, workers, replicates, name; inline validation.

`validate` is pure (form values in, a RunSpec or per-field errors out) so it is tested
without a screen. The form dismisses with the RunSpec; the app runs it. Enter moves to
the next field; only the Start button or ctrl+r starts (an LLM run costs money).
`run_values` turns a stored run back into form values, so `R` on the runs list resumes it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TypedDict

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from sandbox.records import Caps, Item, recorded_limits
from workbench.service import agents
from workbench.service.datasets import dataset_label
from workbench.service.families import TIERS
from workbench.service.launch import ABLATIONS, AGENTS, CLIENTS, LaunchError, LaunchRequest, default_run_name, run_spec
from workbench.tui.flag_words import in_form_words
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.help import bound_key

DEFAULTS = {
    "dataset_kind": "builtin",
    "path": "",
    "agent": "heuristic",
    "model": "",
    "base_url": "",
    "client": "auto",
    "ablation": "full",
    "budget": str(Caps.budget),
    "max_turns": str(Caps.max_turns),
    "max_tokens": str(Caps.max_tokens_total),
    "question_type": "any",
    "depth": "any",
    "limit": "",
    "ids": "",
    "workers": "4",
    "replicates": "1",
    "seed": "0",
    "name": "",
    "local_threads": "",
    # the general-agent setting: which registry (none, builtin, a FILE.json, an MCP server's command)
    "extra_kind": "none",
    "extra_source": "",
    "extra_count": "",
    "extra_detail": "full",
    "extra_cost": "1",
    "extra_timeout": "30",  # seconds per forwarded call of an MCP server registry
    "distractible": "",
    "prompts": "",
    "family": "",
    "tier": "auto",
}
EXTRA_KINDS = (("none", "none"), ("built-in tools", "builtin"), ("tools file", "file"), ("MCP server", "mcp"))


@dataclass
class Validation:
    spec: Any  # the launch service's RunSpec, or None
    errors: dict[str, str]
    notes: list[str]


def release_problem(text: str) -> str | None:
    """What is wrong with the release field: a release directory, or a Hub release (`hf:OWNER/NAME[@REVISION]`,
    fetched when the run starts: only its form is checked here, nothing is asked of the Hub); None when usable."""
    from workbench.service.datasets import check_hub_spec, check_release_dir, is_hub
    from workbench.service.errors import DatasetError

    text = text.strip()
    if not text:
        return "release directory: a path (or hf:OWNER/NAME) is needed"
    try:
        if is_hub(text):
            check_hub_spec(text)
        else:
            check_release_dir(Path(text).expanduser())
    except DatasetError as exc:
        return f"release directory: {exc}"
    return None


def default_name(
    agent: str, dataset_kind: str, path: str, existing: set[str], model: str = "", ablation: str = "full", seed: int = 0
) -> str:
    """The name `--batch run` gives the same run (the launch service's), made unique among `existing`."""
    dataset = "builtin" if dataset_kind == "builtin" else path.strip()
    request = LaunchRequest(dataset=dataset, agent=agent, model=model or None, ablation=ablation, seed=seed)
    return default_run_name(request, existing)


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


def _int(values: dict[str, str], key: str, errors: dict[str, str], label: str, optional: bool = False):
    """The whole number typed in field `key` ("1_000" and "1,000" too), or None with the field's message; its
    bounds are the launch service's."""
    text = (values.get(key) or "").strip().replace("_", "").replace(",", "")
    if not text:
        if not optional:
            errors[key] = f"{label}: a number is needed"
        return None
    try:
        return int(text)
    except ValueError:
        errors[key] = f"{label}: '{values.get(key)}' is not a whole number"
        return None


def form_request(v: dict[str, str], options: dict[str, Any] | None, errors: dict[str, str]) -> LaunchRequest:
    """The launch request of the form's values (`errors` gets what cannot be read as typed). The LLM fields of a
    scripted agent are disabled, so they are not chosen; `options` are a relaunched run's (None for a new run,
    which gets the model's defaults as `--batch run` does)."""
    typed = {key: _int(v, FIELD_IDS.get(key, key), errors, LABELS[key], optional=key == "limit") for key in NUMBERS}
    numbers = {key: n for key, n in typed.items() if n is not None}  # one that cannot be read: the request's default
    return LaunchRequest(
        **_llm_request(v, options, errors),  # before the extra tools: a form's errors keep the fields' order
        **_extra_request(v, errors),
        **_choice_request(v),
        agent=v["agent"],
        name=v["name"],
        relaunch=options is not None,
        ablation=v["ablation"],
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


def _choice_request(v: dict[str, str]) -> _ChoiceFields:
    """The data, slice, prompts file, family and tier fields of the request ("any", "auto" and blank: not chosen)."""
    return {
        "dataset": "builtin" if v["dataset_kind"] == "builtin" else v["path"].strip(),
        "ids": tuple(i.strip() for i in v["ids"].replace(" ", ",").split(",") if i.strip()),
        "question_type": None if v["question_type"] == "any" else v["question_type"],
        "depth": None if v["depth"] == "any" else int(v["depth"]),
        "prompts": v.get("prompts", "").strip() or None,
        "family": (v.get("family") or "").strip() or None,
        "tier": None if v.get("tier", "auto") == "auto" else v["tier"],
    }


class _LlmFields(TypedDict):
    """The launch request's LLM fields, as the form sets them."""

    model: str | None
    base_url: str | None
    client: str | None
    local_threads: int | None
    options: dict[str, Any]


class _ExtraFields(TypedDict, total=False):
    """The launch request's general-agent fields the form sets (one left out keeps the request's default)."""

    extra_tools: str | None
    extra_tools_count: int | None
    extra_tools_detail: str
    extra_tools_cost: int
    extra_tools_timeout: float
    distractible: float


def _llm_request(v: dict[str, str], options: dict[str, Any] | None, errors: dict[str, str]) -> _LlmFields:
    """The LLM fields of the request: model, base URL, client, a local model's threads, and a relaunched run's
    other agent options (the fields say base_url, client and local_threads); all unset for a scripted agent."""
    if v["agent"] != "llm":
        return {"model": None, "base_url": None, "client": None, "local_threads": None, "options": {}}
    client = v.get("client", "auto")
    local = (v.get("model") or "").strip().startswith("local/")
    skip = ("base_url", "client", "local_threads")
    return {
        "model": v["model"].strip() or None,
        "base_url": v["base_url"].strip() or None,
        "client": None if client == "auto" else client,
        "local_threads": _int(v, "local_threads", errors, LABELS["local_threads"], optional=True) if local else None,
        "options": {k: o for k, o in (options or {}).items() if k not in skip},
    }


def _extra_request(v: dict[str, str], errors: dict[str, str]) -> _ExtraFields:
    """The general-agent setting's request fields from the form: the registry (`builtin`, the file typed, or
    `mcp:` and the command typed), its count, detail and cost, and the heuristic's distractible knob."""
    out = _extra_tools_request(v, errors) if v.get("extra_kind", "none") != "none" else _ExtraFields()
    text = v.get("distractible", "").strip() if v.get("agent") == "heuristic" else ""
    if text:
        try:
            out["distractible"] = float(text)
        except ValueError:
            errors["distractible"] = f"distractible: '{text}' is not a number (a probability, 0 to 1)"
    return out


def _extra_tools_request(v: dict[str, str], errors: dict[str, str]) -> _ExtraFields:
    """The extra tools' request fields when the form adds a registry (a field that cannot be read: its message in
    `errors`)."""
    kind, source = v.get("extra_kind", "none"), v.get("extra_source", "").strip()
    if kind != "builtin" and not source:
        errors["extra_source"] = "extra tools: a tools file or the command that starts the MCP server is needed"
    out = _ExtraFields(
        extra_tools=_registry(kind, source),
        extra_tools_count=_int(v, "extra_count", errors, "tool count", optional=True),
        extra_tools_detail=v.get("extra_detail", "full"),
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


def _mcp_timeout(v: dict[str, str], errors: dict[str, str]) -> float | None:
    """Seconds per forwarded call of an MCP registry (30 when blank); None, with the message in `errors`, when
    the field is not a number."""
    timeout = (v.get("extra_timeout") or "").strip()
    try:
        return float(timeout) if timeout else 30.0
    except ValueError:
        errors["extra_timeout"] = f"tool timeout: '{timeout}' is not a number of seconds"
        return None


def validate(
    values: dict[str, str],
    existing: set[str],
    llm_ok: bool | None = None,
    cache_dir: Path | None = None,
    store_path: Path | None = None,
    options: dict[str, Any] | None = None,
    notes_memo: dict | None = None,
    stored: dict[str, Any] | None = None,
    keys: tuple[str, str] = ("r", "d"),
) -> Validation:
    """A RunSpec for the form's values, or what is wrong with them (field → message).

    With `cache_dir`, item ids and the slice are checked against the dataset's QA file when it can be read
    without importing anything (the built-in benchmark once generated, a release directory, a Hub release once in
    the Hub's cache); `options` are agent options the form has no field for (a relaunched run's; None for a new
    run); `store_path` is where the cost estimate looks for earlier runs of the model, `notes_memo` a dict that
    keeps estimates between keystrokes. `stored` is the stored run named like the form's name, if any: a
    configuration the runner would refuse to resume is refused here, pointing at the Runs screen's rename and
    delete `keys`. The RunSpec is the launch service's (`workbench.service.launch`), as `--batch run` gets it for
    the same choices."""
    v = {**DEFAULTS, **values}
    errors = _choice_errors(v, agents.llm_available() if llm_ok is None else llm_ok)
    request = form_request(v, options, errors)
    spec = _spec(request, existing, errors)
    name = v["name"].strip()
    resumable = bool(stored and stored.get("identity"))
    notes = _unchecked_resume_notes(name, existing, resumable, errors)
    if errors:
        return Validation(None, errors, notes)
    refusal = _resume_refusal(spec, name, existing, stored if resumable else None, store_path, keys, notes)
    if refusal:
        return Validation(None, refusal, notes)
    episodes, problem = slice_episodes(spec, cache_dir)
    if problem:
        errors["ids" if request.ids else "question_type"] = problem
        return Validation(None, errors, notes)
    if spec.agent == "llm":
        notes += _llm_notes(spec, request.max_tokens_total, episodes, name not in existing, store_path, notes_memo)
    return Validation(spec, {}, notes)


def _choice_errors(v: dict[str, str], llm_ok: bool) -> dict[str, str]:
    """Field → message for a release directory that cannot be used and an LLM agent this build lacks."""
    errors: dict[str, str] = {}
    problem = release_problem(v["path"]) if v["dataset_kind"] != "builtin" else None
    if problem:
        errors["path"] = problem
    if v["agent"] == "llm" and not llm_ok:
        errors["agent"] = "agent: the LLM agent is not available in this build (sandbox.agents.llm is missing)"
    return errors


def _spec(request: LaunchRequest, existing: set[str], errors: dict[str, str]) -> Any:
    """The launch service's RunSpec of `request`, or None with the service's problems in `errors` (by form
    field, in the form's words; a field's own earlier message is kept)."""
    try:
        return run_spec(request, existing, names=LABELS)
    except LaunchError as exc:
        for key, message in exc.problems.items():
            errors.setdefault(FIELD_IDS.get(key, key), in_form_words(message, LABELS))
        return None


def _unchecked_resume_notes(name: str, existing: set[str], resumable: bool, errors: dict[str, str]) -> list[str]:
    """The note for a valid name that exists when the stored run's configuration is not known to compare (not
    `resumable`): starting resumes it or is refused."""
    if "name" in errors or name not in existing or resumable:
        return []
    return [
        f"a run named '{name}' exists: starting resumes it if the configuration matches (otherwise the run is refused)"
    ]


def _resume_refusal(
    spec: Any,
    name: str,
    existing: set[str],
    stored: dict[str, Any] | None,
    store_path: Path | None,
    keys: tuple[str, str],
    notes: list[str],
) -> dict[str, str]:
    """Field → message when starting would resume run `name` and cannot: another process runs it, or `stored`
    (the stored run, when its identity is known) has another configuration. Empty when the run can start; then a
    resume gets its note in `notes`."""
    if name not in existing:
        return {}
    busy = busy_elsewhere(store_path, name)
    if busy:
        return {"name": busy}
    if stored is None:
        return {}
    conflicts = resume_conflicts(spec, stored, *keys)
    if not conflicts:
        notes.append(_resume_note(name, stored.get("dataset"), spec.dataset))
    return conflicts


def _resume_note(name: str, stored: str | None, dataset: str) -> str:
    """What starting does to stored run `name`: resume it, on the same files when its `stored` dataset key is not
    the form's."""
    if stored and stored != dataset:
        return (
            f"starting resumes '{name}' if its data holds the same files as the stored run's "
            f"{dataset_label(stored)} (their fingerprints are compared when the run starts)"
        )
    return f"starting resumes '{name}': its finished episodes are kept"


def _llm_notes(
    spec: Any,
    tokens: int,
    episodes: tuple[int, bool] | None,
    fresh: bool,
    store_path: Path | None,
    notes_memo: dict | None,
) -> list[str]:
    """An LLM run's notes: a token cap every first call would cross, and the cost estimate for the `episodes` the
    slice plays (exact only for a `fresh` run: a resumed one skips those it stored), kept in `notes_memo` between
    keystrokes: it reads the store."""
    from workbench.service.estimate import prompt_overhead

    n = None if episodes is None else episodes[0]
    exact = bool(episodes is not None and episodes[1] and fresh)
    notes = []
    overhead = prompt_overhead(spec.effective_caps(), spec.ablation, spec.extra_tools, spec.prompts)
    if tokens <= overhead:
        notes.append(
            f"⚠ tokens: {tokens:,} is at or below the prompt overhead (~{overhead:,} tokens of rules and "
            "tool schemas before the question): every episode stops at its first model call"
        )
    key = (str(store_path), spec.model, json.dumps(spec.agent_options, sort_keys=True, default=str), n, exact)
    memo = notes_memo if notes_memo is not None else {}
    if key not in memo:
        memo[key] = llm_cost_note(spec, n, exact, store_path)
    notes.append(memo[key])
    return notes


def busy_elsewhere(store_path: Path | None, name: str) -> str | None:
    """Why run `name` cannot start now, if another process is executing it: said in the form, before Start,
    instead of by the runner's refusal after it."""
    from workbench.service.stores import lock_holder

    pid = lock_holder(Path(store_path), name) if store_path is not None else None
    if pid is None or pid == os.getpid():  # this process's own job says so itself
        return None
    return (
        f"name: '{name}' is in progress in another process (pid {pid}); starting it here would be refused: "
        "wait for it to finish, or choose another name"
    )


# identity key (or caps key) → (form field, its label): the launch request's own, named as the form names them
IDENTITY_FIELDS = {
    key: (FIELD_IDS.get(key, key), LABELS[key])
    for key in ("agent", "model", "seed", "ablation", "budget", "max_turns", "max_tokens_total", "prompts")
}


def resume_conflicts(spec, stored: dict[str, Any], rename_key: str = "r", delete_key: str = "d") -> dict[str, str]:
    """Field → message for each part of `spec` the store would refuse to resume the `stored` run with (the store's
    own rule, `workbench.service.stores.identity_differences`, on the identity the runner builds), naming the
    stored value: "seed differs from the stored run's 0". The data's fingerprint is not known before the dataset
    is opened, so the stored one stands in for it; a different dataset key is reported by its key when keys can
    tell (`datasets_differ_by_key`), else the runner's fingerprint check decides when the run starts. Empty when
    starting resumes the run."""
    from workbench.service.stores import differences_phrase, identity_differences

    identity = stored["identity"]
    rebuilt = spec.identity(identity.get("dataset_fingerprint", ""))
    errors = _dataset_conflict(stored.get("dataset"), spec.dataset)
    other: list[str] = []
    for key in identity_differences(identity, rebuilt):
        if key == "caps":
            old, new = identity.get("caps") or {}, rebuilt.get("caps") or {}
            same_ablation = identity.get("ablation") == rebuilt.get("ablation")  # else the ablation explains it
            other += _caps_conflicts(identity_differences(old, new), old, same_ablation, errors)
        elif key in IDENTITY_FIELDS:
            field_id, label = IDENTITY_FIELDS[key]
            errors[field_id] = f"{label} differs from the stored run's {_shown_identity(key, identity.get(key))}"
        else:
            other.append(key)
    if not errors and not other:
        return {}
    lead = f"{differences_phrase(other)} from the stored run; " if other else ""
    errors["name"] = (
        f"{lead}'{spec.name}' is a stored run with another configuration: keep its values to "
        f"resume it, choose another name, or on Runs rename ({rename_key}) or delete ({delete_key}) it"
    )
    return errors


def _dataset_conflict(stored: str | None, requested: str) -> dict[str, str]:
    """The dataset field's message when the stored run's dataset key and the form's name different data."""
    if not stored or not datasets_differ_by_key(stored, requested):
        return {}
    field_id = "path" if requested != "builtin" else "dataset_kind"
    return {field_id: f"dataset differs from the stored run's {dataset_label(stored)}"}


def _caps_conflicts(
    caps: list[str], old: Mapping[str, int | dict[str, int] | list[str]], same_ablation: bool, errors: dict[str, str]
) -> list[str]:
    """The differing `caps`: one the form has a field for goes in `errors` (field → message, naming the stored run's
    `old` value: its caps as `Caps.as_dict` records them), the others are returned as `caps.NAME` unless the
    ablations differ (the ablation explains them)."""
    other = []
    for cap in caps:
        if cap in IDENTITY_FIELDS:
            field_id, label = IDENTITY_FIELDS[cap]
            errors[field_id] = f"{label} differs from the stored run's {_shown(old.get(cap))}"
        elif same_ablation:
            other.append(f"caps.{cap}")
    return other


def _shown_identity(key: str, value: Any) -> str:
    """A stored identity's value as a conflict names it; a prompts file by its hash's start ("(ours)": none)."""
    if key != "prompts":
        return _shown(value)
    return f"(a file hashed {str(value)[:12]})" if value else "(ours)"


def datasets_differ_by_key(stored: str, requested: str) -> bool:
    """Whether two recorded dataset keys name different data by their keys alone. A run's identity is its data's
    content fingerprint, and a Hub release's is known only once fetched: a key on either side that is a Hub spec
    (`hf:…`, possibly the very files of a release directory, or of another repository's) decides nothing here,
    and the runner compares fingerprints when the run starts, refusing a real difference there."""
    from workbench.service.datasets import is_hub

    return stored != requested and not (is_hub(stored) or is_hub(requested))


def _shown(value: Any) -> str:
    return "none" if value is None or value == "" else str(value)


@dataclass(frozen=True)
class QARow:
    """What selecting a slice needs of an item; `kind` is computed as `Item` computes it."""

    id: str
    question_type: str | None
    depth: int | None

    multi_target = Item.multi_target
    kind = Item.kind


@lru_cache(maxsize=8)
def _qa_rows(path: str, mtime_ns: int, size: int) -> tuple[QARow, ...] | None:
    """The QA file's items (cached while the file is unchanged: the form validates on every keystroke)."""
    rows = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    obj = json.loads(line)
                    rows.append(QARow(str(obj["id"]), obj.get("question_type"), obj.get("depth")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return tuple(rows)


def dataset_rows(dataset: str, cache_dir: Path | None) -> tuple[QARow, ...] | None:
    """The dataset's items when its QA file can be read without generating or importing anything, else None."""
    from workbench.service.datasets import qa_file

    path = qa_file(dataset, cache_dir) if cache_dir is not None else None
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return _qa_rows(str(path), st.st_mtime_ns, st.st_size)


def slice_episodes(spec, cache_dir: Path | None) -> tuple[tuple[int, bool] | None, str | None]:
    """((episodes the run plays, whether that count is exact), why the slice is invalid).

    Exact from the dataset's items (the runner's own `select_items`, so unknown ids are refused here, before
    launch); otherwise an upper bound from the ids or the dataset's size (the slice is applied when it opens)."""
    from workbench.service.errors import InvalidSlice
    from workbench.service.execution import select_items

    rows = dataset_rows(spec.dataset, cache_dir)
    if rows is not None:
        try:
            items = select_items(SimpleNamespace(items=list(rows)), spec)
        except InvalidSlice as exc:
            return None, str(exc)
        return (len(items) * spec.replicates, True), None
    n = len(spec.item_ids) or dataset_size(spec.dataset)
    if n is None:
        return None, None
    if spec.limit:
        n = min(n, spec.limit)
    return (n * spec.replicates, not (spec.question_type or spec.depth)), None


def dataset_size(dataset: str) -> int | None:
    """Items in the dataset without opening it: the built-in benchmark's size, or the QA file's line count."""
    if dataset == "builtin":
        from workbench.service.datasets import demo_item_count

        return demo_item_count()
    from workbench.service.datasets import is_hub, qa_file

    path = qa_file(dataset, Path()) if is_hub(dataset) else Path(dataset) / "qa" / "full.jsonl"  # Hub: if cached
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return None


def llm_cost_note(spec, episodes: int | None, exact: bool, store_path: Path | None) -> str:
    """The cost estimate shown before an LLM run starts (an upper bound when the count is)."""
    from workbench.service.estimate import per_episode
    from workbench.views.estimate import cost_line

    if episodes is None:
        return "cost: the dataset's size is unknown until it is opened"
    if store_path is None:
        from workbench.service.paths import store_path as default_store

        store_path = default_store()
    return "cost " + cost_line(per_episode(spec, store_path), episodes, upper_bound=not exact)


def run_values(run: dict[str, Any]) -> tuple[dict[str, str], dict[str, Any]]:
    """Form values that launch a stored run again under its own name, so that the runner resumes it (the episodes
    already stored are skipped), and its agent options the form has no field for.

    ValueError, with the reason, when the form cannot reproduce the run: scaling runs, replayed reference runs,
    or a configuration the form has no field for (custom tool costs, say). Checked by rebuilding the run's
    identity, the very thing the runner compares before resuming."""
    config = run.get("config") or {}
    _refuse_unrelaunchable(run, config)
    options = dict(config.get("agent_options") or {})
    values = _form_values(run, config, options)  # takes the options that have fields out of `options`
    if config.get("extra_tools"):  # the general-agent setting, as recorded
        values.update(_extra_tools_values(config["extra_tools"]))
    _check_identity(run, values, options)
    return values, options


def _refuse_unrelaunchable(run: dict[str, Any], config: dict[str, Any]) -> None:
    """ValueError for a scaling run or an agent the form cannot start."""
    name = run["name"]
    if (run.get("kind") or "eval") != "eval" or config.get("scaling") or config.get("context_budget") is not None:
        raise ValueError(f"'{name}' is a scaling run: resume it with the --batch scale command that started it")
    if run["agent"] not in AGENTS:
        raise ValueError(f"'{name}' ran the {run['agent']} agent, which the launch form cannot start")


def _form_values(run: dict[str, Any], config: dict[str, Any], options: dict[str, Any]) -> dict[str, str]:
    """The form's fields as the run recorded them; the agent options that have a field are popped from `options`."""
    (budget, max_turns, max_tokens), cut = recorded_limits(run.get("caps")), config.get("slice") or {}
    builtin = run["dataset"] == "builtin"
    recorded_type = cut.get("question_type")
    qtype = {"st": "single-target", "mt": "multi-target"}.get(str(recorded_type), recorded_type)
    return {
        "dataset_kind": "builtin" if builtin else "release",
        "path": "" if builtin else run["dataset"],
        "agent": run["agent"],
        "model": _or(run.get("model")),
        "base_url": _last(config.get("base_urls"), options.pop("base_url", "")),
        "client": _last(config.get("clients"), options.pop("client", "")) or "auto",
        "local_threads": _or(options.pop("local_threads", "")),
        "ablation": _or(run.get("ablation"), "full"),
        "budget": str(budget),
        "max_turns": str(max_turns),
        "max_tokens": str(max_tokens),
        "question_type": _or(qtype, "any"),
        "depth": _or(cut.get("depth"), "any"),
        "limit": _or(cut.get("limit")),
        "ids": ", ".join(cut.get("ids") or []),
        "workers": _or(config.get("workers"), "4"),
        "replicates": _or(run.get("replicates"), "1"),
        "seed": _or(run.get("seed"), "0"),
        "name": run["name"],
        "distractible": _or(options.pop("distractible", "")),
        "family": _or(run.get("family")),
        "tier": _or(run.get("tier"), "auto"),
    }


def _or(value: Any, default: str = "") -> str:
    """A recorded value as a form field's text, `default` when it is absent, empty or zero."""
    return str(value) if value else default


def _extra_tools_values(setting: dict[str, Any]) -> dict[str, str]:
    """The extra-tools fields of a run in the general-agent setting."""
    return {
        "extra_kind": setting["source"],
        "extra_source": setting.get("where") or "",
        "extra_count": str(setting["count"]),
        "extra_detail": setting["detail"],
        "extra_cost": str(setting["cost"]),
    }


def _check_identity(run: dict[str, Any], values: dict[str, str], options: dict[str, Any]) -> None:
    """ValueError unless the form's values rebuild the run's identity (its prompts file excepted: a field)."""
    from workbench.service.stores import differences_phrase, identity_differences

    name, identity = run["name"], run.get("identity") or {}
    result = validate(values, set(), llm_ok=True, options=options)
    if result.spec is None:
        raise ValueError(f"'{name}' cannot be relaunched from the form: " + "; ".join(result.errors.values()))
    differ = identity_differences(identity, result.spec.identity(identity.get("dataset_fingerprint", "")))
    differ = [key for key in differ if key != "prompts"]  # its prompts file is a field: the form asks for it
    if identity and differ:
        raise ValueError(
            f"'{name}' cannot be relaunched from the form ({differences_phrase(differ)}); "
            "resume it with the --batch run command that started it"
        )


def _last(used: list[str] | None, fallback: Any) -> str:
    """The last of the values a run recorded using (its base URLs, its clients: execution options, kept in its
    config, never in the identity's agent options), else `fallback`: a relaunch goes where the run last went."""
    return str((used[-1] if used else None) or fallback or "")


def _field(label: str, widget, classes: str = "") -> Horizontal:
    return Horizontal(Label(label, classes="field-label"), widget, classes=f"field {classes}".strip())


class LaunchScreen(WorkbenchNode, ModalScreen):
    """Dismisses with a RunSpec, or None when cancelled."""

    HELP_TITLE = "Launch"
    BINDINGS = [
        Binding("escape", "cancel", "Cancel", id="launch.cancel"),
        Binding("ctrl+r", "start", "Start", id="launch.start"),
    ]

    def __init__(
        self,
        existing: set[str],
        values: dict[str, str] | None = None,
        options: dict[str, Any] | None = None,
        title: str = "New run",
    ):
        super().__init__(classes="dialog-screen")
        self.existing = set(existing)
        self.llm_ok = agents.llm_available()
        self.values = {**DEFAULTS, **(values or {})}
        # agent options without a field (a relaunched run's; None for a new run): the service adds `[[pricing]]`
        self.options = None if options is None else dict(options)
        self.title_text = title
        self._notes_memo: dict = {}
        self._stored_runs: dict[str, dict[str, Any] | None] = {}
        self._name_edited = bool(self.values.get("name"))
        if not self.values["name"]:
            self.values["name"] = self._default_name()
        self.result: Validation | None = None

    def compose(self) -> ComposeResult:
        v = self.values
        agent_options = [(a if a != "llm" or self.llm_ok else "llm (unavailable)", a) for a in AGENTS]
        with Vertical(classes="dialog launch-dialog"):
            yield Static(Text(self.title_text), classes="dialog-title")
            with VerticalScroll(id="launch-form"):
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Dataset",
                        Select(
                            [("built-in benchmark", "builtin"), ("release directory or hf:", "release")],
                            value=v["dataset_kind"],
                            allow_blank=False,
                            id="dataset_kind",
                        ),
                    )
                    yield _field(
                        "Path",
                        Input(
                            v["path"],
                            placeholder="/path/to/release or hf:OWNER/NAME",
                            id="path",
                        ),
                        "wide",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Agent", Select(agent_options, value=v["agent"], allow_blank=False, id="agent"), "agent"
                    )
                    yield _field("Model", Input(v["model"], placeholder="provider/model", id="model"), "model")
                    yield _field(
                        "Base URL", Input(v["base_url"], placeholder="http://127.0.0.1:8000/v1", id="base_url"), "url"
                    )
                    yield _field(
                        "Client",
                        Select(
                            [(c, c) for c in CLIENTS], value=v.get("client", "auto"), allow_blank=False, id="client"
                        ),
                        "client",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Ablation",
                        Select([(a, a) for a in ABLATIONS], value=v["ablation"], allow_blank=False, id="ablation"),
                    )
                    yield _field("Points", Input(v["budget"], id="budget", classes="num"))
                    yield _field("Turns", Input(v["max_turns"], id="max_turns", classes="num"))
                    yield _field("Tokens", Input(v["max_tokens"], id="max_tokens", classes="num"))
                    # a local/ model's server threads (empty: one less than the cores)
                    yield _field(
                        "Threads",
                        Input(v.get("local_threads", ""), placeholder="auto", id="local_threads", classes="num"),
                        "short",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Type",
                        Select(
                            [("any", "any"), ("single-target", "single-target"), ("multi-target", "multi-target")],
                            value=v["question_type"],
                            allow_blank=False,
                            id="question_type",
                        ),
                    )
                    yield _field(
                        "Depth",
                        Select(
                            [("any", "any"), ("1", "1"), ("2", "2")], value=v["depth"], allow_blank=False, id="depth"
                        ),
                        "short",
                    )
                    yield _field("Limit", Input(v["limit"], placeholder="all", id="limit", classes="num"))
                    yield _field("Ids", Input(v["ids"], placeholder="st_0001, mt_0002", id="ids"), "wide")
                with Horizontal(classes="form-row"):
                    yield _field("Workers", Input(v["workers"], id="workers", classes="num"))
                    yield _field("Replicates", Input(v["replicates"], id="replicates", classes="num"))
                    yield _field("Seed", Input(v["seed"], id="seed", classes="num"))
                    yield _field("Name", Input(v["name"], id="name"), "wide")
                with Horizontal(classes="form-row"):  # the general-agent setting
                    yield _field(
                        "Extra tools", Select(EXTRA_KINDS, value=v["extra_kind"], allow_blank=False, id="extra_kind")
                    )
                    yield _field(
                        "File / cmd",
                        Input(
                            v["extra_source"],
                            placeholder="tools.json, or the command that starts the MCP server",
                            id="extra_source",
                        ),
                        "wide",
                    )
                    yield _field(
                        "Timeout s", Input(v["extra_timeout"], placeholder="30", id="extra_timeout", classes="num")
                    )
                with Horizontal(classes="form-row"):
                    yield _field("Count", Input(v["extra_count"], placeholder="all", id="extra_count", classes="num"))
                    yield _field(
                        "Detail",
                        Select(
                            [(d, d) for d in ("full", "short", "names")],
                            value=v["extra_detail"],
                            allow_blank=False,
                            id="extra_detail",
                        ),
                    )
                    yield _field("Tool cost", Input(v["extra_cost"], id="extra_cost", classes="num"))
                    yield _field(
                        "Distractible",
                        Input(v["distractible"], placeholder="0 to 1 (heuristic)", id="distractible", classes="num"),
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Prompts",
                        Input(
                            v["prompts"],
                            placeholder="ours (or a prompts file: --batch prompts export writes one to edit)",
                            id="prompts",
                        ),
                        "wide",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Family", Input(v["family"], placeholder="from the model (GPT, Claude, …)", id="family"), "wide"
                    )
                    yield _field(
                        "Tier",
                        Select(
                            [("from the model", "auto")] + [(t, t) for t in TIERS],
                            value=v["tier"],
                            allow_blank=False,
                            id="tier",
                        ),
                        "wide",
                    )
            yield Static("", id="launch-messages")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (esc)", id="cancel")
                yield Button("Start (ctrl+r)", id="start", variant="primary")

    def on_mount(self) -> None:
        self._sync_enabled()
        self.revalidate()
        self.query_one("#agent", Select).focus()

    def _sync_enabled(self) -> None:
        self.query_one("#path", Input).disabled = self.values["dataset_kind"] == "builtin"
        llm = self.values["agent"] == "llm"
        self.query_one("#model", Input).disabled = not llm
        self.query_one("#base_url", Input).disabled = not llm
        self.query_one("#client", Select).disabled = not llm
        # the local model server's threads: only a local/ model has a server here
        self.query_one("#local_threads", Input).disabled = not (
            llm and self.values["model"].strip().startswith("local/")
        )
        kind = self.values.get("extra_kind", "none")
        self.query_one("#extra_source", Input).disabled = kind in ("none", "builtin")
        for key in ("extra_count", "extra_detail", "extra_cost"):
            self.query_one(f"#{key}").disabled = kind == "none"
        self.query_one("#extra_timeout", Input).disabled = kind != "mcp"  # an MCP server's calls only
        self.query_one("#distractible", Input).disabled = self.values["agent"] != "heuristic"

    def on_select_changed(self, event: Select.Changed) -> None:
        key = event.select.id
        if key is None or event.value is Select.BLANK:
            return
        self.values[key] = str(event.value)
        if key in ("agent", "dataset_kind", "ablation", "extra_kind"):
            self._sync_enabled()
            self._suggest_name()
        self.revalidate()

    def on_input_changed(self, event: Input.Changed) -> None:
        key = event.input.id
        if key is None:
            return
        self.values[key] = event.value
        if key == "name":
            self._name_edited = event.value != self._default_name()
        elif key in ("path", "model", "seed"):
            self._suggest_name()
        if key == "model":
            self._sync_enabled()
        self.revalidate()

    def _default_name(self) -> str:
        v = self.values
        try:
            seed = int(v["seed"].strip() or 0)
        except ValueError:
            seed = 0
        return default_name(v["agent"], v["dataset_kind"], v["path"], self.existing, v["model"], v["ablation"], seed)

    def _suggest_name(self) -> None:
        if self._name_edited:
            return
        name = self._default_name()
        box = self.query_one("#name", Input)
        if box.value != name:
            box.value = name
            self.values["name"] = name

    def _stored(self, name: str) -> dict[str, Any] | None:
        """The stored run the form's name would resume (read once per name), for `validate` to compare."""
        if name not in self.existing:
            return None
        if name not in self._stored_runs:
            opener = getattr(self.app, "open_store", None)
            store = opener(create=False) if opener else None
            try:
                self._stored_runs[name] = store.run(name) if store is not None else None
            except LookupError:
                self._stored_runs[name] = None
        return self._stored_runs[name]

    def revalidate(self) -> Validation:
        app = self.app
        result = validate(
            self.values,
            self.existing,
            self.llm_ok,
            cache_dir=getattr(app, "cache_dir", None),
            store_path=getattr(app, "store_path", None),
            options=self.options,
            notes_memo=self._notes_memo,
            stored=self._stored(self.values["name"].strip()),
            keys=(bound_key(app, "runs.rename", "r"), bound_key(app, "runs.delete", "d")),
        )
        self.result = result
        for key in DEFAULTS:
            try:
                widget = self.query_one(f"#{key}")
            except NoMatches:  # a field this form does not show
                continue
            widget.set_class(key in result.errors, "-invalid")
        lines = Text()
        for message in result.errors.values():
            lines.append("✗ " + message + "\n", style="bold")
        for note in result.notes:
            lines.append("· " + note + "\n")
        if not result.errors:
            lines.append(
                "ready: ctrl+r or Start starts the run (enter moves to the next field); "
                "it keeps running if you leave this screen",
                style="dim" if result.notes else "",
            )
        self.query_one("#launch-messages", Static).update(lines)
        self.query_one("#launch-messages").set_class(bool(result.errors), "-error")
        self.query_one("#start", Button).disabled = bool(result.errors)
        return result

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter moves on: starting is a deliberate act (ctrl+r, the Start button), since an LLM run costs money."""
        event.stop()
        self.focus_next()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        else:
            self.dismiss(None)

    def action_start(self) -> None:
        result = self.revalidate()
        if result.spec is not None:
            self.dismiss(result.spec)
        else:
            self.notify("fix the highlighted fields first", severity="warning", timeout=2)

    def action_cancel(self) -> None:
        self.dismiss(None)
