"""The citation graph (networkx): hop distances from the seed, and the dataset check that every gold paper is
within the item's depth of the seed by citations (a counted warning: search_papers still finds it)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.citations import beyond_depth, digraph, hops_from, item_hops
from sandbox.corpus import open_release
from tests.conftest import B, G, S, mini_rows, write_release
from workbench.cli import main


def test_hops_follow_citations_not_the_reverse():
    graph = digraph({"s": ["b", "m"], "b": ["g"], "g": ["s"], "x": ["g"]}, ["s", "b", "g", "m", "x"])
    assert hops_from(graph, "s") == {"s": 0, "b": 1, "m": 1, "g": 2}  # x cites g but nothing leads to x
    hops = hops_from(graph, "s")
    assert beyond_depth(hops, ["g"], 2) == [] and beyond_depth(hops, ["g"], 1) == ["g"]
    assert beyond_depth(hops, ["x"], 5) == ["x"] and hops_from(graph, "nobody") == {}


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 7), st.integers(0, 7)), max_size=25))
def test_a_hop_distance_is_one_more_than_some_citing_papers(edges):
    """Breadth-first distances: the seed is 0, and every other reached paper is cited by one at distance d − 1."""
    graph = digraph([(str(a), str(b)) for a, b in edges], ["0"])
    hops = hops_from(graph, "0")
    assert hops["0"] == 0
    for paper, d in hops.items():
        if paper != "0":
            assert min(hops[p] for p in graph.predecessors(paper) if p in hops) == d - 1


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9)), max_size=30), st.integers(0, 10))
def test_an_episodes_hop_search_agrees_with_networkx(pairs, seed):
    """The episode's breadth-first search gives networkx's shortest path lengths on any graph (and nothing for a
    seed outside it), so stored read hops and the item browser's reach can never disagree."""
    edges: dict[str, list[str]] = {}
    for a, b in pairs:
        edges.setdefault(str(a), []).append(str(b))
    nodes = [str(n) for n in range(8)]
    assert item_hops(edges, nodes, str(seed)) == hops_from(digraph(edges, nodes), str(seed))


def test_a_gold_paper_out_of_citation_reach_is_counted_at_import(tmp_path, capsys):
    qa, graphs, papers, labels = mini_rows()
    within = open_release(write_release(tmp_path / "ok", qa, graphs, papers, labels), tmp_path / "c1")[1]
    assert "gold_beyond_depth" not in within.data_warnings  # S → B → G: depth 2
    graphs[0]["edges"] = {S: [B], B: []}  # nothing cites the gold paper any more
    root = write_release(tmp_path / "far", qa, graphs, papers, labels)
    _, report = open_release(root, tmp_path / "c2")
    assert report.data_warnings["gold_beyond_depth"] == 1
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "oracle",
                "--data",
                str(root),
                "--quiet",
                "--db",
                str(tmp_path / "s.db"),
                "--format",
                "json",
            ]
        )
        == 0
    )  # the oracle still answers it: it is told the gold papers
    err = capsys.readouterr().err
    assert "warning: 1 item(s) whose gold paper no citation path from the seed reaches within the item's depth" in err
    assert G not in err  # the count, not a dump of ids
