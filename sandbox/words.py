"""An assistant turn's own words: the provider's reasoning (thinking) text and its content.

The reference logs one text per turn: the reasoning alone, the content alone, or both as
`[thinking] <reasoning>\\n[answer] <content>` (`merge_reasoning`). The store keeps that text as
logged and, beside it, how many of its characters are the reasoning (`reasoning_span`), so a
view can show the two apart and mark the reasoning as such (`split_words`) without storing
the reasoning twice. Steps stored before the span was recorded fall back to the logged marks.
"""

from __future__ import annotations

from dataclasses import dataclass

THINKING = "[thinking] "
ANSWER = "\n[answer] "


def merge_reasoning(content: str | None, reasoning: str | None) -> str | None:
    """The reference's logged text: reasoning alone, content alone, or `[thinking] …\\n[answer] …`."""
    if reasoning and content:
        return f"{THINKING}{reasoning}{ANSWER}{content}"
    return content if content else reasoning


def reasoning_span(text: str | None, reasoning: str | None) -> int:
    """How many characters of the logged `text` are the provider's `reasoning`: 0 when it holds none (or the text is
    not a merge of it: an agent that wrote its own text). Never None, which the store keeps for "not recorded"."""
    if not reasoning or not text:
        return 0
    if text == reasoning or text.startswith(THINKING + reasoning + ANSWER):
        return len(reasoning)
    return 0


@dataclass(frozen=True)
class Words:
    """One assistant turn's text split into what the provider returned as reasoning and as content."""

    reasoning: str
    content: str


def split_words(text: str | None, span: int | None) -> Words:
    """The reasoning and content of a logged assistant text, given its stored `reasoning_span` (0: no reasoning;
    None: not recorded, a step stored before it was, when the reference's `[thinking] … [answer] …` marks are read
    instead)."""
    text = text or ""
    if span:
        if len(text) == span:
            return Words(text, "")
        if text.startswith(THINKING) and text[len(THINKING) + span :].startswith(ANSWER):
            return Words(text[len(THINKING) : len(THINKING) + span], text[len(THINKING) + span + len(ANSWER) :])
    if span is None and text.startswith(THINKING) and ANSWER in text:
        reasoning, _, content = text[len(THINKING) :].partition(ANSWER)
        return Words(reasoning, content)
    return Words("", text)
