"""How good and how stable a judge is (test-time-scaling §6.3, the scaling study's §3.4–3.5 and Table 6).

A pointwise verdict accepts a sample (says its answer is correct) or not; the truth is whether the sample's answer is
correct. Unparsed verdicts are reported as missing, never as Wrong (§6.3), so the rates are over parsed verdicts.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TypedDict


class JudgeQuality(TypedDict):
    """Confusion counts of pointwise verdicts against the truth, and the rates built on them (None: no denominator)."""

    n: int
    parsed: int
    unparsed: int
    tp: int
    fp: int
    tn: int
    fn: int
    tpr: float | None
    fpr: float | None
    precision: float | None
    accuracy: float | None
    balanced_accuracy: float | None
    self_choice: float | None
    n_correct: int


class TrialAgreement(TypedDict):
    """How often N trials of one judge agree (None with fewer than two trials or no sample)."""

    trials: int
    samples: int
    unanimous: float | None
    pairwise: float | None


class TrialSpread(TypedDict):
    """One quantity over independent trials: mean, population std, range, and the values."""

    mean: float
    std: float
    min: float
    max: float
    values: list[float]


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def judge_quality(correct: Sequence[bool], verdicts: Sequence[bool | None]) -> JudgeQuality:
    """The confusion counts of pointwise verdicts against the truth, and the rates built on them.

    TPR = accepted correct / correct, FPR = accepted wrong / wrong, precision = correct / accepted,
    accuracy = verdicts equal to the truth / parsed verdicts, balanced accuracy = (TPR + 1 − FPR) / 2;
    `self_choice` is the study's main-text self-choice (`calculate_self_choice_scores.py`: Σ correct·accepted /
    Σ correct, over correct samples, an unparsed verdict counting as not accepted there, as the study scores it).
    A rate whose denominator is zero is None.
    """
    if len(correct) != len(verdicts):
        raise ValueError("one verdict per sample")
    tp = fp = tn = fn = unparsed = 0
    for truth, verdict in zip(correct, verdicts, strict=True):
        if verdict is None:
            unparsed += 1
        elif truth:
            tp, fn = tp + bool(verdict), fn + (not verdict)
        else:
            fp, tn = fp + bool(verdict), tn + (not verdict)
    tpr, fpr = _ratio(tp, tp + fn), _ratio(fp, fp + tn)
    n_correct = sum(bool(c) for c in correct)
    return JudgeQuality(
        n=len(correct),
        parsed=tp + fp + tn + fn,
        unparsed=unparsed,
        tp=tp,
        fp=fp,
        tn=tn,
        fn=fn,
        tpr=tpr,
        fpr=fpr,
        precision=_ratio(tp, tp + fp),
        accuracy=_ratio(tp + tn, tp + fp + tn + fn),
        balanced_accuracy=None if tpr is None or fpr is None else (tpr + 1 - fpr) / 2,
        self_choice=_ratio(tp, n_correct),
        n_correct=n_correct,
    )


def trial_agreement(trials: Sequence[Sequence[bool | None]]) -> TrialAgreement:
    """How often N trials of one judge agree on each sample's verdict (an unparsed verdict is a value of its own).

    `unanimous`: the share of samples on which every trial gave the same verdict; `pairwise`: the mean over samples
    of the share of trial pairs that agree. None with fewer than two trials or no sample.
    """
    if not trials or len({len(t) for t in trials}) != 1:
        raise ValueError("every trial needs a verdict for every sample")
    n = len(trials[0])
    if len(trials) < 2 or n == 0:
        return TrialAgreement(trials=len(trials), samples=n, unanimous=None, pairwise=None)
    columns = list(zip(*trials, strict=True))
    unanimous = sum(len(set(col)) == 1 for col in columns) / n
    import numpy as np  # here, not at import: the judges' record types are read by views that load no numpy

    pairs = list(itertools.combinations(range(len(trials)), 2))
    pairwise = float(np.mean([sum(col[a] == col[b] for a, b in pairs) / len(pairs) for col in columns]))
    return TrialAgreement(trials=len(trials), samples=n, unanimous=unanimous, pairwise=pairwise)


def spread(values: Sequence[float]) -> TrialSpread:
    """Mean, standard deviation and range of one quantity over independent trials (the study's Table 6 reports the
    population std, denominator N: 0.1795 / 0.1823 / 0.1705 → 0.0050)."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    if v.size == 0:
        raise ValueError("no trial")
    return TrialSpread(
        mean=float(v.mean()),
        std=float(v.std(ddof=0)),
        min=float(v.min()),
        max=float(v.max()),
        values=[float(x) for x in v],
    )
