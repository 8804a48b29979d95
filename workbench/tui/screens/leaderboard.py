"""People and models on the items people have played: accuracy with its interval and the four axes, ranked.

The numbers are `workbench.service.reports.leaderboard` and the cells and notes `views.leaderboard.leaderboard_cells` /
`leaderboard_notes`, the same functions `--batch leaderboard` prints, so the two never disagree. A person is one
row over all their sessions; rows covering too few of the played items are listed unranked, saying why. One
board per dataset people have played; `[` and `]` switch between them, enter opens a run (a person's latest
session). The rank, name and who columns stay in view when the table scrolls right.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import sanitize

if TYPE_CHECKING:
    from workbench.service.records.leaderboard import Board


class LeaderboardTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Open run", id="leaderboard.open")]


NAME_COLUMNS = ("run", "who")  # left-aligned, and bold on a person's row


def board_cells(header: tuple, row: tuple, human: bool) -> list[Text]:
    """One leaderboard row's cells: names left-aligned (bold for a person), numbers right-aligned."""
    return [
        Text(
            sanitize(cell),
            justify="left" if col in NAME_COLUMNS else "right",
            style="bold" if human and col in NAME_COLUMNS else "",
        )
        for col, cell in zip(header, row, strict=True)
    ]


class LeaderboardScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Leaderboard"
    BINDINGS = [
        Binding("right_square_bracket", "board(1)", "Next dataset", id="leaderboard.next", key_display="]"),
        Binding("left_square_bracket", "board(-1)", "Previous dataset", id="leaderboard.prev", key_display="["),
        Binding(
            "f5", "reload", "Refresh", id="leaderboard.refresh", key_display="F5", show=False
        ),  # R is relaunch on Runs
        Binding("escape,q", "back", "Back", id="leaderboard.back"),
    ]

    def __init__(self, fingerprint: str | None = None):
        super().__init__()
        self.fingerprint = fingerprint
        self.boards: list[Board] = []
        self.index = 0

    def compose(self) -> ComposeResult:
        from workbench.views.leaderboard import LEADERBOARD_FIXED

        yield Static("", id="leaderboard-title", classes="title-bar")
        yield LeaderboardTable(
            id="leaderboard-table", cursor_type="row", zebra_stripes=True, fixed_columns=LEADERBOARD_FIXED
        )
        yield Static("", id="leaderboard-note")
        yield KeysFooter()

    def on_mount(self) -> None:
        self.action_reload()
        self.query_one(LeaderboardTable).focus()

    def action_reload(self) -> None:
        from workbench.service.reports import leaderboard

        store = self.app.open_store(create=False)
        self.boards = leaderboard(store) if store is not None else []
        fingerprints = [b["fingerprint"] for b in self.boards]
        if self.fingerprint in fingerprints:
            self.index = fingerprints.index(self.fingerprint)
        self.index = min(self.index, max(0, len(self.boards) - 1))
        self.show()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "board":
            return len(self.boards) > 1
        return True

    @property
    def board(self) -> Board | None:
        return self.boards[self.index] if self.boards else None

    def show(self) -> None:
        from workbench.views.leaderboard import leaderboard_cells, leaderboard_notes, leaderboard_title

        table = self.query_one(LeaderboardTable)
        table.clear(columns=True)
        board = self.board
        if board is None:
            self.query_one("#leaderboard-title", Static).update(Text(" Leaderboard"))
            self.query_one("#leaderboard-note", Static).update(
                Text(
                    " Nobody has played yet. Play the benchmark (P on the runs list, or ctrl+p 'Play the benchmark…'):"
                    " the models' runs are then ranked with you on the items you played."
                )
            )
            return
        header, rows = leaderboard_cells(board)
        for col in header:
            table.add_column(Text(col, justify="left" if col in NAME_COLUMNS else "right"), key=col)
        for raw, row in zip(board["rows"], rows, strict=True):
            table.add_row(*board_cells(header, row, raw["human"]), key=raw["run"])
        where = f" · dataset {self.index + 1} of {len(self.boards)} ([ ])" if len(self.boards) > 1 else ""
        self.query_one("#leaderboard-title", Static).update(Text(" " + sanitize(leaderboard_title(board)) + where))
        self.query_one("#leaderboard-note", Static).update(
            Text("\n".join(" " + sanitize(line) for line in leaderboard_notes(board)) + " Enter opens a run.")
        )

    def action_board(self, delta: int) -> None:
        if self.boards:
            self.index = (self.index + delta) % len(self.boards)
            self.fingerprint = self.boards[self.index]["fingerprint"]
            self.show()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        row = next((r for r in self.board["rows"] if r["run"] == event.row_key.value), None) if self.board else None
        if row is not None:
            self.app.open_run(row["runs"][-1])  # a person's latest session

    def action_back(self) -> None:
        self.app.pop_screen()
