"""Tool calls written as text (reference §3.14): for `--text-tools` and as the fallback on OpenAI-compatible endpoints.

Pattern families in priority order; the first that yields a valid call wins (bare JSON
and whole-line Python calls are one family). Only known tool names are accepted.
"""
from __future__ import annotations

import json
import re
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
    out, depth, start = [], 0, -1
    in_str = esc = False
    for i, ch in enumerate(text):
        if in_str:
            esc = (ch == "\\") and not esc
            if ch == '"' and not esc:
                in_str = False
            elif ch != "\\":
                esc = False
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
                out.append(text[start:i + 1])
    return out


def _from_json(blob: str) -> tuple[str, Any] | None:
    try:
        obj = json.loads(blob)
    except (json.JSONDecodeError, ValueError):
        return None
    if not isinstance(obj, dict) or obj.get("name") not in TOOL_NAMES:
        return None
    args = obj.get("arguments", obj.get("parameters", {}))
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except (json.JSONDecodeError, ValueError):
            args = {"_raw": args}
    return obj["name"], args if isinstance(args, dict) else {"_raw": json.dumps(args)}


def _from_python(line: str) -> tuple[str, Any] | None:
    m = _PY_CALL.match(line)
    if not m or m.group(1) not in TOOL_NAMES:
        return None
    args: dict[str, Any] = {}
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


def parse_text_calls(text: str | None) -> list[ToolCall]:
    """Every call the text expresses, by the first pattern family that finds one; ids `text_1`, `text_2`, …."""
    if not text:
        return []
    families = [
        lambda: [_from_json(b) for b in _TAGGED.findall(text)],
        lambda: [_from_json(o) for b in _FENCED_JSON.findall(text) for o in _json_objects(b)],
        lambda: [_from_python(line) for b in _FENCED_CODE.findall(text) for line in b.splitlines()],
        lambda: [_channel(name, args) for name, args in _CHANNEL.findall(text)],
        lambda: [_from_json(o) for o in _json_objects(text)] or [_from_python(line) for line in text.splitlines()],
        lambda: [_from_python(c) for m in _PY_LIST.findall(text) for c in _split_calls(m)],
    ]
    for family in families:
        found = [c for c in family() if c is not None]
        if found:
            return [ToolCall(f"text_{i}", name, args) for i, (name, args) in enumerate(found, 1)]
    return []


def _channel(name: str, args: str) -> tuple[str, Any] | None:
    if name not in TOOL_NAMES:
        return None
    try:
        parsed = json.loads(args)
    except (json.JSONDecodeError, ValueError):
        parsed = {"_raw": args}
    return name, parsed if isinstance(parsed, dict) else {"_raw": args}
