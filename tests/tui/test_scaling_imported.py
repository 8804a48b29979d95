"""The Scaling screen shows a parallel study imported from a scores file as it shows a sampled one: the same tables
as `scale parallel --scores` prints (the CLI's JSON, read in the test), the study's readings beside ours, and a bad
file named in a notice with nothing else changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_support import make_app, settle

from tests.cli_inprocess import batch
from workbench.tui.screens.scaling import ScalingScreen
from workbench.views.scaling import cost_cells, judge_cells, parallel_cells, study_cells

DATA = Path(__file__).parents[1] / "data" / "general-agentbench-parallel.json"
SIZE = (120, 36)


def rows_of(screen, table_id: str) -> list[list[str]]:
    table = screen.query_one(table_id, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def one_study(tmp_path: Path, name: str) -> Path:
    """A scores file of one study cut from the released data (the screen reads whole files)."""
    data = json.loads(DATA.read_text())
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"data": {name: data["data"][name]}}))
    return path


async def _import(pilot, app, path: str) -> ScalingScreen:
    await settle(pilot, app)
    await app.push_screen(ScalingScreen())
    await settle(pilot, app)
    await pilot.press("i")
    await pilot.pause()
    app.screen.query_one("#name-input").value = path
    await pilot.press("enter")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, ScalingScreen)
    return screen


async def test_an_imported_study_shows_as_the_cli_prints_it(tmp_path, capsys):
    name = "Gemini2.5-Flash|swebench"
    path = one_study(tmp_path, name)
    done = batch(capsys, "scale", "parallel", "--scores", str(path), "--format", "json")
    (cli,) = json.loads(done.stdout)["studies"]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _import(pilot, app, str(path))
        assert screen.shown is not None and (screen.shown.kind, screen.shown.name) == ("imported", name)
        assert [str(c) for c in screen.query_one("#scaling-sources", DataTable).get_row_at(0)][1] == "file K=4"
        assert screen.result == cli
        assert rows_of(screen, "#scaling-table") == [parallel_cells(cli, r, compact=True) for r in cli["per_k"]]
        assert rows_of(screen, "#scaling-levels") == [cost_cells(cli, r) for r in cli["per_k"]]
        assert rows_of(screen, "#scaling-study") == [study_cells(cli, r, compact=True) for r in cli["study"]]
        assert rows_of(screen, "#scaling-judges") == [judge_cells(j) for j in cli["judges"]]
        caption = str(screen.query_one("#scaling-caption").render())
        assert "1 null score(s) counted 0" in caption and name in caption and "scripted agent" not in caption
        # exported as the CLI's CSV row for row
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#name-input").value = str(tmp_path / "out.json")
        await pilot.press("enter")
        await pilot.pause()
        assert json.loads((tmp_path / "out.json").read_text()) == cli


async def test_a_bad_file_is_named_and_nothing_is_imported(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": {"m": {"tasks": {"t": {"s": [True, 0]}}}}}))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await _import(pilot, app, str(bad))
        assert screen.imported == {} and screen.result is None
        notices = [str(n.message) for n in app._notifications]
        assert any(str(bad) in n and "field 's'[0]" in n and "boolean" in n for n in notices)


@pytest.fixture
def sampled(tmp_path, capsys, monkeypatch) -> dict:
    """A parallel run sampled here with one fixed pairwise order, and the report `scale parallel` printed for it."""
    monkeypatch.setenv("AGENTHOP_DB", str(tmp_path / "store.sqlite"))
    done = batch(
        capsys, "scale", "parallel", "--k", "1,2,4", "--limit", "4", "--agent", "random", "--run", "p", "--orders",
        "1", "--quiet", "--format", "json",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_a_sampled_run_shows_the_study_s_readings_as_the_cli_prints_them(sampled):
    cli = sampled
    assert [r["reading"] for r in cli["study"][0]["readings"]][:2] == ["majority", "pairwise"]
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await app.push_screen(ScalingScreen())
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ScalingScreen) and screen.shown is not None and screen.shown.name == "p"
        assert screen.result is not None and screen.result["study"] == cli["study"]
        assert rows_of(screen, "#scaling-study") == [study_cells(cli, r, compact=True) for r in cli["study"]]
        assert "random orders" not in str(screen.query_one("#scaling-caption").render())


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_import_dialog_says_all_it_says(size):
    """The dialog's title is one line, cut where it does not fit: what the field takes is said under it, whole, on
    the narrowest screen and the widest."""
    from textual.widgets import Static

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await app.push_screen(ScalingScreen())
        await settle(pilot, app)
        await pilot.press("i")
        await pilot.pause()
        title = app.screen.query_one(".dialog-title", Static)
        assert len(str(title.render())) <= title.content_region.width, str(title.render())
        hint = app.screen.query_one("#name-hint", Static)
        assert "scale parallel --scores" in str(hint.render())
        await pilot.press("escape")
