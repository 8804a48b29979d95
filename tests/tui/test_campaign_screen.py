"""The campaign screen: a campaign file's plan (runs, endpoints, episodes, estimated cost), started and watched to
its end, a run opened on the Live screen; a bad file shown as the CLI says it."""

from __future__ import annotations

from textual.widgets import DataTable
from tui_support import make_app, settle

from workbench.tui.screens.campaign import CampaignScreen

FILE = """\
name = "c"
limit = 3
workers = 2

[runs]
ablations = ["full", "closed-book"]

[[models]]
name = "h"
agent = "heuristic"

[[models]]
name = "o"
agent = "oracle"
replicates = 2
"""


def rows(screen) -> list[list[str]]:
    table = screen.query_one("#campaign-runs", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_the_plan_then_the_campaign_run_and_watched(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text(FILE, encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot, app)
        await app.push_screen(CampaignScreen(path))
        await settle(pilot, app)
        screen = app.screen
        assert rows(screen) == [
            ["c-h-full", "h", "scripted", "3", "0/3", "—", "· not started"],
            ["c-h-closed-book", "h", "scripted", "3", "0/3", "—", "· not started"],
            ["c-o-full", "o", "scripted", "6", "0/6", "—", "· not started"],
            ["c-o-closed-book", "o", "scripted", "6", "0/6", "—", "· not started"],
        ]
        totals = str(screen.query_one("#campaign-totals").render())
        assert "4 runs on 1 endpoint(s) · 18 episodes, 0 done · estimated cost of the rest $0.00" in totals
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        job = app.campaigns["c"]
        assert job.status == "done"
        screen.refresh_progress()
        assert [r[4] for r in rows(screen)] == ["3/3", "3/3", "6/6", "6/6"]
        assert "runs 4/4 · episodes 18/18" in str(screen.query_one("#campaign-totals").render())
        # started again: the store is read again, every run is finished, none is run again
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert app.campaigns["c"] is not job and app.campaigns["c"].status == "done"
        assert app.campaigns["c"].runs == {}
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        from workbench.tui.screens.live import LiveScreen

        assert isinstance(app.screen, LiveScreen) and app.screen.monitor is app.jobs["c-o-full"].monitor


async def test_a_bad_file_is_said_as_the_cli_says_it(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('name = "c"\n[[models]]\nname = "h"\nagent = "robot"\n', encoding="utf-8")
    app = make_app()
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(pilot, app)
        await app.push_screen(CampaignScreen(path))
        await settle(pilot, app)
        error = str(app.screen.query_one("#campaign-error").render())
        assert f"{path}:4: models[1].agent: unknown 'robot'" in error
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert "c" not in app.campaigns
