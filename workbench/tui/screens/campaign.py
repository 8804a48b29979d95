"""A campaign file on screen: its plan (each run with its model, endpoint, episodes and estimated cost; the totals),
then, once started (ctrl+r), one line per run with its progress and the campaign's totals (runs, episodes, tokens,
cost, time left); enter on a run opens it on the Live screen. Not started here, the rows follow the store (another
process may be running the campaign).

The file is read, planned and estimated by `workbench.service.campaign` (as `--batch campaign run` reads it) on a
thread; a problem in the file is shown as the CLI says it (file, line, key) and nothing can be started. On a store
made by `campaign run FILE --shard I/N` the screen plans and runs that shard (said above the rows), never the whole
campaign into it; a store holding the campaign in parts that do not go together is refused.
"""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Static

from workbench.tui.forms.campaign import NUMERIC, plan_line, row_cells, running_line, shard_note
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import sanitize

COLUMNS = (
    ("run", "RUN"),
    ("model", "MODEL"),
    ("endpoint", "ENDPOINT"),
    ("episodes", "EPISODES"),
    ("done", "DONE"),
    ("cost", "EST. COST"),
    ("status", "STATUS"),
)
REFRESH_HZ = 4
STORE_POLL_S = 1.0  # how often the store is read for a campaign this session does not execute


class CampaignTable(DataTable):
    BINDINGS = [Binding("enter", "select_cursor", "Watch run", id="campaign.watch")]


class CampaignScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Campaign"
    BINDINGS = [
        Binding("ctrl+r", "start", "Start", id="campaign.start"),
        Binding("X", "cancel", "Interrupt", id="campaign.cancel", show=False),
        Binding("f5", "reload", "Reload the file", id="campaign.reload", key_display="F5"),
        Binding("escape,q", "back", "Back", id="campaign.back"),
    ]

    def __init__(self, path: Path):
        super().__init__()
        self.path = Path(path)
        self.plan: Any = None
        self.states: list[Any] = []
        self.previews: list[Any] = []
        self.error: str | None = None
        self._shown: tuple | None = None  # what the rows show (the plan, each run's progress)
        self._polled = 0.0  # when the store was last read for the runs' progress (no job of this session)

    def compose(self) -> ComposeResult:
        yield Static(f" Campaign · {sanitize(str(self.path))}", id="campaign-title", classes="title-bar")
        yield Static("reading the file…", id="campaign-totals")
        yield Static("", id="campaign-error")
        yield CampaignTable(id="campaign-runs", cursor_type="row")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(DataTable)
        for key, label in COLUMNS:
            table.add_column(label, key=key)
        self.action_reload()
        self.set_interval(1 / REFRESH_HZ, self.refresh_progress, name="campaign-refresh")
        table.focus()

    # ------------------------------------------------------------ the plan

    def action_reload(self, start: bool = False) -> None:
        self.run_worker(partial(self._load, start), thread=True, group="campaign", name="campaign-plan", exclusive=True)

    def _load(self, start: bool = False) -> None:
        """Read, plan and estimate the file (on a thread: it opens the dataset and reads the store); with `start`,
        then start the campaign from what the store holds now."""
        from workbench.service.campaign import (
            CampaignFileError,
            campaign_status,
            check_against_store,
            check_models,
            load_campaign,
            plan_campaign,
            store_shard,
        )
        from workbench.service.campaign.preview import preview
        from workbench.service.errors import (
            ConfigError,
            DatasetError,
            InvalidSlice,
            LocalModelUnavailable,
            StoreError,
        )
        from workbench.service.execution import parse_shard
        from workbench.service.launch import LaunchError
        from workbench.service.stores import open_store

        app = self.app
        problems = (CampaignFileError, LaunchError, DatasetError, InvalidSlice, StoreError, LookupError)
        refusal: str | None = None
        try:
            plan = plan_campaign(load_campaign(self.path))
            check_models(plan)  # a key missing: said here, before anything can start
            corpus = app.corpora.corpus(plan.campaign.data)
            store = open_store(app.store_path, readonly=True) if app.store_path.exists() else None
            try:
                shard = store_shard(store, plan) if store is not None else None  # StoreError: shards mixed
                if shard is not None:  # a shard's store: its shard planned, as `campaign run FILE --shard I/N`
                    plan = plan_campaign(plan.campaign, shard=parse_shard(shard))
                states = campaign_status(store, plan, corpus)
                if start and store is not None:  # as `campaign run`: refused before anything runs
                    try:
                        check_against_store(store, plan, corpus.fingerprint)
                    except StoreError as exc:  # a run another process executes, or stored with other settings
                        refusal = str(exc)
            finally:
                if store is not None:
                    store.close()
            previews = preview(plan, corpus, app.store_path)
        except (*problems, ConfigError, LocalModelUnavailable) as exc:
            app.call_from_thread(self._failed, str(exc))
            return
        app.call_from_thread(self._planned, plan, states, previews)
        if refusal is not None:
            app.call_from_thread(self.notify, f"not started: {refusal}", severity="error", timeout=8)
        elif start:
            app.call_from_thread(self._start)

    def _failed(self, message: str) -> None:
        self.error = message
        self.plan = None
        self.query_one("#campaign-error", Static).update(Text(message, style="bold"))
        self.query_one("#campaign-totals", Static).update("nothing can be started: see above, then F5")

    def _planned(self, plan: Any, states: list[Any], previews: list[Any]) -> None:
        self.plan, self.states, self.previews, self.error = plan, states, previews, None
        note = shard_note(str(plan.shard), self.path, self.app.store_path) if plan.shard is not None else ""
        self.query_one("#campaign-error", Static).update(Text(sanitize(note)))
        self._draw_rows()
        self.query_one("#campaign-totals", Static).update(Text(" " + plan_line(self.previews)))

    def _draw_rows(self) -> None:
        """The plan's rows with each run's progress; redrawn only when the progress changed."""
        progress = self._progress()
        shown = (id(self.previews), id(self.states), tuple(sorted(progress.items())))
        if shown == self._shown:
            return
        self._shown = shown
        table = self.query_one(DataTable)
        cursor = table.cursor_row
        table.clear()
        for p in self.previews:
            cells = row_cells(p, progress.get(p.name) or self._stored(p))
            table.add_row(
                *(
                    Text(sanitize(cell), justify="right" if key in NUMERIC else "left")
                    for (key, _), cell in zip(COLUMNS, cells, strict=True)
                ),
                key=p.name,
            )
        if self.previews:
            table.move_cursor(row=min(cursor, len(self.previews) - 1))

    def _stored(self, preview: Any) -> tuple[int, int, str]:
        """A run's progress as the store last read holds it (done, planned, status)."""
        state = next((s for s in self.states if s.name == preview.name), None)
        if state is None:
            return preview.already_done, preview.episodes, "not started"
        return state.done, state.planned, state.status

    # ------------------------------------------------------------ running

    @property
    def job(self) -> Any:
        return self.app.campaigns.get(self.plan.campaign.name) if self.plan is not None else None

    def _progress(self) -> dict[str, tuple[int, int, str]]:
        job = self.job
        if job is None:
            return {}
        return {name: (p.done, p.planned, p.status) for name, p in job.tracker.runs.items()}

    def refresh_progress(self) -> None:
        job = self.job
        if job is None:
            self._poll_store()
            return
        self._draw_rows()
        line = running_line(job.name, job.tracker.totals(), job.status, job.message)
        self.query_one("#campaign-totals", Static).update(Text(" " + sanitize(line)))

    def _poll_store(self) -> None:
        """No job of this session: the runs' progress read from the store (another process may be running the
        campaign), at most every STORE_POLL_S, on a thread."""
        now = time.monotonic()
        if self.plan is None or now - self._polled < STORE_POLL_S or all(s.finished for s in self.states):
            return
        self._polled = now
        self.run_worker(
            partial(self._read_states, self.plan), thread=True, group="campaign-store", name="campaign-store"
        )

    def _read_states(self, plan: Any) -> None:
        from workbench.service.campaign import campaign_status
        from workbench.service.errors import DatasetError, StoreError
        from workbench.service.stores import open_store

        app = self.app
        if not app.store_path.exists():
            return
        try:
            corpus = app.corpora.corpus(plan.campaign.data)
            store = open_store(app.store_path, readonly=True)
            try:
                states = campaign_status(store, plan, corpus)
            finally:
                store.close()
        except (DatasetError, StoreError, LookupError):  # LookupError: the corpus is unavailable
            return  # said when the file was read; the rows keep what they show
        app.call_from_thread(self._states_read, plan, states)

    def _states_read(self, plan: Any, states: list[Any]) -> None:
        if not self.is_attached or plan is not self.plan or self.job is not None:
            return  # the screen left, the file was read again, or the campaign started here meanwhile
        if [(s.done, s.planned, s.status) for s in states] != [(s.done, s.planned, s.status) for s in self.states]:
            self.states = states
            self._draw_rows()

    def action_start(self) -> None:
        """Start the campaign (or resume it) from the store as it is now: the file and the store are read again."""
        job = self.job
        if job is not None and job.active:
            self.notify(f"campaign '{job.name}' is running", severity="warning")
            return
        self.action_reload(start=True)

    def _start(self) -> None:
        if self.plan is None:
            self.notify(self.error or "the file could not be read", severity="warning")
            return
        self._shown = None
        self.app.start_campaign(self.plan, self.states)
        self.refresh_progress()

    def action_cancel(self) -> None:
        job = self.job
        if job is not None and job.active:
            job.cancel()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """A run of this session, or one another process is executing (its lock held), on the Live screen; one
        finished before, its trajectories."""
        from workbench.service.stores import lock_holder

        name = event.row_key.value
        if name is None:
            return
        if name in self.app.jobs or lock_holder(self.app.store_path, name) is not None:
            self.app.watch_run(name)
        elif name in self.app.run_names():
            self.app.open_run(name)
        else:
            self.notify(f"'{name}' is not started yet: ctrl+r starts the campaign", severity="warning")

    def action_back(self) -> None:
        self.app.pop_screen()
