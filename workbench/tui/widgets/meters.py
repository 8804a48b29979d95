"""Budget meters: points of budget, turns of max turns, tokens of the token cap.

A meter is ok below 70% of its cap, warning from 70%, error from 90% (theme variables
$success / $warning / $error; the widget switches CSS classes, table cells take the
theme's colours).
"""

from __future__ import annotations

from rich.style import Style
from rich.text import Text
from textual.color import Color, ColorParseError
from textual.reactive import reactive
from textual.widgets import Static

WARN_AT = 0.70
ERROR_AT = 0.90
LEVEL_VARIABLE = {"ok": "success", "warn": "warning", "over": "error"}


def level(used: float, cap: float) -> str:
    """`ok`, `warn` (≥ 70% of the cap) or `over` (≥ 90%)."""
    if cap <= 0:
        return "over" if used > 0 else "ok"
    share = used / cap
    if share >= ERROR_AT:
        return "over"
    if share >= WARN_AT:
        return "warn"
    return "ok"


def amount(value: int, unit: str = "") -> str:
    """Compact count: 950, 41K, 1.2M."""
    if unit == "tokens":
        if value >= 1_000_000:
            return f"{value / 1_000_000:.1f}M"
        if value >= 10_000:
            return f"{value // 1000}K"
        if value >= 1000:
            return f"{value / 1000:.1f}K"
    return f"{value}"


def bar(used: float, cap: float, width: int) -> tuple[str, str]:
    """(filled, empty) parts of a bar `width` cells wide, with eighth-cell resolution."""
    width = max(1, width)
    share = 0.0 if cap <= 0 else min(1.0, max(0.0, used / cap))
    eighths = round(share * width * 8)
    full, part = divmod(eighths, 8)
    filled = "█" * full + ("" if part == 0 or full >= width else " ▏▎▍▌▋▊▉"[part])
    return filled, "░" * (width - len(filled))


# A cap at least this large is no cap: a token-axis sweep lifts the token cap to 10**12 (the level's context budget
# bounds it instead, `workbench.service.scaling.sequential_specs`); a meter says so rather than `50K/1000000.0M`.
NO_CAP = 10**12


def meter_text(used: int, cap: int, width: int = 12, unit: str = "", style: Style | None = None) -> Text:
    """A bar and `used/cap` (`used · no cap` when the cap is lifted); `style` (from a theme colour) styles the bar,
    else the widget's colour applies."""
    filled, empty = bar(used, cap, width)
    style = style or Style()
    text = Text()
    text.append(filled, style=style)
    text.append(empty, style=style + Style(dim=True))
    text.append(f" {amount(used, unit)} · no cap" if cap >= NO_CAP else f" {amount(used, unit)}/{amount(cap, unit)}")
    return text


def theme_style(app, variable: str) -> Style:
    """A Rich style with the current theme's colour `variable` (e.g. "success"); empty when unknown."""
    try:
        value = app.theme_variables.get(variable)
        return Style(color=Color.parse(value).rich_color) if value else Style()
    except (AttributeError, ColorParseError):  # no app yet, or a value that is not a colour
        return Style()


def level_style(app, lvl: str) -> Style:
    return theme_style(app, LEVEL_VARIABLE[lvl])


class Meter(Static):
    """One labelled meter; CSS classes -ok / -warn / -over carry the colour."""

    used: reactive[int] = reactive(0)
    cap: reactive[int] = reactive(1)

    def __init__(self, label: str, cap: int = 1, unit: str = "", bar_width: int = 20, **kwargs):
        super().__init__("", **kwargs)
        self.label = label
        self.unit = unit
        self.bar_width = bar_width
        self.set_reactive(Meter.cap, cap)
        self.measured = True
        self.add_class("-ok")

    def on_mount(self) -> None:
        self._restyle()

    def show(self, used: int, cap: int | None = None, measured: bool = True) -> None:
        """The reading; with `measured` False (a scripted agent's tokens) a dash and "not measured" instead."""
        if cap is not None:
            self.cap = cap
        if measured != self.measured:
            self.measured = measured
            self._restyle()
        self.used = used

    def watch_used(self) -> None:
        self._restyle()

    def watch_cap(self) -> None:
        self._restyle()

    def _restyle(self) -> None:
        lvl = level(self.used, self.cap)
        for name in ("ok", "warn", "over"):
            self.set_class(name == lvl, f"-{name}")
        self.update(self.render_text())

    def render_text(self) -> Text:
        text = Text(f"{self.label:<7}", style="bold")
        if not self.measured:
            text.append("— not measured (no model called)", style="dim")
            return text
        text.append_text(meter_text(self.used, self.cap, self.bar_width, self.unit))
        return text

    @property
    def reading(self) -> tuple[int, int, str]:
        """(used, cap, level): what the meter shows, for tests and copy."""
        return self.used, self.cap, level(self.used, self.cap)
