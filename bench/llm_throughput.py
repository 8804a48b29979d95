"""Harness overhead per model client: episodes/s and peak memory against a local OpenAI-compatible server.

    python bench/llm_throughput.py [--items 400] [--workers 16] [--latency 0] [--calls 4] [--client auto]
    python bench/llm_throughput.py --preset paper --episodes 200 [--cache DIR]
    python bench/llm_throughput.py --compare native,litellm[,base=/path/to/old/tree] --rounds 3 [run flags]
    python bench/llm_throughput.py --watch [run flags]      # with a Live screen's reader polling the store

`--compare` runs each variant in its own process (so peak RSS is its own), alternating
variants round by round (a shared machine's noise hits them alike), and prints each
variant's medians and its ratio to the first variant; `base=DIR` runs the bench script of
another checkout (the code before a change) as the baseline.

`--preset paper` runs on an AgentHop-sized benchmark (1,011 items, 7,205 papers); its corpus
is generated and imported once into --cache (default: a folder in the temp dir, kept), so a
second invocation measures the run with a warm corpus cache, as the target is stated.

The server runs in its own process (so its work is not counted as ours) and answers
instantly (or after --latency seconds). Each episode makes --calls model calls. `--watch` starts
a reader in its own process that follows the run as the Live screen does on a run another process
executes (`StoreMonitor`: `poll` and `snapshot` ten times a second) and reports its polls' times;
`--store PATH` keeps the run's store there (a reader started by another script can follow it).
`cpu_ms_per_call` is the run's CPU per model call, `process_cpu_ms_per_call` the whole
process's (start-up, imports and corpus open included). Prints rates and ratios; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SERVER = """
import gc, json, sys
# the server keeps every request body: its collections would stall every reply, which is not ours to measure
gc.disable()
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
# strict=False: the tests check histories; here the server's CPU is not ours
srv = FakeOpenAI(brain, latency_s={latency}, strict=False)
srv.__enter__()
print(srv.url, flush=True)
sys.stdin.read()
with srv.lock:
    print(json.dumps(srv.timings), flush=True)
"""


WATCHER = """
import json, sys, time
sys.path.insert(0, {root!r})
from workbench.service import agents, stores
from workbench.service.errors import StoreError
from workbench.tui.store_monitor import StoreMonitor
from sandbox.agents import registry  # what opening a run imports: before the run starts, as a TUI has it
print("ready", flush=True)
monitor, deadline = None, time.monotonic() + 600
while monitor is None:  # until the run exists (the store, then the run's row, are created by the run)
    try:
        monitor = StoreMonitor({path!r}, "bench")
    except StoreError:
        assert time.monotonic() < deadline, "the run never started"
        time.sleep(0.01)
took, most, cpu0 = [], 0, time.process_time()
while True:
    t = time.perf_counter()
    monitor.poll()
    snap = monitor.snapshot()
    took.append(time.perf_counter() - t)
    most = max(most, len(snap.episodes))
    if snap.status not in ("starting", "running"):
        break
    time.sleep(0.1)  # the Live screen's 10 Hz
