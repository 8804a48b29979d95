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
    a heading line inside a section's body (the containing section).
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


def _containing_section(label: str, normed_label: str, bodies: Sequence[str]) -> int | None:
    """The first section whose body has a line starting with the label's header (a rolled-in subsection)."""
    if not normed_label:
        return None
    ll = label.lower()
    for i, body in enumerate(bodies):
        low = body.lower()
        pos = low.find(ll)
        if pos >= 0 and (pos == 0 or low[pos - 1] in "\n "):
            return i
    for i, body in enumerate(bodies):
        for line in body.splitlines():
            if line.strip() and norm(line).startswith(normed_label):
                return i
    return None
