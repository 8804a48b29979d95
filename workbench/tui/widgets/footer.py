"""The footer of every screen: the screen's keys, `? Help` and `^p palette`, at any width.

At 80 columns the palette hint and a screen's full set of keys do not both fit, and the hint is how a new user
finds every action. So below the app's `-narrow` breakpoint (112 columns) the keys a screen names in
`FOOTER_WIDE_ONLY` (binding ids) give their room to it; `?` lists them with the rest, and they answer as before.
A screen without wide-only keys keeps Textual's own footer.
"""
from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer
try:  # Textual's footer key widget is private: without it the footer is Textual's own, the keys all shown
    from textual.widgets._footer import FooterKey
except ImportError:  # pragma: no cover - a Textual that moved it
    FooterKey = None

WIDE_ONLY = "-wide-only"  # the class themes/workbench.tcss hides on a -narrow screen


class KeysFooter(Footer):
    """Textual's footer, with the keys of the screen's `FOOTER_WIDE_ONLY` binding ids marked `-wide-only`."""

    def compose(self) -> ComposeResult:
        wide_only = getattr(self.screen, "FOOTER_WIDE_ONLY", frozenset())
        ids = {key: active.binding.id for key, active in self.screen.active_bindings.items()}
        for widget in super().compose():
            if FooterKey is not None and isinstance(widget, FooterKey) and ids.get(widget.key) in wide_only:
                widget.add_class(WIDE_ONLY)
            yield widget
