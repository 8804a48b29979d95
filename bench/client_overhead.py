"""Our CPU per model call, and our call rate against a bare asyncio client's, at GPU-server speeds.

    python bench/client_overhead.py [--rounds 3] [--only cpu,64x0.2,256x0.1,256x0.1-watched] [--tree OLD_CHECKOUT]

Four measures, each against the test server (`tests/openai_server.py`, its own process, 4 calls
per episode, started by `bench/llm_throughput.py`):

- `cpu`: 400 items, 16 workers, zero latency: our process's CPU (user + system, from
  `resource.getrusage`: robust to load, unlike wall time) per model call, start-up included
  (imports, corpus open, the run) and for the run alone.
- `64x0.2` (800 episodes) and `256x0.1` (2,560 episodes): our call rate over the whole run, and
  a bare client's in the same sitting: as many asyncio workers, each sending an episode's 4 calls
  one after another on its own keep-alive connection (pre-encoded bodies of the same sizes, the
  response read by its Content-Length, no parsing, no tools, no store). Runs alternate pair by
  pair (ours, bare, ours, bare…) so a shared machine's load hits both alike; the ratio of each
  pair and the median of the ratios are printed, with the load average beside each pair.
- `256x0.1-watched`: the `256x0.1` run watched, against the same run unwatched, pair by pair: a
  reader in its own process follows it as the Live screen does a run another process executes
  (`llm_throughput.py --watch`: the store polled ten times a second, `StoreMonitor`); the ratio
  of the call rates (watched / unwatched: 1.0 is "watching costs the run nothing") and the
  reader's poll times.

Prints JSON; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# The bare client: the least any client can do per call (one write, one read by Content-Length).
BARE = """
import asyncio, json, resource, subprocess, sys, time
sys.path.insert(0, {bench!r})
from llm_throughput import SERVER

