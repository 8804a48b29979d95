"""Row-cursor tables whose enter key says what it does on each screen (and can be remapped by id)."""
from __future__ import annotations

from textual.binding import Binding
from textual.widgets import DataTable


class RunsTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Open", id="runs.open")]


class TrajectoryTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Step through", id="run.open")]


class EpisodeTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Follow", id="live.follow")]


class ItemsTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Open item", id="items.open")]


class ItemTrajectoryTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Step through", id="items.open_trajectory")]
