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
from stats.bootstrap import no_variation
from workbench.service.scaling.parallel_records import Estimate, Gap, Reading, ReadingKind, StudyRow

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
    readings: list[Reading | None] = []
    if inputs.majority is not None:
        readings.append(_reading("majority", None, _at(inputs.majority, k), oracle, pass1, k == 1, seed))
    if inputs.pairwise is not None:
        readings.append(_reading("pairwise", None, _at(inputs.pairwise, k), oracle, pass1, k == 1, seed))
    for judge in inputs.judges:
        measures: tuple[tuple[ReadingKind, Any], ...] = (("best_at_k", par.best_at_k), ("retain_at_k", par.retain_at_k))
        for kind, measure in measures:
            values = [measure(c, v, k) for c, v in zip(inputs.correct, judge.verdicts, strict=True)]
            copy = k == 1 and judge.is_self
            readings.append(_reading(kind, judge.name, values, oracle, pass1, copy, seed))
    return StudyRow(k, len(oracle), _estimate(oracle, seed), [r for r in readings if r is not None])


def _at(per_item: Sequence[PerK | None], k: int) -> list[float | None]:
    return [None if row is None or row[k - 1] is None else row[k - 1] for row in per_item]


def _reading(
    kind: ReadingKind,
    judge: str | None,
    values: Sequence[float | None],
    oracle: np.ndarray,
    pass1: np.ndarray,
    copies_pass1: bool,
    seed: int,
) -> Reading | None:
    """A reading over the items it covers, against the study's pass@k on those items (None when it covers none); a
    k = 1 copy is pass@1 over every item (the study's table prints it, no judge involved)."""
    if copies_pass1:
        values = list(pass1)
    keep = [i for i, v in enumerate(values) if v is not None]
    if not keep:
        return None
    chosen = np.array([values[i] for i in keep], dtype=np.float64)
    return Reading(
        kind,
        judge,
        _estimate(chosen, seed),
        _gap(oracle[keep], chosen, pass1[keep], seed),
        len(keep),
        copies_pass1,
    )


def _estimate(values: np.ndarray, seed: int) -> Estimate:
    if values.size < 2:
        return Estimate(float(values.mean()))
    ci = par.with_ci(values, seed=seed)
    return Estimate(float(values.mean()), (ci.low, ci.high), ci.no_variation)


def _gap(oracle: np.ndarray, chosen: np.ndarray, pass1: np.ndarray, seed: int) -> Gap:
    if chosen.size < 2:
        return Gap(float(oracle.mean() - chosen.mean()), None, False, None, None)
    result = par.verification_gap(oracle, chosen, pass1=pass1, seed=seed)
    low, high = result["ci"]["gap"]["low"], result["ci"]["gap"]["high"]
    return Gap(result["gap"], (low, high), no_variation(low, high), result["relative_gap"], result.get("efficiency"))
