"""Tool-use fingerprints: which call sequences an agent uses, and which go with right answers.

AgentHop §4.3 / Appendix E.2, docs/metrics.md. A trajectory is represented by its tool-name sequence
(every call in order, rejected ones included: the sequence is what the agent *chose* to do).

Unknown names (hallucinated tools, typos) are not one of the seven tools. They are removed **and
break adjacency**: no bigram or trigram spans an unknown call, so `a, bogus, b` yields no (a, b).
Counting them as an eighth "other" tool would change the 7×7 = 49 Bonferroni family the paper
fixes. `unknown_calls` reports how many were removed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

import numpy as np

from stats.ratio import Pair, Ratio
from stats.significance import fisher_exact_two_sided, log_factorial_table


class BigramDelta(TypedDict):
    """One tool bigram's Δ accuracy (with − without), Fisher's exact p and its Bonferroni adjustment."""

    bigram: list[str]
    n_with: int
    accuracy_with: Pair
    accuracy_without: Pair
    delta: float | None
    p: float
    p_bonferroni: float
    significant: bool


class Trigram(TypedDict):
    trigram: list[str]
    occurrences: int
    trajectories: int
    trajectory_share: Pair
    occurrence_share: Pair
    ranked_by: str


class TopTrigram(Trigram):
    """The most frequent trigram, its concentration, and the one in the most trajectories (`by_trajectories`)."""

    concentration: Pair
    total_occurrences: int
    by_trajectories: Trigram


class TransitionMatrix(TypedDict):
    """Tool-to-tool transition counts and their row-normalised probabilities."""

    tools: list[str]
    counts: list[list[int]]
    row_totals: list[int]
    probabilities: list[list[float]]


TOOLS: tuple[str, ...] = (
    "get_paper_info",
    "get_references",
    "search_papers",
    "list_sections",
    "read_section",
    "think",
    "submit_answer",
)
N_BIGRAMS = len(TOOLS) ** 2
CODE = {name: i for i, name in enumerate(TOOLS)}
UNKNOWN = -1

Gram = tuple[str, ...]


@dataclass(frozen=True)
class Encoded:
    """Many tool-name sequences as flat arrays, so n-gram counts are array operations, not Python loops.

    `codes[k]` is the k-th call's tool index in TOOLS (UNKNOWN for any other name) and `owner[k]` the
    index of the trajectory it belongs to; calls of a trajectory are contiguous and in order.
    """

    codes: np.ndarray
    owner: np.ndarray
    n: int

    @classmethod
    def of(cls, sequences: Sequence[Sequence[str]] | Encoded) -> Encoded:
        if isinstance(sequences, Encoded):
            return sequences
        lengths = np.fromiter((len(s) for s in sequences), dtype=np.int64, count=len(sequences))
        get = CODE.get
        codes = np.fromiter(
            (get(name, UNKNOWN) for seq in sequences for name in seq), dtype=np.int64, count=int(lengths.sum())
        )
        return cls(codes, np.repeat(np.arange(len(sequences)), lengths), len(sequences))

    def grams(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(gram code in base 7, owning trajectory) of every n-gram of known tools within one trajectory."""
        if n < 1:
            raise ValueError("n must be at least 1")
        m = self.codes.size - n + 1
        if m <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        ok = np.ones(m, dtype=bool)
        gram = np.zeros(m, dtype=np.int64)
        for j in range(n):
            part = self.codes[j : j + m]
            ok &= (part != UNKNOWN) & (self.owner[j : j + m] == self.owner[:m])
            gram = gram * len(TOOLS) + part
        return gram[ok], self.owner[:m][ok]


def _decode(code: int, n: int) -> Gram:
    names = []
    for _ in range(n):
        code, k = divmod(code, len(TOOLS))
        names.append(TOOLS[k])
    return tuple(reversed(names))


def segments(sequence: Sequence[str]) -> list[list[str]]:
    """The runs of known tool names between unknown ones."""
    out: list[list[str]] = [[]]
    for name in sequence:
        if name in CODE:
            out[-1].append(name)
        elif out[-1]:
            out.append([])
    return [seg for seg in out if seg]


