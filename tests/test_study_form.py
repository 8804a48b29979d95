"""The study form's model without a terminal (`workbench.tui.forms.study`): its fields read as the scaling service's
StudyRequest, a number that is none refused naming its field, a problem worded for the CLI said in the form's words.
What the service then checks (a grid's repeated budget, a misspelt judge) is tests/test_scaling.py's and
tests/test_judge_tags.py's; the Pilot tests (tests/tui/test_study_launch.py) keep what the screen shows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sandbox.records import Caps
from workbench.service.launch import LaunchRequest
from workbench.service.scaling import StudyRequest
from workbench.tui.forms.study import StudyFields, in_study_words, study_request


def test_the_forms_defaults_are_a_sequential_sweep_of_the_heuristic_on_six_items():
    assert study_request(StudyFields()) == StudyRequest(
        kind="sequential",
        launch=LaunchRequest(agent="heuristic", name="study", limit=6),
        axis="tokens",
        grid="2k,4k,8k",
        strategies="continue,summarize,verifier",
        verifier="evidence",
        ks="1,2,4",
        judge="evidence",
        judge_trials=1,
        orders=8,
        tie_rule="split",
        cost_mode="cache-aware",
        verifier_base_url=None,
    )


def test_the_fields_text_is_read_without_its_spaces_and_blank_is_the_default():
    typed = StudyFields(
        kind="parallel",
        name=" P ",
        agent="",
        model=" openai/m ",
        base_url="",
        limit="",
        budget=" 12 ",
        max_turns="",
        max_tokens="",
        strategies="continue",  # no verifier strategy: the verifier field is not read
        ks=" 1,2 ",
        judge="",
        trials="",
        orders="",
        tie_rule="first",
        cost_mode="study",
        verifier_base_url=" http://127.0.0.1:9/v1 ",
    )
    request = study_request(typed)
    assert request.launch == LaunchRequest(
        agent="heuristic",
        name="P",
        model="openai/m",
        limit=None,
        budget=12,
        max_turns=Caps.max_turns,
        max_tokens_total=Caps.max_tokens_total,
    )
    assert (request.kind, request.ks, request.judge, request.judge_trials, request.orders) == (
        "parallel",
        "1,2",
        "evidence",
        1,
        8,
    )
    assert (request.verifier, request.tie_rule, request.cost_mode) == (None, "first", "study")
    assert request.verifier_base_url == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(
    "typed, message",
    [
        ({"trials": "two"}, "judge trials: 'two' is not a whole number"),
        ({"orders": "x"}, "pairwise orders: 'x' is not a whole number"),
        ({"limit": "six"}, "items: 'six' is not a whole number"),
        ({"budget": "lots"}, "points budget: 'lots' is not a whole number"),
        ({"max_turns": "1.5"}, "max turns: '1.5' is not a whole number"),
        ({"max_tokens": "2k"}, "max tokens total: '2k' is not a whole number"),
    ],
)
def test_a_number_that_is_none_is_refused_naming_its_field(typed, message):
    with pytest.raises(ValueError) as refused:
        study_request(replace(StudyFields(), **typed))
    assert str(refused.value) == message


def test_a_problem_worded_for_the_cli_reads_in_the_forms_words():
    assert (
        in_study_words("--grid: '2k' is not a whole number of points") == "grid: '2k' is not a whole number of points"
    )
    assert in_study_words("--tie-rule must be split or first; --orders must be at least 1") == (
        "majority ties must be split or first; pairwise orders must be at least 1"
    )
    assert in_study_words("--no-such-flag stays") == "--no-such-flag stays"


def test_the_study_is_planned_or_the_problem_that_stops_it_is_said(tmp_path, capsys):
    from storage import Store
    from workbench.cli import main
    from workbench.tui.forms.study import planned_study

    plan, problem = planned_study(StudyFields(name="M", limit="4", grid="4k,8k"), None)
    assert problem is None and plan is not None and plan.name == "M"
    assert planned_study(StudyFields(trials="two"), None) == (None, "judge trials: 'two' is not a whole number")
    plan, problem = planned_study(StudyFields(grid="4k,4k"), None)
    assert plan is None and problem
    db = tmp_path / "s.sqlite"
    common = ["--run", "M", "--db", str(db), "--quiet", "--limit", "4", "--format", "json", "--boot", "200"]
    assert main(["--batch", "scale", "sequential", "--axis", "tokens", "--grid", "4k,8k", *common]) == 0
    capsys.readouterr()
    store = Store(db)
    try:  # the runs already stored refuse a sweep of another axis into their group, before anything runs
        plan, problem = planned_study(
            StudyFields(name="M", limit="4", axis="points", grid="5,10", strategies="continue"), store
        )
        assert plan is None and problem is not None and "group 'M' already holds the tokens axis" in problem
        same = StudyFields(name="M", limit="4", axis="tokens", grid="4k,8k", strategies="continue")
        assert planned_study(same, store)[1] is None
    finally:
        store.close()
