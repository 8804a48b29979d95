"""The Scaling screen's model: the sources it lists, which computation reads the one chosen, how a study it
watches is followed (when its result is drawn again, where it shows, what its progress says), and the paths its
import and export dialogs take.

The numbers are `workbench.service.scaling`'s (`results`: each source's result on its own store connection). The
scaling service is imported inside the functions that use it (importing it takes 0.3 s): this module, which the
screen's module imports, stays light to import.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, TypedDict

from workbench.tui.forms.export_files import safe_stem

if TYPE_CHECKING:
    from workbench.service.records.parallel import JudgeJson, KRowJson, ParallelReport, TrialRow
    from workbench.service.records.sequential import Plateau, StrategyComparison, ToolsReport
    from workbench.service.scaling import ScoredStudy, StudyPlan
    from workbench.service.scaling.results import PlateauOptions

SourceKind = Literal["sequential", "parallel", "strategies", "tools", "imported"]
"""A sequential group (its plateau), a parallel run (its verification gap), a comparison of strategies, the
general-agent setting's registry-size group, or a parallel study of a scores file (shown as a sampled one)."""

ScalingResult: TypeAlias = "Plateau | StrategyComparison | ToolsReport | ParallelReport"
"""What a source's computation returns: the result `scale` prints for its kind."""


