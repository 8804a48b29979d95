"""Histories as an episode grows them, for the properties of what is kept per message (tests only)."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import strategies as st

# what happens to an episode's history between two turns: turns appended, or the tail replaced in place (a summary)
CHANGES = st.sampled_from(["append", "replace"])


def grown(steps: list[tuple[str, list[dict]]]) -> Iterator[list[dict]]:
    """The one history list, after each change (new dicts every time, as an episode appends them)."""
    messages: list[dict] = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    for what, new in steps:
        if what == "append":
            messages.extend(dict(m) for m in new)
        else:
            messages[2:] = [dict(m) for m in new]
        yield messages
