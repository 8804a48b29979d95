"""A person plays through the real app over a real store: keys become the agent's calls, the episode keeps the rules."""

from __future__ import annotations

from play_support import act, start, until
from textual.widgets import Button, DataTable, Input, OptionList, Select
from tui_support import make_app

from sandbox.ledger import INSUFFICIENT
from tests.textual_private import messages
from workbench.service.reports import leaderboard
from workbench.tui.screens.leaderboard import LeaderboardScreen
from workbench.tui.screens.play import PlayScreen
from workbench.tui.screens.play_setup import PlaySetupScreen
from workbench.tui.screens.runs import RunsScreen
from workbench.tui.widgets.transcript import TranscriptView
from workbench.views.leaderboard import leaderboard_cells

SIZE = (120, 36)


def tool_steps(screen: PlayScreen) -> list[tuple[str, str, int]]:
    return [(s.tool_name, s.status, s.ledger.points_used) for s in screen.session.steps if s.kind == "tool"]


async def test_play_an_item_to_the_double_rejection_under_the_budget(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        item = screen.session.item
        assert screen.session.footer_text == "" and screen.query_one("#meter-points").reading == (0, 30, "ok")
        await act(pilot, screen, "4", "enter")  # list the seed's sections (the paper id is filled in)
        assert [alias for alias, _ in screen.session.seen.sections[item.seed_paper_id]][:3] == ["A", "B", "C"]
        await pilot.press("a")  # the section aliases are a list, its first entry highlighted: pick (A)
        await pilot.press("enter")
        assert screen.session.tool is None and screen.session.picked_section == (
            item.seed_paper_id,
            "A",
        )  # picking only selects
        await pilot.press("5")  # the read form, filled in with the paper and the picked section
        assert screen.session.tool == "read_section" and screen.focused is screen.query_one("#play-form")
        await act(pilot, screen, "enter")
        for section in "BCDE":
            await act(pilot, screen, "5", section, "enter")
        assert screen.query_one("#meter-points").reading == (26, 30, "warn")
        await act(pilot, screen, "5", "A", "enter")  # 4 points left: rejected at cost 0
        rejection = screen.session.steps[-1]
        assert rejection.status == "rejected" and rejection.text == INSUFFICIENT.format(
            left=4, name="read_section", cost=5
        )
        assert "⊘ rejected" in screen.query_one(TranscriptView).entries[-1].plain_header
        assert (
            screen.session.footer_text
            == screen.session.agent.seen[-1].footer
            == f"Turn: 7  |  Tokens used: {rejection.ledger.tokens:,}  |  Budget used: 26"
        )
        await act(pilot, screen, "2", "enter")  # references of the seed: executed, the rejections reset
        papers = screen.query_one("#play-papers", OptionList)
        assert papers.option_count == len(screen.session.seen.papers) > 1
        await act(pilot, screen, "5", "A", "enter")
        assert screen.session.state == "playing"
        await act(pilot, screen, "5", "B", "enter")  # the second consecutive rejection ends the episode
        await until(pilot, lambda: screen.session.state == "finished")

        assert tool_steps(screen) == [("list_sections", "ok", 1)] + [
            ("read_section", "ok", 1 + 5 * k) for k in range(1, 6)
        ] + [
            ("read_section", "rejected", 26),
            ("get_references", "ok", 27),
            ("read_section", "rejected", 27),
            ("read_section", "rejected", 27),
        ]
        stored = app.store.trajectories(app.store.run("human-ana-builtin")["id"])
        assert [(t["item_id"], t["termination"], t["points_used"], t["turns"]) for t in stored] == [
            ("st_0001", "budget", 27, 10)
        ]
        assert "ended (budget)" in str(screen.query_one("#reveal-title").render())
        assert screen.query_one("#meter-points").reading == (27, 30, "over")
        assert screen.query_one("#meter-turns").reading[0] == 10
        assert not screen.check_action("tool", ("think",)) and not screen.check_action("next_item", ())


async def test_answer_reveal_leaderboard_then_leave_mid_item_and_resume(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001", "st_0002"])
        gold = "ABCD"[screen.session.item.correct_index]
        await act(pilot, screen, "s", gold.lower(), "enter")
        await until(pilot, lambda: screen.session.state == "reveal")
        title = str(screen.query_one("#reveal-title").render())
        assert f"Gold ({gold})" in title and f"you answered {gold} · correct" in title

        table = screen.query_one("#reveal-table", DataTable)
        stored = [t for t in app.store.item_trajectories(screen.session.fingerprint, "st_0001") if t["replicate"] == 0]
        assert table.row_count == len(stored) == 5  # four seeded runs and this play
        for t in stored:
            cells = [str(c) for c in table.get_row(str(t["id"]))]
            assert t["run"].startswith(cells[1].rstrip("…"))
            assert cells[3] == (
                f"{'✓' if t['correct'] else '✗'} {t['answer']}"
                if t["termination"] == "answer"
                else f"✗ — {t['termination']}"
            )
            assert (cells[4], cells[5]) == (str(t["points_used"]), str(t["turns"]))
            assert cells[6] == ("●" if t["paper_recall"] else "○") + " " + ("●" if t["section_recall"] else "○")
        assert str(table.get_row_at(0)[0]) == "you" and str(table.get_row_at(0)[1]) == "human-ana-builtin"

        await pilot.press("L")  # the leaderboard: the same numbers as --batch leaderboard
        await until(pilot, lambda: isinstance(app.screen, LeaderboardScreen))
        board_table = app.screen.query_one(DataTable)
        header, rows = leaderboard_cells(leaderboard(app.store)[0])
        assert [str(c.label) for c in board_table.columns.values()] == list(header)
        assert [[str(c) for c in board_table.get_row_at(i)] for i in range(board_table.row_count)] == [
            list(r) for r in rows
        ]
        assert any(r[1] == "human-ana-builtin" and r[2] == "human:ana" and r[3] == "1/1" for r in rows)
        await pilot.press("escape")
        await pilot.press("enter")  # enter on a reveal row: step through that trajectory
        await until(pilot, lambda: type(app.screen).__name__ == "StepperScreen")
        assert app.screen.traj["item_id"] == "st_0001"
        await pilot.press("escape")

        await pilot.press("n")
        await until(pilot, lambda: screen.session.state == "playing" and screen.session.agent.waiting)
        assert screen.session.item.id == "st_0002" and screen.query_one("#meter-points").reading[0] == 0
        await act(pilot, screen, "1", "enter")
        await pilot.press("escape")  # leave in the middle of st_0002 (the last item): asked first
        await pilot.pause()
        await pilot.press("l")  # the session
        await until(
            pilot,
            lambda: (
                isinstance(app.screen, RunsScreen) and app.store.run("human-ana-builtin")["status"] == "interrupted"
            ),
        )
        run = app.store.run("human-ana-builtin")
        query = (
            "SELECT item_id, attempt, status, final, termination, error_kind, turns FROM trajectories "
            "WHERE run_id = ? ORDER BY id"
        )
        await until(
            pilot,
            lambda: (
                len(app.store.conn.execute(query, (run["id"],)).fetchall()) == 2
                and app.store.conn.execute(query, (run["id"],)).fetchall()[1]["status"] == "done"
            ),
        )
        rows = [tuple(r) for r in app.store.conn.execute(query, (run["id"],))]
        # what was seen of st_0002 is kept: a finished, non-final attempt ended by error, 'abandoned'
        assert rows == [
            ("st_0001", 0, "done", 1, "answer", None, 1),
            ("st_0002", 0, "done", 0, "error", "abandoned", 1),
        ]

        screen = await start(pilot, app, ["st_0001", "st_0002"])  # re-open: st_0001 is skipped, st_0002 starts over
        assert (
            screen.session.item.id == "st_0002"
            and screen.session.agent.seen[-1].turn == 1
            and screen.session.steps == []
        )
        assert "item 2 of 2" in str(screen.query_one("#play-title").render())
        await act(pilot, screen, "s", "b", "enter")
        await until(pilot, lambda: screen.session.state == "finished")
        assert "marked 'resumed', left out of the leaderboard" in str(screen.query_one("#reveal-title").render())
        rows = [tuple(r) for r in app.store.conn.execute(query, (run["id"],))]
        assert rows[2:] == [("st_0002", 1, "done", 1, "answer", "resumed", 1)]
        assert app.store.run("human-ana-builtin")["status"] == "done"
        await pilot.press("enter")  # the stepper of a resumed play (the first row: yours) says so in its title
        await until(pilot, lambda: type(app.screen).__name__ == "StepperScreen")
        assert app.screen.traj["item_id"] == "st_0002"
        assert "⚠ resumed after seeing tool results" in str(app.screen.query_one("#stepper-title").render())
        await pilot.press("escape")
        assert {r["run"]: r for r in leaderboard(app.store)[0]["rows"]}["human:ana"]["excluded"] == 1

        await pilot.press("escape")  # an item is played once per session: asking again says so
        app.play_items("builtin", ["st_0001"])
        await until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.session.state == "failed")
        assert "nothing left to play" in app.screen.query_one(TranscriptView).placeholder
        await pilot.press("escape")

        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("P")  # the runs list's key opens the session setup
        await until(pilot, lambda: isinstance(app.screen, PlaySetupScreen))
        setup = app.screen
        assert setup.query_one("#setup-player", Input).value == "ana"
        setup.query_one("#setup-mode", Select).value = "ids"
        await pilot.pause()
        assert setup.query_one("#start", Button).disabled  # no ids yet
        setup.query_one("#setup-ids", Input).value = "st_0003"
        setup.query_one("#setup-name", Input).value = "ana-second"
        await pilot.pause()
        await pilot.press("ctrl+r")
        await until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.session.agent is not None)
        assert (app.screen.session.item.id, app.screen.session.request.session) == ("st_0003", "ana-second")


