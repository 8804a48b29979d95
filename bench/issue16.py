"""Every figure of issue 16's table in one sitting, each as a ratio against its own baseline.

    python bench/issue16.py --paper DIR [--base /path/to/old/tree] [--rounds 3]

DIR is a paper-sized release (`agenthop-tui --batch synth --out DIR --preset paper`). Each row
runs its variants in their own processes, alternating round by round (bench/llm_throughput.py
--compare, bench/corpus_open.py), so a shared machine's load hits a figure and its baseline alike.
Baselines: the litellm client of this checkout and, with --base, the code before the change (its
bench always ran through litellm); for the first open, a plain loader (read and parse the four
files: what the reference harness's loader does) and --base's import; for 64 workers at 200 ms,
the ideal call rate (workers / latency; 640 items = 10 full waves of 64 episodes, so the ideal is reachable; and
the same items four times over, 40 waves, where the run's fixed start-up is amortised). Prints a Markdown table and
the raw JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def bench(script: str, *flags: str) -> dict:
    out = subprocess.run([sys.executable, str(HERE / script), *flags], capture_output=True, text=True, check=True)
    return json.loads(out.stdout[out.stdout.index("{") :])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--paper", required=True, help="a paper-sized release directory")
    ap.add_argument("--base", help="the checkout before the change")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    base = [f"base={Path(args.base).resolve()}"] if args.base else []
    variants = ",".join(["native", "litellm", *base])
    rounds = str(args.rounds)
    paper_cache = Path(args.paper).resolve().parent / "llm-bench-cache"
    paper_cache.mkdir(exist_ok=True)
    link = paper_cache / "data"
    if not link.exists():
        link.symlink_to(Path(args.paper).resolve())
    raw = {
        "400 items, 16 workers": bench(
            "llm_throughput.py", "--items", "400", "--workers", "16", "--compare", variants, "--rounds", rounds
        ),
        "paper-sized, 200 episodes, warm": bench(
            "llm_throughput.py",
            "--preset",
            "paper",
            "--episodes",
            "200",
            "--cache",
            str(paper_cache),
            "--compare",
            variants,
            "--rounds",
            rounds,
        ),
        "first open": bench(
            "corpus_open.py", "--data", args.paper, "--rounds", rounds, *(["--base", args.base] if args.base else [])
        ),
        "64 workers, 200 ms": bench(
            "llm_throughput.py",
            "--items",
            "640",
            "--workers",
            "64",
            "--latency",
            "0.2",
            "--compare",
            "native,litellm",
            "--rounds",
            rounds,
        ),
        # the same data four times over (40 waves): the start-up (imports, the first 64 episodes' set-up, 64
        # connections) is paid once per run, so the whole-run share depends on the run's length; here it is amortised
        "64 workers, 200 ms, 40 waves": bench(
            "llm_throughput.py",
            "--items",
            "640",
            "--replicates",
            "4",
            "--workers",
            "64",
            "--latency",
            "0.2",
            "--compare",
            "native",
            "--rounds",
            rounds,
        ),
    }
    rows = ["| figure | native | baseline | ratio |", "| --- | --- | --- | --- |"]
    for name in ("400 items, 16 workers", "paper-sized, 200 episodes, warm"):
        med = raw[name]["median"]
        for other in [v for v in med if v != "native"]:
            rows.append(
                f"| {name}: wall time | {med['native']['seconds']} s | {other} {med[other]['seconds']} s | "
                f"{med['native']['seconds'] / med[other]['seconds']:.2f}× |"
            )
            rows.append(
                f"| {name}: peak RSS | {med['native']['peak_mb']} MB | {other} {med[other]['peak_mb']} MB | "
                f"{med['native']['peak_mb'] / med[other]['peak_mb']:.2f}× |"
            )
        rows.append(f"| {name}: episodes/s | {med['native']['episodes_per_s']} | | |")
    opened = raw["first open"]["median"]
    rows.append(
        f"| first open (cache build) | {opened['cold']['seconds']} s | loader {opened['loader']['seconds']} s | "
        f"{raw['first open']['ratios']['cold/loader']:.2f}× |"
    )
    if args.base:
        rows.append(
            f"| first open (cache build) | {opened['cold']['seconds']} s | base {opened['base-cold']['seconds']}"
            f" s | {raw['first open']['ratios']['cold/base-cold']:.2f}× |"
        )
        for worker in ("off", "on"):
            for unit, key in (("s", "seconds"), ("s CPU", "cpu_s")):
                ratio = raw["first open"]["ratios"].get(f"cold-worker-{worker}/base {key}")
                if ratio is not None:
                    rows.append(
                        f"| first open, graphs worker {worker} | {opened[f'cold-worker-{worker}'][key]} {unit} | "
                        f"base {opened[f'base-cold-worker-{worker}'][key]} {unit} | {ratio:.2f}× |"
                    )
        rows.append(
            f"| warm open | {opened['warm']['seconds']} s | base {opened['base-warm']['seconds']} s | "
            f"{raw['first open']['ratios']['warm/base-warm']:.2f}× |"
        )
    for name, clients in (("64 workers, 200 ms", ("native", "litellm")), ("64 workers, 200 ms, 40 waves", ("native",))):
        wide = raw[name]["median"]
        for v in clients:
            rows.append(
                f"| {name}: calls/s ({v}) | {wide[v]['model_calls_per_s']} | ideal 320 | "
                f"{wide[v]['share_of_ideal_call_rate']:.2f}× |"
            )
            if wide[v].get("steady_share_of_ideal"):
                rows.append(
                    f"| {name}: steady share of ideal ({v}; ramp-up {wide[v]['ramp_up_s']} s, "
                    f"{wide[v]['overhead_ms_per_call']} ms per call beyond the latency; the server held each "
                    f"call {wide[v].get('server_hold_ms')} ms) | {wide[v]['steady_share_of_ideal']:.2f}× | | |"
                )
    print("\n".join(rows))
    print(json.dumps({"load_average": os.getloadavg(), "cpus": os.cpu_count(), "raw": raw}, indent=1))


if __name__ == "__main__":
    main()
