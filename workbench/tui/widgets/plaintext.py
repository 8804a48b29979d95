"""Untrusted text (model replies, tool results, dataset strings) made safe to put on screen.

Nothing here parses markup: callers wrap the results in `rich.text.Text` or Segments.
Control characters (escape sequences, NUL, carriage returns) are replaced so that a
model's output can never drive the terminal.
"""

from __future__ import annotations

import os
from pathlib import Path

from rich.cells import cell_len, chop_cells
from rich.text import Text

_CONTROL: dict[int, str | None] = {c: "\ufffd" for c in range(0x20) if c not in (0x09, 0x0A)}
_CONTROL.update({0x7F: "\ufffd", 0x0D: None})
TAB = "    "


def sanitize(text: str | None) -> str:
    """Printable text: tabs expanded, CR dropped, other control characters shown as U+FFFD."""
    if not text:
        return ""
    return text.translate(_CONTROL).replace("\t", TAB)


def plain(text: str | None, style: str = "") -> Text:
    """A Text holding `text` literally (square brackets and all)."""
    return Text(sanitize(text), style=style)


def one_line(text: str | None, limit: int = 80) -> str:
    """The text on one line, cut to `limit` cells with an ellipsis."""
    flat = " ".join(sanitize(text).split())
    return clip(flat, limit)


def clip(text: str, limit: int) -> str:
    if limit <= 0:
        return ""
    if cell_len(text) <= limit:
        return text
    return chop_cells(text, max(1, limit - 1))[0] + "…"


def clip_middle(text: str, limit: int) -> str:
    """`text` in at most `limit` cells, its middle elided (`views.clip.clip_middle`, the CLI's tables' too)."""
    from workbench.views.clip import clip_middle as clipped

    return clipped(text, limit)


def wrap(text: str, width: int) -> list[str]:
    """Wrap sanitised text to `width` cells: at spaces where possible, hard breaks otherwise. Linear time."""
    width = max(1, width)
    out: list[str] = []
    for line in text.split("\n"):
        if not line:
            out.append("")
            continue
        if line.isascii():
            rest = line
            while len(rest) > width:
                cut = rest.rfind(" ", width // 2, width + 1)
                if cut <= 0:
                    out.append(rest[:width])
                    rest = rest[width:]
                else:
                    out.append(rest[:cut])
                    rest = rest[cut + 1 :]
            out.append(rest)
        else:
            out.extend(_wrap_cells(line, width))
    return out


def _wrap_cells(line: str, width: int) -> list[str]:
    """One line holding wide or non-ASCII characters wrapped to `width` cells, at spaces where possible (a model's
    text with a dash or a curly quote reads as words too). Each cut looks only a window ahead: linear time."""
    out: list[str] = []
    while True:
        window = line[: 2 * width + 2]
        # (a wide character in a narrower width: alone on its line)
        head = (chop_cells(window, width)[0] or window[0]) if cell_len(window) > width else window
        if len(head) == len(line):
            out.append(line)
            return out
        cut = len(head) if line[len(head)] == " " else head.rfind(" ", len(head) // 2) if len(head) > 1 else -1
        if cut <= 0:
            out.append(head)
            line = line[len(head) :]
        else:
            out.append(line[:cut])
            line = line[cut + 1 :]


def wrap_head(text: str, width: int, n: int) -> tuple[list[str], bool]:
    """The first `n` lines of `wrap(text, width)` and whether more follow, wrapping only a prefix of `text`.

    A folded 70K-character tool result shows three lines: wrapping all of it (2 s for twenty such steps, most
    of it in `chop_cells` when the text holds a U+FFFD) only to draw them made the stepper lag. A line of
    the wrap depends on the text up to `width` cells past its start, so when the prefix wraps to more than `n`
    lines, its first `n` are those of the whole text; otherwise the prefix doubles."""
    size = (n + 2) * (max(1, width) + 1) * 2
    while True:
        lines = wrap(text[:size], width)
        if size >= len(text):
            return lines[:n], len(lines) > n
        if len(lines) > n:
            return lines[:n], True
        size *= 2


def display_path(path: Path | str) -> str:
    """A path as a user would like to read it: relative to the working directory when inside it, else with ~."""
    p = Path(path)
    try:
        resolved = p.expanduser().resolve()
    except OSError:
        return str(p)
    try:
        return str(resolved.relative_to(Path.cwd().resolve()))
    except ValueError:
        pass
    home = os.path.expanduser("~")
    text = str(resolved)
    if home and home != "/" and text.startswith(home + os.sep):
        return "~" + text[len(home) :]
    return text
