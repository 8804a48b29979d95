"""Harness overhead through litellm: episodes/s and peak memory against a local OpenAI-compatible server.

    python bench/llm_throughput.py [--items 400] [--workers 16] [--latency 0] [--calls 4]
    python bench/llm_throughput.py --preset paper --episodes 200 [--cache DIR]

`--preset paper` runs on an AgentHop-sized benchmark (1,011 items, 7,205 papers); its corpus
is generated and imported once into --cache (default: a folder in the temp dir, kept), so a
second invocation measures the run with a warm corpus cache, as the target is stated.

The server runs in its own process (so its work is not counted as ours) and answers
instantly (or after --latency seconds). Each episode makes --calls model calls. Prints
rates and ratios; asserts nothing.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVER = """
import sys, time
sys.path.insert(0, {root!r})
from tests.openai_server import FakeOpenAI, tool_reply, seed_of, turn_of
calls = {calls}
def brain(req, n):
    t = turn_of(req)
    if t == 0:
        return tool_reply(("get_references", {{"paper_id": seed_of(req)}}), prompt_tokens=2000)
    if t < calls - 1:
        return tool_reply(("think", {{"reasoning": "step " + str(t)}}), prompt_tokens=2000 + 500 * t)
    return tool_reply(("submit_answer", {{"answer": "B", "reasoning": "r"}}), prompt_tokens=4000)
srv = FakeOpenAI(brain, latency_s={latency})
srv.__enter__()
print(srv.url, flush=True)
sys.stdin.read()
"""


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--items", type=int, default=400)
    ap.add_argument("--workers", type=int, default=16)
    ap.add_argument("--latency", type=float, default=0.0)
    ap.add_argument("--calls", type=int, default=4)
    ap.add_argument("--episodes", type=int, default=0, help="limit (default: all items)")
    ap.add_argument("--preset", choices=("demo", "paper"), default="demo")
    ap.add_argument("--cache", help="where the paper preset's release and corpus cache are kept between runs")
    args = ap.parse_args()
    from sandbox import synth
    from sandbox.agents.llm import litellm_module
    from sandbox.corpus import open_release
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    work = Path(tempfile.mkdtemp(prefix="agenthop-llm-bench-"))
    if args.preset == "paper":
        kept = Path(args.cache) if args.cache else Path(tempfile.gettempdir()) / "agenthop-bench-paper"
        root = kept / "data"
        if not (root / "qa" / "full.jsonl").exists():
            synth.generate(root, seed=1, preset="paper")
        cache = kept / "cache"
        args.items = sum(1 for _ in (root / "qa" / "full.jsonl").open())
    else:
        root = synth.generate(work / "data", seed=1, preset="demo", items=args.items, papers=max(240, args.items * 4))
        cache = work / "cache"
    t = time.perf_counter()
    corpus, _ = open_release(root, cache)
    open_s = time.perf_counter() - t
    t = time.perf_counter()
    litellm_module()
    import_s = time.perf_counter() - t
    server = subprocess.Popen([sys.executable, "-c", SERVER.format(root=str(ROOT), calls=args.calls,
                                                                   latency=args.latency)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = server.stdout.readline().strip()
    try:
        store = Store(work / "store.sqlite")
        spec = RunSpec(name="bench", dataset=str(root), agent="llm", model="openai/bench-model", workers=args.workers,
                       limit=args.episodes or None, agent_options={"base_url": url})
        t, cpu0 = time.perf_counter(), time.process_time()
        result = asyncio.run(Runner(spec, corpus, store).run())
        dt, cpu = time.perf_counter() - t, time.process_time() - cpu0
        retries = store.conn.execute("SELECT COALESCE(SUM(transient_retries), 0) FROM trajectories").fetchone()[0]
        server_cpu = process_cpu_s(server.pid)
    finally:
        server.stdin.close()
        server.wait()
    calls = result["done"] * args.calls
    print(json.dumps({"items": args.items, "workers": args.workers, "latency_s": args.latency,
                      "episodes": result["done"], "seconds": round(dt, 2), "episodes_per_s": round(result["done"] / dt, 1),
                      "model_calls_per_s": round(calls / dt, 1), "ms_per_call_per_worker": round(dt / calls * args.workers * 1000, 2),
                      "cpu_ms_per_call": round(cpu / calls * 1000, 2),
                      "server_cpu_ms_per_call": round(server_cpu / calls * 1000, 2), "transient_retries": retries,
                      "ideal_calls_per_s": round(args.workers / args.latency, 1) if args.latency else None,
                      "litellm_import_s": round(import_s, 2), "corpus_open_s": round(open_s, 2),
                      "preset": args.preset, "peak_mb": round(peak_mb(), 1)}, indent=1))


if __name__ == "__main__":
    main()
