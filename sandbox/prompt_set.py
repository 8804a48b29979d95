"""Every text the workbench sends an agent or a judge, as one replaceable set (`--prompts FILE.toml`).

The protocol's prompts are our wording of the papers' harnesses; a researcher who has the authors' exact text (or who
studies prompt sensitivity) supplies a TOML file whose keys replace ours. The set in force is a
`sandbox.prompts.Prompts` (its `digest` is part of a run's identity); this module names the file's keys and their
placeholders, reads a file into a set and writes a set as a file (`to_toml`: what a run stores and `prompts show`
prints back, and what `prompts export` writes of ours).

A file is checked before anything runs (`load_prompts`): a key we do not know, a placeholder a key does not take, a
required placeholder left out, a value that is not text or a file that is not TOML is a `PromptsError` naming the
file, the line, the key and the placeholder.
"""

from __future__ import annotations

import json
import re
import string
import textwrap
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from sandbox import prompts as P
from sandbox.prompts import DEFAULT_PROMPTS, Prompts

_CAPS = ("budget", "max_turns", "max_tokens")


@dataclass(frozen=True)
class Key:
    """One key of a prompts file: the `Prompts` attribute it sets, what it is, the placeholders it takes and must
    take."""

    name: str
    attr: str
    about: str
    allowed: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


KEYS: tuple[Key, ...] = (
    Key(
        "system",
        "system",
        "the system prompt (ablations full, gold-given, and no-search unless no_search is given)",
        ("tools_block", "task_block", *_CAPS),
        ("tools_block", "task_block"),
    ),
    Key(
        "closed_book",
        "closed_book",
        "the system prompt of the closed-book ablation (submit_answer is the only tool); "
        "its {tools_block} is empty, or under --text-tools how to write a call followed by a blank line",
        ("tools_block", "task_block", *_CAPS),
        ("task_block",),
    ),
    Key(
        "no_search",
        "no_search",
        "the system prompt of the no-search ablation (left out of a file: the system "
        "prompt), whose {tools_block} lists no search_papers",
        ("tools_block", "task_block", *_CAPS),
        ("tools_block", "task_block"),
    ),
    Key("first_user", "first_user", "the first user message"),
    Key("closed_book_first_user", "closed_book_first_user", "the first user message of the closed-book ablation"),
    Key(
        "status_footer",
        "status_footer",
        "the status line appended to every tool result and to the nudge",
        ("turn", "tokens", "points_used", "points_left", "budget"),
    ),
    Key("nudge", "nudge", "the reply to a turn with text and no tool call (the status footer follows it)"),
    Key("exhausted_nudge", "exhausted_nudge", "the user message once the points are spent"),
    Key("continue", "continue_", "sequential scaling, token axis: the answer to a submit below the budget"),
    Key("stop", "stop", "sequential scaling, token axis: the user message past the budget (answer now)"),
    Key("summarize", "summarize", "sequential scaling: the request to summarize the work so far"),
    Key(
        "summary_head",
        "summary_head",
        "sequential scaling: the line above the agent's summary when it replaces the "
        "conversation (the continue instruction and the status footer follow the summary)",
    ),
    Key("verifier", "verifier", "sequential scaling: the verifier's instructions"),
    Key(
        "revision_head",
        "revision_head",
        "sequential scaling: the line above the verifier's summary in the agent's revision message",
    ),
    Key(
        "revision_tail",
        "revision_tail",
        "sequential scaling: the line after the verifier's summary in the revision message",
    ),
    Key("judge_pointwise", "judge_pointwise", "parallel scaling: the pointwise judge's system message"),
    Key("judge_pairwise", "judge_pairwise", "parallel scaling: the pairwise judge's system message"),
    Key(
        "judge_pointwise_user",
        "judge_pointwise_user",
        "parallel scaling: the pointwise judge's user message: "
        "{trajectory} is the sample's steps as JSON (each text cut to 500 characters), {task} the seed, question and "
        "options, {answer} the submitted letter",
        ("trajectory", "task", "answer"),
        ("trajectory",),
    ),
    Key(
        "judge_pairwise_user",
        "judge_pairwise_user",
        "parallel scaling: the pairwise judge's user message, the leader as agent 1 and the challenger as agent 2",
        ("task", "trajectory_1", "answer_1", "trajectory_2", "answer_2"),
        ("trajectory_1", "trajectory_2"),
    ),
)
KEY_BY_NAME = {k.name: k for k in KEYS}
TOOL_NAMES = tuple(s["name"] for s in P.TOOL_SCHEMAS)
HEADER = (
    "# AgentHop Workbench prompts: every text the workbench sends an agent or a judge.",
    "# Use it with --prompts FILE.toml (run, scale, serve-mcp); a key left out keeps the workbench's default.",
    "# {tools_block} is the tool list (under --text-tools followed by how to write a call); {task_block} the seed",
    "# paper, question and four options (gold-given: with the target papers); {budget}, {max_turns}, {max_tokens}",
    "# the caps. Placeholders are Python format fields ({max_tokens:,} prints 200,000); a literal brace is {{ or }}.",
    "# A key we do not know, a placeholder a key does not take or a required one left out is refused on load.",
)


