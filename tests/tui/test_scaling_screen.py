"""The scaling screen over a store built by the real CLI (`scale sequential` and `scale parallel`).

The store is built once per module (about 4 s) and copied into each test's tmp dir. The
screen's numbers must be exactly the engine's: the plateau's with the same bootstrap
size and seed, the parallel report's with the same offline judge and seed.
"""

from __future__ import annotations

import asyncio
import csv
import itertools
import json
import math
import shutil
import threading
from pathlib import Path

import pytest
from textual.widgets import DataTable
from tui_support import make_app, settle, until

from workbench.service.scaling.results import compute_parallel
from workbench.tui.screens.scaling import ScalingScreen
from workbench.tui.widgets.plot import PALETTE_VARIABLES, PlotView, theme_palette
from workbench.views.figures import plateau_figure
from workbench.views.scaling import cost_cells, flags, level_cells, parallel_cells, transition_cells

SIZE = (120, 36)
BOOT = {"n_boot": 2000, "seed": 0}


@pytest.fixture(scope="module")
def scaling_store_file(tmp_path_factory, builtin_cache) -> Path:
    from workbench.cli import main

    db = str(tmp_path_factory.mktemp("scaling") / "store.sqlite")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTHOP_DB", db)
        mp.setenv("AGENTHOP_CACHE", str(builtin_cache))
        mp.setenv("AGENTHOP_CONFIG", str(Path(db).with_name("config.toml")))
        assert (
            main(
                [
                    "--batch",
                    "scale",
                    "sequential",
                    "--axis",
                    "points",
                    "--grid",
                    "6,18,30",
                    "--run",
                    "g",
                    "--db",
                    db,
                    "--quiet",
                    "--limit",
                    "12",
                    "--boot",
                    "2000",
                ]
            )
            == 0
        )
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
                    db,
                    "--quiet",
                    "--limit",
                    "8",
                    "--agent",
                    "random",
                    "--seed",
                    "3",
                ]
            )
            == 0
        )
    return Path(db)


@pytest.fixture
def scaling_store(tmp_path, scaling_store_file) -> Path:
    target = tmp_path / "store.sqlite"
    shutil.copy(scaling_store_file, target)
    return target


def scaling_app():
    """The app on its runs screen; `g` opens a scaling screen with the CLI's bootstrap size (B = 2000)."""
    app = make_app()
    app.action_scaling = lambda: app.push_screen(ScalingScreen(plateau_options=BOOT))
    return app


def engine_plateau(store_path: Path) -> dict:
    from storage import Store
    from workbench.service import scaling

    store = Store(store_path)
    try:
        levels = scaling.sequential_group(store, "g")
        budgets, items, matrix = scaling.group_scores(levels)
        result = scaling.plateau_result(budgets, items, matrix, **BOOT)
        result["levels"] = scaling.group_levels(store, levels)
        return result
    finally:
        store.close()


def engine_parallel(store_path: Path, cache: Path) -> dict:
    from sandbox.datasets import open_dataset
    from sandbox.judges import EvidenceJudge
    from storage import Store
    from workbench.service import scaling

    corpus, _ = open_dataset("builtin", cache)
    store = Store(store_path)
    try:
        return asyncio.run(scaling.parallel_report(store, "p", corpus, [1, 2, 4], EvidenceJudge(), seed=3))
    finally:
        store.close()
        corpus.close()


