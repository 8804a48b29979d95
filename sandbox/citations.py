"""An item's citation graph (networkx): who cites whom, and how many hops each paper is from the seed.

One notion of distance serves three uses: the import's check that every gold paper is within the item's depth, the
item browser's paths and reach, and the hop of each delivered read from the seed, a stored diagnostic (`item_hops`,
once per episode at its first read; `sandbox.rescore.rehop` for runs stored before). It is the length of the
shortest chain of "cites" edges from the seed over the item's own graph (the seed: 0; no chain: unreachable).
networkx holds the graph where it is explored (the item browser). The two hot paths do not build one: the import's
depth check asks only the hop distances within an item's depth, which a recursive query over the cache's edge index
answers (a graph per item costs ~1 ms, over a second on a 1,011-item first open); an episode's read hops come from a
plain breadth-first search over the adjacency the episode already holds (`item_hops`: ~0.4 ms on a 931-paper graph
against ~8 ms to build the DiGraph and ask networkx, and no 22 MB networkx import in a run). All apply one rule,
`beyond_depth`, and a property test holds the search equal to networkx's. Importing networkx costs ~0.3 s, so this
module imports it only inside the functions that build a graph.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

HOP_RULE = "1"  # the version of the read-hop rule a run's stored hops were computed under (runs.hop_rule)


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


def item_hops(edges: Mapping[str, Sequence[str]], nodes: Iterable[str], seed: str) -> dict[str, int]:
    """Hop distance from the seed of every paper of an item's graph that a citation path reaches: `hops_from`'s
    answer by a breadth-first search over the adjacency itself, since an episode asks it once per run item and
    building a networkx graph for it would cost twenty times the search."""
    if seed not in edges and seed not in set(nodes) and not any(seed in cited for cited in edges.values()):
        return {}  # a seed the graph does not hold reaches nothing, not even itself (as in networkx)
    dist = {seed: 0}
    frontier = deque([seed])
    while frontier:
        paper = frontier.popleft()
        nxt = dist[paper] + 1
        for cited in edges.get(paper, ()):
            if cited not in dist:
                dist[cited] = nxt
                frontier.append(cited)
    return dist


def within_depth(hop: int | None, depth: int) -> bool:
    """Whether a paper `hop` citation hops from the seed (None: unreachable) lies within the item's depth."""
    return hop is not None and hop <= depth


def hops_stale(run: Mapping[str, Any]) -> bool:
    """Whether a run's reads lack hops under the current rule (stored before hops were recorded, or under another
    rule): checked by the TUI at start-up, so it lives here, where importing it costs nothing."""
    return run.get("hop_rule") != HOP_RULE


def beyond_depth(hops: dict[str, int], golds: Sequence[str], depth: int) -> list[str]:
    """The gold papers no citation path from the seed reaches within `depth` hops (the item's depth), given the
    hop distances from the seed (`hops_from`, or the import's query over its edge index): an agent that only
    follows references cannot get there, though `search_papers` still finds them."""
    return [g for g in golds if not within_depth(hops.get(g), depth)]
