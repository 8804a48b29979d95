"""Table 17 of the AgentHop paper: run-to-run standard deviation of replicate runs.

The table's replicate values are not available here (/work/notes/paper_numbers.md): these tests rebuild its
statistic from the paper's definition — the population SD (ddof = 0) of the replicate runs' scores — with
replicate values shaped like the table's (three runs per model, accuracies a point or two apart), and check it
against `statistics.pstdev` and numpy's `std(ddof=0)`, through the panel's own path (`replicate_spread` over
trajectories).
"""

from __future__ import annotations

import statistics

import numpy as np
import pytest

from stats.significance import run_spread
from workbench.service.reports import replicate_spread

REPLICATES = {  # per model: accuracy of each replicate run
    "model-a": [0.512, 0.498, 0.505],
    "model-b": [0.301, 0.322, 0.296],
    "model-c": [0.644, 0.644, 0.651],
    "model-d": [0.120, 0.135],
}


@pytest.mark.parametrize("model", sorted(REPLICATES))
def test_run_to_run_sd_is_the_population_sd(model):
    values = REPLICATES[model]
    spread = run_spread(values)
    assert spread["std"] == pytest.approx(statistics.pstdev(values), rel=1e-12)
    assert spread["std"] == pytest.approx(float(np.std(values, ddof=0)), rel=1e-12)
    assert spread["std"] < statistics.stdev(values)  # not the sample SD (ddof = 1)
    assert spread["std_ddof"] == 0 and "Table 17" in spread["std_definition"]
    assert spread["mean"] == pytest.approx(statistics.fmean(values))


def test_replicate_spread_over_trajectories():
    """Three replicates of 200 items with 102, 99 and 101 right: SD = pstdev(0.51, 0.495, 0.505)."""
    right = [102, 99, 101]
    records = [
        {"item_id": f"q{i}", "replicate": r, "correct": i < k, "kind": "st"}
        for r, k in enumerate(right)
        for i in range(200)
    ]
    spread = replicate_spread(records)
    want = statistics.pstdev([k / 200 for k in right])
    assert spread["n"] == 3 and spread["std"] == pytest.approx(want, rel=1e-12)
    assert replicate_spread(records[:200]) is None  # one replicate says nothing about run-to-run spread
