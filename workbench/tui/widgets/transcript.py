"""Transcripts: steps turned into entries (pure), and a virtualised view that draws only visible lines.

A tool result can be 70K characters. The view never mounts a widget per step and never
renders off-screen text: it keeps, per entry, the wrapped lines for the current width
(computed once per width) and builds a `Strip` only for the rows on screen
(Textual's line API, as Toolong and Textual's own Log do). Folded entries show a few
lines; `enter` unfolds the entry under the cursor.

All step text is untrusted and is drawn as plain Segments: no markup is ever parsed.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from sandbox.records import TOOL_NAMES
from workbench.service.steps import delivered_read, split_words
from workbench.tui.widgets.plaintext import clip, one_line, sanitize, wrap, wrap_head
from workbench.views.cells import counted
from workbench.views.report import read_hop_text

FOLD_LINES = 3
REASONING_MARK = "[thinking]"  # how the provider's reasoning (thinking) text is marked, apart from the content
INDENT = "  "
LINE_COUNT_CHARS = 4_000  # folded bodies up to this long say how many lines they hide; longer ones, how many characters

# mark of a tool step → (symbol, component class)
MARKS = {
    "gold": ("★ gold", "transcript--gold"),
    "wrong": ("✗ not gold", "transcript--wrong"),
    "rejected": ("⊘ rejected", "transcript--rejected"),
    "disabled": ("⊘ disabled", "transcript--rejected"),
    "nudge": ("↺ nudge", "transcript--nudge"),
    "ood": ("⊗ out of domain", "transcript--wrong"),  # the general-agent setting: a call to an extra tool
}

# the strategies' steps: the agent's summary turn, where the history was replaced, the verifier's assessment
STRATEGY_MARKS = {
    "summary": "≡ summary",
    "history": "⤺ history replaced by the summary",
    "verifier": "✓ verifier (not charged to the agent)",
}


def as_record(step: Any) -> dict[str, Any]:
    """A step as the store returns it (flat ledger fields), whether given a stored row or a live `Step`."""
    if isinstance(step, dict):
        return step
    if is_dataclass(step) and not isinstance(step, type):
        d = asdict(step)
        ledger = d.pop("ledger", None) or {}
        d.update(
            points_used=ledger.get("points_used", 0),
            points_left=ledger.get("points_left", 0),
            tokens=ledger.get("tokens", 0),
            rejections=ledger.get("rejections", 0),
        )
        d.setdefault("idx", d.get("index"))
        return d
    raise TypeError(f"not a step: {type(step).__name__}")


def step_index(step: dict[str, Any]) -> int:
    return step["idx"] if step.get("idx") is not None else step.get("index", 0)


def group_turns(steps: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive steps of the same turn, in order."""
    turns: list[list[dict[str, Any]]] = []
    for s in steps:
        if turns and turns[-1][0]["turn"] == s["turn"]:
            turns[-1].append(s)
        else:
            turns.append([s])
    return turns


@dataclass(frozen=True)
class Gold:
    """The item's gold papers (S2 ids and arXiv ids), to mark reads; `known` False when the item is unavailable."""

    paper_ids: frozenset[str] = frozenset()
    arxiv_ids: frozenset[str] = frozenset()
    known: bool = False

    def is_gold(self, step: dict[str, Any]) -> bool:
        return (step.get("paper_id") in self.paper_ids) or (step.get("arxiv_id") in self.arxiv_ids)


def is_read(step: dict[str, Any]) -> bool:
    """A delivered read, by the recall metrics' own test (`sandbox.recall.delivered_read`)."""
    return (
        step.get("kind") == "tool"
        and delivered_read(step.get("delivered"), step.get("arxiv_id"), step.get("section_index")) is not None
    )


def out_of_domain(step: dict[str, Any]) -> bool:
    """An executed call to a tool outside the protocol's seven: an extra tool of the general-agent setting (a call
    to a tool nobody offered is `unknown_tool`, not this)."""
    return (
        step.get("kind") == "tool"
        and step.get("tool_name") not in TOOL_NAMES
        and step.get("status") not in ("unknown_tool", "rejected", "disabled")
    )


