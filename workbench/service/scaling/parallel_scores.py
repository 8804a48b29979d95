"""Parallel scores files: K samples per task measured elsewhere (the study's released data, another harness), read
from JSON or CSV into typed studies; every defect is the user's, named by file, study, task and field (exit 2).

JSON: {"data": {study: {"tasks": {task: {"s": [score per sample], "<judge>": [true/false/null per sample],
"bump_best": [released bump-sort outcome at k = 1..K]}}}}} — the format of General AgentBench's released parallel
data. A list of true/false/null under any other key is a pointwise judge's verdicts (`self`: the agent's own
model); keys beginning `s_` or ending `_at_k` are the release's cross-checks and are not read. `success_threshold`
(top level or per study) says from which score a sample is a success (default 0.5).

CSV: columns study,task,sample,score and optionally judge,verdict (a row per sample, or per sample and judge); an
empty score is null; a verdict is true/false (correct/wrong, 1/0) or empty (unparsed).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.service.scaling.scorefiles import read_scores_file
from workbench.service.scaling.sequential import ScalingInputError

SUCCESS_THRESHOLD = 0.5
SCORES = "s"
BUMP = "bump_best"
SELF_JUDGE = "self"
_TRUE = {"true", "correct", "1", "yes"}
_FALSE = {"false", "wrong", "0", "no"}


@dataclass(frozen=True)
class ScoredTask:
    """One task's K samples: scores in sample order (a null counted 0, as the study counts it), the judges'
    verdicts per sample, and the released bump-sort outcome at each k (None when not released)."""

    name: str
    scores: list[float]
    nulls: int
    verdicts: dict[str, list[bool | None]]
    bump: list[float] | None = None


@dataclass(frozen=True)
class ScoredStudy:
    """One model × benchmark study of a scores file."""

    name: str
    tasks: list[ScoredTask]
    success_threshold: float = SUCCESS_THRESHOLD

    @property
    def k_max(self) -> int:
        return len(self.tasks[0].scores)

    @property
    def judges(self) -> list[str]:
        """Every judge with a verdict on some task, in the order first met."""
        names: dict[str, None] = {}
        for task in self.tasks:
            names.update(dict.fromkeys(task.verdicts))
        return list(names)

    @property
    def null_scores(self) -> int:
        return sum(t.nulls for t in self.tasks)


def load_parallel_scores(path: Path, studies: Sequence[str] | None = None) -> list[ScoredStudy]:
    """The studies of a parallel scores file (those named in `studies`, in that order, or all)."""
    text = read_scores_file(path)
    found = _csv_studies(path, text) if path.suffix.lower() == ".csv" else _json_studies(path, text)
    if not found:
        raise ScalingInputError(f"{path}: no study in the file")
    return _chosen(path, found, studies) if studies else found


def _chosen(path: Path, found: list[ScoredStudy], studies: Sequence[str]) -> list[ScoredStudy]:
    """The studies named, in the order named (each once); ScalingInputError names those the file lacks."""
    by_name = {s.name: s for s in found}
    absent = [name for name in studies if name not in by_name]
    if absent:
        raise ScalingInputError(f"{path}: no study {', '.join(map(repr, absent))} (have: {', '.join(by_name)})")
    return [by_name[name] for name in dict.fromkeys(studies)]


# ---------------------------------------------------------------- JSON


def _json_studies(path: Path, text: str) -> list[ScoredStudy]:
    try:
        data = json.loads(text, parse_constant=lambda c: _bad(path, f"{c} is not a number"))
    except json.JSONDecodeError as exc:
        raise ScalingInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict) or not isinstance(data.get("data"), dict):
        raise ScalingInputError(f'{path}: expected {{"data": {{"<study>": {{"tasks": {{…}}}}}}}}')
    threshold = _threshold(path, data.get("success_threshold", SUCCESS_THRESHOLD), "file")
    return [_json_study(path, name, study, threshold) for name, study in data["data"].items()]


def _json_study(path: Path, name: str, study: Any, threshold: float) -> ScoredStudy:
    where = f"study {name!r}"
    if not isinstance(study, dict) or not isinstance(study.get("tasks"), dict) or not study["tasks"]:
        raise ScalingInputError(f"{path}: {where}: field 'tasks': expected an object of tasks")
    threshold = _threshold(path, study.get("success_threshold", threshold), where)
    tasks = [_json_task(path, f"{where}, task {task!r}", task, facts) for task, facts in study["tasks"].items()]
    return _checked(path, ScoredStudy(name, tasks, threshold))


def _json_task(path: Path, where: str, name: str, facts: Any) -> ScoredTask:
    if not isinstance(facts, dict):
        raise ScalingInputError(f"{path}: {where}: expected an object with field '{SCORES}'")
    raw = facts.get(SCORES)
    if not isinstance(raw, list) or not raw:
        raise ScalingInputError(f"{path}: {where}: field '{SCORES}': expected a list of scores, one per sample")
    scores = [_score(path, f"{where}, field '{SCORES}'[{j}]", v) for j, v in enumerate(raw)]
    verdicts = {
        key: _json_verdicts(path, where, key, value, len(raw))
        for key, value in facts.items()
        if _holds_verdicts(key, value)
    }
    bump = _json_bump(path, where, facts.get(BUMP), len(raw))
    return ScoredTask(name, [s or 0.0 for s in scores], sum(s is None for s in scores), verdicts, bump)


def _holds_verdicts(key: str, value: Any) -> bool:
    """Whether a task's field is a judge's verdicts: a list under any key but the scores, the released bump sort
    and the release's cross-checks (`s_…`, `…_at_k`)."""
    checks = key in (SCORES, BUMP) or key.startswith("s_") or key.endswith("_at_k")
    return isinstance(value, list) and not checks


