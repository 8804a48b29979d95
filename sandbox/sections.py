"""Section aliases, header normalisation and the reference's section-argument resolution (docs/protocol.md#rules).

`norm` and `resolve` are the reference's tool behaviour (what the agent's argument resolves to) and never
change. Label resolution (which section an auditor's label means) follows the authors' audit pipeline
instead (docs/protocol.md "Section labels": `resolve_label`), versioned by `LABEL_RESOLUTION`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

_ALIAS = re.compile(r"^\(?([A-Z]{1,3})\)?$")
_APDX_LETTER = re.compile(r"^apdx_[a-z][\d.]*:\s*")
_APDX = re.compile(r"^apdx:\s*")
_ROMAN = re.compile(r"^[ivxlc]+(-[a-z])?\s+")
_NUMBER = re.compile(r"^[\d.]+\s*")
_PUNCT = re.compile(r"[:\-–—]")
_SPACE = re.compile(r"\s+")


def alias(index: int) -> str:
    """Bijective base-26 alias: 0→A, 25→Z, 26→AA, 27→AB, 701→ZZ, 702→AAA."""
    letters = []
    n = index + 1
    while n > 0:
        n, rem = divmod(n - 1, 26)
        letters.append(chr(ord("A") + rem))
    return "".join(reversed(letters))


def alias_index(text: str) -> int:
    """Inverse of `alias` for an upper-case letter string."""
    n = 0
    for ch in text:
        n = n * 26 + (ord(ch) - ord("A") + 1)
    return n - 1


def norm(header: str, roman: re.Pattern[str] = _ROMAN) -> str:
    """The reference's header normalisation, step by step, in its order (`roman`: the leading roman-numeral
    prefix it strips; the audit pipeline's is looser, see `label_norm`)."""
    h = header.lower().strip()
    h = _APDX_LETTER.sub("", h, count=1)
    h = _APDX.sub("", h, count=1)
    h = roman.sub("", h, count=1)
    h = _NUMBER.sub("", h, count=1)
    h = _PUNCT.sub(" ", h)
    return _SPACE.sub(" ", h).strip()


def resolve(query: str, headers: Sequence[str]) -> int | None:
    """Index of the section `query` names, or None (missing and ambiguous look the same, as in the reference).

    Order: alias, exact header (case-insensitive), normalised exact, unique raw
    substring, unique normalised substring. `query` must be a string; anything else
    raises AttributeError, which the tool layer reports as an invalid parameter.
    """
    q = query.strip()
    if not q:
        return None
    for step in (_by_alias, _by_header, _by_normalised_header, _by_unique_substring, _by_unique_normalised_substring):
        idx = step(q, headers)
        if idx is not None:
            return idx
    return None


def _by_alias(q: str, headers: Sequence[str]) -> int | None:
    """The section a letter alias (`A`, `B`, …) names, when there is one that far down."""
    m = _ALIAS.match(q.upper())
    if m is None:
        return None
    idx = alias_index(m.group(1))
    return idx if idx < len(headers) else None


def _by_header(q: str, headers: Sequence[str]) -> int | None:
    """The first header equal to the query, case aside."""
    ql = q.lower()
    return next((i for i, h in enumerate(headers) if h.strip().lower() == ql), None)


def _by_normalised_header(q: str, headers: Sequence[str]) -> int | None:
    """The first header equal to the query once both are normalised (`norm`); none for a query that normalises away."""
    nq = norm(q)
    return next((i for i, h in enumerate(headers) if norm(h) == nq), None) if nq else None


def _by_unique_substring(q: str, headers: Sequence[str]) -> int | None:
    """The one header the query is part of, case aside (none when several are)."""
    ql = q.lower()
    return _only([i for i, h in enumerate(headers) if ql in h.lower()])


def _by_unique_normalised_substring(q: str, headers: Sequence[str]) -> int | None:
    """The one normalised header the normalised query is part of (none when several are)."""
    nq = norm(q)
    return _only([i for i, h in enumerate(headers) if nq in norm(h)]) if nq else None


def _only(hits: list[int]) -> int | None:
    """The single hit, or None for none or several."""
    return hits[0] if len(hits) == 1 else None


# ---------------------------------------------------------------- label resolution (docs/protocol.md "Section labels")

