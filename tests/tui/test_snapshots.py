"""Snapshots of every screen at 120×36 over fixed store content (update with `pytest --snapshot-update tests/tui`).

Nothing that varies is on screen: the store path is relative to the test's cwd, runs
are built with one worker (fixed order), and the live screen is fed fixed events with
a frozen clock.
"""

from __future__ import annotations

from types import SimpleNamespace

from tui_support import make_app, settle

from sandbox.records import LedgerState, Step
from workbench.tui.monitor import RunMonitor

SIZE = (120, 36)


async def _idle(pilot):
    await settle(pilot, pilot.app)


def test_runs_screen(snap_compare, seeded):
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_idle)


def test_welcome_on_empty_store(snap_compare, monkeypatch):
    monkeypatch.setenv("AGENTHOP_DB", "/nonexistent/agenthop/store.sqlite")  # the panel shows it in full: fixed here
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_idle)


def test_runs_screen_light_theme(snap_compare, seeded):
    assert snap_compare(make_app(theme="agenthop-light"), terminal_size=SIZE, run_before=_idle)


def test_launch_form(snap_compare, seeded):
    assert snap_compare(make_app(), press=["n"], terminal_size=SIZE, run_before=_idle)


def test_launch_form_at_80x24(snap_compare, seeded):
    """Every field reachable (the form scrolls, two fields a row) and both buttons in view."""
    assert snap_compare(make_app(), press=["n"], terminal_size=(80, 24), run_before=_idle)


def frozen_monitor() -> RunMonitor:
    """A run in progress: 4 of 10 done, three episodes in flight at ok / warning / error levels."""
    mon = RunMonitor("live-demo", {"budget": 30, "max_turns": 20, "max_tokens_total": 200_000}, clock=lambda: 50.0)
    mon.feed(SimpleNamespace(kind="started", done=0, planned=10, correct=0))
    mon.t0 = 40.0  # ten seconds in
    correct = 0
    for i, (term, ok) in enumerate([("answer", True), ("answer", False), ("budget", False), ("answer", True)]):
        correct += ok
        traj = SimpleNamespace(termination=term, correct=ok, error=None)
        mon.feed(
            SimpleNamespace(
                kind="trajectory",
                item_id=f"st_{i:04d}",
                replicate=0,
                trajectory=traj,
                done=i + 1,
                planned=10,
                correct=correct,
            )
        )
    flights = [("mt_0007", 3, 5, 9_000), ("st_0011", 15, 22, 41_000), ("mt_0012", 19, 28, 185_000)]
    for item, turns, points, tokens in flights:
        for t in range(1, turns + 1):
            used = points * t // turns
            tok = tokens * t // turns
            mon.feed(
                SimpleNamespace(
                    kind="step",
                    item_id=item,
                    replicate=0,
                    step=Step(
                        index=2 * (t - 1),
                        turn=t,
                        kind="assistant",
                        ledger=LedgerState(t, used, 30 - used, tok, 0),
                        text=f"turn {t}: reading [bold]carefully[/]",
                        tool_args=[{"name": "read_section"}],
                    ),
                )
            )
            mon.feed(
                SimpleNamespace(
                    kind="step",
                    item_id=item,
                    replicate=0,
                    step=Step(
                        index=2 * (t - 1) + 1,
                        turn=t,
                        kind="tool",
                        ledger=LedgerState(t, used, 30 - used, tok, 0),
                        tool_name="read_section",
                        tool_args={"paper_id": "c84f571b916d7e86288e7a1941bfd2fa08999558", "section": "C"},
                        text="=== 3 Method ===\nThe [i]method[/i] is described here.\nIt has three parts.\nOne.\nTwo.\nThree.",
                        cost=5,
                        status="ok",
                    ),
                )
            )
    mon.cost, mon.priced = 0.4213, True
    return mon


def test_live_screen(snap_compare, seeded):
    async def run_before(pilot):
        from workbench.tui.screens.live import LiveScreen

        await pilot.app.push_screen(LiveScreen(frozen_monitor()))
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_run_trajectories(snap_compare, seeded):
    async def run_before(pilot):
        pilot.app.open_run("heur-s0")
        await _idle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_stepper(snap_compare, seeded):
    async def run_before(pilot):
        pilot.app.open_run("scripted-[b]llm[/b]")
        await pilot.pause()
        await pilot.press("enter")
        await _idle(pilot)
        await pilot.press("l", "l", "l", "l", "l", "l", "l", "l", "g")
        await _idle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_stepper_unfolded_result(snap_compare, seeded):
    async def run_before(pilot):
        pilot.app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await _idle(pilot)
        await pilot.press("l", "l", "l", "j", "j", "j", "j", "j", "j", "j", "j", "j", "j", "enter")
        await _idle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_diagnostics(snap_compare, seeded):
    async def run_before(pilot):
        pilot.app.open_run("heur-s0", tab="diagnostics")
        await _idle(pilot)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_diagnostics_at_80_columns(snap_compare, seeded):
    """Narrow: the failures table above the heat map, every column and row label of the heat map whole."""

    async def run_before(pilot):
        pilot.app.open_run("heur-s0", tab="diagnostics")
        await _idle(pilot)
        pilot.app.screen.query_one("#diagnostics-panel").scroll_end(animate=False, immediate=True)
        await _idle(pilot)

    assert snap_compare(make_app(), terminal_size=(80, 30), run_before=run_before)


def test_help(snap_compare, seeded):
    async def run_before(pilot):
        pilot.app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await _idle(pilot)
        await pilot.press("question_mark")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
