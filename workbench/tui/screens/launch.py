"""The launch form (modal): dataset, agent, ablation, caps, slice, workers, replicates, name; inline validation.

The form's rules live in its model (`workbench.tui.forms.launch`: fields in, a RunSpec or problems by field out,
with the notes before Start); this screen lays the fields out, reads each change into the model, turns off the
fields that do not apply and shows the problems beside them. It dismisses with the RunSpec; the app runs it. Enter
moves to the next field; only the Start button or ctrl+r starts (an LLM run costs money).
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from workbench.service.families import TIERS
from workbench.service.launch import ABLATIONS, AGENTS, CLIENTS
from workbench.tui.forms.launch import LaunchForm, Validation
from workbench.tui.forms.launch_fields import EXTRA_KINDS, FIELD_NAMES, LaunchFields, disabled_fields
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.help import bound_key


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
        fields: LaunchFields | None = None,
        options: dict[str, Any] | None = None,
        title: str = "New run",
    ):
        super().__init__(classes="dialog-screen")
        self.form = LaunchForm(existing, fields, options, stored_run=self._stored_run)
        self.title_text = title
        self.result: Validation | None = None

    def compose(self) -> ComposeResult:
        v = self.form.fields
        agent_options = [(a if a != "llm" or self.form.llm_ok else "llm (unavailable)", a) for a in AGENTS]
        with Vertical(classes="dialog launch-dialog"):
            yield Static(Text(self.title_text), classes="dialog-title")
            with VerticalScroll(id="launch-form"):
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Dataset",
                        Select(
                            [("built-in benchmark", "builtin"), ("release directory or hf:", "release")],
                            value=v.dataset_kind,
                            allow_blank=False,
                            id="dataset_kind",
                        ),
                    )
                    yield _field(
                        "Path",
                        Input(
                            v.path,
                            placeholder="dir, hf:OWNER/NAME",
                            id="path",
                            tooltip="a release directory (/path/to/release) or a Hub dataset (hf:OWNER/NAME)",
                        ),
                        "wide",
                    )
                with Horizontal(classes="form-row"):
                    yield _field("Agent", Select(agent_options, value=v.agent, allow_blank=False, id="agent"), "agent")
                    yield _field("Model", Input(v.model, placeholder="provider/model", id="model"), "model")
                    yield _field(
                        "Base URL",
                        Input(
                            v.base_url,
                            placeholder="http://HOST/v1",
                            id="base_url",
                            tooltip="an OpenAI-compatible server, e.g. http://127.0.0.1:8000/v1",
                        ),
                        "url",
                    )
                    yield _field(
                        "Client",
                        Select([(c, c) for c in CLIENTS], value=v.client, allow_blank=False, id="client"),
                        "client",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Ablation",
                        Select([(a, a) for a in ABLATIONS], value=v.ablation, allow_blank=False, id="ablation"),
                    )
                    yield _field("Points", Input(v.budget, id="budget", classes="num"))
                    yield _field("Turns", Input(v.max_turns, id="max_turns", classes="num"))
                    yield _field("Tokens", Input(v.max_tokens, id="max_tokens", classes="num"))
                    # a local/ model's server threads (empty: one less than the cores)
                    yield _field(
                        "Threads",
                        Input(v.local_threads, placeholder="auto", id="local_threads", classes="num"),
                        "short",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Type",
                        Select(
                            [("any", "any"), ("single-target", "single-target"), ("multi-target", "multi-target")],
                            value=v.question_type,
                            allow_blank=False,
                            id="question_type",
                        ),
                    )
                    yield _field(
                        "Depth",
                        Select([("any", "any"), ("1", "1"), ("2", "2")], value=v.depth, allow_blank=False, id="depth"),
                        "short",
                    )
                    yield _field("Limit", Input(v.limit, placeholder="all", id="limit", classes="num"))
                    yield _field("Ids", Input(v.ids, placeholder="st_0001, mt_0002", id="ids"), "wide")
                with Horizontal(classes="form-row"):
                    yield _field("Workers", Input(v.workers, id="workers", classes="num"))
                    yield _field("Replicates", Input(v.replicates, id="replicates", classes="num"))
                    yield _field("Seed", Input(v.seed, id="seed", classes="num"))
                    yield _field("Name", Input(v.name, id="name"), "wide")
                with Horizontal(classes="form-row"):  # the general-agent setting
                    yield _field(
                        "Extra tools", Select(EXTRA_KINDS, value=v.extra_kind, allow_blank=False, id="extra_kind")
                    )
                    yield _field(
                        "File / cmd",
                        Input(
                            v.extra_source,
                            placeholder="tools.json or cmd",
                            id="extra_source",
                            tooltip="tools.json, or the command that starts the MCP server",
                        ),
                        "wide",
                    )
                    yield _field(
                        "Timeout s", Input(v.extra_timeout, placeholder="30", id="extra_timeout", classes="num")
                    )
                with Horizontal(classes="form-row"):
                    yield _field("Count", Input(v.extra_count, placeholder="all", id="extra_count", classes="num"))
                    yield _field(
                        "Detail",
                        Select(
                            [(d, d) for d in ("full", "short", "names")],
                            value=v.extra_detail,
                            allow_blank=False,
                            id="extra_detail",
                        ),
                    )
                    yield _field("Tool cost", Input(v.extra_cost, id="extra_cost", classes="num"))
                    yield _field(
                        "Distractible",
                        Input(
                            v.distractible,
                            placeholder="0 to 1",
                            id="distractible",
                            classes="num",
                            tooltip="the heuristic agent's chance of an out-of-domain call, 0 to 1",
                        ),
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Prompts",
                        Input(
                            v.prompts,
                            placeholder="ours, or a file",
                            id="prompts",
                            tooltip="ours, or a prompts file (--batch prompts export writes one to edit)",
                        ),
                        "wide",
                    )
                with Horizontal(classes="form-row"):
                    yield _field(
                        "Family",
                        Input(
                            v.family,
                            placeholder="from the model",
                            id="family",
                            tooltip="the model's family (GPT, Claude, …); empty: derived from the model",
                        ),
                        "wide",
                    )
                    yield _field(
                        "Tier",
                        Select(
                            [("from the model", "auto")] + [(t, t) for t in TIERS],
                            value=v.tier,
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
        """Turn off the fields that do not apply to the choices made (the model says which)."""
        for key, disabled in disabled_fields(self.form.fields).items():
            self.query_one(f"#{key}").disabled = disabled

    def on_select_changed(self, event: Select.Changed) -> None:
        key = event.select.id
        if key is None or event.value is Select.BLANK:
            return
        self._changed(key, str(event.value))

    def on_input_changed(self, event: Input.Changed) -> None:
        key = event.input.id
        if key is None:
            return
        self._changed(key, event.value)

    def _changed(self, key: str, value: str) -> None:
        """A field changed: into the model, then checked again. When the change moves the name the model suggests
        (until a name is typed, it follows the choices), the name box shows it; the name box's own change is never
        written back (a stale one is followed by the newer)."""
        suggested = self.form.fields.name
        self.form.set(key, value)
        self._sync_enabled()
        if key != "name" and self.form.fields.name != suggested:
            self.query_one("#name", Input).value = self.form.fields.name
        self.revalidate()

    def _stored_run(self, name: str) -> dict[str, Any] | None:
        """The stored run named `name` in the app's store, if any: what starting under that name would resume."""
        opener = getattr(self.app, "open_store", None)
        store = opener(create=False) if opener else None
        try:
            return store.run(name) if store is not None else None
        except LookupError:
            return None

    def revalidate(self) -> Validation:
        app = self.app
        result = self.form.check(
            cache_dir=getattr(app, "cache_dir", None),
            store_path=getattr(app, "store_path", None),
            keys=(bound_key(app, "runs.rename", "r"), bound_key(app, "runs.delete", "d")),
        )
        self.result = result
        for key in FIELD_NAMES:
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
