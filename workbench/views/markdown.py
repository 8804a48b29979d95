"""A Markdown table from rows of cells: the CLI's `--format markdown` and the panel's export write the same."""

from __future__ import annotations

from collections.abc import Sequence


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """The rows under their header as a Markdown table (a `|` in a cell escaped)."""

    def esc(cell: object) -> str:
        return str(cell).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"