# The version of the label rules below. Recall flags are computed from resolved section indices, so a change
# here changes numbers: the corpus cache is keyed by it and stored runs are recomputed under it.
# 1: exact → normalised → unique substring → a heading line in a section's body (before versions were recorded)
# 2: the authors' audit pipeline: exact → normalised → unique substring either direction → word overlap → the
#    label anywhere in a section's body, heading-like occurrences first
LABEL_RESOLUTION = "2"
UNVERSIONED_RESOLUTION = "1"  # what a run stored before versions were recorded was computed with


def run_resolution(run: Mapping[str, Any]) -> str:
    """The label-resolution version a stored run's section-recall flags were computed under."""
    return run.get("label_resolution") or UNVERSIONED_RESOLUTION


def is_stale(run: Mapping[str, Any]) -> bool:
    """Whether a run's flags were computed under other label rules than the current ones (checked by the TUI at
    start-up, so it lives here, where importing it costs nothing)."""
    return run_resolution(run) != LABEL_RESOLUTION


# Each step's method name, in rule order; `unresolved` and `unknown_paper` (no text for the paper) besides.
LABEL_METHODS = ("exact", "normalised", "substring", "word_overlap", "body_heading", "body_text")

_L_ROMAN = re.compile(r"^[ivxlc]+-?[a-z]?\s+")  # the pipeline's form: hyphen and letter each optional
_MIN_BODY_LABEL = 5  # a normalised label shorter than this is never looked for in body text (the pipeline's)
_OVERLAP_WORDS = 2
_OVERLAP_SHARE = 0.6


def label_norm(header: str) -> str:
    """The audit pipeline's header normalisation (`normalize_header`): as `norm`, except that a leading roman
    token may carry a letter without a hyphen (`IIIB `), as the pipeline's pattern allows."""
    return norm(header, _L_ROMAN)


def resolve_label(label: str, headers: Sequence[str], bodies: Sequence[str]) -> tuple[int | None, str]:
    """Resolve an auditor's label to a top-level section: (index or None, method), by the rules of
    docs/protocol.md#section-labels.

    The authors' pipeline (`section_matches`) only asks whether some section matches; a recall flag needs the
    section, so the steps run in the protocol's order over all sections and the first step that decides wins.
    An ambiguous substring (several headers) decides nothing and the later steps are tried; word overlap and
    the body step take the first match in reading order, the body step after preferring a heading-like
    occurrence (`_body_section`).
    """
    lab = label.strip()
    if not lab:
        return None, "unresolved"
    for step in (_exact, _normalised, _substring, _word_overlap):
        idx = step(lab, headers)
        if idx is not None:
            return idx, step.__name__.lstrip("_")
    return _body_section(lab, bodies)


def _exact(label: str, headers: Sequence[str]) -> int | None:
    low = label.lower()
    return next((i for i, h in enumerate(headers) if h.strip().lower() == low), None)


def _normalised(label: str, headers: Sequence[str]) -> int | None:
    nl = label_norm(label)
    return next((i for i, h in enumerate(headers) if nl and label_norm(h) == nl), None) if nl else None


def _substring(label: str, headers: Sequence[str]) -> int | None:
    """The one section whose header contains the label or is contained in it: raw (lower-case) first, then
    normalised. An empty header is never "contained" in a label (it would be in every one)."""
    for fold in (str.lower, label_norm):
        lab = fold(label)
        if not lab:
            continue
        hits = [i for i, h in enumerate(headers) if (fh := fold(h)) and (lab in fh or fh in lab)]
        if len(hits) == 1:
            return hits[0]
    return None


def _word_overlap(label: str, headers: Sequence[str]) -> int | None:
    """The first header holding at least 60 % of the label's (≥ 2) distinct normalised words."""
    words = set(label_norm(label).split())
    if len(words) < _OVERLAP_WORDS:
        return None
    for i, h in enumerate(headers):
        hw = set(label_norm(h).split())
        if hw and len(words & hw) / len(words) >= _OVERLAP_SHARE:
            return i
    return None


# Numbering that may stand between a line or sentence start and a label written without it.
_NUMBER_PREFIX = r"(?:(?:\d+(?:\.\d+)*\.?|[IVXLC]+(?:-?[A-Z])?)\s+|(?i:apdx_[a-z][\d.]*:|apdx:)\s*)?"
_HEADING_BEFORE = re.compile(r"(?:\A|\n|[.!?:]\s)[ \t]*" + _NUMBER_PREFIX + r"\Z")
_HEADING_AFTER = re.compile(r"[.:]?(?:[ \t]*(?:\n|\Z)|\s+(?P<next>\S))")
_CONTEXT = 80  # characters either side of an occurrence that decide whether it is heading-like


