"""The item pane: an item's seed, question and options beside a trajectory, with the citation path read so far.

One rendering shared by every screen that shows an item next to steps (the stepper, the compare screen's split
stepper, play, the item view): renderables only, no widget state.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rich.style import Style
from rich.text import Text

from workbench.tui.corpora import ItemContext
from workbench.tui.widgets.plaintext import clip, one_line, sanitize
from workbench.tui.widgets.transcript import Gold, is_read
from workbench.views.cells import counted

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
    return at_end or any(
        s.get("kind") == "tool"
        and s.get("tool_name") == "submit_answer"
        and s.get("status") not in ("rejected", "disabled")
        for s in steps_so_far
    )


def options_text(
    item: Any,
    reveal: bool,
    gold: Style,
    muted: Style,
    mark: Callable[[int], tuple[str, Style] | None] = lambda i: None,
    width: int | None = None,
) -> Text:
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


@dataclass(frozen=True)
class PaneStyles:
    """The pane's three theme colours: right and gold (`ok`), wrong (`bad`), secondary text (`muted`)."""

    ok: Style
    bad: Style
    muted: Style

    @classmethod
    def of(cls, colors: dict[str, Style]) -> PaneStyles:
        return cls(colors.get("success", Style()), colors.get("error", Style()), colors.get("muted", Style(dim=True)))


PATH_SYMBOLS = {"seed": "●", "bridge": "◇", "gold": "★"}


def item_text(
    ctx: ItemContext | None,
    traj: dict[str, Any],
    steps_so_far: list[dict[str, Any]],
    reveal: bool,
    colors: dict[str, Style],
    path: bool = True,
    at_end: bool = True,
) -> Text:
    """The left pane: seed, question, options (gold revealed on demand; the answer marked once the steps in view
    give it), the citation path so far.

    Without `path` only seed, question and options: what a player may see before answering (the path names
    the gold and bridge papers)."""
    styles = PaneStyles.of(colors)
    papers, reads = touched(steps_so_far)
    tally = f"visited {counted(len(papers), 'paper')} · {counted(len(reads), 'read')}"
    if ctx is None or ctx.item is None:
        return _unavailable_text(ctx, traj, reveal, styles, tally)
    given = traj.get("predicted_index") if answered(steps_so_far, at_end) else None
    t = _question_text(ctx, reveal, styles, given, bool(traj.get("correct")))
    if not path:
        return t
    t.append("\n\nCitation path\n", style="bold")
    _append_path(t, ctx, styles, papers, {str(r.get("paper_id")) for r in reads})
    gold = gold_of(ctx)
    _append_tally(t, styles, tally, sum(1 for r in reads if gold.is_gold(r)), len(reads))
    if ctx.note:
        t.append(f"\n{sanitize(ctx.note)}", style=styles.bad)
    return t


def _unavailable_text(
    ctx: ItemContext | None,
    traj: dict[str, Any],
    reveal: bool,
    styles: PaneStyles,
    tally: str,
) -> Text:
    """The pane while the item cannot be shown (corpus loading or missing): what the trajectory itself records, and
    the `tally` of papers visited and read."""
    t = Text()
    t.append("Item unavailable", style="bold")
    t.append(f"\n{sanitize(ctx.note if ctx else 'loading the corpus…')}\n", style=styles.muted)
    t.append(f"\n{traj['item_id']} · {traj.get('question_type') or '?'} d{traj.get('depth') or '?'}")
    ci = traj.get("correct_index")
    if reveal and ci is not None and 0 <= ci < 4:
        t.append(f"\ngold option: ({LETTERS[ci]})", style=styles.ok)
    t.append(f"\n{tally}")
    return t


def _question_text(ctx: ItemContext, reveal: bool, styles: PaneStyles, given: int | None, correct: bool) -> Text:
    """Seed, question and options, the option `given` marked as the answer (in right's or wrong's colour)."""
    item, titles = ctx.item, ctx.titles
    bold = Style(bold=True)
    t = Text()
    t.append("Seed ", style="bold")
    t.append(sanitize(item.seed_title or titles.get(item.seed_paper_id, item.seed_paper_id)))
    if item.seed_arxiv_id:
        t.append(f" ({sanitize(item.seed_arxiv_id)})", style=styles.muted)
    t.append("\n\nQ ", style="bold")
    t.append(sanitize(item.question))
    t.append("\n")
    answer_mark = ("◀ answered ", bold + (styles.ok if correct else styles.bad))
    t.append_text(
        options_text(item, reveal, bold + styles.ok, styles.muted, lambda i: answer_mark if i == given else None)
    )
    return t


def _append_path(t: Text, ctx: ItemContext, styles: PaneStyles, papers: set[str], read_ids: set[str]) -> None:
    """The citation path, seed → bridges → gold, each paper marked read, visited or not reached."""
    item = ctx.item
    chain = (
        [("seed", item.seed_paper_id)]
        + [("bridge", b) for b in item.bridge_paper_ids]
        + [("gold", g) for g in item.gold_paper_ids]
    )
    for role, pid in chain:
        state, style = _path_state(role, pid in read_ids, pid in papers, styles)
        t.append(f" {PATH_SYMBOLS[role]} {role:<6} ", style="bold" if role == "gold" else "")
        t.append(f"{state:<8}", style=style)
        t.append(clip(sanitize(ctx.titles.get(pid) or pid), 30) + "\n")


def _append_tally(t: Text, styles: PaneStyles, tally: str, n_gold: int, n_reads: int) -> None:
    """The `tally` of papers visited and read, the reads split into gold (★) and not (✗)."""
    t.append(f"{tally} (", style=styles.muted)
    t.append(f"{n_gold} ★", style=styles.ok)
    t.append(", ", style=styles.muted)
    t.append(f"{n_reads - n_gold} ✗", style=styles.bad)
    t.append(")", style=styles.muted)


def _path_state(role: str, read: bool, visited: bool, styles: PaneStyles) -> tuple[str, Style]:
    """A path paper's state and its style: read (★ and gold's colour for a gold paper), visited, or not reached."""
    if read:
        return ("read ★", styles.ok) if role == "gold" else ("read", Style())
    if visited:
        return "visited", Style()
    return "·", styles.muted


def trajectory_note(error: str | None) -> str:
    """` · ⚠ why`, for a trajectory that carries an error or a mark (its `error`: a person's play `resumed` after
    seeing tool results or `replayed` after seeing the gold answer), else nothing."""
    if not error:
        return ""
    return f" · ⚠ {clip(sanitize(one_line(str(error), 200)), 90)}"
