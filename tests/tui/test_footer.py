"""The footer every screen shows (`KeysFooter`): rebuilt when what it draws changes, and only then."""
from __future__ import annotations

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Input, Static

from tui_support import until
from workbench.tui.widgets.footer import KeysFooter


class Extra(Static, can_focus=True):
    BINDINGS = [Binding("x", "app.noop", "Extra", id="footer-test.extra")]


class TwoFields(App):
    BINDINGS = [Binding("ctrl+s", "noop", "Save", id="footer-test.save")]

    def compose(self) -> ComposeResult:
        yield Input(id="a")
        yield Input(id="b")
        yield Extra("extra", id="extra")
        yield KeysFooter()

    def action_noop(self) -> None:
        pass


def keys(footer: KeysFooter) -> list[str]:
    return [k.key for k in footer.query("FooterKey")]


async def test_moving_between_fields_that_bind_the_same_keys_keeps_the_footer_and_a_new_key_rebuilds_it():
    """Textual rebuilds every footer key on every focus change; between two fields that bind the same keys nothing
    the footer draws changes, so nothing is rebuilt. A widget with a key of its own still gets it shown."""
    app = TwoFields()
    async with app.run_test(size=(100, 8)) as pilot:
        footer = app.query_one(KeysFooter)
        app.query_one("#a").focus()
        await until(pilot, lambda: "ctrl+s" in keys(footer))
        drawn = list(footer.children)
        app.query_one("#b").focus()
        for _ in range(5):
            await pilot.pause()
        assert list(footer.children) == drawn  # the same key widgets: not rebuilt
        app.query_one("#extra").focus()
        await until(pilot, lambda: "x" in keys(footer))
        assert "ctrl+s" in keys(footer)
        app.query_one("#a").focus()
        await until(pilot, lambda: "x" not in keys(footer))
