"""The trajectory stepper: the item beside the transcript, turn by turn, with the ledger as it stood.

`←/h` `→/l` step a turn, `0`/`$` first/last, `d`/`D` the next/previous step where the agent
decided something (a think, a submit, a gold or non-gold read, a rejection), `n`/`p` the
next/previous trajectory of the list it was opened from, `g` reveals the gold option and distractor types, `y`/`Y`
copy the selected step / the whole transcript (OSC 52). The meters show the stored
ledger of the last step of the turn in view.
"""
from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Static
from textual.worker import Worker, WorkerState

from sandbox.agents.registry import measures_tokens
from sandbox.citations import hops_stale
from workbench.views.cells import counted
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.corpora import ItemContext
from workbench.tui.widgets.meters import theme_style
from workbench.tui.widgets.plaintext import clip, one_line, sanitize
from workbench.tui.widgets.stepview import StepView, run_caps
from workbench.tui.widgets.transcript import Gold, TranscriptView, actor_of, is_read, transcript_text

LETTERS = "ABCD"


def gold_of(ctx: ItemContext | None) -> Gold:
    if ctx is None or ctx.item is None:
        return Gold()
    return Gold(frozenset(ctx.item.gold_paper_ids), frozenset(ctx.item.gold_arxiv_ids), True)


def touched(steps: list[dict[str, Any]]) -> tuple[set[str], list[dict[str, Any]]]:
    """(S2 ids of papers any accepted call touched, delivered reads) among `steps`. A call on an id that names no
    paper (`not_found`) touched nothing: "visited N papers" counts papers that exist."""
    papers: set[str] = set()
    reads = []
    for s in steps:
        if s.get("kind") != "tool" or s.get("status") in ("rejected", "disabled", "not_found"):
            continue
        if s.get("paper_id"):
            papers.add(str(s["paper_id"]))
        if is_read(s):
            reads.append(s)
    return papers, reads


def answered(steps_so_far: list[dict[str, Any]], at_end: bool) -> bool:
    """Whether the answer is given by the steps in view: an accepted submit among them, or the trajectory's end in
    view (an answer forced when the budget ran out comes with no submit step)."""
    return at_end or any(s.get("kind") == "tool" and s.get("tool_name") == "submit_answer"
                         and s.get("status") not in ("rejected", "disabled") for s in steps_so_far)


def options_text(item: Any, reveal: bool, gold: Style, muted: Style,
                 mark: Callable[[int], tuple[str, Style] | None] = lambda i: None, width: int | None = None) -> Text:
    """An item's options, each on a new line as "(A) text": the one rendering of the options pane (stepper, play,
    item view, split stepper).

    With `reveal` the gold option reads "● gold" (in `gold`) and the others "○ <distractor type>" (in `muted`);
    `mark(i)` may put a mark (text, style) before an option's text, e.g. who chose it; `width` clips each text."""
    t = Text()
    types = item.distractor_types or ()
    for i, option in enumerate(item.options):
        t.append(f"\n({LETTERS[i] if i < 4 else i}) ", style="bold")
        if reveal:
            if i == item.correct_index:
                t.append("● gold ", style=gold)
            else:
                t.append(f"○ {sanitize(str(types[i]) if i < len(types) and types[i] else 'distractor')} ", style=muted)
        marked = mark(i)
        if marked:
            t.append(*marked)
        text = sanitize(option)
        t.append(text if width is None else clip(text, width))
    return t


