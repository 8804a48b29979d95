"""A campaign's own cost beside its runs: the same N scripted runs executed one after another by the runner, and
executed as a campaign (planned from a file, on its lane, with its totals tracked and its progress display fed).

    python bench/campaign_overhead.py [--rounds 3] [--limit 60] [--replicates 2]

Each round runs both ways into fresh stores, alternating which goes first; prints each round's seconds and the
median ratio (campaign / one by one). The campaign's plan (reading and checking the file, `run_spec` per run) is
timed apart. Scripted agents share one lane, so both ways run the same runs in the same order on one core: the
difference is the campaign's own work. Asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

AGENTS = ("heuristic", "random", "oracle")
ABLATIONS = ("full", "no-search", "closed-book", "gold-given")


def campaign_text(limit: int, replicates: int) -> str:
    lines = ['name = "bench"', 'data = "builtin"', f"limit = {limit}", "workers = 8", "", "[runs]"]
    lines += [f"ablations = {list(ABLATIONS)!r}".replace("'", '"'), f"replicates = {replicates}", ""]
    for agent in AGENTS:
        lines += ["[[models]]", f'name = "{agent}"', f'agent = "{agent}"', ""]
    return "\n".join(lines)


def one_by_one(plan, corpus, path: Path) -> tuple[float, float]:
    from workbench.service.execution import runner
    from workbench.service.stores import open_store

    store = open_store(path)
    began, cpu = time.perf_counter(), time.process_time()
    for run in plan.runs:
        asyncio.run(runner(run.spec, corpus, store).run())
    took = time.perf_counter() - began, time.process_time() - cpu
    store.close()
    return took


def as_campaign(plan, corpus, path: Path) -> tuple[float, float]:
    from workbench.cli.progress import CampaignProgress
    from workbench.service.campaign import campaign_status, execute_campaign
    from workbench.service.execution import runner
    from workbench.service.stores import open_store

    store = open_store(path)
    began, cpu = time.perf_counter(), time.process_time()
    progress = CampaignProgress("bench", campaign_status(store, plan, corpus), quiet=True)

    async def run_one(run):
        result = await runner(run.spec, corpus, store, on_event=lambda e: progress.update(run.name, e)).run()
        progress.ended(run.name, result)
        return result

    asyncio.run(execute_campaign(plan, run_one))
    took = time.perf_counter() - began, time.process_time() - cpu
    store.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--replicates", type=int, default=2)
    args = parser.parse_args()
    from workbench.service.campaign import load_campaign, plan_campaign
    from workbench.service.datasets import open_dataset

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        spec = base / "bench.toml"
        spec.write_text(campaign_text(args.limit, args.replicates), encoding="utf-8")
        began = time.perf_counter()
        plan = plan_campaign(load_campaign(spec))
        planned = time.perf_counter() - began
        corpus, _ = open_dataset("builtin", base / "cache")
        episodes = len(plan.runs) * args.limit * args.replicates
        print(
            f"{len(plan.runs)} scripted runs, {episodes} episodes; the file read and planned in {planned * 1000:.1f} ms"
        )
        ratios, cpu_ratios = [], []
        for r in range(args.rounds):
            ways = [("one by one", one_by_one), ("campaign", as_campaign)]
            if r % 2:
                ways.reverse()
            took = {name: way(plan, corpus, base / f"{r}-{name.replace(' ', '')}.sqlite") for name, way in ways}
            (alone, alone_cpu), (campaign, campaign_cpu) = took["one by one"], took["campaign"]
            ratios.append(campaign / alone)
            cpu_ratios.append(campaign_cpu / alone_cpu)
            print(
                f"round {r + 1}: one by one {alone:.2f} s (CPU {alone_cpu:.2f} s), campaign {campaign:.2f} s "
                f"(CPU {campaign_cpu:.2f} s): {ratios[-1]:.3f}× wall, {cpu_ratios[-1]:.3f}× CPU"
            )
        print(
            f"median campaign / one by one: {statistics.median(ratios):.3f}× wall, "
            f"{statistics.median(cpu_ratios):.3f}× CPU"
        )
        corpus.close()


if __name__ == "__main__":
    main()
