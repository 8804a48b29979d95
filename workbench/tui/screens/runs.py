"""The home screen: every run in the store, live while runs progress; filter, sort, open, rename, delete, export.

The table is refreshed by polling the store once a second, and only re-queried when
SQLite's `data_version` says another connection committed (a run writing steps), or when
a run listed in progress lost its writer (a killed process commits nothing to say so).
A run in progress is marked `▶`, whichever process executes it (its run lock's holder).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey

from workbench.service.datasets import dataset_label
from workbench.service.runlist import RunListing, TagError, natural_key
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.help import bound_key
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import clip, clip_middle, display_path, sanitize
from workbench.tui.widgets.tables import RunsTable, clear_rows, clicked_sort, column_room
from workbench.views.cells import counted, fraction, usd

COLUMNS = (
    ("name", "NAME"),
    ("agent", "AGENT / MODEL"),
    ("dataset", "DATA"),
    ("done", "DONE"),
    ("accuracy", "ACC"),
    ("cost", "COST"),
    ("status", "STATE"),
)
SORTS = ("created", "name", "agent", "dataset", "done", "accuracy", "cost", "status")
NAME_MAX, AGENT_MAX, TEXT_MIN = 32, 30, 10  # NAME and AGENT / MODEL: sized to content up to a cap, shrunk to fit


def text_widths(name: int, agent: int, room: int, floors: tuple[int, int] = (TEXT_MIN, TEXT_MIN)) -> tuple[int, int]:
    """Clip widths of NAME and AGENT / MODEL whose longest cells are `name` and `agent` wide, so that both fit in
    `room` cells (what the other columns leave): the wider one gives way first, neither below its floor (TEXT_MIN,
    or its header's width: a column is never narrower than its header, so shrinking it below would not fit)."""
    name, agent = min(name, NAME_MAX), min(agent, AGENT_MAX)
    low_name, low_agent = floors
    while name + agent > room:
        if name > low_name and (name >= agent or agent <= low_agent):
            name -= 1
        elif agent > low_agent:
            agent -= 1
        else:
            break
    return name, agent


def agent_label(row: RunListing) -> str:
    return _agent_words(row) + (f" {_tag_words(row)}" if _tag_words(row) else "")


def _agent_words(row: RunListing) -> str:
    text = row["agent"] + (f" {row['model']}" if row.get("model") else "")
    if row.get("ablation") and row["ablation"] != "full":
        text += f" · {row['ablation']}"
    return text


def _tag_words(row: RunListing) -> str:
    """`[GPT · closed]`: the panel's grouping, where known (scripted runs: once tagged), else ''."""
    if not (row.get("family") or row.get("tier")):
        return ""
    from workbench.views.cells import lineage_cell

    return f"[{lineage_cell(row.get('family'), row.get('tier'))}]"


AGENT_MIN = 6  # cells the agent keeps before its tag gives way


def agent_cell(row: RunListing, width: int) -> str:
    """The AGENT / MODEL cell in `width` cells: what does not fit is elided from the agent and model's middle, and
    the tag stays whole (`oracle · n…ch [GPT · closed]`); clipping the whole cell's middle cut both
    (`heuristic · clo…ristic · open]`). A tag too wide to leave the agent AGENT_MIN cells is left out."""
    from rich.cells import cell_len

    agent, tag = sanitize(_agent_words(row)), sanitize(_tag_words(row))
    if not tag:
        return clip_middle(agent, width)
    if cell_len(agent) + 1 + cell_len(tag) <= width:
        return f"{agent} {tag}"
    room = width - 1 - cell_len(tag)
    if room < AGENT_MIN:
        return clip_middle(agent, width)
    return f"{clip_middle(agent, room)} {tag}"


def matches(row: RunListing, query: str) -> bool:
    if not query:
        return True
    hay = " ".join(
        str(row.get(k) or "") for k in ("name", "agent", "model", "dataset", "ablation", "status", "family", "tier")
    ).lower()
    return all(word in hay for word in query.lower().split())


def sort_key(column: str):
    def key(row: RunListing):
        value = {
            "created": row.get("created_at") or "",
            "agent": agent_label(row),
            "done": row.get("done") or 0,
            "accuracy": row.get("accuracy"),
            "cost": row.get("cost_usd"),
            "name": natural_key(str(row.get("name") or "")),
        }.get(column, row.get(column))
        return (value is None, value if value is not None else 0)

    return key


class RunsScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Runs"
    FOOTER_WIDE_ONLY = frozenset({"runs.watch", "runs.items"})  # in ? help only, below 112 columns
    AUTO_FOCUS = ""  # focus is managed: the table when there are runs, nothing on the welcome panel
    BINDINGS = [
        Binding("n", "new_run", "New run", id="runs.new"),
        Binding("w", "watch", "Live", id="runs.watch"),
        Binding("r", "rename", "Rename", id="runs.rename", show=False),
        Binding("t", "tag", "Tag family / tier", id="runs.tag", show=False),
        Binding("p", "panel", "Panel", id="runs.panel", show=False),
        Binding("R", "relaunch", "Resume / relaunch", id="runs.relaunch", show=False),
        Binding("d", "delete", "Delete", id="runs.delete"),
        Binding("e", "export", "Export", id="runs.export", show=False),
        Binding("s", "sort", "Sort", id="runs.sort", show=False),
        Binding("S", "sort_reverse", "Reverse sort", id="runs.sort_reverse", show=False),
        Binding("slash", "filter", "Filter", id="runs.filter", key_display="/"),
        Binding("b", "builtin", "Built-in run", id="runs.builtin", show=False),  # the welcome panel names it
        Binding("g", "scaling", "Scaling", id="runs.scaling", show=False),
        Binding("space", "mark", "Mark", id="runs.mark", key_display="␣", tooltip="Mark for compare"),
        Binding("c", "compare", "Compare", id="runs.compare"),
        Binding("P", "play", "Play the benchmark", id="runs.play", show=False),
        Binding("escape", "clear_filter", "Clear filter", id="runs.clear_filter", show=False),
        Binding("q", "app.quit", "Quit", id="runs.quit"),
        Binding("i", "items", "Items", id="runs.items"),
    ]

    NEEDS_RUNS = {
        "watch",
        "rename",
        "delete",
        "export",
        "sort",
        "sort_reverse",
        "filter",
        "clear_filter",
        "scaling",
        "mark",
        "compare",
        "relaunch",
    }

    def __init__(self):
        super().__init__()
        self.rows: list[RunListing] = []
        self._first_seen: dict[str, tuple[float, int]] = {}  # a run in progress: when first listed so, and its done
        self.shown: list[str] = []
        self.sort_column = "created"
        self.sort_reverse = False
        self._version: int | None = None
        self._job_states: tuple = ()
        self.marked: list[str] = []  # at most two, oldest first: the runs `c` compares
        self.widths = (NAME_MAX, AGENT_MAX)  # NAME and AGENT / MODEL clip widths, fitted to the table's width
        self._fitted: tuple[int, int] | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="runs-title", classes="title-bar")
        yield Input(placeholder="/ filter runs…", id="runs-filter")
        with Vertical(id="runs-body"):
            yield RunsTable(id="runs-table", cursor_type="row", zebra_stripes=True)
            yield Static("", id="runs-nomatch")
            yield Static("", id="welcome")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in COLUMNS:
            width = 12 if key == "status" else None  # room for "interrupted" and "▶ 12.3/s"
            table.add_column(Text(label + "  "), key=key, width=width)  # room for the sort arrow
        self.reload(force=True)
        self.set_interval(1.0, self.poll, name="runs-poll")
        if self.rows:
            table.focus()

    # ------------------------------------------------------------ data

    def poll(self) -> None:
        self.reload()

    def reload(self, force: bool = False) -> None:
        app = self.app
        store = app.open_store(create=False)
        version = store.data_version() if store is not None else None
        jobs = tuple((name, job.monitor.version) for name, job in app.jobs.items())
        if (
            not force
            and version == self._version
            and jobs == self._job_states
            and store is not None
            and not self._writer_gone(store.path)
        ):
            return
        self._version, self._job_states = version, jobs
        from workbench.service.runlist import runs_table

        self.rows = runs_table(store) if store is not None else []
        self._sample(time.monotonic())
        self.render_rows()

    def _writer_gone(self, store_path: Path) -> bool:
        """Whether a run listed in progress has lost its writer (killed: nothing was committed to say so)."""
        from workbench.service.stores import lock_holder

        return any(r["status"] == "running" and lock_holder(store_path, r["name"]) is None for r in self.rows)

    def _sample(self, now: float) -> None:
        """Remember when each run in progress was first listed so, and its progress then (its rate's start)."""
        running = {r["name"]: r["done"] for r in self.rows if r["status"] == "running"}
        self._first_seen = {name: self._first_seen.get(name, (now, done)) for name, done in running.items()}

    def rate(self, row: RunListing) -> float | None:
        """Episodes per second of a run in progress since this list first saw it so (None before one finished)."""
        seen = self._first_seen.get(row["name"])
        if seen is None:
            return None
        elapsed, done = time.monotonic() - seen[0], row["done"] - seen[1]
        return done / elapsed if elapsed > 0 and done > 0 else None

    def render_rows(self) -> None:
        self._title()
        empty = not self.rows
        self._show_table(not empty)
        welcome = self.query_one("#welcome", Static)
        welcome.display = empty
        if empty:
            welcome.update(self.welcome_text())
            return
        query = self.query_one("#runs-filter", Input).value.strip()
        rows = [r for r in self.rows if matches(r, query)]
        self.query_one("#runs-body").set_class(not rows, "-nomatch")  # the headers, then the note under them
        self.query_one("#runs-nomatch", Static).update(Text(f" no runs match '{query}'", style="dim"))
        rows.sort(key=sort_key(self.sort_column), reverse=self.sort_reverse)
        self._fill(rows)

    def _title(self) -> None:
        """The title bar: the store, and how many runs are in progress."""
        app = self.app
        title = Text.assemble((" AgentHop Workbench", "bold"), "  ·  store: ", display_path(app.store_path))
        active = len({name for name, j in app.jobs.items() if j.in_progress} | set(self._first_seen))
        if active:
            title.append(f"  ·  {counted(active, 'run')} in progress")
        self.query_one("#runs-title", Static).update(title)

    def _show_table(self, shown: bool) -> None:
        """Show the table and its filter (a store with runs) or hide them (the welcome in their place), the focus
        and the footer's keys following."""
        table = self.query_one("#runs-table")
        if shown != table.display:
            self.refresh_bindings()
        if not shown and table.has_focus:
            self.set_focus(None)
        elif shown and self.focused is None:
            self.set_focus(table)
        table.display = shown
        self.query_one("#runs-filter").display = shown

    def welcome_text(self) -> Text:
        """The first screen of an empty store: where the store is (in full: it is where to look for the file) and
        the keys that start something, as bound now (a [keys] remap changes them)."""
        path = str(Path(self.app.store_path).expanduser().resolve())
        app = self.app
        builtin, new = bound_key(app, "runs.builtin", "b"), bound_key(app, "runs.new", "n")
        keys, leave = bound_key(app, "app.help", "question_mark"), bound_key(app, "runs.quit", "q")
        return Text.assemble(
            ("Welcome to the AgentHop Workbench\n\n", "bold"),
            "There are no runs in the store yet.\n",
            "The store lives at ",
            (path, "bold"),
            " (change it with --db or AGENTHOP_DB).\n\n",
            "Press ",
            (builtin, "bold reverse"),
            " to run the built-in benchmark with the heuristic agent\n",
            "  (60 generated items, a few seconds, no model or network needed),\n",
            "or ",
            (new, "bold reverse"),
            " to configure a run: dataset, agent, ablation, caps, slice.\n\n",
            (f"{keys} lists the keys · ctrl+p opens the command palette · {leave} quits", "dim"),
        )

    def _cells(self, row: RunListing) -> list[Any]:
        job = self.app.jobs.get(row["name"])
        status = row["status"]
        # executed here (a campaign's run waiting its turn is not yet), or by another process
        if (job is not None and job.in_progress) or status == "running":
            speed = job.monitor.snapshot().rate if job is not None and job.in_progress else self.rate(row)
            status_text = Text(f"▶ {speed:.1f}/s" if speed else "▶", style="bold")
        else:
            status_text = Text(status)
        acc = fraction(row["accuracy"])
        # a model run without prices is "unpriced" (its tokens are measured), as `runs` and the reports say; "—"
        # is a scripted agent's cost, never measured (the list said "—" for both)
        cost = "unpriced" if row["cost_usd"] is None and row.get("model") else usd(row["cost_usd"])
        name_width, agent_width = self.widths
        # the middle elided: runs named alike up to their end stay told apart at 80 columns
        name = Text(clip_middle(("● " if row["name"] in self.marked else "") + sanitize(row["name"]), name_width))
        return [
            name,
            Text(agent_cell(row, agent_width)),
            Text(clip(sanitize(dataset_label(row["dataset"])), 16)),
            Text(f"{row['done']}/{row['planned']}", justify="right"),
            Text(acc, justify="right"),
            Text(cost, justify="right"),
            status_text,
        ]

    def _fit(self, rows: list[RunListing]) -> bool:
        """Fit NAME and AGENT / MODEL to the table's width, so DONE, ACC and STATE stay in view at 80 columns;
        whether the widths changed (a DataTable column only ever widens: the rows are then rebuilt)."""
        table = self.query_one(DataTable)
        self.widths = (NAME_MAX, AGENT_MAX)
        cells = [self._cells(row) for row in rows]
        content = [max([len(label) + 2, *(c[i].cell_len for c in cells)]) for i, (_, label) in enumerate(COLUMNS)]
        content[-1] = max(content[-1], 12)  # STATE has a fixed width
        room = column_room(table, content[2:], len(rows)) - 2 * table.cell_padding  # NAME and AGENT share the rest
        floors = (max(TEXT_MIN, len(COLUMNS[0][1]) + 2), max(TEXT_MIN, len(COLUMNS[1][1]) + 2))  # header + sort mark
        fitted = text_widths(content[0], content[1], room, floors)
        changed = fitted != self._fitted
        self.widths = self._fitted = fitted
        return changed

    def on_resize(self) -> None:
        if self.rows:
            self.render_rows()  # refits the columns, rebuilding the rows when their widths change

    def _fill(self, rows: list[RunListing]) -> None:
        table = self.query_one(DataTable)
        names = [r["name"] for r in rows]
        self._label_columns()
        refit = self._fit(rows)
        if not refit and names == self.shown:
            for row in rows:
                for (key, _), value in zip(COLUMNS, self._cells(row), strict=True):
                    table.update_cell(row["name"], key, value, update_width=True)
            return
        current, position = self.current_name(), table.cursor_row
        clear_rows(table)
        for row in rows:
            table.add_row(*self._cells(row), key=row["name"])
        self.shown = names
        if current in names:
            table.move_cursor(row=names.index(current), animate=False)
        elif names and position:  # its run is gone (deleted): the same place, or the new last row
            table.move_cursor(row=min(position, len(names) - 1), animate=False)

    def _label_columns(self) -> None:
        table = self.query_one(DataTable)
        arrow = " ▼" if self.sort_reverse else " ▲"
        for key, label in COLUMNS:
            column = table.columns.get(ColumnKey(key))
            if column is not None:
                want = label + (arrow if key == self.sort_column else "  ")
                if str(column.label) != want:
                    column.label = Text(want)
        table.refresh()

    def current_name(self) -> str | None:
        table = self.query_one(DataTable)
        if not self.shown or table.cursor_row is None or not (0 <= table.cursor_row < len(self.shown)):
            return None
        return self.shown[table.cursor_row]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Actions on runs are hidden while the store has none (the welcome panel shows instead)."""
        return not (action in self.NEEDS_RUNS and not self.rows)

    # ------------------------------------------------------------ events

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = str(event.column_key.value)
        column = "created" if key not in SORTS else key
        self.sort_column, self.sort_reverse = clicked_sort(self.sort_column, self.sort_reverse, column)
        self.render_rows()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "runs-filter":
            self.render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    # ------------------------------------------------------------ actions

    def action_filter(self) -> None:
        if self.rows:
            self.query_one("#runs-filter", Input).focus()

    def action_clear_filter(self) -> None:
        box = self.query_one("#runs-filter", Input)
        if box.value:
            box.value = ""
        self.query_one(DataTable).focus()

    def action_sort(self) -> None:
        self.sort_column = SORTS[(SORTS.index(self.sort_column) + 1) % len(SORTS)]
        self.notify(f"sorted by {self.sort_column}", timeout=1.5)
        self.render_rows()

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.render_rows()

    def action_new_run(self) -> None:
        self.app.action_new_run()

    def action_scaling(self) -> None:
        self.app.action_scaling()

    def action_items(self) -> None:
        self.app.action_items()

    def action_play(self) -> None:
        self.app.action_play()

    def action_builtin(self) -> None:
        self.app.action_run_builtin()

    def action_open(self) -> None:
        name = self.current_name()
        if name:
            self.app.open_run(name)

    def action_watch(self) -> None:
        name = self.current_name()
        if name:
            self.app.watch_run(name)

    def _busy(self, name: str, verb: str) -> bool:
        job = self.app.jobs.get(name)
        if job is not None and job.active:
            self.notify(f"'{name}' is running; stop it before you {verb} it", severity="warning")
            return True
        return False

    def action_rename(self) -> None:
        from workbench.service.errors import StoreError
        from workbench.service.stores import rename_run
        from workbench.tui.screens.dialogs import NameModal

        name = self.current_name()
        if not name or self._busy(name, "rename"):
            return
        existing = {r["name"] for r in self.rows}

        def check(value: str) -> str | None:
            if not value:
                return "a name is needed"
            if value != name and value in existing:
                return f"a run named '{value}' exists"
            return None

        def done(new: str | None) -> None:
            if new and new != name:
                try:
                    rename_run(self.app.store, name, new)
                except StoreError as exc:  # deleted, the name taken, or executed by another process meanwhile
                    self.notify(str(exc), severity="error")
                    return
                self.app.jobs.pop(name, None)
                self.marked = [new if m == name else m for m in self.marked]
                self.reload(force=True)
                if new in self.shown:
                    self.query_one(DataTable).move_cursor(row=self.shown.index(new), animate=False)
                self.notify(f"renamed to '{new}'", timeout=2)

        self.app.push_screen(NameModal(f"Rename '{name}'", name, check), done)

    def action_tag(self) -> None:
        """Re-tag the run under the cursor: `FAMILY, TIER` (either may be left empty, `auto` derives it again)."""
        from workbench.service.errors import StoreError
        from workbench.service.families import parse_tag
        from workbench.service.runlist import tag_run
        from workbench.tui.screens.dialogs import NameModal

        name = self.current_name()
        if not name:
            return
        row = next(r for r in self.rows if r["name"] == name)
        value = f"{row.get('family') or ''}, {row.get('tier') or ''}"

        def check(text: str) -> str | None:
            return parse_tag(text)[2]

        def done(text: str | None) -> None:
            if text is None:
                return
            family, tier, _ = parse_tag(text)
            try:
                tagged = tag_run(self.app.store, name, family, tier)
            except (StoreError, TagError) as exc:  # the run was deleted meanwhile, or a bad value
                self.notify(str(exc), severity="error")
                return
            self.reload(force=True)
            self.notify(f"'{name}': family {tagged['family'] or '—'}, tier {tagged['tier'] or '—'}", timeout=2)

        self.app.push_screen(
            NameModal(
                f"Family, tier of '{clip_middle(sanitize(name), 40)}'",
                value,
                check,
                hint="FAMILY, TIER · tiers: closed-frontier, open-frontier, compute-efficient · auto: from the model",
            ),
            done,
        )

    def action_panel(self) -> None:
        """The panel screen over the marked runs; with fewer than two marked, it asks which runs."""
        self.app.open_panel(list(self.marked) if len(self.marked) >= 2 else [])

    def action_delete(self) -> None:
        from workbench.service.errors import StoreError
        from workbench.service.stores import delete_run
        from workbench.tui.screens.dialogs import ConfirmModal

        name = self.current_name()
        if not name or self._busy(name, "delete"):
            return
        row = next(r for r in self.rows if r["name"] == name)

        def done(yes: bool | None) -> None:
            if yes:
                try:
                    delete_run(self.app.store, name)
                except StoreError as exc:  # executed by another process, or deleted, meanwhile
                    self.notify(str(exc), severity="error")
                    return
                self.app.jobs.pop(name, None)
                self.marked = [m for m in self.marked if m != name]
                self.reload(force=True)
                self.notify(f"deleted '{name}'", timeout=2)

        self.app.push_screen(
            ConfirmModal(
                f"Delete run '{name}' and its {row['done']} trajectories (every stored step)? This cannot be undone.",
                "Delete",
                "Delete run",
            ),
            done,
        )

    def action_export(self) -> None:
        name = self.current_name()
        if name:
            self.app.export_run(name)

    def action_relaunch(self) -> None:
        """The launch form with the run's own configuration and name: starting resumes it."""
        name = self.current_name()
        if name:
            self.app.relaunch(name)

    def action_mark(self) -> None:
        """Mark (or unmark) the run under the cursor for `c`; marking a third drops the oldest mark."""
        name = self.current_name()
        if not name:
            return
        if name in self.marked:
            self.marked.remove(name)
        else:
            self.marked = ([*self.marked, name])[-2:]
        self.render_rows()

    def compare_pair(self) -> list[str]:
        """The runs `c` compares: the two marked, or the one marked and the run under the cursor (fewer when
        that is all there is; the palette's picker starts from them)."""
        current = self.current_name()
        pair = list(self.marked)
        if len(pair) == 1 and current and current != pair[0]:
            pair.append(current)
        return pair

    def action_compare(self) -> None:
        """Compare the two marked runs; with one marked, it against the run under the cursor."""
        pair = self.compare_pair()
        if len(pair) != 2:
            self.notify(
                "mark two runs with space (or one, and put the cursor on the other), then press c",
                severity="warning",
                timeout=4,
            )
            return
        self.app.compare_runs(*pair)
