"""A run's trajectory list, its plain model (`workbench.tui.forms.trajectories`), without a terminal: a row's cells,
the sorts `s` steps through, which rows a filter keeps, when rows were only appended and where the cursor goes.

The Pilot tests (tests/tui/test_pilot.py, test_narrow_80x24.py, test_small_items.py) keep what only the screen
shows: the table drawn, its sort marks, the filter box and the keys; `shown_cells`, the row as drawn, is held here
against the plain one."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from storage.rows import TrajectoryListRow
from workbench.tui.forms.trajectories import (
    RESULT_CELLS,
    SORTS,
    appended,
    cells,
    header_sort,
    kept_cursor,
    matches,
    next_sort,
    view_rows,
)
from workbench.tui.screens.trajectories import COLUMNS, shown_cells
from workbench.tui.widgets.plaintext import clip, sanitize


def trajectory(tid: int, item: str, **fields) -> TrajectoryListRow:
    row = dict.fromkeys(TrajectoryListRow.__annotations__)
    row.update(id=tid, item_id=item, replicate=0, attempt=0, kind="mt", depth=2, correct=1, termination="answer")
    row.update(fields)
    return TrajectoryListRow(**row)  # type: ignore[typeddict-item]


def test_a_row_has_one_cell_per_column_in_words():
    t = trajectory(1, "mt-0001", answer="B", points_used=12, turns=4, tokens=12345, tool_calls=5, paper_recall=1)
    row = cells(t)
    assert len(row) == len(COLUMNS)
    assert row == ("mt-0001", "0", "mt d2", "✓ B", "answer", "12", "4", "12,345", "5", "● ○", row[-1])
    assert cells(t, tokens_measured=False)[7] == "—"  # a scripted agent's tokens are not measured
    wrong = cells(trajectory(2, "st-0002", kind=None, depth=None, correct=0, answer=None, termination=None))
    assert wrong[2:5] == ("?", "✗ —", "")


@given(st.one_of(st.none(), st.text()), st.booleans(), st.text())
def test_the_row_as_drawn_is_sanitised_with_the_answer_cut_to_six_cells(answer, correct, item):
    t = trajectory(1, item, answer=answer, correct=int(correct))
    drawn = shown_cells(t, True)
    assert drawn[0] == sanitize(item)
    assert drawn[3] == f"{'✓' if correct else '✗'} {clip(sanitize(answer or '—'), RESULT_CELLS - 2)}"


def test_a_filter_keeps_rows_with_every_word_in_their_item_type_ending_answer_or_outcome():
    t = trajectory(1, "mt-0007", answer="C", correct=0, termination="budget", chosen_type="bridge")
    assert matches(t, "") and matches(t, "MT-0007 d2") and matches(t, "wrong budget") and matches(t, "✗ bridge")
    assert not matches(t, "correct") and not matches(t, "d3")


def test_the_view_filters_then_sorts_unknown_values_last_and_keeps_stored_order_unasked():
    rows = [trajectory(3, "c", turns=None), trajectory(1, "a", turns=5), trajectory(2, "b", turns=2, correct=0)]
    assert [t["id"] for t in view_rows(rows, "", "stored", False)] == [3, 1, 2]  # as stored, not by id
    assert [t["id"] for t in view_rows(rows, "", "stored", True)] == [3, 2, 1]
    assert [t["id"] for t in view_rows(rows, "", "turns", False)] == [2, 1, 3]
    assert [t["id"] for t in view_rows(rows, "", "result", False)] == [2, 1, 3]
    assert [t["id"] for t in view_rows(rows, "correct", "item", True)] == [3, 1]


def test_s_steps_through_every_sort_and_a_header_without_one_keeps_stored_order():
    column, seen = "stored", []
    for _ in SORTS:
        column = next_sort(column)
        seen.append(column)
    assert seen == [*list(SORTS)[1:], "stored"]
    assert header_sort("tokens") == "tokens" and header_sort("recall") == "stored"


def test_rows_only_appended_and_the_cursor_kept_on_its_trajectory():
    assert appended([1, 2], [1, 2, 3]) and not appended([], [1]) and not appended([1, 2], [1, 2])
    assert not appended([1, 2], [2, 1, 3])
    assert kept_cursor([5, 6, 7], [7, 5], 2) == 0  # on trajectory 7 wherever it went
    assert kept_cursor([5, 6, 7], [5, 7], 1) == 0  # its trajectory filtered out: the first row
    assert kept_cursor([], [5], 0) == 0
