"""The form that launches a scaling study from the Scaling screen: a sequential sweep (axis, grid, strategies,
verifier and its server) or a parallel study (k, judge, trials, orders, tie rule), over the launch form's basic run
choices and the caps, with the cost mode the study's report prices by — what the CLI's `scale` commands take.

It only parses text fields; `workbench.service.scaling.plan_study` checks everything and makes the runs, as the
CLI's `scale` commands do, so a study launched here resumes from the CLI; a problem is said in the form's words
(`workbench.tui.flag_words`: `--grid` reads `grid`).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from sandbox.records import Caps
from workbench.tui.flag_words import in_form_words

# field id → (label, default); the kind and the axis are choices
FIELDS = (
    ("study-name", "name", "study"),
    ("study-agent", "agent", "heuristic"),
    ("study-model", "model (llm)", ""),
    ("study-base-url", "base URL (llm)", ""),
    ("study-limit", "items (limit)", "6"),
    ("study-budget", "points budget (cap)", str(Caps.budget)),
    ("study-max-turns", "max turns (cap)", str(Caps.max_turns)),
    ("study-max-tokens", "max tokens total (cap)", str(Caps.max_tokens_total)),
    ("study-grid", "grid (sequential)", "2k,4k,8k"),
    ("study-strategies", "strategies (sequential)", "continue,summarize,verifier"),
    ("study-verifier", "verifier (verifier strategy)", "evidence"),
    ("study-verifier-base-url", "verifier base URL (a model verifier)", ""),
    ("study-ks", "k (parallel)", "1,2,4"),
    ("study-judge", "judge (parallel)", "evidence"),
    ("study-trials", "judge trials (parallel)", "1"),
    ("study-orders", "pairwise orders (parallel; 1: the samples' own)", "8"),
)
# choice id → (label, [(shown, value)]); the first value is the default
CHOICES = (
    (
        "study-tie-rule",
        "majority ties (parallel)",
        [("split evenly (ours)", "split"), ("first sample (study)", "first")],
    ),
    ("study-cost-mode", "cost mode", [("cache-aware (ours)", "cache-aware"), ("study (App. C.1)", "study")]),
)
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


class StudyForm(ModalScreen[Any]):
    """Fields, then Start (ctrl+r, as the New run form) or Cancel (escape); a problem shows in the error line, in the
    form's words, and nothing is launched. The name field has the focus when the form opens."""

    BINDINGS = [
        Binding("ctrl+r", "start", "Start", id="study.start"),
        Binding("escape", "cancel", "Cancel", id="study.cancel"),
    ]

    def __init__(self, check) -> None:
        super().__init__(classes="dialog-screen")
        self.check = check  # values → (plan, None) or (None, message)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="study-dialog"):
            yield Static(Text("New scaling study"), classes="dialog-title")
            with VerticalScroll(id="study-fields"):
                yield Label("kind")
                yield Select(
                    [("sequential sweep", "sequential"), ("parallel study", "parallel")],
                    value="sequential",
                    allow_blank=False,
                    id="study-kind",
                )
                yield Label("axis (sequential)")
                yield Select(
                    [(a, a) for a in ("tokens", "points", "turns")], value="tokens", allow_blank=False, id="study-axis"
                )
                for field_id, label, default in FIELDS:
                    yield Label(label)
                    yield Input(default, id=field_id)
                for choice_id, label, options in CHOICES:
                    yield Label(label)
                    yield Select(options, value=options[0][1], allow_blank=False, id=choice_id)
            yield Static("", id="study-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (esc)", id="study-cancel")
                yield Button("Start (ctrl+r)", id="study-start", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#study-name", Input).focus()  # typed text lands in a field from the first key

    def values(self) -> dict[str, str]:
        out = {field_id: self.query_one(f"#{field_id}", Input).value.strip() for field_id, _, _ in FIELDS}
        for choice_id in ("study-kind", "study-axis", *(c[0] for c in CHOICES)):
            out[choice_id] = str(self.query_one(f"#{choice_id}", Select).value)
        return out

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "study-start":
            self.action_start()
        else:
            self.dismiss(None)

    def action_start(self) -> None:
        plan, problem = self.check(self.values())
        if problem:
            self.query_one("#study-error", Static).update(Text(in_form_words(problem, LABELS)))
            return
        self.dismiss(plan)

    def action_cancel(self) -> None:
        self.dismiss(None)


def study_request(values: dict[str, str]):
    """The form's text as the service's StudyRequest (ValueError naming the field for a number that is none)."""
    from workbench.service.scaling import StudyRequest

    def whole(field_id: str, label: str) -> int:
        return _whole(values, field_id, label)

    return StudyRequest(
        kind=values["study-kind"],
        launch=_study_launch(values),
        axis=values["study-axis"],
        grid=values["study-grid"],
        strategies=values["study-strategies"],
        verifier=(values["study-verifier"] or None) if "verifier" in values["study-strategies"] else None,
        ks=values["study-ks"],
        judge=values["study-judge"] or "evidence",
        judge_trials=whole("study-trials", "judge trials") if values["study-trials"] else 1,
        orders=whole("study-orders", LABELS["orders"]) if values.get("study-orders") else 8,
        tie_rule=values.get("study-tie-rule") or "split",
        cost_mode=values.get("study-cost-mode") or "cache-aware",
        verifier_base_url=values.get("study-verifier-base-url") or None,
    )


def _whole(values: dict[str, str], field_id: str, label: str) -> int:
    """The whole number typed in `field_id` (ValueError naming the field by `label` when it is none)."""
    try:
        return int(values[field_id])
    except ValueError:
        raise ValueError(f"{label}: '{values[field_id]}' is not a whole number") from None


def _study_launch(values: dict[str, str]):
    """The launch request of the study's runs: agent, name, model, base URL, item limit and caps (blank: the
    defaults)."""
    from workbench.service.launch import LaunchRequest

    def cap(field_id: str, key: str, default: int) -> int:
        return _whole(values, field_id, LABELS[key]) if values.get(field_id) else default

    return LaunchRequest(
        agent=values["study-agent"] or "heuristic",
        name=values["study-name"] or None,
        model=values["study-model"] or None,
        base_url=values["study-base-url"] or None,
        limit=_whole(values, "study-limit", "items") if values["study-limit"] else None,
        budget=cap("study-budget", "budget", Caps.budget),
        max_turns=cap("study-max-turns", "max_turns", Caps.max_turns),
        max_tokens_total=cap("study-max-tokens", "max_tokens_total", Caps.max_tokens_total),
    )
