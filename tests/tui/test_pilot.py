"""The real app driven by Pilot over temporary stores."""

from __future__ import annotations

import json
import tomllib

import pytest
from textual.widgets import DataTable, Input, Select
from tui_support import make_app, settle

from tests.textual_private import filters, messages, notifications
from workbench.tui.screens.launch import LaunchScreen
from workbench.tui.screens.live import LiveScreen
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.screens.stepper import StepperScreen
from workbench.tui.screens.trajectories import RunScreen
from workbench.tui.widgets.transcript import TranscriptView, group_turns

SIZE = (120, 36)


def ledger_by_turn(app, tid):
    """What the meters must show at each turn: the stored ledger of the turn's last step."""
    return [(g[-1]["points_used"], g[-1]["turn"], g[-1]["tokens"]) for g in group_turns(app.store.steps(tid))]


def meters(screen: StepperScreen) -> tuple[int, int, int]:
    r = screen.meter_readings()
    return r["points"][0], r["turns"][0], r["tokens"][0]


async def check_meters_through(pilot, app, screen: StepperScreen, limit: int | None = None) -> int:
    """Step turn by turn from the first; at each turn the meters equal the stored ledger."""
    expected = ledger_by_turn(app, screen.ids[screen.index])
    await pilot.press("0")
    for k, ledger in enumerate(expected[:limit]):
        assert meters(screen) == ledger and screen.position == k, k
        await pilot.press("l" if k % 2 else "right")
    if limit is None:
        assert screen.position == len(expected) - 1  # stepping past the end stays on the last turn
    await pilot.press("dollar_sign")
    assert meters(screen) == expected[-1]
    return len(expected)


async def test_launch_run_from_form_then_step_through_it(tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen) and app.screen.query_one("#welcome").display
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen)
        form.query_one("#limit", Input).value = "3"
        form.query_one("#workers", Input).value = "2"
        form.query_one("#name", Input).value = "pilot-run"
        await pilot.pause()
        assert not form.query_one("#start").disabled
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        live = app.screen
        assert isinstance(live, LiveScreen)
        snap = live.monitor.snapshot()
        assert (snap.status, snap.done, snap.planned) == ("done", 3, 3)
        assert "done" in str(live.query_one("#live-title").render())
        run = app.store.run("pilot-run")
        assert run["status"] == "done" and run["caps"]["budget"] == 30 and run["config"]["slice"]["limit"] == 3
        assert len(app.store.trajectories(run["id"])) == 3

        await pilot.press("o")
        await pilot.pause()
        assert isinstance(app.screen, RunScreen)
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        n_turns = await check_meters_through(pilot, app, stepper)
        await pilot.press("0")
        assert stepper.position == 0
        await pilot.press("dollar_sign")
        assert stepper.position == n_turns - 1
        await pilot.press("h")
        assert stepper.position == n_turns - 2
        first = stepper.traj["id"]
        await pilot.press("n")
        await settle(pilot, app)
        assert stepper.traj["id"] != first and stepper.index == 1
        await check_meters_through(pilot, app, stepper, limit=3)
        await pilot.press("p")
        assert stepper.traj["id"] == first


