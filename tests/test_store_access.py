"""A store that cannot be written (its mode, an immutable flag, its folder) and a store whose disk fills up mid-run.

Writing commands stop before they touch anything and say which file and why, in one line (exit 2); reading
commands go on reading. A full disk stops a run as incomplete (exit 3) with every committed step kept, and the
same command resumes it once there is room.

The store is made unwritable by what binds the user running the suite, root included (`tests/unwritable.py`). A
full disk is SQLite's own: `PRAGMA
max_page_count` caps the run's connection, and SQLite raises "database or disk is full" at the commit that would
grow the file, as it does on a full file system.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from storage import Store
from storage.errors import StoreFull, StoreReadOnly
from tests.cli_inprocess import batch
from tests.unwritable import unwritable


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


@pytest.fixture
def stored(tmp_path, capsys) -> Path:
    """A store holding two finished runs, closed cleanly, without its run-lock folder: what a copy of a store
    looks like."""
    db = tmp_path / "store" / "runs.sqlite"
    db.parent.mkdir()
    for name in ("a", "b"):
        r = batch(
            capsys,
            "run",
            "--data",
            "builtin",
            "--agent",
            "heuristic",
            "--limit",
            "3",
            "--run",
            name,
            "--db",
            str(db),
            "--quiet",
        )
        assert r.returncode == 0, r.stderr
    shutil.rmtree(db.with_name(db.name + ".locks"))
    return db


WRITING = {
    "run": ["run", "--data", "builtin", "--agent", "heuristic", "--limit", "2", "--run", "c", "--quiet"],
    "rename": ["rename", "a", "a2"],
    "runs tag": ["runs", "tag", "a", "--family", "mine", "--tier", "open-frontier"],
    "delete": ["delete", "a", "--yes"],
    "audit verdict": ["audit", "verdict", "st_0001", "--verdict", "flag", "--reviewer", "ana", "--data", "builtin"],
    "resume": ["run", "--data", "builtin", "--agent", "heuristic", "--limit", "4", "--run", "a", "--quiet"],
}


@pytest.mark.parametrize("command", list(WRITING))
def test_a_writing_command_on_a_read_only_store_says_which_file_and_why_and_creates_nothing(stored, command, capsys):
    folder = stored.parent
    before, content = _listing(folder), stored.read_bytes()
    with unwritable(stored) as why:
        r = batch(capsys, *WRITING[command], "--db", str(stored))
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert str(stored) in lines[0] and "cannot be written" in lines[0] and why in lines[0], lines[0]
    assert _listing(folder) == before  # no `.locks` folder, no journal
    assert stored.read_bytes() == content


@pytest.mark.parametrize("command", ["run", "rename"])
def test_a_store_in_a_read_only_folder_is_refused_naming_the_folder(stored, command, capsys):
    with unwritable(stored.parent) as _:
        r = batch(capsys, *WRITING[command], "--db", str(stored))
    assert r.returncode == 2, r.stderr
    assert str(stored) in r.stderr and "folder" in r.stderr and "Traceback" not in r.stderr, r.stderr


def test_a_new_store_in_a_read_only_folder_is_refused_before_anything_runs(tmp_path, capsys):
    folder = tmp_path / "ro"
    folder.mkdir()
    with unwritable(folder):
        r = batch(capsys, *WRITING["run"], "--db", str(folder / "runs.sqlite"))
        assert _listing(folder) == []
    assert r.returncode == 2 and "cannot be written" in r.stderr and "folder" in r.stderr, r.stderr


READING = [["runs"], ["report", "a"], ["compare", "a", "b"], ["export", "a", "--format", "jsonl"]]


@pytest.mark.parametrize("folder_too", [False, True], ids=["file", "file-and-folder"])
def test_reading_commands_keep_working_on_a_read_only_store(stored, folder_too, capsys):
    paths = (stored, stored.parent) if folder_too else (stored,)
    with unwritable(*paths):
        for command in READING:
            r = batch(capsys, *command, "--db", str(stored))
            assert r.returncode == 0, (command, r.stderr)


def test_a_store_opened_to_write_is_refused_at_once_and_one_opened_to_read_is_refused_at_the_write(stored):
    """Opened read-write, a store this process cannot write is refused before SQLite creates anything; opened
    read-only (as the TUI then opens it), it reads, and whatever method writes (a tag, a verdict, a merge) raises
    the store's own error naming the file and why."""
    with unwritable(stored) as why:
        with pytest.raises(StoreReadOnly, match=why):
            Store(stored)
        store = Store(stored, readonly=True)
        try:
            run = store.run("a")
            with pytest.raises(StoreReadOnly, match="cannot be written"):
                store.update_run(run["id"], family="mine")
        finally:
            store.close()


