"""The form that launches a scaling study from the Scaling screen: a sequential sweep (axis, grid, strategies,
verifier) or a parallel study (k, judge, trials), over the launch form's basic run choices.

It only parses text fields; `workbench.service.scaling.plan_study` checks everything and makes the runs, as the
CLI's `scale` commands do, so a problem reads the same and a study launched here resumes from the CLI.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

# field id → (label, default); the kind and the axis are choices
FIELDS = (
    ("study-name", "name", "study"),
    ("study-agent", "agent", "heuristic"),
    ("study-model", "model (llm)", ""),
    ("study-base-url", "base URL (llm)", ""),
    ("study-limit", "items (limit)", "6"),
    ("study-grid", "grid (sequential)", "2k,4k,8k"),
    ("study-strategies", "strategies (sequential)", "continue,summarize,verifier"),
    ("study-verifier", "verifier (verifier strategy)", "evidence"),
    ("study-ks", "k (parallel)", "1,2,4"),
    ("study-judge", "judge (parallel)", "evidence"),
    ("study-trials", "judge trials (parallel)", "1"),
)


class StudyForm(ModalScreen[Any]):
    """Fields, then Start (ctrl+s) or Cancel (escape); a problem shows in the error line and nothing is launched."""

    BINDINGS = [
        Binding("ctrl+s", "start", "Start", id="study.start"),
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
            yield Static("", id="study-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (esc)", id="study-cancel")
                yield Button("Start (ctrl+s)", id="study-start", variant="primary")

    def values(self) -> dict[str, str]:
        out = {field_id: self.query_one(f"#{field_id}", Input).value.strip() for field_id, _, _ in FIELDS}
        out["study-kind"] = str(self.query_one("#study-kind", Select).value)
        out["study-axis"] = str(self.query_one("#study-axis", Select).value)
        return out

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "study-start":
            self.action_start()
        else:
            self.dismiss(None)

    def action_start(self) -> None:
        plan, problem = self.check(self.values())
        if problem:
            self.query_one("#study-error", Static).update(Text(problem))
            return
        self.dismiss(plan)

    def action_cancel(self) -> None:
        self.dismiss(None)


def study_request(values: dict[str, str]):
    """The form's text as the service's StudyRequest (ValueError naming the field for a number that is none)."""
    from workbench.service.launch import LaunchRequest
    from workbench.service.scaling import StudyRequest

    def whole(field_id: str, label: str) -> int:
        try:
            return int(values[field_id])
        except ValueError:
            raise ValueError(f"{label}: '{values[field_id]}' is not a whole number") from None

    launch = LaunchRequest(
        agent=values["study-agent"] or "heuristic",
        name=values["study-name"] or None,
        model=values["study-model"] or None,
        base_url=values["study-base-url"] or None,
        limit=whole("study-limit", "items") if values["study-limit"] else None,
    )
    return StudyRequest(
        kind=values["study-kind"],
        launch=launch,
        axis=values["study-axis"],
        grid=values["study-grid"],
        strategies=values["study-strategies"],
        verifier=(values["study-verifier"] or None) if "verifier" in values["study-strategies"] else None,
        ks=values["study-ks"],
        judge=values["study-judge"] or "evidence",
        judge_trials=whole("study-trials", "judge trials") if values["study-trials"] else 1,
    )
