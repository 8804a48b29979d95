"""The seven tools, with the reference harness's output texts to the character (docs/protocol.md#rules).

`run_tool` never raises: every failure becomes the reference's `Error calling …` text.
It also reports what the call touched (paper, section index, whether text was
delivered), which is what the metrics need and what the reference never logged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from sandbox.corpus import ItemView
from sandbox.corpus_schema import tokens
from sandbox.records import TOOL_NAMES
from sandbox.sections import alias, resolve

NOT_FOUND = "Paper '{pid}' not found in the available paper pool."


@dataclass
class ToolOutcome:
    """A tool's text and what it touched."""

    text: str
    status: str = "ok"  # ok | not_found | metadata_only | no_sections | unresolved | error | unknown_tool | empty
    paper_id: str | None = None
    arxiv_id: str | None = None
    section_index: int | None = None
    delivered: bool = False


def authors_long(node: dict[str, Any]) -> str:
    names = _author_names(node)
    return ", ".join(names) if names else "Unknown"


def authors_short(node: dict[str, Any]) -> str:
    names = _author_names(node)
    if not names:
        return "Unknown"
    if len(names) == 1:
        return names[0]
    if len(names) == 2:
        return f"{names[0]} and {names[1]}"
    return f"{names[0]} et al."


def _author_names(node: dict[str, Any]) -> list[str]:
    authors = node.get("authors") or []
    return [a["name"] for a in authors if isinstance(a, dict) and a.get("name")]


