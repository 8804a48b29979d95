"""Section recall of stored runs under the current label rules, before any number is read from them (PROTOCOL §3).

Both front ends call `bring_current`: the CLI before `report`, `compare`, `report --panel` and `leaderboard`, the
TUI once when it opens a store, so an old run and a new one are never shown side by side under two different
label resolutions. The flags are recomputed from each trajectory's stored reads (`sandbox.rescore`); a run whose
dataset cannot be opened, or has changed since, keeps its flags, and its report names the older resolution.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from sandbox.sections import LABEL_RESOLUTION, is_stale, run_resolution  # re only: the TUI checks at start-up
from storage import Store, StoreError

OpenCorpus = Callable[[dict[str, Any]], tuple[Any, str | None]]


def run_corpus(run: dict[str, Any], cache_dir: Path) -> tuple[Any, str | None]:
    """(the run's dataset, None), or (None, why it cannot be opened)."""
    from sandbox.datasets import open_dataset
    from sandbox.release import DatasetError

    try:
        return open_dataset(run["dataset"], cache_dir)[0], None
    except (DatasetError, OSError) as exc:
        return None, f"the run's dataset {run['dataset']!r} cannot be opened: {exc}"


def bring_current(store_path: Path, names: Iterable[str] | None, open_corpus: OpenCorpus) -> list[str]:
    """Recompute the flags of the named runs (every evaluation run when `names` is None) stored under older label
    rules; return one note per stale run saying what was done. Nothing happens (and no note) when the store cannot
    be written by this process: the reports then name the resolution each run was computed under."""
    if not store_path.exists():
        return []
    try:
        store = Store(store_path)
    except StoreError:
        return []
    with store:
        runs = store.runs() if names is None else [store.run(n) for n in names]
        return [_bring(store, run, open_corpus) for run in runs
                if is_stale(run) and (names is not None or run["kind"] == "eval")]


def _bring(store: Store, run: dict[str, Any], open_corpus: OpenCorpus) -> str:
    from sandbox.rescore import rescore  # only when a run is stale: it imports the records and the recall rules

    corpus, reason = open_corpus(run)
    done = rescore(store, run, corpus) if corpus is not None else None
    was = run_resolution(run)
    if done is None:
        why = reason or f"its dataset {run['dataset']!r} has changed since the run"
        return (f"run '{run['name']}' keeps section recall under label resolution {was} "
                f"(current: {LABEL_RESOLUTION}): {why}")
    return (f"recomputed section recall of run '{run['name']}' ({done} trajectories) from its stored reads under "
            f"label resolution {LABEL_RESOLUTION} (it was {was})")
