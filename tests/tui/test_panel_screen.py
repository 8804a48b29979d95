"""The Panel screen: Table 2 grouped by tier and family with the marks, the fingerprints, the further tables and
figures — the very cells of `--batch report --panel` (one application-layer call) — its export, the run picker, and
re-tagging a run from the runs screen. Snapshots at 80×24 and 160×45."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, SelectionList
from tui_support import make_app, settle

from workbench.cli import main

# six runs, three families, three tiers: scripted agents with distinct policies, tagged
PANEL_RUNS = (
    ("heur-a", "heuristic", 0, "Alpha", "closed-frontier"),
    ("heur-b", "heuristic", 1, "Alpha", "closed-frontier"),
    ("orac-a", "oracle", 0, "Beta", "open-frontier"),
    ("orac-b", "oracle", 1, "Beta", "open-frontier"),
    ("rand-a", "random", 0, "Gamma", "compute-efficient"),
    ("rand-b", "random", 1, "Gamma", "compute-efficient"),
)
NAMES = [r[0] for r in PANEL_RUNS]


@pytest.fixture(scope="session")
def panel_store_file(tmp_path_factory, builtin_cache) -> Path:
    from sandbox.datasets import open_dataset
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    path = tmp_path_factory.mktemp("panel") / "store.sqlite"
    corpus, _ = open_dataset("builtin", builtin_cache)
    store = Store(path)
    for name, agent, seed, family, tier in PANEL_RUNS:
        spec = RunSpec(
            name=name, dataset="builtin", agent=agent, seed=seed, limit=12, workers=1, family=family, tier=tier
        )
        asyncio.run(Runner(spec, corpus, store).run())
    store.close()
    corpus.close()
    return path


@pytest.fixture
def panel_store(tmp_path, panel_store_file) -> Path:
    target = tmp_path / "store.sqlite"
    shutil.copy(panel_store_file, target)
    return target


async def _open_panel(pilot, names=NAMES):
    pilot.app.open_panel(list(names))
    await settle(pilot, pilot.app)


def _cells(table: DataTable) -> list[list[str]]:
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def _cli(capsys, db: Path, fmt: str) -> str:
    capsys.readouterr()
    assert main(["--batch", "report", "--panel", *NAMES, "--db", str(db), "--format", fmt]) == 0
    return capsys.readouterr().out


async def test_the_screen_shows_the_cli_numbers(panel_store, capsys):
    from workbench.views.lineage import fingerprint_table, grouped_table

    panel = json.loads(_cli(capsys, panel_store, "json"))
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await _open_panel(pilot)
        screen = app.screen
        assert json.loads(json.dumps(screen.panel, default=str)) == panel  # one call, the same numbers
        shown = _cells(screen.query_one("#panel-table2", DataTable))
        header, sections = grouped_table(panel)
        expected = []
        for label, rows in sections:
            expected.append([label] + [""] * (len(header) - 1))
            expected += [["  " + r[0], *r[1:]] for r in rows]
        assert shown == expected
        assert [s[0] for s in sections] == [
            "Closed Frontier · Alpha",
            "Open Frontier · Beta",
            "Compute-Efficient · Gamma",
        ]
        assert _cells(screen.query_one("#panel-fingerprints", DataTable)) == [
            list(r) for r in fingerprint_table(panel)[1]
        ]
        await pilot.press("3")
        await settle(pilot, app)
        assert app.screen.query_one("#panel-tabs").active == "tables"
        from textual.widgets import Static

        tables = app.screen.query_one("#panel-tables", Static).content.renderables
        await pilot.press("4")
        await settle(pilot, app)
        figures = str(app.screen.query_one("#panel-figures", Static).content)
        assert "Figure 5 · accuracy against paper recall" in figures and "rand-a: recall 0.0%" in figures
        # no closed-book/no-search chain (Table 4) or replicates (Table 17) here; the rest titled as the CLI's
        assert [str(t.title).split(" ·")[0] for t in tables] == [
            "Table 3",
            "Table 9",
            "Table 10",
            "Table 11",
            "Table 15",
            "Figure 2",
            "Figure 4",
        ]


async def test_export_writes_what_the_cli_prints(panel_store, capsys, tmp_path):
    expected = {fmt: _cli(capsys, panel_store, fmt) for fmt in ("csv", "markdown")}
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await _open_panel(pilot)
        for suffix, fmt in ((".csv", "csv"), (".md", "markdown")):
            await pilot.press("e")
            await pilot.pause()
            field = app.screen.query_one("#export-path", Input)
            field.value = str(tmp_path / f"panel{suffix}")
            await pilot.press("enter")
            await settle(pilot, app)
            assert (tmp_path / f"panel{suffix}").read_bytes().decode("utf-8") == expected[fmt]


async def test_pick_runs_then_the_panel(panel_store):
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        pilot.app.open_panel([])
        await settle(pilot, app)
        picker = app.screen.query_one(SelectionList)
        for name in ("heur-a", "orac-a", "rand-a"):
            picker.select(name)
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen.names == ["heur-a", "orac-a", "rand-a"]
        assert [r["run"] for r in app.screen.panel["rows"]] == ["heur-a", "orac-a", "rand-a"]


async def test_retag_a_run_from_the_runs_screen(panel_store):
    from storage import Store

    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(pilot, app)
        await pilot.press("t")  # the first row: heur-a
        await pilot.pause()
        field = app.screen.query_one("#name-input", Input)
        assert field.value == "Alpha, closed-frontier"
        field.value = "Delta, open"
        await pilot.press("enter")
        await settle(pilot, app)
    run = Store(panel_store, readonly=True).run("heur-a")
    assert (run["family"], run["tier"]) == ("Delta", "open-frontier")


def test_panel_screen_80x24(snap_compare, panel_store):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_open_panel)


def test_panel_screen_160x45(snap_compare, panel_store):
    assert snap_compare(make_app(), terminal_size=(160, 45), run_before=_open_panel)


def test_panel_fingerprints_160x45(snap_compare, panel_store):
    async def run_before(pilot):
        await _open_panel(pilot)
        await pilot.press("2")
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=(160, 45), run_before=run_before)


async def test_save_a_panel_and_pick_it_again(panel_store):
    from textual.widgets import OptionList

    from workbench.tui import config as config_file

    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await _open_panel(pilot, ["orac-a", "rand-a", "heur-b"])
        await pilot.press("s")
        await pilot.pause()
        app.screen.query_one("#name-input", Input).value = "mine"
        await pilot.press("enter")
        await settle(pilot, app)
        assert config_file.saved_panels(config_file.load(app.state_path)) == {"mine": ["orac-a", "rand-a", "heur-b"]}
        await _open_panel(pilot, [])  # another panel: the picker offers the saved one
        saved = app.screen.query_one("#panel-saved", OptionList)
        saved.focus()
        saved.highlighted = 0
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen.names == ["orac-a", "rand-a", "heur-b"]
