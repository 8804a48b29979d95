"""Shared pieces of the TUI tests: a scripted agent with markup-like replies, the app factory, settling."""

from __future__ import annotations

import contextlib

from sandbox.records import AssistantTurn, ToolCall, Usage
from tests.textual_private import after_refresh_callbacks

BRACKETS = (
    "Let me check [bold]the seed[/] and [red]its refs[/red] first; [link=http://x]y[/link] \\[x\\] [/ \x1b[31mred?"
)


class BracketAgent:
    """A scripted 'model' whose replies are full of markup-like text, with token usage and costs."""

    name = "bracket"

    def __init__(self, item):
        self.item = item
        self.turn = 0

    async def act(self, messages, tools):
        self.turn += 1
        k = self.turn
        seed, gold = self.item.seed_paper_id, self.item.gold_paper_ids[0]
        usage = Usage(prompt=3300 * k, completion=120)
        script = {
            1: (BRACKETS, [ToolCall("c1", "get_references", {"paper_id": seed})]),
            2: ("[i]listing[/i] the gold paper's sections", [ToolCall("c2", "list_sections", {"paper_id": gold})]),
            3: ("reading [A]", [ToolCall("c3", "read_section", {"paper_id": gold, "section": "A"})]),
            4: ("and the seed [/]", [ToolCall("c4", "read_section", {"paper_id": seed, "section": "A"})]),
            5: ("Thinking about [this] without a tool call.", []),
            6: ("more", [ToolCall("c6", "read_section", {"paper_id": gold, "section": "B"})]),
            7: ("more", [ToolCall("c7", "read_section", {"paper_id": gold, "section": "C"})]),
            8: ("more", [ToolCall("c8", "read_section", {"paper_id": seed, "section": "B"})]),
            9: ("one more read", [ToolCall("c9", "read_section", {"paper_id": gold, "section": "D"})]),
        }
        if k in script:
            text, calls = script[k]
        else:
            letter = "ABCD"[self.item.correct_index]
            text, calls = (
                f"[b]Answer[/b] {letter}",
                [ToolCall("c99", "submit_answer", {"answer": letter, "reasoning": "[x] because"})],
            )
        return AssistantTurn(text=text, tool_calls=calls, usage=usage, cost_usd=0.0015)


def make_app(**kwargs):
    """The real app over the env's locations (a fixed theme unless given)."""
    from workbench.service import paths
    from workbench.tui.app import WorkbenchApp

    kwargs.setdefault("theme", "agenthop-dark")
    return WorkbenchApp(
        store_path=paths.store_path(), cache_dir=paths.cache_dir(), config_path=paths.config_path(), **kwargs
    )


async def settle(pilot, app, rounds: int = 3) -> None:
    """Let workers finish and the screen catch up (no sleeping for timing): `rounds` rounds, then more while a
    worker is pending or running or a callback waits for the next refresh. A worker started by
    `call_after_refresh` (the diagnostics tab) does not exist yet when `wait_for_complete` first looks: a fixed
    number of rounds had slack for today's screens but no guarantee. The bound on the extra rounds only keeps a
    broken test from hanging."""
    for _ in range(rounds):
        await wait_for_workers(app)
        await pilot.pause()
    for _ in range(100):
        if not busy(app):
            return
        await wait_for_workers(app)
        await pilot.pause()
    raise AssertionError(f"the app never settled: {busy(app)}")


async def wait_for_workers(app) -> None:
    """Wait for every worker to end. A worker cancelled on the way is an outcome, not a failure: a screen that
    recomputes (the Scaling screen's `select`, redrawn as a study's level ends) starts an exclusive worker,
    which cancels the one still running, and Textual's `wait_for_complete` raises WorkerCancelled for it — at
    random, as the timer and the study's listener race. A worker's error still fails the test."""
    from textual.worker import WorkerCancelled

    for worker in list(app.workers):
        with contextlib.suppress(WorkerCancelled):
            await worker.wait()


def busy(app) -> list[str]:
    """What is still to come: workers not finished, and callbacks waiting for a refresh (Textual keeps those of
    `call_after_refresh` on the current screen until it has refreshed)."""
    from textual.worker import WorkerState

    pending = [f"worker {w.name}" for w in app.workers if w.state in (WorkerState.PENDING, WorkerState.RUNNING)]
    callbacks = after_refresh_callbacks(app.screen)
    return pending + [f"{len(callbacks)} callback(s) after refresh"] * bool(callbacks)


async def until(pilot, condition, rounds: int = 400) -> None:
    """Pause the app until `condition()` holds: for a state the app certainly reaches (the bound only keeps a
    broken test from hanging; no sleeping for timing)."""
    for _ in range(rounds):
        if condition():
            return
        await pilot.pause()
    raise AssertionError("the screen never got there")
