"""Snapshots of the play screen mid-item and of the reveal at 120×36 (update with `pytest --snapshot-update`).

The item timer is frozen, the player is `ana`, the store is the seeded one.
"""

from __future__ import annotations

import pytest
from play_support import act, answered, start, until
from tui_support import make_app

SIZE = (120, 36)


@pytest.fixture
def frozen(monkeypatch):
    monkeypatch.setenv("USER", "ana")
    monkeypatch.setattr("workbench.tui.forms.play.clock", lambda: 100.0)


def test_play_screen(snap_compare, seeded, frozen):
    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["st_0001"])
        await act(pilot, screen, "2", "enter")
        await act(pilot, screen, "4", "enter")
        await act(pilot, screen, "5", "C", "enter")
        await pilot.press("5")  # the read form open again: the paper id filled in, the section to type
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_reveal(snap_compare, seeded, frozen):
    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["st_0001"])
        await act(pilot, screen, "4", "enter")
        await act(pilot, screen, "s", "c", "enter")
        await until(pilot, lambda: screen.session.state == "finished")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


SMALL = (80, 24)


def test_setup_at_80x24(snap_compare, seeded, frozen):
    """The session setup fits: the fields scroll, the messages and both buttons stay in view."""

    async def run_before(pilot):
        await pilot.pause()
        pilot.app.play_items("builtin")
        await until(pilot, lambda: type(pilot.app.screen).__name__ == "PlaySetupScreen")
        await pilot.pause()
        screen = pilot.app.screen
        for button in ("#start", "#cancel"):
            region = screen.query_one(button).region
            assert region.bottom <= SMALL[1] and region.right <= SMALL[0]

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_play_screen_at_80x24(snap_compare, seeded, frozen):
    """The palette and the status footer wrap to two rows, the lists shrink, the options start in view."""

    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["st_0001"])
        await act(pilot, screen, "2", "enter")
        await act(pilot, screen, "4", "enter")
        await act(pilot, screen, "5", "C", "enter")
        await pilot.press("5")
        await pilot.pause()
        assert "Budget used: 7" in str(screen.query_one("#play-footer").render())
        assert screen.query_one("#play-footer").region.bottom <= SMALL[1] - 1
        assert screen.query_one("#play-palette").region.height == 2

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_answering_at_80x24(snap_compare, seeded, frozen):
    """The longest built-in question with the answer form open: the item takes the width, all four options and
    both answer fields in view (the transcript, meters and status come back with esc or a tool's form)."""

    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["mt_0016"])
        await act(pilot, screen, "1", "enter")
        await pilot.press("s")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


def test_reveal_at_80x24(snap_compare, seeded, frozen):
    """Narrow: the item above the table of runs, every column of the table in view."""

    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["st_0001"])
        await act(pilot, screen, "4", "enter")
        await act(pilot, screen, "s", "c", "enter")
        await until(pilot, lambda: screen.session.state == "finished")
        await pilot.pause()
        table = screen.query_one("#reveal-table")
        assert table.region.width == SMALL[0] and table.virtual_size.width <= SMALL[0]

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)


@pytest.fixture
def board(seeded, builtin_cache, frozen):
    """ana has answered the first five items (A, B, C, D, A): the scripted run covers two of them, so it is unranked.
    Answered through the play engine rather than the screen (test_play.py plays to the leaderboard through it)."""
    answered(
        seeded,
        builtin_cache,
        "ana",
        dict(zip(["st_0001", "st_0002", "mt_0001", "mt_0002", "st_0003"], "ABCDA", strict=True)),
    )


async def _board(pilot):
    """The leaderboard, opened as the palette opens it."""
    await pilot.pause()
    pilot.app.action_leaderboard()
    await until(pilot, lambda: type(pilot.app.screen).__name__ == "LeaderboardScreen")
    await pilot.pause()


def test_leaderboard(snap_compare, board):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_board)


def test_leaderboard_scrolled_right_at_80x24(snap_compare, board):
    """Scrolled to its last column, the rank, run and who columns stay in view."""

    async def run_before(pilot):
        await _board(pilot)
        table = pilot.app.screen.query_one("#leaderboard-table")
        table.scroll_end(animate=False, immediate=True)
        table.scroll_to(x=table.max_scroll_x, animate=False, immediate=True)
        await pilot.pause()
        assert table.scroll_x > 0 and table.fixed_columns == 3

    assert snap_compare(make_app(), terminal_size=SMALL, run_before=run_before)
