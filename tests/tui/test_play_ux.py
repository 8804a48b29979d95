"""The play screen as a person meets it at 80 columns: refusals are said, lists show where enter lands, the leave
dialog says what was seen, the hints and the footer fit."""

from __future__ import annotations

from play_support import act, start, until
from textual.widgets import Footer, Input
from tui_support import make_app

from tests.textual_private import messages
from workbench.tui.forms.tool_call import ANSWER_RULE, TOOLS
from workbench.tui.screens.dialogs import LeaveModal
from workbench.tui.screens.runs import RunsScreen

NARROW = (80, 30)


async def test_a_refused_answer_says_why(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await pilot.press("s", "E")
        await until(pilot, lambda: ANSWER_RULE in messages(app))  # one pause was too few on a loaded machine
        assert screen.query_one("#arg-answer", Input).value == "" and ANSWER_RULE in messages(app)
        app.clear_notifications()
        await pilot.press("enter")
        await until(pilot, lambda: ANSWER_RULE in messages(app))
        assert ANSWER_RULE in messages(app) and screen.session.steps == [] and screen.session.tool == "submit_answer"


async def test_leaving_before_any_tool_call_is_not_called_resumed(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await pilot.press("escape", "escape")  # the item in full (80 columns) back to the transcript, then leave
        await pilot.pause()
        assert isinstance(app.screen, LeaveModal)
        text = app.screen.message
        assert "no tool call" in text and "resumed" not in text
        await pilot.press("l")
        await until(pilot, lambda: isinstance(app.screen, RunsScreen))
        screen = await start(pilot, app, ["st_0001"])  # the same item again: a fresh play, not marked
        assert screen.session.plan.mark("st_0001") is None
        await act(pilot, screen, "1", "enter")
        await pilot.press("escape")
        await pilot.pause()
        assert "marked 'resumed' (you have seen tool results)" in str(app.screen.message)


async def test_hints_placeholders_and_esc_fit_at_80_columns(seeded, monkeypatch):
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=NARROW) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        footer = screen.query_one(Footer)
        await until(pilot, lambda: any(k.key == "escape" and k.region.width for k in footer.query("FooterKey")))
        esc = [k for k in footer.query("FooterKey") if k.key == "escape"]  # the footer composes its keys a frame late
        assert esc and esc[0].region.right <= footer.region.right and esc[0].region.width > 0
        for key, tool, _, fields in TOOLS:
            await pilot.press(key)
            await pilot.pause()
            title = screen.query_one("#form-title")
            assert len(str(title.render())) <= title.content_size.width, tool
            for name in fields:
                box = screen.query_one(f"#arg-{name}", Input)
                assert len(box.placeholder) < box.content_size.width, (tool, name)
            await pilot.press("escape")
        gold = "ABCD"[screen.session.item.correct_index]
        await act(pilot, screen, "s", gold, "enter")
        await until(pilot, lambda: screen.session.state in ("reveal", "finished"))
        hint = screen.query_one("#reveal-hint")
        assert 0 < len(str(hint.render())) <= hint.content_size.width


SMALL = (80, 24)


def _visible_item_text(screen) -> str:
    """The item pane's text as the player sees it: the rows of the question's Static inside the pane's scroll
    window (its region on screen and its scroll offset), whitespace collapsed so wrapped lines join up."""
    from textual.geometry import Region

    pane, text = screen.query_one("#play-item"), screen.query_one("#play-item-text")
    if not pane.display or pane.region.height == 0:
        return ""
    assert pane.region.bottom <= SMALL[1] - 1 and pane.region.right <= SMALL[0]  # above the key footer
    lines = text.render_lines(Region(0, 0, text.size.width, text.size.height))
    top = int(pane.scroll_offset.y)
    window = lines[top : top + pane.scrollable_content_region.height]
    return " ".join(" ".join(strip.text.split()) for strip in window)


async def test_the_whole_item_is_in_view_when_deciding_at_80x24(seeded, builtin_cache, monkeypatch):
    """On the longest built-in question, at 80×24: the question and all four options are on screen unscrolled
    when an item begins, while the answer is typed, and on `i`; a tool form brings the transcript back."""
    from sandbox.datasets import open_dataset
    from workbench.tui.widgets.plaintext import sanitize

    corpus, _ = open_dataset("builtin", builtin_cache)
    item = max(corpus.items, key=lambda it: len(it.question))
    corpus.close()
    wanted = [" ".join(sanitize(item.question).split())] + [" ".join(sanitize(o).split()) for o in item.options]

    def all_in_view(screen) -> bool:
        seen = _visible_item_text(screen)
        return all(part in seen for part in wanted)

    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=SMALL) as pilot:
        screen = await start(pilot, app, [item.id])
        await pilot.pause()
        assert all_in_view(screen)  # the item begins: read in full before the first call
        await pilot.press("1")
        await pilot.pause()
        transcript = screen.query_one("#play-transcript")
        assert transcript.display and transcript.region.height >= 5  # a tool's form: the transcript is back
        await pilot.press("enter")
        await until(pilot, lambda: len(screen.session.steps) >= 1 and screen.session.agent.waiting)
        await pilot.pause()
        await pilot.press("s")  # answering: the options beside the answer field
        await pilot.pause()
        answer = screen.query_one("#arg-answer", Input)
        assert all_in_view(screen) and screen.focused is answer
        assert 0 < answer.region.bottom <= SMALL[1] - 1 and answer.region.height == 1
        await pilot.press("escape", "i")  # the item pane on i: whole again
        await pilot.pause()
        assert all_in_view(screen) and screen.focused is screen.query_one("#play-item")
        await pilot.press("escape")  # back to the transcript, not out of the item
        await pilot.pause()
        assert app.screen is screen and transcript.display and screen.focused is transcript
