"""A run killed with SIGKILL at random points and resumed: no trajectory lost, none duplicated."""

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from storage import Store
from tests.cli_inprocess import batch
from tests.held_run import count_in_store, hold, release

CMD = [
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
    "4",
    "--workers",
    "4",
    "--quiet",
    "--format",
    "json",
]


def steps_committed(db) -> int:
    return count_in_store(db, "SELECT COUNT(*) FROM steps")


def run_and_kill(db, env, at_steps: int) -> int:
    """Start the run, stop it (SIGSTOP, confirmed) once `at_steps` steps are committed, then SIGKILL it: the kill
    certainly lands mid-run, never after the last episode. Returns the steps on disk at the kill."""
    proc = subprocess.Popen(
        [*CMD, "--run", "k", "--db", str(db)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 300
    while steps_committed(db) < at_steps:
        assert proc.poll() is None, f"the run ended before {at_steps} steps were committed"
        assert time.monotonic() < deadline, f"no {at_steps} steps in 300 s"
        time.sleep(0.005)  # polling the store, not timing
    os.kill(proc.pid, signal.SIGSTOP)
    _, status = os.waitpid(proc.pid, os.WUNTRACED)
    assert os.WIFSTOPPED(status), "the run ended before it could be killed"
    steps = steps_committed(db)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL
    return steps


@pytest.mark.slow
def test_sigkill_and_resume(tmp_path):
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    subprocess.run(
        [*CMD, "--run", "ref", "--db", str(tmp_path / "ref.sqlite")], env=env, check=True, capture_output=True
    )
    db = tmp_path / "k.sqlite"
    rng = random.Random(1234)
    for at in sorted(rng.sample(range(50, 2500), 3)):
        assert run_and_kill(db, env, at) >= at
        with Store(db, readonly=True) as store:  # killed mid-run: the run is not finished
            assert len(store.trajectories(store.run("k")["id"])) < 240
    done = subprocess.run([*CMD, "--run", "k", "--db", str(db)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    store, ref = Store(db), Store(tmp_path / "ref.sqlite")
    run_id = store.run("k")["id"]
    rows = store.conn.execute(
        "SELECT item_id, replicate, COUNT(*) FROM trajectories WHERE run_id = ? AND final = 1 "
        "GROUP BY item_id, replicate",
        (run_id,),
    ).fetchall()
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


def test_resume_refuses_a_different_config(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    base = ["run", "--agent", "oracle", "--run", "x", "--db", str(db), "--limit", "3", "--quiet"]
    assert batch(capsys, *base).returncode == 0
    proc = batch(capsys, *base, "--budget", "20")
    assert proc.returncode == 2 and "different configuration" in proc.stderr and "caps" in proc.stderr
    again = batch(capsys, *base, "--limit", "5", "--format", "json")
    assert again.returncode == 0 and '"n": 5' in again.stdout  # extending the slice resumes


def test_ctrl_c_stops_an_offline_run_promptly(tmp_path):
    """SIGINT is a cancellation: scripted agents must yield so it lands mid-run, not after the last episode."""
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    db = tmp_path / "s.sqlite"
    cmd = [
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
        "--run",
        "c",
        "--db",
        str(db),
    ]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    hold(proc, db, planned=2400, at_least=20)  # stopped mid-run, so the interrupt cannot come after the last episode
    release(proc, signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "Traceback" not in err and out == ""
    store = Store(db, readonly=True)
    run = store.run("c")
    done = len(store.trajectories(run["id"]))
    assert run["status"] == "interrupted" and run["planned"] == 2400
    assert 20 <= done < 2400  # stopped near the interrupt, not after every episode


def _episode_order(corpus, tmp_path, workers: int) -> list[str]:
    import asyncio

    from sandbox.runner import Runner, RunSpec

    order: list[str] = []
    spec = RunSpec(name=f"w{workers}", dataset="builtin", agent="heuristic", workers=workers, limit=8)
    runner = Runner(
        spec,
        corpus,
        Store(tmp_path / f"w{workers}.sqlite"),
        on_event=lambda e: order.append(e.item_id) if e.kind == "step" else None,
    )
    asyncio.run(runner.run())
    return order


def test_workers_run_offline_episodes_concurrently(demo_corpus, tmp_path):
    """Each step yields to the event loop, so four workers hold four episodes in flight; one holds one."""
    concurrent = _episode_order(demo_corpus, tmp_path, 4)
    assert len(set(concurrent[:4])) == 4  # the first step of four different items before any second step
    sequential = _episode_order(demo_corpus, tmp_path, 1)
    blocks = [item for i, item in enumerate(sequential) if i == 0 or sequential[i - 1] != item]
    assert len(blocks) == len(set(blocks)) == 8  # each episode's steps contiguous


async def test_an_interrupt_after_the_last_episode_leaves_the_run_done(demo_corpus, tmp_path):
    import asyncio

    from sandbox.runner import Runner, RunSpec

    store = Store(tmp_path / "s.sqlite")
    main: asyncio.Task | None = None

    def on_event(event) -> None:
        if event.kind == "trajectory" and event.done == event.planned:
            main.cancel()  # Ctrl-C lands after every episode finished

    runner = Runner(
        RunSpec(name="late", dataset="builtin", agent="oracle", workers=2, limit=3),
        demo_corpus,
        store,
        on_event=on_event,
    )
    main = asyncio.ensure_future(runner.run())
    with pytest.raises(asyncio.CancelledError):
        await main
    assert store.run("late")["status"] == "done" and len(store.trajectories(store.run("late")["id"])) == 3


def test_a_turn_is_committed_in_one_write_before_the_next_call(demo_corpus, tmp_path):
    """Steps are written once per turn (not once per step), and each turn is on disk, read from another
    connection, before the episode's next model call goes out: a SIGKILL loses at most the turn in flight."""
    import asyncio
    import sqlite3

    from sandbox.agents.registry import make_scripted
    from sandbox.records import Caps
    from sandbox.runner import Runner, RunSpec

    db = tmp_path / "s.sqlite"
    store = Store(db)
    commits: list[str] = []
    store.conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    seen: list[tuple[str, int, int]] = []  # (item, turn about to be taken, steps on disk then)

    class Peeking:
        name = "peeking"

        def __init__(self, inner, item_id):
            self.inner, self.item_id, self.turn = inner, item_id, 0

        async def act(self, messages, tools):
            self.turn += 1
            with sqlite3.connect(db) as reader:
                n = reader.execute(
                    "SELECT COUNT(*) FROM steps s JOIN trajectories t ON t.id = s.trajectory_id WHERE t.item_id = ?",
                    (self.item_id,),
                ).fetchone()[0]
            seen.append((self.item_id, self.turn, n))
            return await self.inner.act(messages, tools)

    spec = RunSpec(name="t", dataset="builtin", agent="heuristic", workers=2, limit=6)
    factory = lambda item, r, a: Peeking(make_scripted("heuristic", item, Caps(), 0, r, a), item.id)  # noqa: E731
    asyncio.run(Runner(spec, demo_corpus, store, factory=factory).run())
    run_id = store.run("t")["id"]
    turns = steps = 0
    for t in store.trajectories(run_id):
        done = store.steps(t["id"])
        steps += len(done)
        calls = [s for s in seen if s[0] == t["item_id"]]
        turns += len(calls)
        for _, turn, on_disk in calls:
            assert on_disk == sum(1 for s in done if s["turn"] < turn)
    assert steps > turns + 6  # several steps per turn: the check below means something
    writes = len(commits) - 2 * 6 - 2  # begin and finish of each trajectory; the run's own start and end rows
    assert writes <= turns
