"""The Panel screen's plain model (`workbench.tui.forms.panel`), without a terminal: Table 2 as one table of group
label rows and runs, the title's marks, the tool lifts, the saved panels the picker offers and the checks of the
picker and the export dialog.

The Pilot tests (tests/tui/test_panel_screen.py, test_narrow_80x24.py, test_runs_marks_and_filter.py) keep what only
the screen shows: the tabs, the tables drawn, the figures at the pane's width, the dialogs and the keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from workbench.cli import main
from workbench.service.records.panel import PanelReport
from workbench.service.reports import panel_at
from workbench.tui.forms.panel import (
    GROUP_INDENT,
    export_problem,
    lift_lines,
    offered_panels,
    pick_problem,
    picked_runs,
    table2_rows,
    title_marks,
)
from workbench.views.lineage import grouped_table

RUNS = (("oracle", "o", "Beta", "open-frontier"), ("heuristic", "h", "Alpha", "closed-frontier"))


@pytest.fixture(scope="module")
def panel(tmp_path_factory) -> PanelReport:
    db = tmp_path_factory.mktemp("panel") / "s.sqlite"
    with pytest.MonkeyPatch.context() as mp:  # a module fixture runs before the per-test isolation of the cache
        mp.setenv("AGENTHOP_CACHE", str(tmp_path_factory.mktemp("cache")))
        for agent, name, family, tier in RUNS:
            argv = ["--batch", "run", "--agent", agent, "--run", name, "--db", str(db), "--limit", "12", "--quiet"]
            assert main(argv) == 0
            assert main(["--batch", "runs", "tag", name, "--family", family, "--tier", tier, "--db", str(db)]) == 0
        return panel_at(db, ["o", "h"])


def test_table2_is_each_group_s_label_row_then_its_runs_indented(panel):
    header, rows = table2_rows(panel)
    grouped_header, sections = grouped_table(panel)
    assert header == grouped_header and len(sections) == 2  # one group per tier and family
    expected: list[tuple[str, ...]] = []
    for label, runs in sections:
        expected.append((label, *([""] * (len(header) - 1))))
        expected += [(GROUP_INDENT + run[0], *run[1:]) for run in runs]
    assert rows == expected
    assert {row[0].strip() for row in rows if row[0].startswith(GROUP_INDENT)} == {"o", "h"}
    assert all(len(row) == len(header) for row in rows)


def test_the_title_names_the_marks_in_use(panel):
    assert title_marks({**panel, "tier_best": {}, "tier_shaded": {}}) == ""
    assert title_marks({**panel, "tier_best": {"accuracy": ["o"]}, "tier_shaded": {}}) == " · † tier leader"
    both = {**panel, "tier_best": {"accuracy": ["o"]}, "tier_shaded": {"conversion": ["o"]}}
    assert title_marks(both) == " · † tier leader · ‡ conversion separated in its tier"


def test_a_tool_lift_is_said_when_measured():
    lifts = [
        {"full": "o", "closed_book": "o-cb", "lift": 0.125},
        {"full": "h", "closed_book": "h-cb", "lift": None},
    ]
    panel = PanelReport(ablation_lift=lifts)  # type: ignore[typeddict-item]
    assert lift_lines(panel) == ["tool lift o vs o-cb: +12.5 pts"]
    assert lift_lines(PanelReport()) == []  # type: ignore[typeddict-item]


def test_the_picker_offers_saved_panels_with_two_runs_still_in_the_store_and_wants_two():
    saved = {"both": ["a", "b", "gone"], "one": ["a", "gone"], "none": []}
    assert offered_panels(saved, ["a", "b", "c"]) == {"both": ["a", "b"]}
    assert picked_runs(["a", "b", "c"], ["c", "a"]) == ["a", "c"]  # in the store's order
    assert pick_problem(["a"]) == "mark at least two runs" and pick_problem(["a", "c"]) is None


def test_the_export_file_s_directory_must_exist(tmp_path: Path):
    assert export_problem(str(tmp_path / "panel.md")) is None
    assert export_problem(str(tmp_path / "typo" / "panel.md")) == (
        f"no directory {tmp_path / 'typo'}: create it first, or choose another"
    )