# ------------------------------------------------------------------ a full disk


def _spec(name: str, limit: int = 20):
    from workbench.service.launch import LaunchRequest, run_spec

    return run_spec(LaunchRequest(dataset="builtin", agent="heuristic", name=name, limit=limit, workers=2))


def _pages(store: Store) -> int:
    return store.conn.execute("PRAGMA page_count").fetchone()[0]


def test_a_full_disk_mid_run_stops_it_incomplete_keeps_what_was_committed_and_a_resume_finishes_it(
    tmp_path, shared_cache
):
    import asyncio

    from workbench.service.datasets import open_dataset
    from workbench.service.execution import runner

    corpus, _ = open_dataset("builtin", shared_cache)
    db = tmp_path / "runs.sqlite"
    store = Store(db)
    finished = []

    def on_event(event) -> None:
        if event.kind == "trajectory":
            finished.append(event.item_id)
            if len(finished) == 3:  # no room from now on: SQLite says the disk is full at the next growth
                store.conn.execute(f"PRAGMA max_page_count = {_pages(store)}")

    # bounded: before the store said so, a full disk could leave the run's episodes waiting for a commit forever
    result = asyncio.run(asyncio.wait_for(runner(_spec("full"), corpus, store, on_event=on_event).run(), 300))
    assert result["store_full"] and "disk is full" in result["store_full"]
    assert result["status"] == "interrupted" and 3 <= result["done"] < result["planned"]
    store.close()

    store = Store(db, readonly=True)  # what was committed is there, steps and all
    run = store.run("full")
    kept = {t["id"]: (t["item_id"], t["replicate"]) for t in store.trajectories(run["id"]) if t["status"] == "done"}
    assert len(kept) >= 3 and all(store.steps(i) for i in kept)
    store.close()

    store = Store(db)  # room again (a new connection has no cap): the same run resumes and finishes
    again = asyncio.run(runner(_spec("full"), corpus, store).run())
    assert again["status"] == "done" and again["store_full"] is None and again["done"] == again["planned"]
    rows = [t for t in store.trajectories(store.run("full")["id"]) if t["status"] == "done"]
    assert sorted((t["item_id"], t["replicate"]) for t in rows) == sorted(
        {(t["item_id"], t["replicate"]) for t in rows}
    )
    assert set(kept) <= {t["id"] for t in rows}  # the first session's trajectories kept, not redone
    store.close()
    corpus.close()


def test_the_cli_says_the_stores_disk_is_full_and_exits_3(tmp_path, shared_cache, capsys):
    from workbench.cli.errors import ExitCode
    from workbench.cli.run import execute, finished_status
    from workbench.service.datasets import open_dataset

    corpus, _ = open_dataset("builtin", shared_cache)
    whole = Store(tmp_path / "whole.sqlite")  # how many pages the whole run takes, measured on a store of its own
    start = _pages(whole)
    execute(_spec("w"), corpus, whole, quiet=True)
    grown = _pages(whole) - start
    whole.close()

    store = Store(tmp_path / "runs.sqlite")
    store.conn.execute(f"PRAGMA max_page_count = {_pages(store) + grown // 2}")
    result = execute(_spec("w"), corpus, store, quiet=True)
    err = capsys.readouterr().err
    assert finished_status(result) == ExitCode.INCOMPLETE
    assert "disk is full" in err and str(tmp_path / "runs.sqlite") in err and "Traceback" not in err, err
    assert "run the same command again" in err
    store.close()
    corpus.close()


def test_a_full_disk_at_a_plain_write_is_the_stores_error(stored):
    store = Store(stored)
    try:
        store.conn.execute(f"PRAGMA max_page_count = {_pages(store)}")
        with pytest.raises(StoreFull, match="disk is full"), store.transaction() as conn:
            conn.executemany("INSERT OR IGNORE INTO texts VALUES (?, ?)", [(f"h{i}", "x" * 4000) for i in range(50)])
    finally:
        store.close()
