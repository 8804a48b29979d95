"""Section recall of stored runs under the current label rules, and the hop of each stored read from the seed,
before any number is read from them (docs/protocol.md "Section labels").

Both front ends call `bring_current`: the CLI before `report`, `compare`, `report --panel` and `leaderboard`, the
TUI once when it opens a store, so an old run and a new one are never shown side by side under two different
label resolutions. The flags are recomputed from each trajectory's stored reads (`sandbox.rescore`); a run whose
dataset cannot be opened, or has changed since, keeps its flags, and its report names the older resolution. A run
stored before hops were recorded gets them from its stored reads the same way (`sandbox.rescore.rehop`): they are a
function of each read's paper and the item's graph, so its report shows them as a new run's would, not "—"; only
a run whose dataset cannot be opened shows them as not measured.

The store is opened read-only to find the stale runs, and for writing only when there is one: a front end that
merely looks at a store whose runs are all current never opens it for writing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sandbox.citations import HOP_RULE, hops_stale  # cheap imports: the TUI checks at start-up
from sandbox.sections import LABEL_RESOLUTION, is_stale, run_resolution
from storage import Store, StoreError
from storage.rows import RunRow

OpenCorpus = Callable[[RunRow], tuple[Any, str | None]]  # (the run's dataset, None) or (None, why not)


def run_corpus(run: RunRow, cache_dir: Path) -> tuple[Any, str | None]:
    """(the run's dataset, None), or (None, why it cannot be opened)."""
    from sandbox.datasets import open_dataset, run_dataset
    from sandbox.release import DatasetError

    try:
        return open_dataset(run_dataset(run), cache_dir)[0], None
    except (DatasetError, OSError) as exc:
        return None, f"the run's dataset {run['dataset']!r} cannot be opened: {exc}"


def bring_current(store_path: Path, names: Iterable[str] | None, open_corpus: OpenCorpus) -> list[str]:
    """Recompute the flags of the named runs (every evaluation run when `names` is None) stored under older label
    rules, and the hops of their reads stored before hops were recorded; return one note per stale run saying what
    was done. Nothing happens (and no note) when the store cannot be written by this process: the reports then name
    the resolution each run was computed under and show unmeasured hops as "—"."""
    stale = stale_runs(store_path, names)
    if not stale:
        return []
    try:
        store = Store(store_path)
    except StoreError:
        return []
    corpora: dict[str, tuple[Any, str | None]] = {}  # one open per dataset, however many of its runs are stale
    with store:
        try:
            notes = []
            for name in stale:
                run = store.run(name)
                if run["dataset"] not in corpora:
                    corpora[run["dataset"]] = open_corpus(run)
                notes += _bring(store, run, *corpora[run["dataset"]])
            return notes
        finally:
            for corpus, _ in corpora.values():
                if corpus is not None:
                    corpus.close()


def stale_runs(store_path: Path, names: Iterable[str] | None) -> list[str]:
    """The names of the runs among `names` (every evaluation run when None) whose section recall or read hops are
    not under the current rules, found through a read-only connection."""
    if not store_path.exists():
        return []
    try:
        store = Store(store_path, readonly=True)
    except StoreError:
        return []
    with store:
        runs = store.runs() if names is None else [store.run(n) for n in names]
        return [
            run["name"]
            for run in runs
            if (is_stale(run) or hops_stale(run)) and (names is not None or run["kind"] == "eval")
        ]


def _bring(store: Store, run: RunRow, corpus: Any, reason: str | None) -> list[str]:
    """Bring one stale run current, each measurement in turn (section recall, read hops): a note per one."""
    from sandbox.rescore import RECOMPUTED  # only when a run is stale: it imports the records and the recall rules

    name, was = run["name"], run_resolution(run)
    wording = (  # in RECOMPUTED's order: (what stays when it cannot be recomputed, what was done)
        (
            f"keeps section recall under label resolution {was} (current: {LABEL_RESOLUTION})",
            lambda n: (
                f"recomputed section recall of run '{name}' ({n} trajectories) from its stored reads under "
                f"label resolution {LABEL_RESOLUTION} (it was {was})"
            ),
        ),
        (
            "has no hop distances for its reads (not measured, —)",
            lambda n: f"measured the hop from the seed of {n} stored read(s) of run '{name}' (hop rule {HOP_RULE})",
        ),
    )
    row = store.run_by_id(run["id"])  # RECOMPUTED takes the row as the runner's resume reads it (`Store.run_by_id`)
    notes = []
    for (stale, recompute), (kept, done_note) in zip(RECOMPUTED, wording, strict=True):
        if stale(row):
            done = recompute(store, row, corpus) if corpus is not None else None
            notes.append(f"run '{name}' {kept}: {_why(run, reason)}" if done is None else done_note(done))
    return notes


def _why(run: RunRow, reason: str | None) -> str:
    """Why a stale run could not be brought current: its dataset would not open, or is not the one it ran on."""
    return reason or f"its dataset {run['dataset']!r} has changed since the run"