def table_rows(screen, table_id: str) -> list[list[str]]:
    table = screen.query_one(table_id, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def test_plateau_and_parallel_tables_equal_the_engine(scaling_store, builtin_cache, tmp_path, monkeypatch):
    import workbench.service.scaling.results as module

    release = threading.Event()

    def held(*args, **kwargs):  # the worker waits until the test has seen the loading indicator (no timeout:
        release.wait()  # a test slower than one let the result in before it looked)
        return compute(*args, **kwargs)

    def loading() -> bool:
        body = app.screen.query("#scaling-body") if isinstance(app.screen, ScalingScreen) else None
        return bool(body) and body.first().loading

    compute = module.compute_plateau
    monkeypatch.setattr(module, "compute_plateau", held)
    app = scaling_app()
    async with app.run_test(size=SIZE) as pilot:
        try:
            await settle(pilot, app)
            await pilot.press("g")
            await until(pilot, loading)  # the indicator shows while the worker computes (it is held until then)
        finally:
            release.set()
        await settle(pilot, app)
        screen = app.screen
        assert not screen.query_one("#scaling-body").loading
        assert isinstance(screen, ScalingScreen) and screen.shown.name == "g"
        expected = engine_plateau(scaling_store)
        assert screen.result["transitions"] == expected["transitions"]
        assert screen.result["k_star"] == expected["k_star"]
        assert table_rows(screen, "#scaling-table") == [transition_cells(t) for t in expected["transitions"]]
        levels = table_rows(screen, "#scaling-levels")
        assert [r[0] for r in levels] == ["6", "18", "30"]
        assert levels == [level_cells(lv) for lv in expected["levels"]]
        assert [r[2] for r in levels] == [f"{100 * lv['accuracy']:.1f}%" for lv in expected["levels"]]
        caption = str(screen.query_one("#scaling-caption").render())
        assert f"plateau at {expected['plateau_budget']}" in caption
        assert all(flag in caption for flag in flags(expected))

        await pilot.press("down", "enter")
        await settle(pilot, app)
        assert screen.shown.name == "p"
        report = await asyncio.to_thread(engine_parallel, scaling_store, builtin_cache)  # it runs its own loop
        rows = table_rows(screen, "#scaling-table")
        assert [r[1].split("\n")[0] for r in rows] == [f"{100 * r['pass_at_k']:.1f}%" for r in report["per_k"]]
        assert rows == [parallel_cells(report, r, compact=True) for r in report["per_k"]]
        costs = table_rows(screen, "#scaling-levels")
        assert costs == [cost_cells(report, r) for r in report["per_k"]]
        assert all(
            ("no variation" if r["gap_majority_ci_no_variation"] else f"{100 * r['gap_majority_ci'][0]:.1f}–")
            in row[-3]
            for r, row in zip(report["per_k"], rows, strict=True)
        )
        assert [r["pass_at_k"] for r in screen.result["per_k"]] == [r["pass_at_k"] for r in report["per_k"]]

        await pilot.press("e")
        await pilot.pause()
        box = app.screen.query_one("#name-input")
        box.value = str(tmp_path / "p.csv")
        await pilot.press("enter")
        await pilot.pause()
        written = list(csv.DictReader((tmp_path / "p.csv").read_text().splitlines()))
        assert [float(r["pass_at_k"]) for r in written] == [r["pass_at_k"] for r in report["per_k"]]

        await pilot.press("e")
        await pilot.pause()
        await pilot.press("enter")  # the default: ./scaling-p.json
        await pilot.pause()
        assert json.loads((tmp_path / "scaling-p.json").read_text())["per_k"] == json.loads(json.dumps(report["per_k"]))
        await pilot.press("escape")
        await pilot.pause()
        assert type(app.screen).__name__ == "RunsScreen"


async def test_plot_follows_the_widget_size(scaling_store):
    app = scaling_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("g")
        await settle(pilot, app)
        plot = app.screen.query_one(PlotView)
        before = plot.content_size
        await pilot.resize_terminal(100, 44)
        await settle(pilot, app)
        after = plot.content_size
        assert after != before
        lines = plot.text.plain.splitlines()
        assert len(lines) == after.height and max(len(line) for line in lines) <= after.width

        def colours() -> set[str]:
            return {
                span.style.color.triplet.hex
                for span in plot.text.spans
                if not isinstance(span.style, str) and span.style.color and span.style.color.triplet
            }

        dark = colours()
        assert app.theme_variables["primary"].lower() in dark  # the theme's RGB, not plotext's palette
        app.theme = "agenthop-light"
        await settle(pilot, app)
        assert colours() and colours() != dark  # rebuilt in the new theme's colours
        app.theme = "ansi-dark"
        await settle(pilot, app)
        assert theme_palette(app.theme_variables) is None and colours() == set()  # terminal-native: colourless


def test_colourless_figure_names_the_signs():
    result = {
        "budgets": ["a", "b", "c"],
        "accuracy": [0.2, 0.5, 0.5],
        "k_star": 2,
        "plateau_budget": "b",
        "censored": False,
        "no_significant_gain": False,
        "transitions": [
            {"from": "a", "to": "b", "c_k": 0.1, "significant": True, "borderline": False},
            {"from": "b", "to": "c", "c_k": -0.2, "significant": False, "borderline": True},
        ],
    }
    text = plateau_figure(result, 80, 24, None)
    assert "\x1b[" not in text
    assert "a→b gain" in text and "b→c borderline" in text and "plateau b" in text
    assert theme_palette({name: "#102030" for name in PALETTE_VARIABLES.values()})["gain"] == (16, 32, 48)
    assert theme_palette({name: "ansi_blue" for name in PALETTE_VARIABLES.values()}) is None


def test_bars_are_coloured_by_the_decision_and_untested_ones_have_none():
    gain, loss = (10, 200, 30), (220, 20, 40)
    palette = {"line": (1, 1, 1), "gain": gain, "loss": loss, "mark": (2, 2, 2), "shade": (3, 3, 3)}
    result = {
        "budgets": ["a", "b", "c"],
        "accuracy": [0.2, 0.3, 0.5],
        "k_star": 1,
        "plateau_budget": "a",
        "transitions": [
            {"from": "a", "to": "b", "c_k": 0.02, "significant": False, "borderline": False},
            {"from": "b", "to": "c", "c_k": None, "significant": False, "tested": False, "borderline": False},
        ],
    }
    text = plateau_figure(result, 80, 24, palette)
    assert "38;2;220;20;40" in text and "38;2;10;200;30" not in text  # C_k > 0 but not significant: the loss colour
    plain = plateau_figure(result, 80, 24, None)
    assert "a→b no gain" in plain and "b→c not tested" in plain


def test_unknown_run_is_an_error_not_a_crash(scaling_store, builtin_cache):
    from workbench.tui.corpora import CorpusCache

    cache = CorpusCache(builtin_cache)
    try:
        with pytest.raises(Exception, match="no run named"):
            compute_parallel(scaling_store, cache.corpus, "missing")
    finally:
        cache.close()


# ---------------------------------------------------------------- snapshots (deterministic: fixed store and seeds)


async def _open_scaling(pilot, down: int = 0):
    await settle(pilot, pilot.app)
    await pilot.press("g")
    await settle(pilot, pilot.app)
    if down:
        await pilot.press(*["down"] * down, "enter")
        await settle(pilot, pilot.app)


def test_plateau_view(snap_compare, scaling_store):
    assert snap_compare(scaling_app(), terminal_size=SIZE, run_before=_open_scaling)


def test_parallel_view(snap_compare, scaling_store):
    async def run_before(pilot):
        await _open_scaling(pilot, down=1)

    assert snap_compare(scaling_app(), terminal_size=SIZE, run_before=run_before)


async def test_remapped_key_palette_entry_and_help(scaling_store):
    from workbench.tui.commands import WorkbenchCommands
    from workbench.tui.screens.help import key_rows

    app = make_app(keymap={"runs.scaling": "G", "scaling.export": "x"})
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        titles = [title for title, _, _ in WorkbenchCommands(app.screen).commands()]
        assert "Scaling…" in titles and "Runs: Scaling" in titles
        await pilot.press("g")
        await pilot.pause()
        assert type(app.screen).__name__ == "RunsScreen"  # g was remapped away
        await pilot.press("G")
        await settle(pilot, app)
        assert isinstance(app.screen, ScalingScreen)
        rows = {ident: keys for _, keys, _, ident in key_rows(app.screen)}
        assert rows["scaling.export"] == "x" and "scaling.show" in rows and "scaling.back" in rows


async def test_an_unavailable_corpus_is_reported_on_screen(scaling_store):
    app = scaling_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)

        def unavailable(dataset: str):
            raise LookupError(f"corpus unavailable ({dataset} moved)")

        app.corpora.corpus = unavailable
        await pilot.press("g")
        await settle(pilot, app)
        await pilot.press("down", "enter")
        await settle(pilot, app)
        screen = app.screen
        assert screen.result is None and not screen.query_one("#scaling-body").loading
        assert "corpus unavailable (builtin moved)" in str(screen.query_one("#scaling-caption").render())
        assert not screen.query_one("#scaling-table").display
        await pilot.press("e")
        await pilot.pause()
        assert isinstance(app.screen, ScalingScreen)  # nothing to export: no dialog


