"""An item's citation graph (networkx): who cites whom, and how many hops each paper is from the seed.

networkx is imported where the graph is asked about (dataset validation at import, the item browser's tree), never
on an episode's path: a breadth-first search is all those need, and the episode loop stays free of the import.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any


def digraph(edges: Mapping[str, Sequence[str]] | Iterable[tuple[str, str]], nodes: Iterable[str] = ()) -> Any:
    """A networkx DiGraph of citations (paper → the papers it references), edges in graph order."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    pairs = ((src, dst) for src, dsts in edges.items() for dst in dsts) if isinstance(edges, Mapping) else edges
    graph.add_edges_from(pairs)
    return graph


def hops_from(graph: Any, seed: str) -> dict[str, int]:
    """Hop distance of every paper a citation path from the seed reaches (the seed: 0)."""
    import networkx as nx

    if seed not in graph:
        return {}
    return dict(nx.single_source_shortest_path_length(graph, seed))


def beyond_depth(graph: Any, seed: str, golds: Sequence[str], depth: int) -> list[str]:
    """The gold papers no citation path from the seed reaches within `depth` hops (the item's depth): an agent
    that only follows references cannot get there, though `search_papers` still finds them."""
    hops = hops_from(graph, seed)
    return [g for g in golds if hops.get(g, depth + 1) > depth]