def _json_verdicts(path: Path, where: str, key: str, value: list[Any], n: int) -> list[bool | None]:
    """A judge's verdicts (field `key`) on a task's n samples, one per sample."""
    if len(value) != n:
        raise ScalingInputError(
            f"{path}: {where}: field {key!r}: {len(value)} verdicts for {n} samples (one per sample)"
        )
    return [_verdict(path, f"{where}, field {key!r}[{j}]", v) for j, v in enumerate(value)]


def _json_bump(path: Path, where: str, bump: Any, n: int) -> list[float] | None:
    """The released bump-sort outcome at k = 1..n (a null counted 0), None when not released."""
    if bump is None:
        return None
    if not isinstance(bump, list) or len(bump) != n:
        raise ScalingInputError(f"{path}: {where}: field '{BUMP}': expected one outcome per k = 1..{n}")
    return [_score(path, f"{where}, field '{BUMP}'[{j}]", v) or 0.0 for j, v in enumerate(bump)]


def _score(path: Path, where: str, value: Any) -> float | None:
    """A score: a finite number, or None for null; a boolean is refused (a score, not a verdict: write 1 or 0)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise ScalingInputError(f"{path}: {where}: {json.dumps(value)} is a boolean, not a score (write 1 or 0)")
    if not isinstance(value, int | float) or not math.isfinite(value):
        raise ScalingInputError(f"{path}: {where}: {value!r} is not a score (a number, or null for a missing one)")
    return float(value)


def _verdict(path: Path, where: str, value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    raise ScalingInputError(f"{path}: {where}: {value!r} is not a verdict (true, false or null)")


def _threshold(path: Path, value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ScalingInputError(f"{path}: {where}: field 'success_threshold': {value!r} is not a number")
    return float(value)


def _bad(path: Path, message: str):
    raise ScalingInputError(f"{path}: {message}")


def _checked(path: Path, study: ScoredStudy) -> ScoredStudy:
    """Every task of a study has the same number of samples: the study's K (the most any task has)."""
    big_k = max(len(t.scores) for t in study.tasks)
    short = [t for t in study.tasks if len(t.scores) < big_k]
    if short:
        first = short[0]
        raise ScalingInputError(
            f"{path}: study {study.name!r}: {len(short)} of {len(study.tasks)} tasks have fewer than K = {big_k} "
            f"samples (task {first.name!r}, field '{SCORES}': {len(first.scores)}); write null for a missing sample"
        )
    return study


# ---------------------------------------------------------------- CSV


