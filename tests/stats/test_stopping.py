"""Stopping behaviour: every category on a constructed trajectory, and exclusivity/exhaustiveness."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.stopping import (
    AFTER_EVIDENCE,
    AFTER_WRONG,
    LEFT_OUT,
    MT_FAIL,
    Facts,
    after_evidence,
    after_evidence_category,
    after_wrong_category,
    after_wrong_read,
    early_submit,
    mt_fail_breakdown,
    mt_fail_category,
    non_submission,
    stopping_behaviour,
    wrong_read_indices,
)


def read(paper, role, delivered=True, status="ok"):
    return {"tool": "read_section", "paper": paper, "paper_role": role, "delivered": delivered, "status": status}


def call(tool, paper=None, role=None, status="ok"):
    return {"tool": tool, "paper": paper, "paper_role": role, "status": status}


THINK, SUBMIT, SEARCH = call("think"), call("submit_answer"), call("search_papers")
G1, G2, G3 = read("g1", "gold"), read("g2", "gold"), read("g3", "gold")
X, Y = read("x", "other"), read("y", "seed")


def mt(actions, correct=False, termination="answer", n_gold=2):
    return {"kind": "mt", "correct": correct, "termination": termination, "n_gold": n_gold, "actions": actions}


def st_(actions, correct=True, termination="answer"):
    return {"kind": "st", "correct": correct, "termination": termination, "n_gold": 1, "actions": actions}


# ------------------------------------------------------------------------------------------------
# MT failures


@pytest.mark.parametrize(
    "actions,expected",
    [
        ([SEARCH, X, SUBMIT], "0-Gold"),
        ([read("g1", "gold", delivered=False, status="metadata_only"), SUBMIT], "0-Gold"),
        ([read("g1", "gold", delivered=False, status="rejected"), THINK], "0-Gold"),
        ([X, G1, THINK, SUBMIT], "Prem"),
        ([G1], "Prem"),
        ([G1, SEARCH, THINK, SUBMIT], "Explored"),
        ([G1, call("get_paper_info", "g2", "gold"), SUBMIT], "Explored"),
        ([G1, read("g2", "gold", delivered=False, status="not_found"), SUBMIT], "Explored"),
        ([G1, X, read("g1", "gold"), SUBMIT], "Explored"),
        ([G1, read("g1", "gold"), call("list_sections", "g1", "gold"), SUBMIT], "Stayed"),
        ([G1, call("get_references", "g1", "gold"), THINK], "Explored"),  # asking for its references is moving on
        ([G1, call("get_paper_info", "g1", "gold"), THINK], "Stayed"),
        ([G1, read("b", "bridge"), SUBMIT], "Explored"),
        ([G1, read("g1", "gold"), X, SUBMIT], "Explored"),
        ([G1, G2, SUBMIT], None),  # paper recall met: outside Table 9's population
        ([G2, X, G1, X, SUBMIT], None),
    ],
)
def test_mt_fail_categories(actions, expected):
    assert mt_fail_category(mt(actions)) == expected


def test_mt_fail_with_three_golds_uses_the_last_reached_gold():
    # reached g1 then g2 (2 of 3); after the first read of g2 it only re-read g1 → Stayed
    assert mt_fail_category(mt([G1, X, G2, read("g1", "gold"), SUBMIT], n_gold=3)) == "Stayed"
    assert mt_fail_category(mt([G1, G2, SEARCH], n_gold=3)) == "Explored"
    assert mt_fail_category(mt([G1, G2, G3], n_gold=3)) is None


def test_mt_fail_population_is_paper_recall_failed_right_or_wrong():
    """Table 9: n = MT items × (1 − MT paper recall). A right answer without both papers is in it (a guess);
    a wrong answer after reading both golds (the old "All-Gold") is not: it is reported apart."""
    trajectories = [
        mt([X, SUBMIT]),
        mt([G1, SUBMIT]),
        mt([G1], termination="max_turns"),
        mt([G1, SEARCH, SUBMIT]),
        mt([G1, G1, SUBMIT]),
        mt([G1, SUBMIT], correct=True),  # guessed right after one gold: still a paper-recall failure
        mt([G1, G2, SUBMIT]),  # wrong after both golds: not in the population
        mt([G1, G2, SUBMIT], correct=True),
        st_([X, SUBMIT], correct=False),  # single-target items never are
    ]
    out = mt_fail_breakdown(trajectories)
    assert out["n"] == 6 and out["n_mt"] == 8
    assert out["counts"] == {"0-Gold": 1, "Prem": 3, "Explored": 1, "Stayed": 1}
    assert sum(out["counts"].values()) == out["n"]
    assert out["shares"]["Prem"] == [3, 6] and out["prem_submitted"] == 2
    assert out["accuracy"]["Prem"] == [1, 3] and out["accuracy"]["0-Gold"] == [0, 1]
    assert out["all_gold_wrong"] == {"n": 1, "share": [1, 2]}


def test_mt_fail_population_follows_the_stored_paper_recall_flag():
    """The report's MT paper recall counts the stored flag, so the population follows it when given."""
    recalled_by_flag = {**mt([G1, SUBMIT]), "paper_recall": True}
    missed_by_flag = {**mt([G1, G2, SEARCH, SUBMIT]), "paper_recall": False}
    assert mt_fail_category(recalled_by_flag) is None
    assert mt_fail_category(missed_by_flag) == "Explored"  # classified after the last gold reached, never dropped
    out = mt_fail_breakdown([recalled_by_flag, missed_by_flag])
    assert out["n"] == 1 and out["counts"]["Explored"] == 1


