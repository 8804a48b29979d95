"""One process per run: a second `run` on a run in progress is refused; a dead holder blocks nothing."""

import json
import os
import signal
import subprocess
import sys

import pytest

from storage import Store, StoreError
from storage.locks import RunBusy, RunLock, holder
from tests.held_run import hold, release

LONG_RUN = [
    sys.executable,
    "-m",
    "workbench.cli",
    "--batch",
    "run",
    "--data",
    "builtin",
    "--agent",
    "heuristic",
    "--replicates",
    "40",
    "--workers",
    "4",
    "--quiet",
    "--format",
    "json",
]


def start_long_run(db, name: str, env) -> subprocess.Popen:
    """A run held in progress (stopped after its first trajectory, its lock held) until `release`: a run merely
    started raced the test's next process, which on a slow machine came after the last of its 2,400 episodes."""
    proc = subprocess.Popen(
        [*LONG_RUN, "--run", name, "--db", str(db)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    hold(proc, db, planned=2400)
    return proc


def reap(proc: subprocess.Popen) -> None:
    """Wait for a stopped run's process; one that outlives the wait is killed, so a failing test leaves none running."""
    try:
        proc.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


def test_a_second_process_on_a_run_in_progress_is_refused(tmp_path):
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    db = tmp_path / "s.sqlite"
    first = start_long_run(db, "dup2", env)
    try:
        second = subprocess.run(
            [*LONG_RUN, "--run", "dup2", "--db", str(db)], env=env, capture_output=True, text=True, timeout=120
        )
        assert second.returncode == 2, second.stderr
        assert second.stderr.strip() == (
            f"error: run 'dup2' is in progress in another process (pid {first.pid}); wait for it or stop it"
        )
        assert holder(db, "dup2") == first.pid
    finally:
        release(first, signal.SIGINT)
        reap(first)
    assert first.returncode == 130
    assert holder(db, "dup2") is None
    store = Store(db, readonly=True)
    run_id = store.run("dup2")["id"]
    dupes = store.conn.execute(
        "SELECT COUNT(*) FROM (SELECT 1 FROM trajectories WHERE run_id = ? AND final = 1 "
        "GROUP BY item_id, replicate HAVING COUNT(*) > 1)",
        (run_id,),
    ).fetchone()[0]
    assert dupes == 0 and store.run("dup2")["status"] == "interrupted"


def test_the_lock_is_per_run_and_exclusive_within_one_process(tmp_path):
    """The TUI runs jobs on threads of one process: two jobs of one run must exclude each other too."""
    db = tmp_path / "s.sqlite"
    with RunLock(db, "a"):
        with pytest.raises(RunBusy, match=rf"run 'a' is in progress in another process \(pid {os.getpid()}\)"):
            RunLock(db, "a").acquire()
        with RunLock(db, "b"):  # another run of the same store is free
            assert holder(db, "b") == os.getpid()
        assert holder(db, "a") == os.getpid() and holder(db, "b") is None
    assert holder(db, "a") is None
    assert issubclass(RunBusy, StoreError)  # a user's situation: exit 2, a one-line message in the TUI


def test_a_killed_holder_blocks_nothing(tmp_path):
    """SIGKILL leaves the lock file with the dead pid in it: the kernel dropped the lock, `holder` sees the pid
    is gone, and the next process takes the run."""
    db = tmp_path / "s.sqlite"
    code = (
        "import sys; from storage.locks import RunLock; RunLock(sys.argv[1], 'k').acquire(); "
        "print('held', flush=True); sys.stdin.read()"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout.readline().strip() == "held"
    assert holder(db, "k") == proc.pid
    with pytest.raises(RunBusy):
        RunLock(db, "k").acquire()
    proc.kill()
    proc.wait()
    assert holder(db, "k") is None
    with RunLock(db, "k"):
        assert holder(db, "k") == os.getpid()


def test_delete_refuses_a_run_in_progress(tmp_path):
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    db = tmp_path / "s.sqlite"
    first = start_long_run(db, "busy", env)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "--batch", "delete", "busy", "--yes", "--db", str(db)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 2 and f"in progress in another process (pid {first.pid})" in proc.stderr
    finally:
        release(first, signal.SIGINT)
        reap(first)
    assert Store(db, readonly=True).run("busy")["status"] == "interrupted"


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["TERM", "HUP"])
def test_term_and_hup_stop_a_run_as_ctrl_c_does(tmp_path, signum):
    """kill, systemd or a dropped SSH session: the run stops, says so, is marked interrupted and resumes."""
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    db = tmp_path / "s.sqlite"
    proc = start_long_run(db, "t", env)
    release(proc, signum)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    assert (
        err.splitlines()[-1]
        == (
            f"stopped by {signal.Signals(signum).name}: finished trajectories are stored; "
            "run the same command again to resume"
        )
        and out == ""
    )
    assert "Traceback" not in err
    store = Store(db, readonly=True)
    run = store.run("t")
    assert run["status"] == "interrupted" and 1 <= len(store.trajectories(run["id"])) < 2400


def test_a_run_whose_process_died_is_listed_as_interrupted(tmp_path):
    """SIGKILL leaves the stored status `running`; the runs list (CLI and TUI home) knows better."""
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    db = tmp_path / "s.sqlite"
    proc = start_long_run(db, "gone", env)
    runs = [sys.executable, "-m", "workbench.cli", "--batch", "runs", "--format", "json", "--db", str(db)]
    try:
        live = subprocess.run(runs, env=env, capture_output=True, text=True, timeout=120)
        assert [r["status"] for r in json.loads(live.stdout)] == ["running"]
    finally:
        proc.kill()
        proc.communicate(timeout=120)
    assert Store(db, readonly=True).run("gone")["status"] == "running"  # nothing could mark it
    dead = subprocess.run(runs, env=env, capture_output=True, text=True, timeout=120)
    assert [r["status"] for r in json.loads(dead.stdout)] == ["interrupted"]


async def test_the_tui_reports_a_run_in_progress_elsewhere_in_one_line(tmp_path):
    """The TUI launches through the same runner: its job ends `failed` with the refusal as the live screen's message."""
    from sandbox.runner import RunSpec
    from workbench.tui.jobs import RunJob

    db = tmp_path / "s.sqlite"
    job = RunJob(RunSpec(name="busy", dataset="builtin", agent="heuristic", limit=2), db, tmp_path / "cache")
    with RunLock(db, "busy"):
        assert await job.execute() is None
    assert (job.monitor.status, job.monitor.message) == (
        "failed",
        f"run 'busy' is in progress in another process (pid {os.getpid()}); wait for it or stop it",
    )
    assert Store(db, readonly=True).runs() == []  # refused before the run was created


def test_rename_refuses_a_run_in_progress_naming_the_holder(tmp_path):
    """A rename under a live run made its process die on a missing run, and let a second `run` of the new name
    write beside it: the rename takes the run's lock, as `run` and `delete` do."""
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    db = tmp_path / "s.sqlite"
    first = start_long_run(db, "live", env)
    rename = [sys.executable, "-m", "workbench.cli", "--batch", "rename", "--db", str(db)]
    try:
        proc = subprocess.run([*rename, "live", "moved"], env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.strip() == (
            f"error: run 'live' is in progress in another process (pid {first.pid}); wait for it or stop it"
        )
        assert [r["name"] for r in Store(db, readonly=True).runs()] == ["live"]
    finally:
        release(first, signal.SIGINT)
        reap(first)
    assert first.returncode == 130  # stopped by the signal, not by its run vanishing under it
    assert Store(db, readonly=True).run("live")["status"] == "interrupted"
    done = subprocess.run([*rename, "live", "moved"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and [r["name"] for r in Store(db, readonly=True).runs()] == ["moved"]


def test_rename_to_a_name_another_process_is_starting_is_refused(tmp_path):
    """The new name's lock too: a process starting that name (its run not yet created) would otherwise write
    beside the renamed run."""
    from workbench.service.stores import rename_run

    db = tmp_path / "s.sqlite"
    store = Store(db)
    fields = {
        "agent": "heuristic",
        "dataset": "d",
        "caps": {},
        "dataset_fingerprint": "f",
        "config": {},
        "version": "0",
    }
    store.create_or_resume_run("old", {"run": "old"}, fields)
    code = (
        "import sys; from storage.locks import RunLock; RunLock(sys.argv[1], 'new').acquire(); "
        "print('held', flush=True); sys.stdin.read()"
    )
    child = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "held"
        with pytest.raises(RunBusy, match=rf"run 'new' is in progress in another process \(pid {child.pid}\)"):
            rename_run(store, "old", "new")
        assert [r["name"] for r in store.runs()] == ["old"]
        assert holder(db, "old") is None  # the old name's lock, taken first, is released on the refusal
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    rename_run(store, "old", "new")
    assert [r["name"] for r in store.runs()] == ["new"]
