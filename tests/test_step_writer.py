"""The run's group commit (storage.step_writer): the writes of many episodes in one transaction, each turn on disk
before the episode's next model call, and a process killed with writes handed over but not yet committed resumes
to the same results as a run never killed."""

import asyncio
import os
import sqlite3
import subprocess
import sys

import pytest

from storage import Store
from storage.step_writer import StepWriter
from tests.test_resume import CMD


def _step(index: int, turn: int) -> dict:
    return {
        "index": index,
        "turn": turn,
        "kind": "assistant",
        "text": "x" * (300 + index),  # long: stored once, by hash, in the same transaction
        "points_used": 0,
        "points_left": 10,
        "tokens": 0,
        "rejections": 0,
    }


def _on_disk(db, query: str) -> int:
    with sqlite3.connect(db) as reader:  # another connection: what a killed process would have left
        return reader.execute(query).fetchone()[0]


def _store_with_a_run(db) -> tuple[Store, int]:
    store = Store(db)
    run_id, _ = store.create_or_resume_run(
        "r",
        {"x": 1},
        {"agent": "a", "dataset": "d", "dataset_fingerprint": "f", "caps": {}, "config": {}, "version": "0"},
    )
    return store, run_id


async def test_writes_handed_over_together_are_committed_in_one_transaction(tmp_path):
    db = tmp_path / "s.sqlite"
    store, run_id = _store_with_a_run(db)
    commits: list[str] = []
    store.conn.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    writer = StepWriter(store)
    episodes = [writer.begin(run_id, f"q{i}", 0, 0, {"kind": "st"}) for i in range(5)]
    for trajectory in episodes:
        writer.add_steps(trajectory, [_step(0, 1), _step(1, 1)])
    writer.finish(
        episodes[0],
        {"termination": "answer", "correct": 1, "continues": 0, "cut_off_turns": 0, "lost_calls": 0},
        final=True,
        steps=[_step(2, 2)],
    )
    assert _on_disk(db, "SELECT COUNT(*) FROM trajectories") == 0  # handed over, not yet committed
    await writer.written()
    assert len(commits) == 1  # five episodes' starts, steps and one result: one transaction
    assert _on_disk(db, "SELECT COUNT(*) FROM steps") == 11
    assert _on_disk(db, "SELECT COUNT(*) FROM trajectories WHERE status = 'done'") == 1
    assert [t.id for t in episodes] == sorted(t.id for t in episodes if t.id is not None)  # in the order begun
    await writer.written()  # nothing handed over since: returns at once, commits nothing
    writer.close()
    assert len(commits) == 1


