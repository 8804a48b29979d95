"""Play: a person answers items with the seven tools under exactly the agent's rules, then sees how the models did.

The session is a run (`human:NAME`) executed by the same runner as every model (`workbench.service.play`) on
the app's event loop, as a worker of this screen: its agent factory hands the runner the person's agent
(`workbench.service.agents.human_agent`) per item, and each key here becomes that agent's one tool call of the
turn. Costs, caps, rejections, the exhausted nudge, the status footer and the
endings are therefore the episode's own; this screen only shows them. Where the session stands, item by item, is
its plain model's (`workbench.tui.forms.play`), and so are the argument form's rules (`forms.tool_call`). What it
offers for completion (paper ids, section aliases) is what the tool results showed
(`workbench.tui.forms.seen`); nothing names the gold papers before the answer.

After an answer (or any other ending) the gold option is revealed with a table of
every stored run on the same item (`store.item_trajectories`); `n` moves on, and the
next episode (and its clock) starts only then. Leaving in the middle of an item
cancels the session's worker: what was played is kept as an abandoned attempt, and a
later play of the item (re-opening the session) is marked `resumed` and left out of
the leaderboard (`workbench.service.play`).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from typing import Any, Literal

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import ContentSwitcher, DataTable, Input, OptionList, Static
from textual.widgets.option_list import Option
from textual.worker import WorkerCancelled

from workbench.service.datasets import dataset_key
from workbench.service.play import (
    PlayError,
    RevealRow,
    SessionRequest,
    abandon,
    plan_session,
    reveal_rows,
    session_runner,
)
from workbench.tui.forms.play import PlaySession, clock_text, reveal_recall, reveal_who
from workbench.tui.forms.tool_call import (
    ARG_FIELDS,
    FIELDS,
    TOOLS,
    call_args,
    first_empty,
    list_below,
    placeholder,
    refused,
    title_hints,
    unseen_paper,
    unsent,
)
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.itempane import LETTERS, gold_of, item_text
from workbench.tui.widgets.meters import Meter, theme_style
from workbench.tui.widgets.plaintext import clip, one_line, sanitize
from workbench.tui.widgets.seen import SeenSuggester
from workbench.tui.widgets.stepview import DEFAULT_CAPS
from workbench.tui.widgets.toolform import ArgForm, ArgInput, FormTitle, arg_input, tool_palette
from workbench.tui.widgets.transcript import Entry, Gold, TranscriptView, as_record, build_entries
from workbench.views.cells import counted


def opening_entry(messages: tuple[dict[str, Any], ...]) -> Entry:
    """The opening messages, folded: the rules and the task exactly as a model is given them."""
    body = sanitize("\n\n".join(str(m.get("content") or "") for m in messages))
    return Entry(
        "note", 0, [("▪ the task, as the model is given it · enter unfolds", "transcript--muted")], body, copy_text=body
    )


LISTS: dict[str, Literal["papers", "sections"]] = {"play-papers": "papers", "play-sections": "sections"}


class PlayScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Play"
    AUTO_FOCUS = ""
    BINDINGS = [
        # the palette above the transcript shows the tools with their costs: the footer keeps room for the rest
        *[
            Binding(key, f"tool('{tool}')", label.capitalize(), id=f"play.{label}", show=False)
            for key, tool, label, _ in TOOLS
        ],
        Binding("i", "focus('play-item')", "Item in full (↑↓ scroll it)", id="play.item", show=False),
        Binding("p", "focus('play-papers')", "Papers seen", id="play.papers", show=False),
        Binding("a", "focus('play-sections')", "Section aliases", id="play.sections_list", show=False),
        Binding("down", "pick_from_list", "Pick from the list", id="play.pick", show=False),
        Binding("n", "next_item", "Next item", id="play.next"),
        Binding("L", "leaderboard", "Leaderboard", id="play.leaderboard"),
        Binding("escape", "escape", "Cancel / back", id="play.back"),
    ]

    def __init__(self, request: SessionRequest):
        super().__init__()
        self.session = PlaySession(request)  # where the session stands: this screen shows it
        self.runner: Any = None
        self.store: Any = None
        self.ctx: Any = None  # the item's context in the corpus (its text, its gold), for the item pane
        self.task_entry: Entry | None = None
        self._next = asyncio.Event()

    # ------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static("", id="play-title", classes="title-bar")
        with Horizontal(id="play-body"):
            with Vertical(id="play-left"):
                with VerticalScroll(id="play-item"):
                    yield Static("", id="play-item-text")
                yield Static(" PAPERS SEEN · p goes here · enter picks one", classes="play-label")
                yield OptionList(id="play-papers")
                yield Static("", id="sections-label", classes="play-label")
                yield OptionList(id="play-sections")
            with ContentSwitcher(id="play-right", initial="play-turn"):
                with Vertical(id="play-turn"):
                    yield Static("", id="play-palette")
                    with ArgForm(id="play-form"):
                        yield FormTitle("", id="form-title")
                        for name in ARG_FIELDS:
                            yield self._field(name)
                    yield TranscriptView(id="play-transcript", placeholder="opening the session…")
                    with Vertical(id="play-meters"):
                        yield Meter("POINTS", DEFAULT_CAPS[0], id="meter-points")
                        yield Meter("TURNS", DEFAULT_CAPS[1], id="meter-turns")
                        yield Meter("TOKENS", DEFAULT_CAPS[2], unit="tokens", id="meter-tokens")
                    yield Static("", id="play-footer")
                with Vertical(id="play-reveal"):
                    yield Static("", id="reveal-title")
                    yield DataTable(id="reveal-table", cursor_type="row", zebra_stripes=True)
                    yield Static("", id="reveal-hint")
        yield KeysFooter()

    def _field(self, name: str) -> ArgInput:
        """The argument field `name`; a paper id and a section complete from what was seen."""
        if name == "paper_id":
            return arg_input(name, SeenSuggester(lambda: self.session.seen.papers))
        return arg_input(name, SeenSuggester(self._aliases) if name == "section" else None)

    def on_mount(self) -> None:
        table = self.query_one("#reveal-table", DataTable)
        for label in ("", "RUN", "WHO", "RESULT", "PTS", "TURNS", "P S"):
            table.add_column(label)
        self.query_one("#play-form").display = False
        self.set_interval(1.0, self._tick, name="play-timer")
        self._show_title()
        self.run_worker(self._session(), name="play-session", group="play", exclusive=True, exit_on_error=False)

    # ------------------------------------------------------------ the session (a worker on the app's loop)

    async def _session(self) -> None:
        from workbench.service.errors import InvalidSlice, StoreError
        from workbench.service.stores import open_store
        from workbench.views.play import session_notes

        session = self.session
        # after an item was left midway: the session's own items, less those left (`PlaySession.leave_item`)
        request = replace(session.request, mode="continue") if session.deferred else session.request
        try:
            corpus = await asyncio.to_thread(self.app.corpora.corpus, dataset_key(request.dataset))
            self.store = open_store(self.app.store_path)
            session.plan = plan_session(request, corpus, self.store)
            for note in session_notes(session.plan) if not session.deferred else []:
                self.notify(note, title="play", severity="warning", timeout=10)
            self.runner = session_runner(
                request,
                corpus,
                self.store,
                self._agent_for,
                self._on_event,
                plan=session.plan,
                deferred=tuple(session.deferred),
            )
            session.caps, session.fingerprint = self.runner.caps, corpus.fingerprint
            await self.runner.run()
        except asyncio.CancelledError:  # the person left: an item in play is kept as an abandoned attempt
            if self.runner is not None and self.runner.run_id is not None:
                abandon(self.store, self.runner.run_id)
            raise
        except (LookupError, PlayError, InvalidSlice, StoreError) as exc:
            self._fail(str(exc))
        except Exception as exc:  # our bug: say so on screen instead of waiting forever
            self._fail(f"internal error ({type(exc).__name__}: {exc})")
            raise
        finally:
            if self.store is not None:
                self.store.close()

    async def _agent_for(self, item, replicate: int, attempt: int):
        """The runner's agent factory: the next item starts when the person leaves the previous reveal."""
        from workbench.service.agents import human_agent

        if self.session.waits_for_the_person:
            await self._next.wait()
        self._next.clear()
        agent = human_agent(self.session.request.player, on_turn=self._on_turn)
        self._begin(item, agent)
        return agent

    def _on_event(self, event) -> None:
        if not self.session.heard(event.done, event.planned):  # the screen is going away
            return
        if event.kind == "step":
            self._on_step(event.step)
        elif event.kind == "trajectory":
            self._on_answer(event.trajectory)
        elif event.kind == "finished" and self.session.finish():
            self.refresh_bindings()
            self._show_hint()
        self._show_title()

    def _fail(self, message: str) -> None:
        self.session.fail()
        self.query_one(TranscriptView).placeholder = message
        self.query_one(TranscriptView).refresh()
        self.notify(message, title="play", severity="error", timeout=8)
        self.refresh_bindings()
        self._show_title()

    # ------------------------------------------------------------ one item

    def _begin(self, item, agent) -> None:
        self.session.begin(item, agent)
        self.ctx = self.app.corpora.item_context(self.runner.spec.dataset, self.session.fingerprint, item.id)
        self.task_entry = None
        self.remove_class("-reveal")
        self.refresh_bindings()
        self.query_one(ContentSwitcher).current = "play-turn"
        self._close_form()
        if self.has_class("-narrow") or self.has_class("-short"):  # the item is read in full before the first call
            self.query_one("#play-item").focus()
        self._show_item()
        self._show_lists()
        self._show_transcript()
        self._show_meters(None)
        self._show_footer()
        self._show_title()
        notice = self.session.mark_notice()
        if notice is not None:
            self.notify(notice, title="play", severity="warning", timeout=10)

    def _on_turn(self, observation) -> None:
        """The agent waits for this person's call: show what it was shown."""
        if self.task_entry is None:
            self.task_entry = opening_entry(observation.messages)
            self._show_transcript()
        self.session.footer_text = observation.footer or ""
        self._show_footer()
        self._show_palette()

    def _on_step(self, step) -> None:
        changed = self.session.take_step(step)
        if changed == "lists":
            self._show_lists()
        elif changed == "sections":
            self._show_sections()
        self._show_meters(step)
        if step.kind != "assistant":
            self._show_transcript()

    def _on_answer(self, trajectory) -> None:
        session = self.session
        assert session.fingerprint is not None  # set with the runner, before its first item
        session.answered(
            trajectory, reveal_rows(self.store, session.fingerprint, session.item.id, self.runner.spec.name)
        )
        self.add_class("-reveal")
        self._show_deciding()
        self._close_form()
        self._show_item()
        self._show_transcript()
        self._show_reveal()
        self.query_one(ContentSwitcher).current = "play-reveal"
        self.query_one("#reveal-table", DataTable).focus()
        self.refresh_bindings()

    # ------------------------------------------------------------ drawing

    def _tick(self) -> None:
        if self.session.ticking:
            self._show_title()

    def _show_title(self) -> None:
        self.query_one("#play-title", Static).update(Text(sanitize(self.session.title())))

    def _colors(self) -> dict[str, Style]:
        return {
            "success": theme_style(self.app, "success"),
            "error": theme_style(self.app, "error"),
            "muted": Style(dim=True),
        }

    def _show_item(self) -> None:
        session = self.session
        answered = session.revealed
        traj = {"item_id": session.item.id}
        if answered:
            traj.update(predicted_index=session.trajectory.predicted_index, correct=session.trajectory.correct)
        records = [as_record(s) for s in session.steps]
        text = item_text(self.ctx, traj, records, reveal=answered, colors=self._colors(), path=answered)
        self.query_one("#play-item-text", Static).update(text)

    def _aliases(self) -> list[str]:
        return self.session.aliases(self.query_one("#arg-paper_id", Input).value)

    def _show_lists(self) -> None:
        papers = self.query_one("#play-papers", OptionList)
        highlighted = papers.highlighted
        papers.clear_options()
        papers.add_options(
            [
                Option(
                    Text(f"{pid[:8]}… {sanitize(title) or '(title not seen)'}", no_wrap=True, overflow="ellipsis"),
                    id=pid,
                )
                for pid, title in self.session.seen.papers.items()
            ]
        )
        if papers.option_count:  # a list shows where enter lands from the start: the first entry, or the kept one
            papers.highlighted = min(highlighted or 0, papers.option_count - 1)
        self._show_sections()

    def _show_sections(self) -> None:
        title, sections = self.session.current_sections()
        label = (
            f" SECTIONS of {clip(sanitize(title), 28)} · a goes here · enter reads"
            if sections
            else " SECTIONS · list a paper's sections (4) to pick one here"
        )
        self.query_one("#sections-label", Static).update(Text(label))
        box = self.query_one("#play-sections", OptionList)
        box.clear_options()
        box.add_options(
            [
                Option(Text(f"({alias}) {sanitize(header)}", no_wrap=True, overflow="ellipsis"), id=alias)
                for alias, header in sections
            ]
        )
        if box.option_count:
            box.highlighted = 0

    def _show_transcript(self) -> None:
        view = self.query_one(TranscriptView)
        gold = gold_of(self.ctx) if self.session.gold_shown else Gold()
        entries = build_entries(
            [s for s in self.session.steps if s.kind != "assistant"],
            gold,
            self.session.seen.papers,
            hops_measured=True if gold.known else None,
        )
        for entry in entries:
            entry.folded = True
        latest = max((i for i, e in enumerate(entries) if e.kind != "turn"), default=None)
        if latest is not None:
            entries[latest].folded = False  # the result just received is read in full
        if self.task_entry is not None:
            entries.insert(0, self.task_entry)
            latest = None if latest is None else latest + 1
        view.placeholder = "your turn: pick a tool (1–5, t, s)"
        view.set_entries(entries, cursor=latest if latest is not None else 0)
        if latest is not None:
            view.show_turn(entries[latest].turn)  # the newest result from its first line

    def _show_meters(self, step) -> None:
        caps = self.session.caps
        if caps is None:
            return
        ledger = step.ledger if step is not None else None
        self.query_one("#meter-points", Meter).show(ledger.points_used if ledger else 0, caps.budget)
        self.query_one("#meter-turns", Meter).show(ledger.turn if ledger else 0, caps.max_turns)
        self.query_one("#meter-tokens", Meter).show(ledger.tokens if ledger else 0, caps.max_tokens_total)

    def _show_footer(self) -> None:
        text = Text(" STATUS ", style="bold")
        text.append(self.session.footer_text or "(shown after each tool result)")
        self.query_one("#play-footer", Static).update(text)

    def _show_palette(self) -> None:
        session = self.session
        if session.caps is not None:
            palette = self.query_one("#play-palette", Static)
            width = palette.content_size.width
            palette.update(tool_palette(session.caps, session.tool, session.my_turn, width, session.points_left))

    def _show_deciding(self) -> None:
        """`-deciding` while the player reads the item (`i`, or an item's start on a small terminal) or answers
        (`-answering`): the stylesheet then gives the item the room it needs, the lists hidden and, below 112
        columns or 29 rows, the whole width, the transcript and meters folded away until a tool's form or esc.
        At 80×24 the longest built-in item (a 274-character question, four 150-character options) needs 19 of the
        22 rows at full width, and ~43 rows in the 30 columns beside the transcript: there is no layout that shows
        both."""
        answering = self.session.answering
        reading = self.session.state == "playing" and self.focused is self.query_one("#play-item")
        before = self.has_class("-deciding")
        self.set_class(answering, "-answering")
        self.set_class(answering or reading, "-deciding")
        if self.has_class("-deciding") != before:  # the palette has another width now: packed again once laid out
            self.call_after_refresh(self._show_palette)

    def on_descendant_focus(self, event) -> None:
        self._show_deciding()

    def on_descendant_blur(self, event) -> None:
        self._show_deciding()

    def on_resize(self) -> None:
        self.call_after_refresh(self._show_palette)  # re-packed for the new width

    def _show_reveal(self) -> None:
        session = self.session
        traj, item = session.trajectory, session.item
        gold = LETTERS[item.correct_index]
        title = Text(f" Gold ({gold}) · ", style="bold")
        if traj.termination == "answer":
            verdict = "correct" if traj.correct else "wrong"
            style = theme_style(self.app, "success" if traj.correct else "error")
            title.append(f"you answered {sanitize(traj.answer or '—')} · {verdict}", style=style + Style(bold=True))
        else:
            title.append(f"no answer: the episode ended ({traj.termination})", style=theme_style(self.app, "error"))
        title.append(
            f" · {counted(traj.points_used, 'point')} · {counted(traj.turns, 'turn')} · {clock_text(session.elapsed())}"
        )
        mark = session.reveal_mark()
        if mark is not None:
            title.append("\n" + mark, style=theme_style(self.app, "warning"))
        self.query_one("#reveal-title", Static).update(title)
        table = self.query_one("#reveal-table", DataTable)
        table.clear()
        for row in session.reveal:
            table.add_row(*reveal_cells(row), key=str(row["id"]))
        self._show_hint()

    def _show_hint(self) -> None:
        self.query_one("#reveal-hint", Static).update(Text(self.session.reveal_hint()))

    # ------------------------------------------------------------ the argument form

    def _values(self, tool: str) -> dict[str, str]:
        """What the fields of `tool`'s form hold."""
        return {name: self.query_one(f"#arg-{name}", Input).value for name in FIELDS[tool]}

    def _close_form(self) -> None:
        self.session.close_form()
        self.query_one("#play-form").display = False
        self._show_palette()
        self.query_one(TranscriptView).focus()
        self._show_deciding()

    def _open_form(self, tool: str, **values: str) -> None:
        """The tool's argument form, its paper (and a section picked from the list) filled in. When nothing is left
        to fill, the form itself takes the focus: enter sends, and a tool key opens that tool's form instead of
        typing into a filled-in field (a `5` there once replaced a picked section and read the wrong one)."""
        opened = self.session.open_form(tool, values)
        for name in ARG_FIELDS:
            box = self.query_one(f"#arg-{name}", Input)
            box.display = name in opened
            if name in opened:
                box.placeholder = placeholder(tool, name)
                box.value = opened[name]
        self.query_one("#play-form").display = True
        self._show_form_title()
        self._show_palette()
        self._focus_next_empty(tool, FIELDS[tool][0])
        self._show_deciding()

    def _show_form_title(self) -> None:
        """`read_section · 5 points · enter sends`, with what a call the ledger cannot pay would do."""
        session = self.session
        tool = session.tool
        if tool is None:
            return
        cost, left = session.caps.cost(tool), session.points_left
        text, style = f" {tool} · {counted(cost, 'point')}", Style(bold=True)
        refusal = refused(cost, left)
        if refusal:  # said before it is sent: refused at no cost, but a turn
            text += f" · {left} left: refused"
            style += theme_style(self.app, "warning")
        hints = title_hints(self.query_one("#play-form").has_focus, refusal)
        self.query_one("#form-title", FormTitle).show(text, hints, style)

    def _focus_next_empty(self, tool: str, start: str) -> None:
        """Focus the first field of `tool`'s form from `start` on that still needs a value; with none, the form
        (enter sends)."""
        target = first_empty(tool, start, self._values(tool))
        (self.query_one("#play-form") if target is None else self.query_one(f"#arg-{target}", Input)).focus()
        self.call_after_refresh(self._show_form_title)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if self.session.tool is None or not (event.input.id or "").startswith("arg-"):
            return
        event.stop()
        self.action_send_form(from_field=event.input.id)

    def action_send_form(self, from_field: str | None = None) -> None:
        """Enter in the form: on to the first required argument still empty (an empty argument is never sent by
        accident), else send."""
        tool = self.session.tool
        if tool is None:
            return
        problem = unsent(tool, self._values(tool), (from_field or "").removeprefix("arg-"))
        if problem is not None:
            self.query_one(f"#arg-{problem.field}", Input).focus()
            if problem.notice:
                self.notify(problem.notice, severity="warning", timeout=3)
            return
        self._send(tool)

    def _send(self, tool: str) -> None:
        if not self.session.my_turn:
            self.notify("not your turn yet", severity="warning", timeout=2)
            return
        args = call_args(tool, self._values(tool))
        paper = unseen_paper(args, self.session.seen.papers)
        if paper is None:
            self._dispatch(tool, args)
            return
        from workbench.tui.screens.dialogs import ConfirmModal

        def answer(yes: bool | None) -> None:
            if yes and self.session.tool == tool:
                self._dispatch(tool, args)

        cost = self.session.caps.cost(tool)
        self.app.push_screen(
            ConfirmModal(
                f"'{one_line(paper, 60)}' matches no paper seen so far. Sent as it is, {tool} is charged "
                f"{counted(cost, 'point')} and a turn even if no such paper exists.",
                "Send",
                "Send an unseen paper id?",
            ),
            answer,
        )

    def _dispatch(self, tool: str, args: dict[str, str | int]) -> None:
        """The call goes to the episode, whose rules apply from here on."""
        if not self.session.my_turn:
            self.notify("not your turn yet", severity="warning", timeout=2)
            return
        self._close_form()
        self.session.sent(tool)
        self.session.agent.send(tool, args)
        self._show_palette()

    # ------------------------------------------------------------ lists

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """Enter on a paper or a section picks it, and only that: it fills the field of an open form that takes it
        (the focus moves on to what is still empty, or to the form), else it is remembered for the next form.
        Nothing is sent and no form opens from a list."""
        event.stop()
        listed = LISTS.get(event.option_list.id or "")
        if listed is None:
            return
        picked = event.option_id or ""
        pick = self.session.pick(listed, picked)
        if pick is None:
            return
        if pick.sections_changed:
            self._show_sections()
        tool = self.session.tool
        if pick.fills and tool is not None:
            for name, value in pick.fills.items():
                self.query_one(f"#arg-{name}", Input).value = value
            self._focus_next_empty(tool, FIELDS[tool][0])
        elif pick.field == "paper_id":
            self.notify(
                f"paper picked: {one_line(self.session.seen.papers.get(picked, ''), 40)} · 1–5 use it", timeout=2
            )
        else:
            self.notify(f"section ({one_line(picked, 12)}) picked · 5 reads it", timeout=2)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a reveal row: step through that trajectory."""
        from workbench.tui.screens.stepper import StepperScreen

        event.stop()
        row = next((r for r in self.session.reveal if str(r["id"]) == event.row_key.value), None)
        if row is not None:
            self.app.push_screen(StepperScreen(self.app.store.run_by_id(row["run_id"]), [row["id"]]))

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.session.allows(action)  # not tied to each turn: the footer is rebuilt only when the state changes

    def action_tool(self, tool: str) -> None:
        if self.session.my_turn:
            self._open_form(tool)
        else:
            self.notify("the episode is still answering your last call", timeout=1.5)

    async def action_focus(self, widget_id: str) -> None:
        target = self.query_one(f"#{widget_id}")
        if widget_id != "play-item" and self.has_class("-deciding"):  # the lists are hidden while deciding
            self.remove_class("-deciding", "-answering")
            self.call_after_refresh(target.focus)
        else:
            target.focus()

    def action_pick_from_list(self) -> None:
        """↓ in the paper or section field moves to the list it can be picked from (the fields have no ↓ of
        their own; the lists and the transcript keep theirs, so this fires only from a field)."""
        focused = getattr(self.focused, "id", None) or ""
        field = "form" if focused == "play-form" else focused.removeprefix("arg-")
        target = list_below(field, self.session.tool)
        if target:
            self.query_one(f"#play-{target}").focus()

    def action_next_item(self) -> None:
        if self.session.next_item():
            self.refresh_bindings()
            self._next.set()
            self._show_title()

    def action_leaderboard(self) -> None:
        from workbench.tui.screens.leaderboard import LeaderboardScreen

        self.app.push_screen(LeaderboardScreen(self.session.fingerprint))

    def action_escape(self) -> None:
        if self.session.tool is not None:
            self._close_form()
            return
        if self.has_class("-deciding"):  # back from the item in full to the transcript, not out of the item
            self.query_one(TranscriptView).focus()
            return
        if self.session.state != "playing":
            self._leave()
            return
        from workbench.tui.screens.dialogs import LeaveModal

        def answer(way: str | None) -> None:
            if way == "item":
                self._leave_item()
            elif way == "session":
                self._leave()

        next_label = "Next item" if self.session.others_left else None
        self.app.push_screen(LeaveModal(self.session.leave_question(), next_label, "Leave the item"), answer)

    def _leave(self) -> None:
        """Cancel the session (an item in play stays unfinished in the store) and go back."""
        self.session.leave()
        self.workers.cancel_group(self, "play")
        self.app.pop_screen()

    def _leave_item(self) -> None:
        """Leave the item in play for the next one: the session's worker is cancelled (the item is kept as an
        abandoned attempt) and started again once it has ended, leaving out the items left midway."""
        self.session.leave_item()
        self.refresh_bindings()
        self._show_title()
        ended = self.workers.cancel_group(self, "play")
        self.run_worker(self._resume(ended), name="play-session", group="play", exit_on_error=False)

    async def _resume(self, ended: list) -> None:
        """The session again, once the cancelled worker has let go of the run (its lock, its store)."""
        for worker in ended:
            with contextlib.suppress(WorkerCancelled):
                await worker.wait()
        await self._session()


def reveal_cells(row: RevealRow) -> list[Text]:
    """One stored run on the item: who, whether right and the answer (or how it ended), points, turns, recall."""
    return [
        Text("you" if row["you"] else ""),
        Text(clip(sanitize(row["run"]), 18)),
        Text(clip(sanitize(reveal_who(row)), 14)),
        Text(result_text(row)),
        Text(str(row.get("points_used") or 0), justify="right"),
        Text(str(row.get("turns") or 0), justify="right"),
        Text(reveal_recall(row)),
    ]


def result_text(row: RevealRow) -> str:
    """`✓ B`, `✗ C`, or for an episode that ended without an answer `✗ — budget` (its termination)."""
    if row.get("termination") != "answer":
        return f"✗ — {sanitize(row.get('termination') or '?')}"
    return f"{'✓' if row.get('correct') else '✗'} {clip(sanitize(row.get('answer') or '—'), 4)}"