async def test_meters_follow_the_ledger_with_rejections_and_tokens(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("scripted-[b]llm[/b]")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        assert isinstance(stepper, StepperScreen) and stepper.ctx is not None and stepper.ctx.item is not None
        await check_meters_through(pilot, app, stepper)
        # tokens end above 90% of the cap: the meter is at its error level; points at 27/30 too
        readings = stepper.meter_readings()
        assert readings["tokens"][2] == "over" and readings["points"] == (27, 30, "over")
        await pilot.press("0")
        assert stepper.meter_readings()["points"][2] == "ok"
        # marks: a gold read (★), a non-gold read (✗), a rejection (⊘), a nudge (↺)
        headers = [e.plain_header for e in stepper.entries]
        assert any("★ gold" in h for h in headers) and any("✗ not gold" in h for h in headers)
        assert any("⊘ rejected" in h for h in headers) and any("↺ nudge" in h for h in headers)


async def test_model_text_with_markup_brackets_renders_literally(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        names = [str(row[0]) for row in (app.screen.query_one(DataTable).get_row_at(i) for i in range(4))]
        assert "scripted-[b]llm[/b]" in names
        app.open_run("scripted-[b]llm[/b]")
        await pilot.pause()
        assert "scripted-[b]llm[/b]" in str(app.screen.query_one("#run-title").render())
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        view = stepper.query_one(TranscriptView)
        view.cursor = 1
        await pilot.press("enter")  # unfold the first reply
        lines = " ".join(line.strip() for line in view.visible_lines())  # wrapped at spaces
        assert "Let me check [bold]the seed[/] and [red]its refs[/red] first; [link=http://x]y[/link]" in lines
        assert "\\[x\\] [/" in lines and "\x1b" not in lines and "\ufffd[31mred?" in lines
        await pilot.press("dollar_sign")
        text = "\n".join(view.visible_lines())
        assert "[b]Answer[/b]" in text
        # copying gives the raw text back, brackets and all
        await pilot.press("Y")
        assert "[bold]the seed[/]" in app.clipboard and "[b]Answer[/b]" in app.clipboard
        view.cursor = 1
        await pilot.press("y")
        assert app.clipboard.startswith("◆ assistant") and "[red]its refs[/red]" in app.clipboard


async def open_transcript(pilot, app, run: str) -> TranscriptView:
    """The stepper on the first trajectory of `run` (opened from its run screen): its transcript."""
    app.open_run(run)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot, app)
    return app.screen.query_one(TranscriptView)


async def test_unfold_a_long_result_renders_only_visible_lines(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(pilot, app, "heur-s0")
        tool = next(i for i, e in enumerate(view.entries) if e.kind == "tool")
        view.cursor = tool
        folded = view.total_lines
        assert "more line" in "\n".join(view.visible_lines())
        await pilot.press("enter")
        assert view.total_lines > folded and not view.entries[tool].folded
        # a 70K-character result: layout is line counts only, drawing touches only the rows on screen
        entry = view.entries[tool]
        entry.body = ("word " * 14_000).strip()
        entry.forget_layout()
        view.set_entries(view.entries, cursor=tool)
        assert view.total_lines > 1000 and len(view.visible_lines()) == view.scrollable_content_region.height
        await pilot.press("enter")
        assert view.total_lines < 100


async def test_runs_filter_sort_rename_delete_export(seeded, tmp_path):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        table = screen.query_one(DataTable)
        assert table.row_count == 4
        await pilot.press("slash")
        assert screen.query_one("#runs-filter", Input).has_focus
        await pilot.press(*"oracle")
        await pilot.pause()
        assert screen.shown == ["oracle-nosearch"]
        await pilot.press("escape")
        await pilot.pause()
        assert table.row_count == 4 and table.has_focus
        screen.sort_column = "accuracy"
        screen.render_rows()
        assert screen.shown[0] == "random-s1"  # lowest accuracy first
        await pilot.press("S")
        assert screen.shown[0] in ("oracle-nosearch", "scripted-[b]llm[/b]")

        table.move_cursor(row=screen.shown.index("heur-s0"))
        await pilot.press("r")
        await pilot.pause()
        box = app.screen.query_one(Input)
        box.value = "oracle-nosearch"
        await pilot.pause()
        assert app.screen.query_one("#ok").disabled  # taken
        box.value = "heur-renamed"
        await pilot.press("enter")
        await pilot.pause()
        assert "heur-renamed" in screen.shown and "heur-s0" not in screen.shown

        table.move_cursor(row=screen.shown.index("heur-renamed"))
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "out" / "heur.jsonl")
        app.screen.query_one("#export-steps").value = True
        await pilot.press("enter")
        await settle(pilot, app)
        lines = (tmp_path / "out" / "heur.jsonl").read_text().splitlines()
        assert len(lines) == 6
        record = json.loads(lines[0])
        assert record["run"]["name"] == "heur-renamed" and record["steps"] and "tool_sequence" in record
        # exporting again to the same file asks first; no keeps the file
        (tmp_path / "out" / "heur.jsonl").write_text("keep me\n")
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(tmp_path / "out" / "heur.jsonl")
        await pilot.press("enter")
        await pilot.pause()
        assert "exists. Replace it" in str(app.screen.query_one(".dialog-message").render())
        await pilot.press("n")
        await settle(pilot, app)
        assert (tmp_path / "out" / "heur.jsonl").read_text() == "keep me\n"
        await pilot.press("enter")  # the export dialog is still open: confirm this time
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot, app)
        assert len((tmp_path / "out" / "heur.jsonl").read_text().splitlines()) == 6 and app.screen is screen

        table.move_cursor(row=screen.shown.index("random-s1"))
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("n")  # no: nothing deleted
        await pilot.pause()
        assert "random-s1" in screen.shown
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await pilot.pause()
        assert "random-s1" not in screen.shown and len(app.store.runs()) == 3


async def test_welcome_key_runs_the_builtin_benchmark():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        welcome = str(app.screen.query_one("#welcome").render())
        assert "store.sqlite" in welcome and "built-in benchmark" in welcome
        await pilot.press("b")
        await settle(pilot, app)
        assert isinstance(app.screen, LiveScreen)
        run = app.store.run("heuristic-builtin")
        assert run["status"] == "done" and run["planned"] == 60 and run["agent"] == "heuristic"
        await pilot.press("escape")
        await pilot.pause()
        home = app.screen
        home.reload(force=True)
        assert home.shown == ["heuristic-builtin"] and not home.query_one("#welcome").display


