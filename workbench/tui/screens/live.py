"""The live run: progress, running accuracy, throughput, ETA, cost, terminations, errors; one row per episode in
flight with budget meters, then the episodes that finished last (marked, still followable after the run ends);
enter on a row follows that episode's transcript as it grows, `s` opens the stepper on it.

Any run in the store can be watched, whoever executes it. A run this TUI launched is followed through its
`RunMonitor` (the runner's events); any other — `--batch` over SSH, `serve-mcp`, another TUI, a campaign — through a
`StoreMonitor`, which reads what the run's writer commits (`watch_stored_run`, the entry point other screens call).
The runner never touches this screen: a 10 Hz timer polls the source, takes a snapshot and redraws only when
something changed, however many workers there are.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, ProgressBar, Static
from textual.widgets.data_table import ColumnKey

from sandbox.records import recorded_limits
from workbench.tui.host import WorkbenchNode
from workbench.tui.monitor import EpisodeRow, LiveSource, Snapshot
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.meters import LEVEL_VARIABLE, level, level_style, meter_text
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.tui.widgets.tables import EpisodeTable, clear_rows, column_room
from workbench.tui.widgets.transcript import TranscriptView, build_entries
from workbench.views.cells import duration, fraction, usd

REFRESH_HZ = 10
BARS = (10, 8, 8)  # meter bar widths of POINTS, TURNS, TOKENS; NARROW_BARS below WIDE columns, for LAST CALL's sake
NARROW_BARS, WIDE = (5, 4, 4), 100
COLUMNS = (
    ("item", "ITEM"),
    ("turn", "TURN"),
    ("points", "POINTS"),
    ("turns", "TURNS"),
    ("tokens", "TOKENS"),
    ("call", "LAST CALL"),
)
STATUS = {
    "starting": "… starting",
    "running": "▶ running",
    "done": "✓ done",
    "interrupted": "■ interrupted",
    "failed": "✗ failed",
}


def stats_line(s: Snapshot) -> Text:
    acc = fraction(s.accuracy)
    rate = "—" if s.rate is None else f"{s.rate:.1f} ep/s"
    cost = usd(s.cost_usd)
    eta = "—" if s.status != "running" else duration(s.eta_s)
    return Text(
        f" {s.done}/{s.planned}  ·  acc {acc}  ·  {rate}  ·  ETA {eta}  ·  elapsed {duration(s.elapsed_s)}"
        f"  ·  cost {cost}"
    )


def last_call_room(table: DataTable, rows: list[list[Text]]) -> int:
    """The LAST CALL column's width: what the other columns leave of the table in view (scrollbar too), 8 to 48."""
    content = [max([len(label), *(row[i].cell_len for row in rows)]) for i, (_, label) in enumerate(COLUMNS[:-1])]
    return min(48, max(8, column_room(table, content)))


def last_call_text(e: EpisodeRow) -> Text:
    """The LAST CALL cell: the episode's latest call, or how it finished and whether it was right."""
    if not e.finished:
        return Text(sanitize(e.last_call))
    verdict = "correct ✓" if e.correct else "wrong ✗"
    return Text(f"finished: {sanitize(e.termination or '?')}, {verdict}", style="dim")


class LiveScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Live run"
    BINDINGS = [
        Binding("o", "open_run", "Open run", id="live.open"),
        Binding("s", "stepper", "Stepper", id="live.stepper", show=False),
        Binding("x", "stop", "Stop", id="live.stop"),
        Binding("X", "cancel", "Interrupt now", id="live.cancel", show=False),
        Binding("tab", "app.focus_next", "Next pane", id="live.focus_next", show=False),
        Binding("escape,q", "back", "Back", id="live.back"),
    ]

    def __init__(self, monitor: LiveSource, job=None):
        super().__init__()
        self.monitor = monitor
        self.job = job
        self.caps = monitor.caps
        self._version = -1
        self._status: str | None = None
        self.shown: list[tuple[str, int]] = []
        self._room = 0  # LAST CALL's width, fitted to the table's
        self._built_rows: dict[tuple[str, int], tuple[Any, list[Text]]] = {}  # key -> (what it was built from, row)
        self._meters: dict[tuple[int, int, int, str, Style], Text] = {}
        self.follow_key: tuple[str, int] | None = None
        self._follow_count = 0
        self._follow_started: float | None = None
        self._follow_done = False

    def compose(self) -> ComposeResult:
        yield Static("", id="live-title", classes="title-bar")
        with Horizontal(id="live-progress-row"):
            yield ProgressBar(total=1, show_eta=False, show_percentage=True, id="live-progress")
            yield Static("", id="live-stats")
        yield Static("", id="live-terminations")
        yield Static("", id="live-errors")
        # the meters keep their ok / warning / error colours on the selected row too
        yield EpisodeTable(id="live-episodes", cursor_type="row", cursor_foreground_priority="renderable")
        yield Static(" enter on an episode follows its transcript", id="follow-title")
        yield TranscriptView(id="live-transcript", placeholder="no episode followed")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.refresh_view()
        self.set_interval(1 / REFRESH_HZ, self.refresh_view, name="live-refresh")
        table.focus()

    # ------------------------------------------------------------ drawing

    def refresh_view(self) -> None:
        self.monitor.poll()
        if self.monitor.version != self._version:
            snap = self.monitor.snapshot()
            self._version = snap.version
            self._draw(snap)
        self._follow()

    def _draw(self, s: Snapshot) -> None:
        title = Text.assemble((f" {sanitize(s.name)}", "bold"), "  ", STATUS.get(s.status, s.status))
        if s.message:
            title.append((": " if s.status == "starting" else "  ") + sanitize(s.message))
        if s.status != self._status:
            self._status = s.status
            self.refresh_bindings()  # x / X only while the run is active
        self.query_one("#live-title", Static).update(title)
        bar = self.query_one(ProgressBar)
        bar.update(total=max(1, s.planned), progress=s.done)
        self.query_one("#live-stats", Static).update(stats_line(s))
        self.query_one("#live-terminations", Static).update(
            Text(" " + " · ".join(f"{k} {v}" for k, v in s.terminations.items()))
        )
        errors = self.query_one("#live-errors", Static)
        errors.display = bool(s.errors)
        if s.errors:
            errors.update(
                Text(f" errors ({len(s.errors)} shown): " + " | ".join(clip(sanitize(e), 60) for e in s.errors))
            )
        self._rows(s)

    def _rows(self, s: Snapshot) -> None:
        table = self.query_one(DataTable)
        episodes = s.episodes + s.finished
        keys = [e.key for e in episodes]
        current = self.current_key()
        bars = BARS if (table.size.width or self.app.size.width) >= WIDE else NARROW_BARS
        limits = recorded_limits(self.caps)
        rows, changed = self._built(episodes, limits, bars)
        room = last_call_room(table, rows)
        if keys == self.shown and room == self._room:
            for row, again in zip(rows, changed, strict=True):
                if again:
                    row[-1].truncate(room, overflow="ellipsis")
            self._update_rows(table, episodes, rows, changed)
            return
        if room != self._room:  # the rows are all built again, each LAST CALL cut to the new room
            self._built_rows.clear()
            rows, changed = self._built(episodes, limits, bars)
        for row, again in zip(rows, changed, strict=True):
            if again:
                row[-1].truncate(room, overflow="ellipsis")
        self._room = room
        clear_rows(table)
        for e, row in zip(episodes, rows, strict=True):
            table.add_row(*row, key=self._row_key(e.key))
        self.shown = keys
        if current in keys:
            table.move_cursor(row=keys.index(current), animate=False)

    def _built(
        self, episodes: tuple[EpisodeRow, ...], limits: tuple[int, int, int], bars: tuple[int, int, int]
    ) -> tuple[list[list[Text]], list[bool]]:
        """Each episode's row, and whether it was built again: only an episode that moved since its row was built
        (or the bars' width, or the theme) is. Over 256 episodes, most rows of a refresh are the last one's."""
        styles = {lvl: level_style(self.app, lvl) for lvl in LEVEL_VARIABLE}  # once a draw, not once a cell
        rows, changed, built = [], [], {}
        for e in episodes:
            source = (e, bars, self.app.theme)
            kept = self._built_rows.get(e.key)
            if kept is None or kept[0] != source:
                kept = (source, self._cells(e, limits, bars, styles))
            built[e.key] = kept
            rows.append(kept[1])
            changed.append(kept is not self._built_rows.get(e.key))
        self._built_rows = built
        return rows, changed

    def _update_rows(
        self, table: DataTable, episodes: tuple[EpisodeRow, ...], rows: list[list[Text]], changed: list[bool]
    ) -> None:
        """The same episodes in the same order: the cells of those that moved updated in place (the cursor and
        scroll stay). A column's width is asked to follow only a cell as wide as it or wider: Textual measures
        the whole column again for a narrower one, which over 256 rows made each refresh take seconds."""
        for e, row, again in zip(episodes, rows, changed, strict=True):
            if not again:
                continue
            for (col, _), value in zip(COLUMNS, row, strict=True):
                column = table.columns.get(ColumnKey(col))
                wider = column is None or value.cell_len >= column.content_width
                table.update_cell(self._row_key(e.key), col, value, update_width=wider)

    def _cells(
        self, e: EpisodeRow, limits: tuple[int, int, int], bars: tuple[int, int, int], styles: dict[str, Style]
    ) -> list[Text]:
        """An episode's row: item, turn, the points, turns and tokens meters against the run's `limits` (coloured
        by `styles`, per level), the last call (or how it finished)."""
        budget, max_turns, max_tokens = limits
        return [
            Text(f"{sanitize(e.key[0])}" + (f" r{e.key[1]}" if e.key[1] else ""), style="dim" if e.finished else ""),
            Text(str(e.turn), justify="right"),
            self._meter(e.points_used, budget, bars[0], "", styles),
            self._meter(e.turn, max_turns, bars[1], "", styles),
            self._meter(e.tokens, max_tokens, bars[2], "tokens", styles)
            if self.monitor.tokens_measured
            else Text("— not measured", style="dim"),
            last_call_text(e),
        ]

    def _meter(self, used: int, cap: int, width: int, unit: str, styles: dict[str, Style]) -> Text:
        """A meter cell; the same reading is built once and shared by the rows showing it (cells are not changed
        once built: only LAST CALL is cut, and it is never a meter)."""
        style = styles[level(used, cap)]
        key = (used, cap, width, unit, style)
        text = self._meters.get(key)
        if text is None:
            if len(self._meters) > 4096:
                self._meters.clear()
            text = self._meters[key] = meter_text(used, cap, width, unit, style=style)
        return text

    def on_unmount(self) -> None:
        self.monitor.close()

    def on_resize(self) -> None:
        self._version = -1  # redraw: the columns are fitted to the new width
        self.refresh_view()

    @staticmethod
    def _row_key(key: tuple[str, int]) -> str:
        return f"{key[0]}\x1f{key[1]}"

    def current_key(self) -> tuple[str, int] | None:
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row is None or not (0 <= table.cursor_row < len(self.shown)):
            return None
        return self.shown[table.cursor_row]

    # ------------------------------------------------------------ following one episode

    def _follow(self) -> None:
        key = self.follow_key
        if key is None or self._follow_done:
            return
        got = self.monitor.steps(key, self._follow_count)
        if got is None:
            return
        steps, finished, started = got
        view = self.query_one("#live-transcript", TranscriptView)
        if started != self._follow_started:  # a new attempt: start over
            self._follow_started = started
            steps = (self.monitor.steps(key, 0) or ([], finished, started))[0]
            self._follow_count = 0
            view.set_entries([], cursor=0)
        if steps:
            self._append_steps(view, steps)
        if finished:
            self._follow_done = True
            correct, termination = self.monitor.episode_outcome(key)
            verdict = "correct ✓" if correct else "wrong ✗"
            self.query_one("#follow-title", Static).update(
                Text(f" following {key[0]} r{key[1]} · finished: {termination}, {verdict}")
            )

    def _append_steps(self, view: TranscriptView, steps: list[Any]) -> None:
        """The followed episode's new steps at the transcript's end (a turn already headed there is not headed
        again)."""
        prev_turn = view.entries[-1].turn if self._follow_count and view.entries else None
        entries = build_entries(steps)
        if prev_turn is not None and entries and entries[0].kind == "turn" and entries[0].turn == prev_turn:
            entries = entries[1:]
        view.append_entries(entries)
        self._follow_count += len(steps)

    def action_follow(self) -> None:
        key = self.current_key()
        if key is None:
            return
        self.follow_key = key
        self.monitor.keep(key)
        self._follow_count = 0
        self._follow_started = None
        self._follow_done = False
        self.query_one("#live-transcript", TranscriptView).set_entries([], cursor=0)
        self.query_one("#follow-title", Static).update(Text(f" following {key[0]} r{key[1]} (live)"))
        self._follow()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_follow()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        """The cursor follows an episode's key as rows come and go; the monitor keeps that episode listed."""
        self.monitor.keep(self.current_key(), self.follow_key)

    # ------------------------------------------------------------ actions

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Stopping belongs to a run in progress: hidden (and inert) once it has ended."""
        if action in ("stop", "cancel"):
            return self.job is not None and self.job.active
        return True

    def action_open_run(self) -> None:
        self.app.open_run(self.monitor.name)

    def action_stepper(self) -> None:
        """The stepper on the episode under the cursor: its trajectory as stored, in progress or finished."""
        key = self.current_key()
        if key is not None:
            self.app.step_episode(self.monitor.name, key)

    def action_stop(self) -> None:
        if self.job is not None and self.job.active:
            self.job.stop()
            self.notify("stopping: episodes in flight finish, no new ones start", timeout=3)

    def action_cancel(self) -> None:
        if self.job is not None and self.job.active:
            self.job.cancel()
            self.notify("interrupting now: the run stays resumable", timeout=3)

    def action_back(self) -> None:
        self.app.pop_screen()


def watch_stored_run(store_path: Path | str, name: str) -> LiveScreen:
    """The Live screen on any run in the store at `store_path`, read from what its writer commits (a run another
    process executes, or one that has ended); StoreError when there is no store or no such run."""
    from workbench.tui.store_monitor import StoreMonitor

    return LiveScreen(StoreMonitor(store_path, name))
