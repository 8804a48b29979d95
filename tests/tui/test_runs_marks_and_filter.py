"""The runs list's marks and filter (issue 44 §4, §6): any number of runs marked, Compare taking two and saying so
when more are marked, the panel taking them all; Enter and ↓ in the filter going to the list."""

from __future__ import annotations

from textual.widgets import DataTable, Input
from tui_support import make_app, settle

from workbench.tui.screens.panel import PanelScreen
from workbench.tui.screens.runs import RunsScreen

SIZE = (120, 36)


def marked_rows(app) -> list[str]:
    """The names drawn with the mark (●) in the NAME column, top to bottom."""
    table = app.screen.query_one(DataTable)
    names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
    return [n.removeprefix("● ") for n in names if n.startswith("● ")]


async def test_a_third_mark_keeps_the_first_and_compare_says_it_takes_two(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("space", "down", "space", "down", "space")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        assert screen.marked == ["heur-s0", "oracle-nosearch", "scripted-[b]llm[/b]"]
        assert marked_rows(app) == ["heur-s0", "oracle-nosearch", "scripted-[b]llm[/b]"]
        assert "3 marked" in str(screen.query_one("#runs-title").render())

        await pilot.press("c")
        await settle(pilot, app)
        assert isinstance(app.screen, RunsScreen)  # no comparison of two of the three, picked silently
        [toast] = [n.message for n in app._notifications]
        assert "3 runs are marked" in toast and "two" in toast

        await pilot.press("p")
        await settle(pilot, app)
        assert isinstance(app.screen, PanelScreen)
        assert app.screen.names == ["heur-s0", "oracle-nosearch", "scripted-[b]llm[/b]"]


async def test_unmarking_down_to_two_compares_those_two(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("space", "down", "space", "down", "space", "up", "space")  # oracle-nosearch unmarked
        await settle(pilot, app)
        assert app.screen.marked == ["heur-s0", "scripted-[b]llm[/b]"]
        await pilot.press("c")
        await settle(pilot, app)
        assert (app.screen.a, app.screen.b) == ("heur-s0", "scripted-[b]llm[/b]")


async def test_down_and_enter_in_the_filter_go_to_the_list(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        table = app.screen.query_one(DataTable)
        for key in ("down", "enter"):
            await pilot.press("slash", "r", "a")  # random-s1 and oracle-nosearch (its "nosearch" and "oracle")
            await settle(pilot, app)
            assert isinstance(app.focused, Input)
            await pilot.press(key)
            await settle(pilot, app)
            assert app.focused is table, key
            assert app.screen.current_name() == app.screen.shown[0]
            await pilot.press("escape")  # clears the filter
            await settle(pilot, app)


async def test_down_in_the_trajectory_filter_goes_to_the_list(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter")  # heur-s0's trajectories
        await settle(pilot, app)
        await pilot.press("slash", "s", "t")
        await settle(pilot, app)
        assert isinstance(app.focused, Input)
        await pilot.press("down")
        await settle(pilot, app)
        assert app.focused is app.screen.query_one("#trajectory-table")