def test_gold_read_must_name_its_paper():
    with pytest.raises(ValueError, match="must name its paper"):
        mt_fail_category(mt([read(None, "gold")]))


def test_missing_n_gold_defaults_by_kind():
    traj = {"kind": "mt", "correct": False, "termination": "answer", "actions": [G1, SUBMIT]}
    assert mt_fail_category(traj) == "Prem"  # MT defaults to 2 golds


# ------------------------------------------------------------------------------------------------
# after the evidence


@pytest.mark.parametrize(
    "actions,expected",
    [
        ([SEARCH, G1, SUBMIT], "Imm"),
        ([G1, THINK, SUBMIT], "Thnk"),
        ([G1, THINK, THINK, SUBMIT], "Thnk"),
        ([G1, X, SUBMIT], "Read"),
        ([G1, THINK, SEARCH, X, SUBMIT], "Read"),  # navigated, then read more: reading more sections
        ([G1, read("x", "other", delivered=False, status="rejected"), SUBMIT], "Read"),  # it chose to read more
        ([G1, X], "Read"),
        ([G1, THINK, SEARCH, SUBMIT], "Nav"),  # navigation without a read: not "Read"
        ([G1, call("get_references", "g1", "gold"), SUBMIT], "Nav"),
        ([G1, call("list_sections", "x", "other"), THINK, SUBMIT], "Nav"),
        ([G1, THINK], "End"),
        ([G1, SEARCH], "End"),
        ([G1], "End"),
        ([G1, read("g1", "gold"), SUBMIT], "Read"),  # timed from the gold read: a re-read of it is reading on
        ([X, SUBMIT], None),
    ],
)
def test_after_evidence_category(actions, expected):
    assert after_evidence_category(actions) == expected


