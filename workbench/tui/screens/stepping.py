"""Stepping stored trajectories turn by turn: the behaviour the stepper and the compare screen's split stepper share,
written once.

A `SteppingScreen` shows one or more `StepView`s (the stepper one; the split stepper two, stepped together) and
walks a list with n/p (a run's trajectories, or the items of an agreement cell). `→/←` move every view to the
same turn, clamped to each view's last (a side that ended stays on its last turn); `L/H` move the focused view
alone; `0`/`$` every view to its first/last turn; `d`/`D` jump the focused view to its next/previous decision; `g`
reveals the gold; `y` copies the step under the focused view's cursor. The bindings stay on each screen (their
ids are what a user's `[keys]` table names, and their words differ: "Next turn" or "Next turn (both)"); what a
key does is here. A screen says what differs through `step_views`, `load`, `item_id`, `redraw` and `moved`.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.screen import Screen
from textual.worker import Worker, WorkerState

from workbench.service.agents import measures_tokens
from workbench.service.steps import hops_stale
from workbench.tui.corpora import ItemContext
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.itempane import gold_of
from workbench.tui.widgets.stepview import StepView, run_caps
from workbench.tui.widgets.transcript import actor_of, transcript_text


class SteppingScreen(WorkbenchNode, Screen):
    """A screen of one or more StepViews stepped together over a list it walks with n/p."""

    END_OF_LIST = "no more trajectories in this direction"  # what n/p say past either end of the list

    def __init__(self, ids: list[Any], index: int = 0):
        super().__init__()
        self.ids = list(ids)
        self.index = index
        self.reveal = False
        self.ctx: ItemContext | None = None

    # ------------------------------------------------------------ what a screen provides

    def step_views(self) -> list[StepView]:
        """The views stepped together, in order (the first answers d and y while none has the focus)."""
        raise NotImplementedError

    def load(self, index: int) -> None:
        """Show entry `index` of the list."""
        raise NotImplementedError

    @property
    def item_id(self) -> str:
        """The item shown, whose context (item, titles) a worker may be fetching."""
        raise NotImplementedError

    def redraw(self) -> None:
        """Redraw what the item context or the gold reveal changes (the item pane, the titles)."""

    def moved(self) -> None:
        """After a key that may have moved a view's turn: what follows the turn in view, if anything does."""

    # ------------------------------------------------------------ loading

    def show_trajectory(self, view: StepView, steps: list[dict[str, Any]], run: dict[str, Any]) -> None:
        """`steps` of a trajectory of `run` in `view`, marked with the item context known now (gold, titles)."""
        ctx = self.ctx
        view.set_steps(
            steps,
            gold_of(ctx),
            ctx.titles if ctx else {},
            run_caps(run),
            actor=actor_of(run.get("agent")),
            tokens_measured=measures_tokens(run.get("agent"), run.get("identity")),
            hops_measured=not hops_stale(run),
        )

    def load_context(self, run: dict[str, Any]) -> None:
        """The item and its titles from `run`'s corpus, on a thread (a first open imports the release)."""
        self.run_worker(
            partial(self.app.corpora.item_context, run["dataset"], run.get("dataset_fingerprint"), self.item_id),
            name="item-context",
            group="item-context",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "item-context" or event.state != WorkerState.SUCCESS:
            return
        ctx = worker.result
        if isinstance(ctx, ItemContext) and ctx.item_id == self.item_id:  # not one the user has moved past
            self.ctx = ctx
            for view in self.step_views():
                view.mark(gold_of(ctx), ctx.titles, keep_cursor=True)
            self.redraw()

    # ------------------------------------------------------------ actions

    def focused_view(self) -> StepView:
        """The view holding the focus, else the first."""
        views = self.step_views()
        focused = self.focused
        if focused is not None:
            for view in views:
                if view in focused.ancestors_with_self:
                    return view
        return views[0]

    def _after(self, changed: list[bool]) -> None:
        if any(changed):
            self.moved()

    def action_step(self, delta: int) -> None:
        views = self.step_views()
        target = max(view.position for view in views) + delta
        self._after([view.go(min(target, view.n_turns - 1)) for view in views])

    def action_step_one(self, delta: int) -> None:
        self._after([self.focused_view().step(delta)])

    def action_first(self) -> None:
        self._after([view.go(0) for view in self.step_views()])

    def action_last(self) -> None:
        self._after([view.go(view.n_turns - 1) for view in self.step_views()])

    def action_decision(self, delta: int) -> None:
        """`d`/`D`: the focused view's next/previous step where the agent decided something, or a word that there
        is none."""
        if self.focused_view().jump_decision(delta) is None:
            self.notify(
                f"no {'later' if delta > 0 else 'earlier'} decision (think, submit, read, rejection)", timeout=2
            )
        self.moved()

    def action_browse(self, delta: int) -> None:
        new = self.index + delta
        if 0 <= new < len(self.ids):
            self.load(new)
        else:
            self.notify(self.END_OF_LIST, timeout=2)

    def action_toggle_gold(self) -> None:
        self.reveal = not self.reveal
        self.redraw()

    def action_copy_step(self) -> None:
        """Copy the step under the focused view's cursor (on a turn's separator: the whole turn), by OSC 52."""
        transcript = self.focused_view().transcript
        entry = transcript.cursor_entry
        if entry is None:
            return
        if entry.kind == "turn":
            text = transcript_text(e for e in transcript.entries if e.turn == entry.turn)
            what = f"turn {entry.turn}"
        else:
            text, what = entry.copy_text, "step"
        self.app.copy_to_clipboard(text)
        self.notify(f"copied {what} ({len(text):,} characters)", timeout=2)

    def action_back(self) -> None:
        self.app.pop_screen()
