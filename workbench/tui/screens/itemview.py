"""One item: its question and options (gold and distractor types on `g`), its citation neighbourhood as a
tree (seed, bridge, gold; full text or metadata only), and every stored trajectory on it (enter steps
through one in the stepper, where n/p move among this item's trajectories). `[`/`]` move to the
previous/next item of the browser's list; `a` audits the item, `p` plays it.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group
from rich.style import Style
from rich.text import Text
from rich.tree import Tree
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import DataTable, Static

from workbench.service import items
from workbench.service.neighbourhood import MARKS, Neighbourhood, gold_outline
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.citations import NeighbourhoodTree
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.itempane import options_text
from workbench.tui.widgets.meters import theme_style
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.tui.widgets.tables import ItemTrajectoryTable
from workbench.views.tree import outline_tree

COLUMNS = ("RUN", "AGENT / MODEL", "REP", "ANSWER", "RESULT", "ENDING", "POINTS", "TURNS", "RECALL P/S")


def question_text(
    item: Any,
    nb: Neighbourhood,
    row: items.ItemRow | None,
    reveal: bool,
    colors: dict[str, Style],
    labels: list[items.LabelResolution] | None = None,
) -> Group:
    """The left pane: seed, question, options (gold and distractor types only when revealed), the gold path."""
    ok, muted, bold = colors.get("success", Style()), Style(dim=True), Style(bold=True)
    t = Text()
    seed = nb.paper(item.seed_paper_id)
    t.append("Seed ", style=bold)
    t.append(sanitize(item.seed_title or seed.title or seed.s2id))
    if item.seed_arxiv_id:
        t.append(f" ({sanitize(item.seed_arxiv_id)})", style=muted)
    t.append("\n\nQ ", style=bold)
    t.append(sanitize(item.question) + "\n")
    t.append_text(options_text(item, reveal, bold + ok, muted))
    if not reveal:
        t.append("\n\ng shows the gold option and the distractor types", style=muted)
    t.append("\n\nGold path", style=bold)
    size = nb.summary()
    below = Text()
    below.append(
        f"\n{size['papers']} papers in the neighbourhood ({size['full_text']} full text, "
        f"{size['metadata_only']} metadata-only) · {len(item.labels)} recall labels\n",
        style=muted,
    )
    for lab in labels or ():  # each label → its section, and by which rule (docs/protocol.md#section-labels)
        below.append(f"  {sanitize(items.label_line(lab))}\n", style=muted)
    below.append(
        f"skill {sanitize(item.cognitive_skill) or '—'} · filter agreement {item.filter_agreement}\n", style=muted
    )
    if row is not None:
        below.append(
            f"right in {row.right} of {row.ran} runs" if row.ran else "no stored run has this item", style=muted
        )
    return Group(t, path_tree(nb, colors), below)


def path_tree(nb: Neighbourhood, colors: dict[str, Style]) -> Tree:
    """The seed, then each gold paper under the papers that lead to it (`neighbourhood.gold_outline`), drawn with
    rich.tree."""
    gold = colors.get("success", Style()) + Style(bold=True)

    def label(s2id: str) -> Text:
        paper = nb.paper(s2id)
        t = Text(f"{MARKS[paper.role]} ", style=gold if paper.role == "gold" else Style())
        t.append(clip(sanitize(paper.title or paper.s2id), 44))
        return t

    return outline_tree(gold_outline(nb), label, guide_style=Style(dim=True))


def trajectory_cells(t: items.ItemTrajectory) -> list[Text]:
    """A row of the trajectory table from `workbench.service.items.trajectory_row`."""
    recall = ("●" if t["paper_recall"] else "○") + " " + ("●" if t["section_recall"] else "○")
    agent = t["agent"] + ("" if t["ablation"] == "full" else f" · {t['ablation']}")
    return [
        Text(clip(sanitize(t["run"]), 28)),
        Text(clip(sanitize(agent), 28)),
        Text(str(t["replicate"]), justify="right"),
        Text(clip(sanitize(t["answer"] or "—"), 8)),
        Text("✓" if t["correct"] else "✗"),
        Text(sanitize(t["termination"] or "")),
        Text(str(t["points"]), justify="right"),
        Text(str(t["turns"]), justify="right"),
        Text(recall, justify="center"),
    ]


class ItemScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Item"
    FOOTER_WIDE_ONLY = frozenset({"items.audit", "items.play"})  # in ? help only, below 112 columns
    AUTO_FOCUS = "#item-tree"
    BINDINGS = [
        Binding("g", "toggle_gold", "Gold", id="items.gold"),
        Binding("t", "focus_tree", "Tree", id="items.focus_tree"),
        Binding("r", "focus_trajectories", "Trajectories", id="items.focus_trajectories"),
        Binding("right_square_bracket", "item(1)", "Next item", id="items.next_item", key_display="]"),
        Binding("left_square_bracket", "item(-1)", "Previous item", id="items.prev_item", key_display="[", show=False),
        Binding("a", "audit", "Audit", id="items.audit"),
        Binding("p", "play", "Play", id="items.play"),
        Binding("escape,q", "back", "Back", id="items.back"),
    ]

    def __init__(self, corpus: Any, dataset: str, item_ids: list[str], index: int = 0):
        super().__init__()
        self.corpus = corpus
        self.dataset = dataset
        self.item_ids = list(item_ids)
        self.index = index
        self.reveal = False
        self.item: Any = None
        self.nb: Neighbourhood | None = None
        self.row: items.ItemRow | None = None
        self.trajectories: list[items.ItemTrajectory] = []

    @property
    def current_item_id(self) -> str:
        return self.item_ids[self.index]

    def compose(self) -> ComposeResult:
        yield Static("", id="item-title", classes="title-bar")
        with Horizontal(id="item-body"):
            with VerticalScroll(id="item-left"):
                yield Static("", id="item-question")
            with Vertical(id="item-right"):
                yield Static(
                    Text(" Citation neighbourhood · ● seed ◇ bridge ★ gold · meta = metadata only"),
                    id="item-tree-title",
                    classes="pane-title",
                )
                yield NeighbourhoodTree(id="item-tree")
        yield Static("", id="item-runs-title", classes="pane-title")
        yield ItemTrajectoryTable(id="item-trajectories", cursor_type="row", zebra_stripes=True)
        yield KeysFooter()

    def on_mount(self) -> None:
        self.query_one(ItemTrajectoryTable).add_columns(*COLUMNS)
        self.load(self.index)
        self.query_one(NeighbourhoodTree).focus()

    def on_screen_resume(self) -> None:
        self._load_trajectories()

    # ------------------------------------------------------------ loading

    def load(self, index: int) -> None:
        """Show item `index` of the list: its view from the open corpus (one indexed query) and its trajectories."""
        self.index = index
        self.item = self.corpus.item(self.current_item_id)
        self.nb = Neighbourhood(self.corpus.view(self.item))
        self.query_one(NeighbourhoodTree).show(self.nb)
        self._load_trajectories()

    def _load_trajectories(self) -> None:
        store = self.app.open_store(create=False)
        fp = self.corpus.fingerprint
        raw = store.item_trajectories(fp, self.current_item_id) if store is not None else []
        self.trajectories = [items.trajectory_row(t) for t in raw]
        right, ran = store.item_outcomes(fp).get(self.current_item_id, (0, 0)) if store is not None else (0, 0)
        self.row = items.item_rows([self.item], {self.item.id: (right, ran)})[0]
        table = self.query_one(ItemTrajectoryTable)
        cursor = table.cursor_row
        table.clear()
        for t in self.trajectories:
            table.add_row(*trajectory_cells(t), key=str(t["id"]))
        if self.trajectories and cursor:
            table.move_cursor(row=min(cursor, len(self.trajectories) - 1), animate=False)
        n = len(self.trajectories)
        self.query_one("#item-runs-title", Static).update(
            Text(
                f" Stored trajectories on this item ({n})"
                + (" · enter steps through one" if n else " · none yet: play it (p) or run an agent on it")
            )
        )
        self._title()
        self._show_question()

    def _title(self) -> None:
        i, r = self.item, self.row
        right = f"right {r.right}/{r.ran}" if r and r.ran else "not run"
        self.query_one("#item-title", Static).update(
            Text.assemble(
                (f" {sanitize(i.id)}", "bold"),
                f"  ·  {i.kind} d{i.depth}  ·  {sanitize(i.reasoning_type)}  ·  tier {sanitize(i.consensus_tier)}  ·  "
                f"{sanitize(i.venue)}  ·  {right}  ·  item {self.index + 1} of {len(self.item_ids)}",
            )
        )

    def _show_question(self) -> None:
        if self.nb is None:  # no item loaded yet
            return
        colors = {"success": theme_style(self.app, "success")}
        self.query_one("#item-question", Static).update(
            question_text(
                self.item, self.nb, self.row, self.reveal, colors, items.label_resolutions(self.corpus, self.item)
            )
        )

    # ------------------------------------------------------------ events and actions

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open_trajectory()

    def action_open_trajectory(self) -> None:
        from workbench.tui.screens.stepper import StepperScreen

        table = self.query_one(ItemTrajectoryTable)
        if not self.trajectories or table.cursor_row is None:
            return
        first = self.trajectories[table.cursor_row]
        run = self.app.store.run_by_id(first["run_id"])
        self.app.push_screen(StepperScreen(run, [t["id"] for t in self.trajectories], table.cursor_row))

    def action_toggle_gold(self) -> None:
        self.reveal = not self.reveal
        self._show_question()

    def action_focus_tree(self) -> None:
        self.query_one(NeighbourhoodTree).focus()

    def action_focus_trajectories(self) -> None:
        self.query_one(ItemTrajectoryTable).focus()

    def action_item(self, delta: int) -> None:
        new = self.index + delta
        if 0 <= new < len(self.item_ids):
            self.load(new)
        else:
            self.notify("no more items in this direction", timeout=2)

    def action_audit(self) -> None:
        self.app.open_audit(self.dataset, self.current_item_id)

    def action_play(self) -> None:
        self.app.play_items(self.dataset, [self.current_item_id], fingerprint=self.corpus.fingerprint)

    def action_back(self) -> None:
        self.app.pop_screen()