def ngrams(sequence: Sequence[str], n: int) -> list[Gram]:
    """Consecutive n-grams of known tool names, never spanning an unknown name."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return [tuple(seg[i : i + n]) for seg in segments(sequence) for i in range(len(seg) - n + 1)]


def unknown_calls(sequences: Sequence[Sequence[str]] | Encoded) -> int:
    """How many calls named no known tool."""
    return int((Encoded.of(sequences).codes == UNKNOWN).sum())


def ngram_counts(sequences: Sequence[Sequence[str]] | Encoded, n: int) -> dict[str, Counter]:
    """`occurrences` (every position) and `trajectories` (how many trajectories contain it)."""
    grams, owner = Encoded.of(sequences).grams(n)
    occ = np.bincount(grams, minlength=len(TOOLS) ** n)
    pairs = np.unique(owner * len(TOOLS) ** n + grams)
    traj = np.bincount(pairs % len(TOOLS) ** n, minlength=len(TOOLS) ** n)
    return {
        "occurrences": Counter({_decode(int(g), n): int(occ[g]) for g in np.flatnonzero(occ)}),
        "trajectories": Counter({_decode(int(g), n): int(traj[g]) for g in np.flatnonzero(traj)}),
    }


def all_bigrams() -> list[Gram]:
    """The 49 possible bigrams in tool order (the Bonferroni family)."""
    return [(a, b) for a in TOOLS for b in TOOLS]


def bigram_presence(sequences: Sequence[Sequence[str]] | Encoded) -> np.ndarray:
    """(trajectories × 49) booleans: does trajectory i contain bigram j (in `all_bigrams` order)."""
    enc = Encoded.of(sequences)
    grams, owner = enc.grams(2)
    presence = np.zeros((enc.n, N_BIGRAMS), dtype=bool)
    presence[owner, grams] = True
    return presence


def bigram_delta_accuracy(
    sequences: Sequence[Sequence[str]] | Encoded, correct: Sequence[Any] | np.ndarray, alpha: float = 0.05
) -> list[BigramDelta]:
    """For each of the 49 bigrams: accuracy with it − accuracy without it, and Fisher's exact test.

    "With" = trajectories containing the bigram at least once. Fisher's two-sided exact test on
    [[with & correct, with & wrong], [without & correct, without & wrong]] (SciPy's definition,
    computed in numpy); `p_bonferroni` = min(1, 49·p) and `significant` = p_bonferroni < alpha, the
    family being all 49 bigrams whether or not they occur. `delta` is None and p is 1 when either
    group is empty (a bigram that never or always occurs is not tested).
    """
    enc = Encoded.of(sequences)
    ok = np.asarray(correct, dtype=bool)
    if enc.n != ok.size:
        raise ValueError("one correctness flag per trajectory")
    presence = bigram_presence(enc)
    w_all = presence.sum(axis=0)
    w_ok = presence[ok].sum(axis=0) if ok.any() else np.zeros(N_BIGRAMS, dtype=np.int64)
    total, total_ok = enc.n, int(ok.sum())
    log_fact = log_factorial_table(total)
    rows: list[BigramDelta] = []
    for j, gram in enumerate(all_bigrams()):
        wa, wk = int(w_all[j]), int(w_ok[j])
        oa, ok_ = total - wa, total_ok - wk
        tested = wa > 0 and oa > 0
        p = fisher_exact_two_sided(wk, wa - wk, ok_, oa - ok_, log_fact) if tested else 1.0
        p_adj = min(1.0, p * N_BIGRAMS)
        rows.append(
            BigramDelta(
                bigram=list(gram),
                n_with=wa,
                accuracy_with=[wk, wa],
                accuracy_without=[ok_, oa],
                delta=(wk / wa - ok_ / oa) if tested else None,
                p=p,
                p_bonferroni=p_adj,
                significant=p_adj < alpha,
            )
        )
    return rows


def panel_mean_delta(per_run: Sequence[Sequence[BigramDelta]]) -> list[dict[str, Any]]:
    """Mean Δ-accuracy per bigram across runs (models), over the runs where Δ is defined.

    `per_run` holds one `bigram_delta_accuracy` output per run (rows in `all_bigrams` order). Also
    counts in how many runs the bigram occurs (`n_present`), is significant, and the sign
    agreement (runs with Δ > 0).
    """
    out: list[dict[str, Any]] = []
    for j, gram in enumerate(all_bigrams()):
        deltas: list[float] = []
        n_sig = present = 0
        for rows in per_run:
            row = rows[j]
            if tuple(row["bigram"]) != gram:
                raise ValueError("per-run rows must be in all_bigrams() order")
            if row["delta"] is not None:
                deltas.append(row["delta"])
            n_sig += bool(row["significant"])
            present += row["n_with"] > 0
        out.append(
            {
                "bigram": list(gram),
                "mean_delta": float(np.mean(deltas)) if deltas else None,
                "n_runs": len(deltas),
                "n_present": present,
                "n_positive": sum(d > 0 for d in deltas),
                "n_significant": n_sig,
            }
        )
    return out


def panel_bigrams(per_run: Sequence[Sequence[BigramDelta]], min_share: float = 0.5) -> list[dict[str, Any]]:
    """`panel_mean_delta` kept to the bigrams present in at least `min_share` of the runs.

    The paper's panel keeps bigrams present in ≥ 10 of its 19 models: a bigram a few models use
    says nothing about the panel, and its mean Δ over one or two runs is noise. Present = occurs in
    at least one trajectory of the run.
    """
    needed = min_share * len(per_run)
    return [b for b in panel_mean_delta(per_run) if b["n_present"] and b["n_present"] >= needed]


def top_trigram(sequences: Sequence[Sequence[str]] | Encoded) -> TopTrigram | None:
    """The most frequent trigram by occurrences and its concentration (the paper's top trigram).

    Ranked by occurrences, then by the trajectories containing it, then by name (ties
    deterministic). `concentration` = `occurrence_share` = its occurrences / all trigram
    occurrences. `trajectory_share` = trajectories containing it / all trajectories. The most
    widespread trigram (ranked by trajectories first: a loop repeated inside a few trajectories
    does not win it) is kept beside it as `by_trajectories`, a second, labelled figure. None when
    no trigram occurs.
    """
    enc = Encoded.of(sequences)
    grams, owner = enc.grams(3)
    if not grams.size:
        return None
    size = len(TOOLS) ** 3
    occ = np.bincount(grams, minlength=size)
    traj = np.bincount(np.unique(owner * size + grams) % size, minlength=size)
    present = np.flatnonzero(occ)

    def figure(code: int, ranked_by: str) -> Trigram:
        return Trigram(
            trigram=list(_decode(code, 3)),
            occurrences=int(occ[code]),
            trajectories=int(traj[code]),
            trajectory_share=Ratio(int(traj[code]), enc.n).as_list(),
            occurrence_share=Ratio(int(occ[code]), int(grams.size)).as_list(),
            ranked_by=ranked_by,
        )

    # gram codes in base 7 over TOOLS order; alphabetical ties need the names
    best = int(min(present, key=lambda g: (-occ[g], -traj[g], _decode(int(g), 3))))
    widest = int(min(present, key=lambda g: (-traj[g], -occ[g], _decode(int(g), 3))))
    head = figure(best, "occurrences, then trajectories")
    return TopTrigram(
        trigram=head["trigram"],
        occurrences=head["occurrences"],
        trajectories=head["trajectories"],
        trajectory_share=head["trajectory_share"],
        occurrence_share=head["occurrence_share"],
        concentration=head["occurrence_share"],
        total_occurrences=int(grams.size),
        ranked_by=head["ranked_by"],
        by_trajectories=figure(widest, "trajectories, then occurrences"),
    )


def transition_matrix(sequences: Sequence[Sequence[str]] | Encoded) -> TransitionMatrix:
    """7×7 tool-to-tool transition counts and their row-normalised probabilities.

    Row a, column b counts calls of b directly after a. A tool never followed by another call has
    a row of zeros (not NaN), with its `row_totals` entry 0 telling why.
    """
    grams, _ = Encoded.of(sequences).grams(2)
    counts = np.bincount(grams, minlength=N_BIGRAMS).reshape(len(TOOLS), len(TOOLS)).astype(np.int64)
    totals = counts.sum(axis=1)
    probs = np.divide(counts, totals[:, None], out=np.zeros(counts.shape), where=totals[:, None] > 0)
    return TransitionMatrix(
        tools=list(TOOLS), counts=counts.tolist(), row_totals=totals.tolist(), probabilities=probs.tolist()
    )