async def test_live_screen_follows_an_episode(seeded, monkeypatch):
    from textual.worker import WorkerState

    from sandbox.runner import RunSpec
    from workbench.tui.screens import live as live_module

    # the periodic refresh never fires in this test: the final state must be painted when the run ends
    monkeypatch.setattr(live_module, "REFRESH_HZ", 1 / 3600)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        job = app.start_run(RunSpec(name="live-1", dataset="builtin", agent="heuristic", limit=2, workers=1))
        await settle(pilot, app)
        assert job.worker.state == WorkerState.SUCCESS
        live = app.screen
        # the run is over: its episodes stay listed, marked finished, and can still be followed
        table = live.query_one(DataTable)
        assert live.shown == [("st_0002", 0), ("st_0001", 0)]  # the most recent first
        assert all("finished: answer" in str(table.get_row_at(i)[-1]) for i in range(2))
        table.move_cursor(row=1)
        await pilot.press("enter")
        await pilot.pause()
        view = live.query_one("#live-transcript", TranscriptView)
        assert view.entries and any(e.kind == "tool" for e in view.entries)
        assert "following st_0001 r0 · finished: answer" in str(live.query_one("#follow-title").render())
        # and stopping is not offered any more
        assert live.check_action("stop", ()) is False and live.check_action("cancel", ()) is False
        assert "x" not in {
            b.binding.key for b in live.active_bindings.values() if live.check_action(b.binding.action, ())
        }
        # leaving the live screen never cancels a run: the job is app-level
        assert job.worker.node is app


async def test_keymap_from_config_and_help_lists_current_keys(seeded, tmp_path):
    from workbench.cli.interactive import build_app

    (tmp_path / "config.toml").write_text(
        '[keys]\n"stepper.next" = "space"\n"runs.new" = "N"\n"runs.nonexistent" = "x"\n'
    )
    app = build_app([])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        warnings = [n.message for n in notifications(app) if n.severity == "warning"]
        assert warnings == [
            "[keys] runs.nonexistent: no such binding id (ignored); ? lists each screen's keys with their ids"
        ]
        app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        await pilot.press("space")
        assert stepper.position == 1
        await pilot.press("l")  # the default key was replaced by the keymap
        assert stepper.position == 1
        await pilot.press("question_mark")
        await pilot.pause()
        from workbench.tui.screens.help import HelpScreen, key_rows

        assert isinstance(app.screen, HelpScreen)
        rows = {r[3]: r for r in key_rows(stepper)}
        assert rows["stepper.next"][1] == "space" and "stepper.gold" in rows and "app.help" in rows
        await pilot.press("escape")
        assert app.screen is stepper


async def test_theme_choice_is_remembered_without_rewriting_the_config_file(tmp_path):
    from workbench.cli.interactive import build_app, run_app

    mine = '# my settings\n[ui]\ntheme = "agenthop-dark"  # dark by default\n\n[keys]\n"runs.delete" = "D"\n'
    (tmp_path / "config.toml").write_text(mine)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("T")
        await pilot.pause()
        assert app.theme == "agenthop-light"
    assert (tmp_path / "config.toml").read_text() == mine  # comments and layout kept: the file is never written
    assert tomllib.loads((tmp_path / "state.toml").read_text())["ui"]["theme"] == "agenthop-light"
    assert build_app([]).theme == "agenthop-light"  # the choice made in the app wins over the config file
    assert build_app(["--theme", "textual-ansi"]).theme == "ansi-dark"
    assert build_app(["--theme", "nord"]).theme == "nord"
    assert run_app(["--theme", "no-such-theme"]) == 2


async def test_no_color_is_respected(monkeypatch):
    from textual.filter import Monochrome, NoColor

    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.no_color and any(isinstance(f, (Monochrome, NoColor)) for f in filters(app))


async def test_command_palette_lists_actions_and_runs(seeded):
    from workbench.tui.commands import WorkbenchCommands

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        titles = [c[0] for c in WorkbenchCommands(app.screen).commands()]
        assert "New run…" in titles and "Open run: heur-s0" in titles and "Runs: Open" in titles
        assert any(t.endswith("Delete") for t in titles)
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Open run: oracle")
        await pilot.pause()
        await pilot.pause()
        await pilot.press("enter")
        await pilot.pause()
        await pilot.pause()
        assert isinstance(app.screen, RunScreen) and app.screen.run_name == "oracle-nosearch"


async def test_launch_form_validates_inline():
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        form.query_one("#budget", Input).value = "lots"
        form.query_one("#dataset_kind", Select).value = "release"
        await pilot.pause()
        assert form.query_one("#start").disabled
        assert form.query_one("#budget").has_class("-invalid") and form.query_one("#path").has_class("-invalid")
        messages = str(form.query_one("#launch-messages").render())
        assert "points" in messages and "release directory" in messages
        llm = [v for _, v in form.query_one("#agent", Select)._options]
        assert "llm" in llm
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen) and not app.jobs


async def test_stepper_degrades_without_the_corpus(seeded):
    import sqlite3

    db = sqlite3.connect(seeded)
    # the release has gone and no import of a dataset with that fingerprint is cached
    db.execute("UPDATE runs SET dataset = '/nonexistent/release', dataset_fingerprint = 'f00' WHERE name = 'heur-s0'")
    db.commit()
    db.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        assert stepper.ctx is not None and stepper.ctx.item is None
        assert stepper.ctx.note.startswith("corpus unavailable: the release directory /nonexistent/release is gone")
        assert "--data" not in stepper.ctx.note
        assert "Item unavailable" in str(stepper.query_one("#item-text").render())
        headers = [e.plain_header for e in stepper.entries]
        assert headers and not any("★" in h or "✗" in h for h in headers)  # no gold marks without the item
        await check_meters_through(pilot, app, stepper, limit=4)