def test_a_run_judged_by_a_model_is_read_from_its_stored_verdicts_only(tmp_path, builtin_cache):
    """The screen used to judge every run with the offline evidence judge, writing evidence verdicts into a run
    judged with `--judge same`. It now reads the recorded judge's stored verdicts and never asks a model."""
    import os
    import subprocess
    import sys

    from tests.openai_server import FakeOpenAI, text_reply, tool_reply
    from workbench.tui.corpora import CorpusCache

    def brain(req, n):
        if not req.get("tools"):
            return text_reply("<judgment>Wrong</judgment> <choice>1</choice>")
        return tool_reply(("submit_answer", {"answer": "ABCD"[n % 4], "reasoning": "r"}))

    db = tmp_path / "llm.sqlite"
    with FakeOpenAI(brain) as srv:
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "workbench.cli",
                "--batch",
                "scale",
                "parallel",
                "--k",
                "1,2",
                "--agent",
                "llm",
                "--model",
                "openai/m",
                "--base-url",
                srv.url,
                "--limit",
                "3",
                "--run",
                "L",
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
                "--judge",
                "same",
                "--orders",
                "2",
            ],
            capture_output=True,
            text=True,
            env=dict(os.environ, OPENAI_API_KEY="sk-test"),
            cwd=Path(__file__).resolve().parents[2],
        )  # this tree's code, not an installed copy
        assert proc.returncode == 0, proc.stderr
        asked = len(srv.requests)
    printed = json.loads(proc.stdout)
    from storage import Store

    def judgments() -> list[tuple]:
        store = Store(db)
        try:
            return [tuple(r) for r in store.conn.execute("SELECT judge, kind, COUNT(*) FROM judgments GROUP BY 1, 2")]
        finally:
            store.close()

    before = judgments()
    cache = CorpusCache(builtin_cache)
    try:
        shown = compute_parallel(db, cache.corpus, "L")  # the server is gone: any call would fail
        assert judgments() == before and all(judge == "llm:openai/m" for judge, _, _ in before)
        from workbench.views.scaling import verdicts_note

        assert shown["judge"] == "llm:openai/m" and shown["verdicts"] == "stored" and shown["verdicts_missing"] == 0
        assert shown["per_k"] == printed["per_k"]  # exactly what the CLI printed
        assert "stored verdicts (never asked from here)" in verdicts_note(shown)
        store = Store(db)
        with store.transaction():
            store.conn.execute("DELETE FROM judgments WHERE kind = 'pairwise'")
        store.close()
        partial = compute_parallel(db, cache.corpus, "L")
        assert partial["verdicts_missing"] > 0 and "pointwise" not in partial["per_k"][0]
        assert partial["per_k"][0]["majority"] == printed["per_k"][0]["majority"]
        assert "missing, so pointwise and pairwise are not shown" in verdicts_note(partial)
        assert [row for row in judgments() if row[1] == "pairwise"] == []  # still nothing asked or written
    finally:
        cache.close()
    assert asked > 0


