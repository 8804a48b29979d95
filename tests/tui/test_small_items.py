"""The smaller things of issue 13 §3, each held by a test that failed on the code before."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.runlist import natural_key
from workbench.tui.runs import sort_key


def test_runs_sort_by_name_in_natural_order():
    names = ["seqt@16k", "seqt@8k", "seqt@128k", "Seqt@32k", "r10", "r2", "heur-s0"]
    rows = sorted(({"name": n, "agent": "heuristic", "model": None} for n in names), key=sort_key("name"))
    assert [r["name"] for r in rows] == ["heur-s0", "r2", "r10", "seqt@8k", "seqt@16k", "Seqt@32k", "seqt@128k"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from("ab@-09١"), max_size=8), max_size=12))
def test_any_names_sort_and_the_order_is_total(names):
    ordered = sorted(names, key=natural_key)
    assert sorted(ordered, key=natural_key) == ordered
    for a, b in zip(ordered, ordered[1:]):
        assert natural_key(a) <= natural_key(b)