def mark(step: dict[str, Any], gold: Gold) -> str | None:
    """`gold`, `wrong`, `rejected`, `disabled`, `nudge`, `ood` (an out-of-domain call) or None."""
    kind = step.get("kind")
    if kind == "nudge":
        return "nudge"
    if kind != "tool":
        return None
    if step.get("status") in ("rejected", "disabled"):
        return step["status"]
    if out_of_domain(step):
        return "ood"
    if is_read(step) and gold.known:
        return "gold" if gold.is_gold(step) else "wrong"
    return None


def decision(step: dict[str, Any], gold: Gold) -> str | None:
    """What the agent decided in this step, if anything a reader steps to (the `d` key): `think`, `submit`, a
    delivered read (`gold read`, `non-gold read`, or `read` while the gold papers are unknown), a `rejection`."""
    if step.get("kind") != "tool":
        return None
    if step.get("status") in ("rejected", "disabled"):
        return "rejection"
    if out_of_domain(step):
        return "out-of-domain call"
    name = step.get("tool_name")
    if name == "think":
        return "think"
    if name == "submit_answer":
        return "submit"
    if is_read(step):
        return ("gold read" if gold.is_gold(step) else "non-gold read") if gold.known else "read"
    return None


def format_args(args: Any, titles: dict[str, str], limit: int = 28) -> str:
    """Arguments for a header: paper ids shown by title when known, long values clipped."""
    if isinstance(args, dict):
        parts = []
        for key, value in args.items():
            if key == "paper_id" and isinstance(value, str) and value in titles:
                parts.append("«" + clip(sanitize(titles[value]), limit) + "»")
            elif isinstance(value, str):
                parts.append(clip(one_line(value, 200), limit) if value.strip() else '""')  # an empty argument shows
            else:
                parts.append(clip(one_line(json.dumps(value, ensure_ascii=False, default=str)), limit))
        return ", ".join(parts)
    if args is None:
        return ""
    return clip(one_line(json.dumps(args, ensure_ascii=False, default=str)), limit)


Part = tuple[str, str]  # (text, component class)
ATOM = 8  # an argument this short (one line) is shown whole in the header: a section letter, a top_k, an answer


def args_lead(args: Any, titles: dict[str, str]) -> tuple[Part, ...]:
    """Every argument the header may clip, in full as `key: value`: the think text, a query, a submit's reasoning
    are where an agent says why, and they must read whole. Short values are left to the header, and so is a paper
    id whose title is known (the header names the paper by it; `y` copies the id): a read's result stays in view."""
    if not isinstance(args, dict):
        return () if args is None else ((f"arguments: {sanitize(_arg_text(args))}", "transcript--args"),)
    parts = []
    for key, value in args.items():
        text = sanitize(_arg_text(value))
        if key == "paper_id" and isinstance(value, str) and titles.get(value):
            continue
        if "\n" not in text and len(text) <= ATOM:
            continue
        parts.append((f"{sanitize(str(key))}: {text}", "transcript--args"))
    return tuple(parts)


