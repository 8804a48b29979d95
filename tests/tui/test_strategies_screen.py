"""The scaling screen's strategy comparison (the study's Figure 6): groups made by `scale sequential --strategy
continue,summarize,verifier` are listed as one comparison, overlaid, with the CLI's numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_support import make_app, settle

from workbench.tui.screens.scaling import ScalingScreen
from workbench.tui.widgets.plot import PlotView
from workbench.views.scaling import comparison_rows, strategy_cells

BOOT = {"n_boot": 300, "seed": 0}


@pytest.fixture(scope="module")
def strategies_store_file(tmp_path_factory, builtin_cache) -> tuple[Path, dict]:
    import contextlib
    import io

    from workbench.cli import main

    db = tmp_path_factory.mktemp("strategies") / "store.sqlite"
    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setenv("AGENTHOP_CACHE", str(builtin_cache))
        mp.setenv("AGENTHOP_CONFIG", str(db.with_name("config.toml")))
        assert (
            main(
                [
                    "--batch",
                    "scale",
                    "sequential",
                    "--axis",
                    "tokens",
                    "--grid",
                    "2k,4k,8k",
                    "--strategy",
                    "continue,summarize,verifier",
                    "--run",
                    "S",
                    "--db",
                    str(db),
                    "--quiet",
                    "--limit",
                    "3",
                    "--format",
                    "json",
                    "--boot",
                    "300",
                ]
            )
            == 0
        )
    return db, json.loads(out.getvalue())


async def test_the_comparison_is_drawn_with_the_clis_numbers(strategies_store_file, tmp_path):
    db, cli = strategies_store_file
    shutil.copy(db, tmp_path / "store.sqlite")
    app = make_app()
    app.action_scaling = lambda: app.push_screen(ScalingScreen(plateau_options=BOOT))
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        screen = app.screen
        assert screen.shown.kind == "strategies" and screen.shown.name == "S"
        table = screen.query_one("#scaling-table", DataTable)
        rows = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows == [strategy_cells(r) for r in comparison_rows(cli)]  # the same numbers as `scale sequential`
        assert [s["k_star"] for s in screen.result["studies"]] == [s["k_star"] for s in cli["studies"]]
        plot = screen.query_one(PlotView).text.plain
        for study in cli["studies"]:
            assert f"{study['strategy']} (k*={study['k_star']}: {study['plateau_budget']})" in plot
        caption = str(screen.query_one("#scaling-caption").render())
        assert "summarize (S.summarize): k* =" in caption
