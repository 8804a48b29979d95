"""Section aliases, header normalisation and the reference's section-argument resolution (reference §2.5).

The same `norm` serves the tools (what the agent's argument resolves to) and the label
resolver (which section an auditor's label means), as in the reference.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

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


def norm(header: str) -> str:
    """The reference's header normalisation, step by step, in its order."""
    h = header.lower().strip()
    h = _APDX_LETTER.sub("", h, count=1)
    h = _APDX.sub("", h, count=1)
    h = _ROMAN.sub("", h, count=1)
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
    m = _ALIAS.match(q.upper())
    if m:
        idx = alias_index(m.group(1))
        if idx < len(headers):
            return idx
    ql = q.lower()
    for i, h in enumerate(headers):
        if h.strip().lower() == ql:
            return i
    nq = norm(q)
    normed = [norm(h) for h in headers]
    if nq:
        for i, nh in enumerate(normed):
            if nh == nq:
                return i
    hits = [i for i, h in enumerate(headers) if ql in h.lower()]
    if len(hits) == 1:
        return hits[0]
    if nq:
        hits = [i for i, nh in enumerate(normed) if nq in nh]
        if len(hits) == 1:
            return hits[0]
    return None


def resolve_label(label: str, headers: Sequence[str], bodies: Sequence[str]) -> tuple[int | None, str]:
    """Resolve an auditor label to a top-level section (PROTOCOL §3): the section index and the method used.

    exact header → normalised header → unique substring → the label's header appears as
    a heading line inside a section's body (the containing section; see `_containing_section`).
    """
    lab = label.strip()
    if not lab:
        return None, "unresolved"
    ll = lab.lower()
    for i, h in enumerate(headers):
        if h.strip().lower() == ll:
            return i, "exact"
    nl = norm(lab)
    normed = [norm(h) for h in headers]
    if nl:
        for i, nh in enumerate(normed):
            if nh == nl:
                return i, "normalised"
    hits = [i for i, h in enumerate(headers) if ll in h.lower()]
    if len(hits) == 1:
        return hits[0], "substring"
    if nl:
        hits = [i for i, nh in enumerate(normed) if nl in nh]
        if len(hits) == 1:
            return hits[0], "substring"
    containing = _containing_section(lab, nl, bodies)
    if containing is not None:
        return containing, "body_heading"
    return None, "unresolved"


# A numbering prefix: arabic (`3.2 `, `5.3.1. `), upper-case roman (`IV `, `IV-B `; lower-case words such as
# `civil ` are prose) or an appendix prefix (`Apdx_A.1:`, `Apdx:`).
_NUMBERING = re.compile(r"^(?:\d+(?:\.\d+)*\.?\s|[IVXLC]+(?:-[A-Z])?\s|(?i:apdx_[a-z][\d.]*:|apdx:))")
# After a numbered heading, text on the same line must start a new sentence: `.` or `:`, or a space and no
# lower-case letter ("3.2 Decomposition We split…", not "3.2 Decomposition is described below").
_RUN_ON = re.compile(r"^(?:[.:]|\s+[^\sa-z])")


def _heading_tier(line: str, label: str, normed_label: str, numbered: bool) -> int | None:
    """How well one body line serves as a heading for `label` (whitespace-collapsed): 0 a numbered label verbatim,
    alone on the line or followed by text that starts a new sentence; 1 a numbered line equal to the label up to
    numbering and case (`norm`); 2 an unnumbered such line; None for anything else, such as a mention in prose."""
    text = _SPACE.sub(" ", line.strip())
    if not text:
        return None
    if numbered and text[: len(label)].lower() == label.lower():
        rest = text[len(label):]
        if not rest or _RUN_ON.match(rest):
            return 0
    if norm(text) != normed_label:
        return None
    return 1 if _NUMBERING.match(text) else 2


def _containing_section(label: str, normed_label: str, bodies: Sequence[str]) -> int | None:
    """The section whose body has a heading line for the label (a subsection rolled into its parent).

    Only whole heading lines count (see `_heading_tier`), never the label mentioned in prose. The best tier
    wins (a numbered label verbatim, then a numbered line, then an unnumbered one); a tier found in more than one
    section is ambiguous and leaves the label unresolved, as an ambiguous substring does.
    """
    if not normed_label:
        return None
    label = _SPACE.sub(" ", label.strip())
    numbered = bool(_NUMBERING.match(label))
    first_word = normed_label.split(" ", 1)[0]
    tiers: dict[int, set[int]] = {}
    for i, body in enumerate(bodies):
        if first_word not in body.lower():  # cheap: most sections cannot hold the heading at all
            continue
        for line in body.splitlines():
            tier = _heading_tier(line, label, normed_label, numbered)
            if tier is not None:
                tiers.setdefault(tier, set()).add(i)
    if not tiers:
        return None
    sections = tiers[min(tiers)]
    return next(iter(sections)) if len(sections) == 1 else None