def _arg_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class Entry:
    """One block of the transcript: a header line and an optional (foldable) body.

    `lead` holds marked blocks drawn before the body, each in its own component class: a call's arguments in
    full, an assistant's reasoning text. They fold and unfold with the body, as one text."""

    kind: str  # turn | assistant | tool | nudge | error | note
    turn: int
    header: list[Part]
    body: str = ""
    step: int | None = None  # the step's index
    folded: bool = True
    copy_text: str = ""
    flex: int | None = None  # the header part that is shortened when the header is wider than the view
    lead: tuple[Part, ...] = ()
    decision: str | None = None  # what the agent decided in this step (`decision`)
    _wrapped: tuple[int, list[str]] | None = field(default=None, repr=False, compare=False)
    _head: tuple[int, list[str], bool] | None = field(default=None, repr=False, compare=False)
    _lead: tuple[int, list[Part]] | None = field(default=None, repr=False, compare=False)

    @property
    def has_text(self) -> bool:
        """Whether there is anything below the header to show (and to fold)."""
        return bool(self.body or self.lead)

    def lead_lines(self, width: int) -> list[Part]:
        """The lead blocks wrapped to `width`, each line with its block's class (short enough to wrap whole)."""
        if self._lead is None or self._lead[0] != width:
            self._lead = (width, [(line, cls) for text, cls in self.lead for line in wrap(text, width)])
        return self._lead[1]

    def line_class(self, width: int, index: int) -> str:
        """The component class of wrapped line `index` (0-based, below the header)."""
        lead = self.lead_lines(width)
        return lead[index][1] if index < len(lead) else "transcript--body"

    def wrapped(self, width: int) -> list[str]:
        """The lead and the whole body wrapped to `width` (computed when first drawn unfolded, once per width)."""
        if self._wrapped is None or self._wrapped[0] != width:
            body = wrap(self.body, width) if self.body else []
            self._wrapped = (width, [line for line, _ in self.lead_lines(width)] + body)
        return self._wrapped[1]

    def head(self, width: int) -> tuple[list[str], bool]:
        """(the lines a folded body shows, whether it hides more). Long bodies are wrapped only as far as shown."""
        if self._wrapped is not None and self._wrapped[0] == width:
            lines = self._wrapped[1]
            return (lines, False) if len(lines) <= FOLD_LINES + 1 else (lines[:FOLD_LINES], True)
        if self._head is None or self._head[0] != width:
            if len(self.body) <= LINE_COUNT_CHARS:
                lines, more = self.wrapped(width), False
            else:
                body, more = wrap_head(self.body, width, FOLD_LINES + 1)
                lines = [line for line, _ in self.lead_lines(width)] + body
            over = more or len(lines) > FOLD_LINES + 1
            self._head = (width, lines[:FOLD_LINES] if over else lines, over)
        return self._head[1], self._head[2]

    def fold_note(self, width: int) -> str:
        """What the folded body hides: a line count when it is short enough to have been wrapped, else its size."""
        if self._wrapped is not None and self._wrapped[0] == width:
            more = len(self._wrapped[1]) - FOLD_LINES
            return f"⋯ {counted(more, 'more line')} · enter unfolds"
        return f"⋯ {len(self.body):,} characters in all · enter unfolds"

    def forget_layout(self) -> None:
        """Drop the wrapped lines (after the body changed)."""
        self._wrapped = self._head = self._lead = None

    def line_count(self, width: int) -> int:
        width = max(1, width - len(INDENT))
        if not self.has_text:
            return 1
        if self.folded:
            lines, more = self.head(width)
            return 1 + len(lines) + (1 if more else 0)
        return 1 + len(self.wrapped(width))

    def fitted_header(self, width: int) -> list[Part]:
        """The header within `width` cells: the flexible part (a call's arguments) is shortened first, so the cost
        and the ★/✗/⊘ marks after it stay in view."""
        over = sum(cell_len(text) for text, _ in self.header) - width
        if over <= 0 or self.flex is None:
            return self.header
        text, cls = self.header[self.flex]
        parts = list(self.header)
        parts[self.flex] = (shorten(text, max(1, cell_len(text) - over)), cls)
        return parts

    @property
    def plain_header(self) -> str:
        return "".join(text for text, _ in self.header)


def shorten(text: str, width: int) -> str:
    """`text` in `width` cells; a short last argument (a section letter, a limit) is kept whole, the rest clipped."""
    head, sep, tail = text.rpartition(", ")
    if sep and cell_len(tail) + 2 <= width // 2:
        return clip(head, width - cell_len(tail) - 2) + sep + tail
    return clip(text, width)


def actor_of(agent: str | None) -> str:
    """Who takes the turns of a run's trajectories, as the transcript names them: a person plays, a model
    (or a scripted agent) is the assistant."""
    return "player" if str(agent or "").startswith("human:") else "assistant"


