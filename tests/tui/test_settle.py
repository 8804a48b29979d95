"""The TUI tests' `settle`: a worker replaced by an exclusive successor is an outcome, not a failure."""

from __future__ import annotations

import threading

from tui_support import make_app, settle


async def test_settle_waits_past_a_worker_an_exclusive_successor_cancelled(tmp_path):
    """A screen that recomputes (the Scaling screen's `select`, redrawn as a study's level ends) starts an exclusive
    worker while the previous one still runs: Textual cancels the previous one, and waiting on it raises
    WorkerCancelled. `settle` waits for the work to end and leaves a cancelled worker be."""
    app = make_app()
    release = threading.Event()
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot, app)
        first = app.run_worker(lambda: release.wait(30), thread=True, exclusive=True, group="g", name="first")
        second = app.run_worker(release.set, thread=True, exclusive=True, group="g", name="second")
        await settle(pilot, app)
        assert first.is_cancelled and second.is_finished
