"""The runs list's plain model (`workbench.tui.forms.runs`), without a terminal: how NAME and AGENT / MODEL share
the width, a row's words, which rows a filter keeps and in what order, which columns show, the marks, the pair `c`
compares and the rename / re-tag dialogs' values.

The Pilot tests (tests/tui/test_runs_marks_and_filter.py, test_narrow_slips.py, test_narrow_80x24.py, test_pilot.py)
keep what only the screen shows: the table drawn at a size, the title, the notices and the keys."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.service.runlist import RunListing, natural_key
from workbench.tui.forms.runs import (
    AGENT_MAX,
    AGENT_MIN,
    NAME_MAX,
    TEXT_MIN,
    agent_label,
    agent_room,
    agent_words,
    column_label,
    compare_pair,
    compare_refusal,
    cost_words,
    first_seen,
    fitted_widths,
    header_sort,
    matches,
    name_words,
    next_sort,
    rate,
    rename_problem,
    renamed,
    shown_columns,
    sort_key,
    status_words,
    tag_value,
    tag_words,
    text_widths,
    toggled,
    view_rows,
)


def listing(name: str, **fields) -> RunListing:
    row = {
        "name": name,
        "agent": "heuristic",
        "model": None,
        "family": None,
        "tier": None,
        "dataset": "builtin",
        "dataset_repo": None,
        "dataset_revision": None,
        "ablation": "full",
        "done": 0,
        "planned": 60,
        "accuracy": None,
        "cost_usd": None,
        "status": "done",
        "created_at": "",
    }
    row.update(fields)
    return RunListing(**row)  # type: ignore[typeddict-item]


@given(st.integers(1, 60), st.integers(1, 60), st.integers(0, 120), st.integers(1, 20), st.integers(1, 20))
def test_text_widths_fit_the_room_where_the_floors_allow_and_never_go_below_them(name, agent, room, low_n, low_a):
    n, a = text_widths(name, agent, room, (low_n, low_a))
    assert n <= min(name, NAME_MAX) and a <= min(agent, AGENT_MAX)
    assert n >= min(low_n, name, NAME_MAX) and a >= min(low_a, agent, AGENT_MAX)
    assert n + a <= room or (n <= low_n and a <= low_a)  # it does not fit only when neither can give way


def test_a_column_is_never_fitted_below_its_header():
    labels = ["NAME ▲", "AGENT / MODEL"]
    assert fitted_widths([40, 40, 5], labels, 0) == (TEXT_MIN, len("AGENT / MODEL"))
    assert fitted_widths([12, 9, 5], labels, 100) == (12, 9)  # room enough: as wide as their cells


def test_a_tagged_agent_keeps_its_whole_name_where_the_table_has_room():
    """`heuristic [Navigator · efficient]` (33 cells) stays whole at 140 columns: the agent was cut to `heu…ic`
    beside its tag while the table had room to spare."""
    cell = len("heuristic [Navigator · efficient]")
    assert fitted_widths([len("random-baseline"), cell, 5], ["NAME", "AGENT / MODEL"], 100)[1] == cell
    assert agent_room(len("heuristic"), len("[Navigator · efficient]"), cell) == len("heuristic")


def test_the_agent_words_name_the_model_an_ablation_and_the_tag():
    row = listing("a", agent="oracle", model="gpt-x", ablation="no-search", family="GPT", tier="closed-frontier")
    assert agent_words(row) == "oracle gpt-x · no-search"
    assert tag_words(row).startswith("[GPT · ") and tag_words(row).endswith("]")
    assert agent_label(row) == f"{agent_words(row)} {tag_words(row)}"
    assert tag_words(listing("b")) == "" and agent_label(listing("b")) == "heuristic"


def test_the_agent_keeps_its_room_beside_a_whole_tag_or_the_tag_is_left_out():
    assert agent_room(9, 10, 40) == 9  # both fit
    assert agent_room(30, 10, 20) == 9  # the agent's middle gives way
    assert agent_room(30, 10, 11 + AGENT_MIN) == AGENT_MIN
    assert agent_room(30, 10, 10 + AGENT_MIN) is None  # too little left: the tag goes, never cut
    assert agent_room(3, 10, 14) == 3  # a short agent fits beside the tag, whatever AGENT_MIN


def test_a_filter_keeps_rows_with_every_word_anywhere_in_them():
    row = listing("seqt@8k", agent="llm", model="qwen", dataset="builtin", family="Qwen", tier="compute-efficient")
    assert matches(row, "") and matches(row, "QWEN seqt") and matches(row, "compute llm")
    assert not matches(row, "qwen oracle")


def test_runs_sort_by_name_in_natural_order():
    names = ["seqt@16k", "seqt@8k", "seqt@128k", "Seqt@32k", "r10", "r2", "heur-s0"]
    rows = sorted((listing(n) for n in names), key=sort_key("name"))
    assert [r["name"] for r in rows] == ["heur-s0", "r2", "r10", "seqt@8k", "seqt@16k", "Seqt@32k", "seqt@128k"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab@-09١"), max_size=8), max_size=12))
def test_any_names_sort_and_the_order_is_total(names):
    ordered = sorted(names, key=natural_key)
    assert sorted(ordered, key=natural_key) == ordered
    for a, b in itertools.pairwise(ordered):
        assert natural_key(a) <= natural_key(b)


def test_unknown_values_sort_last_and_the_view_filters_then_sorts():
    rows = [listing("alpha", accuracy=0.5), listing("beta", accuracy=None), listing("gamma", accuracy=0.25)]
    assert [r["name"] for r in sorted(rows, key=sort_key("accuracy"))] == ["gamma", "alpha", "beta"]
    assert [r["name"] for r in view_rows(rows, "", "accuracy", True)] == ["beta", "alpha", "gamma"]
    assert [r["name"] for r in view_rows(rows, "GAM", "name", False)] == ["gamma"]


def test_s_steps_through_every_sort_and_a_header_without_one_sorts_by_creation():
    column, seen = "created", []
    for _ in range(8):
        column = next_sort(column)
        seen.append(column)
    assert seen == ["name", "agent", "dataset", "done", "accuracy", "cost", "status", "created"]
    assert header_sort("cost") == "cost" and header_sort("nothing") == "created"
    assert column_label("cost", "COST", "cost", False) == "COST ▲"
    assert column_label("cost", "COST", "cost", True) == "COST ▼"
    assert column_label("name", "NAME", "cost", True) == "NAME"


def test_data_shows_only_while_the_datasets_differ():
    assert "dataset" not in shown_columns([listing("a"), listing("b")])
    assert "dataset" in shown_columns([listing("a"), listing("b", dataset="/data/release")])


def test_a_row_s_words_cost_state_and_mark():
    assert cost_words(listing("a", model="gpt-x")) == "unpriced"  # a model run without prices
    assert cost_words(listing("a")) == "—"  # a scripted agent's cost is never measured
    assert cost_words(listing("a", cost_usd=0.5)).startswith("$")
    assert status_words("done", False, None) == "done"
    assert status_words("running", True, None) == "▶"
    assert status_words("running", True, 2.345) == "▶ 2.3/s"
    assert name_words("r", True) == "● r" and name_words("r", False) == "r"


def test_marks_keep_their_order_through_toggles_and_renames():
    marked = toggled(toggled(toggled([], "a"), "b"), "c")
    assert marked == ["a", "b", "c"]
    assert toggled(marked, "b") == ["a", "c"]
    assert renamed(marked, "b", "z") == ["a", "z", "c"]


def test_c_compares_the_two_marked_or_the_one_marked_and_the_cursor():
    assert compare_pair(["a", "b"], "c") == ["a", "b"]
    assert compare_pair(["a"], "c") == ["a", "c"]
    assert compare_pair(["a"], "a") == ["a"] and compare_pair([], "c") == []
    assert compare_pair(["a", "b", "c"], None) == ["a", "b", "c"]
    assert compare_refusal(["a", "b"], "space", "p") is None
    assert compare_refusal(["a"], "space", "p").startswith("mark two runs with space")
    assert compare_refusal(["a", "b", "c"], "␣", "P") == (
        "3 runs are marked: Compare takes two (unmark the others with ␣); P opens a panel of all 3"
    )


def test_the_rename_and_re_tag_dialogs():
    assert rename_problem("", "a", {"a", "b"}) == "a name is needed"
    assert rename_problem("b", "a", {"a", "b"}) == "a run named 'b' exists"
    assert rename_problem("a", "a", {"a", "b"}) is None and rename_problem("c", "a", {"a", "b"}) is None
    assert tag_value(listing("a", family="GPT")) == "GPT, "
    assert tag_value(listing("a")) == ", "


def test_a_run_in_progress_has_a_rate_once_an_episode_finished_since_it_was_first_seen():
    rows = [listing("a", status="running", done=3), listing("b", status="done", done=60)]
    seen = first_seen({}, rows, 100.0)
    assert seen == {"a": (100.0, 3)}
    assert first_seen(seen, [listing("a", status="running", done=9)], 105.0) == seen  # the start is kept
    assert first_seen(seen, [listing("a", status="done", done=60)], 105.0) == {}  # ended: forgotten
    assert rate(seen["a"], 3, 104.0) is None  # none finished yet
    assert rate(seen["a"], 9, 104.0) == 1.5
    assert rate(None, 9, 104.0) is None and rate(seen["a"], 9, 100.0) is None