def build_entries(
    steps: Iterable[Any],
    gold: Gold = Gold(),
    titles: dict[str, str] | None = None,
    turn_headers: bool = True,
    actor: str = "assistant",
    hops_measured: bool | None = True,
) -> list[Entry]:
    """Entries for the given steps (stored rows or live Steps), with turn separators; `actor` names who takes
    the turns (`actor_of` the run's agent). A read shows its hop from the seed; with `hops_measured` False (a run
    stored before hops were recorded) it reads "—", not "unreachable"; None shows no hop (a player sees it only
    with the gold, at the reveal: a model is never told it)."""
    titles = titles or {}
    entries: list[Entry] = []
    current_turn = None
    for raw in steps:
        s = as_record(raw)
        turn = s.get("turn") or 0
        if turn_headers and turn != current_turn:
            current_turn = turn
            entries.append(Entry("turn", turn, [(f"── turn {turn} ", "transcript--turn")], copy_text=f"── turn {turn}"))
        entries.append(_entry(s, gold, titles, actor, hops_measured))
    return entries


def _entry(
    s: dict[str, Any], gold: Gold, titles: dict[str, str], actor: str = "assistant", hops_measured: bool | None = True
) -> Entry:
    """One stored step as a transcript entry, by its kind: a tool call, an assistant reply, a nudge, a sequential
    strategy's own step, or an error-like line (error, harness, retry, cut off)."""
    kind = s.get("kind")
    if kind == "tool":
        return _tool_entry(s, gold, titles, hops_measured)
    if kind == "assistant":
        return _assistant_entry(s, actor)
    turn, idx, text = s.get("turn") or 0, step_index(s), sanitize(s.get("text"))
    if kind == "nudge":
        return Entry("nudge", turn, [(MARKS["nudge"][0], MARKS["nudge"][1])], text, idx, copy_text=f"↺ nudge\n{text}")
    if kind in STRATEGY_MARKS:  # a sequential strategy's own steps (sandbox.strategies)
        return _strategy_entry(s, STRATEGY_MARKS[kind])
    label = {"error": "! error", "harness": "! harness", "retry": "⟳ retry", "cutoff": "✂ cut off"}.get(
        str(kind), f"· {sanitize(str(kind))}"
    )
    return Entry("error", turn, [(label, "transcript--error")], text, idx, copy_text=f"{label}\n{text}")


def _step_tokens(s: dict[str, Any]) -> int:
    """The tokens a model step used: prompt, completion and cache writes."""
    usage = s.get("usage") or {}
    return sum(int(usage.get(k) or 0) for k in ("prompt", "completion", "cache_creation"))


def _tool_entry(s: dict[str, Any], gold: Gold, titles: dict[str, str], hops_measured: bool | None) -> Entry:
    """A tool call: its name and arguments, cost, the gold mark, the hop it read at, a status other than ok."""
    name = sanitize(str(s.get("tool_name")))
    head: list[Part] = [
        ("▸ ", "transcript--call"),
        (f"{name}(", "transcript--call"),
        (format_args(s.get("tool_args"), titles), "transcript--call"),
        (")", "transcript--call"),
    ]
    cost = s.get("cost") or 0
    head.append((f"  −{cost}" if cost else "  0", "transcript--cost"))
    m = mark(s, gold)
    if m:
        symbol, cls = MARKS[m]
        head.append(("  " + symbol, cls))
    hop = read_hop_text(s.get("hop"), hops_measured) if hops_measured is not None and is_read(s) else None
    if hop:
        head.append((f"  · {hop}", "transcript--muted"))
    status = s.get("status")
    if status not in (None, "ok", "rejected", "disabled"):
        head.append((f"  · {sanitize(str(status))}", "transcript--muted"))
    text = sanitize(s.get("text"))
    full_args = json.dumps(s.get("tool_args"), ensure_ascii=False, default=str)
    copy = f"▸ {name}({full_args}) cost {cost}" + (f" [{m}]" if m else "") + (f" [{hop}]" if hop else "") + f"\n{text}"
    return Entry(
        "tool",
        s.get("turn") or 0,
        head,
        text,
        step_index(s),
        copy_text=copy,
        flex=2,
        lead=args_lead(s.get("tool_args"), titles),
        decision=decision(s, gold),
    )


