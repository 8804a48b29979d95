"""Trees drawn with `rich.tree`: a nested outline (each node an id and the branches below it) as a rich Tree.

The application layer says what the tree holds (`workbench.service.neighbourhood`'s outlines of S2 ids); this draws it,
labelling each node with the caller's `label`, so the CLI's plain tree and the TUI's styled gold path share one
drawing and neither draws box-drawing guides by hand. Labels are Text: dataset text is never read as markup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.style import Style
from rich.text import Text
from rich.tree import Tree

Outline = tuple[Any, list["Outline"]]  # a node and the outlines of its children, in order


def outline_tree(outline: Outline, label: Callable[[Any], Text], guide_style: str | Style = "") -> Tree:
    """The outline as a rich Tree, every node labelled by `label`, expanded."""
    node, branches = outline
    tree = Tree(label(node), guide_style=guide_style)
    _grow(tree, branches, label)
    return tree


def _grow(parent: Tree, branches: list[Outline], label: Callable[[Any], Text]) -> None:
    for node, below in branches:
        _grow(parent.add(label(node)), below, label)


def plain_tree(outline: Outline, loose: list[str]) -> list[Any]:
    """A labelled outline (`workbench.service.neighbourhood.text_tree`) as a console draws it: the tree, then the papers
    outside it under their own heading; renderables of Text, so a title is never read as markup."""
    out: list[Any] = [outline_tree(outline, Text)]
    if loose:
        out.append(Text(f"not cited along any path from the seed ({len(loose)}):"))
        out += [Text("   " + line) for line in loose]
    return out
