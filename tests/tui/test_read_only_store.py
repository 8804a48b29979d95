"""A store the TUI cannot write (issue 44): the app opens it for reading, and each write says which file and why in
the words the CLI uses, instead of the raw `OperationalError` (or a crash, in the audit screen)."""

from __future__ import annotations

from textual.widgets import DataTable, Input, Static
from tui_support import make_app

from sandbox.datasets import open_dataset
from tests.textual_private import notifications
from tests.unwritable import unwritable
from workbench.tui.screens.audit import AuditScreen

SIZE = (120, 36)


async def test_a_read_only_store_is_listed_and_a_rename_or_a_tag_says_why_it_cannot_be_written(seeded):
    with unwritable(seeded) as why:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            screen = app.screen
            assert screen.query_one(DataTable).row_count == 4  # read as before
            for key, value in (("r", "renamed"), ("t", "mine, open-frontier")):
                await pilot.press(key)
                await pilot.pause()
                app.screen.query_one(Input).value = value
                await pilot.press("enter")
                await pilot.pause()
            shown = [n.message for n in notifications(app) if n.severity == "error"]
            assert len(shown) == 2, shown
            assert all(str(seeded) in m and "cannot be written" in m and why in m for m in shown), shown
            assert "OperationalError" not in " ".join(shown)


async def test_an_audit_verdict_on_a_read_only_store_says_why_and_keeps_the_draft(seeded, builtin_cache):
    corpus, _ = open_dataset("builtin", builtin_cache)
    with unwritable(seeded) as why:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            app.push_screen(AuditScreen(corpus, seeded, "ana", dataset="builtin"))
            await pilot.pause()
            await pilot.pause()
            screen = app.screen
            screen.query_one("#audit-note", Input).value = "odd wording"
            await pilot.press("f")
            await pilot.pause()
            message = str(screen.query_one("#audit-message", Static).render())
            assert "cannot be written" in message and why in message, message
            assert screen.query_one("#audit-note", Input).value == "odd wording"
    corpus.close()
