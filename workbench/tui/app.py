"""The Textual workbench: `agenthop-tui [--db PATH] [--theme NAME]`.

Startup stays light (first paint well under a second): the store is opened, the runs
list drawn; the sandbox is imported only when a run is launched and a corpus only
when the stepper needs an item. litellm is never imported here.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.binding import Binding

import themes
from workbench.service import paths
from workbench.tui import config as config_file
from workbench.tui.commands import WorkbenchCommands
from workbench.tui.corpora import CorpusCache
from workbench.views.cells import fraction

if TYPE_CHECKING:
    from workbench.tui.forms.launch_fields import LaunchFields
    from workbench.tui.jobs import CampaignJob, RunJob, StudyJob

# The cyclic garbage collector's first threshold in the TUI's process (Python's default: 700 allocations). Once
# Textual's and Rich's bounded caches of strips, segments and styles have filled (~300,000 long-lived objects), each
# screen promotes enough objects that at the default a full collection over all of them ran every few key presses,
# each a freeze of up to ~0.1 s (bench/tui.py: stepping turn by turn froze up to 0.09 s, 0.02 s with this). With a
# larger first threshold most of a screen's objects die young, before they are ever promoted.
GC_FIRST_THRESHOLD = 10_000


class WorkbenchApp(App[int]):
    TITLE = "AgentHop Workbench"
    CSS_PATH = [themes.STYLESHEETS_DIR / name for name in themes.STYLESHEETS]
    COMMANDS = App.COMMANDS | {WorkbenchCommands}
    # screen classes for the stylesheets: -narrow below 112 columns (forms and panels stack), else -wide;
    # -short below 29 rows, -medium below 41, else -tall (the launch form scrolls its fields when short)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (112, "-wide")]
    VERTICAL_BREAKPOINTS = [(0, "-short"), (29, "-medium"), (41, "-tall")]
    BINDINGS = [
        Binding("question_mark", "help", "Help", id="app.help", key_display="?"),
        Binding("T", "toggle_theme", "Light/dark", id="app.toggle_theme", show=False),
    ]

    def __init__(
        self,
        store_path: Path | None = None,
        cache_dir: Path | None = None,
        config_path: Path | None = None,
        theme: str | None = None,
        keymap: dict[str, str] | None = None,
        warnings: list[str] | None = None,
        home: bool = True,
        state_path: Path | None = None,
    ):
        super().__init__()
        self.store_path = Path(store_path) if store_path else paths.store_path()
        self.cache_dir = Path(cache_dir) if cache_dir else paths.cache_dir()
        self.config_path = Path(config_path) if config_path else paths.config_path()
        self.state_path = Path(state_path) if state_path else paths.state_path()
        for t in themes.THEMES:
            self.register_theme(t)
        self.theme = theme or themes.DEFAULT_THEME
        self._remembered_theme = self.theme
        self.keymap = dict(keymap or {})
        if keymap:
            self.set_keymap(keymap)
        self.startup_warnings = list(warnings or [])
        self.jobs: dict[str, RunJob] = {}
        self.studies: dict[str, StudyJob] = {}  # scaling studies launched from the Scaling screen
        self.campaigns: dict[str, CampaignJob] = {}  # campaigns started from their screen (their runs are in jobs)
        self.corpora = CorpusCache(self.cache_dir)
        self._store = None
        self.home = home
        self.player: str | None = None  # who plays (asked once per app session, then remembered)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity="information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every toast as plain text: they carry run names, dataset paths and provider error text, and Textual
        markup in them would be dropped ("[learning]") or raise ("[/INST]"). No notification uses markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)

    def action_help_quit(self) -> None:
        """ctrl+c's "how to quit" hint, in plain words: Textual writes it in markup ("Press [b]q[/b] …"), which
        `notify` here shows as typed."""
        for key, active in self.active_bindings.items():
            if active.binding.action in ("quit", "app.quit"):
                self.notify(f"Press {key} to quit the app", title="Do you want to quit?")
                return

    # ------------------------------------------------------------ store

    def open_store(self, create: bool = True):
        """The UI thread's store connection; None while no store file exists and `create` is False. A store this
        process cannot write is opened for reading: every screen reads it, and each write says why it cannot."""
        if self._store is None and (create or self.store_path.exists()):
            from workbench.service.stores import open_store_to_read

            self._store = open_store_to_read(self.store_path)
        return self._store

    @property
    def store(self):
        return self.open_store(create=True)

    def run_names(self) -> list[str]:
        store = self.open_store(create=False)
        return [r["name"] for r in store.runs()] if store is not None else []

    def runs_in_progress(self) -> set[str]:
        """The runs some process on this machine executes now (each run's lock holder), this session's included."""
        from workbench.service.stores import lock_holder

        store = self.open_store(create=False)
        if store is None:
            return set()
        running = [r["name"] for r in store.runs() if r["status"] == "running"]
        return {name for name in running if lock_holder(self.store_path, name) is not None}

    # ------------------------------------------------------------ lifecycle

    def on_mount(self) -> None:
        gc.set_threshold(GC_FIRST_THRESHOLD, *gc.get_threshold()[1:])
        self.theme_changed_signal.subscribe(self, self._remember_theme)
        for warning in self.startup_warnings:
            self.notify(warning, title="config", severity="warning", timeout=8)
        if self.keymap:
            self.run_worker(self._check_keymap, thread=True, name="check-keymap", exit_on_error=False)
        if self.store_path.exists():
            self.run_worker(self._relabel, thread=True, name="relabel", exit_on_error=False)
        if self.home:
            from workbench.tui.screens.runs import RunsScreen

            self.push_screen(RunsScreen())

    def _check_keymap(self) -> None:
        """Warn about [keys] entries that name no binding (on a thread: it reads the workbench's source)."""
        warning = config_file.unknown_keys(self.keymap, config_file.binding_ids())
        if warning:
            self.call_from_thread(self.notify, warning, title="config", severity="warning", timeout=10)

    def _relabel(self) -> None:
        """Runs stored under older label rules get their section recall recomputed from their reads, and runs
        stored before hops were recorded their reads' hops, before the screens compare them with new runs (on a
        thread: it opens each such run's dataset). The screens follow the store's changes on their own (a run's
        progress includes both rules); the notes say what happened."""
        from workbench.service.relabel import bring_current, run_corpus

        notes = bring_current(self.store_path, None, lambda run: run_corpus(run, self.cache_dir))
        for note in notes:
            self.call_from_thread(self.notify, note, title="stored runs brought current", timeout=10)

    def _remember_theme(self, theme) -> None:
        if theme.name != self._remembered_theme:
            self._remembered_theme = theme.name
            try:
                config_file.remember_theme(self.state_path, theme.name)
            except OSError as exc:
                self.notify(f"could not save the theme: {exc}", severity="warning")

    async def action_quit(self) -> None:
        active = [j for j in self.jobs.values() if j.active]
        if not active:
            self.exit(0)
            return
        from workbench.tui.forms.quit import quit_question
        from workbench.tui.screens.dialogs import ConfirmModal

        def done(yes: bool | None) -> None:
            if yes:
                for campaign in self.campaigns.values():  # first: its lanes start no further run
                    if campaign.active:
                        campaign.cancel()
                for job in active:
                    job.cancel()
                self.exit(0)

        running = [j.name for j in active if j.in_progress]
        campaigns = [c.name for c in self.campaigns.values() if c.active]
        question = quit_question(running, len(active) - len(running), campaigns)
        self.push_screen(ConfirmModal(question, "Quit", "Quit"), done)

    def on_unmount(self) -> None:
        for campaign in self.campaigns.values():
            if campaign.active:
                campaign.cancel()
        for job in self.jobs.values():
            if job.active:
                job.cancel()
        self.corpora.close()

    # ------------------------------------------------------------ actions shared by screens and the palette

    def action_help(self) -> None:
        from workbench.tui.screens.help import HelpScreen

        if type(self.screen).__name__ == "HelpScreen":
            return
        self.push_screen(HelpScreen(self.screen))

    def action_toggle_theme(self) -> None:
        self.theme = themes.LIGHT_THEME if self.theme == themes.DEFAULT_THEME else themes.DEFAULT_THEME

    def action_home(self) -> None:
        from workbench.tui.screens.runs import RunsScreen

        while len(self.screen_stack) > 1 and not isinstance(self.screen, RunsScreen):
            self.pop_screen()

    def action_scaling(self) -> None:
        from workbench.tui.screens.scaling import ScalingScreen

        if not isinstance(self.screen, ScalingScreen):
            self.push_screen(ScalingScreen())

    def action_compare(self) -> None:
        """Pick two runs, then compare them (on the runs screen: mark two with space, then c)."""
        from workbench.tui.screens.compare import RunPairModal

        names = self.run_names()
        if len(names) < 2:
            self.notify("comparing needs two runs in the store", severity="warning")
            return

        def picked(pair: tuple[str, str] | None) -> None:
            if pair:
                self.compare_runs(*pair)

        from workbench.tui.screens.runs import RunsScreen

        runs = next((s for s in reversed(self.screen_stack) if isinstance(s, RunsScreen)), None)
        marked = [n for n in (runs.compare_pair() if runs is not None else []) if n in names]
        self.push_screen(RunPairModal(names, *marked[:2]), picked)  # the runs marked on the runs screen

    def compare_runs(self, a: str, b: str) -> None:
        from workbench.tui.screens.compare import CompareScreen

        self.push_screen(CompareScreen(a, b))

    def action_items(self) -> None:
        """The item browser on the built-in benchmark (`d` there picks another dataset)."""
        from workbench.tui.screens.items import ItemsScreen

        if not isinstance(self.screen, ItemsScreen):
            self.push_screen(ItemsScreen())

    def action_audit(self) -> None:
        """Audit the dataset in view (the item browser's or item view's, at its item), else one the user picks."""
        dataset = getattr(self.screen, "dataset", None)
        if isinstance(dataset, str) and hasattr(self.screen, "current_item_id"):
            self.open_audit(dataset, self.screen.current_item_id)
            return
        from workbench.service.items import known_datasets

        store = self.open_store(create=False)
        choices = known_datasets(store.runs() if store is not None else [])
        if len(choices) == 1:
            self.open_audit(choices[0].spec)
            return
        from workbench.tui.screens.dialogs import DatasetModal

        self.push_screen(
            DatasetModal("Audit the benchmark", choices), lambda spec: self.open_audit(spec) if spec else None
        )

    def open_audit(self, dataset: str, item_id: str | None = None) -> None:
        """Open audit mode on `dataset` at `item_id`; its corpus is opened in a thread (imported on first use)."""
        self.notify(f"opening audit mode on {dataset if dataset == 'builtin' else Path(dataset).name}…", timeout=2)

        def work() -> None:
            try:
                corpus = self.corpora.corpus(dataset)
            except LookupError as exc:
                self.call_from_thread(self.notify, f"cannot audit {dataset}: {exc}", severity="error", timeout=8)
                return
            self.call_from_thread(self._push_audit, corpus, item_id, dataset)

        self.corpora.forget_error(dataset)
        self.run_worker(work, thread=True, group="audit", name="open-audit", exclusive=True, exit_on_error=False)

    def _push_audit(self, corpus, item_id: str | None, dataset: str | None = None) -> None:
        from workbench.tui.screens.audit import AuditScreen

        reviewer = config_file.reviewer(
            config_file.load_quietly(self.config_path), config_file.load_quietly(self.state_path)
        )
        self.push_screen(AuditScreen(corpus, self.store_path, reviewer, start=item_id, dataset=dataset))

    def action_new_run(
        self, fields: LaunchFields | None = None, options: dict[str, Any] | None = None, title: str = "New run"
    ) -> None:
        from workbench.tui.screens.launch import LaunchScreen

        def launched(spec) -> None:
            if spec is not None:
                self.start_run(spec)

        self.push_screen(LaunchScreen(set(self.run_names()), fields, options, title), launched)

    def relaunch(self, name: str) -> None:
        """The launch form filled in from a stored run, under its name: starting it resumes the run."""
        from workbench.tui.forms.relaunch import run_values

        job = self.jobs.get(name)
        if job is not None and job.active:
            self.notify(f"'{name}' is running", severity="warning")
            return
        try:
            fields, options = run_values(self.store.run(name))
        except (ValueError, LookupError) as exc:
            self.notify(str(exc), severity="warning", timeout=6)
            return
        self.action_new_run(fields, options, title=f"Resume '{name}' (finished episodes are kept)")

    def action_run_builtin(self) -> None:
        from workbench.service.launch import LaunchRequest, run_spec
        from workbench.tui.forms.launch import default_name

        name = default_name("heuristic", "builtin", "", set(self.run_names()))
        self.start_run(run_spec(LaunchRequest(dataset="builtin", agent="heuristic", name=name)))

    # ------------------------------------------------------------ campaigns

    def action_open_campaign(self) -> None:
        """Ask for a campaign file, then open its screen (its plan; ctrl+r starts it)."""
        from workbench.tui.forms.campaign import path_problem
        from workbench.tui.screens.dialogs import NameModal

        def chosen(text: str | None) -> None:
            if text:
                self.open_campaign(Path(text.strip()).expanduser())

        self.push_screen(
            NameModal(
                "Open a campaign file",
                "campaign.toml",
                path_problem,
                hint="a TOML campaign file (`agenthop-tui --batch campaign init FILE` writes an example)",
            ),
            chosen,
        )

    def open_campaign(self, path: Path) -> None:
        from workbench.tui.screens.campaign import CampaignScreen

        self.push_screen(CampaignScreen(path))

    def start_campaign(self, plan, states):
        """Run a campaign's runs in the background (one app-level worker), each registered as a run of this session."""
        from workbench.tui.jobs import CampaignJob

        self.open_store(create=True)
        job = CampaignJob(plan, states, self.store_path, self.cache_dir)
        self.campaigns[job.name] = job
        job.start(self)
        return job

    # ------------------------------------------------------------ play: people under the agents' rules

    def action_play(self) -> None:
        """The session setup on the built-in benchmark (the palette's 'Play the benchmark…', P on the runs list)."""
        self.play_items("builtin")

    def play_items(self, dataset: str, item_ids: list[str] | None = None, fingerprint: str | None = None) -> None:
        """Play `item_ids` of `dataset` now (the item browser calls this), or without ids open the session setup.

        `dataset` is as a run records it: `builtin` or a release directory. Given ids are played in the player's
        default session on that dataset (`human-NAME-DATASET`). With the dataset's `fingerprint`, ids the player
        already finished in any session are refused with a notification instead of a play screen.
        """
        from workbench.service.play import SessionRequest, default_player
        from workbench.tui.screens.play import PlayScreen

        player = self.player or default_player()
        if item_ids:
            store = self.open_store(create=False)
            if fingerprint and store is not None:
                from workbench.service.play import player_history

                done = player_history(store, player, fingerprint).finished
                if all(i in done for i in item_ids):
                    where = ", ".join(sorted({done[i] for i in item_ids}))
                    self.notify(
                        f"{player} already played {', '.join(item_ids)} (in {where}): a person who has seen "
                        "the gold answer cannot play it honestly again",
                        title="play",
                        severity="warning",
                        timeout=6,
                        markup=False,
                    )
                    return
            self.push_screen(
                PlayScreen(SessionRequest(player=player, dataset=dataset, mode="ids", ids=tuple(item_ids)))
            )
            return
        from workbench.tui.screens.play_setup import PlaySetupScreen

        def chosen(request) -> None:
            if request is not None:
                self.player = request.player
                self.push_screen(PlayScreen(request))

        self.push_screen(PlaySetupScreen(player, dataset), chosen)

    def action_panel(self) -> None:
        """The panel (the paper's Table 2 grouped by tier and family, fingerprints, figures): pick its runs."""
        self.open_panel([])

    def open_panel(self, names: list[str]) -> None:
        """The Panel screen over `names` (at least two), or, with fewer, over the runs picked first."""
        from workbench.tui.screens.panel import PanelScreen

        if len(self.run_names()) < 2:
            self.notify("a panel needs two runs in the store", severity="warning")
            return
        self.push_screen(PanelScreen(names))

    def action_leaderboard(self) -> None:
        from workbench.tui.screens.leaderboard import LeaderboardScreen

        if not isinstance(self.screen, LeaderboardScreen):
            self.push_screen(LeaderboardScreen())

    def start_run(self, spec, show: bool = True):
        """Run `spec` in the background (an app-level worker) and, with `show`, open its live screen."""
        from workbench.tui.jobs import RunJob

        existing = self.jobs.get(spec.name)
        if existing is not None and existing.active:
            self.notify(f"'{spec.name}' is already running", severity="warning")
            return existing
        self.open_store(create=True)
        job = RunJob(spec, self.store_path, self.cache_dir)
        self.jobs[spec.name] = job
        job.start(self)
        if show:
            self.watch_run(spec.name)
        return job

    def on_worker_state_changed(self, event) -> None:
        from textual.worker import WorkerState

        worker = event.worker
        if worker.group != "runs" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        job = next((j for j in self.jobs.values() if j.worker is worker), None)
        if job is None:
            return
        snap = job.monitor.snapshot()
        self._repaint_live(job)
        if event.state == WorkerState.ERROR:
            from workbench.tui.jobs import describe

            self.notify(f"run '{job.name}' failed: {describe(worker.error)}", severity="error", timeout=10)
        elif snap.status == "failed":
            self.notify(f"run '{job.name}' failed: {snap.message}", severity="error", timeout=10)
        elif snap.status == "done":
            acc = fraction(snap.accuracy)
            self.notify(f"run '{job.name}' done: {snap.done}/{snap.planned}, accuracy {acc}", timeout=5)
        else:
            self.notify(f"run '{job.name}' {snap.status}", severity="warning", timeout=5)

    def _repaint_live(self, job) -> None:
        """Paint a run's final state on its live screen now, with the notification, not at the next tick."""
        from workbench.tui.screens.live import LiveScreen

        for screen in self.screen_stack:
            if isinstance(screen, LiveScreen) and screen.monitor is job.monitor:
                screen.refresh_view()

    def watch_run(self, name: str) -> None:
        """The Live screen on run `name`: through its job while this session executes it (or executed it and no
        other process has taken it up since), else through the store, whoever executes it."""
        from workbench.service.errors import StoreError
        from workbench.service.stores import lock_holder
        from workbench.tui.screens.live import LiveScreen, watch_stored_run

        job = self.jobs.get(name)
        if job is not None and (job.active or lock_holder(self.store_path, name) is None):
            if not (isinstance(self.screen, LiveScreen) and self.screen.monitor is job.monitor):
                self.push_screen(LiveScreen(job.monitor, job))
            return
        if isinstance(self.screen, LiveScreen) and self.screen.monitor.name == name:
            return
        try:
            screen = watch_stored_run(self.store_path, name)
        except StoreError as exc:  # no store yet, or the run was deleted meanwhile
            self.notify(str(exc), severity="error")
            return
        self.push_screen(screen)

    def step_episode(self, run_name: str, key: tuple[str, int]) -> None:
        """The stepper on an episode of a run (item, replicate): its latest attempt as stored, in progress or not."""
        from workbench.service.errors import StoreError
        from workbench.tui.screens.stepper import StepperScreen

        store = self.store
        try:
            run = store.run(run_name)
        except StoreError as exc:  # deleted meanwhile
            self.notify(str(exc), severity="error")
            return
        tid = store.latest_trajectory_id(run["id"], *key)
        if tid is None:
            self.notify(f"{key[0]} r{key[1]} has no stored step yet", timeout=2)
            return
        self.push_screen(StepperScreen(dict(run), [tid]))

    def open_run(self, name: str, tab: str = "trajectories") -> None:
        from workbench.service.errors import StoreError
        from workbench.tui.screens.trajectories import RunScreen

        try:
            self.store.run(name)
        except StoreError as exc:  # no such run (deleted meanwhile)
            self.notify(str(exc), severity="error")
            return
        self.push_screen(RunScreen(name, tab))

    def export_run(self, name: str) -> None:
        from workbench.tui.screens.dialogs import ExportModal

        safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name) or "run"

        def chosen(answer) -> None:
            if answer:
                path, with_steps = answer
                self.run_worker(
                    lambda: self._export(name, path, with_steps),
                    thread=True,
                    group="export",
                    exit_on_error=False,
                    name=f"export:{name}",
                )

        self.push_screen(ExportModal(name, paths.export_dir() / f"{safe}.jsonl"), chosen)

    def _export(self, name: str, path: Path, with_steps: bool) -> None:
        from workbench.service.stores import export_run, open_store_to_read

        store = open_store_to_read(self.store_path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            n = export_run(store, name, path, with_steps=with_steps)
        except Exception as exc:  # noqa: BLE001 — on a worker: any failure (disk, store) is told, not lost
            self.call_from_thread(self.notify, f"export failed: {exc}", severity="error")
            return
        finally:
            store.close()
        self.call_from_thread(self.notify, f"exported {n} trajectories to {path}", timeout=5)


# ---------------------------------------------------------------- entry point


def resolve_theme(flag: str | None, configured: str | None, available: set[str]) -> tuple[str, list[str]]:
    """Theme by precedence: --theme, TEXTUAL_THEME, `configured` (the theme last chosen in the app, else the config
    file's), the default. Raises ValueError on a bad flag."""
    warnings: list[str] = []

    def known(name: str | None) -> str | None:
        if not name:
            return None
        name = themes.ALIASES.get(name, name)
        return name if name in available else None

    if flag:
        name = known(flag)
        if name is None:
            raise ValueError(f"unknown theme '{flag}'; available: {', '.join(sorted(available | set(themes.ALIASES)))}")
        return name, warnings
    env = os.environ.get("TEXTUAL_THEME")
    if env:
        for candidate in env.split(","):
            if name := known(candidate.strip()):
                return name, warnings
        warnings.append(f"TEXTUAL_THEME={env!r} names no known theme; ignored")
    if configured:
        if name := known(configured):
            return name, warnings
        warnings.append(f"theme '{configured}' (state or config file) is not known; using {themes.DEFAULT_THEME}")
    return themes.DEFAULT_THEME, warnings


def available_themes() -> set[str]:
    from textual.theme import BUILTIN_THEMES

    return set(BUILTIN_THEMES) | {t.name for t in themes.THEMES}


def build_app(db: str | None = None, theme_flag: str | None = None) -> WorkbenchApp:
    """The app for `agenthop-tui`'s flags (parsed by `workbench.cli.interactive`) and the config file (raises
    ValueError on a bad theme)."""
    warnings: list[str] = []
    cfg_path = paths.config_path()
    try:
        cfg = config_file.load(cfg_path)
    except config_file.ConfigError as exc:
        warnings.append(f"{exc}; using defaults")
        cfg = {}
    keymap, key_warnings = config_file.keymap(cfg)
    warnings += key_warnings
    state_path = paths.state_path()
    theme, theme_warnings = resolve_theme(
        theme_flag, config_file.theme(cfg, config_file.load_quietly(state_path)), available_themes()
    )
    warnings += theme_warnings
    return WorkbenchApp(
        store_path=paths.store_path(db),
        cache_dir=paths.cache_dir(),
        config_path=cfg_path,
        theme=theme,
        keymap=keymap,
        warnings=warnings,
        state_path=state_path,
    )


def run_app(app: WorkbenchApp) -> int:
    """Open the app's store (an unreadable one is exit 2 before the screen is taken) and run the app."""
    from workbench.service.errors import StoreError

    try:
        app.open_store(create=False)
    except StoreError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    app.run()
    return app.return_code or 0
