"""A name clipped to a width in terminal cells, its middle elided: the CLI's tables and the TUI's lists clip names
alike. Measured by Rich's cell widths (a wide character takes two), so kept apart from `workbench.views.cells`:
the cells word values without Rich, and the TUI's form models word their notes with them (`forms-plain`)."""

from __future__ import annotations

from rich.cells import cell_len, chop_cells


def clip_middle(text: str, limit: int) -> str:
    """`text` in at most `limit` cells, its middle elided: names that differ at the end (`…-builtin-2`,
    `…-builtin-3`) stay told apart, where clipping the end showed three runs alike (`openai_fake-model-…`)."""
    if limit <= 0:
        return ""
    if cell_len(text) <= limit:
        return text
    if limit == 1:
        return "…"
    head = chop_cells(text, (limit - 1) - (limit - 1) // 2)[0]
    tail, room = "", (limit - 1) // 2
    for ch in reversed(text):
        if cell_len(ch + tail) > room:
            break
        tail = ch + tail
    return head + "…" + tail
