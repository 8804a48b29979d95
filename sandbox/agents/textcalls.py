"""Tool calls written as text (docs/agents.md): for `--text-tools` and as the fallback on OpenAI-compatible endpoints.

Pattern families in priority order; the first that yields a valid call wins (bare JSON
and whole-line Python calls are one family). Only known tool names are accepted.

Each call found keeps the span of text it was read from (`TextCalls.spans`), so a client that
sends the calls back as structured `tool_calls` can send the prose without them (a provider
would otherwise see every call twice: `prose`). A reply cut off by the completion limit may
end inside a call that no pattern can read; `cut_off_call` finds that fragment, so it is shown
and counted rather than silently dropped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from sandbox.records import TOOL_NAMES, ToolCall

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.S)
_FENCED_JSON = re.compile(r"```(?:tool_call|json)\s*\n(.*?)```", re.S)
_FENCED_CODE = re.compile(r"```tool_code\s*\n(.*?)```", re.S)
_CHANNEL = re.compile(r"<\|channel\|>[^<]*?to=functions\.(\w+)[^<]*?<\|message\|>(\{.*?\})(?=<\||$)", re.S)
_PY_CALL = re.compile(r"^\s*(\w+)\((.*)\)\s*$")
_PY_ARG = re.compile(r"(\w+)\s*=\s*(?:'([^'\\]*)'|\"([^\"\\]*)\"|(\d+))")
_PY_LIST = re.compile(r"\[\s*(\w+\(.*?\)(?:\s*,\s*\w+\(.*?\))*)\s*\]", re.S)


def _json_objects(text: str) -> list[str]:
    """Balanced `{…}` substrings (one level of nesting is enough for {"name", "arguments": {…}})."""
    return [text[a:b] for a, b in _json_spans(text)]


def _from_json(blob: str, names: Collection[str] = TOOL_NAMES) -> tuple[str, Any] | None:
    try:
        obj = json.loads(blob)
    except (json.JSONDecodeError, ValueError):
        return None
    if not isinstance(obj, dict) or obj.get("name") not in names:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (json.JSONDecodeError, ValueError):
            args = {"_raw": args}
    return obj["name"], args if isinstance(args, dict) else {"_raw": json.dumps(args)}


def _from_python(line: str, names: Collection[str] = TOOL_NAMES) -> tuple[str, Any] | None:
    m = _PY_CALL.match(line)
    if not m or m.group(1) not in names:
        return None
    args: dict[str, str | int] = {}  # keyword = a quoted string or an integer
    for key, single, double, number in _PY_ARG.findall(m.group(2)):
        args[key] = int(number) if number else (single if single else double)
    return m.group(1), args


def _split_calls(body: str) -> list[str]:
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(body):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(body[start:i])
            start = i + 1
    parts.append(body[start:])
    return [p.strip() for p in parts if p.strip()]


@dataclass
class TextCalls:
    """The calls read from a reply's text and the (start, end) spans of text they were read from."""

    calls: list[ToolCall] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)


def parse_text_calls(text: str | None, names: Collection[str] = TOOL_NAMES) -> list[ToolCall]:
    """Every call the text expresses, by the first pattern family that finds one; ids `text_1`, `text_2`, ….
    `names`: the tools a call may name (the protocol's, and in the general-agent setting its extra tools too)."""
    return find_text_calls(text, names).calls


def find_text_calls(text: str | None, names: Collection[str] = TOOL_NAMES) -> TextCalls:
    """`parse_text_calls` with the spans of text each family consumed (a fence or tag block as a whole)."""
    if not text:
        return TextCalls()

    def tagged():
        return [(_from_json(m.group(1), names), m.span()) for m in _TAGGED.finditer(text)]

    def fenced_json():
        out = []
        for m in _FENCED_JSON.finditer(text):
            found = [_from_json(o, names) for o in _json_objects(m.group(1))]
            out += [(c, m.span()) for c in found]
        return out

    def fenced_code():
        return [
            (_from_python(line, names), m.span())
            for m in _FENCED_CODE.finditer(text)
            for line in m.group(1).splitlines()
        ]

    def channel():
        return [(_channel(m.group(1), m.group(2), names), m.span()) for m in _CHANNEL.finditer(text)]

    def bare():
        found = [(_from_json(text[a:b], names), (a, b)) for a, b in _json_spans(text)]
        if any(c is not None for c, _ in found):
            return found
        return [(_from_python(line, names), span) for line, span in _lines(text)]

    def python_list():
        return [(_from_python(c, names), m.span()) for m in _PY_LIST.finditer(text) for c in _split_calls(m.group(1))]

    for family in (tagged, fenced_json, fenced_code, channel, bare, python_list):
        found = [(c, span) for c, span in family() if c is not None]
        if found:
            calls = [ToolCall(f"text_{i}", name, args) for i, ((name, args), _) in enumerate(found, 1)]
            return TextCalls(calls, sorted(set(span for _, span in found)))
    return TextCalls()


def prose(text: str, spans: list[tuple[int, int]]) -> str:
    """The text without the given spans (the calls it wrote), blank runs left by them closed up."""
    out, at = [], 0
    for a, b in sorted(spans):
        if a >= at:
            out.append(text[at:a])
            at = b
    out.append(text[at:])
    return re.sub(r"\n{3,}", "\n\n", "".join(out)).strip()


_CALL_START = re.compile(r"<tool_call>|```(?:tool_call|json|tool_code)\b|<\|channel\|>")


