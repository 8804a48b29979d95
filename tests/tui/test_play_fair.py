"""Play that is fair to the player: no point is lost to the interface. Enter takes the completion shown, an unseen
paper id is confirmed before it is charged, a pick from a list only selects, a tool key never types into a field the
form filled in, an unaffordable tool says so before it is sent, the setup never lands on "nothing left to play", and
"visited N papers" counts papers that exist. The flow that cost a careful player points is replayed from a fresh
store and spends exactly what the player meant to spend."""

from __future__ import annotations

from play_support import act, start, until
from textual.widgets import Button, Input, OptionList, Select
from tui_support import make_app, settle

from workbench.tui.screens.dialogs import ConfirmModal
from workbench.tui.screens.play import PlayScreen
from workbench.tui.widgets.itempane import touched
from workbench.tui.widgets.toolform import tool_palette
from workbench.tui.widgets.transcript import as_record

SIZE = (120, 36)


def calls(screen: PlayScreen) -> list[tuple[str, dict, str, int]]:
    """Every tool call of the item so far: (tool, arguments, status, points used after it)."""
    return [
        (s.tool_name, s.tool_args, s.status, s.ledger.points_used) for s in screen.session.steps if s.kind == "tool"
    ]


async def type_prefix(pilot, screen: PlayScreen, field: str, prefix: str, completion: str) -> None:
    """Tab from the filled-in form into `field`, type `prefix` over its value, and wait for the completion shown."""
    box = screen.query_one(f"#arg-{field}", Input)
    while screen.focused is not box:
        await pilot.press("tab")
    await pilot.press(*prefix)
    await until(pilot, lambda: box.value == prefix and box._suggestion == completion)  # drawn faded after the value


async def test_the_careful_player_s_flow_from_a_fresh_store_spends_exactly_what_was_meant(monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()  # no store yet: the session creates it
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        seed = screen.session.item.seed_paper_id
        await act(pilot, screen, "2", "enter")  # the seed's references: 1 point
        other = next(
            p
            for p in screen.session.seen.papers
            if p != seed and not any(q != p and q.startswith(p[:4]) for q in screen.session.seen.papers)
        )

        # 1. enter on a paper field with a completion in view sends the completion, not the typed prefix
        await pilot.press("4")
        assert screen.focused is screen.query_one("#play-form")  # filled in: the form holds the focus
        await type_prefix(pilot, screen, "paper_id", other[:4], other)
        await act(pilot, screen, "enter")
        assert calls(screen)[-1] == ("list_sections", {"paper_id": other}, "ok", 2)

        # 2. a pick from the section list only selects; a tool key never types into the filled-in form
        await pilot.press("a", "down", "enter")
        alias = screen.session.seen.sections[other][1][0]
        assert screen.session.tool is None and screen.session.picked_section == (other, alias)
        await pilot.press("5")
        assert screen.query_one("#arg-section", Input).value == alias
        await pilot.press("5")  # the next tool key, pressed by habit: the same form again, the alias kept
        assert screen.session.tool == "read_section" and screen.query_one("#arg-section", Input).value == alias
        await act(pilot, screen, "enter")
        assert calls(screen)[-1] == ("read_section", {"paper_id": other, "section": alias}, "ok", 7)
        await pilot.press("5")  # a picked section is read once: the next read form asks for one
        assert screen.query_one("#arg-section", Input).value == "" and screen.focused.id == "arg-section"
        await pilot.press("escape")

        # 3. an id that matches no paper seen so far asks first; no sends nothing
        await pilot.press("1")
        await type_prefix(pilot, screen, "paper_id", "b00a", "")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, ConfirmModal))
        assert "matches no paper seen so far" in app.screen.message
        await pilot.press("n")
        await until(pilot, lambda: app.screen is screen)
        assert len(calls(screen)) == 3 and screen.session.agent.waiting and screen.session.tool == "get_paper_info"
        await pilot.press("escape")

        await act(pilot, screen, "t", *"the method section says it", "enter")
        await act(pilot, screen, "s", "ABCD"[screen.session.item.correct_index], "enter")
        await until(pilot, lambda: screen.session.state == "finished")
        assert [c[:3] for c in calls(screen)] == [
            ("get_references", {"paper_id": seed}, "ok"),
            ("list_sections", {"paper_id": other}, "ok"),
            ("read_section", {"paper_id": other, "section": alias}, "ok"),
            ("think", {"reasoning": "the method section says it"}, "ok"),
            ("submit_answer", {"answer": "ABCD"[screen.session.item.correct_index], "reasoning": ""}, "ok"),
        ]
        (stored,) = app.store.trajectories(app.store.run("human-ana-builtin")["id"])
        assert (stored["points_used"], stored["turns"], stored["termination"]) == (7, 5, "answer")


