"""The play screen's tool palette and argument form: which keys call which tool with which fields, the fields
themselves (enter takes the completion shown; the answer field explains a refused key), the form that holds the
focus once it is filled in, and the palette line that greys a tool the points left cannot pay.

Widgets only: which key calls which tool with which fields, and what a call needs, are the form's plain model
(`workbench.tui.forms.tool_call`); the screen (`screens/play.py`) decides what a key does and sends the call.
"""

from __future__ import annotations

from typing import Any, TypedDict

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.containers import Vertical
from textual.suggester import Suggester
from textual.widgets import Input, Static

from workbench.tui.forms.tool_call import ACCEPTS, ANSWER_RULE, PLACEHOLDERS, TOOLS


class ArgInput(Input):
    """An argument field: enter takes the completion it shows, so what is sent is what the player saw (the typed
    prefix alone, `b00a`, once went out and cost a point and a turn for a paper not found)."""

    async def action_submit(self) -> None:
        shown = self._suggestion  # Textual's (private) completion state: the text drawn faded after the value
        if self.has_focus and len(shown) > len(self.value) and shown.casefold().startswith(self.value.casefold()):
            self.value = shown
            self.cursor_position = len(shown)
        await super().action_submit()


class AnswerInput(ArgInput):
    """The answer field: a refused key (not A–D, or a second letter) says why instead of only ringing the bell."""

    def restricted(self) -> None:
        super().restricted()
        self.notify(ANSWER_RULE, severity="warning", timeout=3)


class _FieldOptions(TypedDict, total=False):
    """What an argument field adds to its Input: completion from what was seen, the characters it accepts."""

    suggester: Suggester
    restrict: str
    max_length: int


def arg_input(name: str, suggester: Suggester | None = None) -> ArgInput:
    """The argument field `name` (its id `arg-NAME`): its hint, the characters it accepts (`ACCEPTS`) and, when
    given, its completion."""
    extra: _FieldOptions = {}
    if suggester is not None:
        extra["suggester"] = suggester
    accepts = ACCEPTS.get(name)
    if accepts is not None:
        extra["restrict"] = accepts.pattern
        if accepts.max_length:
            extra["max_length"] = accepts.max_length
    kind = AnswerInput if name == "answer" else ArgInput
    return kind(placeholder=PLACEHOLDERS[name], id=f"arg-{name}", compact=True, **extra)


class FormTitle(Static):
    """The form's title: the call and its cost, then each hint while it fits the width the title has when drawn
    (the form's width changes as it opens; the footer names enter and esc too)."""

    def show(self, head: str, hints: list[str], style: Style) -> None:
        self._parts = (head, hints, style)
        self.refresh()

    def render(self) -> Text:
        head, hints, style = getattr(self, "_parts", ("", [], Style()))
        for hint in hints:
            if len(head) + 3 + len(hint) <= self.content_size.width:
                head += f" · {hint}"
        return Text(head, style=style)


class ArgForm(Vertical, can_focus=True):
    """The argument form. It holds the focus itself once every field is filled in: enter sends, a tool key opens
    that tool's form, tab (or a click) edits a field. A key never types into a field the form filled in."""

    BINDINGS = [Binding("enter", "screen.send_form", "Send", id="play.send")]


def tool_palette(caps: Any, active: str | None, enabled: bool, width: int = 0, points_left: int | None = None) -> Text:
    """`1 info·1  2 references·1 …`, each tool's cost from the session's caps, packed into as few lines as `width`
    allows (0: navigation on one line, reading and the free tools on the next) without splitting a tool; the chosen
    tool stands out, and all are dim while it is not the player's turn. A tool costing more than the `points_left`
    is greyed and struck through, its cost still shown: the episode would refuse it (no points, but a turn)."""
    segments = [
        tool_key_text(key, tool, label, caps.cost(tool), active, enabled, points_left) for key, tool, label, _ in TOOLS
    ]
    if not enabled:
        segments.append(Text(" (waiting…)", style="dim"))
    return packed(segments, width)


def tool_key_text(
    key: str, tool: str, label: str, cost: int, active: str | None, enabled: bool, points_left: int | None
) -> Text:
    """One tool of the palette, " 1 info·1 ": reversed when chosen, dim while waiting, struck when unaffordable."""
    seg = Text()
    affordable = points_left is None or cost <= points_left
    seg.append(f" {key} ", style="reverse bold" if tool == active else ("bold" if enabled and affordable else "dim"))
    seg.append(f"{label}·{cost}", style="" if enabled and affordable else ("dim" if affordable else "dim strike"))
    seg.append(" ")
    return seg


def packed(segments: list[Text], width: int) -> Text:
    """The segments on as few lines of `width` as they fit without splitting one (0: four on the first line, the
    rest on the next)."""
    text, used = Text(), 0
    for i, seg in enumerate(segments):
        if used and (seg.cell_len + used > width if width else i == 4):
            text.append("\n")
            used = 0
        text.append_text(seg)
        used += seg.cell_len
    return text