def _assistant_entry(s: dict[str, Any], actor: str) -> Entry:
    """An assistant reply: the tools it calls, its tokens, whether the completion limit cut it, its reasoning (as
    the entry's lead) and its content."""
    calls = s.get("tool_args") or []
    names = ", ".join(sanitize(str(c.get("name"))) for c in calls if isinstance(c, dict))
    cut = s.get("finish_reason") == "length"  # the completion limit ended this reply
    head = _assistant_head(actor, names, _step_tokens(s), cut)
    words = split_words(s.get("text"), s.get("reasoning_chars"))
    reasoning, content = sanitize(words.reasoning), sanitize(words.content)
    lead = ((f"{REASONING_MARK} {reasoning}", "transcript--reasoning"),) if reasoning.strip() else ()
    body = content if content.strip() else ""
    copy = _assistant_copy(actor, names, cut, reasoning if lead else None, content)
    turn, idx = s.get("turn") or 0, step_index(s)
    return Entry("assistant", turn, head, body, idx, copy_text=copy, flex=1 if names else None, lead=lead)


def _assistant_head(actor: str, names: str, tok: int, cut: bool) -> list[Part]:
    """An assistant reply's header: who, the tools it calls, its tokens, whether the completion limit cut it."""
    head: list[Part] = [(f"◆ {actor}", "transcript--assistant")]
    if names:
        head.append((f" → {names}", "transcript--muted"))
    if tok:
        head.append((f"  {tok:,} tok", "transcript--cost"))
    if cut:
        head.append(("  ✂ cut off (length)", "transcript--error"))
    return head


def _assistant_copy(actor: str, names: str, cut: bool, reasoning: str | None, content: str) -> str:
    """An assistant reply as the clipboard gets it: who, the tools it calls, whether it was cut off, its reasoning
    (when it has any) and its content."""
    head = f"◆ {actor}" + (f" → {names}" if names else "") + (" [cut off: length]" if cut else "")
    return head + "\n" + (f"{REASONING_MARK} {reasoning}\n" if reasoning is not None else "") + content


def _strategy_entry(s: dict[str, Any], label: str) -> Entry:
    """A sequential strategy's own step (a summary, a verifier's verdict), as a nudge with its tokens."""
    tok = _step_tokens(s)
    head: list[Part] = [(label, "transcript--nudge")] + ([(f"  {tok:,} tok", "transcript--cost")] if tok else [])
    cut = s.get("finish_reason") == "length"  # a summary reply the completion limit ended, as an assistant's
    if cut:
        head.append(("  ✂ cut off (length)", "transcript--error"))
    text = sanitize(s.get("text"))
    copy = f"{label}" + (" [cut off: length]" if cut else "") + f"\n{text}"
    return Entry("nudge", s.get("turn") or 0, head, text, step_index(s), copy_text=copy)


def transcript_text(entries: Iterable[Entry]) -> str:
    """The whole transcript as plain text (full bodies, nothing folded)."""
    return "\n".join(e.copy_text for e in entries).rstrip() + "\n"


