"""The play screen's plain models, without a terminal: the session's course item by item (`forms.play`), the
argument form (`forms.tool_call`) and what the player has seen (`forms.seen`).

A `Person` plays a real session (the runner, the store, the person's agent) through the model exactly as the play
screen drives it, keys replaced by calls of the model: the screen's rules are checked here, and the Pilot tests
(tests/tui/test_play*.py) keep what only the screen shows (focus, fields, lists, tables, dialogs, keys)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from sandbox.ledger import INSUFFICIENT
from workbench.service.agents import human_agent
from workbench.service.datasets import open_dataset
from workbench.service.play import SessionPlan, SessionRequest, plan_session, reveal_rows, session_runner
from workbench.service.stores import open_store
from workbench.tui.forms import play as play_model
from workbench.tui.forms.play import PlaySession, clock_text, reveal_recall, reveal_who
from workbench.tui.forms.seen import Seen
from workbench.tui.forms.tool_call import (
    ACCEPTS,
    ANSWER_RULE,
    FIELDS,
    PLACEHOLDERS,
    THINK_PLACEHOLDER,
    TOOLS,
    Unsent,
    call_args,
    first_empty,
    list_below,
    opened_values,
    placeholder,
    refused,
    title_hints,
    unseen_paper,
    unsent,
)


class Person:
    """A person's play session driven through `PlaySession` as the play screen drives it: the runner's agent
    factory begins each item on the model (the next one once the person leaves the reveal), its events go to the
    model, and each call is made from the form the model opens."""

    def __init__(self, store_path: Path, cache: Path, ids: list[str], player: str = "ana"):
        self.corpus, _ = open_dataset("builtin", cache)
        self.store = open_store(store_path)
        self.session = PlaySession(SessionRequest(player=player, dataset="builtin", mode="ids", ids=tuple(ids)))
        self.changes: list[str | None] = []  # what each step changed in the lists
        self.began: asyncio.Queue = asyncio.Queue()
        self.ended = asyncio.Event()
        self.next = asyncio.Event()

    async def factory(self, item, replicate: int, attempt: int):
        session = self.session
        if session.waits_for_the_person:
            await self.next.wait()
        self.next.clear()
        agent = human_agent(session.request.player, on_turn=None)
        session.begin(item, agent)
        self.ended.clear()
        await self.began.put(agent)
        return agent

    def on_event(self, event) -> None:
        session = self.session
        if not session.heard(event.done, event.planned):
            return
        if event.kind == "step":
            self.changes.append(session.take_step(event.step))
        elif event.kind == "trajectory":
            assert session.fingerprint is not None
            session.answered(event.trajectory, reveal_rows(self.store, session.fingerprint, event.item_id, self.name))
            self.ended.set()
        elif event.kind == "finished":
            session.finish()

    def start(self) -> asyncio.Task:
        session = self.session
        session.plan = plan_session(session.request, self.corpus, self.store)
        runner = session_runner(session.request, self.corpus, self.store, self.factory, self.on_event, session.plan)
        session.caps, session.fingerprint, self.name = runner.caps, self.corpus.fingerprint, runner.spec.name
        self.run = asyncio.get_running_loop().create_task(runner.run())
        return self.run

    async def item(self) -> None:
        """Until the next item waits for the person's first call."""
        agent = await self.began.get()
        await agent.turn()

    async def call(self, tool: str, **typed: str) -> None:
        """Open `tool`'s form with the fields `typed`, send what it holds, and wait for the episode's answer."""
        session = self.session
        values = session.open_form(tool, typed)
        assert unsent(tool, values) is None, values
        session.sent(tool)
        session.agent.send(tool, call_args(tool, values))
        turn = asyncio.ensure_future(session.agent.turn())
        ended = asyncio.ensure_future(self.ended.wait())
        await asyncio.wait([turn, ended], return_when=asyncio.FIRST_COMPLETED)
        for waiting in (turn, ended):
            waiting.cancel()

    async def close(self) -> None:
        """The session stopped (as leaving the screen stops it, when a test failed midway), then the store closed."""
        run = getattr(self, "run", None)
        if run is not None and not run.done():
            run.cancel()
            await asyncio.wait([run])
        self.store.close()
        self.corpus.close()


@pytest.fixture
def frozen(monkeypatch) -> list[float]:
    """The item clock, set by the test."""
    now = [100.0]
    monkeypatch.setattr(play_model, "clock", lambda: now[0])
    return now


