"""Engine cost on the paper-scale corpus: import and reopen, tool calls per second, episodes per second, peak memory.

    python bench/engine.py [--preset paper|demo] [--episodes 200]

Prints sizes, rates and ratios; asserts nothing. Each episode configuration runs in a
fresh subprocess so its peak RSS is its own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def corpus_dir(preset: str, base: Path) -> Path:
    from sandbox import synth

    out = base / f"synth-{preset}-v{synth.GENERATOR_VERSION}"
    if not (out / ".complete").exists():
        t = time.perf_counter()
        synth.generate(out, seed=0, preset=preset)
        (out / ".complete").write_text("ok")
        print(f"generate {preset}: {time.perf_counter() - t:.1f} s")
    return out


def bench_open(root: Path, cache: Path) -> None:
    from sandbox.corpus import open_release

    size = sum(f.stat().st_size for f in root.rglob("*.jsonl"))
    t = time.perf_counter()
    corpus, report = open_release(root, cache)
    first = time.perf_counter() - t
    corpus.close()
    t = time.perf_counter()
    corpus, _report2 = open_release(root, cache)
    warm = time.perf_counter() - t
    db = corpus.path.stat().st_size
    print(
        f"dataset {size / 1e6:.0f} MB → corpus cache {db / 1e6:.0f} MB; "
        f"open {'(import) ' if report else '(cached) '}{first:.2f} s, warm reopen {warm * 1000:.0f} ms "
        f"({first / max(warm, 1e-9):.0f}× faster)"
    )
    bench_tools(corpus)
    corpus.close()


def bench_tools(corpus) -> None:
    from sandbox.tools import run_tool

    rng = random.Random(0)
    items = rng.sample(corpus.items, min(200, len(corpus.items)))
    views = [corpus.view(i) for i in items]
    t = time.perf_counter()
    for i in items:
        corpus.view(i)
    view_ms = (time.perf_counter() - t) * 1000 / len(items)
    print(
        f"item view (neighbourhood load): {view_ms:.2f} ms/item, "
        f"{sum(len(v.nodes) for v in views) / len(views):.0f} nodes/item"
    )
    calls = {
        "get_paper_info": lambda v: {"paper_id": rng.choice(list(v.nodes))},
        "get_references": lambda v: {"paper_id": v.item.seed_paper_id},
        "search_papers": lambda v: {"query": v.item.question, "top_k": 10},
        "list_sections": lambda v: {"paper_id": rng.choice(v.item.gold_paper_ids)},
        "read_section": lambda v: {"paper_id": rng.choice(v.item.gold_paper_ids), "section": rng.choice("ABCDE")},
    }
    for name, make in calls.items():
        args = [(v, make(v)) for v in views for _ in range(5)]
        t = time.perf_counter()
        for v, a in args:
            run_tool(v, name, a)
        dt = time.perf_counter() - t
        print(f"  {name:15s} {len(args) / dt:9.0f} calls/s  {dt / len(args) * 1e6:8.1f} µs/call")


def peak_mb() -> float:
    """This process's peak RSS. VmHWM, not ru_maxrss: after fork+exec Linux's ru_maxrss keeps the parent's peak."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def episodes_child(root: str, cache: str, agent: str, workers: int, n: int) -> None:
    from sandbox.corpus import open_release
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    corpus, _ = open_release(Path(root), Path(cache))
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "s.sqlite")
        spec = RunSpec(name="bench", dataset=root, agent=agent, workers=workers, limit=n)
        t = time.perf_counter()
        result = asyncio.run(Runner(spec, corpus, store).run())
        dt = time.perf_counter() - t
        steps = store.conn.execute("SELECT COUNT(*) FROM steps").fetchone()[0]
    peak = peak_mb()
    print(
        json.dumps(
            {
                "agent": agent,
                "workers": workers,
                "episodes": result["done"],
                "seconds": dt,
                "eps": result["done"] / dt,
                "steps": steps,
                "peak_mb": peak,
            }
        )
    )


def bench_episodes(root: Path, cache: Path, n: int) -> None:
    for agent in ("oracle", "heuristic"):
        for workers in (1, 16):
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(root), str(cache), agent, str(workers), str(n)],
                capture_output=True,
                text=True,
                check=True,
            )
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(
                f"  {agent:9s} workers={workers:2d}: {r['episodes']} episodes in {r['seconds']:.2f} s = "
                f"{r['eps']:.0f} ep/s, {r['steps'] / r['seconds']:.0f} steps committed/s, peak {r['peak_mb']:.0f} MB"
            )


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_root, child_cache, agent, workers, n = sys.argv[2:7]
        episodes_child(child_root, child_cache, agent, int(workers), int(n))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--preset", default="paper", choices=("paper", "demo"))
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "agenthop-bench"))
    args = parser.parse_args()
    base = Path(args.work)
    base.mkdir(parents=True, exist_ok=True)
    root = corpus_dir(args.preset, base)
    cache = base / "cache"
    bench_open(root, cache)
    print(f"episodes ({args.episodes}, store writes included):")
    bench_episodes(root, cache, args.episodes)


if __name__ == "__main__":
    main()
