"""Driving the play screen from tests: its session worker waits for the person, so `settle` (which waits for
every worker) cannot be used; `until` pauses the app until the screen reaches a state instead."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tui_support import until

from workbench.tui.screens.play import PlayScreen

__all__ = ["act", "answered", "start", "until"]


async def start(pilot, app, items: list[str]) -> PlayScreen:
    """Play `items` of the built-in benchmark; returns once the first turn waits for the person."""
    await pilot.pause()
    app.play_items("builtin", items)
    await until(
        pilot,
        lambda: (
            isinstance(app.screen, PlayScreen)
            and app.screen.session.agent is not None
            and app.screen.session.agent.waiting
        ),
    )
    return app.screen


async def act(pilot, screen: PlayScreen, *keys: str) -> None:
    """Press the keys of one call, then wait until the episode has answered it (or ended)."""
    before = len(screen.session.steps)
    await pilot.press(*keys)
    await until(
        pilot,
        lambda: (
            len(screen.session.steps) > before and (screen.session.state != "playing" or screen.session.agent.waiting)
        ),
    )


def answered(store_path: Path, cache: Path, player: str, answers: dict[str, str]) -> None:
    """`player` answers each item of `answers` (item id → letter) at once, in one session, stored as the play screen
    stores it: the engine the screen drives (`session_runner`, one `HumanAgent` per item), the call the answer form
    sends. For tests of what other screens show of a session; test_play.py plays through the screen itself."""
    from sandbox.agents.human import HumanAgent
    from sandbox.datasets import open_dataset
    from storage import Store
    from workbench.service.play import SessionRequest, session_runner

    async def factory(item, replicate, attempt):
        agent = HumanAgent(player)

        async def person():
            await agent.turn()
            agent.send("submit_answer", {"answer": answers[item.id], "reasoning": ""})

        asyncio.get_running_loop().create_task(person())
        return agent

    corpus, _ = open_dataset("builtin", cache)
    store = Store(store_path)
    try:
        request = SessionRequest(player=player, dataset="builtin", mode="ids", ids=tuple(answers))
        asyncio.run(session_runner(request, corpus, store, factory).run())
    finally:
        store.close()
        corpus.close()