async def test_the_parallel_plot_has_a_legend_distinct_markers_room_and_no_unpriced_scripted_costs(scaling_store):
    """The plot was 8 rows tall with four unlabelled series drawn with the same marker (indistinguishable without
    colour), and a scripted run (`p`, the random agent) read `unpriced` in every cost cell."""
    import re

    app = scaling_app()
    async with app.run_test(size=SIZE) as pilot:
        await _open_scaling(pilot, down=1)
        screen = app.screen
        plot = screen.query_one(PlotView)
        assert plot.content_size.height >= 16
        app.theme = "ansi-dark"  # terminal-native colours: the figure is drawn without any
        await settle(pilot, app)
        text = plot.text.plain
        assert not plot.text.spans
        for legend in ("oo pass@k", "xx majority", "++ pointwise", "** pairwise"):
            assert legend in text
        assert not re.search(r"-0\.0*┤", text)
        costs = [
            " ".join(str(c) for c in screen.query_one("#scaling-levels", DataTable).get_row_at(i)) for i in range(3)
        ]
        assert all("unpriced" not in row and "— · —" in row for row in costs)
        caption = str(screen.query_one("#scaling-caption").render())
        assert "sampling — (scripted agent: no model, cost and tokens not measured)" in caption


# ---------------------------------------------------------------- figures at 80×24: values apart, ticks even