async def test_an_unseen_id_is_charged_only_once_confirmed_and_is_not_a_visited_paper(monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await pilot.press("1")
        await type_prefix(pilot, screen, "paper_id", "zzz", "")
        await act(pilot, screen, "enter", "y")  # the agent's rules once sent: not found, 1 point, a turn
        assert calls(screen) == [("get_paper_info", {"paper_id": "zzz"}, "not_found", 1)]
        await act(pilot, screen, "1", "enter")  # the seed, which exists
        papers, _ = touched([as_record(s) for s in screen.session.steps])
        assert papers == {screen.session.item.seed_paper_id}
        await act(pilot, screen, "s", "a", "enter")
        await until(pilot, lambda: screen.session.state == "finished")
        assert "visited 1 paper · 0 reads" in str(screen.query_one("#play-item-text").render())


async def test_a_paper_picked_from_the_list_only_selects_like_a_section(monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        seed = screen.session.item.seed_paper_id
        await act(pilot, screen, "4", "enter")
        sections = screen.query_one("#play-sections", OptionList)
        await pilot.press("a", "down", "down")
        assert sections.highlighted == 2
        await act(pilot, screen, "2", "enter")
        other = list(screen.session.seen.papers)[1]
        await pilot.press("p", "down", "enter")  # picks the second paper: no form opens, nothing is sent
        assert screen.session.tool is None and screen.session.current_paper == other and len(calls(screen)) == 2
        await act(pilot, screen, "4", "enter")  # its sections: the list starts at the top
        assert calls(screen)[-1][:3] == ("list_sections", {"paper_id": other}, "ok")
        assert (
            sections.highlighted == 0
            and sections.get_option_at_index(0).id == screen.session.seen.sections[other][0][0]
        )
        await pilot.press("4")  # with a form open, a pick fills its field and the focus goes back to the form
        await pilot.press("p", "up", "enter")  # the seed, first in the list
        assert screen.query_one("#arg-paper_id", Input).value == seed and screen.focused.id == "play-form"


async def test_a_tool_the_points_cannot_pay_is_greyed_with_its_cost_before_it_is_sent(monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await act(pilot, screen, "4", "enter")
        for section in "ABCDE":
            await act(pilot, screen, "5", section, "enter")
        assert screen.session.points_left == 4
        palette = tool_palette(screen.session.caps, None, True, 0, screen.session.points_left)
        struck = {palette.plain[span.start : span.end] for span in palette.spans if "strike" in str(span.style)}
        assert struck == {"read·5"}  # greyed, its cost shown; the others as usual
        await pilot.press("5")
        title = str(screen.query_one("#form-title").render())
        assert "read_section · 5 points · 4 left: refused" in title and "enter sends" not in title
        await pilot.press("escape", "1")
        assert "4 left" not in str(screen.query_one("#form-title").render())


async def test_changing_player_or_session_resets_the_items_to_a_random_sample(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001", "st_0002"])
        await act(pilot, screen, "1", "enter")
        await pilot.press("escape", "l")  # leave the session midway through st_0001: it has unfinished items
        await until(pilot, lambda: not isinstance(app.screen, PlayScreen))
        await settle(pilot, app)
        app.play_items("builtin")  # the session setup
        await settle(pilot, app)
        setup = app.screen
        mode = setup.query_one("#setup-mode", Select)
        assert mode.value == "continue"  # re-opening one's own session resumes it
        setup.query_one("#setup-player", Input).value = "bo"
        await settle(pilot, app)
        assert mode.value == "random" and setup.query_one("#row-random").display
        assert setup.query_one("#setup-count", Input).value == "5" and not setup.query_one("#start", Button).disabled
        mode.value = "continue"  # asked for anyway: refused before Start, not "nothing left to play" after it
        await settle(pilot, app)
        assert setup.query_one("#start", Button).disabled
        assert "has no unfinished items" in str(setup.query_one("#setup-messages").render())
        await pilot.press("ctrl+r")
        assert app.screen is setup
        setup.query_one("#setup-name", Input).value = "bo-second"
        await settle(pilot, app)
        assert mode.value == "random"
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.session.agent is not None)
        assert app.screen.session.request.session == "bo-second" and len(app.screen.session.plan.items) == 5


async def test_a_typed_alias_that_is_one_is_not_completed_into_a_longer_one():
    """Enter takes the completion shown, so none is shown for a value that is already a candidate: `A` stays `A`
    when `AB` is also an alias (and a paper id typed in full stays that id)."""
    from workbench.tui.widgets.seen import SeenSuggester

    suggest = SeenSuggester(lambda: ["AB", "A", "B"])
    assert await suggest.get_suggestion("a") is None
    assert await suggest.get_suggestion("") == "AB"
    assert await SeenSuggester(lambda: ["AB", "A"]).get_suggestion("b") is None
    assert await SeenSuggester(lambda: ["abc"]).get_suggestion("ab") == "abc"
