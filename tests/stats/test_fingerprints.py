"""Fingerprints (paper §4.2): signatures on hand-made trajectories, the permutation test against scipy's, Holm across
signatures, and words that come from the tests, never from a family's name."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from stats import fingerprints as fp
from stats.multiplicity import holm


def a(tool, paper=None, role=None, delivered=False):
    return [tool, "ok", paper, role, delivered]


GOLD_READ = a("read_section", "g", "gold", True)
OTHER_READ = a("read_section", "x", "other", True)


def test_signatures_of_hand_made_trajectories():
    """§4.2 / Table 9: early commit = Imm (submit right after the gold read), verify = Thnk (only thinking
    between them), over-search = Read (reading on after the gold, a re-read of it too); a give-up with no read is
    under-engagement."""
    immediate = [a("get_references", "s"), a("list_sections", "g"), GOLD_READ, a("submit_answer")]
    thought = [a("search_papers"), GOLD_READ, a("think"), a("think"), a("submit_answer")]
    read_on = [GOLD_READ, a("list_sections", "x"), OTHER_READ, a("submit_answer")]
    reread = [GOLD_READ, OTHER_READ, GOLD_READ, a("submit_answer")]  # read on after the gold (a re-read too): Read
    blind = [a("search_papers"), a("submit_answer")]
    never = [a("search_papers"), a("search_papers")]
    t = fp.trajectory_terms
    for actions, category in ((immediate, "Imm"), (thought, "Thnk"), (read_on, "Read"), (reread, "Read")):
        got = t(actions, kind="st", n_gold=1)
        assert got["early_commit"] == (float(category == "Imm"), 1.0)
        assert got["verify_before_commit"] == (float(category == "Thnk"), 1.0)
        assert got["over_search"] == (float(category == "Read"), 1.0)
        assert got["under_engagement"] == (0.0, 1)
    for actions in (blind, never):  # no gold read: outside Table 9's population, and never read: under-engaged
        got = t(actions, kind="st", n_gold=1)
        assert got["early_commit"] == got["verify_before_commit"] == got["over_search"] == (0.0, 0.0)
        assert got["under_engagement"] == (1.0, 1)
    # an MT item with one of its two golds read has not reached its evidence: outside the population
    assert t(immediate, kind="mt", n_gold=2)["early_commit"] == (0.0, 0.0)
    # out-of-domain calls (the general-agent setting's extra tools) leave every share and category untouched
    noisy = [a("bash"), GOLD_READ, a("web_search"), a("submit_answer")]
    assert t(noisy, kind="st", n_gold=1)["early_commit"] == (1.0, 1.0)
    assert t(noisy)["read_share"] == (1, 2) and t(thought)["think_share"] == (2, 5)
    assert t(thought)["search_volume"] == (1, 1) and t(read_on)["nav_share"] == (1, 4)
    model = fp.model_signature(
        [
            {"actions": immediate, "tool_calls": 4, "turns_with_calls": 2, "kind": "st", "n_gold": 1},
            {"actions": thought, "tool_calls": 5, "turns_with_calls": 5, "kind": "st", "n_gold": 1},
            {"actions": never, "tool_calls": 2, "turns_with_calls": 2, "kind": "st", "n_gold": 1},
        ]
    )
    assert model["calls_per_turn"]["value"] == pytest.approx(11 / 9)
    assert model["early_commit"]["value"] == 0.5 and model["verify_before_commit"]["value"] == 0.5
    assert model["under_engagement"]["value"] == pytest.approx(1 / 3)
    assert model["think_share"]["value"] == pytest.approx(2 / 11)


def brute_force_p(values, group):
    """Two-sided p over every choice of the group's members: |mean difference| at least the observed one."""
    x = np.asarray(values, float)
    k = sum(group)
    obs = abs(x[np.asarray(group)].mean() - x[~np.asarray(group)].mean())
    hits = total = 0
    for chosen in itertools.combinations(range(len(x)), k):
        mask = np.zeros(len(x), bool)
        mask[list(chosen)] = True
        total += 1
        hits += abs(x[mask].mean() - x[~mask].mean()) >= obs - 1e-9
    return hits / total


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(0, 20), min_size=4, max_size=9), st.integers(1, 3))
def test_permutation_p_is_the_brute_force_one(values, k):
    group = [i < k for i in range(len(values))]
    out = fp.permutation_test(values, group)
    assert out["p"] == pytest.approx(brute_force_p(values, group))
    assert out["effect"] == pytest.approx(np.mean(values[:k]) - np.mean(values[k:]))


def test_permutation_p_agrees_with_scipy():
    x = [0.9, 0.8, 0.85, 0.3, 0.2, 0.4, 0.35, 0.25, 0.3]
    group = [True] * 3 + [False] * 6
    ours = fp.permutation_test(x, group)["p"]
    # two-sided as |difference| at least the observed one (scipy's "two-sided" doubles the smaller tail instead)
    ref = sps.permutation_test(
        (x[:3], x[3:]),
        lambda u, v: abs(np.mean(u) - np.mean(v)),
        permutation_type="independent",
        alternative="greater",
        n_resamples=np.inf,
    ).pvalue
    assert ours == pytest.approx(ref)


