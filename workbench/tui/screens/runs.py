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
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static
from textual.widgets.data_table import ColumnKey

from workbench.service.datasets import dataset_label
from workbench.service.runlist import RunListing, TagError
from workbench.tui.forms import runs as form
from workbench.tui.forms.runs import AGENT_MAX, COLUMNS, NAME_MAX, agent_room, agent_words, tag_words
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.help import bound_key
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import clip, clip_middle, display_path, sanitize
from workbench.tui.widgets.tables import RunsTable, clear_rows, clicked_sort, column_room
from workbench.views.cells import counted, fraction


def agent_cell(row: RunListing, width: int) -> str:
    """The AGENT / MODEL cell in `width` cells: what does not fit is elided from the agent and model's middle, and
    the tag stays whole (`oracle · n…ch [GPT · closed]`), or is left out (`agent_room`)."""
    from rich.cells import cell_len

    agent, tag = sanitize(agent_words(row)), sanitize(tag_words(row))
    room = agent_room(cell_len(agent), cell_len(tag), width) if tag else None
    if room is None:
        return clip_middle(agent, width)
    return f"{clip_middle(agent, room)} {tag}"


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
        self.marked: list[str] = []  # in the order marked: `c` compares two of them, `p` opens a panel of all
        self.widths = (NAME_MAX, AGENT_MAX)  # NAME and AGENT / MODEL clip widths, fitted to the table's width
        self._fitted: tuple | None = None  # the widths and the sort mark the rows were last built with
        self.keys: tuple[str, ...] = ()  # the columns shown: DATA only while the runs' datasets differ

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
        self._first_seen = form.first_seen(self._first_seen, self.rows, now)

    def rate(self, row: RunListing) -> float | None:
        """Episodes per second of a run in progress since this list first saw it so (None before one finished)."""
        return form.rate(self._first_seen.get(row["name"]), row["done"], time.monotonic())

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
        rows = form.view_rows(self.rows, query, self.sort_column, self.sort_reverse)
        self.query_one("#runs-body").set_class(not rows, "-nomatch")  # the headers, then the note under them
        self.query_one("#runs-nomatch", Static).update(Text(f" no runs match '{query}'", style="dim"))
        self._fill(rows)

    def _title(self) -> None:
        """The title bar: the store, and how many runs are in progress."""
        app = self.app
        title = Text.assemble((" AgentHop Workbench", "bold"), "  ·  store: ", display_path(app.store_path))
        active = len({name for name, j in app.jobs.items() if j.in_progress} | set(self._first_seen))
        if active:
            title.append(f"  ·  {counted(active, 'run')} in progress")
        if "dataset" not in self.keys and self.rows:  # one dataset for every run: said once, not on each row
            title.append(f"  ·  every run on {sanitize(dataset_label(self.rows[0]['dataset']))}")
        if self.marked:
            title.append(f"  ·  {len(self.marked)} marked")
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
        # executed by this TUI (a campaign's run waiting its turn is not yet)
        here = job if job is not None and job.in_progress else None
        in_progress = here is not None or row["status"] == "running"  # here, or by another process
        speed = here.monitor.snapshot().rate if here is not None else self.rate(row) if in_progress else None
        status_text = Text(form.status_words(row["status"], in_progress, speed), style="bold" if in_progress else "")
        acc = fraction(row["accuracy"])
        cost = form.cost_words(row)
        name_width, agent_width = self.widths
        # the middle elided: runs named alike up to their end stay told apart at 80 columns
        name = Text(clip_middle(form.name_words(sanitize(row["name"]), row["name"] in self.marked), name_width))
        return [
            name,
            Text(agent_cell(row, agent_width)),
            Text(clip(sanitize(dataset_label(row["dataset"])), 16)),
            Text(f"{row['done']}/{row['planned']}", justify="right"),
            Text(acc, justify="right"),
            Text(cost, justify="right"),
            status_text,
        ]

    def _shown(self, cells: list[Any]) -> list[Any]:
        """A row's cells of the columns shown."""
        return [cell for (key, _), cell in zip(COLUMNS, cells, strict=True) if key in self.keys]

    def _label(self, key: str, label: str) -> str:
        """A column's header: the sort arrow on the column the rows are sorted by (the others take no room for it)."""
        return form.column_label(key, label, self.sort_column, self.sort_reverse)

    def _columns(self) -> bool:
        """Show DATA only while the runs' datasets differ (one dataset is said in the title): the room goes to
        NAME and AGENT / MODEL at 80 columns. Whether the columns changed (the rows are then rebuilt)."""
        keys = form.shown_columns(self.rows)
        if keys == self.keys:
            return False
        self.keys = keys
        table = self.query_one(DataTable)
        table.clear(columns=True)
        for key, label in COLUMNS:
            if key in keys:
                table.add_column(Text(self._label(key, label)), key=key)
        self._title()
        return True

    def _fit(self, rows: list[RunListing]) -> bool:
        """Fit NAME and AGENT / MODEL to the table's width, so DONE, ACC and STATE stay in view at 80 columns;
        whether the widths or the sort mark changed (a DataTable column only ever widens: the rows are then
        rebuilt). Each other column is as wide as its cells and header, the sort arrow only on the sorted one."""
        table = self.query_one(DataTable)
        self.widths = (NAME_MAX, AGENT_MAX)
        cells = [self._shown(self._cells(row)) for row in rows]
        labels = [self._label(key, label) for key, label in COLUMNS if key in self.keys]
        content = [max([len(label), *(c[i].cell_len for c in cells)]) for i, label in enumerate(labels)]
        room = column_room(table, content[2:], len(rows)) - 2 * table.cell_padding  # NAME and AGENT share the rest
        fitted = form.fitted_widths(content, labels, room)
        changed = (fitted, self.sort_column, self.sort_reverse) != self._fitted
        self.widths = fitted
        self._fitted = (fitted, self.sort_column, self.sort_reverse)
        return changed

    def on_resize(self) -> None:
        if self.rows:
            self.render_rows()  # refits the columns, rebuilding the rows when their widths change

    def _fill(self, rows: list[RunListing]) -> None:
        table = self.query_one(DataTable)
        names = [r["name"] for r in rows]
        current, position = self.current_name(), table.cursor_row  # before the columns change (the cursor goes)
        columns = self._columns()
        self._label_columns()
        refit = self._fit(rows)
        if not (refit or columns) and names == self.shown:
            for row in rows:
                for key, value in zip(self.keys, self._shown(self._cells(row)), strict=True):
                    table.update_cell(row["name"], key, value, update_width=True)
            return
        clear_rows(table)
        for row in rows:
            table.add_row(*self._shown(self._cells(row)), key=row["name"])
        self.shown = names
        if current in names:
            table.move_cursor(row=names.index(current), animate=False)
        elif names and position:  # its run is gone (deleted): the same place, or the new last row
            table.move_cursor(row=min(position, len(names) - 1), animate=False)

    def _label_columns(self) -> None:
        table = self.query_one(DataTable)
        for key, label in COLUMNS:
            column = table.columns.get(ColumnKey(key))
            if column is not None:
                want = self._label(key, label)
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
        column = form.header_sort(key)
        self.sort_column, self.sort_reverse = clicked_sort(self.sort_column, self.sort_reverse, column)
        self.render_rows()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "runs-filter":
            self.render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(DataTable).focus()

    def on_key(self, event: events.Key) -> None:
        """↓ in the filter goes to the list, as enter does (the box has no ↓ of its own)."""
        if event.key == "down" and self.focused is self.query_one("#runs-filter"):
            event.stop()
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
        self.sort_column = form.next_sort(self.sort_column)
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
            return form.rename_problem(value, name, existing)

        def done(new: str | None) -> None:
            if new and new != name:
                try:
                    rename_run(self.app.store, name, new)
                except StoreError as exc:  # deleted, the name taken, or executed by another process meanwhile
                    self.notify(str(exc), severity="error")
                    return
                self.app.jobs.pop(name, None)
                self.marked = form.renamed(self.marked, name, new)
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
        value = form.tag_value(row)

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
        from workbench.service.stores import delete_run, stored_trajectories
        from workbench.tui.screens.dialogs import ConfirmModal
        from workbench.views.cells import held_trajectories

        name = self.current_name()
        if not name or self._busy(name, "delete"):
            return
        try:
            held = held_trajectories(*stored_trajectories(self.app.store, name))
        except StoreError as exc:  # deleted meanwhile
            self.notify(str(exc), severity="error")
            return

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
                f"Delete run '{name}' and its {held} (every stored step)? This cannot be undone.",
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
        """Mark (or unmark) the run under the cursor: any number of runs, for the panel (`p`) or two for `c`."""
        name = self.current_name()
        if not name:
            return
        self.marked = form.toggled(self.marked, name)
        self.render_rows()

    def compare_pair(self) -> list[str]:
        """The runs `c` compares (`forms.runs.compare_pair`), from the marks and the run under the cursor."""
        return form.compare_pair(self.marked, self.current_name())

    def action_compare(self) -> None:
        """Compare the two marked runs; with one marked, it against the run under the cursor; with more marked, say
        that Compare takes two (and that the panel takes them all)."""
        pair = self.compare_pair()
        unmark, panel = bound_key(self.app, "runs.mark", "space"), bound_key(self.app, "runs.panel", "p")
        refusal = form.compare_refusal(pair, unmark, panel)
        if refusal:
            self.notify(refusal, severity="warning", timeout=5 if len(pair) > 2 else 4)
            return
        self.app.compare_runs(*pair)
