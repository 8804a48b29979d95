"""An item's citation graph (networkx): who cites whom, and how many hops each paper is from the seed.

networkx holds the graph where it is explored (the item browser's paths and reach). The import's depth check asks
only the hop distances within an item's depth, which a recursive query over the cache's edge index answers without
building a graph per item (building one costs ~1 ms, over a second on a 1,011-item first open); both apply the
same rule, `beyond_depth`. Never imported on an episode's path.
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


def beyond_depth(hops: dict[str, int], golds: Sequence[str], depth: int) -> list[str]:
    """The gold papers no citation path from the seed reaches within `depth` hops (the item's depth), given the
    hop distances from the seed (`hops_from`, or the import's query over its edge index): an agent that only
    follows references cannot get there, though `search_papers` still finds them."""
    return [g for g in golds if hops.get(g, depth + 1) > depth]
