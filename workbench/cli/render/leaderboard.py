"""What `leaderboard` prints: each board of play sessions, its name columns kept readable on a narrow terminal."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from workbench.cli.render.output import console, print_json
from workbench.service.records.leaderboard import Board
from workbench.views.clip import clip_middle
from workbench.views.leaderboard import leaderboard_cells, leaderboard_notes, leaderboard_title

NAME_ROOM = {"run": 32, "who": 24}  # the leaderboard's name columns: never narrower than their names up to this


def print_leaderboard(boards: list[Board], fmt: str) -> None:
    if fmt == "json":
        print_json(boards)
        return
    out = console()
    if not boards:
        out.print("no play sessions yet: people play in the TUI (agenthop-tui, then P)", markup=False)
    for board in boards:
        out.print(_board_table(board))
        for line in leaderboard_notes(board):
            out.print(line, markup=False, style="dim")


def _board_table(board: Board) -> Table:
    """One leaderboard as a table whose name columns keep their room (`NAME_ROOM`) on a narrow terminal."""
    header, rows = leaderboard_cells(board)
    table = Table(title=Text(leaderboard_title(board)), title_justify="left")
    names = _name_widths(header, rows)
    for col in header:
        # a narrow terminal squeezes the numbers, not the names: clipped at their end, three runs named
        # alike read `openai_fake-model-…`; beyond their room they lose their middle instead
        table.add_column(
            col,
            justify="left" if col in ("run", "who") else "right",
            no_wrap=col in names,
            min_width=names.get(col),
        )
    for row in rows:
        table.add_row(
            *(
                Text(clip_middle(cell, names[col]) if col in names else cell)
                for col, cell in zip(header, row, strict=True)
            )
        )
    return table


def _name_widths(header: tuple, rows: list[tuple]) -> dict[str, int]:
    """The name columns' widths: their longest cell (or label), up to their room."""
    return {
        col: min(NAME_ROOM[col], max(len(col), *(len(r[i]) for r in rows)))
        for i, col in enumerate(header)
        if col in NAME_ROOM
    }
