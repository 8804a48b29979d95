"""What `items` prints: the item browser's list, or one item with its options, neighbourhood tree, recall labels
and stored trajectories."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import console, print_json
from workbench.service.datasets import dataset_label
from workbench.service.items import ItemDetail, ItemTrajectory


def print_items(view, rows: list, flt, fmt: str) -> None:
    """The item browser's list (workbench.service.items rows): the same columns and numbers as the TUI."""
    if fmt == "json":
        print_json(
            {
                "dataset": view.spec,
                "fingerprint": view.fingerprint,
                "runs": view.runs,
                "stale_runs": view.stale_runs,
                "filters": flt.active(),
                "n": len(rows),
                "total": len(view.rows),
                "items": [r.as_dict() for r in rows],
            }
        )
        return
    out = console()
    out.print(_items_table(view, rows, flt))
    if view.note():
        out.print(f"note: {view.note()}", markup=False)


ITEM_COLUMNS = ("item", "type", "depth", "reasoning", "tier", "venue", "right", "question")


def _items_table(view, rows: list, flt) -> Table:
    """The item list: one row per item, the question clipped to its column."""
    name = dataset_label(view.spec)
    filters = " · ".join(f"{k} {v}" for k, v in flt.active().items())
    table = Table(
        title=Text(
            f"{name} · {len(rows)} of {len(view.rows)} items · right out of {len(view.runs)} runs"
            + (f" · {filters}" if filters else "")
        ),
        title_justify="left",
    )
    for col in ITEM_COLUMNS:
        table.add_column(
            col,
            justify="right" if col in ("depth", "right") else "left",
            no_wrap=col != "question",
            max_width=70 if col == "question" else None,
        )
    for r in rows:
        table.add_row(*map(Text, _item_cells(r)))
    return table


def _item_cells(r) -> tuple[str, ...]:
    """An item's cells in `ITEM_COLUMNS` order."""
    question = " ".join(r.question.split())
    return (
        r.id,
        r.kind,
        str(r.depth),
        r.reasoning,
        r.tier,
        r.venue,
        r.right_text,
        question[:67] + "…" if len(question) > 68 else question,
    )


def print_item(detail: ItemDetail, tree: tuple[Any, list[str]], fmt: str) -> None:
    """One item: its fields, question and options (gold and distractor types shown), its tree (plain data from
    `neighbourhood.text_tree`, drawn here), its stored trajectories."""
    if fmt == "json":
        print_json(detail)
        return
    out = console()

    def say(line: str = "") -> None:
        out.print(Text(line))  # a Text: dataset text is never read as markup

    say(
        f"{detail['id']} · {detail['kind']} d{detail['depth']} · {detail['reasoning']} · {detail['tier']} · "
        f"{detail['venue']} · right {detail['right']}/{detail['ran']} runs ({detail['outcome']})"
    )
    say()
    say("Q " + " ".join(detail["question"].split()))
    for line in _option_lines(detail):
        say(line)
    nb = detail["neighbourhood"]
    say()
    say(
        f"neighbourhood: {nb['papers']} papers ({nb['full_text']} full text, {nb['metadata_only']} metadata-only), "
        f"{nb['citations']} citations · ● seed ◇ bridge ★ gold · full/meta = full text or metadata only"
    )
    from workbench.views.tree import plain_tree

    for drawn in plain_tree(*tree):  # rich renderables of Text: dataset text is never read as markup
        out.print(drawn)
    if detail.get("labels"):
        from workbench.service.items import label_line

        say()
        say("recall labels → the section each resolved to (rule):")
        for lab in detail["labels"]:
            say("  " + label_line(lab))
    say()
    trajectories = detail["trajectories"]
    if not trajectories:
        say("no stored trajectories on this item")
        return
    out.print(_item_trajectories(trajectories))


def _option_lines(detail: ItemDetail) -> list[str]:
    """The item's options, the gold one marked, each with its distractor type."""
    types, gold = detail["distractor_types"], detail["gold"]
    lines = []
    for i, option in enumerate(detail["options"]):
        letter = "ABCD"[i]
        kind = "gold" if letter == gold else (types[i] if i < len(types) else "distractor")
        lines.append(f"{'●' if letter == gold else ' '} ({letter}) {kind:<12} {' '.join(option.split())}")
    return lines


def _item_trajectories(trajectories: list[ItemTrajectory]) -> Table:
    """The stored trajectories of one item: run, who, replicate, answer, outcome, ending, resources, recall."""
    table = Table(title=Text(f"stored trajectories ({len(trajectories)})"), title_justify="left")
    for col in ("run", "agent / model", "rep", "answer", "correct", "ending", "points", "turns", "recall P/S"):
        table.add_column(col, justify="right" if col in ("rep", "points", "turns") else "left")
    for t in trajectories:
        recall = ("●" if t["paper_recall"] else "○") + " " + ("●" if t["section_recall"] else "○")
        agent = t["agent"] + ("" if t["ablation"] == "full" else f" [{t['ablation']}]")
        cells = (
            t["run"],
            agent,
            str(t["replicate"]),
            t["answer"] or "—",
            "✓" if t["correct"] else "✗",
            t["termination"] or "",
            str(t["points"]),
            str(t["turns"]),
            recall,
        )
        table.add_row(*map(Text, cells))
    return table