CSV_COLUMNS = ("study", "task", "sample", "score")


def _csv_studies(path: Path, text: str) -> list[ScoredStudy]:
    reader = csv.DictReader(text.splitlines())
    reader.fieldnames = _csv_header(path, reader.fieldnames or [])
    scores: dict[str, dict[str, dict[int, float | None]]] = {}
    verdicts: dict[str, dict[str, dict[str, dict[int, bool | None]]]] = {}
    for lineno, row in enumerate(reader, 2):
        study, task, sample, score = _csv_row(path, lineno, row)
        seen = scores.setdefault(study, {}).setdefault(task, {})
        if sample in seen and seen[sample] != score:
            raise ScalingInputError(
                f"{path}:{lineno}: study {study!r}, task {task!r}, sample {sample}: field 'score' differs from an "
                "earlier row of the same sample"
            )
        seen[sample] = score
        judge = (row.get("judge") or "").strip()
        if judge:
            where = f"{path}:{lineno}: study {study!r}, task {task!r}, field 'verdict'"
            by_judge = verdicts.setdefault(study, {}).setdefault(task, {}).setdefault(judge, {})
            by_judge[sample] = _csv_verdict(where, row.get("verdict") or "")
    return [_csv_study(path, study, tasks, verdicts.get(study, {})) for study, tasks in scores.items()]


def _csv_header(path: Path, fieldnames: Sequence[str]) -> list[str]:
    """The CSV's column names, stripped; it must name `CSV_COLUMNS`, and judge and verdict together or neither."""
    header = [h.strip() for h in fieldnames]
    absent = [c for c in CSV_COLUMNS if c not in header]
    if absent:
        raise ScalingInputError(
            f"{path}: no column {', '.join(map(repr, absent))} (the header must name study,task,sample,score "
            "and optionally judge,verdict)"
        )
    if ("judge" in header) != ("verdict" in header):
        raise ScalingInputError(f"{path}: columns 'judge' and 'verdict' go together")
    return header


def _csv_row(path: Path, lineno: int, row: dict[str, str | None]) -> tuple[str, str, int, float | None]:
    """One CSV line's study, task, sample number and score (None: empty)."""
    for key in ("study", "task", "sample"):
        if not (row.get(key) or "").strip():
            raise ScalingInputError(f"{path}:{lineno}: field {key!r} is missing")
    study, task = (row["study"] or "").strip(), (row["task"] or "").strip()
    where = f"{path}:{lineno}: study {study!r}, task {task!r}"
    try:
        sample = int(row["sample"] or "")
    except ValueError:
        raise ScalingInputError(f"{where}, field 'sample': {row['sample']!r} is not a sample number") from None
    return study, task, sample, _csv_score(f"{where}, field 'score'", (row.get("score") or "").strip())


def _csv_score(where: str, text: str) -> float | None:
    """A CSV score: a finite number, or None when empty; a boolean is refused (a score, not a verdict)."""
    if text.lower() in ("true", "false"):
        raise ScalingInputError(f"{where}: {text} is a boolean, not a score (write 1 or 0)")
    try:
        score = float(text) if text else None
    except ValueError:
        raise ScalingInputError(f"{where}: {text!r} is not a number") from None
    if score is not None and not math.isfinite(score):
        raise ScalingInputError(f"{where}: {text} is not a score")
    return score


def _csv_verdict(where: str, text: str) -> bool | None:
    word = text.strip().lower()
    if not word:
        return None
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ScalingInputError(f"{where}: {text!r} is not a verdict (true/false, correct/wrong, 1/0, or empty)")


def _csv_study(
    path: Path,
    name: str,
    tasks: dict[str, dict[int, float | None]],
    verdicts: dict[str, dict[str, dict[int, bool | None]]],
) -> ScoredStudy:
    out = []
    for task, samples in tasks.items():
        order = sorted(samples)
        judged = {judge: [by_sample.get(j) for j in order] for judge, by_sample in verdicts.get(task, {}).items()}
        scores = [samples[j] for j in order]
        out.append(ScoredTask(task, [s or 0.0 for s in scores], sum(s is None for s in scores), judged))
    return _checked(path, ScoredStudy(name, out))
