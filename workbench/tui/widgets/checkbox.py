"""The app's checkbox: its state is in the glyph, not only in the colour.

Textual's Checkbox draws `▐X▌` whether checked or not and tells the states apart by the X's
colour alone (grey 249 against 238): unreadable with NO_COLOR, and a tester read an unchecked
box as checked in the dark theme. Here the inside is an X when checked and a space when not.
Every checkbox in the workbench is this one (a test holds the source to it).
"""

from __future__ import annotations

from textual.widgets import Checkbox as TextualCheckbox


class Checkbox(TextualCheckbox):
    """A Checkbox whose inside shows its value: `▐X▌` checked, `▐ ▌` unchecked."""

    @property
    # Textual declares BUTTON_INNER a plain class attribute; read per value here, it is a property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]  # a property over Textual's class attribute
        return "X" if self.value else " "