async def test_diagnostics_of_a_run_without_trajectories(seeded):
    from storage import Store

    store = Store(seeded)
    store.create_or_resume_run(
        "empty-run",
        {"x": 1},
        {
            "agent": "heuristic",
            "dataset": "builtin",
            "dataset_fingerprint": "f",
            "caps": {},
            "config": {},
            "version": "0",
        },
    )
    store.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("empty-run", tab="diagnostics")
        await settle(pilot, app)
        panel = app.screen.query_one("#diagnostics-panel")
        assert panel.report["n"] == 0
        assert "no finished trajectories" in str(panel.query_one("#diag-heatmap").render())
        await pilot.press("1", "enter")  # nothing to step through: no error
        assert isinstance(app.screen, RunScreen)


async def test_leaving_the_live_screen_never_cancels_the_run(monkeypatch):
    import asyncio

    from sandbox.runner import factory

    original = factory.make_scripted

    class Slow:
        def __init__(self, inner):
            self.inner = inner

        async def act(self, messages, tools):
            await asyncio.sleep(0.005)
            return await self.inner.act(messages, tools)

    monkeypatch.setattr(factory, "make_scripted", lambda *a, **k: Slow(original(*a, **k)))
    from sandbox.runner import RunSpec

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        job = app.start_run(RunSpec(name="slow", dataset="builtin", agent="heuristic", limit=4, workers=2))
        await pilot.pause()
        assert isinstance(app.screen, LiveScreen)
        await pilot.press("escape")  # back to the runs list while the run goes on
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        await settle(pilot, app)
        assert job.monitor.snapshot().status == "done"
        assert (
            app.store.run("slow")["status"] == "done" and len(app.store.trajectories(app.store.run("slow")["id"])) == 4
        )


async def test_a_conflicting_run_name_fails_visibly(seeded):
    from sandbox.runner import RunSpec

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.start_run(RunSpec(name="heur-s0", dataset="builtin", agent="random", limit=2, workers=1))
        await settle(pilot, app)
        live = app.screen
        snap = live.monitor.snapshot()
        assert snap.status == "failed" and "different configuration" in snap.message
        assert "failed" in str(live.query_one("#live-title").render())
        assert app.store.run("heur-s0")["agent"] == "heuristic"  # the stored run is untouched


async def test_enter_in_the_launch_form_moves_to_the_next_field_and_never_starts(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        form.query_one("#limit", Input).value = "2"
        form.query_one("#limit", Input).focus()
        await pilot.press("enter")
        assert form.query_one("#ids", Input).has_focus and app.screen is form and not app.jobs
        form.query_one("#name", Input).focus()
        await pilot.press("enter")
        assert app.screen is form and not app.jobs  # the last field: still no run
        assert "ctrl+r or Start starts the run" in str(form.query_one("#launch-messages").render())
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert isinstance(app.screen, LiveScreen) and app.store.run("heuristic-builtin")["status"] == "done"


async def test_R_relaunches_a_run_from_its_stored_configuration_and_resumes_it(seeded):
    import sqlite3

    # heur-s0 as a killed run leaves it: two of its six trajectories lost, interrupted
    db = sqlite3.connect(seeded)
    run_id = db.execute("SELECT id FROM runs WHERE name = 'heur-s0'").fetchone()[0]
    kept = [r[0] for r in db.execute("SELECT id FROM trajectories WHERE run_id = ? ORDER BY id LIMIT 4", (run_id,))]
    db.execute(
        "DELETE FROM steps WHERE trajectory_id IN (SELECT id FROM trajectories WHERE run_id = ? AND id > ?)",
        (run_id, kept[-1]),
    )
    db.execute("DELETE FROM trajectories WHERE run_id = ? AND id > ?", (run_id, kept[-1]))
    db.execute("UPDATE runs SET status = 'interrupted' WHERE id = ?", (run_id,))
    db.commit()
    db.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        home.query_one(DataTable).move_cursor(row=home.shown.index("heur-s0"))
        await pilot.press("R")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen) and "Resume 'heur-s0'" in str(form.query_one(".dialog-title").render())
        fields = form.form.fields
        assert (fields.name, fields.agent, fields.limit, fields.workers) == (
            "heur-s0",
            "heuristic",
            "6",
            "1",
        )
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        run = app.store.run("heur-s0")
        ids = [t["id"] for t in app.store.trajectories(run["id"])]
        assert run["id"] == run_id and run["status"] == "done" and len(ids) == 6 and ids[:4] == kept
        # a run the form cannot reproduce says why instead of opening a form that would be refused
        await pilot.press("escape")
        await pilot.pause()
        app.store.conn.execute("UPDATE runs SET agent = 'replay' WHERE name = 'random-s1'")
        home.query_one(DataTable).move_cursor(row=home.shown.index("random-s1"))
        await pilot.press("R")
        await pilot.pause()
        assert app.screen is home
        assert any("replay agent" in m for m in messages(app))