def to_toml(prompts: Prompts) -> str:
    """The set as a commented prompts file: every key with what it is and its placeholders, then `[tools]` (commented
    out with the protocol's descriptions unless some are replaced). `load_text` of it gives this set back (the same
    digest), and writing that again gives the same bytes. A run stores it; `prompts export` writes ours."""
    lines = [*HEADER, ""]
    for key in KEYS:
        lines += _key_lines(prompts, key)
    lines.append("# [tools]: the tool descriptions the agent is given. They are the protocol's (part of what is")
    lines.append("# measured); replace one only on purpose, under an explicit [tools] table.")
    return "\n".join(lines + _tools_lines(prompts)) + "\n"


def _key_lines(prompts: Prompts, key: Key) -> list[str]:
    """One key as the file writes it: what it is, the placeholders it takes, its value and a blank line."""
    value = getattr(prompts, key.attr)
    if key.name == "no_search" and value is None:
        value = prompts.system
    lines = ["# " + line for line in textwrap.wrap(f"{key.name}: {key.about}.", 112)]
    if key.allowed:
        lines.append(
            "# placeholders: "
            + ", ".join("{" + p + "}" + (" (required)" if p in key.required else "") for p in key.allowed)
        )
    return [*lines, f"{key.name} = {_toml_string(value)}", ""]


def _tools_lines(prompts: Prompts) -> list[str]:
    """The `[tools]` table: the set's replaced descriptions, else the protocol's, commented out."""
    if prompts.tools:
        return [
            "[tools]",
            *(f"{name} = {json.dumps(text, ensure_ascii=False)}" for name, text in sorted(prompts.tools)),
        ]
    return [
        "# [tools]",
        *(f"# {s['name']} = {json.dumps(s['description'], ensure_ascii=False)}" for s in P.TOOL_SCHEMAS),
    ]


def _toml_string(text: str) -> str:
    """A TOML multi-line basic string holding exactly `text` (TOML drops the newline after the opening quotes;
    backslashes, quotes next to a quote or the end, and control characters are escaped)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"' and (i + 1 == len(text) or text[i + 1] == '"'):
            out.append('\\"')
        elif ch in "\n\t" or (ord(ch) >= 0x20 and ch != "\x7f"):
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"""\n' + "".join(out) + '"""'


# ---------------------------------------------------------------- reading a file


class PromptsError(ValueError):
    """A prompts file that cannot be used: one line naming the file, the line, the key and the placeholder."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2, before anything is written


_LINE = re.compile(r"\(at line (\d+), column (\d+)\)")


def load_prompts(path: str | Path) -> Prompts:
    """The set a prompts file asks for (defaults for every key it leaves out), or PromptsError."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PromptsError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise PromptsError(f"{path}: not UTF-8 text, so not a prompts file") from None
    except OSError as exc:  # a directory, no permission: in the system's words, not Python's exception names
        raise PromptsError(f"{path}: cannot read the prompts file ({(exc.strerror or str(exc)).lower()})") from None
    return load_text(text, str(path))


def load_text(text: str, source: str = "<prompts>") -> Prompts:
    """`load_prompts` of a file's text (`source` names it in messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _LINE.search(str(exc))
        line = m.group(1) if m else max(1, len(text.splitlines()))  # "at end of document": the last line
        why = _LINE.sub("", str(exc)).replace("(at end of document)", "(at the end of the file)").strip()
        raise PromptsError(f"{source}:{line}: not TOML: {why}") from None
    lines = text.splitlines()
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "tools":
            values["tools"] = _tools(value, lines, source)
            continue
        key = KEY_BY_NAME.get(name)
        if key is None:
            raise PromptsError(
                f"{source}:{_key_line(lines, name)}: unknown key '{name}' (known: "
                f"{', '.join(k.name for k in KEYS)}, and a [tools] table)"
            )
        if not isinstance(value, str):
            raise PromptsError(
                f"{source}:{_key_line(lines, name)}: key '{name}' must be text (a TOML string), got {_toml_type(value)}"
            )
        _check_placeholders(key, value, lines, source)
        values[key.attr] = value
    return replace(DEFAULT_PROMPTS, **values)