def get_paper_info(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    pid = args["paper_id"]
    node = view.nodes.get(pid)
    if node is None:
        return ToolOutcome(NOT_FOUND.format(pid=pid), "not_found", paper_id=str(pid))
    d = node.data
    text = "\n".join(
        [
            f"Title: {d.get('title', 'Unknown')}",
            f"Authors: {authors_long(d)}",
            f"Year: {d.get('year', 'Unknown')}",
            f"Abstract: {d.get('abstract') or '(not available)'}",
            f"Full text available: {'Yes' if node.has_text else 'No'}",
        ]
    )
    return ToolOutcome(text, paper_id=pid, arxiv_id=node.arxiv_id or None)


def get_references(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    pid = args["paper_id"]
    node = view.nodes.get(pid)
    if node is None:
        return ToolOutcome(NOT_FOUND.format(pid=pid), "not_found", paper_id=str(pid))
    refs = view.edges.get(pid) or []
    if not refs:
        return ToolOutcome("No references found for this paper (or references not available in pool).", paper_id=pid)
    lines = [f"References for paper '{pid}' ({len(refs)} papers):\n"]
    for i, ref in enumerate(refs, 1):
        rnode = view.nodes.get(ref)
        d = rnode.data if rnode else {}
        lines.append(
            f"  [{i}] {ref}\n"
            f"      Title: {d.get('title', 'Unknown')}\n"  # raw values: a present null prints None (§2.4)
            f"      Authors: {authors_short(d)} ({d.get('year', '?')})\n"
            f"      Full text: {'Available' if rnode and rnode.has_text else 'Not available'}"
        )
    return ToolOutcome("\n".join(lines), paper_id=pid)


def search_papers(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    query = args["query"]
    top_k = args.get("top_k", 5)
    top_k = max(1, min(top_k, 10))
    q = tokens(query)
    if not q:
        return ToolOutcome("Empty query. Please provide search keywords.", "empty")
    scored = []
    for node in view.nodes.values():
        score = len(q & node.tokens)
        if score > 0:
            scored.append((score, node))
    scored.sort(key=lambda pair: -pair[0])  # stable: ties keep graph order
    hits = scored[:top_k]
    if not hits:
        return ToolOutcome(f"No papers found matching '{query}'.", "not_found")
    lines = [f"Search results for '{query}' ({len(hits)} matches):\n"]
    for i, (_, node) in enumerate(hits, 1):
        d = node.data
        abstract = d.get("abstract") or ""
        if not abstract:
            abstract = "(no abstract)"
        elif len(abstract) > 300:
            abstract = abstract[:300] + "..."
        lines.append(
            f"  [{i}] {node.s2id}\n"
            f"      Title: {d.get('title', '')}\n"
            f"      Authors: {authors_short(d)} ({d.get('year')})\n"  # the reference indexes `year` as None when absent
            f"      Abstract: {abstract}\n"
            f"      Full text: {'Available' if node.has_text else 'Not available'}"
        )
    return ToolOutcome("\n".join(lines))


def list_sections(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    pid = args["paper_id"]
    node = view.nodes.get(pid)
    if node is None:
        return ToolOutcome(NOT_FOUND.format(pid=pid), "not_found", paper_id=str(pid))
    if not node.has_text:
        return ToolOutcome(
            f"Full text not available for paper '{pid}'. Only abstract is available via get_paper_info.",
            "metadata_only",
            paper_id=pid,
        )
    headers = view.headers(node.arxiv_id)
    if not headers:
        return ToolOutcome(f"No sections found for paper '{pid}'.", "no_sections", paper_id=pid, arxiv_id=node.arxiv_id)
    lines = [f"Sections for paper '{pid}' ({len(headers)} sections):\n"]
    for i, (header, length) in enumerate(headers):
        lines.append(f"  ({alias(i)}) {header if header is not None else f'Section {i + 1}'} ({length} chars)")
    return ToolOutcome("\n".join(lines), paper_id=pid, arxiv_id=node.arxiv_id)


def read_section(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    pid = args["paper_id"]
    section = args["section"]
    node = view.nodes.get(pid)
    if node is None:
        return ToolOutcome(NOT_FOUND.format(pid=pid), "not_found", paper_id=str(pid))
    if not node.has_text:
        return ToolOutcome(f"Full text not available for paper '{pid}'.", "metadata_only", paper_id=pid)
    headers = [h if h is not None else f"Section {i + 1}" for i, (h, _) in enumerate(view.headers(node.arxiv_id))]
    if not headers:
        return ToolOutcome(f"No sections found for paper '{pid}'.", "no_sections", paper_id=pid, arxiv_id=node.arxiv_id)
    idx = resolve(section, headers)
    if idx is None:
        available = "; ".join(f"({alias(i)}) {h}" for i, h in enumerate(headers))
        return ToolOutcome(
            f"Section '{section}' not found in paper '{pid}'.\nAvailable sections: {available}",
            "unresolved",
            paper_id=pid,
            arxiv_id=node.arxiv_id,
        )
    text = view.section_text(node.arxiv_id, idx)
    return ToolOutcome(
        f"=== {headers[idx]} ===\n\n{text}", paper_id=pid, arxiv_id=node.arxiv_id, section_index=idx, delivered=True
    )


# ---------------------------------------------------------------------------------------------
# Reading the texts back. Scripted agents and the play screen learn ids, titles and section
# aliases from what the tools printed; the parsers live beside the formatters above so that a
# format change touches this module only.

_LISTED_HEAD = re.compile(r"^  \[\d+\] (\S+)\n      Title: (.*)$", re.M)  # get_references, search_papers
_LISTED_TAIL = re.compile(
    r"\n(?:      Authors: .*\n)?(?:      Abstract: (.*)\n)?      Full text: (Available|Not available)"
)
_SECTION = re.compile(r"^  \(([A-Z]+)\) (.*) \(\d+ chars\)$", re.M)  # list_sections
_AVAILABLE_MARK = "\nAvailable sections: "  # read_section, unresolved
_AVAILABLE = re.compile(r"\(([A-Z]+)\) ([^;]*)(?:; |$)")
_INFO_TITLE = re.compile(r"\ATitle: (.*)$", re.M)  # get_paper_info


class Listed(NamedTuple):
    """One entry of a get_references / search_papers listing.

    `has_text` is None when the entry's "Full text" line does not follow its title (and abstract)
    directly, i.e. a title or abstract ran over several lines: its id and title are still known.
    """

    paper_id: str
    title: str
    abstract: str
    has_text: bool | None


def listed_papers(text: str) -> list[Listed]:
    """The entries of a get_references or search_papers text, in order (title as printed)."""
    out = []
    for head in _LISTED_HEAD.finditer(text):
        tail = _LISTED_TAIL.match(text, head.end())
        has_text = None if tail is None else tail.group(2) == "Available"
        abstract = (tail.group(1) or "") if tail is not None else ""
        out.append(Listed(head.group(1), head.group(2), abstract, has_text))
    return out


def listed_sections(text: str) -> list[tuple[str, str]]:
    """(alias, header) of each section in a list_sections text."""
    return _SECTION.findall(text)


def available_sections(text: str) -> list[tuple[str, str]] | None:
    """(alias, header) from an unresolved read_section text; None when the text has no such listing."""
    if _AVAILABLE_MARK not in text:
        return None
    listing = text.split(_AVAILABLE_MARK, 1)[1]
    return [(a, h.strip()) for a, h in _AVAILABLE.findall(listing)]


def info_title(text: str) -> str:
    """The title in a get_paper_info text ('' when there is none), as printed."""
    match = _INFO_TITLE.search(text)
    return match.group(1) if match else ""


def think(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    return ToolOutcome("Noted.")


def submit_answer(view: ItemView, args: dict[str, Any]) -> ToolOutcome:
    return ToolOutcome(f"Answer submitted: {args['answer']}")


HANDLERS = {
    "get_paper_info": get_paper_info,
    "get_references": get_references,
    "search_papers": search_papers,
    "list_sections": list_sections,
    "read_section": read_section,
    "think": think,
    "submit_answer": submit_answer,
}
assert tuple(HANDLERS) == TOOL_NAMES


def run_tool(view: ItemView, name: str, args: Any) -> ToolOutcome:
    """Dispatch one executed call. Unknown tools and any handler failure become the reference's texts."""
    handler = HANDLERS.get(name) if isinstance(name, str) else None
    if handler is None:
        return ToolOutcome(f"Unknown tool: {name}", "unknown_tool")
    try:
        if not isinstance(args, dict):
            raise TypeError(f"arguments must be an object, got {type(args).__name__}")
        return handler(view, args)
    # the reference catches KeyError/TypeError; the protocol extends it to every handler failure, shown to the agent
    # (docs/protocol.md)
    except Exception as exc:  # noqa: BLE001 — the protocol's rule
        return ToolOutcome(f"Error calling {name}: Missing or invalid parameter — {exc}", "error")