# ---------------------------------------------------------------- a session's course


async def test_a_session_plays_item_by_item_through_the_model(tmp_path, shared_cache, frozen):
    person = Person(tmp_path / "store.sqlite", shared_cache, ["st_0001", "st_0002"])
    session = person.session
    assert session.state == "loading" and session.title() == " Play · opening builtin… · human-ana-builtin (human:ana)"
    try:
        run = person.start()
        await person.item()
        item = session.item
        assert item.id == "st_0001" and session.state == "playing" and session.my_turn
        kind = "multi-target" if item.kind == "mt" else "single-target"
        assert session.title() == (
            f" Play · st_0001 {kind} d{item.depth} · item 1 of 2 · ⏱ 00:00 · human-ana-builtin (human:ana)"
        )
        assert session.allows("tool") and not session.allows("next_item") and session.ticking
        assert list(session.seen.papers) == [item.seed_paper_id] and session.current_paper == item.seed_paper_id
        assert session.points_left == session.caps.budget == 30
        assert "You have made no tool call" in session.leave_question()

        await person.call("list_sections")  # the paper id is filled in: the seed
        assert person.changes == [None, "lists"]  # the person's turn, then the tool's result: sections seen
        seed = item.seed_paper_id
        assert [alias for alias, _ in session.seen.sections[seed]][:3] == ["A", "B", "C"]
        title, sections = session.current_sections()
        assert title == session.seen.papers[seed] and sections == session.seen.sections[seed]
        assert session.aliases("") == [alias for alias, _ in sections] and session.aliases("no-such") == []
        assert "marked 'resumed' (you have seen tool results)" in session.leave_question()

        pick = session.pick("sections", "B")  # a pick only selects: no form open, it is kept for the next one
        assert pick is not None and (pick.field, pick.fills) == ("section", {}) and session.tool is None
        assert session.picked_section == (seed, "B")
        values = session.open_form("read_section", {})
        assert values == {"paper_id": seed, "section": "B"} and first_empty("read_section", "paper_id", values) is None
        session.close_form()
        await person.call("read_section")
        assert session.steps[-1].tool_args == {"paper_id": seed, "section": "B"} and session.steps[-1].status == "ok"
        assert session.picked_section is None  # read once: the next read form asks for a section
        assert first_empty("read_section", "paper_id", session.open_form("read_section", {})) == "section"
        session.close_form()
        assert session.points_left == 30 - 1 - 5

        await person.call("get_paper_info", paper_id="zzz")  # sent as the player confirmed it: not found
        assert session.steps[-1].status != "ok" and session.current_paper == seed  # not the current paper
        assert session.open_form("list_sections", {}) == {"paper_id": seed}
        session.close_form()

        await person.call("get_references")  # more papers seen: the list grows
        assert person.changes[-1] == "lists" and len(session.seen.papers) > 1
        other = list(session.seen.papers)[1]
        pick = session.pick("papers", other)
        assert pick is not None and pick.sections_changed and pick.fills == {} and session.current_paper == other
        assert session.current_sections() == (session.seen.papers[other], [])  # no sections listed for it yet
        session.open_form("list_sections", {})
        pick = session.pick("papers", seed)  # with a form open that takes it, the pick fills its field
        assert pick is not None and pick.fills == {"paper_id": seed} and session.tool == "list_sections"
        session.close_form()

        assert unsent("submit_answer", {"answer": "", "reasoning": ""}, "answer") == Unsent("answer", ANSWER_RULE)
        gold = "ABCD"[item.correct_index]
        frozen[0] = 130.0
        await person.call("submit_answer", answer=gold.lower())
        assert session.steps[-1].tool_args == {"answer": gold, "reasoning": ""}
        assert session.state == "reveal" and session.revealed and session.gold_shown and session.tool is None
        assert session.trajectory.correct and session.elapsed() == 30.0
        frozen[0] = 200.0  # the item's clock stopped with its answer
        assert session.elapsed() == 30.0 and session.title().endswith(
            "⏱ 00:30 (stopped) · human-ana-builtin (human:ana)"
        )
        assert session.allows("next_item") and not session.allows("tool") and session.waits_for_the_person
        (mine,) = [row for row in session.reveal if row["you"]]
        assert reveal_who(mine) == "human:ana" and mine["run"] == "human-ana-builtin"
        assert reveal_recall(mine) == ("●" if mine["paper_recall"] else "○") + " " + (
            "●" if mine["section_recall"] else "○"
        )
        assert session.reveal_hint() == " n next item · enter steps through a row"
        assert session.mark() is None and session.mark_notice() is None and session.reveal_mark() is None

        assert session.next_item() and session.state == "starting" and not session.next_item()
        assert session.title() == " Play · next item… · human-ana-builtin (human:ana)"
        person.next.set()
        await person.item()
        assert session.item.id == "st_0002" and session.steps == [] and session.trajectory is None
        assert " · item 2 of 2 · ⏱ 00:00 · " in session.title()
        await person.call("submit_answer", answer="a")
        await run
        assert session.state == "finished" and not session.allows("next_item") and session.waits_for_the_person
        assert session.reveal_hint() == " all 2/2 played · enter steps through a row"
        assert session.title() == f" Play · st_0002 {_kind(session.item)} d{session.item.depth} · item 2 of 2 · " + (
            "⏱ 00:00 (stopped) · human-ana-builtin (human:ana)"
        )
    finally:
        await person.close()


