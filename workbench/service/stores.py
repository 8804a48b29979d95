"""The results store as a front end reaches it: opened, locked, merged, exported — through here, never directly.

Front ends hold the store this hands them and ask it their questions through the application layer's calls;
they never name `storage` (the one-door contract in pyproject.toml). What each function does is the store's;
what this module adds is that it is the only way in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO


def open_store(path: Path | str, readonly: bool = False) -> Any:
    """The store at `path` (created with its folders unless `readonly`); StoreError when it cannot be opened, and
    StoreReadOnly, before anything is created, when it is opened to write and cannot be written here."""
    from storage import Store

    return Store(path, readonly=readonly)


def open_store_to_read(path: Path | str) -> Any:
    """The store at `path`, read-write where this process can write it, else read-only: what reads a store (a screen,
    a result that may record what it computed, such as a judge's verdicts) still reads one it cannot write, and a
    write then says why (StoreReadOnly). A writing command opens with `open_store`, which refuses such a store at
    once."""
    from storage.errors import StoreReadOnly

    try:
        return open_store(path)
    except StoreReadOnly:
        if not Path(path).exists():  # nothing to read: the refusal is the answer
            raise
        return open_store(path, readonly=True)


def run_lock(store_path: Path, run_name: str) -> Any:
    """A context manager holding the run's lock (RunBusy, a StoreError, when another process executes it)."""
    from storage.locks import RunLock

    return RunLock(store_path, run_name)


def rename_run(store: Any, old: str, new: str) -> None:
    """Rename a run while holding the locks of both names (RunBusy, a StoreError, naming the holder's pid).

    A process executing `old` writes by the old name, and would fail on it mid-run; a process starting
    `new` would write beside the renamed run. Like `run` and `delete`, a rename waits for neither."""
    with run_lock(store.path, old), run_lock(store.path, new):
        store.rename_run(old, new)


def delete_run(store: Any, name: str) -> None:
    """Delete a run while holding its lock (RunBusy, a StoreError, naming the holder's pid): a process executing
    it would go on writing trajectories of a run that is gone."""
    with run_lock(store.path, name):
        store.delete_run(name)


def stored_trajectories(store: Any, name: str) -> tuple[int, int]:
    """What deleting run `name` removes: its (finished, unfinished) trajectories, every attempt — an interrupted run
    holds unfinished ones (a StoreError when the run is gone)."""
    return store.trajectory_counts(store.run(name)["id"])


def lock_holder(store_path: Path, run_name: str) -> int | None:
    """The pid of the process executing the run, or None."""
    from storage.locks import holder

    return holder(store_path, run_name)


def identity_differences(stored: dict[str, Any], requested: dict[str, Any]) -> list[str]:
    """The identity keys in which a requested run differs from the stored one (a resume is refused on any)."""
    from storage.store.runs import identity_diff

    return identity_diff(stored, requested)


def differences_phrase(keys: list[str]) -> str:
    """The store's own phrase for those keys, as its refusal says them."""
    from storage.store.runs import differ_phrase

    return differ_phrase(keys)


def merge(
    dest: Any, sources: list[Any], names: list[str] | None, include_partial: bool, item_order: Any = None
) -> list[Any]:
    """Copy runs from `sources` into `dest` in one transaction (`storage.merge.merge_stores`)."""
    from storage.merge import merge_stores

    return merge_stores(dest, sources, names, include_partial=include_partial, item_order=item_order)


def export_run(store: Any, name: str, out: TextIO | Path, all_attempts: bool = False, with_steps: bool = True) -> int:
    """The run's trajectories as JSON Lines (a file is written atomically); how many."""
    from storage.export import export_jsonl

    return export_jsonl(store, name, out, all_attempts=all_attempts, with_steps=with_steps)


@contextmanager
def atomic_text(path: Path) -> Iterator[TextIO]:
    """A text file that appears whole at `path` when the block ends, or not at all."""
    from storage.export import atomic_text_file

    with atomic_text_file(path) as fh:
        yield fh
