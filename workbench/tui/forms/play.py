"""The play screen's session model: where a person's play session stands, item by item, and what follows from it.

The session moves `loading` → `playing` (an item's turns) → `reveal` (its gold answer and the stored runs on it)
→ `starting` (the next item, once the person asks) → `playing` …, until `finished` (the last item revealed); it
is `failed` when it cannot be played and `left` once the person leaves. Per item it holds the steps so far, what
the player has been shown (`forms.seen.Seen`), the paper the tool forms start from, a section picked from the list,
the open argument form's tool and the item's clock. The screen reads widgets into it and shows what it says; the
episode's rules are the runner's (`workbench.service.play`), never this model's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from workbench.tui.forms.seen import Seen
from workbench.tui.forms.tool_call import FIELDS, opened_values

if TYPE_CHECKING:
    from workbench.service.play import RevealRow, SessionPlan, SessionRequest

clock = time.monotonic  # the item timer's clock (tests freeze it)

State = Literal["loading", "playing", "reveal", "starting", "finished", "failed", "left"]


def clock_text(seconds: float) -> str:
    """`mm:ss` of a count of seconds (none below zero)."""
    seconds = max(0, int(seconds))
    return f"{seconds // 60:02d}:{seconds % 60:02d}"


@dataclass(frozen=True)
class Pick:
    """What a pick from the papers or the sections list does: the field it fills (`paper_id`, `section`), the open
    form's fields it sets (none when no open form takes it: the pick is remembered for the next one), and whether
    the sections list now belongs to another paper."""

    field: str
    fills: dict[str, str]
    sections_changed: bool = False


@dataclass
class PlaySession:
    """A person's play session as the screen follows it (the runner plays it: `workbench.service.play`)."""

    request: SessionRequest
    state: State = "loading"
    plan: SessionPlan | None = None
    caps: Any = None  # the session's caps (`sandbox.records.Caps`), once its runner is made
    fingerprint: str | None = None  # the corpus's, once it is open
    item: Any = None  # the item in play (`sandbox.datasets.Item`)
    agent: Any = None  # the person's agent of the item (`sandbox.agents.human.HumanAgent`)
    steps: list[Any] = field(default_factory=list)
    seen: Seen = field(default_factory=Seen)
    tool: str | None = None  # the open argument form's
    current_paper: str | None = None  # the paper the forms start from: the seed, then the last one found or picked
    picked_section: tuple[str, str] | None = None  # (paper, alias) picked from the sections list
    footer_text: str = ""  # the episode's status footer, as the agent was last shown it
    done: int = 0
    planned: int = 0
    started_at: float | None = None
    stopped_at: float | None = None
    trajectory: Any = None  # the item's, once it ended
    reveal: list[RevealRow] = field(default_factory=list)
    deferred: list[str] = field(default_factory=list)  # items left midway in this sitting: re-opening plays them

    # ------------------------------------------------------------ the session's course

    @property
    def waits_for_the_person(self) -> bool:
        """Whether the next item waits until the person leaves the reveal (`n`)."""
        return self.state in ("reveal", "finished")

    def begin(self, item: Any, agent: Any) -> None:
        """An item starts: its clock, nothing seen but the seed paper (the task names it), no form open."""
        self.item, self.agent = item, agent
        self.steps, self.trajectory = [], None
        self.seen = Seen.from_seed(item.seed_paper_id, item.seed_title)
        self.current_paper = item.seed_paper_id
        self.picked_section = None
        self.tool = None
        self.footer_text = ""
        self.started_at, self.stopped_at = clock(), None
        self.state = "playing"

    def heard(self, done: int, planned: int) -> bool:
        """An event of the runner: its counts taken, True unless the session is being left (the runner is then only
        recording the interruption)."""
        if self.state == "left":
            return False
        self.done, self.planned = done, planned
        return True

    def take_step(self, step: Any) -> Literal["lists", "sections"] | None:
        """A step of the episode: the paper a call found becomes the current one; says which list shows something
        new (`lists`: a paper or sections seen; `sections`: only the current paper changed), or None."""
        self.steps.append(step)
        before = self.current_paper
        if step.kind == "tool" and step.status == "ok" and isinstance(step.tool_args, dict):
            paper = step.tool_args.get("paper_id")
            if paper:
                self.current_paper = str(paper)  # a paper found; before the lists (its sections)
        if self.seen.update(step):
            return "lists"
        return "sections" if self.current_paper != before else None

    def answered(self, trajectory: Any, reveal: list[RevealRow]) -> None:
        """The item ended (an answer or any other ending): its clock stops and the reveal shows `reveal`."""
        self.trajectory, self.reveal = trajectory, reveal
        self.stopped_at = clock()
        self.state = "reveal"
        self.tool = None

    def finish(self) -> bool:
        """The runner has no item left: True when that ends the session on the reveal shown."""
        if self.state != "reveal":
            return False
        self.state = "finished"
        return True

    def next_item(self) -> bool:
        """`n` on the reveal: True when the next item may start."""
        if self.state != "reveal":
            return False
        self.state = "starting"
        return True

    def fail(self) -> None:
        self.state = "failed"

    @property
    def others_left(self) -> bool:
        """Whether another item of this sitting waits after the one in play (leaving it then goes on to it)."""
        return self.planned - self.done > 1

    def leave_item(self) -> None:
        """Leave the item in play for the next one: it is kept as an abandoned attempt and played again when the
        session is re-opened (the runner's next sitting leaves it out: `deferred`)."""
        self.deferred.append(self.item.id)
        self.state = "starting"
        self.tool = None

    def leave(self) -> None:
        self.state = "left"

    # ------------------------------------------------------------ what the screen offers

    def allows(self, action: str) -> bool:
        """Whether a key's `action` is offered now: the tools while playing, the next item on the reveal."""
        if action == "tool":
            return self.state == "playing"
        if action == "next_item":
            return self.state == "reveal"
        return True

    @property
    def my_turn(self) -> bool:
        """Whether the episode waits for the person's call."""
        return self.agent is not None and bool(self.agent.waiting)

    @property
    def ticking(self) -> bool:
        """Whether the title's clock moves (an item played or revealed)."""
        return self.state in ("playing", "reveal")

    @property
    def answering(self) -> bool:
        return self.state == "playing" and self.tool == "submit_answer"

    @property
    def revealed(self) -> bool:
        """Whether the item's outcome (and its gold) is shown: it ended and the person is past it."""
        return self.state != "playing" and self.trajectory is not None

    @property
    def gold_shown(self) -> bool:
        return self.state in ("reveal", "finished")

    @property
    def points_left(self) -> int | None:
        """The points the ledger has left (the last step's), before the next call is sent."""
        if self.caps is None:
            return None
        return self.steps[-1].ledger.points_left if self.steps else self.caps.budget

    def elapsed(self) -> float:
        """The item's time so far (until it ended)."""
        if self.started_at is None:
            return 0.0
        return (self.stopped_at if self.stopped_at is not None else clock()) - self.started_at

    # ------------------------------------------------------------ the argument form and the lists

    def open_form(self, tool: str, given: dict[str, str]) -> dict[str, str]:
        """`tool`'s form opens: the values its fields start with (`tool_call.opened_values`)."""
        self.tool = tool
        return opened_values(tool, self.current_paper, self.picked_section, given)

    def close_form(self) -> None:
        self.tool = None

    def sent(self, tool: str) -> None:
        """A call went to the episode: the form closes, and a picked section is read once (the next read form
        starts empty)."""
        self.tool = None
        if tool == "read_section":
            self.picked_section = None

    def pick(self, listed: Literal["papers", "sections"], picked: str) -> Pick | None:
        """Enter on a paper or a section picks it, and only that: it fills the field of an open form that takes it,
        else it is remembered for the next form. Nothing is sent and no form opens from a list. None: nothing to
        pick (not playing, or a section with no current paper)."""
        if self.state != "playing":
            return None
        changed = False
        if listed == "papers":
            changed = picked != self.current_paper
            self.current_paper = picked
            name = "paper_id"
        elif self.current_paper:
            self.picked_section = (self.current_paper, picked)
            name = "section"
        else:
            return None
        fields = FIELDS[self.tool] if self.tool is not None else ()
        fills = {name: picked} if name in fields else {}
        if name == "section" and fills and "paper_id" in fields:
            fills["paper_id"] = self.current_paper or ""
        return Pick(name, fills, changed)

    def aliases(self, typed_paper: str) -> list[str]:
        """The section aliases completion offers: those of the paper typed in the form, else of the current one."""
        paper = typed_paper.strip() or self.current_paper
        return [alias for alias, _ in self.seen.sections.get(paper or "", [])]

    def current_sections(self) -> tuple[str, list[tuple[str, str]]]:
        """The current paper's title as seen (its id when none was) and its sections listed so far."""
        paper = self.current_paper or ""
        return self.seen.papers.get(paper, paper), self.seen.sections.get(paper, [])

    # ------------------------------------------------------------ words

    def title(self) -> str:
        """The title bar: what the player needs first (the item, the count, the clock), the session last (it may be
        cut)."""
        r = self.request
        who = f"{r.session} (human:{r.player})"
        if self.state == "loading":
            return f" Play · opening {r.dataset}… · {who}"
        if self.state == "starting":
            return f" Play · next item… · {who}"
        if self.state == "failed":
            return f" Play · cannot play · {who}"
        if self.item is None:
            return f" Play · {self.done}/{self.planned} played · {who}"
        number = min(self.done + (1 if self.state == "playing" else 0), self.planned) or 1
        kind = "multi-target" if self.item.kind == "mt" else "single-target"
        stopped = "" if self.state == "playing" else " (stopped)"
        return (
            f" Play · {self.item.id} {kind} d{self.item.depth} · item {number} of {self.planned} · "
            f"⏱ {clock_text(self.elapsed())}{stopped} · {who}"
        )

    def mark(self) -> tuple[str, str] | None:
        """The item's mark in this session (`resumed`, `replayed`) with its reason, or None for a fair play."""
        return self.plan.mark(self.item.id) if self.plan is not None and self.item is not None else None

    def mark_notice(self) -> str | None:
        """What the player is told as a marked play starts."""
        mark = self.mark()
        if mark is None:
            return None
        return f"{self.item.id}: {mark[1]}. This play is marked '{mark[0]}' and left out of the leaderboard."

    def reveal_mark(self) -> str | None:
        """The reveal's line for a marked play."""
        mark = self.mark()
        return None if mark is None else f" ⚠ {mark[1]}: marked '{mark[0]}', left out of the leaderboard"

    def reveal_hint(self) -> str:
        """The line under the reveal's table (it fits the pane at 80 columns; n, L and esc are in the footer too)."""
        if self.state == "finished":
            left = f" · left midway: {', '.join(self.deferred)} (re-open the session)" if self.deferred else ""
            return f" all {self.done}/{self.planned} played{left} · enter steps through a row"
        return " n next item · enter steps through a row"

    def leave_question(self) -> str:
        """What leaving the item midway does to it, asked before it is done: kept as an abandoned attempt, and a
        later play of it marked `resumed` once tool results were seen; then the two ways out: the next item (`y`,
        while one is left) or the session (`l`)."""
        session = self.request.session
        if any(step.kind == "tool" for step in self.steps):
            what = (
                f"What you saw is kept as an abandoned attempt. Re-opening the session '{session}' "
                "plays it again from its first turn, marked 'resumed' (you have seen tool results) and left out "
                "of the leaderboard."
            )
        else:
            what = (
                f"You have made no tool call: re-opening the session '{session}' plays it again "
                "from its first turn as a fresh play."
            )
        ways = (
            "y: on to the next item · l: leave the session"
            if self.others_left
            else "It is the last item left in this sitting: l leaves the session."
        )
        return f"Leave {self.item.id} unfinished? {what}\n\n{ways}"


def reveal_who(row: RevealRow) -> str:
    """Who made a stored run on the item, in the reveal: the agent, its model, and its ablation unless the full one."""
    who = row["agent"] + (f" {row['model']}" if row.get("model") else "")
    if row.get("ablation") and row["ablation"] != "full":
        who += f" · {row['ablation']}"
    return who


def reveal_recall(row: RevealRow) -> str:
    """`● ○`: whether the run read a gold paper, then a gold section."""
    return ("●" if row.get("paper_recall") else "○") + " " + ("●" if row.get("section_recall") else "○")
