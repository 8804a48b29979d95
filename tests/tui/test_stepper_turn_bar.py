"""The stepper's turn bar follows what the transcript shows (issue 44 §15): scrolling it (j/k, PgUp/PgDn,
Home/End) to another turn says which turn is in view, apart from the turn stepped to (whose ledger the meters
keep); stepping again shows the stepped turn alone."""

from __future__ import annotations

from tui_support import make_app, settle

from workbench.tui.screens.stepper import StepperScreen


def bar(stepper: StepperScreen) -> str:
    return str(stepper.view.query_one(".turn-bar").render())


async def open_stepper(pilot, app, size) -> StepperScreen:
    app.open_run("scripted-[b]llm[/b]")  # ten turns a trajectory
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot, app)
    stepper = app.screen
    assert isinstance(stepper, StepperScreen)
    return stepper


async def test_scrolling_to_an_earlier_turn_names_it_in_the_bar(seeded):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        stepper = await open_stepper(pilot, app, (80, 24))
        await pilot.press("$")
        await settle(pilot, app)
        last = stepper.view.turns[-1][0]["turn"]
        assert bar(stepper).startswith(f" turn {last} ") and "in view" not in bar(stepper)
        meters = stepper.meter_readings()

        await pilot.press("home")  # the cursor on the transcript's first entry: turn 1
        await settle(pilot, app)
        assert f"turn {last}" in bar(stepper) and "in view: turn 1" in bar(stepper)
        assert stepper.meter_readings() == meters  # scrolling is not stepping: the ledger stays the stepped turn's

        await pilot.press("end")
        await settle(pilot, app)
        assert "in view" not in bar(stepper)

        view = stepper.view.transcript
        while view.cursor_entry.turn == last:  # k up to the previous turn's last entry
            await pilot.press("k")
        await settle(pilot, app)
        assert f"in view: turn {last - 1}" in bar(stepper)

        await pilot.press("h")  # stepping shows the stepped turn, alone
        await settle(pilot, app)
        assert bar(stepper).startswith(f" turn {last - 1} ") and "in view" not in bar(stepper)


async def test_page_up_past_the_stepped_turn_names_the_turns_in_view(seeded):
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        stepper = await open_stepper(pilot, app, (80, 24))
        await pilot.press("$")
        await settle(pilot, app)
        last = stepper.view.turns[-1][0]["turn"]
        for _ in range(20):
            await pilot.press("pageup")
        await settle(pilot, app)
        assert "in view: turn 1" in bar(stepper)
        for _ in range(20):
            await pilot.press("pagedown")
        await settle(pilot, app)
        assert "in view" not in bar(stepper) and bar(stepper).startswith(f" turn {last} ")
