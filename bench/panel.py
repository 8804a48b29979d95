"""The panel report over a store the size of the paper's study: 19 runs × 1,011 items × 3 replicates.

    python bench/panel.py [--runs 19] [--items 1011] [--replicates 3]

Fills a store with realistic trajectory rows (and ~10 steps each) in bulk, then times the runs
list, `report --panel` over all runs, the full diagnostics (four axes, analytics, stopping
behaviour) of every run, one run's diagnostics with bootstrap intervals, and compare, with the
peak memory after each. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TOOLS = ("get_paper_info", "get_references", "search_papers", "list_sections", "read_section", "think", "submit_answer")


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def fill(store, runs: int, items: int, replicates: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    steps_total = 0
    for r in range(runs):
        skill = 0.3 + 0.5 * r / max(runs - 1, 1)
        run_id, _ = store.create_or_resume_run(
            f"run{r:02d}",
            {"r": r},
            {
                "agent": "llm",
                "model": f"model-{r}",
                "dataset": "paper",
                "dataset_fingerprint": "f",
                "caps": {},
                "config": {},
                "version": "bench",
                "replicates": replicates,
                "planned": items * replicates,
            },
        )
        rows, steps = [], []
        tid = store.conn.execute("SELECT COALESCE(MAX(id), 0) FROM trajectories").fetchone()[0]
        for rep in range(replicates):
            for i in range(items):
                tid += 1
                kind = "mt" if i % 2 else "st"
                seq = ["get_references"] + [rng.choice(TOOLS[:5]) for _ in range(rng.randint(2, 8))] + ["submit_answer"]
                pr = rng.random() < skill + 0.1
                correct = (pr and rng.random() < 0.8) or rng.random() < 0.2
                actions = [
                    [
                        t,
                        "ok",
                        "p" + str(rng.randint(0, 30)),
                        rng.choice(("gold", "other", "seed", "bridge")),
                        int(t == "read_section"),
                    ]
                    for t in seq
                ]
                rows.append(
                    (
                        tid,
                        run_id,
                        f"q{i:04d}",
                        rep,
                        0,
                        "done",
                        1,
                        kind,
                        kind,
                        1 + i % 2,
                        2 if kind == "mt" else 1,
                        1,
                        "METHOD",
                        "gold",
                        "ACL",
                        i % 4,
                        "answer",
                        "ABCD"[i % 4],
                        i % 4 if correct else (i + 1) % 4,
                        int(correct),
                        len(seq) + 1,
                        len(seq),
                        sum(5 if t == "read_section" else 1 for t in seq[:-1]),
                        rng.randint(20_000, 150_000),
                        len(seq),
                        len(seq),
                        int(pr),
                        int(pr),
                        int(pr and rng.random() < 0.8),
                        json.dumps(seq),
                        json.dumps(actions),
                        "correct" if correct else "wrong_paper",
                    )
                )
                for s, t in enumerate(seq):
                    steps.append(
                        (tid, s, s + 1, "tool", f"result of {t}", t, 5 if t == "read_section" else 1, "ok", 0, 30, 0, 0)
                    )
        store.conn.execute("BEGIN")
        store.conn.executemany(
            "INSERT INTO trajectories (id, run_id, item_id, replicate, attempt, status, final, kind, question_type,"
            " depth, n_gold, section_reachable, reasoning_type, consensus_tier, venue, correct_index, termination,"
            " answer, predicted_index, correct, turns, tool_calls, points_used, tokens, turns_with_calls, model_calls,"
            " paper_recall, paper_recall_any, section_recall, tool_sequence, actions, chosen_type)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            rows,
        )
        store.conn.executemany(
            "INSERT INTO steps (trajectory_id, idx, turn, kind, text, tool_name, cost, status, points_used,"
            " points_left, tokens, rejections) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            steps,
        )
        store.conn.execute("COMMIT")
        steps_total += len(steps)
    return steps_total


def bench_store(path: Path, copy_of: str | None, runs: int, items: int, replicates: int) -> None:
    """The benches' store at `path`: a copy of `copy_of` (a real store), else a synthetic panel (`fill`)."""
    import shutil

    if copy_of:
        shutil.copy(copy_of, path)
        return
    from storage import Store

    store = Store(path)
    fill(store, runs, items, replicates)
    store.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=19)
    ap.add_argument("--items", type=int, default=1011)
    ap.add_argument("--replicates", type=int, default=3)
    args = ap.parse_args()
    from storage import Store
    from workbench.service import reports, runlist

    path = Path(tempfile.mkdtemp(prefix="agenthop-panel-")) / "store.sqlite"
    store = Store(path)
    t = time.perf_counter()
    n_steps = fill(store, args.runs, args.items, args.replicates)
    n_traj = store.conn.execute("SELECT COUNT(*) FROM trajectories").fetchone()[0]
    print(
        f"filled {n_traj:,} trajectories and {n_steps:,} steps in {time.perf_counter() - t:.1f} s "
        f"({path.stat().st_size / 1e6:.0f} MB)"
    )
    names = [f"run{r:02d}" for r in range(args.runs)]
    store = Store(path, readonly=True)
    base = peak_mb()
    for label, fn in (
        ("runs list", lambda: runlist.runs_table(store)),
        ("panel report (all runs)", lambda: reports.panel_report(store, names)),
        (f"{len(names)} × full diagnostics", lambda: [reports.diagnostics(store, n) for n in names]),
        ("one run's diagnostics --ci", lambda: reports.diagnostics(store, names[0], ci=True)),
        ("compare two runs", lambda: reports.compare_report(store, names[0], names[-1])),
    ):
        t = time.perf_counter()
        fn()
        print(f"  {label:28s} {time.perf_counter() - t:6.2f} s   peak memory so far {peak_mb():5.0f} MB")
    print(f"peak memory {peak_mb():.0f} MB (before reports {base:.0f} MB)")


if __name__ == "__main__":
    main()
