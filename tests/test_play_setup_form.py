"""The play setup form's model (`workbench.tui.forms.play_setup`), without a terminal: the request or the errors of
the form's values, the refusal of "only the unfinished items" of a finished session, the player's session lines and
the runs offered for "the items a run got wrong"."""

from __future__ import annotations

from workbench.tui.forms.play_setup import (
    checked_setup,
    offered_runs,
    opening_mode,
    session_lines,
    session_of,
    validate_setup,
)


def _run(name: str, agent: str, done: int, planned: int, dataset: str = "builtin", status: str = "running") -> dict:
    return {"name": name, "agent": agent, "done": done, "planned": planned, "dataset": dataset, "status": status}


def _values(**typed: str) -> dict[str, str]:
    values = {"player": "ana", "dataset": "", "mode": "random", "count": "5", "seed": "0", "ids": "", "run": ""}
    return values | {"name": "", "include": ""} | typed


RUNS = [
    _run("human-ana-builtin", "human:ana", 2, 5),
    _run("done-session", "human:ana", 3, 3, status="finished"),
    _run("heuristic", "heuristic", 6, 6),
    _run("bob-session", "human:bob", 1, 4),
    _run("other-data", "heuristic", 1, 1, dataset="somewhere-else"),
]


def test_the_form_values_make_a_request_or_say_each_field_that_is_wrong():
    request, errors = validate_setup(_values(count="3", seed="2"))
    assert errors == {} and request is not None
    assert (request.player, request.dataset, request.count, request.seed, request.session) == (
        "ana",
        "builtin",
        3,
        2,
        "human-ana-builtin",
    )
    assert not request.include_played and request.run is None
    assert set(validate_setup(_values(player="a b", mode="ids", ids=" "))[1]) == {"player", "ids"}
    _, errors = validate_setup(_values(count="0", seed="x"))
    assert errors == {"count": "count: a whole number of at least 1", "seed": "seed: a whole number"}
    assert set(validate_setup(_values(mode="wrong"))[1]) == {"run"}
    request, errors = validate_setup(_values(mode="ids", ids="st_0001 mt_0002,, x", include="yes", name=" mine "))
    assert request is not None and request.ids == ("st_0001", "mt_0002", "x") and request.include_played
    assert request.session == "mine" and request.count == 0


def test_only_the_unfinished_items_of_a_session_that_has_none_is_refused_before_start():
    request, errors = checked_setup(_values(mode="continue"), RUNS)
    assert errors == {} and request is not None and request.mode == "continue"
    request, errors = checked_setup(_values(mode="continue", name="done-session"), RUNS)
    assert request is None
    assert errors == {"mode": "items: 'done-session' has no unfinished items; choose a random sample"}
    assert checked_setup(_values(mode="continue"), [])[0] is None


def test_re_opening_a_session_with_unfinished_items_opens_on_continuing_it():
    assert opening_mode(RUNS, "ana", "builtin") == "continue"
    assert opening_mode(RUNS, "carl", "builtin") is None
    assert opening_mode([_run("human-ana-builtin", "human:ana", 5, 5)], "ana", "builtin") is None


def test_the_player_and_session_as_the_form_would_play_them():
    assert session_of(_values(player=" ana ")) == ("ana", "human-ana-builtin")
    assert session_of(_values(player="", name="")) == ("", "human-?-builtin")
    assert session_of(_values(name=" mine ")) == ("ana", "mine")


def test_the_player_s_sessions_say_how_far_each_got():
    assert session_lines(RUNS, "ana") == [
        "human-ana-builtin: 2/5 played · running · re-opening it serves its unfinished items first",
        "done-session: 3/3 played · finished",
    ]
    assert session_lines(RUNS, "carl") == ["no sessions of carl yet; re-opening a session resumes it"]


def test_only_agents_runs_on_the_dataset_are_offered_to_replay_their_wrong_answers():
    assert offered_runs(RUNS, "builtin") == ["heuristic"]
