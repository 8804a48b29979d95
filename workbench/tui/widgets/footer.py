"""The footer of every screen: the screen's keys, `? Help` and `^p palette`, at any width.

At 80 columns the palette hint and a screen's full set of keys do not both fit, and the hint is how a new user
finds every action. So below the app's `-narrow` breakpoint (112 columns) the keys a screen names in
`FOOTER_WIDE_ONLY` (binding ids) give their room to it; `?` lists them with the rest, and they answer as before.
Every screen uses it (a screen without wide-only keys draws exactly Textual's footer), for the rebuilds it saves.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer

try:  # Textual's footer key widget is private: without it the footer is Textual's own, the keys all shown
    from textual.widgets._footer import FooterKey

    FOOTER_KEY: type[FooterKey] | None = FooterKey
except ImportError:  # pragma: no cover - a Textual that moved it
    FOOTER_KEY = None

WIDE_ONLY = "-wide-only"  # the class themes/workbench.tcss hides on a -narrow screen
PALETTE_KEY = "-command-palette"  # the class of Textual's `^p palette` key


class KeysFooter(Footer):
    """Textual's footer, with the keys of the screen's `FOOTER_WIDE_ONLY` binding ids marked `-wide-only`, rebuilt
    only when what it shows changes: Textual's rebuilds every key widget on every focus change, though moving between
    widgets that bind the same keys (the fields of a form, the rows of two tables) changes nothing it draws."""

    _drawn: tuple | None = None  # what the footer showed at its last rebuild (`_showing`)

    def bindings_changed(self, screen) -> None:
        rebuilds = screen.app.app_focus and self.is_attached and screen is self.screen  # as Textual's footer decides
        showing = _showing(screen) if rebuilds else None
        if rebuilds and self._bindings_ready and showing == self._drawn:
            return
        if rebuilds:
            self._drawn = showing
        super().bindings_changed(screen)

    def compose(self) -> ComposeResult:
        wide_only: frozenset[str] = getattr(self.screen, "FOOTER_WIDE_ONLY", frozenset())
        ids = {key: active.binding.id for key, active in self.screen.active_bindings.items()}
        for widget in super().compose():
            if FOOTER_KEY is not None and isinstance(widget, FOOTER_KEY):
                if not widget.has_class(PALETTE_KEY):  # Textual binds every key but the palette's to `compact`
                    _born_compact_as(widget, self.compact)
                if ids.get(widget.key) in wide_only:
                    widget.add_class(WIDE_ONLY)
            yield widget


def _born_compact_as(key: FooterKey, compact: bool) -> None:
    """A footer key bound to the footer's `compact` starts with its value already set, as its class. Textual's key
    starts compact and is then bound to the footer's (not compact) value, and each change restyles the mounted key:
    two restyles per key per rebuild, for nothing drawn. The binding still carries later changes of `compact`."""
    key.set_reactive(FooterKey.compact, compact)
    key.set_class(compact, "-compact", update=False)


def _showing(screen) -> tuple:
    """Everything of a screen's active bindings a footer draws: key, action, words, state, tooltip, group."""
    return tuple(
        (
            key,
            b.binding.action,
            b.binding.description,
            b.binding.show,
            b.enabled,
            b.tooltip,
            b.binding.group,
            b.binding.id,
        )
        for key, b in screen.active_bindings.items()
    )
