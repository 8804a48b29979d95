"""Driving the play screen from tests: its session worker waits for the person, so `settle` (which waits for
every worker) cannot be used; `until` pauses the app until the screen reaches a state instead."""
from __future__ import annotations

from tui_support import until
from workbench.tui.screens.play import PlayScreen

__all__ = ["act", "start", "until"]


async def start(pilot, app, items: list[str]) -> PlayScreen:
    """Play `items` of the built-in benchmark; returns once the first turn waits for the person."""
    await pilot.pause()
    app.play_items("builtin", items)
    await until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.agent is not None
                and app.screen.agent.waiting)
    return app.screen


async def act(pilot, screen: PlayScreen, *keys: str) -> None:
    """Press the keys of one call, then wait until the episode has answered it (or ended)."""
    before = len(screen.steps)
    await pilot.press(*keys)
    await until(pilot, lambda: len(screen.steps) > before and (screen.state != "playing" or screen.agent.waiting))