def test_table9_is_timed_from_the_read_that_reaches_the_golds():
    """ST from the gold read, MT-both from the read that reaches the second gold (the paper's Table 9): a later
    re-read of a gold section is Read ("reads additional sections"), never Imm; re-reading the first gold before
    the second is reached is before the clock starts."""
    g2_again = read("g2", "gold")
    cases = [
        (st_([G1, read("g1", "gold"), SUBMIT]), "st", "Read"),
        (st_([G1, THINK, read("g1", "gold"), SUBMIT]), "st", "Read"),
        (mt([G1, G1, G2, SUBMIT]), "mt_both", "Imm"),  # the second gold reached, then the submit
        (mt([G1, G2, G1, SUBMIT]), "mt_both", "Read"),
        (mt([G1, G2, THINK, g2_again, SUBMIT]), "mt_both", "Read"),
        (mt([G1, G2, THINK, SUBMIT]), "mt_both", "Thnk"),
    ]
    for trajectory, group, expected in cases:
        out = after_evidence([trajectory])[group]
        assert out["counts"][expected] == 1, (trajectory["actions"], expected, out["counts"])
    assert after_evidence_category([G1, G2, G1, SUBMIT], 2) == "Read"
    assert after_evidence_category([G1, G2, G1, SUBMIT], 1) == "Read"  # from G1's read: G2 is a read
    assert after_evidence_category([G1, G1, G2, SUBMIT], 2) == "Imm"
    assert after_evidence_category([G1, SUBMIT], 2) is None  # the second gold never reached


def test_after_evidence_groups():
    trajectories = [
        st_([G1, SUBMIT]),
        st_([G1, THINK, SUBMIT], correct=False),
        st_([X, SUBMIT]),  # never reached its gold
        mt([G1, G2, SUBMIT], correct=True),
        mt([G1, G2, X, SUBMIT]),
        mt([G1, SUBMIT]),  # read one of two golds: not in mt_both
    ]
    out = after_evidence(trajectories)
    assert out["st"]["n"] == 2 and out["st"]["not_reached"] == 1
    assert out["st"]["counts"] == {"Imm": 1, "Thnk": 1, "Read": 0, "Nav": 0, "End": 0}
    assert out["st"]["accuracy"]["Imm"] == [1, 1] and out["st"]["accuracy"]["Thnk"] == [0, 1]
    assert out["mt_both"]["n"] == 2 and out["mt_both"]["not_reached"] == 1
    assert out["mt_both"]["counts"]["Imm"] == 1 and out["mt_both"]["counts"]["Read"] == 1
    assert out["mt_both"]["shares"]["Read"] == [1, 2]


def test_after_evidence_leaves_navigation_without_a_read_out_of_the_denominator():
    """The paper's Read is reading more sections: a trajectory that only navigated (or stopped) after its last
    gold read is in none of Imm / Thnk / Read, and not in their denominator."""
    trajectories = [
        st_([G1, SUBMIT]),
        st_([G1, X, SUBMIT]),
        st_([G1, call("get_references", "g1", "gold"), SUBMIT]),  # Nav
        st_([G1, SEARCH, call("list_sections", "x", "other"), SUBMIT], correct=False),  # Nav
        st_([G1, THINK], correct=False, termination="max_turns"),  # End
    ]
    out = after_evidence(trajectories)["st"]
    assert out["n_reached"] == 5 and out["n"] == 2
    assert out["left_out"] == {"Nav": 2, "End": 1}
    assert out["shares"] == {"Imm": [1, 2], "Thnk": [0, 2], "Read": [1, 2]}
    assert out["accuracy"]["Nav"] == [1, 2]


# ------------------------------------------------------------------------------------------------
# after a wrong-paper read


@pytest.mark.parametrize(
    "nxt,expected",
    [
        (G1, "Recover"),
        (call("list_sections", "g2", "gold"), "Recover"),
        (read("x", "other"), "Stay"),
        (call("list_sections", "x", "other"), "Stay"),
        (call("get_paper_info", "x", "other"), "Stay"),
        (call("get_references", "x", "other"), "Re-nav"),  # read → its references: moving on, not staying
        (call("get_references", "g1", "gold"), "Recover"),
        (THINK, "Think"),
        (SUBMIT, "Submit"),
        (SEARCH, "Re-nav"),
        (call("get_paper_info", "y", "bridge"), "Re-nav"),
        (call("browse", None, None), "Other"),
    ],
)
def test_after_wrong_category(nxt, expected):
    assert after_wrong_category([X, nxt], 0) == expected


def test_after_wrong_at_end_of_trajectory():
    assert after_wrong_category([G1, X], 1) == "End"


