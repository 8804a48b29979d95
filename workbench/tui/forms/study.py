"""The study form's model: its fields in (`StudyFields`), the scaling service's `StudyRequest` out (ValueError naming
a field whose number is none), the study planned from it or the problem that stops it (`planned_study`), and a
service's problem said in the form's words.

It only parses text fields; `workbench.service.scaling.plan_study` checks everything and makes the runs, as the
CLI's `scale` commands do, so a study launched from the form resumes from the CLI; a problem worded for the CLI is
said in the form's words (`workbench.tui.flag_words`: `--grid` reads `grid`).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from sandbox.records import Caps
from workbench.service.launch import LaunchError, LaunchRequest
from workbench.tui.flag_words import in_form_words

if TYPE_CHECKING:  # named for the annotation only: the scaling service is imported when a study is asked for
    from workbench.service.scaling import StudyPlan, StudyRequest


@dataclass(frozen=True)
class StudyFields:
    """Each field of the study form as the person left it (the text typed, or the value of the choice made): a
    sequential sweep (axis, grid, strategies, verifier and its server) or a parallel study (k, judge, trials,
    orders, tie rule), over the basic run choices and the caps, with the cost mode the report prices by. The
    defaults are the form's when it opens."""

    kind: str = "sequential"  # or "parallel"
    axis: str = "tokens"  # the sequential sweep's budget: tokens, points or turns
    name: str = "study"
    agent: str = "heuristic"
    model: str = ""
    base_url: str = ""
    limit: str = "6"
    budget: str = str(Caps.budget)
    max_turns: str = str(Caps.max_turns)
    max_tokens: str = str(Caps.max_tokens_total)
    grid: str = "2k,4k,8k"
    strategies: str = "continue,summarize,verifier"
    verifier: str = "evidence"
    verifier_base_url: str = ""
    ks: str = "1,2,4"
    judge: str = "evidence"
    trials: str = "1"
    orders: str = "8"
    tie_rule: str = "split"
    cost_mode: str = "cache-aware"


# a CLI flag (or a request field) as the form names it, for the messages the services word for the CLI
LABELS = {
    "grid": "grid",
    "strategy": "strategies",
    "verifier": "verifier",
    "verifier_base_url": "verifier base URL",
    "k": "k",
    "judge": "judge",
    "judge_trials": "judge trials",
    "orders": "pairwise orders",
    "tie_rule": "majority ties",
    "cost_mode": "cost mode",
    "limit": "items",
    "budget": "points budget",
    "max_turns": "max turns",
    "max_tokens_total": "max tokens total",
    "model": "model",
    "base_url": "base URL",
    "agent": "agent",
    "name": "name",
}


def in_study_words(problem: str) -> str:
    """A problem the services word for the CLI (`--grid: …`) in the study form's words (`grid: …`)."""
    return in_form_words(problem, LABELS)


def study_request(typed: StudyFields) -> StudyRequest:
    """The form's fields as the service's StudyRequest (ValueError naming the field for a number that is none);
    the spaces around a field's text do not count."""
    from workbench.service.scaling import StudyRequest

    v = replace(typed, **{f.name: getattr(typed, f.name).strip() for f in fields(typed)})
    return StudyRequest(
        kind=v.kind,
        launch=_study_launch(v),
        axis=v.axis,
        grid=v.grid,
        strategies=v.strategies,
        verifier=(v.verifier or None) if "verifier" in v.strategies else None,
        ks=v.ks,
        judge=v.judge or "evidence",
        judge_trials=_whole(v.trials, "judge trials") if v.trials else 1,
        orders=_whole(v.orders, LABELS["orders"]) if v.orders else 8,
        tie_rule=v.tie_rule or "split",
        cost_mode=v.cost_mode or "cache-aware",
        verifier_base_url=v.verifier_base_url or None,
    )


def _whole(text: str, label: str) -> int:
    """The whole number `text` (ValueError naming the field by `label` when it is none)."""
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{label}: '{text}' is not a whole number") from None


def _study_launch(v: StudyFields) -> LaunchRequest:
    """The launch request of the study's runs: agent, name, model, base URL, item limit and caps (blank: the
    defaults)."""

    def cap(text: str, key: str, default: int) -> int:
        return _whole(text, LABELS[key]) if text else default

    return LaunchRequest(
        agent=v.agent or "heuristic",
        name=v.name or None,
        model=v.model or None,
        base_url=v.base_url or None,
        limit=_whole(v.limit, "items") if v.limit else None,
        budget=cap(v.budget, "budget", Caps.budget),
        max_turns=cap(v.max_turns, "max_turns", Caps.max_turns),
        max_tokens_total=cap(v.max_tokens, "max_tokens_total", Caps.max_tokens_total),
    )


def planned_study(typed: StudyFields, store: Any) -> tuple[StudyPlan | None, str | None]:
    """(the study's plan, None), or (None, the problem) for the form's error line: the fields as a request, planned
    by the scaling service and checked against the runs already in `store` (the app's open store, untyped here as
    the TUI names no storage class; None: no store yet); nothing is written."""
    from workbench.service.scaling import ScalingInputError, check_plan, plan_study

    try:
        plan = plan_study(study_request(typed))
        if store is not None:
            check_plan(store, plan)
    except (LaunchError, ScalingInputError, ValueError) as exc:
        return None, str(exc)
    return plan, None
