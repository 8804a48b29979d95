"""The Live screen's table keeps the row under the cursor on screen while a fast run rebuilds its rows (issue 44
§16): Enter follows the episode drawn under the cursor, not one scrolled out of sight."""

from __future__ import annotations

from types import SimpleNamespace

from tui_support import make_app

from sandbox.records import LedgerState, Step
from workbench.tui.monitor import RunMonitor
from workbench.tui.screens.live import LiveScreen


class FastRun:
    """A run's monitor fed by hand: episodes start and finish when the test says."""

    def __init__(self) -> None:
        self.monitor = RunMonitor("fast", {"budget": 30}, clock=lambda: 1.0)
        self.monitor.feed(SimpleNamespace(kind="started", done=0, planned=100, correct=0))
        self.done = 0

    def start(self, item: str) -> None:
        step = Step(
            index=0,
            turn=1,
            kind="tool",
            ledger=LedgerState(1, 1, 29, 10, 0),
            tool_name="list_sections",
            tool_args={"paper_id": item},
            text=f"sections of {item}",
            cost=1,
            status="ok",
        )
        self.monitor.feed(SimpleNamespace(kind="step", item_id=item, replicate=0, step=step))

    def finish(self, item: str) -> None:
        self.done += 1
        traj = SimpleNamespace(termination="answer", correct=True, error=None)
        self.monitor.feed(
            SimpleNamespace(
                kind="trajectory", item_id=item, replicate=0, trajectory=traj, done=self.done, planned=100, correct=1
            )
        )


def drawn_rows(live: LiveScreen) -> range:
    """The indices of the table's rows drawn now (the header takes the first line)."""
    table = live.query_one("#live-episodes")
    top = int(table.scroll_y)
    return range(top, top + table.scrollable_content_region.height - 1)


async def test_the_cursor_row_stays_drawn_as_rows_are_rebuilt_and_enter_follows_it():
    run = FastRun()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        live = LiveScreen(run.monitor)
        await app.push_screen(live)
        for k in range(8):
            run.start(f"w{k}")
        for k in range(12):
            run.start(f"f{k:02d}")
            run.finish(f"f{k:02d}")
        live.refresh_view()
        await pilot.pause()
        await pilot.press("down", "down", "down")
        await pilot.pause()
        table = live.query_one("#live-episodes")
        assert live.current_key() == ("w3", 0)
        for k in range(8):  # w3 and its neighbours finish: each lands above the older finished rows
            run.finish(f"w{k}")
            run.start(f"x{k}")
            live.refresh_view()  # a rebuild, as the 10 Hz timer does: the very next frame is drawn from this state
            assert live.current_key() == ("w3", 0)
            assert table.cursor_row in drawn_rows(live), (table.cursor_row, drawn_rows(live))
        await pilot.press("enter")
        await pilot.pause()
        assert live.follow_key == ("w3", 0)
        assert table.cursor_row in drawn_rows(live)


async def test_a_rebuild_keeps_the_rows_in_view_where_they_were():
    """Rows that come and go above the fold do not scroll the table back to its top (DataTable.clear did)."""
    run = FastRun()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        live = LiveScreen(run.monitor)
        await app.push_screen(live)
        for k in range(30):
            run.start(f"w{k:02d}")
        live.refresh_view()
        await pilot.pause()
        await pilot.press(*["down"] * 29)
        await pilot.pause()
        table = live.query_one("#live-episodes")
        top = table.scroll_y
        assert top > 0 and table.cursor_row == 29
        run.start("new")  # one more row, after the others (in flight, oldest first)
        live.refresh_view()
        assert table.scroll_y == top and table.cursor_row in drawn_rows(live)
