"""Snapshots of the play screen mid-item and of the reveal at 120×36 (update with `pytest --snapshot-update`).

The item timer is frozen, the player is `ana`, the store is the seeded one.
"""
from __future__ import annotations

import pytest

from play_support import act, start, until
from tui_support import make_app

SIZE = (120, 36)


@pytest.fixture
def frozen(monkeypatch):
    monkeypatch.setenv("USER", "ana")
    monkeypatch.setattr("workbench.tui.play.clock", lambda: 100.0)


def test_play_screen(snap_compare, seeded, frozen):
    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["st_0001"])
        await act(pilot, screen, "2", "enter")
        await act(pilot, screen, "4", "enter")
        await act(pilot, screen, "5", "C", "enter")
        await pilot.press("5")  # the read form open again: the paper id filled in, the section to type
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)


def test_reveal(snap_compare, seeded, frozen):
    async def run_before(pilot):
        screen = await start(pilot, pilot.app, ["st_0001"])
        await act(pilot, screen, "4", "enter")
        await act(pilot, screen, "s", "c", "enter")
        await until(pilot, lambda: screen.state == "finished")
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=SIZE, run_before=run_before)
