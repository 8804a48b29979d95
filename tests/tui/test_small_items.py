"""The smaller things of issue 13 §3, each held by a test that failed on the code before."""

from __future__ import annotations

import pytest


async def test_a_scripted_run_s_tokens_read_not_measured_in_the_list_and_the_stepper(seeded):
    from tui_support import make_app, settle

    from workbench.tui.screens.stepper import StepperScreen

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        for run, scripted in (("heur-s0", True), ("scripted-[b]llm[/b]", False)):
            app.open_run(run)
            await settle(pilot, app)
            screen = app.screen
            table = screen.query_one("#trajectory-table")
            tokens = [screen._row(t)[7] for t in screen.rows]
            header = "".join(seg.text for seg in table.render_line(0))
            assert "TOKENS" in header
            if scripted:
                assert set(tokens) == {"—"}
            else:
                assert all(t != "—" and int(t.replace(",", "")) > 0 for t in tokens)
            await pilot.press("enter")
            await settle(pilot, app)
            assert isinstance(app.screen, StepperScreen)
            await pilot.press("dollar_sign")
            meter = app.screen.query_one(".meter-tokens")
            shown = str(meter.render())
            assert ("not measured" in shown) == scripted and meter.measured != scripted
            await pilot.press("escape", "escape")
            await settle(pilot, app)


async def test_help_fits_an_80x24_screen_with_every_binding_id_whole(seeded):
    from textual.widgets import Static
    from tui_support import make_app, settle

    from workbench.tui.screens.help import HelpScreen, key_rows

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        for keys in ((), ("enter", "enter")):  # the runs list, then the stepper (its ids are the longest)
            await pilot.press(*keys)
            await settle(pilot, app)
            source = app.screen
            await pilot.press("question_mark")
            await settle(pilot, app)
            assert isinstance(app.screen, HelpScreen)
            dialog = app.screen.query_one(".help-dialog")
            assert dialog.region.right <= 80 and dialog.region.bottom <= 24 and dialog.region.x >= 0
            table = app.screen.query_one("#help-keys Static", Static)
            lines = [strip.text for strip in table.render_lines(table.region.reset_offset)]
            text = "\n".join(lines)
            assert all(ident in text for _, _, _, ident in key_rows(source) if ident)
            assert max(len(line.rstrip()) for line in lines) <= dialog.region.width
            await pilot.press("escape")
            await settle(pilot, app)


async def test_the_live_screen_of_a_relaunched_finished_run_shows_its_real_terminations_and_elapsed_time(seeded):
    import sqlite3

    from textual.widgets import DataTable
    from tui_support import make_app, settle

    from workbench.tui.screens.live import LiveScreen

    db = sqlite3.connect(seeded)  # heur-s0 took 1m30s when it ran
    db.execute(
        "UPDATE runs SET started_at = '2026-01-01T10:00:00+00:00', finished_at = '2026-01-01T10:01:30+00:00' "
        "WHERE name = 'heur-s0'"
    )
    stored = dict(
        db.execute(
            "SELECT termination, COUNT(*) FROM trajectories t JOIN runs r ON r.id = t.run_id "
            "WHERE r.name = 'heur-s0' AND t.final = 1 GROUP BY termination"
        ).fetchall()
    )
    db.commit()
    db.close()
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        home = app.screen
        home.query_one(DataTable).move_cursor(row=home.shown.index("heur-s0"))
        await pilot.press("R")
        await pilot.pause()
        await pilot.press("ctrl+r")  # nothing left to run: it finishes at once
        await settle(pilot, app)
        assert isinstance(app.screen, LiveScreen)
        terminations = str(app.screen.query_one("#live-terminations").render())
        assert all(f"{t} {n}" in terminations for t, n in stored.items()) and sum(stored.values()) == 6
        assert "elapsed 1m30s" in str(app.screen.query_one("#live-stats").render())


def hold_lock(store, run: str):
    """Another process holding `run`'s lock, as a process executing it does, until its stdin closes."""
    import subprocess
    import sys

    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys; from storage.locks import RunLock\n"
            f"with RunLock({str(store)!r}, {run!r}):\n    print('held', flush=True)\n    sys.stdin.readline()",
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout.readline().strip() == "held"
    return child


