"""The compare screen and the split stepper, driven by Pilot over the seeded store; snapshots of both."""

from __future__ import annotations

from textual.widgets import DataTable
from tui_support import make_app, settle

from storage import Store
from tests.textual_private import messages
from workbench.service.reports import compare_report
from workbench.tui.screens.compare import CompareScreen, RunPairModal, SplitStepperScreen
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.widgets.transcript import group_turns
from workbench.views.compare import compare_document, compare_rows, separation_sentence

SIZE = (120, 36)


def cell_texts(table: DataTable) -> list[tuple[str, ...]]:
    return [tuple(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]


def ledgers(store: Store, tid: int) -> list[tuple[int, int, int]]:
    return [(g[-1]["points_used"], g[-1]["turn"], g[-1]["tokens"]) for g in group_turns(store.steps(tid))]


async def open_compare(pilot, app) -> CompareScreen:
    """Mark heur-s0 (first row) and random-s1 (fourth) with space, then `c`."""
    await settle(pilot, app)
    await pilot.press("space", "down", "down", "down", "space", "c")
    await settle(pilot, app)
    screen = app.screen
    assert isinstance(screen, CompareScreen) and screen.report is not None
    return screen


async def test_compare_shows_the_batch_numbers_and_steps_two_trajectories(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, app)
        want = compare_report(app.store, "heur-s0", "random-s1")
        assert (screen.a, screen.b) == ("heur-s0", "random-s1") and want["n_common"] == 5
        assert cell_texts(screen.query_one("#compare-axes", DataTable)) == compare_rows(want)
        assert str(screen.query_one("#compare-summary").render()) == separation_sentence(want["separation"])

        # the agreement grid: its counts, then the items of the cell A-right/B-wrong
        await pilot.press("2")
        grid = screen.query_one("#compare-grid", DataTable)
        counts = [[int(str(c)) for c in row[1:]] for row in cell_texts(grid)]
        ag = want["agreement"]
        assert counts == [[ag["both_right"]["n"], ag["only_a"]["n"]], [ag["only_b"]["n"], ag["both_wrong"]["n"]]]
        cell = next(c for c in ("only_a", "both_wrong", "both_right", "only_b") if ag[c]["n"])
        row, col = {"both_right": (0, 1), "only_a": (0, 2), "only_b": (1, 1), "both_wrong": (1, 2)}[cell]
        grid.move_cursor(row=row, column=col)
        await pilot.press("enter")
        items = screen.query_one("#compare-items", DataTable)
        assert [str(k.value) for k in items.rows] == ag[cell]["items"] and items.has_focus

        # enter on the first item: both trajectories, stepped together, meters from each stored ledger
        await pilot.press("enter")
        await settle(pilot, app)
        split = app.screen
        assert isinstance(split, SplitStepperScreen)
        pair = want["items"][ag[cell]["items"][0]]
        expected = {side: ledgers(app.store, pair[side]["id"]) for side in ("a", "b")}
        longest = max(len(e) for e in expected.values())
        for k in range(longest + 1):
            for side in ("a", "b"):
                r = split.view(side).meter_readings()
                assert (r["points"][0], r["turns"][0], r["tokens"][0]) == expected[side][
                    min(k, len(expected[side]) - 1)
                ]
            await pilot.press("right")
        await pilot.press("0")
        await pilot.press("L")  # only the focused side (A) moves
        assert split.view("a").position == min(1, len(expected["a"]) - 1) and split.view("b").position == 0
        assert split.ctx is not None and split.ctx.item is not None
        await pilot.press("escape")
        assert app.screen is screen
        await pilot.press("x")  # swap the sides
        await settle(pilot, app)
        assert (screen.a, screen.b) == ("random-s1", "heur-s0")
        assert cell_texts(screen.query_one("#compare-axes", DataTable)) == compare_rows(
            compare_report(app.store, "random-s1", "heur-s0")
        )


async def test_compare_needs_two_marked_runs_and_the_picker_refuses_one_run_twice(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("c")
        assert isinstance(app.screen, RunsScreen)  # nothing marked: a warning, no screen
        app.action_compare()
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RunPairModal)
        modal.query_one("#pair-b").value = modal.query_one("#pair-a").value
        await pilot.pause()
        await pilot.click("#ok")
        assert app.screen is modal and "different" in str(modal.query_one("#pair-error").render())
        modal.query_one("#pair-b").value = "oracle-nosearch"
        await pilot.pause()
        modal.query_one("#ok").press()  # (a second click within the button's press effect is ignored)
        await settle(pilot, app)
        assert isinstance(app.screen, CompareScreen) and app.screen.b == "oracle-nosearch"


def test_compare_snapshot(snap_compare, seeded):
    async def run_before(pilot):
        await open_compare(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_split_stepper_snapshot(snap_compare, seeded):
    async def run_before(pilot):
        await open_compare(pilot, pilot.app)
        await pilot.press("2", "enter", "enter")
        await settle(pilot, pilot.app)
        await pilot.press("right", "right", "g")
        await settle(pilot, pilot.app)

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


async def test_the_palette_s_compare_starts_from_the_runs_marked_and_failures_show_the_differences(seeded):
    from workbench.views.compare import attribution_rows

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, app)
        await pilot.press("down", "space", "down", "down", "space")  # mark oracle-nosearch and random-s1
        app.action_compare()  # what the palette's "Compare two runs…" runs
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, RunPairModal)
        assert (modal.query_one("#pair-a").value, modal.query_one("#pair-b").value) == ("oracle-nosearch", "random-s1")
        modal.query_one("#ok").press()
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and (screen.a, screen.b) == ("oracle-nosearch", "random-s1")
        await pilot.press("4")
        await pilot.pause()
        shown = screen.query_one("#compare-failures").content  # the rich Table
        lines = [" ".join(str(c) for c in col.cells) for col in shown.columns]
        want = attribution_rows(compare_report(app.store, "oracle-nosearch", "random-s1"))
        for i, cells in enumerate(
            zip(*want, strict=True)
        ):  # every column of the attribution block, as --batch compare prints it
            assert " ".join(cells) in lines[i]
        assert any("Δ rate (B−A)" in str(col.header) for col in shown.columns)