def _panel(early: dict[str, list[float]]) -> tuple[dict, dict]:
    """Models of three families whose signatures are equal except early commitment."""
    per_model, family_of = {}, {}
    for fam, values in early.items():
        for i, v in enumerate(values):
            name = f"{fam}-{i}"
            per_model[name] = {s: {"value": 0.5} for s in fp.SIGNATURES}
            per_model[name]["early_commit"] = {"value": v}
            per_model[name]["search_volume"] = {"value": 1.0 + 0.01 * i}
            family_of[name] = fam
    return per_model, family_of


def test_words_come_from_the_tests_and_holm():
    early = {
        "A": [0.9, 0.92, 0.95, 0.91, 0.93],
        "B": [0.3, 0.32, 0.28, 0.31, 0.29],
        "C": [0.35, 0.33, 0.27, 0.26, 0.34],
    }
    per_model, family_of = _panel(early)
    tests = fp.family_tests(per_model, family_of)
    a_early = tests["A"]["signatures"]["early_commit"]
    assert a_early["p"] == pytest.approx(
        brute_force_p(
            [v["early_commit"]["value"] for v in per_model.values()], [family_of[m] == "A" for m in per_model]
        )
    )
    # Holm over every family's tests together (families × signatures), not one family's seven
    keys = [(f, s) for f in "ABC" for s in fp.SIGNATURES]
    raw = [tests[f]["signatures"][s]["p"] for f, s in keys]
    assert [tests[f]["signatures"][s]["p_holm"] for f, s in keys] == pytest.approx(holm(raw))
    assert all(tests[f]["n_tests"] == len(keys) for f in "ABC")
    assert tests["A"]["words"] == ["commits early"]
    assert "commits early" not in tests["B"]["words"] and "commits early" not in tests["C"]["words"]
    # the words follow the data, not the name: give A's numbers to a family called "Claude"
    renamed = {m.replace("A-", "Claude-"): v for m, v in per_model.items()}
    fams = {m.replace("A-", "Claude-"): ("Claude" if f == "A" else f) for m, f in family_of.items()}
    assert fp.family_tests(renamed, fams)["Claude"]["words"] == ["commits early"]


def test_no_word_without_the_power_to_support_it():
    early = {"A": [0.9, 0.95], "B": [0.3, 0.32], "C": [0.35, 0.33]}  # 2 of 6: the smallest p is 1/15 · Holm
    tests = fp.family_tests(*_panel(early))
    assert tests["A"]["words"] == [] and tests["A"]["signatures"]["early_commit"]["min_p_holm"] >= 0.05


def test_balanced_only_when_nothing_differs_and_the_design_could_show_it():
    rng = np.random.default_rng(3)
    per_model, family_of = _panel({f: list(0.5 + 0.001 * rng.standard_normal(6)) for f in "ABC"})
    for m in per_model:  # everything equal across families up to noise: no signature differs
        for sig in ("verify_before_commit", "over_search", "under_engagement"):
            per_model[m][sig] = {"value": 0.5 + 0.001 * rng.standard_normal()}
    tests = fp.family_tests(per_model, family_of)
    for fam in "ABC":
        sigs = tests[fam]["signatures"]
        assert not any(s["significant"] for s in sigs.values())
        assert tests[fam]["words"] == ["balanced"]


def test_family_trigrams_share_against_the_others_mean():
    counts = {"A": {("a", "b", "c"): 8, ("b", "c", "d"): 2}, "B": {("a", "b", "c"): 1}, "C": {("b", "c", "d"): 5}}
    n = {"A": 10, "B": 10, "C": 20}
    tops = fp.family_trigrams(counts, n, top=2)
    assert tops["A"][0]["trigram"] == ["a", "b", "c"] and tops["A"][0]["share"] == 0.8
    assert tops["A"][0]["others_mean_share"] == pytest.approx((1 / 10 + 0 / 20) / 2)
    assert tops["A"][1]["others_mean_share"] == pytest.approx((0 + 5 / 20) / 2)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), min_size=2, max_size=10))
def test_kendall_tau_b_is_scipys(pairs):
    from stats.panel_measures import kendall_tau_b

    x, y = zip(*pairs, strict=True)
    ref = sps.kendalltau(x, y).statistic
    ours = kendall_tau_b(x, y)
    assert (ours is None) == math.isnan(ref)
    if ours is not None:
        assert ours == pytest.approx(ref)


def test_trigram_tests_over_runs_with_holm_across_families():
    run_grams = {
        "a1": ({("x", "y", "z"): 8}, 10),
        "a2": ({("x", "y", "z"): 9}, 10),
        "a3": ({("x", "y", "z"): 7}, 10),
        "b1": ({("x", "y", "z"): 1, ("p", "q", "r"): 5}, 10),
        "b2": ({("p", "q", "r"): 6}, 10),
        "c1": ({("x", "y", "z"): 2}, 10),
        "c2": ({("p", "q", "r"): 1}, 10),
    }
    family_of = {r: r[0].upper() for r in run_grams}
    tops = {"A": [{"trigram": ["x", "y", "z"]}], "B": [{"trigram": ["p", "q", "r"]}]}
    out = fp.trigram_tests(tops, run_grams, family_of)
    shares = [run_grams[r][0].get(("x", "y", "z"), 0) / 10 for r in run_grams]
    group = [family_of[r] == "A" for r in run_grams]
    assert out["A"]["p"] == pytest.approx(brute_force_p(shares, group))
    assert out["A"]["effect"] == pytest.approx(np.mean(shares[:3]) - np.mean(shares[3:]))
    assert [out[f]["p_holm"] for f in "AB"] == pytest.approx(holm([out[f]["p"] for f in "AB"]))
