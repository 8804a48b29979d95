"""Time `stats.plateau.plateau` at the spec's size: B = 10,000 replicates, n = 1,011 items, K = 6 budgets.

A script, not a test: wall-clock numbers depend on the machine. Run from the repo root:
    python bench/plateau_speed.py [--repeat 5] [--two-stage-trials 3]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from stats.plateau import plateau


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n", type=int, default=1011)
    parser.add_argument("--budgets", type=int, default=6)
    parser.add_argument("--n-boot", type=int, default=10_000)
    parser.add_argument(
        "--two-stage-trials",
        type=int,
        default=0,
        help="also time the two-stage bootstrap with this many trials per item",
    )
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    p = np.linspace(0.3, 0.5, args.budgets)
    scores = (rng.random((args.n, args.budgets)) < p).astype(float)
    budgets = [f"{16 * (k + 3)}k" for k in range(args.budgets)]
    plateau(scores, budgets, n_boot=args.n_boot)  # warm-up
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        result = plateau(scores, budgets, n_boot=args.n_boot)
        times.append(time.perf_counter() - start)
    print(
        f"plateau B={args.n_boot} n={args.n} K={args.budgets}: best {min(times):.3f} s, "
        f"median {sorted(times)[len(times) // 2]:.3f} s over {args.repeat} runs (k*={result.k_star})"
    )
    if args.two_stage_trials:
        trials = (rng.random((args.n, args.budgets, args.two_stage_trials)) < p[None, :, None]).astype(float)
        start = time.perf_counter()
        result = plateau(trials, budgets, n_boot=args.n_boot, two_stage=True)
        print(f"two-stage T={args.two_stage_trials}: {time.perf_counter() - start:.3f} s (k*={result.k_star})")


if __name__ == "__main__":
    main()
