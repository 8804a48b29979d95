"""Small modal dialogs: confirm, ask for a name, export a run, pick a dataset."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static
from textual.widgets.option_list import Option

from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.checkbox import Checkbox
from workbench.views.cells import counted

_Result = TypeVar("_Result")


class ConfirmModal(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, message: str, confirm: str = "Delete", title: str = "Confirm"):
        super().__init__(classes="dialog-screen")
        self.message = message
        self.confirm_label = confirm
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text), classes="dialog-title")
            yield Static(Text(self.message), classes="dialog-message")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (n)", id="no")
                yield Button(f"{self.confirm_label} (y)", id="yes", variant="error")

    def on_mount(self) -> None:
        self.query_one("#no", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class LeaveModal(ModalScreen[str | None]):
    """Leaving something half done that has two ways out: the part in play (`y`, "item": on to the next) or the
    whole (`l`, "session"); `n` or escape stays. Without a next part (`next_label` None) only the whole is offered."""

    BINDINGS = [
        Binding("y", "answer('item')", "Next", id="leave.item"),
        Binding("l", "answer('session')", "Leave", id="leave.session"),
        Binding("n,escape", "answer(None)", "Stay", id="leave.stay"),
    ]

    def __init__(self, message: str, next_label: str | None, title: str):
        super().__init__(classes="dialog-screen")
        self.message = message
        self.next_label = next_label
        self.title_text = title

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text), classes="dialog-title")
            yield Static(Text(self.message), classes="dialog-message")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel (n)", id="stay")
                yield Button("Leave the session (l)", id="session", variant="error")
                if self.next_label is not None:
                    yield Button(f"{self.next_label} (y)", id="item", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#stay", Button).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None if event.button.id == "stay" else event.button.id)

    def action_answer(self, value: str | None) -> None:
        if value == "item" and self.next_label is None:
            return  # no next part: y does nothing
        self.dismiss(value)


class CheckedInputModal(ModalScreen[_Result]):
    """A dialog around one checked text field (the name and export dialogs share it).

    While `_error` names a problem with the stripped value it shows in the `.field-error` line and OK is disabled;
    enter or OK hands a value without error to `_accept`; Cancel or escape dismisses with None."""

    MARK_INVALID = True  # whether the field itself is marked -invalid while there is an error

    def _error(self, value: str) -> str | None:
        raise NotImplementedError

    def _accept(self, value: str) -> None:
        raise NotImplementedError

    def on_input_changed(self, event: Input.Changed) -> None:
        error = self._error(event.value.strip())
        self.query_one(".field-error", Static).update(Text(error or ""))
        self.query_one("#ok", Button).disabled = error is not None
        if self.MARK_INVALID:
            event.input.set_class(error is not None, "-invalid")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self._submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "ok":
            self._submit()
        else:
            self.dismiss(None)

    def _submit(self) -> None:
        value = self.query_one(Input).value.strip()
        if self._error(value) is None:
            self._accept(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class NameModal(CheckedInputModal[str | None]):
    """Ask for a (new) name; `check` returns an error message or None. `hint`: what the field takes, on lines of
    its own under the title (a title is one line: what does not fit is cut)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="name.cancel")]

    def __init__(self, title: str, value: str, check: Callable[[str], str | None], hint: str | None = None):
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.value = value
        self.check = check
        self.hint = hint

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text), classes="dialog-title")
            if self.hint:
                yield Static(Text(self.hint), id="name-hint", classes="dialog-message")
            yield Input(self.value, id="name-input", select_on_focus=True)
            yield Static("", id="name-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("OK", id="ok", variant="primary")

    def _error(self, value: str) -> str | None:
        return self.check(value)

    def _accept(self, value: str) -> None:
        self.dismiss(value)


class ExportModal(WorkbenchNode, CheckedInputModal[tuple[Path, bool] | None]):
    """Where to write a run's trajectories as JSON lines, and whether to include every step."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="export.cancel")]
    MARK_INVALID = False  # the path field keeps its look; the line under it says what is wrong

    def __init__(self, run_name: str, default: Path):
        super().__init__(classes="dialog-screen")
        self.run_name = run_name
        self.default = default

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Static(Text(f"Export '{self.run_name}' as JSONL"), classes="dialog-title")
            yield Input(str(self.default), id="export-path")
            # on by default: the same lines as `--batch export --format jsonl`, which always has the steps
            yield Checkbox("include every step (full tool outputs)", True, id="export-steps")
            yield Static("", id="export-error", classes="field-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Export", id="ok", variant="primary")

    def _error(self, value: str) -> str | None:
        if not value:
            return "a file path is needed"
        path = Path(value).expanduser()
        if path.is_dir():
            return "that is a directory; name a file"
        return None

    def _accept(self, value: str) -> None:
        path = Path(value).expanduser()
        answer = (path, self.query_one("#export-steps", Checkbox).value)
        if not path.exists():
            self.dismiss(answer)
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self.dismiss(answer)

        self.app.push_screen(
            ConfirmModal(f"{path} exists. Replace it with the export of '{self.run_name}'?", "Replace", "File exists"),
            confirmed,
        )


class DatasetModal(ModalScreen[str | None]):
    """Pick a dataset: `builtin`, one the store's runs used, or a release directory or a Hub release typed in.

    `choices` are `workbench.service.items.DatasetChoice`s; the result is a dataset spec (`builtin`, a path or
    `hf:OWNER/NAME[@REVISION]`)."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dataset.cancel")]

    def __init__(self, title: str, choices: list, current: str | None = None):
        super().__init__(classes="dialog-screen")
        self.title_text = title
        self.choices = list(choices)
        self.current = current

    def compose(self) -> ComposeResult:
        options = []
        for c in self.choices:
            runs = f"  ({counted(c.runs, 'run')})" if c.runs else ""
            where = "" if c.spec == "builtin" else f"  {c.spec}"
            options.append(Option(Text(f"{c.label}{runs}{where}"), id=c.spec))
        with Vertical(classes="dialog"):
            yield Static(Text(self.title_text), classes="dialog-title")
            yield OptionList(*options, id="dataset-list")
            yield Input(placeholder="or a release directory or hf:OWNER/NAME, then enter", id="dataset-path")
            yield Static("", id="dataset-error", classes="field-error")

    def on_mount(self) -> None:
        listing = self.query_one(OptionList)
        specs = [c.spec for c in self.choices]
        if self.current in specs:
            listing.highlighted = specs.index(self.current)
        listing.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        value = event.value.strip()
        if not value:
            return
        from workbench.service.datasets import check_hub_spec, is_hub
        from workbench.service.errors import DatasetError

        if is_hub(value):  # fetched when the screen opens it; only its form is checked here
            try:
                check_hub_spec(value)
            except DatasetError as exc:
                self.query_one("#dataset-error", Static).update(Text(str(exc)))
                return
            self.dismiss(value)
            return
        path = Path(value).expanduser()
        if not path.is_dir():
            self.query_one("#dataset-error", Static).update(Text(f"{path} is not a directory"))
            return
        self.dismiss(str(path.resolve()))

    def action_cancel(self) -> None:
        self.dismiss(None)
