"""A run killed with SIGKILL at random points and resumed: no trajectory lost, none duplicated."""
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from storage import Store

CMD = [sys.executable, "-m", "workbench.cli", "--batch", "run", "--data", "builtin", "--agent", "heuristic",
       "--replicates", "4", "--workers", "4", "--quiet", "--format", "json"]


def steps_committed(db) -> int:
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        n = con.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
        con.close()
        return n
    except sqlite3.Error:
        return 0


def run_and_kill(db, env, at_steps: int) -> None:
    proc = subprocess.Popen(CMD + ["--run", "k", "--db", str(db)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while proc.poll() is None and steps_committed(db) < at_steps and time.monotonic() < deadline:
        time.sleep(0.005)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.slow
def test_sigkill_and_resume(tmp_path):
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    subprocess.run(CMD + ["--run", "ref", "--db", str(tmp_path / "ref.sqlite")], env=env, check=True,
                   capture_output=True)
    db = tmp_path / "k.sqlite"
    rng = random.Random(1234)
    for at in sorted(rng.sample(range(50, 2500), 3)):
        run_and_kill(db, env, at)
    done = subprocess.run(CMD + ["--run", "k", "--db", str(db)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    store, ref = Store(db), Store(tmp_path / "ref.sqlite")
    run_id = store.run("k")["id"]
    rows = store.conn.execute("SELECT item_id, replicate, COUNT(*) FROM trajectories WHERE run_id = ? AND final = 1 "
                              "GROUP BY item_id, replicate", (run_id,)).fetchall()
    assert len(rows) == 240 and all(r[2] == 1 for r in rows)
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] == 0
    for t in store.trajectories(run_id)[:40]:
        idx = [s["idx"] for s in store.steps(t["id"])]
        assert idx == list(range(len(idx)))
    # deterministic agent: the resumed run equals an uninterrupted one
    key = lambda t: (t["item_id"], t["replicate"])  # noqa: E731
    got = {key(t): (t["tool_sequence"], t["correct"]) for t in store.trajectories(run_id)}
    want = {key(t): (t["tool_sequence"], t["correct"]) for t in ref.trajectories(ref.run("ref")["id"])}
    assert got == want
    assert store.run("k")["status"] == "done"


def test_resume_refuses_a_different_config(tmp_path):
    db = tmp_path / "s.sqlite"
    base = [sys.executable, "-m", "workbench.cli", "--batch", "run", "--agent", "oracle", "--run", "x", "--db", str(db),
            "--limit", "3", "--quiet"]
    assert subprocess.run(base, capture_output=True).returncode == 0
    proc = subprocess.run(base + ["--budget", "20"], capture_output=True, text=True)
    assert proc.returncode == 2 and "different configuration" in proc.stderr and "caps" in proc.stderr
    again = subprocess.run(base + ["--limit", "5", "--format", "json"], capture_output=True, text=True)
    assert again.returncode == 0 and '"n": 5' in again.stdout  # extending the slice resumes