def test_wrong_read_events():
    actions = [X, X, read("z", "other", delivered=False, status="error"), Y, G1, SUBMIT]
    assert wrong_read_indices(actions) == [0, 1, 3]  # an undelivered read is no read; Y (the seed) is not gold
    out = after_wrong_read([mt(actions), st_([G1, SUBMIT])])
    assert out["n_events"] == 3 and out["n_trajectories"] == 1
    assert out["counts"]["Stay"] == 1 and out["counts"]["Re-nav"] == 1 and out["counts"]["Recover"] == 1
    assert out["shares"]["Stay"] == [1, 3]
    assert sum(out["counts"].values()) == out["n_events"]


def test_a_read_of_any_non_gold_paper_is_a_wrong_paper_read():
    """The paper's Table 3 conditions on landing on a non-gold paper: the seed and the bridge are wrong papers when
    they are not gold for the item (a paper gold for the item has the role 'gold' whatever else it is)."""
    depth2 = [read("s", "seed"), read("b", "bridge"), call("get_references", "b", "bridge"), G1, SUBMIT]
    assert wrong_read_indices(depth2) == [0, 1]
    assert after_wrong_read([st_(depth2)])["counts"] == {
        "Recover": 0,
        "Stay": 0,
        "Think": 0,
        "Re-nav": 2,
        "Submit": 0,
        "Other": 0,
        "End": 0,
    }
    assert early_submit([st_([read("b", "bridge"), SUBMIT]), st_([X, THINK, THINK, THINK, SUBMIT])])["share"] == [1, 2]
    assert early_submit([st_([read("s", "seed"), SUBMIT], correct=False), st_([X, G1, THINK, THINK, SUBMIT])])[
        "accuracy"
    ] == [0, 1]
    assert wrong_read_indices([read("b", "bridge")], wrong_roles=("other",)) == []  # a narrower reading on request


def test_compact_actions_give_the_same_categories():
    from stats.stopping import compact

    actions = [X, call("get_references", "x", "other"), G1, THINK, SUBMIT]
    packed = compact(actions)
    assert packed[0] == ["read_section", "ok", "x", "other", True]
    assert after_wrong_category(packed, 0) == after_wrong_category(actions, 0) == "Re-nav"
    assert after_evidence_category(packed) == "Thnk"
    assert stopping_behaviour([mt(packed)]) == stopping_behaviour([mt(actions)])


def test_early_submit_window():
    early = mt([X, THINK, THINK, SUBMIT], correct=True)  # submit is the 3rd action after the read
    late = mt([X, THINK, THINK, THINK, SUBMIT])  # the 4th
    none = mt([G1, SUBMIT])
    out = early_submit([early, late, none])
    assert out["share"] == [1, 2] and out["accuracy"] == [1, 1] and out["window"] == 3
    assert out["accuracy_non_early"] == [0, 1] and out["delta"] == 1.0
    assert early_submit([late], window=4)["share"] == [1, 1]


def test_early_submit_delta_accuracy_and_fisher_test():
    """Early submitters 1/5 right, the others 5/6 (one of them never submitted): Δ = 1/5 − 5/6 with Fisher's
    exact two-sided p of [[1, 4], [5, 1]], worked out by hand below."""
    early_right = mt([X, SUBMIT], correct=True)
    early_wrong = mt([X, THINK, SUBMIT])
    late_right = mt([X, G1, SEARCH, THINK, G2, SUBMIT], correct=True)
    stopped = mt([X, THINK, THINK, THINK], termination="max_turns")
    data = [early_right] + [early_wrong] * 4 + [late_right] * 5 + [stopped] + [mt([G1, SUBMIT])] * 3
    out = early_submit(data)
    assert out["share"] == [5, 11] and out["accuracy"] == [1, 5] and out["accuracy_non_early"] == [5, 6]
    assert out["non_early_unsubmitted"] == 1
    assert out["delta"] == pytest.approx(1 / 5 - 5 / 6)
    # hypergeometric tables with margins rows (5, 6), right column 6, total 11: P(a) = C(5,a)C(6,6−a)/C(11,6);
    # observed a = 1 has P = 5·6/462; tables at least as extreme: a = 0 (1/462), 1 (30/462), 5 (6/462)
    assert out["p"] == pytest.approx((1 + 30 + 6) / 462)
    assert out["test"] == "Fisher's exact, two-sided"
    one_sided = early_submit([early_right])
    assert one_sided["delta"] is None and one_sided["p"] == 1.0


