"""A plotext figure drawn in a widget: at the widget's width and as tall as the figure needs, rebuilt when it
resizes, when the theme changes or on new data.

plotext 5 keeps one global figure, so figures are drawn on the main thread only. Their colours are the theme's, or
none at all with a terminal-native (ANSI) theme, where a figure's labels carry what colour would (a bar's sign).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.color import Color, ColorParseError
from textual.widgets import Static

from workbench.tui.host import WorkbenchNode
from workbench.views.scaling import Palette

# which theme variable draws what; a missing or ANSI colour makes the whole figure colourless
PALETTE_VARIABLES = {
    "line": "primary",
    "gain": "success",
    "loss": "error",
    "mark": "accent",
    "shade": "primary-background",
    "pass_at_k": "primary",
    "majority": "accent",
    "pointwise": "secondary",
    "pairwise": "warning",
}


def theme_palette(variables: dict[str, str]) -> Palette | None:
    """RGB of the theme colours the figures use, or None when one is missing or terminal-native (ANSI)."""
    palette: Palette = {}
    for role, name in PALETTE_VARIABLES.items():
        try:
            color = Color.parse(variables[name])
        except (KeyError, ColorParseError):  # a theme without the variable, or not a colour
            return None
        if color.ansi is not None or color.a == 0:
            return None
        palette[role] = color.rgb
    return palette


MIN_PLOT_ROWS = 12  # the plot's height before its figure asks for more (themes/scaling.tcss: 50vh, at least 12)


class PlotView(WorkbenchNode, Static):
    """A plotext figure at this widget's width, as tall as it needs: rebuilt when it resizes, when the theme
    changes, or on new data."""

    def __init__(self, **kwargs: Any):
        super().__init__("", **kwargs)
        self.draw: Callable[[int, int, Palette | None, int], str] | None = None
        self.text = Text("")  # the figure as last built (what is on screen)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, lambda _theme: self.rebuild())

    def show(self, draw: Callable[[int, int, Palette | None, int], str] | None) -> None:
        self.draw = draw
        self.rebuild()

    def on_resize(self) -> None:
        self.rebuild()

    def rebuild(self) -> None:
        """Draw at this widget's width and half the screen's height (at least MIN_PLOT_ROWS), then take the
        figure's own height: a figure grows when its values need more rows to stay apart, up to the screen's
        height (it grew to 70 rows in a 40-row terminal)."""
        width = self.content_size.width
        height = max(MIN_PLOT_ROWS, self.app.size.height // 2)
        if self.draw is None or width < 10:
            self.text = Text("")
        else:
            most = max(MIN_PLOT_ROWS, self.app.size.height)  # the body scrolls: the plot alone fits the screen
            figure = self.draw(width, height, theme_palette(self.app.theme_variables), most)
            self.text = Text.from_ansi(figure, no_wrap=True)
            self.styles.height = len(self.text.plain.splitlines())
        self.update(self.text)
