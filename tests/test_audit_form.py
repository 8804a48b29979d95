"""The audit screen's model (`workbench.tui.forms.audit`), without a terminal: the reviewer's name rule, the item
list's rows, the draft of a verdict, a check's cycle, the label typed to be added, the label selected after a move or
an edit, and the title, status and leaving wording."""

from __future__ import annotations

from types import SimpleNamespace

from workbench.tui.forms.audit import (
    NEXT_STATE,
    AddedLabel,
    Draft,
    added_label,
    edit_words,
    export_refusal,
    item_rows,
    label_after_edit,
    leave_question,
    reviewer_problem,
    status_line,
    title_line,
    toggled_relevance,
    wrapped_label,
)


def test_a_reviewer_s_name_is_needed_short_and_printable():
    assert reviewer_problem("ana") is None
    assert reviewer_problem("") == "a name is needed"
    assert reviewer_problem("x" * 61) == "at most 60 characters" and reviewer_problem("x" * 60) is None
    assert reviewer_problem("ana\x1b[2J") == "printable characters only"


def test_the_item_list_shows_kind_depth_and_the_latest_verdict():
    corpus = SimpleNamespace(
        items=[SimpleNamespace(id="st_0001", kind="st", depth=1), SimpleNamespace(id="mt_0002", kind="mt", depth=3)]
    )
    verdicts: dict = {"mt_0002": {"verdict": "flag"}}
    assert item_rows(corpus, verdicts) == [("st_0001", "st_d1", "—"), ("mt_0002", "mt_d3", "flag")]


def test_edits_are_worded_as_an_addition_or_a_re_classification():
    assert edit_words("added", None) == "+ added"
    assert edit_words("reclassified", "direct") == "✎ re-classified (was direct)"
    assert edit_words("reclassified", None) == "✎ re-classified (was ?)"


def test_a_draft_starts_from_the_latest_verdict_and_a_check_cycles_through_not_assessed():
    assert Draft.of(None) == Draft("", (None, None, None))
    verdict = {"note": "odd", "checks": {"question_ok": True, "gold_supported": None, "labels_accurate": False}}
    assert Draft.of(verdict) == Draft("odd", (True, None, False))
    state: bool | None = None
    seen = []
    for _ in range(3):
        state = NEXT_STATE[state]
        seen.append(state)
    assert seen == [True, False, None]


def test_an_added_label_is_three_fields_with_a_known_relevance():
    assert added_label(" 2401.00001 | Related work | supporting ") == AddedLabel(
        "2401.00001", "Related work", "supporting"
    )
    assert added_label("2401.00001 | Related work") is None
    assert added_label("2401.00001 | Related work | maybe") is None
    assert added_label(" | Related work | direct") is None
    assert added_label("2401.00001 |  | direct") is None
    assert added_label("a | b | direct | d") is None


def test_re_classifying_toggles_direct_and_supporting():
    assert toggled_relevance("direct") == "supporting"
    assert toggled_relevance("supporting") == "direct"
    assert toggled_relevance(None) == "direct"


def test_the_selected_label_wraps_round_and_stays_within_the_labels_after_an_edit():
    assert (wrapped_label(3, 3), wrapped_label(-1, 3), wrapped_label(1, 3), wrapped_label(5, 0)) == (0, 2, 1, 0)
    assert label_after_edit(-1, 4) == 3  # an added label is the last
    assert label_after_edit(2, 2) == 1  # the last label removed: the one before it
    assert label_after_edit(1, 3) == 1
    assert label_after_edit(0, 0) == 0 and label_after_edit(-1, 0) == 0


def test_the_title_and_status_say_progress_reviewer_verdict_label_and_drafts():
    assert (
        title_line("builtin", 2, 1, "ana", "R")
        == " Audit · builtin · 2 of 1 item reviewed · reviewer: ana (R to change)"
    )
    assert "0 of 1,200 items reviewed" in title_line("d", 0, 1200, "ana", "R")
    assert status_line(None, 0, 0, False) == "no verdict yet · no labels"
    verdict = {"verdict": "pass", "reviewer": "ana", "time": "2026-01-02T03:04:05+00:00"}
    assert status_line(verdict, 1, 3, True) == (
        "verdict: pass by ana 2026-01-02 03:04 · label [2] of 3 · changes not recorded (p/f/x)"
    )


def test_leaving_with_drafts_names_them_at_most_five():
    assert leave_question(["st_0001"]) == (
        "1 item has a note or checks not recorded (st_0001). Leave audit mode and discard them?"
    )
    ids = [f"st_000{i}" for i in range(1, 8)]
    assert leave_question(ids).startswith("7 items have a note or checks not recorded (st_0001, st_0002, st_0003, ")
    assert "st_0005 …)" in leave_question(ids) and "st_0006" not in leave_question(ids)


def test_the_corrected_dataset_is_not_written_over_a_directory_with_files(tmp_path):
    assert export_refusal(str(tmp_path / "new")) is None
    assert export_refusal(str(tmp_path)) is None
    (tmp_path / "x.json").write_text("{}")
    assert export_refusal(str(tmp_path)) == f"{tmp_path} exists and is not empty"
