"""A stored run as the launch form's fields: `R` on the runs list opens the form filled in under the run's own
name, so that starting resumes it (the runner skips the episodes already stored), with its agent options the form
has no field for. A run the form cannot reproduce is refused with the reason, before any form opens."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from sandbox.records import DEFAULT_WORKERS, recorded_limits
from workbench.service.launch import AGENTS
from workbench.tui.forms.launch import validate
from workbench.tui.forms.launch_fields import LaunchFields


def run_values(run: dict[str, Any]) -> tuple[LaunchFields, dict[str, Any]]:
    """The form's fields that launch a stored run again under its own name, so that the runner resumes it (the episodes
    already stored are skipped), and its agent options the form has no field for.

    ValueError, with the reason, when the form cannot reproduce the run: scaling runs, replayed reference runs,
    or a configuration the form has no field for (custom tool costs, say). Checked by rebuilding the run's
    identity, the very thing the runner compares before resuming."""
    config = run.get("config") or {}
    _refuse_unrelaunchable(run, config)
    options = dict(config.get("agent_options") or {})
    values = _form_values(run, config, options)  # takes the options that have fields out of `options`
    if config.get("extra_tools"):  # the general-agent setting, as recorded
        values = replace(values, **_extra_tools_values(config["extra_tools"]))
    _check_identity(run, values, options)
    return values, options


def _refuse_unrelaunchable(run: dict[str, Any], config: dict[str, Any]) -> None:
    """ValueError for a scaling run or an agent the form cannot start."""
    name = run["name"]
    if (run.get("kind") or "eval") != "eval" or config.get("scaling") or config.get("context_budget") is not None:
        raise ValueError(f"'{name}' is a scaling run: resume it with the --batch scale command that started it")
    if run["agent"] not in AGENTS:
        raise ValueError(f"'{name}' ran the {run['agent']} agent, which the launch form cannot start")


def _form_values(run: dict[str, Any], config: dict[str, Any], options: dict[str, Any]) -> LaunchFields:
    """The form's fields as the run recorded them; the agent options that have a field are popped from `options`."""
    (budget, max_turns, max_tokens), cut = recorded_limits(run.get("caps")), config.get("slice") or {}
    builtin = run["dataset"] == "builtin"
    recorded_type = cut.get("question_type")
    qtype = {"st": "single-target", "mt": "multi-target"}.get(str(recorded_type), recorded_type)
    return LaunchFields(
        dataset_kind="builtin" if builtin else "release",
        path="" if builtin else run["dataset"],
        agent=run["agent"],
        model=_or(run.get("model")),
        base_url=_last(config.get("base_urls"), options.pop("base_url", "")),
        client=_last(config.get("clients"), options.pop("client", "")) or "auto",
        local_threads=_or(options.pop("local_threads", "")),
        ablation=_or(run.get("ablation"), "full"),
        budget=str(budget),
        max_turns=str(max_turns),
        max_tokens=str(max_tokens),
        question_type=_or(qtype, "any"),
        depth=_or(cut.get("depth"), "any"),
        limit=_or(cut.get("limit")),
        ids=", ".join(cut.get("ids") or []),
        workers=_or(config.get("workers"), str(DEFAULT_WORKERS)),
        replicates=_or(run.get("replicates"), "1"),
        seed=_or(run.get("seed"), "0"),
        name=run["name"],
        distractible=_or(options.pop("distractible", "")),
        family=_or(run.get("family")),
        tier=_or(run.get("tier"), "auto"),
    )


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


def _check_identity(run: dict[str, Any], values: LaunchFields, options: dict[str, Any]) -> None:
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
