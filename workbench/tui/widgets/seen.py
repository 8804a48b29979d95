"""Completion from what a player has been shown (`workbench.tui.forms.seen.Seen`): paper ids and section aliases,
never the item's neighbourhood, so it saves typing 40-character ids without giving anything away."""

from __future__ import annotations

from textual.suggester import Suggester


class SeenSuggester(Suggester):
    """Completes a paper id (or a section alias) from what was seen; case-insensitive prefix match."""

    def __init__(self, candidates):
        super().__init__(use_cache=False, case_sensitive=False)
        self.candidates = candidates  # a callable returning the current candidates

    async def get_suggestion(self, value: str) -> str | None:
        """The first longer candidate `value` starts, unless `value` is a candidate itself: enter takes what is
        shown, and a typed alias `A` must not become `AB`."""
        candidates = list(self.candidates())
        if any(candidate.casefold() == value for candidate in candidates):
            return None
        for candidate in candidates:
            if candidate.casefold().startswith(value) and len(candidate) > len(value):
                return candidate
        return None
