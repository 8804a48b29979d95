"""A run in progress as a reader in another connection follows it: only what moved is read, nothing is missed.

The writer here is the store's own API on one connection, the reader another connection on the same file (as
the Live screen's `StoreMonitor` is, in another process), so every commit is what a real run's would be.
"""

from __future__ import annotations

import pytest

from storage import Store
from storage.locks import RunLock
from workbench.tui.store_monitor import StoreMonitor


def _run(store: Store, name: str = "r") -> int:
    run_id, _ = store.create_or_resume_run(
        name,
        {"run": name},
        {
            "agent": "llm",
            "model": "openai/m",
            "dataset": "d",
            "dataset_fingerprint": "f",
            "caps": {"budget": 30, "max_turns": 20, "max_tokens_total": 200_000},
            "config": {},
            "version": "0",
        },
    )
    return run_id


def _step(index: int, turn: int, points: int, tokens: int, tool: str | None = None, **args: str) -> dict:
    return {
        "index": index,
        "turn": turn,
        "kind": "tool" if tool else "assistant",
        "tool_name": tool,
        "tool_args": args or None,
        "text": "t",
        "points_used": points,
        "points_left": 30 - points,
        "tokens": tokens,
        "rejections": 0,
        "cost_usd": 0.01,
    }


def _finish(store: Store, tid: int, correct: bool, termination: str = "answer", **ledger: int) -> None:
    result = {"correct": int(correct), "termination": termination, "continues": 0, "cost_usd": 0.05, **ledger}
    store.finish_trajectory(tid, result, final=True)  # type: ignore[arg-type]  # a TrajectoryRecord's fields


def test_live_episodes_gives_each_episode_in_flight_as_its_last_step_leaves_it(tmp_path):
    writer = Store(tmp_path / "s.sqlite")
    run_id = _run(writer)
    a = writer.begin_trajectory(run_id, "i1", 0, 0, {})
    b = writer.begin_trajectory(run_id, "i2", 0, 0, {})
    writer.add_steps(a, [_step(0, 1, 0, 100), _step(1, 1, 5, 100, "read_section", paper_id="p1", section="A")])
    reader = Store(tmp_path / "s.sqlite", readonly=True)

    def look(known):
        rows = reader.live_episodes(run_id, known)
        return [(r["trajectory_id"], r["n_steps"], r["turn"], r["points_used"], r["tool_name"]) for r in rows]

    assert look({}) == [(a, 2, 1, 5, "read_section"), (b, 0, None, None, None)]  # b: no step yet
    first = reader.live_episodes(run_id, {})[0]
    assert first["tool_args"] == '{"paper_id":"p1","section":"A"}' and first["new_cost_usd"] == 0.02
    writer.add_steps(a, [_step(2, 2, 5, 300)])
    writer.add_steps(b, [_step(0, 1, 0, 50)])
    # the last call and the cost are those of the steps after the ones read: a's read was read already
    assert look({a: 2, b: 0}) == [(a, 3, 2, 5, None), (b, 1, 1, 0, None)]
    assert reader.live_episodes(run_id, {a: 2, b: 0})[0]["new_cost_usd"] == 0.01
    _finish(writer, a, True)
    assert [r["trajectory_id"] for r in reader.live_episodes(run_id, {a: 3, b: 1})] == [b]  # a finished
    assert [s["idx"] for s in reader.steps(a, 1)] == [1, 2]  # a followed transcript reads from where it is
    reader.close()
    writer.close()


def test_finished_since_gives_the_trajectories_above_an_id_and_those_asked_for(tmp_path):
    writer = Store(tmp_path / "s.sqlite")
    run_id = _run(writer)
    done = writer.begin_trajectory(run_id, "i0", 0, 0, {})
    _finish(writer, done, False)
    seen = writer.begin_trajectory(run_id, "i1", 0, 0, {})  # in flight at the reader's look
    reader = Store(tmp_path / "s.sqlite", readonly=True)
    assert [t["id"] for t in reader.finished_since(run_id, 0, [])] == [done]  # from nothing: every one
    assert reader.finished_since(run_id, seen, [seen]) == []
    quick = writer.begin_trajectory(run_id, "i2", 0, 0, {})  # begins and ends before the next look
    _finish(writer, quick, True)
    _finish(writer, seen, True)
    assert [t["id"] for t in reader.finished_since(run_id, seen, [seen])] == [seen, quick]
    assert reader.latest_trajectory_id(run_id, "i2") == quick and reader.latest_trajectory_id(run_id, "i9") is None
    reader.close()
    writer.close()