WORKERS, EPISODES, CALLS, LATENCY = {workers}, {episodes}, {calls}, {latency}
server = subprocess.Popen([sys.executable, "-c", SERVER.format(root={root!r}, calls=CALLS, latency=LATENCY)],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
url = server.stdout.readline().strip()
host, port = url.split("//", 1)[1].split("/", 1)[0].split(":")
system = "You answer questions about papers.\\n- **ID**: 2101.00001\\n" + "context " * 400
bodies = []
for turn in range(CALLS):  # the history grows as an episode's does: one assistant call and its result per turn
    messages = [{{"role": "system", "content": system}}, {{"role": "user", "content": "question " * 40}}]
    for t in range(turn):
        call = {{"id": f"call_{{t}}", "type": "function", "function": {{"name": "think", "arguments": "{{}}"}}}}
        messages.append({{"role": "assistant", "content": None, "tool_calls": [call]}})
        messages.append({{"role": "tool", "tool_call_id": f"call_{{t}}", "content": "result " * 300}})
    body = json.dumps({{"model": "bench-model", "messages": messages}}).encode()
    bodies.append(b"POST /v1/chat/completions HTTP/1.1\\r\\nhost: %s:%s\\r\\ncontent-type: application/json\\r\\n"
                  b"content-length: %d\\r\\n\\r\\n%s" % (host.encode(), port.encode(), len(body), body))

async def worker(queue):
    reader, writer = await asyncio.open_connection(host, int(port))
    while queue:
        queue.pop()
        for request in bodies:
            writer.write(request)
            head = await reader.readuntil(b"\\r\\n\\r\\n")
            length = int(head.lower().split(b"content-length:", 1)[1].split(b"\\r\\n", 1)[0])
            await reader.readexactly(length)
    writer.close()

async def main():
    queue = list(range(EPISODES))
    await asyncio.gather(*(worker(queue) for _ in range(WORKERS)))

t, usage = time.monotonic(), resource.getrusage(resource.RUSAGE_SELF)
asyncio.run(main())
dt = time.monotonic() - t
after = resource.getrusage(resource.RUSAGE_SELF)
server.communicate()  # it writes its timings on the way out: read, or a full pipe blocks it
cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
print(json.dumps({{"seconds": dt, "model_calls_per_s": EPISODES * CALLS / dt,
                  "cpu_ms_per_call": cpu / (EPISODES * CALLS) * 1000}}))
"""


@dataclass(frozen=True)
class Measure:
    workers: int
    latency: float
    items: int
    replicates: int


MEASURES = {
    "cpu": Measure(16, 0.0, 400, 1),
    "64x0.2": Measure(64, 0.2, 200, 4),
    "256x0.1": Measure(256, 0.1, 640, 4),
    "256x0.1-watched": Measure(256, 0.1, 640, 4),
}
CALLS = 4


def ours(workers: int, latency: float, items: int, replicates: int, tree: Path = ROOT, watch: bool = False) -> dict:
    """One run of the workbench (its own process, its server another): the throughput bench's figures; `tree`:
    another checkout's (the code before a change); `watch`: with a Live screen's reader following it."""
    flags = ["--workers", str(workers), "--latency", str(latency), "--items", str(items)]
    flags += ["--replicates", str(replicates), "--calls", str(CALLS), "--client", "native"]
    flags += ["--watch"] if watch else []
    script = tree / "bench" / "llm_throughput.py"
    out = subprocess.run([sys.executable, str(script), *flags], capture_output=True, text=True, check=True)
    return json.loads(out.stdout[out.stdout.index("{") :])


def watched_pair(m: Measure, load: float, tree: Path) -> dict:
    """The run unwatched, then watched: the call rates, their ratio, the reader's polls."""
    plain = ours(m.workers, m.latency, m.items, m.replicates, tree)
    seen = ours(m.workers, m.latency, m.items, m.replicates, tree, watch=True)
    reader = seen["watcher"]
    return {
        "load": round(load, 2),
        "unwatched_calls_per_s": plain["model_calls_per_s"],
        "watched_calls_per_s": seen["model_calls_per_s"],
        "ratio": round(seen["model_calls_per_s"] / plain["model_calls_per_s"], 3),
        "reader_polls": reader["polls"],
        "reader_poll_median_ms": reader["median_ms"],
        "reader_poll_max_ms": reader["max_ms"],
        "reader_most_in_flight": reader["most_in_flight"],
        "reader_cpu_s": reader["cpu_s"],
        "run_s": seen["seconds"],
    }


def bare(workers: int, latency: float, episodes: int) -> dict:
    code = BARE.format(
        bench=str(ROOT / "bench"), root=str(ROOT), workers=workers, episodes=episodes, calls=CALLS, latency=latency
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", default=",".join(MEASURES), help="comma-separated: " + ", ".join(MEASURES))
    ap.add_argument("--tree", help="run another checkout's workbench as 'ours' (the code before a change)")
    args = ap.parse_args()
    tree = Path(args.tree) if args.tree else ROOT
    report: dict = {"cpu_count": os.cpu_count()}
    for name in args.only.split(","):
        m = MEASURES[name]
        rows = []
        for r in range(args.rounds):
            load = os.getloadavg()[0]
            if name.endswith("-watched"):
                rows.append(watched_pair(m, load, tree))
                print(f"{name} round {r + 1}: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
                continue
            got = ours(m.workers, m.latency, m.items, m.replicates, tree)
            if name == "cpu":
                rows.append(
                    {
                        "load": round(load, 2),
                        **{k: got[k] for k in ("process_cpu_ms_per_call", "cpu_ms_per_call", "peak_mb", "seconds")},
                    }
                )
            else:
                base = bare(m.workers, m.latency, m.items * m.replicates)
                rows.append(
                    {
                        "load": round(load, 2),
                        "ours_calls_per_s": got["model_calls_per_s"],
                        "bare_calls_per_s": round(base["model_calls_per_s"], 1),
                        "ratio": round(got["model_calls_per_s"] / base["model_calls_per_s"], 3),
                        "ours_steady_share_of_ideal": got.get("steady_share_of_ideal"),
                        "ours_cpu_ms_per_call": got["cpu_ms_per_call"],
                        "bare_cpu_ms_per_call": round(base["cpu_ms_per_call"], 3),
                        "peak_mb": got["peak_mb"],
                    }
                )
            print(f"{name} round {r + 1}: {json.dumps(rows[-1])}", file=sys.stderr, flush=True)
        keys = [k for k in rows[0] if k != "load"]
        report[name] = {
            "workers": m.workers,
            "latency_s": m.latency,
            "episodes": m.items * m.replicates,
            "rounds": rows,
            "median": {
                k: statistics.median(row[k] for row in rows if row[k] is not None)
                for k in keys
                if any(row[k] is not None for row in rows)
            },
            "load_range": [min(row["load"] for row in rows), max(row["load"] for row in rows)],
        }
        if name == "cpu":
            report[name]["note"] = (
                "process_cpu_ms_per_call: start-up included (imports, corpus open, run); cpu_ms_per_call: the run alone"
            )
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - t:.0f} s", file=sys.stderr)