def _kind(item) -> str:
    return "multi-target" if item.kind == "mt" else "single-target"


async def test_a_call_the_points_cannot_pay_is_said_refused_before_it_is_sent(tmp_path, shared_cache):
    person = Person(tmp_path / "store.sqlite", shared_cache, ["st_0001"])
    session = person.session
    try:
        run = person.start()
        await person.item()
        await person.call("list_sections")
        for section in "ABCDE":
            await person.call("read_section", section=section)
        left = session.points_left
        assert left == 4 and refused(session.caps.cost("read_section"), left)
        assert not refused(session.caps.cost("get_paper_info"), left) and not refused(99, None)
        await person.call("read_section", section="A")  # sent anyway: the ledger refuses it, at no cost
        rejection = session.steps[-1]
        assert rejection.status == "rejected"
        assert rejection.text == INSUFFICIENT.format(left=4, name="read_section", cost=5)
        assert session.points_left == 4 and person.changes[-1] is None  # nothing new seen
        await person.call("submit_answer", answer="a")
        await run
    finally:
        await person.close()


def test_the_form_title_s_hints_leave_out_enter_for_a_refused_call():
    assert title_hints(False, False) == ["enter sends", "esc cancels"]
    assert title_hints(True, False) == ["enter sends", "tab edits", "esc cancels"]
    assert title_hints(True, True) == ["tab edits", "esc cancels"]


def test_a_marked_play_is_told_as_it_starts_and_on_its_reveal(shared_cache):
    corpus, _ = open_dataset("builtin", shared_cache)
    try:
        item = corpus.items[0]
    finally:
        corpus.close()
    session = PlaySession(SessionRequest(player="ana", ids=(item.id,)))
    session.plan = SessionPlan((item.id,), {}, {}, {item.id: "human-ana-builtin"})
    session.begin(item, human_agent("ana", on_turn=None))
    assert session.mark_notice() == (
        f"{item.id}: resumed after seeing tool results (left midway in 'human-ana-builtin'). "
        "This play is marked 'resumed' and left out of the leaderboard."
    )
    assert session.reveal_mark() == (
        " ⚠ resumed after seeing tool results (left midway in 'human-ana-builtin'): marked 'resumed', "
        "left out of the leaderboard"
    )
    session.plan = SessionPlan((item.id,), {}, {item.id: "human-ana-first"}, {})
    assert "replayed: the gold answer was shown before (finished in 'human-ana-first')" in session.mark_notice()


def test_a_session_that_cannot_be_played_or_is_left_says_so():
    session = PlaySession(SessionRequest(player="bo", dataset="builtin", name="bo-2"))
    assert session.pick("papers", "x") is None  # nothing is picked outside an item in play
    session.fail()
    assert session.title() == " Play · cannot play · bo-2 (human:bo)" and not session.allows("tool")
    assert not session.next_item() and not session.finish()
    session.leave()
    assert not session.heard(3, 5) and (session.done, session.planned) == (0, 0)  # the runner only records it
    assert session.points_left is None and session.elapsed() == 0.0 and not session.my_turn


def test_clock_text():
    assert [clock_text(s) for s in (0, 59.9, 61, 3600, -5)] == ["00:00", "00:59", "01:01", "60:00", "00:00"]


