"""Tool-use fingerprints: n-grams, bigram Δ-accuracy with Fisher + Bonferroni, top trigram, transitions."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stats.ngrams import (
    N_BIGRAMS,
    TOOLS,
    all_bigrams,
    bigram_delta_accuracy,
    ngram_counts,
    ngrams,
    panel_bigrams,
    panel_mean_delta,
    segments,
    top_trigram,
    transition_matrix,
    unknown_calls,
)

INFO, REFS, SEARCH, LIST, READ, THINK, SUBMIT = TOOLS


def row(rows, a, b):
    return next(r for r in rows if r["bigram"] == [a, b])


def test_unknown_names_break_adjacency():
    seq = [SEARCH, "browse_web", READ, READ, "oops", SUBMIT]
    assert segments(seq) == [[SEARCH], [READ, READ], [SUBMIT]]
    assert ngrams(seq, 2) == [(READ, READ)]
    assert ngrams(seq, 1) == [(SEARCH,), (READ,), (READ,), (SUBMIT,)]
    assert unknown_calls([seq, [THINK, "x"]]) == 3
    with pytest.raises(ValueError):
        ngrams(seq, 0)


def test_ngram_counts_occurrences_and_trajectories():
    seqs = [[READ, READ, READ], [READ, READ, SUBMIT], [THINK]]
    c = ngram_counts(seqs, 2)
    assert c["occurrences"][(READ, READ)] == 3
    assert c["trajectories"][(READ, READ)] == 2
    assert c["occurrences"][(READ, SUBMIT)] == 1


def test_bigram_delta_accuracy_hand_case():
    from scipy.stats import fisher_exact

    seqs = [[THINK, SUBMIT], [THINK, SUBMIT], [READ, SUBMIT], [READ, SUBMIT], [READ, THINK, SUBMIT]]
    correct = [True, True, False, False, True]
    rows = bigram_delta_accuracy(seqs, correct)
    assert len(rows) == N_BIGRAMS == 49
    r = row(rows, THINK, SUBMIT)
    assert r["n_with"] == 3 and r["accuracy_with"] == [3, 3] and r["accuracy_without"] == [0, 2]
    assert r["delta"] == pytest.approx(1.0)
    assert r["p"] == pytest.approx(fisher_exact([[3, 0], [0, 2]]).pvalue)  # 0.1
    assert r["p_bonferroni"] == 1.0 and not r["significant"]
    never = row(rows, INFO, INFO)
    assert never["delta"] is None and never["p"] == 1.0 and never["accuracy_with"] == [0, 0]
    everywhere = row(rows, READ, SUBMIT)
    assert everywhere["delta"] == pytest.approx(0.0 - 3 / 3)


def test_bonferroni_over_49_bigrams():
    from scipy.stats import fisher_exact

    seqs = [[READ, SUBMIT]] * 40 + [[THINK, SUBMIT]] * 40
    correct = [True] * 40 + [False] * 40
    r = row(bigram_delta_accuracy(seqs, correct), READ, SUBMIT)
    raw = fisher_exact([[40, 0], [0, 40]]).pvalue
    assert r["p"] == pytest.approx(raw) and r["p_bonferroni"] == pytest.approx(raw * 49)
    assert r["significant"] and r["delta"] == 1.0
    with pytest.raises(ValueError):
        bigram_delta_accuracy(seqs, correct[:-1])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.lists(st.sampled_from(TOOLS), max_size=6), st.booleans()), min_size=1, max_size=15))
def test_bigram_rows_match_fisher(data):
    from scipy.stats import fisher_exact

    seqs = [s for s, _ in data]
    correct = [c for _, c in data]
    for r in bigram_delta_accuracy(seqs, correct):
        gram = tuple(r["bigram"])
        has = [gram in set(ngrams(s, 2)) for s in seqs]
        w_ok = sum(h and c for h, c in zip(has, correct, strict=True))
        w = sum(has)
        o_ok = sum((not h) and c for h, c in zip(has, correct, strict=True))
        o = len(seqs) - w
        assert r["accuracy_with"] == [w_ok, w] and r["accuracy_without"] == [o_ok, o]
        if w and o:
            assert r["p"] == pytest.approx(fisher_exact([[w_ok, w - w_ok], [o_ok, o - o_ok]]).pvalue)
            assert r["delta"] == pytest.approx(w_ok / w - o_ok / o)
        assert r["p_bonferroni"] == pytest.approx(min(1.0, r["p"] * 49))


def test_panel_mean_delta():
    run_a = bigram_delta_accuracy([[READ, SUBMIT], [THINK, SUBMIT]], [True, False])
    run_b = bigram_delta_accuracy([[READ, SUBMIT], [THINK, SUBMIT], [THINK, SUBMIT]], [False, True, True])
    run_c = bigram_delta_accuracy([[READ, SUBMIT]], [True])  # Δ undefined: nobody lacks it
    panel = panel_mean_delta([run_a, run_b, run_c])
    r = next(p for p in panel if p["bigram"] == [READ, SUBMIT])
    assert r["mean_delta"] == pytest.approx((1.0 + -1.0) / 2) and r["n_runs"] == 2 and r["n_positive"] == 1
    assert next(p for p in panel if p["bigram"] == [INFO, INFO])["mean_delta"] is None
    assert r["n_present"] == 3
    assert [p["bigram"] for p in panel] == [list(g) for g in all_bigrams()]


def test_panel_bigrams_keep_those_present_in_at_least_half_of_the_runs():
    """The paper keeps bigrams present in ≥ 10 of its 19 models: with 19 runs, 10 is in, 9 is out; with 4, 2 is in."""

    def run(present: bool):
        seqs = [[READ, SUBMIT], [THINK, SUBMIT]] if present else [[THINK, SUBMIT], [THINK, SUBMIT]]
        return bigram_delta_accuracy(seqs, [True, False])

    for n_runs, n_present, kept in ((19, 10, True), (19, 9, False), (4, 2, True), (4, 1, False), (3, 2, True)):
        per_run = [run(i < n_present) for i in range(n_runs)]
        rows = {tuple(b["bigram"]): b for b in panel_bigrams(per_run)}
        assert ((READ, SUBMIT) in rows) == kept, (n_runs, n_present)
        assert rows[(THINK, SUBMIT)]["n_present"] == n_runs  # present everywhere: always kept
        if kept:
            assert rows[(READ, SUBMIT)]["n_present"] == n_present
            assert rows[(READ, SUBMIT)]["mean_delta"] == pytest.approx(1.0)
    assert (INFO, INFO) not in {tuple(b["bigram"]) for b in panel_bigrams([run(True)])}


def test_top_trigram_and_concentration():
    seqs = [[SEARCH, READ, SUBMIT], [SEARCH, READ, SUBMIT], [READ, READ, READ, READ], [THINK]]
    top = top_trigram(seqs)
    # (READ, READ, READ) occurs twice in one trajectory, (SEARCH, READ, SUBMIT) twice in two
    assert top["trigram"] == [SEARCH, READ, SUBMIT]
    assert top["occurrences"] == 2 and top["trajectories"] == 2
    assert top["trajectory_share"] == [2, 4] and top["occurrence_share"] == [2, 4]
    assert top_trigram([[READ, SUBMIT], []]) is None


def test_top_trigram_is_ranked_by_occurrences_with_the_widest_kept_apart():
    """The paper's top trigram is the most frequent one, its concentration its share of all trigram
    occurrences: think→think→think 18 times in one trajectory beats a trigram in three trajectories; the most
    widespread one stays as a second, labelled figure."""
    loop = [[THINK] * 20]
    common = [[REFS, READ, SUBMIT]] * 3
    top = top_trigram(loop + common + [[INFO]] * 6)
    assert top["trigram"] == [THINK, THINK, THINK] and top["ranked_by"].startswith("occurrences")
    assert (top["occurrences"], top["trajectories"]) == (18, 1) and top["total_occurrences"] == 21
    assert top["concentration"] == top["occurrence_share"] == [18, 21] and top["trajectory_share"] == [1, 10]
    wide = top["by_trajectories"]
    assert wide["trigram"] == [REFS, READ, SUBMIT] and wide["ranked_by"].startswith("trajectories")
    assert (wide["trajectories"], wide["occurrences"]) == (3, 3) and wide["trajectory_share"] == [3, 10]
    assert wide["occurrence_share"] == [3, 21]
    # same occurrences: trajectories break the tie
    top = top_trigram([[THINK, THINK, THINK, THINK], [READ, READ, SUBMIT], [READ, READ, SUBMIT]])
    assert top["trigram"] == [READ, READ, SUBMIT] and top["concentration"] == [2, 4]


def test_top_trigram_ties_are_alphabetical():
    top = top_trigram([[THINK, THINK, SUBMIT], [READ, READ, SUBMIT]])
    assert top["trigram"] == [READ, READ, SUBMIT]


def test_transition_matrix():
    m = transition_matrix([[SEARCH, READ, READ, SUBMIT], [SEARCH, READ, THINK, SUBMIT]])
    i = {t: k for k, t in enumerate(TOOLS)}
    counts = np.array(m["counts"])
    probs = np.array(m["probabilities"])
    assert counts[i[SEARCH], i[READ]] == 2 and counts[i[READ], i[READ]] == 1
    assert probs[i[READ]].tolist() == pytest.approx([0, 0, 0, 0, 1 / 3, 1 / 3, 1 / 3])
    assert m["row_totals"][i[SUBMIT]] == 0 and probs[i[SUBMIT]].tolist() == [0.0] * 7
    assert counts.sum() == 6 and m["tools"] == list(TOOLS)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.sampled_from((*TOOLS, "bogus")), max_size=10), max_size=10))
def test_transition_rows_are_distributions_or_zero(seqs):
    m = transition_matrix(seqs)
    probs = np.array(m["probabilities"])
    for total, prow in zip(m["row_totals"], probs, strict=True):
        assert prow.sum() == pytest.approx(1.0 if total else 0.0)
    assert np.array(m["counts"]).sum() == sum(len(ngrams(s, 2)) for s in seqs)
