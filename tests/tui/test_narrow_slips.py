"""The slips of narrow and wide terminals (issue 37 §14): the runs list's tag cut in two, the re-tag dialog's title
cut, stray letters beside the palette hint under 40 columns, the Panel's r and e missing below 112 columns."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len
from tui_support import make_app, settle

from storage import Store
from workbench.tui.screens.runs import agent_cell

SIZES = [(80, 24), (160, 48)]


def screen_lines(app) -> list[str]:
    """The screen as drawn, one string per row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def tag_all(db) -> None:
    store = Store(db)
    for run in store.runs():
        tier = "open-frontier" if run["name"] == "random-s1" else "closed-frontier"
        store.update_run(run["id"], family="heuristic", tier=tier)
    store.close()


def footer_keys(app) -> set[str]:
    """The descriptions of the footer keys drawn clear of the `^p palette` hint."""
    from textual.widgets._footer import FooterKey

    keys = list(app.screen.query(FooterKey))
    [palette] = [k for k in keys if k.has_class("-command-palette")]
    return {k.description for k in keys if k is not palette and k.region.width and k.region.right <= palette.region.x}


@given(
    st.text(alphabet="abc·-/ ", min_size=1, max_size=40),
    st.sampled_from([None, "GPT", "heuristic", "A-long-family-name"]),
    st.sampled_from([None, "closed-frontier", "open-frontier"]),
    st.integers(min_value=1, max_value=60),
)
def test_the_agent_cell_fits_and_keeps_its_tag_whole_or_leaves_it_out(agent, family, tier, width):
    row = {"agent": agent, "model": None, "ablation": "full", "family": family, "tier": tier}
    cell = agent_cell(row, width)
    assert cell_len(cell) <= width
    if family or tier:
        tag = cell[cell.rfind("[") :] if "[" in cell else ""
        assert tag == "" or (tag.endswith("]") and tag.count("·") == 1), cell  # never `…stic · open]`


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_the_runs_list_never_cuts_a_tag_in_two(seeded, size):
    tag_all(seeded)
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        rows = [line for line in screen_lines(app) if line.rstrip().endswith(" done")]  # one run on each
        assert len(rows) == 4
        for line in rows:
            assert "…stic" not in line and "clo…" not in line  # the cut that read `heuristic · clo…ristic · open]`
            for end in ("closed]", "open]"):  # a tag's end is shown only with the whole tag
                assert end not in line or f"[heuristic · {end}" in line, line
        if size[0] >= 160:
            assert all(("[heuristic · closed]" in line) != ("[heuristic · open]" in line) for line in rows)


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_the_re_tag_dialog_shows_its_whole_title_and_what_it_takes(seeded, size):
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("t")
        await settle(pilot, app)
        drawn = "\n".join(screen_lines(app))
        assert "Family, tier of 'heur-s0' " in drawn  # the title ends on screen, not at the dialog's edge
        words = " ".join(drawn.replace("│", " ").split())
        assert "FAMILY, TIER · tiers: closed-frontier, open-frontier, compute-efficient · auto: from the model" in words


@pytest.mark.parametrize("width", [30, 34, 38, 39, 80])
async def test_no_stray_letter_beside_the_palette_hint(seeded, width):
    app = make_app()
    async with app.run_test(size=(width, 20)) as pilot:
        await settle(pilot, app)
        footer = screen_lines(app)[-1]
        assert footer.rstrip().endswith("^p palette") and footer.endswith("palette  "), repr(footer)


async def test_below_112_columns_the_panel_footer_keeps_pick_runs_and_export(seeded):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        app.open_panel(["heur-s0", "random-s1"])
        await settle(pilot, app)
        assert {"Pick runs", "Export", "Back", "Help"} <= footer_keys(app)
        tabs = " ".join(screen_lines(app)[:4])
        assert all(f"{n} {label}" in tabs for n, label in enumerate(("Table 2", "Fingerprints", "Tables"), 1))
        await pilot.press("3")  # the tab keys answer as before
        await settle(pilot, app)
        assert app.screen.query_one("#panel-tabs").active == "tables"
        await pilot.resize_terminal(160, 48)
        await settle(pilot, app)
        assert {"Table 2", "Fingerprints", "Pick runs", "Export", "Help"} <= footer_keys(app)


def add_runs(db, n: int) -> None:
    """`n` more runs (copies of heur-s0's row, no trajectories): more than the screen's height holds."""
    import sqlite3

    con = sqlite3.connect(db)
    cols = [r[1] for r in con.execute("PRAGMA table_info(runs)") if r[1] not in ("id", "name")]
    for i in range(n):
        con.execute(
            f"INSERT INTO runs (name, {', '.join(cols)}) SELECT ?, {', '.join(cols)} FROM runs WHERE name = 'heur-s0'",
            (f"copy-{i}",),
        )
    con.commit()
    con.close()


@pytest.mark.parametrize("size", SIZES, ids=["80x24", "160x48"])
async def test_a_runs_list_longer_than_the_screen_has_no_horizontal_scrollbar_above_the_footer(seeded, size):
    """The vertical scrollbar is 2 cells wide and the columns were fitted beside 1: a horizontal scrollbar, one
    cell of scrolling, took the row above the footer."""
    from textual.widgets import DataTable

    add_runs(seeded, size[1] + 10)
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        table = app.screen.query_one(DataTable)
        assert table.show_vertical_scrollbar and not table.show_horizontal_scrollbar
        assert table.virtual_size.width <= table.scrollable_content_region.width
        assert screen_lines(app)[-2].split()[0].startswith("copy-")  # a run's row right above the footer
