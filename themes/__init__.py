"""The workbench's Textual themes (pure data) and where its stylesheets live.

Every colour the app uses comes from a theme: the `.tcss` files beside this module use
theme variables only ($primary, $success, $warning, $error, $panel, ...), so any
Textual theme (built-in, ANSI, or these two) restyles the whole app.
"""
from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

STYLESHEETS_DIR = Path(__file__).parent

AGENTHOP_DARK = Theme(
    name="agenthop-dark",
    primary="#5FA8D3",
    secondary="#9D8CD9",
    accent="#F2B35E",
    warning="#E6B450",
    error="#E5646B",
    success="#7BC67B",
    foreground="#D8DEE9",
    background="#14181F",
    surface="#1B2029",
    panel="#262D3A",
    dark=True,
    variables={
        "footer-key-foreground": "#F2B35E",
        "block-cursor-text-style": "bold",
    },
)

AGENTHOP_LIGHT = Theme(
    name="agenthop-light",
    primary="#1F6FA8",
    secondary="#6B55C2",
    accent="#B5650D",
    warning="#A66A00",
    error="#C0343C",
    success="#2E7D32",
    foreground="#1E2430",
    background="#F6F7F9",
    surface="#ECEEF2",
    panel="#DCE1E8",
    dark=False,
    variables={
        "footer-key-foreground": "#B5650D",
        "block-cursor-text-style": "bold",
    },
)

THEMES: tuple[Theme, ...] = (AGENTHOP_DARK, AGENTHOP_LIGHT)
DEFAULT_THEME = AGENTHOP_DARK.name
LIGHT_THEME = AGENTHOP_LIGHT.name
# Names users may type for Textual's terminal-native ANSI themes.
ALIASES: dict[str, str] = {"textual-ansi": "ansi-dark", "ansi": "ansi-dark"}
STYLESHEETS: tuple[str, ...] = ("workbench.tcss", "runs.tcss", "launch.tcss", "live.tcss", "stepper.tcss",
                                "diagnostics.tcss", "help.tcss", "scaling.tcss", "audit.tcss",
                                "compare.tcss", "items.tcss", "play.tcss")