async def test_a_paper_picked_from_the_list_is_listed_and_its_sections_are_offered(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await act(pilot, screen, "2", "enter")  # the seed's references: now several papers are seen
        other = list(screen.session.seen.papers)[1]
        await pilot.press("4", "down")  # ↓ from the (pre-filled) paper field goes to the papers list
        assert screen.focused is screen.query_one("#play-papers", OptionList)
        papers = screen.query_one("#play-papers", OptionList)
        assert papers.highlighted == 0  # the list opens on its first entry: one ↓ is the second paper
        await pilot.press("down", "enter")  # the second paper seen
        assert screen.query_one("#arg-paper_id", Input).value == other
        await act(pilot, screen, "enter")
        assert screen.session.steps[-1].tool_args == {"paper_id": other}
        assert screen.session.steps[-1].status == "ok"  # (the built-in item's second reference has text)
        box = screen.query_one("#play-sections", OptionList)
        listed = [str(box.get_option_at_index(i).prompt) for i in range(box.option_count)]
        assert listed and listed == [
            f"({a}) {h}" for a, h in screen.session.seen.sections[other]
        ]  # its aliases, not the seed's
        assert "SECTIONS of" in str(screen.query_one("#sections-label").render())


async def test_a_paper_that_was_not_found_does_not_become_the_current_paper(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        seed = screen.session.item.seed_paper_id
        await pilot.press("1")
        screen.query_one("#arg-paper_id", Input).value = "zzz"
        await act(pilot, screen, "enter", "y")  # an id no paper seen has: sent once the player confirms
        assert screen.session.steps[-1].tool_args == {"paper_id": "zzz"} and screen.session.steps[-1].status != "ok"
        assert screen.session.current_paper == seed
        await pilot.press("4")  # the form offers the last paper found, not the id that was not
        assert screen.query_one("#arg-paper_id", Input).value == seed


async def test_a_person_s_turns_are_the_player_s_in_the_stepper_and_an_empty_argument_shows(seeded, monkeypatch):
    from workbench.tui.screens.stepper import StepperScreen

    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await act(pilot, screen, "s", "c", "enter")  # no reasoning typed: sent as "" (the schema requires it)
        await until(pilot, lambda: screen.session.state == "finished")
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(app.screen, StepperScreen))
        headers = [e.plain_header for e in app.screen.entries]
        assert headers[1].startswith("◆ player → submit_answer") and not [h for h in headers if "assistant" in h]
        assert 'submit_answer(C, "")' in "".join(headers)


async def test_p_on_an_item_the_player_played_only_says_so(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await act(pilot, screen, "s", "c", "enter")
        await until(pilot, lambda: screen.session.state == "finished")
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        await pilot.press("i")  # the item browser, on st_0001 (the first item)
        await until(pilot, lambda: type(app.screen).__name__ == "ItemsScreen" and app.screen.view is not None)
        browser = app.screen
        assert browser.current_item_id == "st_0001"
        await pilot.press("p")
        await pilot.pause()
        assert app.screen is browser  # no play screen that only says it cannot play
        assert any("ana already played st_0001 (in human-ana-builtin)" in m for m in messages(app))
        await pilot.press("down", "p")  # an item not played yet opens the play screen
        await until(pilot, lambda: isinstance(app.screen, PlayScreen) and app.screen.session.agent is not None)
        assert app.screen.session.item.id == "st_0002"
