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
    from workbench.views.fingerprints import fingerprint_table
    from workbench.views.lineage import grouped_table

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
        # every table the CLI prints, titled as the CLI's; one with nothing to show (no closed-book chain for
        # Table 4 here) says so under its title instead of vanishing
        from workbench.views import fingerprints, panel_tables

        titled = fingerprints.titled_tables(panel)[2:] + panel_tables.extra_tables(panel)
        shown = [str(t.title) if hasattr(t, "title") else str(t).split(f": {panel_tables.EMPTY}")[0] for t in tables]
        assert shown == [title for title, _ in titled]
        for title, (_, rows) in titled:
            assert any(
                str(t).startswith(f"{title}: {panel_tables.EMPTY}") for t in tables if not hasattr(t, "title")
            ) == (not rows)
        for wanted in ("Table 9 · MT-fail", "Table 12 ·", "Table 13 ·", "Table 14 ·", "family trigrams"):
            assert any(title.startswith(wanted) for title in shown), wanted


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


async def test_the_picker_focuses_a_saved_panel_and_keeps_its_buttons_on_an_80x24_screen(panel_store):
    """Opened with saved panels and nothing marked, enter opens the highlighted saved panel (not "mark at least
    two runs"); with many saved panels the dialog still fits 80×24, its buttons on screen."""
    from workbench.tui import config as config_file

    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        for k in range(12):
            config_file.remember(app.state_path, "panels", f"saved-{k:02d}", NAMES[k % 3 : k % 3 + 3])
        pilot.app.open_panel([])
        await settle(pilot, app)
        for button in app.screen.query("Button"):
            region = button.region
            assert region.height and region.bottom <= 24 and region.right <= 80, button.id
        await pilot.press("enter")
        await settle(pilot, app)
        assert app.screen.names == NAMES[0:3]
        assert [r["run"] for r in app.screen.panel["rows"]] == NAMES[0:3]


async def test_export_into_a_missing_directory_is_refused(panel_store, tmp_path):
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await _open_panel(pilot)
        await pilot.press("e")
        await pilot.pause()
        target = tmp_path / "no" / "such" / "p.json"
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        assert not target.parent.exists()
        error = str(app.screen.query_one("#export-error").render())
        assert "no directory" in error and str(target.parent) in error


async def test_a_run_named_twice_is_named_on_the_screen(panel_store):
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await _open_panel(pilot, ["heur-a", "orac-a", "heur-a"])
        title = str(app.screen.query_one("#panel-title").render())
        assert "named more than once" in title and "heur-a" in title
        assert app.screen.panel is None


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_figures_fit_their_pane_and_follow_a_resize(panel_store, size):
    """No plot row is wider than the Figures pane (nothing wraps), at both sizes and after a resize."""
    from textual.widgets import Static

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await _open_panel(pilot)
        app.screen.query_one("TabbedContent").active = "figures"
        await settle(pilot, app)
        for width, height in (size, (size[0] + 30, size[1])):
            await pilot.resize_terminal(width, height)
            await settle(pilot, app)
            figures = app.screen.query_one("#panel-figures", Static)
            text = str(figures.render())
            lines = text.splitlines()
            assert lines and max(len(line) for line in lines) <= figures.content_region.width
            assert max(len(line) for line in lines) >= width - 12  # drawn to the new width, not the old