class TranscriptView(ScrollView, can_focus=True, inherit_bindings=False):
    """Entries drawn line by line; a cursor selects an entry; enter folds/unfolds it."""

    BINDINGS = [
        Binding("down,j", "cursor(1)", "Down", show=False, id="transcript.down"),
        Binding("up,k", "cursor(-1)", "Up", show=False, id="transcript.up"),
        Binding("enter", "toggle_fold", "Fold/unfold", id="transcript.fold"),
        Binding("pagedown", "page(1)", "Page down", show=False, id="transcript.page_down"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="transcript.page_up"),
        Binding("home", "cursor_to(0)", "Top", show=False, id="transcript.top"),
        Binding("end", "cursor_to(-1)", "Bottom", show=False, id="transcript.bottom"),
    ]
    COMPONENT_CLASSES = {
        "transcript--turn",
        "transcript--call",
        "transcript--cost",
        "transcript--assistant",
        "transcript--body",
        "transcript--muted",
        "transcript--gold",
        "transcript--wrong",
        "transcript--rejected",
        "transcript--nudge",
        "transcript--error",
        "transcript--cursor",
        "transcript--fold",
        "transcript--current",
        "transcript--args",
        "transcript--reasoning",
    }

    cursor: reactive[int] = reactive(0, always_update=True)

    class CursorMoved(Message):
        def __init__(self, view: TranscriptView, entry: Entry | None):
            super().__init__()
            self.view = view
            self.entry = entry

    class Viewed(Message):
        """The lines in view moved (a scroll: page keys, the wheel, the cursor carried past the edge)."""

        def __init__(self, view: TranscriptView):
            super().__init__()
            self.view = view

    def __init__(self, *, placeholder: str = "", **kwargs):
        super().__init__(**kwargs)
        self.entries: list[Entry] = []
        self.placeholder = placeholder
        self.current_turn: int | None = None
        self._offsets: list[int] = []
        self._total = 0
        self._width = 0

    # ------------------------------------------------------------ content

    def set_entries(self, entries: list[Entry], cursor: int | None = None, current_turn: int | None = None) -> None:
        self.entries = entries
        self.current_turn = current_turn
        self._relayout()
        if cursor is not None:
            self.set_reactive(TranscriptView.cursor, max(0, min(cursor, len(entries) - 1)))
        else:
            self.set_reactive(TranscriptView.cursor, max(0, min(self.cursor, len(entries) - 1)))
        self.refresh()

    def append_entries(self, entries: list[Entry], follow: bool = True) -> None:
        at_bottom = self.scroll_y >= self.max_scroll_y - 1
        self.entries.extend(entries)
        self._relayout()
        if follow and at_bottom:
            self.set_reactive(TranscriptView.cursor, max(0, len(self.entries) - 1))
            self.call_after_refresh(self.scroll_end, animate=False)
        self.refresh()

    @property
    def cursor_entry(self) -> Entry | None:
        return self.entries[self.cursor] if 0 <= self.cursor < len(self.entries) else None

    def entry_start(self, index: int) -> int:
        return self._offsets[index] if 0 <= index < len(self._offsets) else 0

    @property
    def total_lines(self) -> int:
        return self._total

    def _content_width(self) -> int:
        width = self.scrollable_content_region.width or self.size.width
        return max(10, width)

    def _relayout(self) -> None:
        width = self._content_width()
        self._width = width
        offsets, y = [], 0
        for e in self.entries:
            offsets.append(y)
            y += e.line_count(width)
        self._offsets, self._total = offsets, y
        self.virtual_size = Size(width, max(y, 1 if self.placeholder else 0))

    def on_resize(self) -> None:
        if self._content_width() != self._width:
            self._relayout()
            self.refresh()

    # ------------------------------------------------------------ drawing

    def _style(self, cls: str) -> Style:
        return self.get_component_rich_style(cls, partial=True)

    def render_line(self, y: int) -> Strip:
        if self._content_width() != self._width:  # resized since the last layout
            self._relayout()
        width = self._width
        base = self.rich_style
        line = self.scroll_offset.y + y
        if not self.entries:
            return self._placeholder_line(y, width, base)
        if line >= self._total:
            return Strip.blank(width, base)
        ei = bisect_right(self._offsets, line) - 1
        entry = self.entries[ei]
        k = line - self._offsets[ei]
        if k == 0:
            return self._header_line(entry, ei == self.cursor and self._cursor_shown(), width, base)
        return self._body_line(entry, k, width, base)

    def _placeholder_line(self, y: int, width: int, base: Style) -> Strip:
        """A line of the empty view: the placeholder on the first, blank below."""
        if y == 0 and self.placeholder:
            return Strip(
                [Segment(clip(self.placeholder, width), base + self._style("transcript--muted"))]
            ).extend_cell_length(width, base)
        return Strip.blank(width, base)

    def _header_line(self, entry: Entry, selected: bool, width: int, base: Style) -> Strip:
        """An entry's header line, under the cursor bar when `selected`, marked when it heads the current turn."""
        extra = Style()
        if selected:
            extra = self._cursor_style()
        elif self.current_turn is not None and entry.turn == self.current_turn and entry.kind == "turn":
            extra = self._style("transcript--current")
        segments = [Segment(text, base + self._style(cls) + extra) for text, cls in entry.fitted_header(width)]
        return Strip(segments).extend_cell_length(width, base + extra).crop(0, width)

    def _body_line(self, entry: Entry, k: int, width: int, base: Style) -> Strip:
        """Line `k` (1-based) of an entry's indented body: a folded entry's head then its fold note, or blank."""
        inner = max(1, width - len(INDENT))
        if entry.folded:
            body, more = entry.head(inner)
            if more and k == len(body) + 1:
                text = INDENT + entry.fold_note(inner)
                return Strip([Segment(clip(text, width), base + self._style("transcript--fold"))]).extend_cell_length(
                    width, base
                )
        else:
            body = entry.wrapped(inner)
        if k > len(body):
            return Strip.blank(width, base)
        text = INDENT + body[k - 1]
        style = base + self._style(entry.line_class(inner, k - 1))
        return Strip([Segment(text, style)]).extend_cell_length(width, base).crop(0, width)

    def _cursor_style(self) -> Style:
        """The cursor bar with its translucent background blended over the view's: a component's rich style drops
        the alpha, which left a bar of solid $primary that hid a tool call's header (drawn in $primary)."""
        bar = self.get_component_styles("transcript--cursor").background
        return self._style("transcript--cursor") + Style(bgcolor=(self.styles.background + bar).rich_color)

    def _cursor_shown(self) -> bool:
        """The cursor is drawn while the view has focus."""
        return self.has_focus or not self.can_focus

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if round(old_value) != round(new_value):
            self.post_message(self.Viewed(self))

    def viewed_turn(self) -> int | None:
        """The turn the view shows: the cursor's entry's while it is on screen, else the first entry in view's."""
        if not self.entries:
            return None
        top = int(self.scroll_y)
        height = self.scrollable_content_region.height or self.size.height
        if top <= self.entry_start(self.cursor) < top + max(1, height):
            return self.entries[self.cursor].turn
        return self.entries[max(0, bisect_right(self._offsets, top) - 1)].turn

    # ------------------------------------------------------------ cursor and folding

    def watch_cursor(self, value: int) -> None:
        self.scroll_to_entry(value)
        self.refresh()
        self.post_message(self.CursorMoved(self, self.cursor_entry))

    def scroll_to_entry(self, index: int, top: bool = False) -> None:
        if not self.entries:
            return
        start = self.entry_start(index)
        height = self.scrollable_content_region.height or self.size.height
        end = start + self.entries[index].line_count(self._width)
        if top or start < self.scroll_y:
            self.scroll_to(y=start, animate=False, immediate=True)
        elif end > self.scroll_y + height:
            self.scroll_to(y=min(start, end - height), animate=False, immediate=True)

    def show_turn(self, turn: int) -> None:
        """Scroll so that `turn` starts in view, bottom-aligned when the transcript is short."""
        self._scroll_to_turn(turn)
        self.call_after_refresh(self._scroll_to_turn, turn)  # again once the new virtual size is in effect

    def _scroll_to_turn(self, turn: int) -> None:
        index = next((i for i, e in enumerate(self.entries) if e.turn == turn), 0)
        start = self.entry_start(index)
        height = self.scrollable_content_region.height or self.size.height
        y = min(start, max(0, self._total - height))
        self.scroll_to(y=y, animate=False, immediate=True)

    def action_cursor(self, delta: int) -> None:
        if self.entries:
            self.cursor = max(0, min(len(self.entries) - 1, self.cursor + delta))

    def action_cursor_to(self, index: int) -> None:
        if self.entries:
            self.cursor = index % len(self.entries)

    def action_page(self, direction: int) -> None:
        height = self.scrollable_content_region.height or self.size.height
        self.scroll_to(y=self.scroll_y + direction * max(1, height - 1), animate=False)

    def action_toggle_fold(self) -> None:
        entry = self.cursor_entry
        if entry is None or not entry.has_text:
            return
        entry.folded = not entry.folded
        self._relayout()
        self.scroll_to_entry(self.cursor)
        self.refresh()

    def visible_lines(self) -> list[str]:
        """The text of the rows on screen (for tests and debugging)."""
        height = self.scrollable_content_region.height or self.size.height
        return ["".join(seg.text for seg in self.render_line(y)).rstrip() for y in range(height)]