async def test_run_screen_rereads_only_when_its_run_moves_on_and_computes_diagnostics_off_the_ui_thread(
    seeded, monkeypatch
):
    import threading

    from storage import Store
    from workbench.service.reports import run_report
    from workbench.tui.widgets import diagnostics

    threads = []
    compute = diagnostics.compute

    def recording(key):
        threads.append(threading.current_thread() is threading.main_thread())
        return compute(key)

    monkeypatch.setattr(diagnostics, "compute", recording)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("2")  # the tab stays (focus lands in it while its numbers are computed)
        await settle(pilot, app)
        screen = app.screen
        panel = screen.query_one(diagnostics.DiagnosticsPanel)
        assert screen.tab == "diagnostics" and panel.has_focus
        panel.update_every_s = 0
        first, rows = panel.report, screen.rows
        assert threads == [False] and first["n"] == 6 and not panel.query_one("#diag-loading").display
        # another connection commits, but for another run: nothing is re-read or recomputed
        other = Store(seeded)
        other.update_run(other.run("random-s1")["id"], status="interrupted")
        screen.reload()
        await settle(pilot, app)
        assert screen.rows is rows and panel.report is first and threads == [False]
        # this run moves on (a trajectory gone): re-read, recomputed on a worker thread, the report's own numbers
        run_id = other.run("heur-s0")["id"]
        last = max(t["id"] for t in other.trajectories(run_id))
        with other.transaction():
            other.conn.execute("DELETE FROM steps WHERE trajectory_id = ?", (last,))
            other.conn.execute("DELETE FROM trajectories WHERE id = ?", (last,))
        screen.reload()
        await settle(pilot, app)
        assert len(screen.rows) == 5 and threads == [False, False]
        from workbench.service.reports.hops import read_hops

        own = {**run_report(other, "heur-s0"), "read_hops": read_hops(other, other.run("heur-s0"))}
        assert panel.report == own and panel.report["n"] == 5
        other.close()
        # leaving and coming back: the cached numbers, no computation
        await pilot.press("escape")
        app.open_run("heur-s0", tab="diagnostics")
        await settle(pilot, app)
        assert app.screen.query_one(diagnostics.DiagnosticsPanel).report["n"] == 5 and len(threads) == 2