async def test_a_failed_commit_reaches_the_episodes_waiting_and_the_run_end(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    writer = StepWriter(store)
    trajectory = writer.begin(999, "q", 0, 0, {})  # no run 999: the foreign key refuses the row
    with pytest.raises(sqlite3.IntegrityError):
        await writer.written()
    assert trajectory.id is None
    with pytest.raises(sqlite3.IntegrityError):
        writer.close()


async def test_an_episode_cancelled_while_it_waits_leaves_the_others_commit_and_wake_alone(tmp_path):
    """Ctrl-C or a run-wide limit cancels an episode waiting for the commit: the others still wake once their
    writes are on disk, and the cancelled one's writes, already handed over, are committed with theirs."""
    db = tmp_path / "s.sqlite"
    store, run_id = _store_with_a_run(db)
    writer = StepWriter(store)
    woke: list[str] = []

    async def episode(name: str) -> None:
        trajectory = writer.begin(run_id, name, 0, 0, {})
        writer.add_steps(trajectory, [_step(0, 1)])
        await writer.written()
        woke.append(name)

    tasks = [asyncio.create_task(episode(f"q{i}")) for i in range(3)]
    await asyncio.sleep(0)  # each has handed its writes over and waits
    tasks[1].cancel()
    results = await asyncio.gather(*tasks, return_exceptions=True)
    assert woke == ["q0", "q2"] and isinstance(results[1], asyncio.CancelledError)
    assert _on_disk(db, "SELECT COUNT(*) FROM steps") == 3
    writer.close()


# The child: the batch CLI, killed (SIGKILL, by itself) in the event loop's pass that would commit the writes
# handed over, after it printed what was on disk and how many writes were waiting.
CHILD = """
import os, signal, sys
from storage.step_writer import StepWriter
from workbench.cli import main

passes = 0
commit = StepWriter._flush_pass

def die_before_commit(self):
    global passes
    passes += 1
    if passes >= {at} and self._queue:
        steps = self.store.conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
        print(steps, len(self._queue), flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
    commit(self)

StepWriter._flush_pass = die_before_commit
sys.exit(main(sys.argv[1:]))
"""


def test_a_kill_before_the_commit_loses_only_the_writes_waiting_and_resume_redoes_them(tmp_path):
    env = dict(os.environ, AGENTHOP_CACHE=str(tmp_path / "cache"))
    args = CMD[3:]  # `--batch run …` without the interpreter and `-m workbench.cli`
    subprocess.run([*CMD, "--run", "ref", "--db", str(tmp_path / "ref.sqlite")], env=env, check=True)
    db = tmp_path / "k.sqlite"
    for at in (30, 120):
        killed = subprocess.run(
            [sys.executable, "-c", CHILD.format(at=at), *args, "--run", "k", "--db", str(db)],
            env=env,
            capture_output=True,
            text=True,
        )
        assert killed.returncode == -9, killed.stderr
        committed, waiting = map(int, killed.stdout.split())
        assert waiting > 0
        # what the killed process had committed is on disk; what it had handed over for the next commit is not
        assert _on_disk(db, "SELECT COUNT(*) FROM steps") == committed
        with Store(db, readonly=True) as store:
            run_id = store.run("k")["id"]
            for t in store.conn.execute("SELECT id FROM trajectories WHERE run_id = ?", (run_id,)).fetchall():
                idx = [s["idx"] for s in store.steps(t[0])]
                assert idx == list(range(len(idx)))  # whole turns only: no step missing before a later one
    done = subprocess.run([*CMD, "--run", "k", "--db", str(db)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    store, ref = Store(db), Store(tmp_path / "ref.sqlite")
    run_id = store.run("k")["id"]
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status != 'done'").fetchone()[0] == 0
    key = lambda t: (t["item_id"], t["replicate"])  # noqa: E731
    got = [(key(t), t["tool_sequence"], t["correct"]) for t in store.trajectories(run_id)]
    want = {key(t): (t["tool_sequence"], t["correct"]) for t in ref.trajectories(ref.run("ref")["id"])}
    assert len(got) == len({k for k, _, _ in got}) == len(want)  # none lost, none twice
    assert {k: (seq, ok) for k, seq, ok in got} == want
    assert store.run("k")["status"] == "done"


def test_a_steps_record_holds_every_field_of_the_step_with_the_ledgers_meters_in_its_place():
    """`step_record` names its keys one by one: a field added to `Step` and not to the record would not be stored."""
    from dataclasses import fields

    from sandbox.records import LedgerState, Step
    from sandbox.runner.store_records import step_record

    step = Step(index=3, turn=2, kind="tool", ledger=LedgerState(2, 5, 25, 900, 1), tool_args={"paper_id": "p"})
    record = step_record(step)
    expected = [f.name for f in fields(Step) if f.name != "ledger"] + [
        "points_used",
        "points_left",
        "tokens",
        "rejections",
    ]
    assert list(record) == expected
    assert record["tool_args"] is step.tool_args  # the model's arguments themselves: no copy per step
    assert (record["points_used"], record["points_left"], record["tokens"], record["rejections"]) == (5, 25, 900, 1)


def test_a_trajectorys_record_holds_every_field_of_the_trajectory_in_its_order():
    """`trajectory_record` is an Inspect sample's metadata too: its keys, in order, are the dataclass's fields."""
    from dataclasses import fields

    from sandbox.records import Trajectory
    from sandbox.runner.store_records import trajectory_record

    values = {f.name: i for i, f in enumerate(fields(Trajectory))}
    record = trajectory_record(Trajectory(**values))
    assert list(record.items()) == list(values.items())
