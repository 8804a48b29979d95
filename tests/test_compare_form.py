"""The Compare screen's plain model (`workbench.tui.forms.compare`) and its store read (`reports.compare_at`),
without a terminal: the agreement grid's cells and the one it starts on, an item's outcome in words, the export's
file name and the two-run picker's check.

The Pilot tests (tests/tui/test_compare_screen.py, test_narrow_80x24.py) keep what only the screen shows: the tabs,
the grid and items tables drawn, the split stepper and the dialogs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.service.records.compare import ItemSide
from workbench.service.reports import compare_at
from workbench.tui.forms.compare import (
    CELL_LABELS,
    CELLS,
    cell_at,
    export_path,
    first_cell,
    grid_position,
    item_kind,
    outcome,
    pair_problem,
)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("compare") / "s.sqlite"
    with pytest.MonkeyPatch.context() as mp:  # a module fixture runs before the per-test isolation of the cache
        mp.setenv("AGENTHOP_CACHE", str(tmp_path_factory.mktemp("cache")))
        for agent, name in (("oracle", "o"), ("random", "r")):
            argv = ["--batch", "run", "--agent", agent, "--run", name, "--db", str(db), "--limit", "12", "--quiet"]
            assert main([*argv, "--format", "json"]) == 0
    return db


def test_compare_at_reads_the_report_the_command_prints(two_runs, capsys):
    report = compare_at(two_runs, "o", "r")
    capsys.readouterr()
    assert main(["--batch", "compare", "o", "r", "--db", str(two_runs), "--format", "json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert report["n_common"] == printed["n_common"] == 12
    assert {c: report["agreement"][c]["n"] for c in CELL_LABELS} == {
        c: printed["agreement"][c]["n"] for c in CELL_LABELS
    }
    assert report["agreement"]["only_b"]["n"] == 0  # the oracle is right on every item


def test_the_grid_starts_on_the_discordant_items_and_maps_both_ways(two_runs):
    report = compare_at(two_runs, "o", "r")
    start = first_cell(report["agreement"])
    assert start == ("only_a" if report["agreement"]["only_a"]["n"] else "both_right")
    empty = {c: {"n": 0, "items": []} for c in CELL_LABELS}
    assert first_cell(empty) == "only_a"
    assert first_cell({**empty, "both_wrong": {"n": 2, "items": ["x", "y"]}}) == "both_wrong"
    for row, cells in enumerate(CELLS):
        for column, cell in enumerate(cells, start=1):
            assert grid_position(cell) == (row, column) and cell_at(row, column) == cell
    assert cell_at(1, 0) == "only_b"  # the label column: the row's first cell


def side(**fields) -> ItemSide:
    base = {"id": 1, "correct": False, "answer": None, "termination": "answer", "points": 0}
    base.update(fields)
    return ItemSide(**base)  # type: ignore[typeddict-item]


def test_an_outcome_says_right_or_wrong_the_answer_and_the_points_and_an_ending_other_than_an_answer():
    assert outcome(side(correct=True, answer="B", points=1)) == "✓ B · 1 pt"
    assert outcome(side(answer="a long answer", points=29)) == "✗ a long · 29 pts"
    assert outcome(side(termination="budget", points=30)) == "✗ — · budget · 30 pts"
    assert item_kind("mt", 2) == "mt d2" and item_kind(None, None) == "? d?"


def test_the_export_file_name_is_made_safe_as_the_scaling_screen_s(tmp_path):
    assert export_path(tmp_path, "o", "r") == tmp_path / "compare-o-vs-r.json"
    assert export_path(tmp_path, "a/b", "c d:e") == tmp_path / "compare-a_b-vs-c_d_e.json"


def test_the_picker_wants_two_different_runs():
    assert pair_problem("a", "b", submitting=True) is None
    assert pair_problem("a", "a", submitting=False) == "pick two different runs"
    assert pair_problem("a", None, submitting=False) is None  # not picked yet: said on submitting
    assert pair_problem("a", None, submitting=True) == "pick two different runs"
    assert pair_problem(None, None, submitting=True) == "pick two different runs"
