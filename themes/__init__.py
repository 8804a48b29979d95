"""The workbench's Textual themes (pure data) and where its stylesheets live.

Every colour the app uses comes from a theme: the `.tcss` files beside this module use
theme variables only ($primary, $success, $warning, $error, $panel, ...), so any
Textual theme (built-in, ANSI, or these two) restyles the whole app.
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

STYLESHEETS_DIR = Path(__file__).parent

# One row per colour role: the dark theme's value, then the light theme's. Side by side, so a
# change to one role is made (and its contrast judged) in both themes at once.
_PALETTE: dict[str, tuple[str, str]] = {
    "primary": ("#5FA8D3", "#1F6FA8"),
    "secondary": ("#9D8CD9", "#6B55C2"),
    "accent": ("#F2B35E", "#B5650D"),
    "warning": ("#E6B450", "#A66A00"),
    "error": ("#E5646B", "#C0343C"),
    "success": ("#7BC67B", "#2E7D32"),
    "foreground": ("#D8DEE9", "#1E2430"),
    "background": ("#14181F", "#F6F7F9"),
    "surface": ("#1B2029", "#ECEEF2"),
    "panel": ("#262D3A", "#DCE1E8"),
}


def _theme(name: str, dark: bool) -> Theme:
    """One of the two themes from its column of the palette; footer keys take the accent colour."""
    colours = {role: pair[0 if dark else 1] for role, pair in _PALETTE.items()}
    return Theme(
        name=name,
        dark=dark,
        primary=colours["primary"],
        secondary=colours["secondary"],
        accent=colours["accent"],
        warning=colours["warning"],
        error=colours["error"],
        success=colours["success"],
        foreground=colours["foreground"],
        background=colours["background"],
        surface=colours["surface"],
        panel=colours["panel"],
        variables={"footer-key-foreground": colours["accent"], "block-cursor-text-style": "bold"},
    )


AGENTHOP_DARK = _theme("agenthop-dark", dark=True)
AGENTHOP_LIGHT = _theme("agenthop-light", dark=False)

THEMES: tuple[Theme, ...] = (AGENTHOP_DARK, AGENTHOP_LIGHT)
DEFAULT_THEME = AGENTHOP_DARK.name
LIGHT_THEME = AGENTHOP_LIGHT.name
# Names users may type for Textual's terminal-native ANSI themes.
ALIASES: dict[str, str] = {"textual-ansi": "ansi-dark", "ansi": "ansi-dark"}
STYLESHEETS: tuple[str, ...] = (
    "workbench.tcss",
    "runs.tcss",
    "launch.tcss",
    "live.tcss",
    "stepper.tcss",
    "diagnostics.tcss",
    "help.tcss",
    "scaling.tcss",
    "audit.tcss",
    "compare.tcss",
    "items.tcss",
    "play.tcss",
)
