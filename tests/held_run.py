"""A `--batch run` child process held in progress while a test acts on it (another process, a signal).

A heuristic run of 2,400 episodes lasts some seconds. A test that only waits for its first
trajectory and then starts a second process (`run`, `delete`, `runs`) races it: on a slow
or loaded machine the second process reaches its check after the run has ended, and the
test sees a finished run. `hold` stops the child (SIGSTOP, confirmed by waitpid) once it
has finished enough trajectories: stopped, it stays in progress with its run lock held for
as long as the test needs, however slow the machine. `release` continues it; a signal sent
while it is stopped is pending when it runs again, so it lands while the run is in progress.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import time


def count_in_store(db, query: str) -> int:
    """`query`'s count in the store at `db`, read as another process would (0 while it cannot be read: the
    run has not created it yet, or holds it mid-write)."""
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        n = con.execute(query).fetchone()[0]
        con.close()
        return n
    except sqlite3.Error:
        return 0


def trajectories_done(db) -> int:
    """Finished trajectories in the store at `db`."""
    return count_in_store(db, "SELECT COUNT(*) FROM trajectories WHERE status = 'done'")


def hold(proc: subprocess.Popen, db, planned: int, at_least: int = 1) -> int:
    """Stop the run `proc` once it has finished `at_least` trajectories (not all `planned`); how many it has.

    The wait polls the store for a state the run certainly reaches; its deadline only keeps a broken run from
    hanging the suite."""
    deadline = time.monotonic() + 300
    while trajectories_done(db) < at_least:
        assert proc.poll() is None, "the run ended before it finished a trajectory"
        assert time.monotonic() < deadline, f"no {at_least} finished trajectories in 300 s"
        time.sleep(0.005)  # polling the store, not timing
    os.kill(proc.pid, signal.SIGSTOP)
    _, status = os.waitpid(proc.pid, os.WUNTRACED)  # returns once the child is stopped (or gone)
    assert os.WIFSTOPPED(status), "the run ended before the test could hold it"
    done = trajectories_done(db)
    assert at_least <= done < planned, f"the run finished all {planned} episodes before it could be held"
    return done


def release(proc: subprocess.Popen, signum: int | None = None) -> None:
    """Continue a held run, first sending it `signum` (pending until it runs again: it lands mid-run)."""
    if signum is not None:
        os.kill(proc.pid, signum)
    os.kill(proc.pid, signal.SIGCONT)
