"""Writing to stdout, whatever the command: the console (wide and trimmed when piped), JSON, CSV, Markdown, a
table of text cells, the rows a figure may take and whether to colour it."""

from __future__ import annotations

import json
import sys
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


def console() -> Console:
    """stdout; wide when it is not a terminal, so piped tables are not squeezed to 80 columns, and without the
    spaces Rich pads a table's lines with (a diff or a `grep ' $'` of piped output saw them)."""
    if sys.stdout.isatty():
        return Console(file=sys.stdout, highlight=False, soft_wrap=False)
    trimmed = TrimmedLines(sys.stdout)
    # Rich annotates `file` as IO[str] but only writes to it and flushes it, which TrimmedLines does
    return Console(file=trimmed, highlight=False, soft_wrap=False, width=200)  # type: ignore[arg-type]  # see above


class TrimmedLines:
    """A text stream that drops the spaces before each line's end: spaces are held back until something other
    than a line end follows them."""

    def __init__(self, out: Any):
        self.out = out
        self.held = ""

    def write(self, text: str) -> int:
        import re

        whole = self.held + text
        kept = whole.rstrip(" ")
        self.held = whole[len(kept) :]
        self.out.write(re.sub(r" +\n", "\n", kept))
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def isatty(self) -> bool:
        return False

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, …: the stream's own
        return getattr(self.out, name)


def on_terminal() -> bool:
    """stdout is a terminal (not a pipe or a file)."""
    return sys.stdout.isatty()


PIPED_FIGURE_ROWS = 20  # a figure's most rows off a terminal: a page of a pager, a screenful of a log


def figure_rows(asked: int) -> tuple[int, int]:
    """(rows a figure is drawn at, the most it may take): `asked` and the terminal's height less two rows (the
    prompt, the command), or PIPED_FIGURE_ROWS when not on a terminal. The figures grew to 70-75 rows to keep
    close values apart, taller than the terminal, and as tall when piped."""
    import shutil

    most = max(12, shutil.get_terminal_size().lines - 2) if on_terminal() else PIPED_FIGURE_ROWS
    return min(asked, most), most


def use_color() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    import os

    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def print_json(obj: Any, strict: bool = False) -> None:
    """JSON on stdout. `strict` refuses non-JSON types (a numpy bool would otherwise print as the truthy
    string "False"): the scaling outputs are plain Python by construction, so a stray type is our bug."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=None if strict else str) + "\n")


def csv_text(rows: Sequence[Sequence[Any]], header: Sequence[str]) -> str:
    """The rows under their header as CSV text."""
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def cells_table(
    title: str | None, columns: Sequence[str], rows: Iterable[Iterable[str]], left: Collection[int] = ()
) -> Table:
    """A table of text cells under a left-justified title: columns right-justified but those at `left`."""
    table = Table(title=None if title is None else Text(title), title_justify="left")
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i in left else "right")
    for row in rows:
        table.add_row(*map(Text, row))
    return table
