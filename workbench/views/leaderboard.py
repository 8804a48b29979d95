"""The leaderboard as text cells, its title and notes (the batch table and the TUI's leaderboard)."""

from __future__ import annotations

from sandbox.datasets import dataset_label
from workbench.service.records.leaderboard import Board
from workbench.views.cells import counted
from workbench.views.panel import panel_cells

LEADERBOARD_FIXED = 3  # rank, name and who stay in view when the table scrolls right


def leaderboard_cells(board: Board) -> tuple[tuple, list[tuple]]:
    """A leaderboard as rank (— when unranked), name, who, items covered, the accuracy's 95% interval, then the
    panel's columns (`*` marks a column's best among the ranked rows)."""
    header, cells = panel_cells(board)
    rows = []
    for r, row in zip(board["rows"], cells, strict=True):
        who = (
            r["agent"]
            + (f" {r['model']}" if r["model"] else "")
            + ("" if r["ablation"] == "full" else f" · {r['ablation']}")
        )
        ci = "—" if r["accuracy_ci"] is None else f"{100 * r['accuracy_ci'][0]:.0f}–{100 * r['accuracy_ci'][1]:.0f}%"
        rows.append(
            (
                "—" if r["rank"] is None else str(r["rank"]),
                r["name"],
                who,
                f"{r['n']}/{board['n_items']}",
                row[1],
                ci,
                *row[2:],
            )
        )
    return ("#", "run", "who", "items", header[1], "95% CI", *header[2:]), rows


def leaderboard_title(board: Board) -> str:
    dataset = dataset_label(board["dataset"])
    ranked = sum(1 for r in board["rows"] if r["rank"] is not None)
    return (
        f"leaderboard · {dataset} · {counted(board['n_items'], 'item')} played by people · {ranked} ranked of "
        f"{len(board['rows'])}" + (" · * best, p < 0.05 vs the runner-up" if board.get("best") else "")
    )


def leaderboard_notes(board: Board) -> list[str]:
    """What the table cannot say: who is unranked and why, which plays were left out, how it is computed."""
    lines = [f"unranked: {r['name']} ({r['agent']}) {r['unranked']}" for r in board["rows"] if r["unranked"]]
    lines += [
        f"left out: {r['excluded']} play(s) of {r['agent']} made after seeing the item's tool results or gold "
        "answer (resumed / replayed)"
        for r in board["rows"]
        if r["excluded"]
    ]
    lines.append(
        f"A person is one row over all their sessions; a model one row per run. Ranked: rows covering at "
        f"least {board['min_coverage']:.0%} of the items people played, by accuracy (95% CI: Wilson score "
        f"interval over the items a row covers). People's tokens are "
        "estimated (characters / 4)."
    )
    lines.append(
        "* best: beats the runner-up significantly (p < 0.05 on the items both covered, as report --panel);"
        " none in tokens and MaxTok while a ranked row does not measure tokens (scripted agent, MCP client)."
    )
    return lines