@dataclass(frozen=True)
class Source:
    """One entry of the list: what it is, its name and its detail column (`seq ×3`, `par K=4`)."""

    kind: SourceKind
    name: str
    detail: str
    groups: tuple[str, ...] = ()  # strategies: the sequential groups compared

    @property
    def key(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(frozen=True)
class Imported:
    """A study of a parallel scores file the screen lists (nothing is written to the store): its source, the study
    as read and the file it came from."""

    source: Source
    study: ScoredStudy
    path: str


def scaling_sources(runs: Sequence[Mapping[str, Any]]) -> list[Source]:
    """Comparisons of strategies first, then sequential groups (with their budget count), parallel runs (with K)
    and registry-size groups, in store order."""
    tags = [(run.get("kind"), run.get("group_name")) for run in runs]
    groups, tools = _group_sizes(tags, "sequential"), _group_sizes(tags, "tools")
    parallel = [
        Source("parallel", run["name"], f"par K={run.get('replicates') or 1}")
        for run in runs
        if run.get("kind") == "parallel"
    ]
    seq = [Source("sequential", name, f"seq ×{n}") for name, n in groups.items()]
    from workbench.service.scaling import strategy_studies

    compared = [
        Source("strategies", name, f"cmp ×{len(members)}", tuple(members))
        for name, members in strategy_studies(list(groups)).items()
    ]
    return compared + seq + parallel + [Source("tools", name, f"tools ×{n}") for name, n in tools.items()]


def _group_sizes(tags: list[tuple[str | None, str | None]], kind: str) -> Counter[str]:
    """How many runs each group of `kind` has, from the runs' (kind, group) in store order (ungrouped: left out)."""
    return Counter(group for run_kind, group in tags if run_kind == kind and group)


def listed_sources(runs: Sequence[Mapping[str, Any]], imported: Mapping[str, Imported]) -> list[Source]:
    """The list as shown: the store's sources, then the studies imported from files."""
    return scaling_sources(runs) + [entry.source for entry in imported.values()]


def source_by_key(sources: Sequence[Source], key: str | None) -> Source | None:
    return next((source for source in sources if source.key == key), None)


def imported_studies(path: Path) -> list[Imported]:
    """An entry for each study of a parallel scores file, with the study read; ScalingInputError says what is wrong
    with the file (the same words as `scale parallel --scores`)."""
    from workbench.service.scaling import load_parallel_scores

    return [
        Imported(Source("imported", study.name, f"file K={study.k_max}"), study, str(path))
        for study in load_parallel_scores(path)
    ]


# ---------------------------------------------------------------- computing a source's result


def reading_options(options: PlateauOptions, study: WatchedStudy | None) -> PlateauOptions:
    """The plateau options a source is read with: the screen's, and only a sweep's finished levels while a study
    this screen watches is still filling it in."""
    read: PlateauOptions = {**options}
    if study is not None and study.active:
        read["finished_only"] = True
    return read


def sampling(study: WatchedStudy | None, source: Source) -> bool:
    """Whether `source` is the parallel study `study`, still sampling (not yet judged)."""
    return (
        study is not None
        and study.status == "running"
        and study.plan.kind == "parallel"
        and source.kind == "parallel"
        and source.name == study.plan.name
    )


def computation(
    source: Source,
    store_path: Path,
    open_corpus: Callable[[str], Any],
    options: PlateauOptions,
    judge: Any,
    imported: Mapping[str, Imported],
) -> Callable[[], ScalingResult]:
    """The computation of `source`'s result (its kind's), to run in a thread worker: a parallel run is read with
    `judge` (None: the judge it recorded)."""
    return partial(_compute, source, store_path, open_corpus, options, judge, imported.get(source.key))


def _compute(
    source: Source,
    store_path: Path,
    open_corpus: Callable[[str], Any],
    options: PlateauOptions,
    judge: Any,
    imported: Imported | None,
) -> ScalingResult:
    from workbench.service.scaling import results

    if source.kind == "sequential":
        return results.compute_plateau(store_path, source.name, options)
    if source.kind == "strategies":
        return results.compute_strategies(store_path, source.groups, options)
    if source.kind == "tools":
        return results.compute_tools(store_path, source.name)
    if source.kind == "imported":
        if imported is None:
            raise LookupError(f"{source.name}: no such imported study")
        return results.compute_imported(imported.study, imported.path)
    return results.compute_parallel(store_path, open_corpus, source.name, None, judge)


def reading_judge(judge: Any, study: WatchedStudy | None, source: Source) -> Any:
    """The judge a parallel `source` is read with: the screen's (None: the run's recorded one) or, while the
    `study` it is still samples, its judge's stored verdicts only (they come after the sampling)."""
    if study is None or not sampling(study, source):
        return judge
    from workbench.service.scaling import stored_only

    return stored_only(study.plan.judge)


@dataclass(frozen=True)
class JudgeTables:
    """What the tables under a parallel report show: the judges measured, the k whose row has the study's
    self-choice, and the judge trials' spread per k (each empty when the report has none)."""

    judges: list[JudgeJson]
    self_choice: list[KRowJson]
    trials: list[TrialRow]


def judge_tables(report: ParallelReport | None) -> JudgeTables:
    if report is None:
        return JudgeTables([], [], [])
    trials = report["judge_trials"]
    return JudgeTables(
        report["judges"],
        [row for row in report["per_k"] if "self_choice" in row],
        (trials["per_k"] if trials else None) or [],
    )


# ---------------------------------------------------------------- a study launched from the screen


class LevelCounts(TypedDict):
    """How far one level of a study got (the study job's `progress()` rows)."""

    run: str
    status: str
    done: int
    planned: int
    correct: int


class WatchedStudy(Protocol):
    """What the screen follows of a study it launched (or found running): `workbench.tui.jobs.StudyJob`."""

    plan: StudyPlan
    status: str
    message: str

    @property
    def name(self) -> str: ...

    @property
    def active(self) -> bool: ...

    @property
    def finished_levels(self) -> int: ...

    def progress(self) -> Sequence[LevelCounts]: ...


LEVEL_MARKS = {"done": "✓", "running": "▶", "starting": "·", "interrupted": "⊘", "failed": "✗"}


@dataclass(frozen=True)
class StudyProgress:
    """A study's state in words: its name (the screen shows it bold), its status line, and one line per level with
    its episodes done and accuracy so far."""

    name: str
    status: str
    levels: list[str]


def study_progress(study: WatchedStudy) -> StudyProgress:
    status = f" · {study.status}" + (f" · {study.message}" if study.message else "")
    status += " · x cancels" if study.active else ""
    levels = []
    for level in study.progress():
        acc = f", accuracy {100 * level['correct'] / level['done']:.1f}%" if level["done"] else ""
        mark = LEVEL_MARKS.get(level["status"], "·")
        levels.append(f"  {mark} {level['run']}: {level['done']}/{level['planned']}{acc}")
    return StudyProgress(f"study {study.name}", status, levels)


def study_state(study: WatchedStudy) -> tuple[str, int, int]:
    """What redraws a study's result when it changes: its status, its finished levels and, for a parallel study,
    its samples in rounds of K (an item's K samples, at the earliest)."""
    sampled = sum(level["done"] for level in study.progress()) if study.plan.kind == "parallel" else 0
    return study.status, study.finished_levels, sampled // max(1, *(study.plan.ks or [1]))


def study_drawable(study: WatchedStudy, rounds: int) -> bool:
    """Whether a study has a result to draw: it ended, a sweep has two levels, or a parallel study sampling has
    `rounds` of K samples."""
    if study.status in ("done", "stopped", "failed"):
        return True
    if study.plan.kind == "sequential":
        return study.finished_levels >= 2
    return study.plan.kind == "parallel" and study.status == "running" and rounds >= 1


def study_source(plan: StudyPlan, sources: Sequence[Source]) -> Source | None:
    """Where the study `plan`'s result shows among `sources`: its comparison, its one group, or its parallel run."""
    if plan.kind == "parallel":
        key = Source("parallel", plan.name, "").key
    elif len(plan.groups) > 1:
        key = Source("strategies", plan.name, "").key
    else:
        key = Source("sequential", plan.groups[0], "").key
    return source_by_key(sources, key)


# ---------------------------------------------------------------- the import and export dialogs


def scores_path_problem(value: str) -> str | None:
    """Why the import dialog's `value` names no scores file to read, or None."""
    if not value:
        return "a file path is needed"
    return None if Path(value).expanduser().is_file() else "no such file"


def export_path_problem(value: str) -> str | None:
    """Why the export dialog's `value` names no file to write, or None."""
    if not value:
        return "a file path is needed"
    return "that is a directory; name a file" if Path(value).expanduser().is_dir() else None


def export_path(directory: Path, source: Source) -> Path:
    """The file the export dialog offers for `source`: `scaling-NAME.json` in `directory`, the name made safe."""
    return directory / f"scaling-{safe_stem(source.name, 'scaling')}.json"


def export_format(path: Path) -> Literal["csv", "json"]:
    """CSV when the file's name ends in .csv, JSON otherwise."""
    return "csv" if path.suffix.lower() == ".csv" else "json"
