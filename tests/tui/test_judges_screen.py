"""The Scaling screen's judge measures: the judges against the truth, the study's self-choice and the spread over
judge trials, with the numbers `scale parallel --judge-trials` printed."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from textual.widgets import DataTable
from tui_support import make_app, settle

from workbench.tui.screens.scaling import ScalingScreen
from workbench.tui.widgets.plot import PlotView
from workbench.views.scaling import judge_cells, self_choice_cells, trial_cells


def rows_of(screen, table_id: str) -> list[list[str]]:
    table = screen.query_one(table_id, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


@pytest.fixture
def judged_store(tmp_path) -> dict:
    """`scale parallel` with two judge trials, into this test's store (./store.sqlite): the CLI's JSON report."""
    from workbench.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert (
            main(
                [
                    "--batch",
                    "scale",
                    "parallel",
                    "--k",
                    "1,2,4",
                    "--run",
                    "p",
                    "--db",
                    str(tmp_path / "store.sqlite"),
                    "--quiet",
                    "--limit",
                    "6",
                    "--agent",
                    "random",
                    "--seed",
                    "3",
                    "--judge-trials",
                    "2",
                    "--tie-rule",
                    "first",
                    "--format",
                    "json",
                ]
            )
            == 0
        )
    return json.loads(out.getvalue())


async def test_judges_and_trials_equal_the_cli(judged_store):
    cli = judged_store
    app = make_app()
    app.action_scaling = lambda: app.push_screen(ScalingScreen())
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        screen = app.screen
        assert screen.shown.name == "p"
        assert rows_of(screen, "#scaling-judges") == [judge_cells(j) for j in cli["judges"]]
        assert rows_of(screen, "#scaling-self-choice") == [self_choice_cells(r) for r in cli["per_k"]]
        assert rows_of(screen, "#scaling-trials") == [trial_cells(r) for r in cli["judge_trials"]["per_k"]]
        assert screen.result["majority_rule"] == "first"  # read as recorded
        assert [r["majority"] for r in screen.result["per_k"]] == [r["majority"] for r in cli["per_k"]]
        plot = screen.query_one("#scaling-judges-plot", PlotView)
        assert plot.display and "judges against the truth" in plot.text.plain
        caption = str(screen.query_one("#scaling-judges-caption").render())
        assert "2 trials of the judge" in caption
