"""Tool-use fingerprints: which call sequences an agent uses, and which go with right answers.

AgentHop §4.3 / Appendix E.2, PROTOCOL §3. A trajectory is represented by its tool-name sequence
(every call in order, rejected ones included: the sequence is what the agent *chose* to do).

Unknown names (hallucinated tools, typos) are not one of the seven tools. They are removed **and
break adjacency**: no bigram or trigram spans an unknown call, so `a, bogus, b` yields no (a, b).
Counting them as an eighth "other" tool would change the 7×7 = 49 Bonferroni family the paper
fixes. `unknown_calls` reports how many were removed.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from stats.ratio import Ratio

TOOLS: tuple[str, ...] = ("get_paper_info", "get_references", "search_papers", "list_sections",
                          "read_section", "think", "submit_answer")
N_BIGRAMS = len(TOOLS) ** 2

Gram = tuple[str, ...]


def segments(sequence: Sequence[str]) -> list[list[str]]:
    """The runs of known tool names between unknown ones."""
    out: list[list[str]] = [[]]
    for name in sequence:
        if name in TOOLS:
            out[-1].append(name)
        elif out[-1]:
            out.append([])
    return [seg for seg in out if seg]


def ngrams(sequence: Sequence[str], n: int) -> list[Gram]:
    """Consecutive n-grams of known tool names, never spanning an unknown name."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return [tuple(seg[i:i + n]) for seg in segments(sequence) for i in range(len(seg) - n + 1)]


def unknown_calls(sequences: Sequence[Sequence[str]]) -> int:
    """How many calls named no known tool."""
    return sum(1 for seq in sequences for name in seq if name not in TOOLS)


def ngram_counts(sequences: Sequence[Sequence[str]], n: int) -> dict[str, Counter]:
    """`occurrences` (every position) and `trajectories` (how many trajectories contain it)."""
    occurrences: Counter = Counter()
    trajectories: Counter = Counter()
    for seq in sequences:
        grams = ngrams(seq, n)
        occurrences.update(grams)
        trajectories.update(set(grams))
    return {"occurrences": occurrences, "trajectories": trajectories}


def all_bigrams() -> list[Gram]:
    """The 49 possible bigrams in tool order (the Bonferroni family)."""
    return [(a, b) for a in TOOLS for b in TOOLS]


def bigram_delta_accuracy(sequences: Sequence[Sequence[str]], correct: Sequence[Any],
                          alpha: float = 0.05) -> list[dict[str, Any]]:
    """For each of the 49 bigrams: accuracy with it − accuracy without it, and Fisher's exact test.

    "With" = trajectories containing the bigram at least once. Fisher's two-sided exact test on
    [[with & correct, with & wrong], [without & correct, without & wrong]]; `p_bonferroni` =
    min(1, 49·p) and `significant` = p_bonferroni < alpha, the family being all 49 bigrams whether
    or not they occur. `delta` is None when either group is empty.
    """
    # imported here: scipy.stats takes a second to import and only this test needs it (transition matrices and
    # trigrams are drawn by the TUI on a worker thread, where an import that long holds the GIL and freezes the UI)
    from scipy.stats import fisher_exact

    if len(sequences) != len(correct):
        raise ValueError("one correctness flag per trajectory")
    ok = np.asarray(correct, dtype=bool)
    grams = all_bigrams()
    column = {g: j for j, g in enumerate(grams)}
    presence = np.zeros((len(sequences), len(grams)), dtype=bool)  # one pass over the data, then column reads
    for i, seq in enumerate(sequences):
        for g in ngrams(seq, 2):
            presence[i, column[g]] = True
    rows = []
    for j, gram in enumerate(grams):
        has = presence[:, j]
        w_ok, w_all = int((has & ok).sum()), int(has.sum())
        o_ok, o_all = int((~has & ok).sum()), int((~has).sum())
        with_acc, without_acc = Ratio(w_ok, w_all), Ratio(o_ok, o_all)
        delta = (with_acc.value - without_acc.value) if w_all and o_all else None
        p = float(fisher_exact([[w_ok, w_all - w_ok], [o_ok, o_all - o_ok]]).pvalue) if w_all and o_all else 1.0
        p_adj = min(1.0, p * N_BIGRAMS)
        rows.append({"bigram": list(gram), "n_with": w_all, "accuracy_with": with_acc.as_list(),
                     "accuracy_without": without_acc.as_list(), "delta": delta, "p": p,
                     "p_bonferroni": p_adj, "significant": p_adj < alpha})
    return rows


def panel_mean_delta(per_run: Sequence[Sequence[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Mean Δ-accuracy per bigram across runs (models), over the runs where Δ is defined.

    `per_run` holds one `bigram_delta_accuracy` output per run. Also counts in how many runs the
    bigram was significant and the sign agreement (runs with Δ > 0).
    """
    out = []
    for gram in all_bigrams():
        deltas, n_sig = [], 0
        for rows in per_run:
            row = next(r for r in rows if tuple(r["bigram"]) == gram)
            if row["delta"] is not None:
                deltas.append(row["delta"])
            n_sig += bool(row["significant"])
        out.append({"bigram": list(gram), "mean_delta": float(np.mean(deltas)) if deltas else None,
                    "n_runs": len(deltas), "n_positive": sum(d > 0 for d in deltas), "n_significant": n_sig})
    return out


def top_trigram(sequences: Sequence[Sequence[str]]) -> dict[str, Any] | None:
    """The most frequent trigram and how concentrated tool use is on it.

    Ranked by occurrences, then by trajectories containing it, then alphabetically (so ties are
    deterministic). `trajectory_share` = trajectories containing it / all trajectories;
    `occurrence_share` = its occurrences / all trigram occurrences. None when no trigram occurs.
    """
    counts = ngram_counts(sequences, 3)
    occ, traj = counts["occurrences"], counts["trajectories"]
    if not occ:
        return None
    gram = min(occ, key=lambda g: (-occ[g], -traj[g], g))
    return {"trigram": list(gram), "occurrences": occ[gram], "trajectories": traj[gram],
            "trajectory_share": Ratio(traj[gram], len(sequences)).as_list(),
            "occurrence_share": Ratio(occ[gram], sum(occ.values())).as_list()}


def transition_matrix(sequences: Sequence[Sequence[str]]) -> dict[str, Any]:
    """7×7 tool-to-tool transition counts and their row-normalised probabilities.

    Row a, column b counts calls of b directly after a. A tool never followed by another call has
    a row of zeros (not NaN), with its `row_totals` entry 0 telling why.
    """
    index = {name: i for i, name in enumerate(TOOLS)}
    counts = np.zeros((len(TOOLS), len(TOOLS)), dtype=np.int64)
    for seq in sequences:
        for a, b in ngrams(seq, 2):
            counts[index[a], index[b]] += 1
    totals = counts.sum(axis=1)
    probs = np.divide(counts, totals[:, None], out=np.zeros(counts.shape), where=totals[:, None] > 0)
    return {"tools": list(TOOLS), "counts": counts.tolist(), "row_totals": totals.tolist(),
            "probabilities": probs.tolist()}