def item_text(ctx: ItemContext | None, traj: dict[str, Any], steps_so_far: list[dict[str, Any]], reveal: bool,
              colors: dict[str, Style], path: bool = True, at_end: bool = True) -> Text:
    """The left pane: seed, question, options (gold revealed on demand; the answer marked once the steps in view
    give it), the citation path so far.

    Without `path` only seed, question and options: what a player may see before answering (the path names
    the gold and bridge papers)."""
    t = Text()
    ok, bad, muted = colors.get("success", Style()), colors.get("error", Style()), colors.get("muted", Style(dim=True))
    bold = Style(bold=True)
    item = ctx.item if ctx else None
    papers, reads = touched(steps_so_far)
    gold = gold_of(ctx)
    if item is None:
        t.append("Item unavailable", style="bold")
        t.append(f"\n{sanitize(ctx.note if ctx else 'loading the corpus…')}\n", style=muted)
        t.append(f"\n{traj['item_id']} · {traj.get('question_type') or '?'} d{traj.get('depth') or '?'}")
        ci = traj.get("correct_index")
        if reveal and ci is not None and 0 <= ci < 4:
            t.append(f"\ngold option: ({LETTERS[ci]})", style=ok)
        t.append(f"\nvisited {counted(len(papers), 'paper')} · {counted(len(reads), 'read')}")
        return t
    titles = ctx.titles
    t.append("Seed ", style="bold")
    t.append(sanitize(item.seed_title or titles.get(item.seed_paper_id, item.seed_paper_id)))
    if item.seed_arxiv_id:
        t.append(f" ({sanitize(item.seed_arxiv_id)})", style=muted)
    t.append("\n\nQ ", style="bold")
    t.append(sanitize(item.question))
    t.append("\n")
    given = traj.get("predicted_index") if answered(steps_so_far, at_end) else None
    answer_mark = ("◀ answered ", bold + (ok if traj.get("correct") else bad))
    t.append_text(options_text(item, reveal, bold + ok, muted, lambda i: answer_mark if i == given else None))
    if not path:
        return t
    t.append("\n\nCitation path\n", style="bold")
    read_ids = {str(r.get("paper_id")) for r in reads}
    chain = [("seed", item.seed_paper_id)] + [("bridge", b) for b in item.bridge_paper_ids] + \
            [("gold", g) for g in item.gold_paper_ids]
    for role, pid in chain:
        if pid in read_ids:
            state, style = ("read ★" if role == "gold" else "read"), ok if role == "gold" else Style()
        elif pid in papers:
            state, style = "visited", Style()
        else:
            state, style = "·", muted
        symbol = {"seed": "●", "bridge": "◇", "gold": "★"}[role]
        t.append(f" {symbol} {role:<6} ", style="bold" if role == "gold" else "")
        t.append(f"{state:<8}", style=style)
        t.append(clip(sanitize(titles.get(pid) or pid), 30) + "\n")
    n_gold = sum(1 for r in reads if gold.is_gold(r))
    t.append(f"visited {counted(len(papers), 'paper')} · {counted(len(reads), 'read')} (", style=muted)
    t.append(f"{n_gold} ★", style=ok)
    t.append(", ", style=muted)
    t.append(f"{len(reads) - n_gold} ✗", style=bad)
    t.append(")", style=muted)
    if ctx.note:
        t.append(f"\n{sanitize(ctx.note)}", style=bad)
    return t


def trajectory_note(traj: dict[str, Any]) -> str:
    """` · ⚠ why`, for a trajectory that carries an error or a mark (a person's play `resumed` after seeing tool
    results or `replayed` after seeing the gold answer), else nothing."""
    if not traj.get("error"):
        return ""
    return f" · ⚠ {clip(sanitize(one_line(str(traj['error']), 200)), 90)}"


