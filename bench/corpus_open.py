"""First and warm open of a release's corpus cache, against a plain loader and against another checkout.

    python bench/corpus_open.py --data DIR [--rounds 3] [--base /path/to/old/tree]

Variants, each in its own process (peak RSS is its own), alternating round by round:
`loader` reads and parses the four release files into memory, which is all the reference
harness's loader does (its baseline); `cold` opens the release into an empty cache (fingerprint,
validation, import, open; `cold-worker-off`/`-on` with the graphs worker forced off or on, each followed
by the same with --base's code);
`warm` opens it again; `base-cold` / `base-warm` do the same with the
code of --base. Prints medians, and each figure's ratio to its baseline (cold to loader and to
base-cold, warm to base-warm), in wall and in CPU seconds (the process and its worker: on a shared machine
the CPU is the steadier figure).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ONE = """
import json, resource, sys, time
sys.path.insert(0, {tree!r})
from pathlib import Path
t = time.perf_counter()
if {variant!r} == "loader":
    root = Path({data!r})
    held = []
    for rel in ("qa/full.jsonl", "graphs/full.jsonl", "paper_pool/papers.jsonl", "audit/recall_labels.jsonl"):
        with open(root / rel, encoding="utf-8") as fh:
            held.append([json.loads(line) for line in fh if line.strip()])
    n = sum(len(h) for h in held)
else:
    from sandbox.corpus import open_release
    corpus, _ = open_release(Path({data!r}), Path({cache!r}))
    n = len(corpus.items)
own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
print(json.dumps({{"seconds": time.perf_counter() - t, "n": n, "peak_mb": own.ru_maxrss / 1024,
                  "cpu_s": own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime}}))
"""


def one(variant: str, tree: Path, data: Path, cache: Path, worker: str = "auto") -> dict:
    code = ONE.format(tree=str(tree), variant=variant, data=str(data), cache=str(cache))
    # run from the tree: the graphs worker, a `python -m sandbox.graph_import` child, finds its package in the
    # working directory first, so it must be the measured tree's (it was this checkout's for every tree)
    env = dict(os.environ, AGENTHOP_IMPORT_WORKER=worker)
    done = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, env=env, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"{variant} ({tree}) failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--data", required=True, help="a release directory (e.g. agenthop-tui --batch synth --preset paper)"
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--base", help="another checkout (the code before a change)")
    args = ap.parse_args()
    data = Path(args.data).resolve()
    work = Path(tempfile.mkdtemp(prefix="agenthop-open-bench-"))
    trees = {"": ROOT} | ({"base-": Path(args.base).resolve()} if args.base else {})
    results: dict[str, list[dict]] = {}
    try:
        for r in range(args.rounds):
            row = {"loader": one("loader", ROOT, data, work / "unused")}
            for prefix, tree in trees.items():
                cache = work / f"{prefix}cache"
                shutil.rmtree(cache, ignore_errors=True)
                row[prefix + "cold"] = one("open", tree, data, cache)
                row[prefix + "warm"] = one("open", tree, data, cache)
            for worker in ("off", "on"):  # the import with its graphs worker forced off and on, each after the other
                for prefix, tree in trees.items():  # tree's, so a shared machine's noise hits both alike
                    cache = work / f"{prefix}cache"
                    shutil.rmtree(cache, ignore_errors=True)
                    row[f"{prefix}cold-worker-{worker}"] = one("open", tree, data, cache, worker)
            for name, got in row.items():
                results.setdefault(name, []).append(got)
                print(
                    f"round {r + 1} {name}: {got['seconds']:.2f} s, {got['cpu_s']:.2f} s CPU, {got['peak_mb']:.0f} MB, "
                    f"load {os.getloadavg()[0]:.2f}",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    median = {
        name: {k: round(statistics.median(x.get(k, 0) for x in rows), 3) for k in ("seconds", "cpu_s", "peak_mb")}
        for name, rows in results.items()
    }
    ratios = {
        "cold/loader": median["cold"]["seconds"] / median["loader"]["seconds"],
        "cold/loader cpu_s": median["cold"]["cpu_s"] / median["loader"]["cpu_s"],
    }
    if args.base:
        ratios["cold/base-cold"] = median["cold"]["seconds"] / median["base-cold"]["seconds"]
        for worker in ("off", "on"):
            for k in ("seconds", "cpu_s"):
                base = median[f"base-cold-worker-{worker}"][k]
                if base:  # an older checkout's bench may not report CPU
                    ratios[f"cold-worker-{worker}/base {k}"] = median[f"cold-worker-{worker}"][k] / base
        ratios["warm/base-warm"] = median["warm"]["seconds"] / median["base-warm"]["seconds"]
        ratios["cold peak/base-cold peak"] = median["cold"]["peak_mb"] / median["base-cold"]["peak_mb"]
    size = sum(f.stat().st_size for f in data.rglob("*.jsonl"))
    print(
        json.dumps(
            {
                "data": str(data),
                "release_mb": round(size / 2**20),
                "rounds": args.rounds,
                "load_average": os.getloadavg(),
                "median": median,
                "ratios": {k: round(v, 3) for k, v in ratios.items()},
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
