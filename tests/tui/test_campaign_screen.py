"""The campaign screen: a campaign file's plan (runs, endpoints, episodes, estimated cost), started and watched to
its end, a run opened on the Live screen; a bad file shown as the CLI says it."""

from __future__ import annotations

import asyncio

from textual.widgets import DataTable, Input
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
        app.action_open_campaign()  # the palette's "Open a campaign file…"
        await pilot.pause()
        app.screen.query_one("#name-input", Input).value = str(path)
        await pilot.press("enter")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, CampaignScreen) and screen.path == path
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


async def test_an_unreachable_endpoint_stops_only_its_runs_on_screen(tmp_path, monkeypatch):
    """An LLM model on a live server and one on a closed port: the live one's runs finish, the closed one's first
    run is interrupted and its second never starts; the screen says which endpoint is unreachable."""
    import socket

    from tests.openai_server import FakeOpenAI, seed_of, tool_reply, turn_of

    def brain(req, n):
        if turn_of(req) == 0:
            return tool_reply(("get_references", {"paper_id": seed_of(req)}))
        return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    monkeypatch.setenv("CAMPAIGN_TUI_KEY", "x")
    with FakeOpenAI(brain) as live:
        models = ""
        for name, url in (("a", live.url), ("c", down)):
            models += (
                f'[[models]]\nname = "{name}"\nmodel = "openai/m-{name}"\nbase_url = "{url}"\n'
                'api_key_env = "CAMPAIGN_TUI_KEY"\n\n'
            )
        path = tmp_path / "llm.toml"
        path.write_text(f'name = "l"\nlimit = 2\n\n[runs]\nablations = ["full", "no-search"]\n\n{models}')
        app = make_app()
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot, app)
            await app.push_screen(CampaignScreen(path))
            await settle(pilot, app)
            await pilot.press("ctrl+r")
            await settle(pilot, app)
            job = app.campaigns["l"]
            assert job.status == "stopped" and f"{down} unreachable: l-c-full, l-c-no-search" in job.message
            app.screen.refresh_progress()
            assert [(r[0], r[4], r[6]) for r in rows(app.screen)] == [
                ("l-a-full", "2/2", "✓ done"),
                ("l-a-no-search", "2/2", "✓ done"),
                ("l-c-full", "0/2", "■ interrupted"),
                ("l-c-no-search", "0/2", "· not started"),
            ]
            assert "stopped" in str(app.screen.query_one("#campaign-totals").render())


def batch(capsys, *args: str):
    """`--batch ARGS` in-process, before the app's loop (the CLI runs its own, which cannot nest in it)."""
    from tests.cli_inprocess import batch as run

    return run(capsys, *args)


def stored(db) -> dict[str, tuple[str | None, int]]:
    """Each run in the store: the shard it records and its trajectories."""
    import json
    import sqlite3

    with sqlite3.connect(db) as con:
        rows = con.execute(
            "SELECT r.name, r.config, (SELECT count(*) FROM trajectories t WHERE t.run_id = r.id) FROM runs r"
        ).fetchall()
    return {name: (json.loads(config).get("slice", {}).get("shard"), n) for name, config, n in rows}


def test_on_a_shards_store_the_screen_plans_and_runs_that_shard(tmp_path, capsys):
    """A store made by `campaign run FILE --shard 1/2`: the screen plans shard 1/2 (saying so, with the CLI command
    for it) and ctrl+r runs that shard, never the whole campaign into the shard's store."""
    import json

    from workbench.service import paths

    db = paths.store_path()
    path = tmp_path / "c.toml"
    path.write_text(FILE.replace("limit = 3", "limit = 8"), encoding="utf-8")
    shard = batch(capsys, "campaign", "status", str(path), "--shard", "1/2", "--format", "json")
    planned = {s["run"]: s["planned"] for s in json.loads(shard.stdout)}
    whole = batch(capsys, "campaign", "status", str(path), "--format", "json")
    assert sum(planned.values()) < sum(s["planned"] for s in json.loads(whole.stdout))
    head = FILE.replace("limit = 3", "limit = 8").split("[[models]]")[0]
    first = tmp_path / "h.toml"  # the shard's first runs: model h only, so model o's are still to run
    first.write_text(head + '[[models]]\nname = "h"\nagent = "heuristic"\n', encoding="utf-8")
    assert (batch(capsys, "campaign", "run", str(first), "--shard", "1/2", "--db", str(db))).returncode == 0
    app = make_app()

    async def on_screen() -> None:
        async with app.run_test(size=(200, 40)) as pilot:
            await settle(pilot, app)
            await app.push_screen(CampaignScreen(path))
            await settle(pilot, app)
            screen = app.screen
            assert {r[0]: int(r[3]) for r in rows(screen)} == planned
            note = str(screen.query_one("#campaign-error").render())
            assert note.startswith("shard 1/2: this store holds the campaign's shard 1/2")
            assert f"agenthop-tui --batch campaign run {path} --shard 1/2 --db {db}" in note
            await pilot.press("ctrl+r")
            await settle(pilot, app)
            assert app.campaigns["c"].status == "done"

    asyncio.run(on_screen())
    assert stored(db) == {name: ("1/2", n) for name, n in planned.items()}


def test_a_store_holding_the_campaign_in_mixed_parts_is_refused(tmp_path, capsys):
    """One model's runs made as shard 1/2, the other's whole: nothing can be started, and the screen says why."""
    from workbench.service import paths

    db = paths.store_path()
    head = FILE.split("[[models]]", maxsplit=1)[0]
    (tmp_path / "h.toml").write_text(head + '[[models]]\nname = "h"\nagent = "heuristic"\n', encoding="utf-8")
    (tmp_path / "o.toml").write_text(head + '[[models]]\nname = "o"\nagent = "oracle"\n', encoding="utf-8")
    assert (
        batch(capsys, "campaign", "run", str(tmp_path / "h.toml"), "--shard", "1/2", "--db", str(db))
    ).returncode == 0
    assert (batch(capsys, "campaign", "run", str(tmp_path / "o.toml"), "--db", str(db))).returncode == 0
    before = stored(db)
    path = tmp_path / "c.toml"
    path.write_text(FILE, encoding="utf-8")
    app = make_app()

    async def on_screen() -> None:
        async with app.run_test(size=(200, 40)) as pilot:
            await settle(pilot, app)
            await app.push_screen(CampaignScreen(path))
            await settle(pilot, app)
            error = str(app.screen.query_one("#campaign-error").render())
            assert "this store holds campaign 'c' made in parts that do not go together" in error
            assert "'c-h-full' as shard 1/2" in error and "'c-o-full' whole" in error
            await pilot.press("ctrl+r")
            await settle(pilot, app)
            assert "c" not in app.campaigns

    asyncio.run(on_screen())
    assert stored(db) == before
