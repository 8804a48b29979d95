"""An item's citation neighbourhood as a Textual Tree, built lazily: a paper's references are added when it is
first expanded, so a ~900-paper neighbourhood costs only the nodes on screen. The gold path (seed → bridge →
gold) is opened on `show`. Labels are `workbench.service.neighbourhood.label_parts`, sanitised, styled from the theme.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from workbench.service.neighbourhood import Neighbourhood, label_parts
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.meters import theme_style
from workbench.tui.widgets.plaintext import sanitize

UNLINKED = "\0unlinked"  # the pseudo-node holding papers no citation path from the seed reaches


@dataclass(frozen=True)
class Slot:
    """What a tree node stands for: a paper, and the papers above it (so a citation cycle is never descended)."""

    s2id: str
    path: frozenset[str]


class NeighbourhoodTree(WorkbenchNode, Tree[Slot]):
    """The seed at the root; children are references in graph order."""

    def __init__(self, **kwargs):
        super().__init__(Text("…"), **kwargs)
        self.nb: Neighbourhood | None = None
        self._filled: set[int] = set()
        self.guide_depth = 3

    def show(self, nb: Neighbourhood) -> None:
        """Replace the tree with `nb`'s, the gold path expanded and the first gold paper under the cursor."""
        self.nb = nb
        self._filled.clear()
        self.clear()
        root = self.root
        root.set_label(self.paper_label(nb, nb.root))
        root.data = Slot(nb.root, frozenset({nb.root}))
        self._fill(root)
        root.expand()
        target = None
        for path in nb.gold_paths():
            node: TreeNode[Slot] | None = root
            parent = root
            for s2id in path[1:]:
                self._fill(parent)
                parent.expand()
                node = next((c for c in parent.children if c.data and c.data.s2id == s2id), None)
                if node is None:
                    break
                parent = node
            target = target or node
        if target is not None:
            self.call_after_refresh(self.move_cursor, target)  # lines are laid out on the next refresh

    def render_label(self, node: TreeNode[Slot], base_style: Style, style: Style) -> Text:
        """The label cut to the room its indentation leaves, ending in "…" (the pane cut it with no mark that
        there is more)."""
        text = super().render_label(node, base_style, style)
        depth, up = 0, node.parent
        while up is not None:
            depth, up = depth + 1, up.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth
        if room > 0 and text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        return text

    def paper_label(self, nb: Neighbourhood, s2id: str) -> Text:
        styles = self._styles()
        text = Text()
        for piece, kind in label_parts(nb.paper(s2id)):
            text.append(sanitize(piece), style=styles.get(kind, Style()))
        return text

    def _styles(self) -> dict[str, Style]:
        bold = Style(bold=True)
        return {
            "seed": bold + theme_style(self.app, "accent"),
            "bridge": bold + theme_style(self.app, "secondary"),
            "gold": bold + theme_style(self.app, "success"),
            "paper": Style(dim=True),
            "muted": Style(dim=True),
            "meta": Style(dim=True, italic=True),
        }

    def _fill(self, node: TreeNode[Slot]) -> None:
        """Add `node`'s children once (references, or for the root also the unlinked papers' branch)."""
        if node.id in self._filled or node.data is None or self.nb is None:
            return
        self._filled.add(node.id)
        nb, slot = self.nb, node.data
        if slot.s2id == UNLINKED:
            for s2id in nb.unlinked():
                node.add_leaf(self.paper_label(nb, s2id), data=Slot(s2id, slot.path))
            return
        for child in nb.children(slot.s2id):
            cycle = child in slot.path
            node.add(
                self.paper_label(nb, child),
                data=Slot(child, slot.path | {child}),
                allow_expand=nb.has_children(child) and not cycle,
            )
        if node.is_root:
            loose = nb.unlinked()
            if loose:
                node.add(
                    Text(f"not cited along any path from the seed ({len(loose)})", style="dim italic"),
                    data=Slot(UNLINKED, slot.path),
                )

    def on_tree_node_expanded(self, event: Tree.NodeExpanded) -> None:
        self._fill(event.node)

    def nodes_shown(self) -> list[TreeNode[Slot]]:
        """Every node built so far (for tests: what the marks say about which paper)."""
        out, stack = [], [self.root]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children)
        return out