class StepperScreen(Screen):
    FOOTER_WIDE_ONLY = frozenset({"stepper.next_trajectory"})  # in ? help only, below 112 columns
    BINDINGS = [
        Binding("right,l", "step(1)", "Next turn", id="stepper.next"),
        Binding("left,h", "step(-1)", "Prev", id="stepper.prev"),
        Binding("0", "first", "First turn", id="stepper.first", show=False),
        Binding("dollar_sign", "last", "Last turn", id="stepper.last", key_display="$", show=False),
        Binding("d", "decision(1)", "Decision", id="stepper.next_decision"),
        Binding("D", "decision(-1)", "Previous decision", id="stepper.prev_decision", show=False),
        Binding("n", "trajectory(1)", "Next traj", id="stepper.next_trajectory"),
        Binding("p", "trajectory(-1)", "Previous trajectory", id="stepper.prev_trajectory", show=False),
        Binding("g", "toggle_gold", "Gold", id="stepper.gold"),
        Binding("y", "copy_step", "Copy", id="stepper.copy_step", show=False),
        Binding("Y", "copy_all", "Copy whole transcript", id="stepper.copy_all", show=False),
        Binding("R", "retry_corpus", "Look for the corpus again", id="stepper.retry_corpus", show=False),
        Binding("escape,q", "back", "Back", id="stepper.back"),
    ]

    def __init__(self, run: dict[str, Any], trajectory_ids: list[int], index: int = 0):
        super().__init__()
        self.run = run
        self.ids = list(trajectory_ids)
        self.index = index
        self.reveal = False
        self.traj: dict[str, Any] = {}
        self.ctx: ItemContext | None = None
        self.caps = run_caps(run)

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

    # ------------------------------------------------------------ loading

    def load(self, index: int) -> None:
        store = self.app.store
        self.index = index
        tid = self.ids[index]
        self.traj = store.trajectory(tid)
        if self.traj.get("run_id") != self.run.get("id"):  # a list across runs (the item browser's): follow the run
            self.run = store.run_by_id(self.traj["run_id"])
            self.caps = run_caps(self.run)
        dataset, item_id = self.run["dataset"], self.traj["item_id"]
        self.ctx = self.app.corpora.cached(dataset, item_id)
        self.view.set_steps(store.steps(tid), gold_of(self.ctx), self.ctx.titles if self.ctx else {}, self.caps,
                            actor=actor_of(self.run.get("agent")),
                            tokens_measured=measures_tokens(self.run.get("agent"), self.run.get("identity")),
                            hops_measured=not hops_stale(self.run))
        self.show_header()
        if self.ctx is None:
            self._load_context()

    def _load_context(self) -> None:
        """The item and its titles from the run's corpus, on a thread (a first open imports the release)."""
        dataset, item_id = self.run["dataset"], self.traj["item_id"]
        self.run_worker(partial(self.app.corpora.item_context, dataset, self.run.get("dataset_fingerprint"), item_id),
                        name="item-context", group="item-context", thread=True, exclusive=True, exit_on_error=False)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "item-context" or event.state != WorkerState.SUCCESS:
            return
        ctx = worker.result
        if isinstance(ctx, ItemContext) and ctx.item_id == self.traj.get("item_id"):
            self.ctx = ctx
            self.view.mark(gold_of(ctx), ctx.titles, keep_cursor=True)
            self._show_item()

    # ------------------------------------------------------------ showing

    def show_header(self) -> None:
        """The title bar and the item pane (the transcript and meters are the StepView's)."""
        traj = self.traj
        verdict = "correct ✓" if traj.get("correct") else "wrong ✗"
        kind = traj.get("question_type") or traj.get("kind") or "?"
        title = (f" {traj['item_id']} r{traj.get('replicate', 0)} · {kind} d{traj.get('depth') or '?'} · {verdict} "
                 f"({sanitize(traj.get('answer') or '—')}) · {traj.get('termination')} · trajectory {self.index + 1}/{len(self.ids)}"
                 f" · {self.run['name']}")
        title += trajectory_note(traj)
        self.query_one("#stepper-title", Static).update(Text(title))
        self._show_item()

    def _show_item(self) -> None:
        colors = {"success": theme_style(self.app, "success"), "error": theme_style(self.app, "error"),
                  "muted": Style(dim=True)}
        view = self.view
        self.query_one("#item-text", Static).update(
            item_text(self.ctx, self.traj, view.current_steps, self.reveal, colors, at_end=view.position >= view.n_turns - 1))

    def meter_readings(self) -> dict[str, tuple[int, int, str]]:
        """What the three meters show (for tests)."""
        return self.view.meter_readings()

    # ------------------------------------------------------------ actions

    def _moved(self, changed: bool) -> None:
        if changed:
            self._show_item()

    def action_step(self, delta: int) -> None:
        self._moved(self.view.step(delta))

    def action_first(self) -> None:
        self._moved(self.view.go(0))

    def action_last(self) -> None:
        self._moved(self.view.go(self.view.n_turns - 1))

    def action_decision(self, delta: int) -> None:
        jump_decision(self, self.view, delta)
        self._show_item()

    def action_trajectory(self, delta: int) -> None:
        new = self.index + delta
        if 0 <= new < len(self.ids):
            self.load(new)
        else:
            self.notify("no more trajectories in this direction", timeout=2)

    def action_toggle_gold(self) -> None:
        self.reveal = not self.reveal
        self._show_item()

    def action_copy_step(self) -> None:
        copy_step(self, self.view.transcript)

    def action_copy_all(self) -> None:
        head = f"{self.run['name']} · {self.traj['item_id']} r{self.traj.get('replicate', 0)}\n"
        if self.ctx is not None and self.ctx.item is not None:
            item = self.ctx.item
            head += sanitize(item.question) + "\n" + "\n".join(
                f"({LETTERS[i]}) {sanitize(o)}" for i, o in enumerate(item.options)) + "\n"
        text = head + "\n" + transcript_text(self.view.entries)
        self.app.copy_to_clipboard(text)
        self.notify(f"copied transcript ({len(text):,} characters)", timeout=2)

    def action_retry_corpus(self) -> None:
        """Look for an unavailable corpus again now (the release put back, say) instead of after a while."""
        if self.ctx is not None and self.ctx.item is not None:
            self.notify("the item is shown already", timeout=2)
            return
        self.app.corpora.forget_failures()
        self._load_context()

    def action_back(self) -> None:
        self.app.pop_screen()


def jump_decision(screen: Screen, view: StepView, delta: int) -> None:
    """`d`/`D`: the next/previous step where the agent decided something, or a word that there is none."""
    found = view.jump_decision(delta)
    if found is None:
        screen.notify(f"no {'later' if delta > 0 else 'earlier'} decision (think, submit, read, rejection)", timeout=2)


def copy_step(screen: Screen, view: TranscriptView) -> None:
    """Copy the step under the cursor (on a turn's separator: the whole turn), by OSC 52 through Textual."""
    entry = view.cursor_entry
    if entry is None:
        return
    if entry.kind == "turn":
        text = transcript_text(e for e in view.entries if e.turn == entry.turn)
        what = f"turn {entry.turn}"
    else:
        text, what = entry.copy_text, "step"
    screen.app.copy_to_clipboard(text)
    screen.notify(f"copied {what} ({len(text):,} characters)", timeout=2)