took.sort()
print(json.dumps({{"polls": len(took), "most_in_flight": most, "median_ms": round(took[len(took) // 2] * 1000, 2),
                  "p99_ms": round(took[int(len(took) * 0.99)] * 1000, 2), "max_ms": round(took[-1] * 1000, 2),
                  "cpu_s": round(time.process_time() - cpu0, 2), "done": snap.done}}))
"""


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def own_cpu_s() -> float:
    """CPU seconds (user + system) this process has used since it started: imports and corpus open included."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


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
    ap.add_argument("--replicates", type=int, default=1, help="episodes per item (a longer run on the same data)")
    ap.add_argument("--preset", choices=("demo", "paper"), default="demo")
    ap.add_argument("--cache", help="where the paper preset's release and corpus cache are kept between runs")
    ap.add_argument("--client", choices=("auto", "native", "litellm"), default="auto")
    ap.add_argument("--compare", help="comma-separated variants: native, litellm, base=DIR")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--watch", action="store_true", help="a Live screen's reader follows the run from its own process")
    ap.add_argument("--store", help="keep the run's store at this path (default: a temporary one, removed)")
    args = ap.parse_args()
    if args.compare:
        return compare(args.compare.split(","), args.rounds, strip_compare(sys.argv[1:]))
    t0 = time.perf_counter()
    from sandbox import synth
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
        kept = Path(args.cache) if args.cache else Path(tempfile.gettempdir()) / f"agenthop-bench-demo-{args.items}"
        root = kept / "data"
        if not (root / "qa" / "full.jsonl").exists():
            synth.generate(root, seed=1, preset="demo", items=args.items, papers=max(240, args.items * 4))
        cache = kept / "cache"
    t = time.perf_counter()
    corpus, _ = open_release(root, cache)
    open_s = time.perf_counter() - t
    importlib.import_module("sandbox.agents.llm")  # before the clock, as the CLI's checks of an LLM run import it first
    import_s = None
    if args.client == "litellm":  # imported before the clock starts, as the baseline (which always used it) did
        from sandbox.agents.llm import litellm_module

        t = time.perf_counter()
        litellm_module()
        import_s = round(time.perf_counter() - t, 2)
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER.format(root=str(ROOT), calls=args.calls, latency=args.latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None  # both PIPE
    server_in, server_out = server.stdin, server.stdout
    url = server_out.readline().strip()
    store_path = Path(args.store) if args.store else work / "store.sqlite"
    watcher = None
    if args.watch:  # started, its imports done, before the run: a TUI watching a run has its modules loaded
        code = WATCHER.format(root=str(ROOT), path=str(store_path))
        watcher = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert watcher.stdout is not None and watcher.stdout.readline().strip() == "ready"
    try:
        store = Store(store_path)
        spec = RunSpec(
            name="bench",
            dataset=str(root),
            agent="llm",
            model="openai/bench-model",
            workers=args.workers,
            limit=args.episodes or None,
            replicates=args.replicates,
            agent_options={"base_url": url, "client": args.client},
        )
        t, cpu0 = time.monotonic(), time.process_time()
        runner = Runner(spec, corpus, store)
        result = asyncio.run(runner.run())
        t_end = time.monotonic()
        dt, cpu = t_end - t, time.process_time() - cpu0
        retries = store.conn.execute("SELECT COALESCE(SUM(transient_retries), 0) FROM trajectories").fetchone()[0]
        server_cpu = process_cpu_s(server.pid)
    finally:
        server_in.close()
        timings = json.loads(server_out.readline() or "[]")
        server.wait()
        watched = json.loads(watcher.communicate()[0] or "null") if watcher is not None else None
        shutil.rmtree(work, ignore_errors=True)  # the run's store: one per invocation, never read again
    calls = result["done"] * args.calls
    phases = call_phases(timings, t, t_end, args.workers, args.latency)
    print(
        json.dumps(
            {
                "items": args.items,
                "replicates": args.replicates,
                "workers": args.workers,
                "latency_s": args.latency,
                "episodes": result["done"],
                "seconds": round(dt, 2),
                "episodes_per_s": round(result["done"] / dt, 1),
                "model_calls_per_s": round(calls / dt, 1),
                "ms_per_call_per_worker": round(dt / calls * args.workers * 1000, 2),
                "cpu_ms_per_call": round(cpu / calls * 1000, 2),
                "process_cpu_ms_per_call": round(own_cpu_s() / calls * 1000, 3),
                "server_cpu_ms_per_call": round(server_cpu / calls * 1000, 2),
                "transient_retries": retries,
                "ideal_calls_per_s": round(args.workers / args.latency, 1) if args.latency else None,
                **phases,
                "client": runner.client,
                "litellm_imported": "litellm" in sys.modules,
                "correct": result["correct"],
                "corpus_open_s": round(open_s, 2),
                "litellm_import_s": import_s,
                "total_s": round(time.perf_counter() - t0, 2),
                "preset": args.preset,
                "peak_mb": round(peak_mb(), 1),
                "watcher": watched,
            },
            indent=1,
        )
    )


def call_phases(timings: list[list[float]], start: float, end: float, workers: int, latency: float) -> dict:
    """Where a latency-bound run's wall time goes, from when the server read each call and wrote its reply.

    The whole-run rate (calls / wall time) counts the ramp-up (no call is in flight until the
    first episode has been set up, and the workers' first calls leave one after another) and the
    tail (once the queue is empty, fewer and fewer workers have an episode left); a long run
    amortises both, a 10-wave run does not. So the steady rate is also given: the calls the server
    received between the 10th and the 90th percentile of arrival times, per second of that window.
    `overhead_ms_per_call` is what each call costs a worker beyond the server's latency in that
    window (workers / steady rate − latency): our client, engine and event loop, and the network.
    `server_hold_ms` is how long the server really held a call (read to reply written): the latency
    asked for, unless the server itself fell behind.
    """
    n = len(timings)
    if n < 10 or not latency:
        return {}
    arrivals = sorted(arrived for arrived, _ in timings)
    lo, hi = arrivals[n // 10], arrivals[(9 * n) // 10]
    steady = ((9 * n) // 10 - n // 10) / (hi - lo) if hi > lo else None
    ideal = workers / latency
    return {
        "whole_run_calls_per_s": round(n / (end - start), 1),
        "whole_run_share_of_ideal": round(n / (end - start) / ideal, 3),
        "steady_calls_per_s": round(steady, 1) if steady else None,
        "steady_share_of_ideal": round(steady / ideal, 3) if steady else None,
        "overhead_ms_per_call": round((workers / steady - latency) * 1000, 1) if steady else None,
        "server_hold_ms": round(sum(sent - arrived for arrived, sent in timings) / n * 1000, 1),
        "ramp_up_s": round(arrivals[min(workers, n) - 1] - start, 3),
        "tail_s": round(end - arrivals[-1] - latency, 3),
    }


def strip_compare(argv: list[str]) -> list[str]:
    """The run flags to pass on to each variant (without --compare/--rounds/--client)."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
            continue
        name = arg.split("=", 1)[0]
        if name in ("--compare", "--rounds", "--client"):
            skip = "=" not in arg
            continue
        out.append(arg)
    return out


def variant_command(variant: str, flags: list[str]) -> list[str]:
    if variant.startswith("base="):  # an older checkout's bench: it always ran through litellm
        return [sys.executable, str(Path(variant[5:]) / "bench" / "llm_throughput.py"), *flags]
    return [sys.executable, str(Path(__file__).resolve()), *flags, "--client", variant]


def compare(variants: list[str], rounds: int, flags: list[str]) -> None:
    """Alternate the variants round by round; medians and ratios to the first variant."""
    import statistics

    results: dict[str, list[dict]] = {v: [] for v in variants}
    for r in range(rounds):
        for variant in variants:
            t = time.perf_counter()
            out = subprocess.run(variant_command(variant, flags), capture_output=True, text=True, check=True).stdout
            row = json.loads(out[out.index("{") :])
            row["process_s"] = round(time.perf_counter() - t, 2)
            results[variant].append(row)
            steady = f", steady {row['steady_share_of_ideal']:.1%} of ideal" if row.get("steady_share_of_ideal") else ""
            print(
                f"round {r + 1} {variant}: {row['seconds']} s, {row['episodes_per_s']} episodes/s{steady}, "
                f"{row['peak_mb']} MB peak, process {row['process_s']} s, load {os.getloadavg()[0]:.2f}",
                file=sys.stderr,
                flush=True,
            )
    keys = ("seconds", "episodes_per_s", "model_calls_per_s", "cpu_ms_per_call", "peak_mb", "process_s")
    summary = {v: {k: statistics.median(row[k] for row in rows) for k in keys} for v, rows in results.items()}
    first = variants[0]
    for v in variants:
        summary[v]["runs"] = len(results[v])
        summary[v]["ratio_to_" + first] = {
            k: round(summary[v][k] / summary[first][k], 3) if summary[first][k] else None for k in keys
        }
        ideal = results[v][0].get("ideal_calls_per_s")
        if ideal:
            summary[v]["share_of_ideal_call_rate"] = round(summary[v]["model_calls_per_s"] / ideal, 3)
            for key in ("steady_share_of_ideal", "overhead_ms_per_call", "server_hold_ms", "ramp_up_s", "tail_s"):
                got = [row[key] for row in results[v] if row.get(key) is not None]
                if got:  # an older checkout's bench does not report them
                    summary[v][key] = statistics.median(got)
    print(json.dumps({"flags": flags, "rounds": rounds, "load_average": os.getloadavg(), "median": summary}, indent=1))


if __name__ == "__main__":
    main()
