"""The general-agent setting's registry-size group (`scale tools`) in the Scaling screen: listed, its table the
engine's, its plot drawn; and the CLI group resumes."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_support import make_app, settle, until

from workbench.tui.screens.scaling import ScalingScreen
from workbench.tui.widgets.plot import PlotView
from workbench.views.general import registry_rows

SIZE = (140, 40)
GROUP = "reg"


@pytest.fixture
def tools_store(tmp_path, builtin_cache, monkeypatch, capsys) -> Path:
    from tests.cli_inprocess import batch

    db = tmp_path / "store.sqlite"
    monkeypatch.setenv("AGENTHOP_DB", str(db))
    monkeypatch.setenv("AGENTHOP_CACHE", str(builtin_cache))
    args = (
        "scale",
        "tools",
        "--counts",
        "0,8,16",
        "--detail",
        "full,names",
        "--run",
        GROUP,
        "--db",
        str(db),
        "--quiet",
        "--limit",
        "6",
        "--distractible",
        "0.4",
        "--format",
        "json",
    )
    first = batch(capsys, *args)
    assert first.returncode == 0, first.stderr
    again = batch(capsys, *args)  # every level is resumed: nothing new runs, the same table
    assert again.returncode == 0 and again.stdout == first.stdout
    return db


async def test_the_registry_group_is_shown_with_its_table_and_plot(tools_store):
    from storage import Store
    from workbench.service.scaling import tools_report

    store = Store(tools_store)
    expected = tools_report(store, GROUP)
    store.close()
    assert [r["run"] for r in expected["rows"]] == [
        f"{GROUP}@plain",
        f"{GROUP}@tools8-full",
        f"{GROUP}@tools8-names",
        f"{GROUP}@tools16-full",
        f"{GROUP}@tools16-names",
    ]
    app = make_app()
    app.action_scaling = lambda: app.push_screen(ScalingScreen())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.screen, ScalingScreen) and app.screen.shown is not None)
        screen = app.screen
        assert screen.shown.kind == "tools" and screen.shown.name == GROUP
        table = screen.query_one("#scaling-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows == [list(r) for r in registry_rows(expected)]
        plot = screen.query_one(PlotView).text.plain
        assert "accuracy vs extra tools" in plot and "acc names" in plot and "ood share" in plot
        assert "study's rule" in str(screen.query_one("#scaling-caption").render())


def test_the_stepper_marks_an_out_of_domain_call_and_its_cost(tmp_path, capsys, builtin_cache, monkeypatch):
    """A stored run among extra tools: each executed call to one of them is marked ⊗ with its cost, is a decision
    the `d` key steps to, and a call to a tool nobody offered is not marked."""
    from storage import Store
    from tests.cli_inprocess import batch
    from workbench.tui.widgets.transcript import build_entries, mark

    monkeypatch.setenv("AGENTHOP_CACHE", str(builtin_cache))
    db = str(tmp_path / "s.db")
    assert (
        batch(
            capsys,
            "run",
            "--run",
            "g",
            "--db",
            db,
            "--limit",
            "2",
            "--quiet",
            "--distractible",
            "0.5",
            "--extra-tools",
            "builtin",
            "--extra-tools-count",
            "8",
            "--extra-tools-cost",
            "2",
        ).returncode
        == 0
    )
    store = Store(db)
    steps = store.steps(store.trajectories(store.run("g")["id"])[0]["id"])
    ood = [
        s
        for s in steps
        if s["kind"] == "tool"
        and s["tool_name"]
        not in (
            "get_paper_info",
            "get_references",
            "search_papers",
            "list_sections",
            "read_section",
            "think",
            "submit_answer",
        )
        and s["status"] == "ok"
    ]
    assert ood
    entries = {e.step: e for e in build_entries(steps) if e.kind == "tool"}
    for s in ood:
        header = entries[s["idx"]].plain_header
        assert "⊗ out of domain" in header and "  −2" in header
        assert entries[s["idx"]].decision == "out-of-domain call"
    assert mark({"kind": "tool", "tool_name": "made_up", "status": "unknown_tool"}, None) is None


@pytest.fixture
def general_store(tmp_path, capsys, builtin_cache, monkeypatch) -> tuple[Path, dict]:
    import json

    from tests.cli_inprocess import batch

    db = tmp_path / "store.sqlite"
    monkeypatch.setenv("AGENTHOP_DB", str(db))
    monkeypatch.setenv("AGENTHOP_CACHE", str(builtin_cache))
    assert (
        batch(
            capsys,
            "run",
            "--run",
            "g",
            "--db",
            str(db),
            "--limit",
            "3",
            "--quiet",
            "--distractible",
            "0.5",
            "--extra-tools",
            "builtin",
            "--extra-tools-count",
            "8",
        ).returncode
        == 0
    )
    return db, json.loads(batch(capsys, "report", "g", "--db", str(db), "--format", "json").stdout)["general_setting"]


async def test_the_diagnostics_tab_shows_the_setting(general_store):
    """A run in the setting: its Diagnostics tab shows the out-of-domain share as `report` prints it."""
    from rich.console import Console

    from workbench.tui.widgets.diagnostics import DiagnosticsPanel

    _, share = general_store
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("enter", "2")
        await until(
            pilot,
            lambda: (
                bool(app.screen.query(DiagnosticsPanel)) and app.screen.query_one(DiagnosticsPanel).report is not None
            ),
        )
        await settle(pilot, app)
        widget = app.screen.query_one("#diag-general")
        assert widget.display
        console = Console(width=140, record=True)
        console.print(widget.content)
        out = console.export_text()
        assert "out-of-domain call share" in out and f"({share['share_counts'][0]}/{share['share_counts'][1]})" in out


@pytest.fixture
def pair_store(tmp_path, capsys, builtin_cache, monkeypatch) -> Path:
    from tests.cli_inprocess import batch

    db = tmp_path / "store.sqlite"
    monkeypatch.setenv("AGENTHOP_DB", str(db))
    monkeypatch.setenv("AGENTHOP_CACHE", str(builtin_cache))
    for extra in ((), ("--extra-tools", "builtin", "--extra-tools-count", "8")):
        assert (
            batch(
                capsys,
                "run",
                "--run",
                "g" if extra else "p",
                "--db",
                str(db),
                "--limit",
                "4",
                "--quiet",
                "--distractible",
                "0.5",
                *extra,
            ).returncode
            == 0
        )
    return db


async def test_the_compare_screen_states_the_out_of_domain_side(pair_store):
    from storage import Store
    from workbench.service.reports import compare_report
    from workbench.tui.screens.compare import CompareScreen
    from workbench.views.general import compare_lines

    store = Store(pair_store)
    expected = compare_lines(compare_report(store, "p", "g"))
    store.close()
    assert len(expected) == 1 and expected[0].startswith("B: general setting")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.push_screen(CompareScreen("p", "g"))
        await until(pilot, lambda: isinstance(app.screen, CompareScreen) and app.screen.report is not None)
        await settle(pilot, app)
        assert expected[0] in str(app.screen.query_one("#compare-summary").content)


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_list_counts_the_runs_a_sweep_adds_while_the_screen_is_open(
    tmp_path, builtin_cache, monkeypatch, capsys, size
):
    """A `scale tools` sweep run from the CLI while the Scaling screen is open: the group's count follows the store
    when the screen is recomputed (R) or shown again, rather than the one level it had when the screen opened."""
    import asyncio
    import sys

    async def sweep(counts: str) -> int:
        """The sweep in another process, as a person runs it in another terminal."""
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "workbench.cli",
            "--batch",
            *common,
            "--counts",
            counts,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        return await proc.wait()

    db = tmp_path / "store.sqlite"
    monkeypatch.setenv("AGENTHOP_DB", str(db))
    monkeypatch.setenv("AGENTHOP_CACHE", str(builtin_cache))
    common = ("scale", "tools", "--detail", "names", "--run", GROUP, "--db", str(db), "--quiet", "--limit", "2")
    assert await sweep("0,8") == 0
    app = make_app()
    app.action_scaling = lambda: app.push_screen(ScalingScreen())
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await until(pilot, lambda: isinstance(app.screen, ScalingScreen) and app.screen.shown is not None)
        screen = app.screen
        assert [s.detail for s in screen.sources] == ["tools ×2"]
        assert await sweep("0,8,16") == 0  # another process, as it were
        await pilot.press("R")
        await settle(pilot, app)
        table = screen.query_one("#scaling-sources", DataTable)
        assert [str(c) for c in table.get_row_at(0)] == [GROUP, "tools ×3"]
        assert await sweep("0,8,16,24") == 0
        await pilot.press("question_mark")  # another screen on top, then back
        await settle(pilot, app)
        await pilot.press("escape")
        await settle(pilot, app)
        assert app.screen is screen and [str(c) for c in table.get_row_at(0)] == [GROUP, "tools ×4"]
