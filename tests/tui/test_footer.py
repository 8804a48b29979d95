"""The footer every screen shows (`KeysFooter`): rebuilt when what it draws changes, and only then."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input, Static
from tui_support import until

from workbench.tui.widgets.footer import KeysFooter


class Extra(Static, can_focus=True):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("x", "app.noop", "Extra", id="footer-test.extra")]


class TwoFields(App):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+s", "noop", "Save", id="footer-test.save")]

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


async def test_a_rebuilt_footer_does_not_restyle_its_keys_one_by_one(monkeypatch):
    """Textual's footer keys start compact and are then bound to the footer's (not compact) value: each key was
    restyled twice after every rebuild, for nothing drawn. They now start as the footer is; the binding still
    carries a change of the footer's `compact` to every key."""
    restyled: list[str] = []
    update_styles = App.update_styles

    def counting(self, node, animate=True):
        restyled.append(type(node).__name__)
        return update_styles(self, node, animate)

    monkeypatch.setattr(App, "update_styles", counting)
    app = TwoFields()
    async with app.run_test(size=(100, 8)) as pilot:
        footer = app.query_one(KeysFooter)
        app.query_one("#a").focus()
        await until(pilot, lambda: "ctrl+s" in keys(footer))
        restyled.clear()
        app.query_one("#extra").focus()  # a key of its own: the footer is rebuilt
        await until(pilot, lambda: "x" in keys(footer))
        for _ in range(3):
            await pilot.pause()
        assert restyled.count("FooterKey") <= 1  # the palette key's own start (Textual's, not bound to the footer)
        palette = footer.query_one(".-command-palette")
        assert palette.has_class("-compact")  # as in Textual's footer
        assert not any(k.has_class("-compact") for k in footer.query("FooterKey") if k is not palette)
        footer.compact = True
        await until(pilot, lambda: all(k.has_class("-compact") for k in footer.query("FooterKey")))