@pytest.mark.parametrize("after", ["live_episodes", "finished_since"])
def test_a_finish_committed_while_the_monitor_reads_is_counted_once(tmp_path, after):
    """A poll reads the episodes in flight and the trajectories finished: a trajectory that finishes right after
    either read (the writer commits whenever it likes), while a later one finished before, is counted, at that
    poll or the next, and only once."""
    path = tmp_path / "s.sqlite"
    writer = Store(path)
    run_id = _run(writer)
    lock = RunLock(path, "r")
    lock.acquire()
    writer.update_run(run_id, status="running", started_at="2026-01-01T00:00:00+00:00", planned=4)
    monitor = StoreMonitor(path, "r")
    old = writer.begin_trajectory(run_id, "i1", 0, 0, {})  # both begun after the monitor's last look
    newer = writer.begin_trajectory(run_id, "i2", 0, 0, {})
    _finish(writer, newer, True)  # and the later one finished: the highest id finished is above `old`'s
    read = getattr(monitor.store, after)

    def then_old_finishes(*args):
        rows = read(*args)
        _finish(writer, old, False)
        return rows

    setattr(monitor.store, after, then_old_finishes)
    monitor.poll()
    setattr(monitor.store, after, read)
    monitor.poll()
    monitor.poll()
    snap = monitor.snapshot()
    assert (snap.done, snap.correct, snap.episodes) == (2, 1, ())
    assert sorted(e.key for e in snap.finished) == [("i1", 0), ("i2", 0)]
    lock.release()
    monitor.close()
    writer.close()


def test_the_store_monitor_counts_what_the_writer_commits_and_says_when_it_is_gone(tmp_path):
    """In progress while the run's lock is held; the ledger of each episode's last committed step; finished
    trajectories counted once; recorded as running with nobody holding the lock: interrupted."""
    path = tmp_path / "s.sqlite"
    writer = Store(path)
    run_id = _run(writer)
    lock = RunLock(path, "r")
    lock.acquire()
    writer.update_run(run_id, status="running", started_at="2026-01-01T00:00:00+00:00", planned=3)
    a = writer.begin_trajectory(run_id, "i1", 0, 0, {})
    monitor = StoreMonitor(path, "r", clock=lambda: 1767225610.0)  # ten seconds after the start
    snap = monitor.snapshot()
    assert (snap.status, snap.done, snap.planned) == ("running", 0, 3)
    assert [e.key for e in snap.episodes] == [("i1", 0)] and snap.episodes[0].turn == 0
    version = monitor.version
    monitor.poll()
    assert monitor.version == version  # nothing committed: nothing read, nothing redrawn
    writer.add_steps(a, [_step(0, 1, 0, 900), _step(1, 1, 4, 900, "get_references", paper_id="p1")])
    monitor.poll()
    row = monitor.snapshot().episodes[0]
    assert (row.turn, row.points_used, row.tokens, row.last_call, row.n_steps) == (1, 4, 900, "get_references(p1)", 2)
    b = writer.begin_trajectory(run_id, "i2", 0, 0, {})
    _finish(writer, a, True)
    _finish(writer, b, False, "budget", turns=9, points_used=31, tokens=4_000)  # begun and finished between polls
    monitor.poll()
    snap = monitor.snapshot()
    # a finished episode shows where it ended, even one never seen in flight (it showed 0 turns and 0 points)
    finished = {e.key: (e.turn, e.points_used, e.tokens) for e in snap.finished}
    assert finished[("i2", 0)] == (9, 31, 4_000)
    assert (snap.done, snap.correct, snap.terminations["answer"], snap.terminations["budget"]) == (2, 1, 1, 1)
    assert snap.episodes == () and [e.key for e in snap.finished] == [("i2", 0), ("i1", 0)]
    assert snap.rate == 0.2 and snap.eta_s == 5.0  # 2 episodes in 10 s; 1 left
    steps, finished, _ = monitor.steps(("i1", 0)) or ([], False, 0.0)
    assert finished and [s["idx"] for s in steps] == [0, 1]
    writer.begin_trajectory(run_id, "i3", 0, 0, {})
    monitor.poll()
    assert [e.key for e in monitor.snapshot().episodes] == [("i3", 0)]
    lock.release()  # as SIGKILL would: the lock gone, the run still recorded running
    monitor.poll()
    snap = monitor.snapshot()
    assert snap.status == "interrupted" and "gone" in (snap.message or "") and snap.episodes == ()
    writer.update_run(run_id, status="done", finished_at="2026-01-01T00:00:20+00:00")
    monitor.poll()
    assert monitor.snapshot().status == "done"
    writer.delete_run("r")  # deleted while watched: said, and nothing more is read
    monitor.poll()
    assert (monitor.snapshot().status, monitor.snapshot().message) == (
        "failed",
        "the run is no longer in the store (deleted)",
    )
    monitor.close()
    writer.close()
