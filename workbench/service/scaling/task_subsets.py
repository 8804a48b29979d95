"""Which tasks of a parallel scores file a reading covers (`scale parallel --scores FILE --tasks FILE|NAME`).

A study's table may be printed over a subset of a benchmark's released tasks: General AgentBench's Tool-use Pass@K
reads tau2 over 47 of its 50 tasks. `--tasks` names such a subset by name (`SUBSETS`) or gives the task names in a
file, one a line, so the command rebuilds those cells itself. A study read through a subset is reported with it
(`tasks` in the JSON), over its remaining tasks only.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from workbench.service.scaling.parallel_scores import ScoredStudy
from workbench.service.scaling.sequential import ScalingInputError


@dataclass(frozen=True)
class TaskSubset:
    """The tasks a reading keeps: those named (`names`; None: every one) less those whose name starts with one of
    `dropped`; `label` says which subset it is (its name, or the file it was read from)."""

    label: str
    names: frozenset[str] | None = None
    dropped: tuple[str, ...] = ()
    about: str = ""

    def keeps(self, task: str) -> bool:
        return (self.names is None or task in self.names) and not task.startswith(self.dropped)


# The study's own subsets, by name. tau2-47: the Tool-use table's tau2 part has 47 of the 50 released tasks; which 3
# it left out is not identified (196 of the C(50, 3) triples give the same counts for every reproduced cell), and
# airline 0, 14 and 24 — the release's task-id collision, the one set with a known defect — stand in for them.
SUBSETS = {
    "tau2-47": TaskSubset(
        "tau2-47",
        dropped=("tau2_airline_0_", "tau2_airline_14_", "tau2_airline_24_"),
        about="tau2's 50 tasks less airline 0, 14 and 24 (the Tool-use table's 47; a stand-in for its unnamed 3)",
    ),
}


def task_subset(given: str) -> TaskSubset:
    """The subset `--tasks` names: one of `SUBSETS`, else a file of task names (one a line; blank lines and lines
    starting with # ignored). ScalingInputError for a file that cannot be read or names no task."""
    if given in SUBSETS:
        return SUBSETS[given]
    path = Path(given)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        known = ", ".join(SUBSETS)
        raise ScalingInputError(f"--tasks {given}: neither a subset ({known}) nor a readable file ({exc})") from None
    names = {line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")}
    if not names:
        raise ScalingInputError(f"--tasks {given}: the file names no task (one task name a line)")
    return TaskSubset(str(path), names=frozenset(names))


def within(study: ScoredStudy, subset: TaskSubset, path: Path) -> ScoredStudy:
    """The study over the subset's tasks; ScalingInputError when it keeps none of them."""
    kept = [t for t in study.tasks if subset.keeps(t.name)]
    if not kept:
        raise ScalingInputError(f"{path}: study {study.name!r} has no task in --tasks {subset.label}")
    return replace(study, tasks=kept)