# ---------------------------------------------------------------- the argument form


def test_each_tool_s_form_asks_for_its_required_fields_and_sends_typed_arguments():
    assert {tool: fields for _, tool, _, fields in TOOLS} == FIELDS
    assert unsent("search_papers", {"query": "  "}) == Unsent("query")
    assert unsent("search_papers", {"query": "graphs"}) is None  # top_k is optional
    assert call_args("search_papers", {"query": " graphs ", "top_k": ""}) == {"query": "graphs"}
    assert call_args("search_papers", {"query": "graphs", "top_k": "7"}) == {"query": "graphs", "top_k": 7}
    assert unsent("read_section", {"paper_id": "p", "section": ""}) == Unsent("section")
    assert unsent("submit_answer", {"answer": "", "reasoning": "r"}, "reasoning") == Unsent("answer")  # no notice
    assert unsent("submit_answer", {"answer": "c"}) is None  # the reasoning is optional (sent as "")
    assert call_args("submit_answer", {"answer": "c"}) == {"answer": "C", "reasoning": ""}
    assert first_empty("read_section", "paper_id", {"paper_id": "p", "section": ""}) == "section"
    assert first_empty("read_section", "section", {"paper_id": "", "section": "A"}) is None


def test_the_form_opens_with_the_paper_and_a_section_picked_for_it():
    assert opened_values("read_section", "p1", ("p1", "C"), {}) == {"paper_id": "p1", "section": "C"}
    assert opened_values("read_section", "p2", ("p1", "C"), {}) == {"paper_id": "p2", "section": ""}
    assert opened_values("read_section", "p1", None, {"section": "D"}) == {"paper_id": "p1", "section": "D"}
    assert opened_values("think", "p1", None, {}) == {"reasoning": ""}
    assert opened_values("get_references", None, None, {}) == {"paper_id": ""}


def test_an_id_no_paper_seen_has_is_asked_about_first():
    seen = {"p1": "A paper"}
    assert unseen_paper({"paper_id": "zzz"}, seen) == "zzz"
    assert unseen_paper({"paper_id": "p1"}, seen) is None
    assert unseen_paper({"query": "x"}, seen) is None  # no paper in the call


def test_fields_accept_only_what_the_call_takes_and_their_hints_fit_at_80_columns():
    top_k, answer = ACCEPTS["top_k"], ACCEPTS["answer"]
    assert [bool(re.fullmatch(top_k.pattern, v)) for v in ("", "7", "10", "100", "x")] == [True] * 3 + [False] * 2
    assert [bool(re.fullmatch(answer.pattern, v)) for v in ("", "a", "D", "E", "ab")] == [True] * 3 + [False] * 2
    assert answer.max_length == 1 and top_k.max_length == 0
    assert all(len(p) < 46 for p in [*PLACEHOLDERS.values(), THINK_PLACEHOLDER])
    assert placeholder("think", "reasoning") == THINK_PLACEHOLDER
    assert placeholder("submit_answer", "reasoning") == PLACEHOLDERS["reasoning"]


def test_down_from_a_field_goes_to_the_list_it_is_picked_from():
    assert list_below("paper_id", "get_paper_info") == "papers"
    assert list_below("section", "read_section") == "sections"
    assert list_below("form", "read_section") == "sections"  # the filled-in form: its last list field
    assert list_below("form", "list_sections") == "papers"
    assert list_below("form", None) is None and list_below("query", "search_papers") is None
    assert list_below(None, None) is None


def test_what_was_seen_starts_with_the_seed_and_keeps_a_title_once_known():
    seen = Seen.from_seed("s1", "Seed paper")
    seen.add_paper("p2")
    seen.add_paper("s1")  # listed again without a title: the title stays
    seen.add_paper("p2", "Second")
    assert seen.papers == {"s1": "Seed paper", "p2": "Second"}


def test_the_reveal_names_who_made_each_stored_run():
    row = {"agent": "llm", "model": "openai/m", "ablation": "no-search", "paper_recall": 1, "section_recall": 0}
    assert reveal_who(row) == "llm openai/m · no-search" and reveal_recall(row) == "● ○"
    row = {"agent": "heuristic", "model": None, "ablation": "full", "paper_recall": None, "section_recall": 1}
    assert reveal_who(row) == "heuristic" and reveal_recall(row) == "○ ●"