# The characters re's `\s` matches in an ASCII text (str.isspace, as re decides it), and the loose form's separators.
_ASCII_SPACE = frozenset(c for c in map(chr, range(128)) if c.isspace())
_LOOSE_SEPARATORS = _ASCII_SPACE | frozenset(":-–—")


class _LabelPattern:
    """One form of a label to look for in body text: its words, joined by any run of `separators`.

    Its regular expression (`source`, case-insensitive) is the rule; an ASCII label in an ASCII section, the common
    case, is found without it, by `str.find` on the lower-cased text, which matches exactly where the expression
    does (ASCII letters fold only onto ASCII letters there; no other character can occur). Compiling one
    expression costs ~0.3 ms and a paper-sized release has ~1,500 of them, so one is compiled only when a
    non-ASCII text needs it.
    """

    def __init__(self, words: list[str], joiner: str, separators: frozenset[str]):
        self.source = joiner.join(re.escape(w) for w in words)
        self.ascii = all(w.isascii() for w in words)
        self.words = [w.lower() for w in words]
        self.separators = separators
        self._compiled: re.Pattern[str] | None = None

    def spans(self, body: str, lowered: Callable[[], str]) -> Iterator[tuple[int, int]]:
        """(start, end) of each non-overlapping occurrence in `body`, left to right (`lowered`: the body in lower
        case, computed once per section for all of a label's forms)."""
        if self.ascii and body.isascii():
            yield from self._ascii_spans(lowered())
            return
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.IGNORECASE)
        for m in self._compiled.finditer(body):
            yield m.start(), m.end()

    def _ascii_spans(self, low: str) -> Iterator[tuple[int, int]]:
        first, rest, seps, n = self.words[0], self.words[1:], self.separators, len(low)
        start = 0
        while (at := low.find(first, start)) >= 0:
            end = at + len(first)
            for word in rest:
                j = end
                while j < n and low[j] in seps:
                    j += 1
                if j == end or not low.startswith(word, j):
                    break
                end = j + len(word)
            else:
                yield at, end
                start = end
                continue
            start = at + 1


def _label_patterns(label: str) -> list[_LabelPattern]:
    """The label as written (any run of whitespace for its spaces) and normalised (its words joined by any run of
    whitespace or `:`/dash, which normalisation turned into spaces), both case-insensitive; none when the
    normalised label is shorter than five characters, as the pipeline requires."""
    normed = label_norm(label)
    if len(normed) < _MIN_BODY_LABEL:
        return []
    raw = _LabelPattern(label.split(), r"\s+", _ASCII_SPACE)
    loose = _LabelPattern(normed.split(), r"[\s:\-–—]+", _LOOSE_SEPARATORS)
    return [raw] if loose.source == raw.source else [raw, loose]


class _Lowered:
    """A section's text in lower case, made on first use and kept for the label's other form."""

    def __init__(self, body: str):
        self.body = body
        self.low: str | None = None

    def __call__(self) -> str:
        if self.low is None:
            self.low = self.body.lower()
        return self.low


def _heading_like(body: str, start: int, end: int) -> bool:
    """Whether an occurrence reads as a heading: at a line or sentence start (numbering may come between) and
    followed by the end of its line or by a capitalised word (the paragraph running on after an inline title)."""
    lo = max(0, start - _CONTEXT)
    before = ("" if lo == 0 else "x") + body[lo:start]  # the sentinel keeps a cut context from looking like \A
    if not _HEADING_BEFORE.search(before):
        return False
    after = body[end : end + _CONTEXT] + ("" if end + _CONTEXT >= len(body) else "x")
    m = _HEADING_AFTER.match(after)
    return m is not None and (m.group("next") is None or m.group("next")[0].isupper())


def _body_section(label: str, bodies: Sequence[str]) -> tuple[int | None, str]:
    """The section whose body text holds the label: a heading-like occurrence anywhere beats any other
    occurrence, then the first section in reading order (ar5iv rolls subsection titles into the parent's body,
    usually inline in a paragraph)."""
    patterns = _label_patterns(label)
    first_plain = None
    for i, body in enumerate(bodies):
        lowered = _Lowered(body)
        for pattern in patterns:
            for start, end in pattern.spans(body, lowered):
                if _heading_like(body, start, end):
                    return i, "body_heading"
                if first_plain is None:
                    first_plain = i
    return (first_plain, "body_text") if first_plain is not None else (None, "unresolved")