async def test_export_asks_for_a_path_confirms_a_replace_and_names_the_full_path(seeded, tmp_path, monkeypatch):
    """`e` used to write compare-A-vs-B.json into the working directory without asking and toast the bare name;
    then it offered the working directory while every other TUI export offered `export_dir()`."""
    import json

    from textual.widgets import Input

    from workbench.tui.screens.dialogs import ExportModal

    monkeypatch.setenv("AGENTHOP_EXPORTS", str(tmp_path / "exports"))  # not the working directory (tmp_path)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, app)
        await pilot.press("e")
        await pilot.pause()
        modal = app.screen
        assert isinstance(modal, ExportModal) and not list(tmp_path.glob("*.json"))  # nothing written yet
        assert modal.query_one("#export-path", Input).value == str(
            tmp_path / "exports" / "compare-heur-s0-vs-random-s1.json"
        )
        assert not modal.query_one("#export-steps").display
        modal.query_one("#export-path", Input).value = "out/cmp.json"  # relative: the toast names it in full
        await pilot.press("enter")
        await settle(pilot, app)
        target = tmp_path / "out" / "cmp.json"
        assert app.screen is screen
        assert json.loads(target.read_text()) == json.loads(json.dumps(compare_document(screen.report), default=str))
        assert any(str(target) in m for m in messages(app))

        target.write_text("keep me\n")  # again to the same file: asked first, no keeps it
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(target)
        await pilot.press("enter")
        await pilot.pause()
        assert "exists. Replace it" in str(app.screen.query_one(".dialog-message").render())
        await pilot.press("n")
        await pilot.press("escape")
        await settle(pilot, app)
        assert target.read_text() == "keep me\n" and app.screen is screen


async def test_the_split_stepper_lands_each_side_on_the_turn_s_tool_call(seeded):
    """As in the stepper: `$` put both cursors on the bodyless assistant line; y copied only its header."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await open_compare(pilot, app)
        await pilot.press("2", "enter", "enter")
        await settle(pilot, app)
        split = app.screen
        assert isinstance(split, SplitStepperScreen)
        await pilot.press("dollar_sign")
        for side in ("a", "b"):
            view = split.view(side)
            entry = view.transcript.cursor_entry
            tools = [s for s in view.turns[-1] if s["kind"] == "tool"]
            if tools:
                assert entry.kind == "tool" and entry.step == tools[0]["idx"]
        await pilot.press("y")  # the focused side, A
        assert app.clipboard == split.view("a").transcript.cursor_entry.copy_text
        assert app.clipboard.startswith("▸ ")


async def test_counts_in_the_agreement_list_and_the_stepper_read_in_the_right_number(seeded):
    import re

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_compare(pilot, app)
        await pilot.press("2")
        await pilot.pause()
        items = screen.query_one("#compare-items", DataTable)
        n = int(re.search(r"· (\d+) items?$", items.border_title).group(1))
        assert items.border_title.endswith(f"· {n} item" + ("" if n == 1 else "s"))
        for row in cell_texts(items):
            for cell in row[2:]:
                points = int(re.search(r"· (\d+) pts?$", cell).group(1))
                assert cell.endswith(f"{points} pt" + ("" if points == 1 else "s"))
        app.pop_screen()
        await pilot.pause()
        app.open_run("heur-s0")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot, app)
        text = str(app.screen.query_one("#item-text").render())
        assert "visited 1 paper · 0 reads" in text