def figure_panels(text: str) -> list[dict]:
    """The panels of a plotext figure as drawn: each one's canvas rows (bottom first), its y tick labels by row
    and the columns of its x ticks (the ┬ / ┴ of its bottom frame)."""
    lines = text.splitlines()
    panels = []
    for top, line in enumerate(lines):
        if "┌" not in line:
            continue
        bottom = next(i for i in range(top + 1, len(lines)) if "└" in lines[i])
        left = line.index("┌")
        canvas = [row.ljust(len(line)) for row in lines[top + 1 : bottom]][::-1]
        ticks = {r: row[:left].strip() for r, row in enumerate(canvas) if row[left] == "┤"}
        frame = lines[bottom]
        panels.append(
            {"canvas": canvas, "left": left, "yticks": ticks, "xticks": [c for c, ch in enumerate(frame) if ch in "┬┴"]}
        )
    return panels


def drawn_row(panel: dict, value: float) -> int:
    """The row plotext puts `value` on, over the axis the panel's tick labels state (row 0 is the bottom one)."""
    (r0, l0), (r1, l1) = list(panel["yticks"].items())[:2]
    step = (float(l1) - float(l0)) / (r1 - r0)
    lo, rows = float(l0) - r0 * step, len(panel["canvas"])
    hi = lo + (rows - 1) * step
    return math.floor(round(0.5 + (rows - 1) * (value - lo) / (hi - lo), 8))


def assert_even_ticks(panel: dict) -> None:
    rows = sorted(panel["yticks"])
    values = [float(panel["yticks"][r]) for r in rows]
    assert len(rows) >= 2 and len({b - a for a, b in itertools.pairwise(rows)}) == 1, panel["yticks"]  # evenly spaced
    steps = [b - a for a, b in itertools.pairwise(values)]
    assert max(steps) - min(steps) < 1e-9 and steps[0] > 0, panel["yticks"]  # by one value step
    assert not any(label.startswith("-") and float(label) == 0 for label in panel["yticks"].values())


@pytest.mark.parametrize("size", [(80, 24), (120, 36), (100, 44)])
async def test_the_plateau_plot_draws_different_values_on_different_rows_and_bars(scaling_store, size):
    """At 80×24 the two panels had two rows each: 58% and 67% shared a row, C_k +0.056 and −0.072 were bars of one
    height, and the ticks read 0.17 / 0.67. Each panel now has the rows its values need (the body scrolls)."""
    app = scaling_app()
    async with app.run_test(size=size) as pilot:
        await _open_scaling(pilot)
        screen = app.screen
        plot = screen.query_one(PlotView)
        result = screen.result
        upper, lower = figure_panels(plot.text.plain)
        assert plot.content_size.height == len(plot.text.plain.splitlines())  # all of the figure is on screen
    accuracy = result["accuracy"]
    assert len(set(accuracy)) == 3  # the built-in group: 1/6, 7/12, 2/3
    rows = [drawn_row(upper, v) for v in accuracy]
    assert len(set(rows)) == len(set(accuracy))
    for row, column in zip(rows, upper["xticks"], strict=True):  # each budget's point is where its value says
        assert upper["canvas"][row][column] == "•"
    bounds = [t["c_k"] for t in result["transitions"]]
    heights = [sum(row[column] == "█" for row in lower["canvas"]) for column in lower["xticks"]]
    zero = drawn_row(lower, 0.0)
    assert heights == [abs(drawn_row(lower, b) - zero) + 1 for b in bounds]
    assert len(set(heights)) == len({abs(b) for b in bounds}) == 2  # +0.056 and −0.072: two heights
    for panel in (upper, lower):
        assert_even_ticks(panel)


async def test_the_parallel_plot_draws_different_values_on_different_rows_at_80x24(scaling_store):
    app = scaling_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await _open_scaling(pilot, down=1)
        report = app.screen.result
        [panel] = figure_panels(app.screen.query_one(PlotView).text.plain)
    names = [n for n in ("pass_at_k", "majority", "pointwise", "pairwise") if n in report["per_k"][0]]
    values = {round(r[n], 12) for r in report["per_k"] for n in names}
    assert len({drawn_row(panel, v) for v in values}) == len(values) > 4
    assert_even_ticks(panel)
