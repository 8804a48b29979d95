"""Per-trajectory inputs that must line up (trajectories and their facts, trajectories and their samples) are
refused when their lengths differ: a silently shortened pairing would report a wrong number."""

from __future__ import annotations

import pytest

from stats.reference_summary import accuracy, failure_attribution
from stats.stopping import Facts, after_evidence, early_submit, mt_fail_breakdown

SUBMIT = {"tool": "submit_answer", "status": "ok"}
TRAJECTORIES = [
    {"kind": "mt", "correct": False, "termination": "answer", "actions": [SUBMIT], "n_gold": 2},
    {"kind": "st", "correct": True, "termination": "answer", "actions": [SUBMIT], "n_gold": 1},
]


@pytest.mark.parametrize("measure", [mt_fail_breakdown, after_evidence, early_submit])
def test_stopping_measures_refuse_facts_of_other_trajectories(measure):
    one_fact = [Facts.of(TRAJECTORIES[0])]
    with pytest.raises(ValueError):
        measure(TRAJECTORIES, facts=one_fact)


@pytest.mark.parametrize("measure", [accuracy, failure_attribution])
def test_reference_measures_refuse_a_sample_list_of_another_length(measure):
    with pytest.raises(ValueError):
        measure(TRAJECTORIES, [{}])