def test_the_launch_form_says_a_run_is_in_progress_in_another_process_before_start(tmp_path):
    from dataclasses import replace

    from workbench.tui.forms.launch import validate
    from workbench.tui.forms.launch_fields import LaunchFields

    store = tmp_path / "store.sqlite"
    child = hold_lock(store, "busy-run")
    try:
        values = LaunchFields(name="busy-run", agent="heuristic")
        result = validate(values, {"busy-run"}, llm_ok=False, store_path=store)
        assert result.spec is None and result.errors == {
            "name": f"name: 'busy-run' is in progress in another process (pid {child.pid}); starting it here would "
            "be refused: wait for it to finish, or choose another name"
        }
        assert (
            validate(replace(values, name="free-run"), {"busy-run", "free-run"}, llm_ok=False, store_path=store).spec
            is not None
        )
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    assert validate(values, {"busy-run"}, llm_ok=False, store_path=store).spec is not None  # over: it resumes


async def test_the_home_screen_refuses_to_rename_or_delete_a_run_another_process_executes(seeded):
    """`r` and `d` on a run whose lock another process holds: the notice names its pid and the store keeps the run
    under its name."""
    from textual.widgets import DataTable, Input
    from tui_support import make_app, settle

    from tests.textual_private import messages

    child = hold_lock(seeded, "heur-s0")
    busy = f"run 'heur-s0' is in progress in another process (pid {child.pid}); wait for it or stop it"
    try:
        app = make_app()
        async with app.run_test(size=(120, 36)) as pilot:
            await settle(pilot, app)
            home = app.screen
            home.query_one(DataTable).move_cursor(row=home.shown.index("heur-s0"))
            await pilot.press("r")
            await pilot.pause()
            app.screen.query_one(Input).value = "heur-moved"
            await pilot.press("enter")
            await pilot.pause()
            assert messages(app).count(busy) == 1
            assert "heur-s0" in home.shown and "heur-moved" not in {r["name"] for r in app.store.runs()}
            await pilot.press("d")
            await pilot.pause()
            await pilot.press("y")
            await settle(pilot, app)
            assert messages(app).count(busy) == 2
            assert "heur-s0" in home.shown and "heur-s0" in {r["name"] for r in app.store.runs()}
    finally:
        child.stdin.close()
        child.wait(timeout=30)


def test_exports_default_to_the_downloads_or_the_data_dir_never_the_working_directory(tmp_path, monkeypatch):
    from pathlib import Path

    from workbench.service.paths import export_dir

    monkeypatch.delenv("AGENTHOP_EXPORTS")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("XDG_DOWNLOAD_DIR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user-dirs.dirs: ~/Downloads
    (tmp_path / "home").mkdir()
    assert export_dir() == tmp_path / "data" / "agenthop-workbench" / "exports" and export_dir().is_dir()
    (tmp_path / "home" / "Downloads").mkdir()
    assert export_dir() == tmp_path / "home" / "Downloads" != Path.cwd()


async def test_the_run_export_offers_a_path_in_the_export_dir(seeded, tmp_path, monkeypatch):
    from textual.widgets import Input
    from tui_support import make_app, settle

    from workbench.tui.screens.dialogs import ExportModal

    monkeypatch.setenv("AGENTHOP_EXPORTS", str(tmp_path / "exports"))
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        app.export_run("heur-s0")
        await settle(pilot, app)
        assert isinstance(app.screen, ExportModal)
        assert app.screen.query_one("#export-path", Input).value == str(tmp_path / "exports" / "heur-s0.jsonl")


@pytest.fixture
def token_sweep(tmp_path, builtin_cache, monkeypatch, capsys):
    """A token-axis sweep (its token cap lifted to 10**12, the context budget bounding it) in the test's store."""
    from tests.cli_inprocess import batch

    db = tmp_path / "store.sqlite"
    monkeypatch.setenv("AGENTHOP_DB", str(db))
    args = ("scale", "sequential", "--axis", "tokens", "--grid", "2k,50k", "--run", "T", "--db", str(db), "--quiet")
    proc = batch(capsys, *args, "--limit", "2", "--boot", "200")
    assert proc.returncode == 0, proc.stderr
    return db


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_a_token_sweeps_tokens_meter_says_no_cap_not_a_million_millions(token_sweep, size):
    from tui_support import make_app, settle

    from workbench.tui.screens.stepper import StepperScreen

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        app.open_run("T@50k")
        await settle(pilot, app)
        await pilot.press("enter")
        await settle(pilot, app)
        assert isinstance(app.screen, StepperScreen)
        await pilot.press("dollar_sign")
        await settle(pilot, app)
        meter = app.screen.query_one(".meter-tokens")
        shown = str(meter.render())
        assert "no cap" in shown and "M" not in shown.split("TOKENS", 1)[1], shown
