"""The trajectory stepper: the item beside the transcript, turn by turn, with the ledger as it stood.

`←/h` `→/l` step a turn, `0`/`$` first/last, `d`/`D` the next/previous step where the agent
decided something (a think, a submit, a gold or non-gold read, a rejection), `n`/`p` the
next/previous trajectory of the list it was opened from, `g` reveals the gold option and distractor types, `y`/`Y`
copy the selected step / the whole transcript (OSC 52). The meters show the stored
ledger of the last step of the turn in view. A trajectory still in progress (opened from the Live screen) grows
as its writer commits turns: the screen polls the store (`data_version`, then only the steps after those shown).
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Static

from workbench.tui.screens.stepping import SteppingScreen
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.itempane import LETTERS, item_text, trajectory_note
from workbench.tui.widgets.meters import theme_style
from workbench.tui.widgets.plaintext import sanitize
from workbench.tui.widgets.stepview import StepView, run_caps
from workbench.tui.widgets.transcript import transcript_text


class StepperScreen(SteppingScreen):
    FOOTER_WIDE_ONLY = frozenset({"stepper.next_trajectory"})  # in ? help only, below 112 columns
    FOLLOW_S = 0.2  # how often a trajectory in progress is looked at
    BINDINGS = [
        Binding("right,l", "step(1)", "Next turn", id="stepper.next"),
        Binding("left,h", "step(-1)", "Prev", id="stepper.prev"),
        Binding("0", "first", "First turn", id="stepper.first", show=False),
        Binding("dollar_sign", "last", "Last turn", id="stepper.last", key_display="$", show=False),
        Binding("d", "decision(1)", "Decision", id="stepper.next_decision"),
        Binding("D", "decision(-1)", "Previous decision", id="stepper.prev_decision", show=False),
        Binding("n", "browse(1)", "Next traj", id="stepper.next_trajectory"),
        Binding("p", "browse(-1)", "Previous trajectory", id="stepper.prev_trajectory", show=False),
        Binding("g", "toggle_gold", "Gold", id="stepper.gold"),
        Binding("y", "copy_step", "Copy", id="stepper.copy_step", show=False),
        Binding("Y", "copy_all", "Copy whole transcript", id="stepper.copy_all", show=False),
        Binding("R", "retry_corpus", "Look for the corpus again", id="stepper.retry_corpus", show=False),
        Binding("escape,q", "back", "Back", id="stepper.back"),
    ]

    def __init__(self, run: dict[str, Any], trajectory_ids: list[int], index: int = 0):
        super().__init__(trajectory_ids, index)
        self.run = run
        self.traj: dict[str, Any] = {}
        self.caps = run_caps(run)
        self._data_version: int | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="stepper-title", classes="title-bar")
        with Horizontal(id="stepper-body"):
            with VerticalScroll(id="stepper-item"):
                yield Static("", id="item-text")
            yield StepView(self.caps, id="stepper-right")
        yield KeysFooter()

    @property
    def view(self) -> StepView:
        return self.query_one(StepView)

    def step_views(self) -> list[StepView]:
        return [self.view]

    @property
    def item_id(self) -> str:
        return self.traj["item_id"]  # a stored trajectory always names its item

    @property
    def position(self) -> int:
        return self.view.position

    @property
    def entries(self):
        """The whole transcript's entries (the view shows those up to the turn in view)."""
        return self.view.entries

    def on_mount(self) -> None:
        self.view.transcript.focus()
        self.load(self.index)
        self.set_interval(self.FOLLOW_S, self.follow, name="stepper-follow")

    # ------------------------------------------------------------ loading

    def load(self, index: int) -> None:
        store = self.app.store
        self.index = index
        tid = self.ids[index]
        self.traj = store.trajectory(tid)
        if self.traj.get("run_id") != self.run.get("id"):  # a list across runs (the item browser's): follow the run
            self.run = store.run_by_id(self.traj["run_id"])
            self.caps = run_caps(self.run)
        self.ctx = self.app.corpora.cached(self.run["dataset"], self.traj["item_id"])
        self._data_version = store.data_version()
        self.show_trajectory(self.view, store.steps(tid), self.run)
        self.show_header()
        if self.ctx is None:
            self.load_context(self.run)

    @property
    def in_progress(self) -> bool:
        return self.traj.get("status") == "running"

    def follow(self) -> None:
        """A trajectory in progress: the steps its writer committed since the last look, at the transcript's end
        (the view follows them when it was on the last turn); its header once it finishes."""
        from workbench.service.errors import StoreError

        if not self.in_progress:
            return
        store = self.app.store
        version = store.data_version()
        if version == self._data_version:
            return
        self._data_version = version
        tid = self.ids[self.index]
        try:  # its state first: once it reads finished, the steps read after it are all of them
            traj = store.trajectory(tid)
        except StoreError:  # discarded (its run resumed by a process that drops unfinished episodes) or deleted
            self.traj = {**self.traj, "status": "gone"}
            self.notify("this trajectory is no longer in the store: its run was resumed or deleted", timeout=4)
            return
        new = store.steps(tid, len(self.view.steps))
        if new:
            self.view.append_steps(new)
            self.moved()
        if traj.get("status") != "running":
            self.traj = traj
            self.show_header()

    # ------------------------------------------------------------ showing

    def show_header(self) -> None:
        """The title bar and the item pane (the transcript and meters are the StepView's)."""
        traj = self.traj
        if self.in_progress:  # no answer nor ending yet
            outcome = "in progress"
        else:
            verdict = "correct ✓" if traj.get("correct") else "wrong ✗"
            outcome = f"{verdict} ({sanitize(traj.get('answer') or '—')}) · {traj.get('termination')}"
        kind = traj.get("question_type") or traj.get("kind") or "?"
        title = (
            f" {traj['item_id']} r{traj.get('replicate', 0)} · {kind} d{traj.get('depth') or '?'} · {outcome} · "
            f"trajectory {self.index + 1}/{len(self.ids)} · {self.run['name']}"
        )
        title += trajectory_note(traj.get("error"))
        self.query_one("#stepper-title", Static).update(Text(title))
        self.redraw()

    def redraw(self) -> None:
        """The item pane: its citation path follows the turn in view."""
        colors = {
            "success": theme_style(self.app, "success"),
            "error": theme_style(self.app, "error"),
            "muted": Style(dim=True),
        }
        view = self.view
        self.query_one("#item-text", Static).update(
            item_text(
                self.ctx, self.traj, view.current_steps, self.reveal, colors, at_end=view.position >= view.n_turns - 1
            )
        )

    def moved(self) -> None:
        self.redraw()

    def meter_readings(self) -> dict[str, tuple[int, int, str]]:
        """What the three meters show (for tests)."""
        return self.view.meter_readings()

    # ------------------------------------------------------------ actions (the stepping ones are SteppingScreen's)

    def action_copy_all(self) -> None:
        head = f"{self.run['name']} · {self.traj['item_id']} r{self.traj.get('replicate', 0)}\n"
        if self.ctx is not None and self.ctx.item is not None:
            item = self.ctx.item
            head += (
                sanitize(item.question)
                + "\n"
                + "\n".join(f"({LETTERS[i]}) {sanitize(o)}" for i, o in enumerate(item.options))
                + "\n"
            )
        text = head + "\n" + transcript_text(self.view.entries)
        self.app.copy_to_clipboard(text)
        self.notify(f"copied transcript ({len(text):,} characters)", timeout=2)

    def action_retry_corpus(self) -> None:
        """Look for an unavailable corpus again now (the release put back, say) instead of after a while."""
        if self.ctx is not None and self.ctx.item is not None:
            self.notify("the item is shown already", timeout=2)
            return
        self.app.corpora.forget_failures()
        self.load_context(self.run)