async def test_trajectory_list_filter_and_sort_drive_the_stepper(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("heur-s0")
        await pilot.pause()
        screen = app.screen
        everything = [t["item_id"] for t in screen.shown]
        wrong = [t["item_id"] for t in screen.rows if not t["correct"]]
        assert len(everything) == 6 and 0 < len(wrong) < 6
        await pilot.press("slash", *"wrong", "enter")
        await pilot.pause()
        table = screen.query_one("#trajectory-table")
        assert [t["item_id"] for t in screen.shown] == wrong and table.row_count == len(wrong) and table.has_focus
        await pilot.press("escape")  # clears the filter first
        assert len(screen.shown) == 6 and isinstance(app.screen, RunScreen)
        await pilot.press("s", "s")  # stored order → item → result
        assert screen.sort_column == "result"
        assert [bool(t["correct"]) for t in screen.shown] == sorted(bool(t["correct"]) for t in screen.rows)
        await pilot.press("s", "S")  # by ending, reversed
        await pilot.press("slash", *"mt", "enter", "end", "enter")
        await settle(pilot, app)
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        assert stepper.ids == [t["id"] for t in screen.shown] and stepper.index == len(screen.shown) - 1
        assert all(app.store.trajectory(i)["item_id"].startswith("mt") for i in stepper.ids)


async def test_at_80_columns_the_transcript_keeps_cost_and_marks_in_view(seeded):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        app.open_run("scripted-[b]llm[/b]")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        view = stepper.view.transcript
        assert view.size.width < 50  # beside the item pane
        await pilot.press("l", "l", "l")  # turn 4: the gold paper read in turn 3, the seed in turn 4
        lines = view.visible_lines()
        assert any("−5  ★ gold" in line for line in lines) and any("−5  ✗ not gold" in line for line in lines)
        assert all(len(line) <= view.scrollable_content_region.width for line in lines)


async def test_the_answer_is_marked_only_once_the_steps_in_view_give_it(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        item = lambda: str(stepper.query_one("#item-text").render())  # noqa: E731
        submit = next(g[0]["turn"] for g in stepper.view.turns if any(s.get("tool_name") == "submit_answer" for s in g))
        assert "◀ answered" not in item()
        await pilot.press("dollar_sign")
        assert stepper.view.turns[stepper.position][0]["turn"] == submit and "◀ answered" in item()
        await pilot.press("h")
        assert "◀ answered" not in item()


async def test_live_screen_says_what_a_starting_run_is_doing_and_offers_stop_only_while_active():
    from sandbox.runner import RunSpec
    from workbench.tui.jobs import RunJob

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        job = RunJob(RunSpec(name="s", dataset="builtin", agent="heuristic"), app.store_path, app.cache_dir)
        job.monitor.note("loading the model client (litellm)…")
        live = LiveScreen(job.monitor, job)
        await app.push_screen(live)
        await pilot.pause()
        title = str(live.query_one("#live-title").render())
        assert "starting: loading the model client (litellm)…" in title
        assert live.check_action("stop", ()) is True
        job.monitor.finish("interrupted", "cancelled")
        live.refresh_view()
        await pilot.pause()
        assert live.check_action("stop", ()) is False and "interrupted" in str(live.query_one("#live-title").render())


async def test_a_moved_release_is_shown_from_its_cached_import_and_R_looks_again(seeded, monkeypatch):
    """heur-s0 ran on the built-in benchmark, whose import is in the corpus cache under the run's fingerprint."""
    import sqlite3

    from workbench.tui.corpora import MOVED_NOTE

    db = sqlite3.connect(seeded)
    db.execute("UPDATE runs SET dataset = '/moved/release' WHERE name = 'heur-s0'")
    fingerprint = db.execute("SELECT dataset_fingerprint FROM runs WHERE name = 'heur-s0'").fetchone()[0]
    db.execute("UPDATE runs SET dataset = '/moved/elsewhere', dataset_fingerprint = 'f00' WHERE name = 'random-s1'")
    db.commit()
    db.close()
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        assert stepper.ctx.item is not None and stepper.ctx.note == MOVED_NOTE
        assert app.corpora.corpus("/moved/release").fingerprint == fingerprint
        assert any("★" in e.plain_header for e in stepper.entries)  # gold marks are back
        await pilot.press("escape", "escape")
        # random-s1's corpus cannot be found: remembered as unavailable, until R looks again
        app.open_run("random-s1")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        stepper = app.screen
        assert stepper.ctx.item is None
        calls = []
        from workbench.service import datasets

        real = datasets.open_dataset

        def counting(*args, **kwargs):
            calls.append(args[0])
            return real(*args, **kwargs)

        monkeypatch.setattr(datasets, "open_dataset", counting)
        await pilot.press("n")
        await settle(pilot, app)
        assert calls == []  # the failure is remembered: no new attempt for the next trajectory
        await pilot.press("R")
        await settle(pilot, app)
        assert calls == ["/moved/elsewhere"] and stepper.ctx.item is None


def footer_keys(app) -> dict[str, int]:
    """The footer's keys in view and clear of the `^p palette` hint (which must be in view): description → right
    edge. A key drawn under the hint, or past the edge, is not in view."""
    from textual.widgets._footer import FooterKey

    keys = list(app.screen.query(FooterKey))
    [palette] = [k for k in keys if k.has_class("-command-palette")]
    width = app.size.width
    assert palette.region.width and palette.region.right <= width and "palette" in palette.render().plain
    return {
        k.description: k.region.right
        for k in keys
        if k is not palette and k.region.width and k.region.right <= palette.region.x
    }


async def test_at_80_columns_the_footer_keeps_help_quit_and_the_palette(seeded):
    """Below 112 columns `^p palette` was hidden so that the runs screen's keys fit: it is how a new user finds every
    action. Each screen now names the keys that give it their room (FOOTER_WIDE_ONLY, in ? help); wider, they are
    back."""
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        assert {"Open", "New run", "Delete", "Compare", "Quit", "Help"} <= set(footer_keys(app))
        assert not {"Live", "Items"} & set(footer_keys(app))  # in ? help, and the palette
        await pilot.press("enter")
        await settle(pilot, app)
        assert {"Step through", "Filter", "Live", "Back", "Help"} <= set(footer_keys(app))
        await pilot.press("enter")
        await settle(pilot, app)
        assert {"Fold/unfold", "Next turn", "Prev", "Decision", "Gold", "Back", "Help"} <= set(footer_keys(app))
        await pilot.press("escape", "escape")
        await settle(pilot, app)
        await pilot.press("space", "down", "down", "down", "space", "c")  # compare, then its split stepper
        await settle(pilot, app)
        assert {"Axes", "Agreement", "Back", "Help"} <= set(footer_keys(app))
        await pilot.press("2", "enter", "enter")
        await settle(pilot, app)
        assert {"Fold/unfold", "Next turn (both)", "Decision", "Gold", "Back", "Help"} <= set(footer_keys(app))
        await pilot.press("escape", "escape")
        await settle(pilot, app)
        app.action_items()
        await settle(pilot, app)
        assert {"Open item", "Search", "Filters", "Dataset", "Back", "Help"} <= set(footer_keys(app))
        await pilot.press("enter")
        await settle(pilot, app)
        assert {"Gold", "Trajectories", "Back", "Help"} <= set(footer_keys(app))
        app.open_audit("builtin")
        await settle(pilot, app)
        assert {"Pass", "Flag", "Remove", "Next label", "Back", "Help"} <= set(footer_keys(app))
        await pilot.resize_terminal(120, 36)  # wide: every shown key is back, beside the palette
        await settle(pilot, app)
        assert {"Note", "Re-classify", "Add label", "Undo edit", "Help"} <= set(footer_keys(app))
        await pilot.press("escape", "escape", "escape")
        await settle(pilot, app)
        assert isinstance(app.screen, RunsScreen) and {"Live", "Items", "Quit", "Help"} <= set(footer_keys(app))


async def test_at_80_columns_the_play_screen_keeps_help_and_the_palette(seeded, monkeypatch):
    from play_support import start

    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await start(pilot, app, ["st_0001"])
        await pilot.pause()
        assert {"Leaderboard", "Cancel / back", "Help"} <= set(footer_keys(app))


@pytest.mark.parametrize(
    "size", [(80, 24), (80, 40), (100, 30), (120, 36), (160, 50)], ids=lambda s: "x".join(map(str, s))
)
async def test_the_launch_form_fits_any_terminal_with_its_buttons_and_messages_in_view(seeded, size):
    """One case per terminal size (they were one loop: the suite's longest test, run to the end by one worker)."""
    from textual.geometry import Region

    from workbench.tui.forms.launch_fields import LaunchFields

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        # five errors: the longest message area
        app.action_new_run(LaunchFields(agent="llm", budget="x", max_turns="y", max_tokens="z", workers="0"))
        await pilot.pause()
        form = app.screen
        screen = Region(0, 0, *size)
        for selector in ("#start", "#cancel", "#launch-messages"):
            assert screen.contains_region(form.query_one(selector).region), (size, selector)
        fields = form.query_one("#launch-form")
        for field in ("#dataset_kind", "#name"):  # every field can be brought into view
            form.query_one(field).focus()
            for _ in range(20):  # focusing scrolls it into view once the layout has settled (a few refreshes)
                await pilot.pause()
                if fields.region.contains_region(form.query_one(field).region):
                    break
            assert fields.region.contains_region(form.query_one(field).region), (size, field)


async def test_notifications_show_text_with_brackets_as_it_is(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.notify("run 'a [/INST] b' failed: [learning] rate [bold]x")  # as markup: raises, or drops text
        app.screen.notify("[red]not red[/red]")  # a widget's notify goes through the app's
        await pilot.pause()
        shown = {n.message: n.markup for n in notifications(app)}
        assert shown == {"run 'a [/INST] b' failed: [learning] rate [bold]x": False, "[red]not red[/red]": False}


async def test_stepping_lands_on_the_turn_s_tool_call_so_enter_and_y_act_on_the_whole_step(seeded):
    """Stepping put the cursor on the bodyless "◆ assistant → submit_answer" line: `$` then `y` copied that line only,
    enter unfolded nothing. It now lands on the turn's tool call: y copies call, arguments and result."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        view = await open_transcript(pilot, app, "heur-s0")
        await pilot.press("dollar_sign")
        entry = view.cursor_entry
        assert entry.kind == "tool" and entry.turn == app.screen.view.turns[-1][0]["turn"]
        await pilot.press("y")
        step = next(s for s in app.screen.view.turns[-1] if s["kind"] == "tool")
        assert app.clipboard.startswith(f"▸ {step['tool_name']}({json.dumps(step['tool_args'], ensure_ascii=False)})")
        assert app.clipboard.endswith("\n" + step["text"]) and step["text"]
        await pilot.press("0", "l")  # a read: enter unfolds its result
        entry = view.cursor_entry
        assert entry.kind == "tool" and entry.turn == app.screen.view.turns[1][0]["turn"] and entry.folded
        await pilot.press("enter")
        assert not entry.folded


async def test_the_live_cursor_stays_on_its_episode_while_a_fast_run_adds_and_drops_rows():
    """Rows are rebuilt as episodes start and finish (finished ones listed newest first, the last 32 kept): the
    cursor follows the highlighted episode's key, and the monitor keeps that episode listed even when 40 more
    finish after it (it used to be dropped, and the cursor jumped to row 0, another episode)."""
    from types import SimpleNamespace

    from sandbox.records import LedgerState, Step
    from workbench.tui.monitor import KEEP_FINISHED, RunMonitor

    mon = RunMonitor("fast", {"budget": 30}, clock=lambda: 1.0)
    mon.feed(SimpleNamespace(kind="started", done=0, planned=60, correct=0))
    done = 0

    def start(item: str) -> None:
        mon.feed(
            SimpleNamespace(
                kind="step",
                item_id=item,
                replicate=0,
                step=Step(
                    index=0,
                    turn=1,
                    kind="tool",
                    ledger=LedgerState(1, 1, 29, 10, 0),
                    tool_name="list_sections",
                    tool_args={"paper_id": item},
                    text=f"sections of {item}",
                    cost=1,
                    status="ok",
                ),
            )
        )

    def finish(item: str) -> None:
        nonlocal done
        done += 1
        mon.feed(
            SimpleNamespace(
                kind="trajectory",
                item_id=item,
                replicate=0,
                done=done,
                planned=60,
                correct=done,
                trajectory=SimpleNamespace(termination="answer", correct=True, error=None),
            )
        )

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        live = LiveScreen(mon)
        await app.push_screen(live)
        for item in ("a", "b", "c"):
            start(item)
        live.refresh_view()
        await pilot.pause()
        await pilot.press("down")
        assert live.current_key() == ("b", 0)
        finish("a")
        start("d")  # b is now the first row
        live.refresh_view()
        await pilot.pause()
        assert live.shown[0] == ("b", 0) and live.current_key() == ("b", 0)
        finish("b")
        for k in range(KEEP_FINISHED + 8):
            start(f"n{k:02d}")
            finish(f"n{k:02d}")
            live.refresh_view()
            await pilot.pause()
            assert live.current_key() == ("b", 0)
        assert ("a", 0) not in live.shown  # others are still dropped
        await pilot.press("enter")
        await pilot.pause()
        assert live.follow_key == ("b", 0)
        assert any("sections of b" in e.body for e in live.query_one("#live-transcript").entries)  # still followable


async def test_at_80_columns_every_runs_column_and_the_live_last_call_are_in_view(seeded):
    """NAME and AGENT / MODEL took 21 + 23 cells of 80 (clipped at 32 and 30 whatever the width), pushing STATE
    off screen; the live table's LAST CALL ran under its scrollbar. Both now fit the width, the text clipped."""
    from test_snapshots import frozen_monitor

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        table = app.screen.query_one(DataTable)
        widths = [c.get_render_width(table) for c in table.columns.values()]
        assert sum(widths) <= table.size.width - 1 and table.max_scroll_x == 0
        names = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        # the columns fitted to their cells (the sort arrow's room on the sorted one only, DATA said once in the
        # title while every run is on one dataset): names of this store whole at 80 columns
        assert "heur-s0" in names and "oracle-nosearch" in names
        await pilot.resize_terminal(120, 24)
        await settle(pilot, app)
        assert "oracle-nosearch" in [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert table.columns["name"].get_render_width(table) == len("scripted-[b]llm[/b]") + 2  # to content
        await pilot.resize_terminal(80, 24)
        await settle(pilot, app)
        await app.push_screen(LiveScreen(frozen_monitor()))
        await pilot.pause()
        episodes = app.screen.query_one(DataTable)
        assert sum(c.get_render_width(episodes) for c in episodes.columns.values()) <= episodes.size.width - 1
        assert str(episodes.get_row_at(0)[-1]).startswith("read_section(") and episodes.max_scroll_x == 0


async def test_refresh_is_f5_on_the_run_and_leaderboard_screens_where_R_meant_relaunch_on_runs(seeded):
    """R was "Resume / relaunch" on Runs but "Refresh" on the run and leaderboard screens; refresh is F5 there
    (ids unchanged, so a keymap still remaps it)."""
    from workbench.tui.screens.help import key_rows
    from workbench.tui.screens.leaderboard import LeaderboardScreen

    app = make_app(keymap={"leaderboard.refresh": "ctrl+l"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_run("heur-s0")
        await pilot.pause()
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        rows = {ident: keys for _, keys, _, ident in key_rows(run_screen)}
        assert rows["run.refresh"] == "F5"
        forced = []
        real = run_screen.reload
        run_screen.reload = lambda force=False: (forced.append(force), real(force))
        await pilot.press("R")
        await pilot.pause()
        assert app.screen is run_screen and True not in forced
        await pilot.press("f5")
        await pilot.pause()
        assert forced.count(True) == 1
        app.action_leaderboard()
        await settle(pilot, app)
        board = app.screen
        assert isinstance(board, LeaderboardScreen)
        assert {ident: keys for _, keys, _, ident in key_rows(board)}["leaderboard.refresh"] == "^l"
        reloads = []
        board.action_reload = lambda: reloads.append(1)
        await pilot.press("R", "ctrl+l")
        await pilot.pause()
        assert reloads == [1]


async def test_a_long_run_name_is_clipped_in_the_run_header_and_empty_filters_say_so(seeded):
    """A 70-character run name pushed agent, done and accuracy off the run header; a filter matching nothing showed
    bare column headers on the runs and trajectories screens."""
    long_name = "heuristic-builtin-" + "x" * 52
    app = make_app()
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot, app)
        app.store.rename_run("heur-s0", long_name)
        await pilot.press("slash", *"zzzz")
        await pilot.pause()
        home = app.screen
        assert home.query_one(DataTable).row_count == 0
        note = home.query_one("#runs-nomatch")
        assert note.display and str(note.render()) == " no runs match 'zzzz'" and note.region.y < 10
        await pilot.press("escape")
        await pilot.pause()
        assert not home.query_one("#runs-nomatch").display

        app.open_run(long_name)
        await pilot.pause()
        title = str(app.screen.query_one("#run-title").render())
        assert len(title.rstrip()) <= 100 and title.rstrip().endswith("6/6 done  ·  acc 0.667  ·  done")
        assert "heuristic-builtin-xxx" in title and "…" in title
        await pilot.press("slash", *"zzzz", "enter")
        await pilot.pause()
        table = app.screen.query_one("#trajectory-table")
        assert table.row_count == 0 and "no trajectories match 'zzzz'" in "".join(
            seg.text for seg in table.render_line(1)
        )
