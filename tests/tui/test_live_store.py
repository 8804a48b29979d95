"""The Live screen on a run another process executes: a real `--batch run` child writing the store, watched here.

The child's model is the test server (tests/openai_server.py) in this process, whose brain answers only when the
test lets it (a semaphore): the writer advances one reply at a time, so each step of the test waits for a state
the run certainly reaches (polling with a deadline), never for a time.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

from textual.widgets import DataTable
from tui_support import make_app

from tests.openai_server import FakeOpenAI, seed_of, tool_reply, turn_of
from workbench.tui.commands import WorkbenchCommands
from workbench.tui.screens.live import LiveScreen
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.screens.stepper import StepperScreen

SIZE = (120, 36)
DEADLINE_S = 180  # only keeps a broken test from hanging: every wait is for a condition


class GatedModel:
    """The test server with a brain that answers one call per `allow`: get_references, think, then submit."""

    def __init__(self):
        self.gate = threading.Semaphore(0)
        self.server = FakeOpenAI(self.brain)

    def brain(self, request, n):
        assert self.gate.acquire(timeout=DEADLINE_S), "the test never let this call through"
        turn = turn_of(request)
        if turn == 0:
            return tool_reply(("get_references", {"paper_id": seed_of(request)}), prompt_tokens=1500)
        if turn == 1:
            return tool_reply(("think", {"reasoning": "which one"}), prompt_tokens=2500)
        return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}), prompt_tokens=3500)

    def allow(self, calls: int = 1) -> None:
        for _ in range(calls):
            self.gate.release()


def start_run(db, url: str, name: str, items: int) -> subprocess.Popen:
    """`--batch run` of the LLM agent against the gated server, one worker, in a child process."""
    argv = [sys.executable, "-m", "workbench.cli", "--batch", "run", "--data", "builtin", "--agent", "llm"]
    argv += ["--model", "openai/gated", "--base-url", url, "--limit", str(items), "--workers", "1"]
    argv += ["--run", name, "--db", str(db), "--quiet"]
    return subprocess.Popen(argv, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def start_campaign(path, url: str, db) -> subprocess.Popen:
    """A campaign file of one model on the gated server (run `c-g-full`, two items, one call in flight) written at
    `path`, and `--batch campaign run` of it in a child process."""
    path.write_text(
        f'name = "c"\nlimit = 2\nworkers = 1\n[[models]]\nname = "g"\nmodel = "openai/gated"\n'
        f'base_url = "{url}"\ncalls_in_flight = 1\n',
        encoding="utf-8",
    )
    argv = [sys.executable, "-m", "workbench.cli", "--batch", "campaign", "run", str(path), "--db", str(db)]
    return subprocess.Popen(argv, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


async def until(pilot, condition, what: str) -> None:
    """Let the app run until `condition()` holds (the screens poll the store at their own pace)."""
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        await pilot.pause(0.05)


def episode_cells(live: LiveScreen) -> list[str] | None:
    table = live.query_one(DataTable)
    if not table.row_count:
        return None
    return [str(cell) for cell in table.get_row_at(0)]


def title(screen) -> str:
    return str(screen.query_one("#live-title").render())


def state_cell(home: RunsScreen, name: str) -> str:
    table = home.query_one(DataTable)
    return str(table.get_row(name)[-1]) if name in home.shown else ""


def read(screen) -> bool:
    """Whether the campaign screen has read its file: planned, or refused."""
    return screen.plan is not None or screen.error is not None


def reap(proc: subprocess.Popen) -> None:
    try:
        proc.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise


async def test_the_live_screen_follows_a_run_another_process_writes_to_its_end(tmp_path):
    db = tmp_path / "store.sqlite"
    model = GatedModel()
    with model.server as srv:
        proc = start_run(db, srv.url, "child", items=2)
        try:
            app = make_app()
            async with app.run_test(size=SIZE) as pilot:
                home = app.screen
                # the runs list marks the run in progress (its writer holds its lock)
                await until(pilot, lambda: db.exists() and "▶" in state_cell(home, "child"), "the run listed ▶")
                assert "1 run in progress" in str(home.query_one("#runs-title").render())
                palette = [c[0] for c in WorkbenchCommands(home).commands()]
                assert "Watch run: child" in palette  # offered for a run in progress anywhere, not only one of ours
                await pilot.press("w")  # not launched from this session: watched through the store
                await until(pilot, lambda: isinstance(app.screen, LiveScreen), "the Live screen")
                live = app.screen
                await until(pilot, lambda: episode_cells(live) is not None, "the episode in flight listed")
                assert "▶ running" in title(live)
                # each reply the test lets through moves the episode's meters: turn, points, tokens
                model.allow()
                await until(pilot, lambda: (episode_cells(live) or ["", ""])[1] == "1", "turn 1 shown")
                first = episode_cells(live)
                assert "get_references(" in first[-1] and " 1/20" in first[3]
                model.allow()
                await until(pilot, lambda: (episode_cells(live) or ["", ""])[1] == "2", "turn 2 shown")
                second = episode_cells(live)
                assert second[2] != first[2] or second[4] != first[4]  # points or tokens moved
                # the stepper on the trajectory in progress shows the next turn once it is committed
                await pilot.press("s")
                await until(pilot, lambda: isinstance(app.screen, StepperScreen), "the stepper")
                stepper = app.screen

                def stepper_title() -> str:
                    return str(stepper.query_one("#stepper-title").render())

                assert "in progress" in stepper_title()
                # no answer nor ending yet: neither is said (it read "in progress (—) · None")
                assert stepper_title().endswith(" · in progress · trajectory 1/1 · child")
                turns = stepper.view.n_turns
                model.allow()  # submit: the first episode ends
                await until(pilot, lambda: stepper.view.n_turns > turns, "the new turn in the stepper")
                await until(pilot, lambda: "in progress" not in stepper_title(), "the stepper's episode finished")
                assert "answer" in stepper_title()
                await pilot.press("escape")
                await until(pilot, lambda: "1/2" in str(live.query_one("#live-stats").render()), "1/2 done")
                model.allow(3)  # the second episode, to its end
                await until(pilot, lambda: "✓ done" in title(live), "the run done")
                assert "2/2" in str(live.query_one("#live-stats").render())
                await pilot.press("escape")
                await until(pilot, lambda: state_cell(home, "child") == "done", "the run listed done")
        finally:
            model.allow(100)
            reap(proc)
    assert proc.returncode == 0, proc.stderr


async def test_a_killed_writer_shows_as_interrupted(tmp_path):
    db = tmp_path / "store.sqlite"
    model = GatedModel()
    with model.server as srv:
        proc = start_run(db, srv.url, "doomed", items=2)
        try:
            app = make_app()
            async with app.run_test(size=SIZE) as pilot:
                home = app.screen
                await until(pilot, lambda: db.exists() and "▶" in state_cell(home, "doomed"), "the run listed ▶")
                app.watch_run("doomed")  # the entry point the runs list's `w` calls
                await pilot.pause()
                live = app.screen
                assert isinstance(live, LiveScreen)
                model.allow()
                await until(pilot, lambda: (episode_cells(live) or ["", ""])[1] == "1", "turn 1 shown")
                os.kill(proc.pid, signal.SIGKILL)
                proc.wait()
                await until(pilot, lambda: "■ interrupted" in title(live), "the run shown interrupted")
                assert episode_cells(live) is None  # nothing is in flight any more
                await pilot.press("escape")
                await until(pilot, lambda: state_cell(home, "doomed") == "interrupted", "the run listed interrupted")
        finally:
            model.allow(100)
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


async def test_s_on_the_live_screen_of_a_run_launched_here_opens_its_episode_in_the_stepper(tmp_path):
    """The in-process path is kept: a run this workbench launched is followed through its job's monitor, and `s`
    opens the stepper on the episode under the cursor as stored."""
    from workbench.service.launch import LaunchRequest, run_spec

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        job = app.start_run(
            run_spec(LaunchRequest(dataset="builtin", agent="heuristic", limit=2, workers=1, name="here"))
        )
        await until(pilot, lambda: isinstance(app.screen, LiveScreen) and not job.active, "the run launched here done")
        live = app.screen
        assert live.monitor is job.monitor  # not the store reader
        await until(pilot, lambda: "✓ done" in title(live) and live.shown, "its episodes listed")
        key = live.current_key()
        await pilot.press("s")
        await until(pilot, lambda: isinstance(app.screen, StepperScreen), "the stepper")
        stepper = app.screen
        assert (stepper.traj["item_id"], stepper.traj["replicate"]) == key and stepper.view.n_turns >= 1
        assert "in progress" not in str(stepper.query_one("#stepper-title").render())


async def test_enter_on_the_campaign_screen_watches_a_run_another_process_executes(tmp_path):
    """A campaign run by `--batch campaign run` in another process: enter on its run in progress opens the Live
    screen through the store (its trajectories are what a run finished before opens)."""
    from workbench.service.stores import lock_holder
    from workbench.tui.screens.campaign import CampaignScreen
    from workbench.tui.store_monitor import StoreMonitor

    db = tmp_path / "store.sqlite"
    model = GatedModel()
    with model.server as srv:
        path = tmp_path / "c.toml"
        proc = start_campaign(path, srv.url, db)
        try:
            app = make_app()
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: db.exists() and lock_holder(db, "c-g-full") is not None, "the run begun")
                app.open_campaign(path)
                await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and read(app.screen), "the file read")
                assert app.screen.error is None, app.screen.error
                await pilot.press("enter")
                await until(pilot, lambda: not isinstance(app.screen, CampaignScreen), "another screen")
                live = app.screen
                assert isinstance(live, LiveScreen) and isinstance(live.monitor, StoreMonitor)
                assert live.monitor.name == "c-g-full"
                model.allow(100)
                await until(pilot, lambda: "✓ done" in title(live), "the run done")
        finally:
            model.allow(100)
            reap(proc)
    assert proc.returncode == 0, proc.stderr


async def test_a_campaign_run_waiting_its_turn_is_not_counted_in_progress(tmp_path):
    """Two runs of a campaign on one endpoint go one after the other: while the first runs, the runs list says one
    run in progress and marks only it, the second waiting its turn on the lane; the quit dialog calls it queued."""
    from workbench.service.stores import lock_holder

    db = tmp_path / "store.sqlite"
    model = GatedModel()
    with model.server as srv:
        path = tmp_path / "c.toml"
        path.write_text(
            f'name = "c"\nlimit = 1\nworkers = 1\n[runs]\nablations = ["full", "no-search"]\n[[models]]\nname = "g"\n'
            f'model = "openai/gated"\nbase_url = "{srv.url}"\ncalls_in_flight = 1\n',
            encoding="utf-8",
        )
        app = make_app()
        try:
            async with app.run_test(size=SIZE) as pilot:
                home = app.screen
                app.open_campaign(path)
                await until(pilot, lambda: getattr(app.screen, "plan", None) is not None, "the plan")
                await pilot.press("ctrl+r")
                await until(pilot, lambda: db.exists() and lock_holder(db, "c-g-full") is not None, "the first run")
                await pilot.press("escape")
                await until(pilot, lambda: "▶" in state_cell(home, "c-g-full"), "the first run listed ▶")
                assert "c-g-no-search" in app.jobs and app.jobs["c-g-no-search"].active  # registered, waiting
                assert "1 run in progress" in str(home.query_one("#runs-title").render())
                await pilot.press("q")  # the quit dialog names the run in progress, counts the one queued
                await until(pilot, lambda: app.screen.query(".dialog-message"), "the quit dialog")
                question = str(app.screen.query_one(".dialog-message").render())
                assert question.startswith("c-g-full is running; 1 queued run will not start. Quit and interrupt")
                assert "c-g-no-search" not in question
                await pilot.press("n")
                await until(pilot, lambda: app.screen is home, "the dialog closed, nothing quit")
                model.allow(100)
                await until(pilot, lambda: app.campaigns["c"].status == "done", "the campaign done")
                await until(pilot, lambda: state_cell(home, "c-g-no-search") == "done", "the second run listed done")
        finally:
            model.allow(100)


async def test_the_campaign_screen_follows_a_campaign_another_process_runs(tmp_path):
    """The campaign screen opened on a campaign `--batch campaign run` executes in another process: its rows follow
    the store (episodes done, status) to the end, not the state read when the screen opened."""
    from workbench.service.stores import lock_holder
    from workbench.tui.screens.campaign import CampaignScreen

    db = tmp_path / "store.sqlite"
    model = GatedModel()
    with model.server as srv:
        path = tmp_path / "c.toml"
        proc = start_campaign(path, srv.url, db)
        try:
            app = make_app()
            async with app.run_test(size=SIZE) as pilot:
                await until(pilot, lambda: db.exists() and lock_holder(db, "c-g-full") is not None, "the run begun")
                app.open_campaign(path)
                await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and read(app.screen), "the file read")
                assert app.screen.error is None, app.screen.error
                screen = app.screen

                def cells() -> list[str]:
                    table = screen.query_one("#campaign-runs", DataTable)
                    return [str(c) for c in table.get_row_at(0)] if table.row_count else []

                assert cells()[4:] == ["0/2", "—", "▶ running"]
                model.allow(3)  # the first episode, to its end
                await until(pilot, lambda: cells()[4] == "1/2", "one episode done shown")
                model.allow(100)
                await until(pilot, lambda: cells()[4:] == ["2/2", "—", "✓ done"], "the run shown done")
        finally:
            model.allow(100)
            reap(proc)
    assert proc.returncode == 0, proc.stderr


async def test_starting_a_campaign_another_process_runs_is_refused_before_anything_runs(tmp_path):
    """ctrl+r on a campaign whose run another process executes refuses, as `campaign run` does, before anything
    runs: started anyway, this session failed that run and raced the other process for the runs after it."""
    from workbench.service.stores import lock_holder
    from workbench.tui.screens.campaign import CampaignScreen

    db = tmp_path / "store.sqlite"
    model = GatedModel()
    with model.server as srv:
        path = tmp_path / "c.toml"
        path.write_text(
            f'name = "c"\nlimit = 1\nworkers = 1\n[runs]\nablations = ["full", "no-search"]\n[[models]]\nname = "g"\n'
            f'model = "openai/gated"\nbase_url = "{srv.url}"\ncalls_in_flight = 1\n',
            encoding="utf-8",
        )
        argv = [sys.executable, "-m", "workbench.cli", "--batch", "campaign", "run", str(path), "--db", str(db)]
        proc = subprocess.Popen(argv, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            app = make_app()
            async with app.run_test(size=SIZE, notifications=True) as pilot:
                await until(pilot, lambda: db.exists() and lock_holder(db, "c-g-full") is not None, "the run begun")
                app.open_campaign(path)
                await until(pilot, lambda: isinstance(app.screen, CampaignScreen) and read(app.screen), "the file read")
                screen = app.screen
                await pilot.press("ctrl+r")
                said = "run 'c-g-full' is in progress in another process"
                await until(pilot, lambda: any(said in n.message for n in app._notifications), "the refusal")
                assert "c" not in app.campaigns and "c-g-no-search" not in app.jobs  # nothing was started here
                assert str(screen.query_one("#campaign-runs", DataTable).get_row_at(0)[-1]) == "▶ running"
                model.allow(100)
                await until(pilot, lambda: proc.poll() is not None, "the other process done")
        finally:
            model.allow(100)
            reap(proc)
    assert proc.returncode == 0, proc.stderr
