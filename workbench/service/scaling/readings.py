"""The study's readings of a parallel study (General AgentBench, Tables 15-18), per k, beside our selections.

The study reads the first k samples in their own order (a prefix, not a random subset): its pass@k is the best of
the first k; its pointwise columns are task means of a judge's `best_at_k` or `retain_at_k` (neither selects a
sample); its pairwise column is bump sort along the samples' own order; and its k = 1 row prints pass@1 in the
Majority, Self-Choice and Pairwise columns. Each reading comes with its gap to the study's pass@k on the same
items and a paired bootstrap interval (`stats.parallel.verification_gap`). Sampled runs and imported scores files
both go through `study_rows`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stats import parallel as par
from stats.bootstrap import Interval
from workbench.service.scaling.parallel_records import Gap, MeanEstimate, Reading, ReadingKind, StudyRow

PerK = Sequence[float | None]
"""One item's value of a reading at k = 1..K (index k − 1); None where it is not known."""


@dataclass(frozen=True)
class JudgeVerdicts:
    """One pointwise judge's verdicts on every sample (True accepted, False rejected, None unparsed or missing);
    `is_self` when the judge is the agent's own model (the study's Self-Choice column)."""

    name: str
    verdicts: list[list[bool | None]]
    is_self: bool


@dataclass(frozen=True)
class StudyInputs:
    """What the study's readings are computed from: per item, its samples' scores (raw: a continuous score stays
    continuous) and successes, the judges' verdicts, and per item the majority and bump-sort outcomes at each k
    (None for an item they do not cover; the whole list None when the study has none)."""

    scores: list[list[float]]
    correct: list[list[bool]]
    judges: list[JudgeVerdicts]
    majority: Sequence[PerK | None] | None = None
    pairwise: Sequence[PerK | None] | None = None


STUDY_NOTE = (
    "the study's readings (GA-Bench Tables 15-18): the first k samples in their own order; pass@k = best of the "
    "first k; best@k = some correct sample among them accepted, retain@k = accepted correct / correct (0 when none "
    "correct): neither selects a sample; pairwise = bump sort in the samples' own order; at k = 1 the study prints "
    "pass@1 in its Majority, Self-Choice and Pairwise columns (marked =); gap = the study's pass@k − reading on the "
    "reading's items, paired 95% interval"
)


def study_rows(inputs: StudyInputs, ks: Sequence[int], seed: int = 0) -> list[StudyRow]:
    """The study's table at each k: its pass@k and every reading the inputs support."""
    return [_row(inputs, k, seed) for k in ks]


def _row(inputs: StudyInputs, k: int, seed: int) -> StudyRow:
    oracle = np.array([par.best_of_first_k(s, k) for s in inputs.scores])
    pass1 = np.array([par.best_of_first_k(s, 1) for s in inputs.scores])
    wanted: list[_Wanted] = []
    if inputs.majority is not None:
        wanted.append(_Wanted("majority", None, _at(inputs.majority, k), k == 1))
    if inputs.pairwise is not None:
        wanted.append(_Wanted("pairwise", None, _at(inputs.pairwise, k), k == 1))
    for judge in inputs.judges:
        measures: tuple[tuple[ReadingKind, Any], ...] = (("best_at_k", par.best_at_k), ("retain_at_k", par.retain_at_k))
        for kind, measure in measures:
            values = [measure(c, v, k) for c, v in zip(inputs.correct, judge.verdicts, strict=True)]
            wanted.append(_Wanted(kind, judge.name, values, k == 1 and judge.is_self))
    top, readings = _readings(wanted, oracle, pass1, seed)
    order = {(w.kind, w.judge): i for i, w in enumerate(wanted)}
    readings.sort(key=lambda r: order[(r.kind, r.judge)])
    return StudyRow(k, len(oracle), top, readings)


@dataclass(frozen=True)
class _Wanted:
    """A reading to compute: per item its value (None where it does not cover the item), or the k = 1 copy."""

    kind: ReadingKind
    judge: str | None
    values: Sequence[float | None]
    copies_pass1: bool


def _at(per_item: Sequence[PerK | None], k: int) -> list[float | None]:
    return [None if row is None or row[k - 1] is None else row[k - 1] for row in per_item]


def _readings(
    wanted: list[_Wanted], oracle: np.ndarray, pass1: np.ndarray, seed: int
) -> tuple[MeanEstimate, list[Reading]]:
    """The study's pass@k over every item, and each reading against it on the items it covers (a k = 1 copy is
    pass@1 over every item); readings over the same items share one bootstrap draw."""
    everyone = tuple(range(len(oracle)))
    top = MeanEstimate(float(oracle.mean()))
    readings = []
    for keep, members in _by_items(wanted, pass1, everyone).items():
        index = list(keep)
        o, p1 = oracle[index], pass1[index]
        if len(index) < 2:
            readings += [
                Reading(w.kind, w.judge, MeanEstimate(float(v.mean())), _plain_gap(o, v), 1, w.copies_pass1)
                for w, v in members
            ]
            continue
        whole, estimates = par.verification_gaps(
            o, {str(i): v for i, (_, v) in enumerate(members)}, pass1=p1, seed=seed
        )
        if keep == everyone:
            top = _estimate(whole)
        readings += [_reading(w, o, v, estimates[str(i)], len(index)) for i, (w, v) in enumerate(members)]
    return top, readings


def _by_items(
    wanted: list[_Wanted], pass1: np.ndarray, everyone: tuple[int, ...]
) -> dict[tuple[int, ...], list[tuple[_Wanted, np.ndarray]]]:
    """The readings grouped by the items they cover (every item first, so the study's pass@k is drawn over all),
    each with its values on those items (a k = 1 copy takes pass@1's)."""
    groups: dict[tuple[int, ...], list[tuple[_Wanted, np.ndarray]]] = {everyone: []}
    for w in wanted:
        values = list(pass1) if w.copies_pass1 else list(w.values)
        keep = tuple(i for i, v in enumerate(values) if v is not None)
        if keep:
            groups.setdefault(keep, []).append((w, np.array([values[i] for i in keep], dtype=np.float64)))
    return groups


def _reading(w: _Wanted, oracle: np.ndarray, values: np.ndarray, e: par.GapEstimate, n: int) -> Reading:
    """A reading over n items with its gap to the study's pass@k from the group's joint draw."""
    gap = Gap(
        float(oracle.mean() - values.mean()), (e.gap.low, e.gap.high), e.gap.no_variation, e.relative_gap, e.efficiency
    )
    return Reading(w.kind, w.judge, _estimate(e.selected), gap, n, w.copies_pass1)


def _plain_gap(oracle: np.ndarray, chosen: np.ndarray) -> Gap:
    return Gap(float(oracle.mean() - chosen.mean()), None, False, None, None)


def _estimate(interval: Interval) -> MeanEstimate:
    return MeanEstimate(interval.estimate, (interval.low, interval.high), interval.no_variation)
