"""The play session setup (modal): who plays, on which dataset, which items, under which session name.

The screen composes the form, reads its widgets into values and shows what the form's model
(`workbench.tui.forms.play_setup`) makes of them: the request or the errors, the player's sessions, the runs to
offer.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from storage.rows import RunListRow
from workbench.service.play import SessionRequest, session_name
from workbench.tui.forms.play_setup import (
    MODE_LABELS,
    checked_setup,
    offered_runs,
    opening_mode,
    session_lines,
    session_of,
)
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.checkbox import Checkbox
from workbench.tui.widgets.plaintext import sanitize


class PlaySetupScreen(WorkbenchNode, ModalScreen[SessionRequest | None]):
    HELP_TITLE = "Play setup"
    BINDINGS = [
        Binding("ctrl+r", "start", "Play", id="play_setup.start"),
        Binding("escape", "cancel", "Cancel", id="play_setup.cancel"),
    ]

    def __init__(self, player: str, dataset: str = "builtin"):
        super().__init__(classes="dialog-screen")
        self.player = player
        self.dataset = dataset

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog play-setup"):
            yield Static(Text("Play the benchmark · same tools, costs and caps as the agents"), classes="dialog-title")
            with VerticalScroll(id="setup-form"):
                with Horizontal(classes="setup-row"):
                    yield Label("player", classes="setup-label")
                    yield Input(self.player, id="setup-player")
                    yield Label("dataset", classes="setup-label")
                    yield Input(self.dataset, id="setup-dataset", placeholder="builtin or a release directory")
                with Horizontal(classes="setup-row"):
                    yield Label("items", classes="setup-label")
                    yield Select(MODE_LABELS, value="random", allow_blank=False, id="setup-mode")
                with Horizontal(classes="setup-row", id="row-random"):
                    yield Label("how many", classes="setup-label")
                    yield Input("5", id="setup-count", restrict=r"\d*")
                    yield Label("seed", classes="setup-label")
                    yield Input("0", id="setup-seed", restrict=r"\d*")
                with Horizontal(classes="setup-row", id="row-ids"):
                    yield Label("ids", classes="setup-label")
                    yield Input(id="setup-ids", placeholder="st_0001, mt_0002 …")
                with Horizontal(classes="setup-row", id="row-run"):
                    yield Label("run", classes="setup-label")
                    yield Select([], prompt="a stored run on this dataset", id="setup-run")
                with Horizontal(classes="setup-row"):
                    yield Label("session", classes="setup-label")
                    yield Input(id="setup-name")
                yield Checkbox(
                    "also items I played in another session (a replay is marked and left out of the leaderboard)",
                    id="setup-include",
                )
            yield Static("", id="setup-messages")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Cancel", id="cancel")
                yield Button("Play (ctrl+r)", id="start", variant="primary")

    def on_mount(self) -> None:
        mode = opening_mode(self._runs(), self.player, self.dataset)
        if mode is not None:
            self.query_one("#setup-mode", Select).value = mode
        self._who = session_of(self.values())
        self.refresh_form()
        self.query_one("#setup-mode", Select).focus()

    def values(self) -> dict[str, str]:
        run = self.query_one("#setup-run", Select).value
        return {
            "player": self.query_one("#setup-player", Input).value,
            "dataset": self.query_one("#setup-dataset", Input).value,
            "mode": str(self.query_one("#setup-mode", Select).value),
            "count": self.query_one("#setup-count", Input).value,
            "seed": self.query_one("#setup-seed", Input).value,
            "ids": self.query_one("#setup-ids", Input).value,
            "run": "" if run is Select.NULL else str(run),
            "name": self.query_one("#setup-name", Input).value,
            "include": "yes" if self.query_one("#setup-include", Checkbox).value else "",
        }

    def _runs(self) -> list[RunListRow]:
        store = self.app.open_store(create=False)
        return store.runs() if store is not None else []

    def refresh_form(self) -> None:
        """Show the rows of the chosen way of picking items, the runs to pick from, the player's sessions and what is
        wrong with the form (Play disabled while anything is)."""
        v = self.values()
        self._show_mode_rows(v["mode"])
        dataset = v["dataset"].strip() or "builtin"
        runs = self._runs()
        self._offer_runs(offered_runs(runs, dataset))
        player = v["player"].strip() or "?"
        self.query_one("#setup-name", Input).placeholder = session_name(player, dataset)
        _, errors = self.checked(v, runs)
        lines = [Text(sanitize(line), style="dim") for line in session_lines(runs, player)]
        lines += [Text(sanitize(e)) for e in errors.values()]
        messages = self.query_one("#setup-messages", Static)
        messages.update(Text("\n").join(lines))
        messages.set_class(bool(errors), "-error")
        self.query_one("#start", Button).disabled = bool(errors)

    def _show_mode_rows(self, mode: str) -> None:
        """The form rows of the way items are picked: the sample's size, the ids, or the run."""
        for row, shown in (
            ("#row-random", mode == "random"),
            ("#row-ids", mode == "ids"),
            ("#row-run", mode == "wrong"),
        ):
            self.query_one(row).display = shown

    def _offer_runs(self, names: list[str]) -> None:
        """The runs named as the run choices (set again only when they change)."""
        options = [(sanitize(name), name) for name in names]
        if [o[1] for o in options] != [o[1] for o in getattr(self, "_run_options", [])]:
            self._run_options = options
            self.query_one("#setup-run", Select).set_options(options)

    def on_input_changed(self, event: Input.Changed) -> None:
        who = session_of(self.values())
        if who != getattr(self, "_who", who):  # another player or session: the unfinished items were the old one's
            self._who = who
            mode = self.query_one("#setup-mode", Select)
            if mode.value == "continue":
                mode.value = "random"  # a random sample, "how many" in view (refreshed by its Changed)
        self.refresh_form()

    def on_select_changed(self, event: Select.Changed) -> None:
        self.refresh_form()

    def on_checkbox_changed(self, event: Checkbox.Changed) -> None:
        self.refresh_form()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_start()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        else:
            self.dismiss(None)

    def checked(
        self, values: dict[str, str], runs: list[RunListRow] | None = None
    ) -> tuple[SessionRequest | None, dict[str, str]]:
        """The form's request or its errors (`forms.play_setup.checked_setup`) against the stored runs."""
        return checked_setup(values, self._runs() if runs is None else runs)

    def action_start(self) -> None:
        request, _errors = self.checked(self.values())
        if request is not None:
            self.dismiss(request)

    def action_cancel(self) -> None:
        self.dismiss(None)