def _tools(value: Any, lines: list[str], source: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise PromptsError(
            f"{source}:{_key_line(lines, 'tools')}: 'tools' must be a table ([tools]) of tool name = description"
        )
    out = []
    for name, text in value.items():
        line = _key_line(lines, name, table="tools")
        if name not in TOOL_NAMES:
            raise PromptsError(f"{source}:{line}: [tools]: unknown tool '{name}' (known: {', '.join(TOOL_NAMES)})")
        if not isinstance(text, str):
            raise PromptsError(
                f"{source}:{line}: [tools] key '{name}' must be text (a TOML string), got {_toml_type(text)}"
            )
        out.append((name, text))
    return tuple(sorted(out))


def _check_placeholders(key: Key, value: str, lines: list[str], source: str) -> None:
    """Unknown placeholders, malformed braces, bad format specs and missing required placeholders, by line."""
    start = _key_line(lines, key.name)
    try:
        found = [(f, spec, conv) for _, f, spec, conv in string.Formatter().parse(value) if f is not None]
    except ValueError as exc:
        raise PromptsError(
            f"{source}:{start}: key '{key.name}': {exc} (write a literal brace as {{{{ or }}}})"
        ) from None
    for name, spec, conversion in found:
        _check_field(key, name, spec, conversion, f"{source}:{_text_line(lines, start, '{' + name)}")
    names = {n for n, _, _ in found}
    for need in key.required:
        if need not in names:
            raise PromptsError(f"{source}:{start}: key '{key.name}': missing required placeholder {{{need}}}")


def _check_field(key: Key, name: str, spec: str | None, conversion: str | None, where: str) -> None:
    """One placeholder of a key's value (at `where`, file:line): no conversion, one the key takes, a format spec
    its sample value accepts."""
    if conversion is not None:
        raise PromptsError(
            f"{where}: key '{key.name}': placeholder {{{name}!{conversion}}}: a conversion (!r, !s, !a) is not allowed"
        )
    if name not in key.allowed:
        takes = ", ".join("{" + p + "}" for p in key.allowed) if key.allowed else "none"
        shown = "{" + name + "}" if name else "{}"
        raise PromptsError(
            f"{where}: key '{key.name}': unknown placeholder {shown} (it takes: {takes}; "
            "a literal brace is written {{ or }})"
        )
    try:
        format(_SAMPLE[name], spec or "")  # a named field always has a spec string ("" when none)
    except (ValueError, TypeError) as exc:
        raise PromptsError(f"{where}: key '{key.name}': placeholder {{{name}:{spec}}}: {exc}") from None


_SAMPLE: dict[str, str | int] = {  # a value of each placeholder's type, to try a format spec on
    "tools_block": "",
    "task_block": "",
    "budget": 30,
    "max_turns": 20,
    "max_tokens": 200000,
    "turn": 1,
    "tokens": 0,
    "points_used": 0,
    "points_left": 30,
    "trajectory": "",
    "task": "",
    "answer": "",
    "trajectory_1": "",
    "answer_1": "",
    "trajectory_2": "",
    "answer_2": "",
}


def _key_line(lines: list[str], name: str, table: str | None = None) -> int:
    """The line a key is set on (top level, or inside `[table]`); 1 when it cannot be found."""
    pattern = re.compile(rf"""^\s*(?:{re.escape(name)}|"{re.escape(name)}"|'{re.escape(name)}')\s*=""")
    current: str | None = None
    for i, line in enumerate(lines, 1):
        header = re.match(r"^\s*\[\s*([^\]]+?)\s*\]", line)
        if header:
            current = header.group(1).strip("\"'")
            if table is None and current == name:
                return i
            continue
        if current == table and pattern.match(line):
            return i
    return 1


def _text_line(lines: list[str], start: int, needle: str) -> int:
    for i in range(start - 1, len(lines)):
        if needle in lines[i]:
            return i + 1
    return start


def _toml_type(value: Any) -> str:
    return {bool: "a boolean", int: "an integer", float: "a number", dict: "a table", list: "an array"}.get(
        type(value), type(value).__name__
    )


def from_stored(text: str | None) -> Prompts:
    """The set a run was sent, from the prompts file it stored (a run dict's `prompts`); None (a run stored before
    prompts were recorded) is ours."""
    return DEFAULT_PROMPTS if not text else load_text(text, "stored prompts")
