"""One trajectory stepped turn by turn: the transcript up to the turn in view and the ledger as it stood.

A widget rather than a screen, so the stepper shows one and the compare screen's split
stepper shows two that step together. It only lays out stored steps; it computes nothing.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import Static

from sandbox.records import recorded_limits
from workbench.tui.widgets.meters import Meter
from workbench.tui.widgets.transcript import Entry, Gold, TranscriptView, build_entries, group_turns
from workbench.views.cells import counted

DEFAULT_CAPS = recorded_limits(None)  # the protocol's


def run_caps(run: dict[str, Any]) -> tuple[int, int, int]:
    """(points, turns, tokens) caps a run recorded."""
    return recorded_limits(run.get("caps"))


class StepView(Vertical):
    """Turn bar, virtualised transcript (up to the turn in view) and the three meters with the ledger line."""

    def __init__(self, caps: tuple[int, int, int] = DEFAULT_CAPS, **kwargs):
        super().__init__(**kwargs)
        self.caps = caps
        self.steps: list[dict[str, Any]] = []
        self.turns: list[list[dict[str, Any]]] = []
        self.entries: list[Entry] = []
        self.turn_end: list[int] = []  # entries up to and including turn k
        self.position = 0  # index into self.turns
        self.actor = "assistant"
        self._gold = Gold()  # the gold and titles the entries were last built with (new steps are marked alike)
        self._titles: dict[str, str] = {}
        self.tokens_measured = True
        self.hops_measured = True

    def compose(self) -> ComposeResult:
        yield Static("", classes="turn-bar")
        yield TranscriptView(classes="step-transcript", placeholder="no steps")
        with Vertical(classes="step-meters"):
            yield Meter("POINTS", self.caps[0], classes="meter-points")
            yield Meter("TURNS", self.caps[1], classes="meter-turns")
            yield Meter("TOKENS", self.caps[2], unit="tokens", classes="meter-tokens")
            yield Static("", classes="ledger-line")

    @property
    def transcript(self) -> TranscriptView:
        return self.query_one(TranscriptView)

    # ------------------------------------------------------------ content

    def set_steps(
        self,
        steps: list[dict[str, Any]],
        gold: Gold,
        titles: dict[str, str],
        caps: tuple[int, int, int] | None = None,
        actor: str = "assistant",
        tokens_measured: bool = True,
        hops_measured: bool = True,
    ) -> None:
        """A new trajectory, shown at its first turn; `actor` names who takes its turns (`transcript.actor_of`);
        without `tokens_measured` (a scripted run) the TOKENS meter says so instead of a 0; without `hops_measured`
        (a run stored before hops were recorded) a read's hop reads "—"."""
        if caps is not None:
            self.caps = caps
        self.tokens_measured = tokens_measured
        self.hops_measured = hops_measured
        self.actor = actor
        self.steps = steps
        self.turns = group_turns(steps)
        self.position = 0
        self.mark(gold, titles)

    def append_steps(self, steps: list[dict[str, Any]]) -> None:
        """Steps committed since (a trajectory in progress): the view stays on its turn, or follows to the new last
        one when it was on the last."""
        at_end = self.position >= len(self.turns) - 1
        self.steps = [*self.steps, *steps]
        self.turns = group_turns(self.steps)
        if at_end:
            self.position = len(self.turns) - 1
        self.mark(self._gold, self._titles, keep_cursor=not at_end)

    def mark(self, gold: Gold, titles: dict[str, str], keep_cursor: bool = False) -> None:
        """Rebuild the entries with gold marks and titles (they arrive once the item's corpus is open)."""
        self._gold, self._titles = gold, titles
        cursor = self.transcript.cursor if keep_cursor else None
        self.entries = build_entries(self.steps, gold, titles, actor=self.actor, hops_measured=self.hops_measured)
        ends, count = [], 0
        for group in self.turns:
            count += 1 + len(group)  # a turn's separator and one entry per step
            ends.append(count)
        self.turn_end = ends
        self.show(cursor)

    # ------------------------------------------------------------ stepping

    @property
    def n_turns(self) -> int:
        return len(self.turns)

    @property
    def current_steps(self) -> list[dict[str, Any]]:
        """Every step up to the end of the turn in view."""
        return [s for group in self.turns[: self.position + 1] for s in group]

    @property
    def ledger_step(self) -> dict[str, Any] | None:
        """The step whose ledger the meters show: the last one of the turn in view."""
        return self.turns[self.position][-1] if self.turns else None

    def go(self, position: int) -> bool:
        """Show turn `position` (clamped); whether it changed."""
        new = max(0, min(len(self.turns) - 1, position)) if self.turns else 0
        if new == self.position:
            return False
        self.position = new
        self.show()
        return True

    def step(self, delta: int) -> bool:
        return self.go(self.position + delta)

    def jump_decision(self, delta: int) -> str | None:
        """Move to the next (`delta` > 0) or previous step where the agent decided something (a think, a submit, a
        read, a rejection: `transcript.decision`), showing its turn with the cursor on it; what it was, or None
        when there is none in that direction."""
        here = self.transcript.cursor
        span = range(here + 1, len(self.entries)) if delta > 0 else range(min(here, len(self.entries)) - 1, -1, -1)
        target = next((i for i in span if self.entries[i].decision), None)
        if target is None:
            return None
        self.position = bisect_right(self.turn_end, target)
        self.show(cursor=target)
        self.transcript.call_after_refresh(self.transcript.scroll_to_entry, target)  # after the turn's own scroll
        return self.entries[target].decision

    def show(self, cursor: int | None = None) -> None:
        view = self.transcript
        bar = self.query_one(".turn-bar", Static)
        if not self.turns:
            bar.update(Text(" no steps stored"))
            view.set_entries([], cursor=0)
        else:
            group = self.turns[self.position]
            end = self.turn_end[self.position]
            start = self.turn_end[self.position - 1] if self.position else 0
            view.set_entries(
                self.entries[:end],
                cursor=self.landing(start, end) if cursor is None else min(cursor, end - 1),
                current_turn=group[0]["turn"],
            )
            view.show_turn(group[0]["turn"])
            self.show_bar()
        led = self.ledger_step or {
            "points_used": 0,
            "turn": 0,
            "tokens": 0,
            "points_left": self.caps[0],
            "rejections": 0,
        }
        self.query_one(".meter-points", Meter).show(int(led["points_used"] or 0), self.caps[0])
        self.query_one(".meter-turns", Meter).show(int(led["turn"] or 0), self.caps[1])
        self.query_one(".meter-tokens", Meter).show(int(led["tokens"] or 0), self.caps[2], self.tokens_measured)
        left, rejections = led["points_left"], led["rejections"]
        self.query_one(".ledger-line", Static).update(
            Text(f"        {counted(left, 'point')} left · {counted(rejections, 'consecutive rejection')}")
        )

    def show_bar(self) -> None:
        """The turn bar: the turn stepped to (whose ledger the meters show), its place and steps; when the
        transcript is scrolled or its cursor moved to another turn, that turn first, named as the one in view."""
        if not self.turns:
            return
        group = self.turns[self.position]
        turn = group[0]["turn"]
        a, b = group[0]["idx"] + 1, group[-1]["idx"] + 1
        where = f"{self.position + 1} of {len(self.turns)} · steps {a}–{b} of {len(self.steps)}"
        viewed = self.transcript.viewed_turn()
        text = (
            f" turn {turn} · {where}"
            if viewed in (None, turn)
            else f" in view: turn {viewed} · meters: turn {turn} · {where}"
        )
        self.query_one(".turn-bar", Static).update(Text(text))

    def on_transcript_view_cursor_moved(self, event: TranscriptView.CursorMoved) -> None:
        self.show_bar()

    def on_transcript_view_viewed(self, event: TranscriptView.Viewed) -> None:
        self.show_bar()

    def landing(self, start: int, end: int) -> int:
        """The entry a step lands the cursor on, among the turn's entries `start` (its separator) to `end`: its
        first tool call, whose arguments and result are what enter unfolds and y copies (the assistant line before
        it often has no body); else its first entry with a body; else its first step."""
        span = range(start + 1, end)
        for wanted in (lambda e: e.kind == "tool", lambda e: e.has_text):
            hit = next((i for i in span if wanted(self.entries[i])), None)
            if hit is not None:
                return hit
        return start + 1 if end > start + 1 else start

    def meter_readings(self) -> dict[str, tuple[int, int, str]]:
        """What the three meters show (for tests)."""
        return {name: self.query_one(f".meter-{name}", Meter).reading for name in ("points", "turns", "tokens")}