def cut_off_call(
    text: str | None, spans: Sequence[tuple[int, int]] = (), names: Collection[str] = TOOL_NAMES
) -> tuple[str, int] | None:
    """The unfinished call a reply cut off by the completion limit ends with: (the fragment, where it starts), or
    None. A fragment is what follows the last opening of a call (a `<tool_call>` tag, a tool fence, a channel
    header, or a top-level `{` that names a tool) outside the calls already read; it must not be complete."""
    if not text:
        return None
    read_to = max((b for _, b in spans), default=0)
    tail = text[read_to:]
    starts = [m.start() for m in _CALL_START.finditer(tail)]
    brace = _open_brace(tail, names)
    if brace is not None:
        starts.append(brace)
    line = _open_python_call(tail, names)
    if line is not None:
        starts.append(line)
    if not starts:
        return None
    start = min(starts)
    fragment = tail[start:].strip()
    if not fragment or find_text_calls(fragment, names).calls:
        return None
    return fragment, read_to + start


def _open_brace(text: str, names: Collection[str] = TOOL_NAMES) -> int | None:
    """Where a top-level `{` opens that never closes and whose text names a tool (`"name": "read_section"`), or
    was cut before it could: the start of one (`{"`, `{"name`, `{"name": "get_paper_in`, see `_call_prefix`)."""
    start = _braces(text)[1]
    if start is None:
        return None
    opened = text[start:]
    return start if any(f'"{name}"' in opened for name in names) or _call_prefix(opened, names) else None


def _call_prefix(opened: str, names: Collection[str]) -> bool:
    """Whether `opened` (an unclosed `{…`, whitespace aside) is the beginning of `{"name": "<a tool>`: a call the
    completion limit cut before its name was whole. Prose in braces (`{about things`) is not."""
    squeezed = "".join(opened.split())
    return any(f'{{"name":"{name}'.startswith(squeezed) for name in names)


def _open_python_call(text: str, names: Collection[str] = TOOL_NAMES) -> int | None:
    """Where the last line starts when it opens a call to a known tool (`read_section(paper_id="…`) left unclosed."""
    last = text.rstrip("\n").rsplit("\n", 1)[-1]
    m = re.match(r"\s*(\w+)\(", last)
    if m is None or m.group(1) not in names or _PY_CALL.match(last):
        return None
    return len(text.rstrip("\n")) - len(last)


def _json_spans(text: str) -> list[tuple[int, int]]:
    """The (start, end) of each balanced top-level `{…}` (as `_json_objects` finds them)."""
    return _braces(text)[0]


def _braces(text: str) -> tuple[list[tuple[int, int]], int | None]:
    """One scan of the top-level braces outside JSON strings: the (start, end) of each balanced `{…}`, and where a
    `{` opens that never closes (None: all closed). A `\\"` inside a string does not end it."""
    out: list[tuple[int, int]] = []
    depth, start = 0, -1
    in_str = esc = False
    for i, ch in enumerate(text):
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                out.append((start, i + 1))
    return out, (start if depth else None)


def _lines(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Each line with its span."""
    out, at = [], 0
    for line in text.split("\n"):
        out.append((line, (at, at + len(line))))
        at += len(line) + 1
    return out


def _channel(name: str, args: str, names: Collection[str] = TOOL_NAMES) -> tuple[str, Any] | None:
    if name not in names:
        return None
    try:
        parsed = json.loads(args)
    except (json.JSONDecodeError, ValueError):
        parsed = {"_raw": args}
    return name, parsed if isinstance(parsed, dict) else {"_raw": args}


@dataclass
class ReplyCalls:
    """How one reply's calls are read, by every client of the episode (our LLM agent, Inspect's model): the calls to
    run (native, else written in the text), the call a completion limit cut off mid-way (`cut_off`: shown and
    counted, never run), the spans of call text in the content (sent back as structured calls, not as prose),
    whether the calls came natively, and whether the text held any."""

    calls: list[ToolCall]
    cut_off: str | None = None
    spans: list[tuple[int, int]] = field(default_factory=list)
    native: bool = False
    in_text: bool = False


def reply_calls(
    content: str | None, native: list[ToolCall], finish_reason: str | None, names: Collection[str] = TOOL_NAMES
) -> ReplyCalls:
    """The calls of a reply with `content` and `native` calls (docs/agents.md): native calls when there are any,
    else those written in the text (the reference's fallback on OpenAI-compatible endpoints); a reply cut off by the
    completion limit (`finish_reason` "length") inside a call keeps that fragment as `cut_off` (a native call whose
    arguments end mid-way is taken out of the calls)."""
    calls = list(native)
    found = TextCalls()
    if content:  # with native calls too: a server may return them both parsed and still written in the text
        found = find_text_calls(content, names)
        if not calls:
            calls = list(found.calls)
    out = ReplyCalls(calls, spans=list(found.spans), native=bool(native), in_text=bool(found.calls))
    if finish_reason == "length":
        _read_cut_off(out, content, names)
    return out


def _read_cut_off(out: ReplyCalls, content: str | None, names: Collection[str]) -> None:
    """A call the completion limit cut off mid-way, into `out`: a native one whose arguments end mid-way (taken out
    of the calls), or the fragment of one written in the text (its span added)."""
    calls = out.calls
    if out.native and isinstance(calls[-1].args, dict) and set(calls[-1].args) == {"_raw"}:
        lost = calls.pop()  # its arguments end mid-way: not a call to run with `{"_raw": …}`
        out.cut_off = f"{lost.name}({lost.args['_raw']}"
    elif not out.native:
        fragment = cut_off_call(content, out.spans, names)
        if fragment is not None:
            out.cut_off = fragment[0]
            out.spans.append((fragment[1], len(content or "")))
