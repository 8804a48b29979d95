"""The form that launches a scaling study from the Scaling screen: a sequential sweep (axis, grid, strategies,
verifier and its server) or a parallel study (k, judge, trials, orders, tie rule), over the launch form's basic run
choices and the caps, with the cost mode the study's report prices by — what the CLI's `scale` commands take.

The form's model (`workbench.tui.forms.study`) reads its fields as the scaling service's request and words a
problem in the form's words; this screen lays the fields out, reads them into the model and shows the problem.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from workbench.tui.forms.study import StudyFields, in_study_words

# text field (a `StudyFields` attribute, the widget's id `study-` and it in kebab case) → its label
FIELDS = (
    ("name", "name"),
    ("agent", "agent"),
    ("model", "model (llm)"),
    ("base_url", "base URL (llm)"),
    ("limit", "items (limit)"),
    ("budget", "points budget (cap)"),
    ("max_turns", "max turns (cap)"),
    ("max_tokens", "max tokens total (cap)"),
    ("grid", "grid (sequential)"),
    ("strategies", "strategies (sequential)"),
    ("verifier", "verifier (verifier strategy)"),
    ("verifier_base_url", "verifier base URL (a model verifier)"),
    ("ks", "k (parallel)"),
    ("judge", "judge (parallel)"),
    ("trials", "judge trials (parallel)"),
    ("orders", "pairwise orders (parallel; 1: the samples' own)"),
)
# choice (as above) → (label, [(shown, value)]): the kind and the axis above the text fields, the others below
Choices = tuple[tuple[str, str, list[tuple[str, str]]], ...]
FIRST_CHOICES: Choices = (
    ("kind", "kind", [("sequential sweep", "sequential"), ("parallel study", "parallel")]),
    ("axis", "axis (sequential)", [(a, a) for a in ("tokens", "points", "turns")]),
)
LAST_CHOICES: Choices = (
    ("tie_rule", "majority ties (parallel)", [("split evenly (ours)", "split"), ("first sample (study)", "first")]),
    ("cost_mode", "cost mode", [("cache-aware (ours)", "cache-aware"), ("study (App. C.1)", "study")]),
)
DEFAULTS = StudyFields()  # the fields as the form opens


def widget_id(field: str) -> str:
    """The id of the widget of a `StudyFields` attribute: `max_turns` → `study-max-turns`."""
    return "study-" + field.replace("_", "-")


class StudyForm(ModalScreen[Any]):
    """Fields, then Start (ctrl+r, as the New run form) or Cancel (escape); a problem shows in the error line, in the
    form's words, and nothing is launched. The name field has the focus when the form opens."""

    BINDINGS = [
        Binding("ctrl+r", "start", "Start", id="study.start"),
        Binding("escape", "cancel", "Cancel", id="study.cancel"),
    ]

    def __init__(self, check: Callable[[StudyFields], tuple[Any, str | None]]) -> None:
        super().__init__(classes="dialog-screen")
        self.check = check  # fields → (plan, None) or (None, the problem)

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog", id="study-dialog"):
            yield Static(Text("New scaling study"), classes="dialog-title")
            with VerticalScroll(id="study-fields"):
                yield from self._choices(FIRST_CHOICES)
                for field, label in FIELDS:
                    yield Label(label)
                    yield Input(getattr(DEFAULTS, field), id=widget_id(field))
                yield from self._choices(LAST_CHOICES)
            yield Static("", id="study-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (esc)", id="study-cancel")
                yield Button("Start (ctrl+r)", id="study-start", variant="primary")

    @staticmethod
    def _choices(choices: Choices) -> ComposeResult:
        for field, label, options in choices:
            yield Label(label)
            yield Select(options, value=getattr(DEFAULTS, field), allow_blank=False, id=widget_id(field))

    def on_mount(self) -> None:
        self.query_one("#study-name", Input).focus()  # typed text lands in a field from the first key

    def values(self) -> StudyFields:
        """The fields as the widgets hold them now."""
        typed = {field: self.query_one(f"#{widget_id(field)}", Input).value for field, _ in FIELDS}
        for field, _, _ in FIRST_CHOICES + LAST_CHOICES:
            typed[field] = str(self.query_one(f"#{widget_id(field)}", Select).value)
        return StudyFields(**typed)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "study-start":
            self.action_start()
        else:
            self.dismiss(None)

    def action_start(self) -> None:
        plan, problem = self.check(self.values())
        if problem:
            self.query_one("#study-error", Static).update(Text(in_study_words(problem)))
            return
        self.dismiss(plan)

    def action_cancel(self) -> None:
        self.dismiss(None)
