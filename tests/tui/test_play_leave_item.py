"""Leaving a half-played item is not leaving the session (issue 44 §14): `y` leaves the item (what was seen kept
as an abandoned attempt) and the next item starts; leaving the session is its own choice (`l`); re-opening the
session plays the item left midway again, marked `resumed`."""

from __future__ import annotations

from play_support import act, start, until
from tui_support import make_app

from workbench.tui.screens.play import PlayScreen
from workbench.tui.screens.runs import RunsScreen

SIZE = (120, 36)
ITEMS = ["st_0001", "st_0002", "st_0003"]
QUERY = "SELECT item_id, status, final, error_kind FROM trajectories WHERE run_id = ? ORDER BY id"


async def test_y_leaves_the_item_for_the_next_one_and_l_leaves_the_session(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ITEMS)
        assert screen.session.item.id == "st_0001"
        await act(pilot, screen, "1", "enter")  # a tool result seen
        await pilot.press("escape")  # asked first: the item, or the session
        await pilot.pause()
        dialog = str(app.screen.query_one(".dialog-message").render())
        assert "st_0001" in dialog and "next item" in dialog.lower()
        await pilot.press("y")
        await until(
            pilot,
            lambda: (
                screen.session.item is not None
                and screen.session.item.id == "st_0002"
                and screen.session.agent is not None
                and screen.session.agent.waiting
            ),
        )
        assert app.screen is screen and isinstance(screen, PlayScreen)
        assert screen.session.steps == [] and screen.query_one("#meter-points").reading[0] == 0
        run = app.store.run("human-ana-builtin")
        rows = [tuple(r) for r in app.store.conn.execute(QUERY, (run["id"],))]
        assert ("st_0001", "done", 0, "abandoned") in rows  # what was seen of st_0001 is kept

        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("l")  # leave the session
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await until(pilot, lambda: app.store.run("human-ana-builtin")["status"] == "interrupted")

        screen = await start(pilot, app, ITEMS)  # re-opened: the item left midway comes back, marked
        assert screen.session.item.id == "st_0001"
        assert screen.session.mark() is not None and screen.session.mark()[0] == "resumed"


async def test_leaving_the_last_item_left_leaves_the_session(seeded, monkeypatch):
    """No item after it: the dialog offers only the session (no `y` that would end it anyway)."""
    monkeypatch.setenv("USER", "bo")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await act(pilot, screen, "1", "enter")
        await pilot.press("escape")
        await pilot.pause()
        assert "last item" in str(app.screen.query_one(".dialog-message").render())
        await pilot.press("y")  # nothing to go on to: y does nothing here
        await pilot.pause()
        assert not isinstance(app.screen, (PlayScreen, RunsScreen))  # still asking
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
