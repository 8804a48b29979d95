"""Every screen usable at 80×24 (issue 44 §5): the columns a reader needs first stay in view, a table wider than the
terminal says that it scrolls and how much is out of view, and the arrow keys scroll it without a Tab first.
Pilot assertions on what is drawn, and snapshots at 80×24 of Compare, the runs list, a run's trajectories and the
Panel's Table 2."""

from __future__ import annotations

from tui_support import make_app, settle

from storage import Store
from workbench.tui.screens.compare import CompareScreen
from workbench.tui.screens.panel import PanelScreen

SIZE = (80, 24)
LONG = "heuristic-seed0-baseline"  # 24 cells: a name as people give them


def screen_lines(app) -> list[str]:
    """The screen as drawn, one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def drawn(app) -> str:
    return "\n".join(screen_lines(app))


def name_and_tag(db) -> None:
    """heur-s0 renamed to a 24-cell name; every run tagged with a family and tier (family names as short as the
    paper's: GPT, Claude, Qwen)."""
    store = Store(db)
    store.rename_run("heur-s0", LONG)
    for run in store.runs():
        tier = "open-frontier" if run["name"] == "random-s1" else "closed-frontier"
        store.update_run(run["id"], family="Alpha", tier=tier)
    store.close()


async def open_compare(pilot, app) -> CompareScreen:
    await settle(pilot, app)
    app.compare_runs("heur-s0", "scripted-[b]llm[/b]")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, CompareScreen) and screen.report is not None
    return screen


async def scroll_right_to_the_end(pilot, app, hint: str) -> None:
    """→ until the hint says nothing more is to the right (the bound only keeps a broken screen from hanging)."""
    for _ in range(40):
        if "more column" not in str(app.screen.query_one(hint).render()):
            return
        await pilot.press("right")
        await settle(pilot, app, rounds=1)
    raise AssertionError("the hint still says there is more to the right")


async def test_compare_axes_keep_the_axis_say_they_scroll_and_scroll_with_the_arrows(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, app)
        axes = screen.query_one("#compare-axes")
        assert app.focused is axes  # ←/→ scroll it at once, no Tab first
        hint = str(screen.query_one("#compare-axes-hint").render())
        assert "more column" in hint and "→" in hint
        await scroll_right_to_the_end(pilot, app, "#compare-axes-hint")
        text = drawn(app)
        assert "Holm p" in text and "McNemar p" in text  # the last columns reached
        assert "accuracy" in text and "PR st" in text  # the axis names stayed
        assert axes.scroll_x > 0


async def test_compare_agreement_list_shows_both_runs(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, app)
        await pilot.press("2")
        await settle(pilot, app)
        items = screen.query_one("#compare-items")
        assert items.row_count
        first = [str(c) for c in items.get_row_at(0)]
        line = next(line for line in screen_lines(app) if first[0] in line)
        assert first[2] in line and first[3] in line, line  # A's outcome and B's, whole


async def test_runs_list_keeps_a_long_name_whole_and_its_tag(seeded):
    name_and_tag(seeded)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        line = next(line for line in screen_lines(app) if " heur" in line)
        assert LONG in line and "[Alpha · closed]" in line, line
        assert line.rstrip().endswith("done")  # STATE still in view


async def test_trajectories_keep_the_item_say_they_scroll_and_reach_the_cost(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_run("scripted-[b]llm[/b]")  # tokens measured, costs: every column is shown
        await settle(pilot, app)
        table = app.screen.query_one("#trajectory-table")
        assert app.focused is table
        item = table.rows[0][0]
        hint = str(app.screen.query_one("#trajectory-table-hint").render())
        assert "more column" in hint
        await scroll_right_to_the_end(pilot, app, "#trajectory-table-hint")
        text = drawn(app)
        assert "COST" in text and "RECALL" in text and item in text  # the item column stayed


async def test_panel_table_2_scrolls_with_the_arrows_and_says_so(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        app.open_panel(["heur-s0", "random-s1", "scripted-[b]llm[/b]"])
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, PanelScreen) and screen.panel is not None
        table = screen.query_one("#panel-table2")
        assert app.focused is table
        assert "more column" in str(screen.query_one("#panel-table2-hint").render())
        await scroll_right_to_the_end(pilot, app, "#panel-table2-hint")
        assert table.scroll_x > 0
        text = drawn(app)
        assert "MaxBudget" in text and "random-s1" in text  # the last column reached, the runs still named


# ------------------------------------------------------------ snapshots at 80×24


async def _idle(pilot):
    await settle(pilot, pilot.app)


def test_runs_list_at_80x24(snap_compare, seeded):
    name_and_tag(seeded)
    assert snap_compare(make_app(), terminal_size=SIZE, run_before=_idle)


def test_compare_axes_at_80x24(snap_compare, seeded):
    async def run_before(pilot):
        await open_compare(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_compare_agreement_at_80x24(snap_compare, seeded):
    async def run_before(pilot):
        await open_compare(pilot, pilot.app)
        await pilot.press("2")
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_trajectories_at_80x24(snap_compare, seeded):
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        pilot.app.open_run("scripted-[b]llm[/b]")
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_panel_table_2_at_80x24(snap_compare, seeded):
    async def run_before(pilot):
        await settle(pilot, pilot.app)
        pilot.app.open_panel(["heur-s0", "random-s1", "scripted-[b]llm[/b]"])
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


async def test_compare_names_the_row_under_the_cursor_in_words(seeded):
    """`PR st`, `Conv st marginal`: the paper's short names, said in words under the table for the row under the
    cursor (issue 44 §17: the legend was a key away)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, app)
        words = screen.query_one("#compare-axis-words")
        assert str(words.render()).startswith("accuracy = items answered right")
        await pilot.press("down")
        await settle(pilot, app)
        assert "PR st = paper recall" in str(words.render()) and "single-target" in str(words.render())
        rows = [str(key.value) for key in screen.query_one("#compare-axes").rows]
        for _ in range(rows.index("Conv st marginal") - 1):
            await pilot.press("down")
        await settle(pilot, app)
        assert "each run's conversion over its own recalled items" in str(words.render())
        assert "each run's conversion" in drawn(app)  # on screen at 80×24, not below the fold


async def test_a_second_dataset_brings_the_data_column_back_and_the_cursor_stays(seeded):
    """DATA is said once in the title while every run is on one dataset; a run on another brings the column back,
    the cursor on the run it was on."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        screen = app.screen
        assert "dataset" not in screen.keys and "every run on builtin" in str(screen.query_one("#runs-title").render())
        await pilot.press("down", "down")
        await settle(pilot, app)
        here = screen.current_name()
        store = Store(seeded)
        store.update_run(store.run("heur-s0")["id"], dataset="/data/release-b")
        store.close()
        screen.reload(force=True)
        await settle(pilot, app)
        assert "dataset" in screen.keys and "every run on" not in str(screen.query_one("#runs-title").render())
        assert screen.current_name() == here
        assert any("release-b" in line for line in screen_lines(app))
