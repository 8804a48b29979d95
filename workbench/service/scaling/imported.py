"""A parallel study measured elsewhere (`scale parallel --scores FILE`): our strategies and the study's readings of
its K samples per task, the same `ParallelStudy` a run sampled here gives, from a scores file
(`parallel_scores`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from stats.judges import judge_quality
from workbench.service.records.parallel import JudgeJson, JudgeRole
from workbench.service.scaling.judging import Judged
from workbench.service.scaling.parallel import SampleTable, Spend, strategies_at_k
from workbench.service.scaling.parallel_records import Costs, ParallelStudy
from workbench.service.scaling.parallel_scores import SELF_JUDGE, ScoredStudy, load_parallel_scores
from workbench.service.scaling.readings import STUDY_NOTE, JudgeVerdicts, StudyInputs, study_rows
from workbench.service.scaling.sequential import ScalingInputError
from workbench.service.scaling.task_subsets import TaskSubset, within

IMPORTED_RULE = (
    "at k: the mean over the k-subsets of the K samples, as unbiased pass@k (all C(K, k) up to 256, else 256 "
    "seeded), a sample correct when its score reaches the success threshold; pointwise selection (judge {judge}): "
    "a random accepted sample, none accepted = no answer (a null verdict is not an acceptance); null scores count "
    "0; no majority (the file holds no answers) and pairwise only as the study's reading (its released bump "
    "sort, one order)"
)


def file_parallel(
    path: Path,
    studies: Sequence[str] | None = None,
    ks: Sequence[int] | None = None,
    seed: int = 0,
    tasks: TaskSubset | None = None,
) -> list[ParallelStudy]:
    """Every chosen study of a parallel scores file, read at `ks` (default: every k from 1 to the study's K), over
    the tasks of `tasks` when given (`--tasks`: a subset the study names, or a file of task names)."""
    chosen = load_parallel_scores(path, studies)
    if tasks is not None:
        chosen = [within(study, tasks, path) for study in chosen]
    out = [imported_study(study, ks, seed, str(path)) for study in chosen]
    return [replace(study, tasks=tasks.label) for study in out] if tasks is not None else out


def imported_study(study: ScoredStudy, ks: Sequence[int] | None, seed: int = 0, source: str = "") -> ParallelStudy:
    """Our strategies at each k (pass@k unbiased; pointwise selection by the judge that judged the most tasks, the
    agent's own, `self`, first among equals), the study's readings beside them (best of the first k, each judge's
    best@k and retain@k, the released bump sort), and every judge measured against the scores."""
    big_k = study.k_max
    usable, unavailable = _usable_ks(study, ks, source)
    correct = [_successes(study, t.scores) for t in study.tasks]
    verdicts = {j: [t.verdicts.get(j, [None] * big_k) for t in study.tasks] for j in study.judges}
    primary = _primary(study)
    judged = _judged(verdicts[primary]) if primary else None
    table = SampleTable([t.name for t in study.tasks], correct)
    return ParallelStudy(
        name=study.name,
        origin="imported",
        k_max=big_k,
        items=len(study.tasks),
        per_k=[strategies_at_k(table, k, big_k, judged, "split", Spend(), seed) for k in usable],
        study=study_rows(_study_inputs(study, correct, verdicts), usable, seed),
        study_note=STUDY_NOTE,
        tie_rule=IMPORTED_RULE.format(judge=primary or "none"),
        cost_rule="a scores file carries no spend: costs are not measured",
        ks_unavailable=unavailable,
        judge=primary,
        verdicts="file" if primary else None,
        verdicts_missing=0 if primary else None,
        judges=_judges(study),
        costs=Costs(),  # a file carries no spend: every total unknown, never 0
        source=source,
        null_scores=study.null_scores,
        success_threshold=study.success_threshold,
    )


def _usable_ks(study: ScoredStudy, ks: Sequence[int] | None, source: str) -> tuple[list[int], list[int]]:
    """The asked k (default: 1 to K) the study's K samples can show, and the others; ScalingInputError when none."""
    big_k = study.k_max
    wanted = sorted(set(ks)) if ks else list(range(1, big_k + 1))
    usable = [k for k in wanted if 1 <= k <= big_k]
    if not usable:
        raise ScalingInputError(f"{source}: study {study.name!r} has K = {big_k}: no k in {wanted} fits")
    return usable, [k for k in wanted if k not in usable]


def _successes(study: ScoredStudy, scores: list[float]) -> list[bool]:
    """Which samples are successes: a score at or above the study's threshold."""
    return [s >= study.success_threshold for s in scores]


def _judged(pointwise: list[list[bool | None]]) -> Judged:
    """A scores file's judge as our pointwise selection reads it: its verdicts, no pairwise table, none missing."""
    return Judged(pointwise=pointwise, tables=None, orders={}, missing=0, unparsed_pairwise=0)


def _primary(study: ScoredStudy) -> str | None:
    """The judge our pointwise selection uses: the one that judged the most tasks, the agent's own (`self`, the
    study's self-choice) first among equals (a judge released for a few tasks only would leave the rest unselected)."""
    judged = {j: sum(j in t.verdicts for t in study.tasks) for j in study.judges}
    return max(judged, key=lambda j: (judged[j], j == SELF_JUDGE), default=None)


def _study_inputs(
    study: ScoredStudy, correct: list[list[bool]], verdicts: dict[str, list[list[bool | None]]]
) -> StudyInputs:
    """The study's readings' inputs: raw scores, successes, every judge (`self` is the Self-Choice column) and the
    released bump sort per task (None where not released)."""
    bumps = [t.bump for t in study.tasks]
    return StudyInputs(
        [t.scores for t in study.tasks],
        correct,
        [JudgeVerdicts(j, v, j == SELF_JUDGE) for j, v in verdicts.items()],
        pairwise=bumps if any(b is not None for b in bumps) else None,
    )


def _judges(study: ScoredStudy) -> list[JudgeJson]:
    """Each judge against the scores over the samples of the tasks it judged: TPR, FPR, precision, accuracy, the
    study's self-choice (`stats.judges.judge_quality`)."""
    out: list[JudgeJson] = []
    for name in study.judges:
        truths: list[bool] = []
        said: list[bool | None] = []
        for task in study.tasks:
            if name in task.verdicts:
                truths += _successes(study, task.scores)
                said += task.verdicts[name]
        role: JudgeRole = "self" if name == SELF_JUDGE else "external"
        tasks = sum(name in t.verdicts for t in study.tasks)
        out.append({"judge": name, "role": role, **judge_quality(truths, said), "tasks": tasks})
    return out
