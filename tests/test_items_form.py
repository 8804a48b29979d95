"""The item browser's model (`workbench.tui.forms.items`), without a terminal: filter names, the question column's
width, the sort order `s` steps through and the status line."""

from __future__ import annotations

from workbench.service import items
from workbench.tui.forms.items import RIGHT_LABELS, filter_label, next_sort, question_width, status_text


def test_a_filter_in_force_is_named_as_the_filter_bar_names_it():
    assert filter_label("right", "unrun") == "not run" and filter_label("right", "all") == "all right"
    assert filter_label("kind", "st") == "type st"
    assert filter_label("depth", 2) == "depth 2"
    assert filter_label("text", "graph") == "text graph"
    assert set(RIGHT_LABELS) == {"none", "some", "all", "unrun"}


def test_the_question_column_gets_what_the_others_leave_and_at_least_30_cells():
    assert question_width(80) == 30
    assert question_width(160) == 88
    assert question_width(0) == 30


def test_s_steps_through_every_sort_and_back_to_file_order():
    key, seen = "file", []
    for _ in items.SORTS:
        key = next_sort(key)
        seen.append(key)
    assert seen == [*items.SORTS[1:], "file"]


def test_the_status_line_says_how_many_are_shown_the_filters_and_the_order():
    assert status_text(40, 40, {}, "file", False) == " 40 of 40 items · file order"
    flt = items.ItemFilter(kind="st", right="none", text=" graph ")
    assert status_text(3, 40, flt.active(), "depth", True) == (
        " 3 of 40 items · filters: type st, none right, text graph (x clears) · sorted by depth (reversed)"
    )
    assert status_text(0, 0, {}, "right", False) == " 0 of 0 items · sorted by right"