def test_non_submission_by_cap():
    trajectories = [
        st_([SUBMIT]),
        st_([], termination="budget"),
        st_([], termination="budget"),
        mt([], termination="max_turns"),
        mt([], termination="error"),
    ]
    out = non_submission(trajectories)
    assert out["share"] == [4, 5]
    assert out["counts"] == {"budget": 2, "error": 1, "max_turns": 1}
    assert out["shares"]["budget"] == [2, 5]


# ------------------------------------------------------------------------------------------------
# exclusivity and exhaustiveness on random trajectories


ACTION = st.one_of(
    st.builds(read, st.sampled_from(["g1", "g2"]), st.just("gold"), st.booleans()),
    st.builds(
        read, st.sampled_from(["x", "y", "s"]), st.sampled_from(["other", "seed", "bridge", None]), st.booleans()
    ),
    st.builds(
        call, st.sampled_from(["get_paper_info", "get_references", "list_sections"]), st.sampled_from(["g1", "x", "y"])
    ).map(lambda a: {**a, "paper_role": "gold" if a["paper"].startswith("g") else "other"}),
    st.sampled_from([THINK, SUBMIT, SEARCH, call("unknown_tool")]),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.lists(ACTION, max_size=12), st.booleans(), st.sampled_from(["st", "mt"])), max_size=12))
def test_categories_are_exclusive_and_exhaustive(data):
    trajectories = [{"kind": k, "correct": c, "termination": "answer", "actions": a} for a, c, k in data]
    out = stopping_behaviour(trajectories)
    assert set(out["mt_fail"]["counts"]) == set(MT_FAIL)
    facts = [Facts.of(t) for t in trajectories]
    assert (
        sum(out["mt_fail"]["counts"].values())
        == out["mt_fail"]["n"]
        == sum(1 for t, f in zip(trajectories, facts, strict=True) if t["kind"] == "mt" and len(f.reached) < 2)
    )
    for group in ("st", "mt_both"):
        g = out["after_evidence"][group]
        assert set(g["counts"]) == set(AFTER_EVIDENCE + LEFT_OUT)
        assert sum(g["counts"].values()) == g["n_reached"]
        assert sum(g["counts"][c] for c in AFTER_EVIDENCE) == g["n"]
    wrong = out["after_wrong_read"]
    assert set(wrong["counts"]) == set(AFTER_WRONG)
    assert (
        sum(wrong["counts"].values())
        == wrong["n_events"]
        == sum(len(wrong_read_indices(t["actions"])) for t in trajectories)
    )
    for t, f in zip(trajectories, facts, strict=True):
        if t["kind"] == "mt":
            assert (mt_fail_category(t) in MT_FAIL) == (len(f.reached) < 2)


def test_table3_counts_a_read_of_the_seed_or_the_bridge_as_landing_on_a_wrong_paper():
    """Table 3 (the paper's overlapping categories) over every non-gold read: the seed read then a think and the
    gold is Think and Recover; the bridge read then a submit is Submit."""
    from stats.panel_measures import table3
    from stats.stopping import compact

    seed_then_gold = compact([read("s", "seed"), THINK, G1, SUBMIT])
    bridge_then_submit = compact([read("b", "bridge"), SUBMIT])
    out = table3([seed_then_gold, bridge_then_submit])
    assert out["n_events"] == 2
    assert out["counts"] == {"Recover": 1, "Stay": 0, "Think": 1, "Re-nav": 0, "Submit": 1}
