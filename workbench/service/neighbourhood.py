"""An item's citation neighbourhood as a tree: seed → its references → their references.

The graph of one item can hold ~900 papers, so the model never builds the whole tree:
`children` answers one node at a time (the TUI adds them as a node is expanded) and
`gold_paths` says which nodes to open first. Each paper carries its role (seed, bridge,
gold), whether its full text is in the pool or it is metadata-only, its year and title.
The same model gives the tree of `--batch items --show` (drawn with rich.tree, `workbench.views.tree`) and its
JSON, and the TUI's gold path.
Titles are dataset text: callers sanitize before putting them on a terminal.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any, NotRequired, TypedDict

MARKS = {"seed": "●", "bridge": "◇", "gold": "★", "": "·"}
TEXT_DEPTH = 2  # the plain-text tree goes as deep as the protocol's neighbourhood (seed, references, theirs)


class PaperRecord(TypedDict):
    """A paper of the neighbourhood as its JSON has it."""

    paper_id: str
    arxiv_id: str | None
    title: str
    year: int | None
    full_text: bool
    role: str | None  # seed | bridge | gold, None for any other paper


class TreeNode(PaperRecord):
    """A paper of the JSON tree with the papers it references (absent below the tree's depth or for a leaf)."""

    references: NotRequired[list[TreeNode | PaperRecord]]


class Tree(TreeNode):
    """The JSON tree from the seed, with the papers the seed's tree does not reach."""

    unlinked: list[PaperRecord]


class NeighbourhoodSummary(TypedDict):
    """The neighbourhood's size: papers, with and without full text, and citations."""

    papers: int
    full_text: int
    metadata_only: int
    citations: int


@dataclass(frozen=True)
class Paper:
    """One node of the neighbourhood as the tree shows it."""

    s2id: str
    arxiv_id: str
    title: str
    year: int | None
    full_text: bool
    role: str  # seed | bridge | gold | ""
    in_graph: bool = True  # False: an edge points at a paper the graph does not describe

    def as_dict(self) -> PaperRecord:
        """The paper as the JSON tree and the item's detail list it."""
        return {
            "paper_id": self.s2id,
            "arxiv_id": self.arxiv_id or None,
            "title": self.title,
            "year": self.year,
            "full_text": self.full_text,
            "role": self.role or None,
        }


class Neighbourhood:
    """The tree view of an `ItemView` (sandbox.corpus): roles from the item, edges from its graph."""

    def __init__(self, view: Any):
        item = view.item
        self.root = item.seed_paper_id
        self.nodes = view.nodes
        self.edges = view.edges
        self.roles: dict[str, str] = {item.seed_paper_id: "seed"}
        self.roles.update({b: "bridge" for b in item.bridge_paper_ids})
        self.roles.update({g: "gold" for g in item.gold_paper_ids})
        self.gold = tuple(item.gold_paper_ids)

    def paper(self, s2id: str) -> Paper:
        node = self.nodes.get(s2id)
        role = self.roles.get(s2id, "")
        if node is None:
            return Paper(s2id, "", "", None, False, role, in_graph=False)
        year = node.data.get("year")
        return Paper(
            s2id,
            node.arxiv_id,
            str(node.data.get("title") or ""),
            year if isinstance(year, int) else None,
            node.has_text,
            role,
        )

    def children(self, s2id: str) -> list[str]:
        """The references of a paper in graph order, each once."""
        return list(dict.fromkeys(self.edges.get(s2id, ())))

    def has_children(self, s2id: str) -> bool:
        return bool(self.edges.get(s2id))

    @cached_property
    def graph(self) -> Any:
        """The item's citations as a networkx DiGraph (`sandbox.citations`), edges in graph order."""
        from sandbox.citations import digraph

        return digraph(self.edges, self.nodes)

    def gold_paths(self) -> list[tuple[str, ...]]:
        """A shortest citation path from the seed to each gold paper (breadth first in graph order, so the first
        parent found wins a tie; unreachable gold left out)."""
        import networkx as nx

        paths = nx.single_source_shortest_path(self.graph, self.root) if self.root in self.graph else {}
        return [tuple(paths[g]) for g in self.gold if g in paths]

    def reachable(self) -> set[str]:
        """Every paper a citation path from the seed reaches, the seed included."""
        from sandbox.citations import hops_from

        return set(hops_from(self.graph, self.root)) | {self.root}

    def unlinked(self) -> list[str]:
        """Papers of the graph no citation path from the seed reaches (found by search only), in graph order."""
        reach = self.reachable()
        return [s for s in self.nodes if s not in reach]

    def summary(self) -> NeighbourhoodSummary:
        full = sum(1 for n in self.nodes.values() if n.has_text)
        return {
            "papers": len(self.nodes),
            "full_text": full,
            "metadata_only": len(self.nodes) - full,
            "citations": sum(len(v) for v in self.edges.values()),
        }


def label_parts(paper: Paper) -> list[tuple[str, str]]:
    """A paper's one-line label as (text, kind) pieces, so the TUI can style what the plain text prints.

    Kinds: the role (`seed`, `bridge`, `gold`, `paper`), `meta` (metadata only), `muted`, `title`."""
    role = paper.role or "paper"
    parts = [(f"{MARKS[paper.role]} {role:<6} ", role)]
    if not paper.in_graph:
        return [*parts, (f"? not in the graph · {paper.s2id}", "muted")]
    parts.append(("full " if paper.full_text else "meta ", "muted" if paper.full_text else "meta"))
    parts.append((f"{paper.year or '----'} ", "muted"))
    parts.append((" ".join(paper.title.split()) or paper.s2id, "title" if paper.full_text else "meta"))
    if paper.arxiv_id:
        parts.append((f" ({paper.arxiv_id})", "muted"))
    return parts


def label(paper: Paper) -> str:
    """One line for a paper: role mark and name, full text or metadata, year, title, arXiv id."""
    return "".join(text for text, _ in label_parts(paper))


def reference_outline(nb: Neighbourhood, depth: int = TEXT_DEPTH) -> tuple[str, list]:
    """The tree as a nested outline of S2 ids (`workbench.views.tree`): the seed, its references, theirs, `depth`
    levels below the seed; a paper already on the path above (a citation cycle) is listed, never descended."""

    def below(s2id: str, level: int, path: frozenset[str]) -> list:
        out = []
        for child in nb.children(s2id):
            descend = level < depth and child not in path and nb.has_children(child)
            out.append((child, below(child, level + 1, path | {child}) if descend else []))
        return out

    return nb.root, below(nb.root, 1, frozenset({nb.root}))


def gold_outline(nb: Neighbourhood) -> tuple[str, list]:
    """The shortest citation paths from the seed to the gold papers (`gold_paths`) merged into one outline of S2 ids
    (a paper shared by two paths appears once); the seed alone when no gold paper is reachable."""
    children: dict[tuple[str, ...], list[str]] = {}
    for path in nb.gold_paths():
        for depth in range(1, len(path)):
            kids = children.setdefault(path[:depth], [])
            if path[depth] not in kids:
                kids.append(path[depth])

    def below(prefix: tuple[str, ...]) -> list:
        return [(s2id, below((*prefix, s2id))) for s2id in children.get(prefix, ())]

    return nb.root, below((nb.root,))


def text_tree(nb: Neighbourhood, depth: int = TEXT_DEPTH) -> tuple[tuple[str, list], list[str]]:
    """What `--batch items --show` draws, as plain data for `workbench.views.tree.plain_tree`: the reference outline
    with each paper's one-line label in place of its id, and the labels of the papers no citation path from the
    seed reaches."""

    def labelled(outline: tuple[str, list]) -> tuple[str, list]:
        s2id, branches = outline
        return label(nb.paper(s2id)), [labelled(b) for b in branches]

    return labelled(reference_outline(nb, depth)), [label(nb.paper(s)) for s in nb.unlinked()]


def tree_dict(nb: Neighbourhood, depth: int = TEXT_DEPTH) -> Tree:
    """The same tree as nested JSON: each paper with its `references` down to `depth`."""

    def node(s2id: str, level: int, path: frozenset[str]) -> TreeNode:
        out: TreeNode = {**nb.paper(s2id).as_dict()}
        if level < depth and nb.has_children(s2id):
            out["references"] = [
                node(c, level + 1, path | {c}) if c not in path else nb.paper(c).as_dict() for c in nb.children(s2id)
            ]
        return out

    return {**node(nb.root, 0, frozenset({nb.root})), "unlinked": [nb.paper(s).as_dict() for s in nb.unlinked()]}
