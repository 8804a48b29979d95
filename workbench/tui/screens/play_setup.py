"""The play session setup (modal): who plays, on which dataset, which items, under which session name.

`validate_setup` is pure (form values in, a SessionRequest or per-field errors out), so it is tested without a
screen; the items themselves are chosen when the session opens the corpus (`workbench.service.play.choose_items`).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from storage.rows import RunListRow
from workbench.service.datasets import dataset_key
from workbench.service.play import SessionRequest, player_error, session_name
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.checkbox import Checkbox
from workbench.tui.widgets.plaintext import sanitize

MODE_LABELS = (
    ("a random sample", "random"),
    ("chosen item ids", "ids"),
    ("the items a run got wrong", "wrong"),
    ("only the session's unfinished items", "continue"),
)


def validate_setup(values: dict[str, str]) -> tuple[SessionRequest | None, dict[str, str]]:
    """A SessionRequest for the form's values, or field → what is wrong."""
    errors: dict[str, str] = {}
    player = values.get("player", "").strip()
    if player_error(player):
        errors["player"] = f"player: {player_error(player)}"
    mode = values.get("mode") or "random"
    count, seed = _random_sample(values, errors) if mode == "random" else (0, 0)
    ids = _item_ids(values, errors) if mode == "ids" else ()
    if mode == "wrong" and not values.get("run"):
        errors["run"] = "run: choose the run whose wrong answers you want to play"
    if errors:
        return None, errors
    return _session_request(values, player, mode, ids, count, seed), {}


def _session_request(
    values: dict[str, str], player: str, mode: str, ids: tuple[str, ...], count: int, seed: int
) -> SessionRequest:
    """The request of a valid form: blank dataset, run and session name are the defaults."""
    return SessionRequest(
        player=player,
        dataset=values.get("dataset", "").strip() or "builtin",
        mode=mode,
        ids=ids,
        count=count,
        seed=seed,
        run=values.get("run") or None,
        name=values.get("name", "").strip() or None,
        include_played=values.get("include") == "yes",
    )


def _random_sample(values: dict[str, str], errors: dict[str, str]) -> tuple[int, int]:
    """A random sample's size (at least 1) and seed as typed; 0 for a field that is not a whole number, its
    message in `errors`."""
    for key in ("count", "seed"):
        text = values.get(key, "").strip()
        if not text.isdigit() or (key == "count" and int(text) < 1):
            errors[key] = f"{key}: a whole number" + (" of at least 1" if key == "count" else "")
    count = int(values["count"]) if "count" not in errors else 0
    seed = int(values["seed"]) if "seed" not in errors else 0
    return count, seed


def _item_ids(values: dict[str, str], errors: dict[str, str]) -> tuple[str, ...]:
    """The item ids typed (comma- or space-separated); none typed is an error in `errors`."""
    ids = tuple(i.strip() for i in values.get("ids", "").replace(" ", ",").split(",") if i.strip())
    if not ids:
        errors["ids"] = "ids: one or more item ids, comma-separated (e.g. st_0001, mt_0002)"
    return ids


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
        session = session_name(self.player, self.dataset)
        unfinished = [r for r in self._runs() if r["name"] == session and r["done"] < r["planned"]]
        if unfinished:  # re-opening a session resumes it before anything new is added
            self.query_one("#setup-mode", Select).value = "continue"
        self._who = self._session_of(self.values())
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
        self._offer_runs(runs, dataset_key(dataset))
        player = v["player"].strip() or "?"
        self.query_one("#setup-name", Input).placeholder = session_name(player, dataset)
        _, errors = self.checked(v, runs)
        lines = [
            Text(
                f"{sanitize(r['name'])}: {r['done']}/{r['planned']} played · {r['status']}"
                + (" · re-opening it serves its unfinished items first" if r["done"] < r["planned"] else ""),
                style="dim",
            )
            for r in runs
            if r["agent"] == f"human:{player}"
        ] or [Text(f"no sessions of {sanitize(player)} yet; re-opening a session resumes it", style="dim")]
        lines += [Text(e) for e in errors.values()]
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

    def _offer_runs(self, runs: list[RunListRow], key: str) -> None:
        """The agents' runs on dataset `key` as the run choices (set again only when they change)."""
        from workbench.service.agents import is_human

        options = [(sanitize(r["name"]), r["name"]) for r in runs if r["dataset"] == key and not is_human(r["agent"])]
        if [o[1] for o in options] != [o[1] for o in getattr(self, "_run_options", [])]:
            self._run_options = options
            self.query_one("#setup-run", Select).set_options(options)

    @staticmethod
    def _session_of(values: dict[str, str]) -> tuple[str, str]:
        """(player, session name) as the form would play them."""
        player, dataset = values["player"].strip(), values["dataset"].strip() or "builtin"
        return player, values["name"].strip() or session_name(player or "?", dataset)

    def on_input_changed(self, event: Input.Changed) -> None:
        who = self._session_of(self.values())
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
        """`validate_setup`, and "only the unfinished items" of a session that has none is refused here, before
        Start, rather than as "nothing left to play" after it."""
        request, errors = validate_setup(values)
        session = self._session_of(values)[1]
        runs = self._runs() if runs is None else runs
        if values["mode"] == "continue" and not any(r["name"] == session and r["done"] < r["planned"] for r in runs):
            errors["mode"] = f"items: '{sanitize(session)}' has no unfinished items; choose a random sample"
        return (None if errors else request), errors

    def action_start(self) -> None:
        request, _errors = self.checked(self.values())
        if request is not None:
            self.dismiss(request)

    def action_cancel(self) -> None:
        self.dismiss(None)
