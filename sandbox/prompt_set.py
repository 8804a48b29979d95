"""Every text the workbench sends an agent or a judge, as one replaceable set (`--prompts FILE.toml`).

The protocol's prompts are our wording of the papers' harnesses; a researcher who has the authors' exact text (or who
studies prompt sensitivity) supplies a TOML file whose keys replace ours. `Prompts` is the set in force: the runner
builds each episode's opening from it, the episode its nudges, stop and continue instructions and status footer, the
judges their system messages, and the sequential-scaling strategies their summarize and verifier prompts. Its `digest`
is part of a run's identity and its `to_toml()` is what a run stores, so `prompts show` prints it back and that text
loads to the same set.

A file is checked before anything runs (`load_prompts`): a key we do not know, a placeholder a key does not take, a
required placeholder left out, a value that is not text or a file that is not TOML is a `PromptsError` naming the
file, the line, the key and the placeholder.
"""
from __future__ import annotations

import hashlib
import json
import re
import string
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sandbox import prompts as P
from sandbox.judges import PAIRWISE_SYSTEM, POINTWISE_SYSTEM
from sandbox.records import Caps, Item, LedgerState

# ---------------------------------------------------------------- the default texts, as templates

SYSTEM = "\n\n".join([P.ROLE, P.OVERVIEW, "{tools_block}", P.CONSTRAINTS, "{task_block}"])
CLOSED_BOOK = P.CLOSED_BOOK_ROLE + "\n\n{tools_block}{task_block}\n\n" + P.CLOSED_BOOK_TAIL
STATUS_FOOTER = "\nTurn: {turn}  |  Tokens used: {tokens:,}  |  Budget used: {points_used}"
# The sequential-scaling strategies' texts (issue 23 consumes them through `Prompts.summarize` / `.verifier`).
SUMMARIZE = ("Not yet: before you continue, write a summary of your work so far. It will replace the conversation "
             "above, so include everything you still need: (1) the approaches you tried and what each gave; (2) the "
             "information you collected, with paper ids and sections; (3) the current state of your answer and how "
             "sure you are; (4) what remains to check. Reply with the summary as plain text and call no tool in this "
             "reply.")
VERIFIER = ("You review the work of a research agent answering a multiple-choice question about papers. Summarize its "
            "trajectory factually: what it tried, what it found (papers and sections read, what they say), and the "
            "answer it currently gives. Do not judge whether the answer is right, do not suggest next steps, and give "
            "no hints.")

_CAPS = ("budget", "max_turns", "max_tokens")


@dataclass(frozen=True)
class Key:
    """One key of a prompts file: the attribute it sets, what it is, the placeholders it takes and must take."""

    name: str
    attr: str
    about: str
    allowed: tuple[str, ...] = ()
    required: tuple[str, ...] = ()


PLACEHOLDERS = {
    "tools_block": "the tool list (the no-search ablation drops search_papers; under --text-tools followed by how to "
                   "write a call). In closed_book: empty, or under --text-tools how to write a call and a blank line",
    "task_block": "the seed paper, the question and the four options (gold-given: with the target papers)",
    "budget": "the points budget", "max_turns": "the turn cap", "max_tokens": "the token cap (e.g. {max_tokens:,})",
    "turn": "the turn number", "tokens": "tokens used so far", "points_used": "points used so far",
    "points_left": "points left",
}

KEYS: tuple[Key, ...] = (
    Key("system", "system", "the system prompt (ablations full, gold-given, and no-search unless no_search is given)",
        ("tools_block", "task_block", *_CAPS), ("tools_block", "task_block")),
    Key("closed_book", "closed_book", "the system prompt of the closed-book ablation (submit_answer is the only tool)",
        ("tools_block", "task_block", *_CAPS), ("task_block",)),
    Key("no_search", "no_search", "the system prompt of the no-search ablation (left out: the system prompt)",
        ("tools_block", "task_block", *_CAPS), ("tools_block", "task_block")),
    Key("first_user", "first_user", "the first user message"),
    Key("closed_book_first_user", "closed_book_first_user", "the first user message of the closed-book ablation"),
    Key("status_footer", "status_footer", "the status line appended to every tool result and to the nudge",
        ("turn", "tokens", "points_used", "points_left", "budget")),
    Key("nudge", "nudge", "the reply to a turn with text and no tool call (the status footer follows it)"),
    Key("exhausted_nudge", "exhausted_nudge", "the user message once the points are spent"),
    Key("continue", "continue_", "sequential scaling (token axis): the answer to a submit below the budget"),
    Key("stop", "stop", "sequential scaling (token axis): the user message past the budget, answer now"),
    Key("summarize", "summarize", "sequential scaling: the request to summarize the work so far"),
    Key("verifier", "verifier", "sequential scaling: the verifier's instructions"),
    Key("judge_pointwise", "judge_pointwise", "parallel scaling: the pointwise judge's system message"),
    Key("judge_pairwise", "judge_pairwise", "parallel scaling: the pairwise judge's system message"),
)
KEY_BY_NAME = {k.name: k for k in KEYS}
TOOL_NAMES = tuple(s["name"] for s in P.TOOL_SCHEMAS)


@dataclass(frozen=True)
class Prompts:
    """The texts in force. `no_search=None` follows `system`; `tools` holds only the descriptions replaced."""

    system: str = SYSTEM
    closed_book: str = CLOSED_BOOK
    no_search: str | None = None
    first_user: str = P.FIRST_MESSAGE
    closed_book_first_user: str = P.CLOSED_BOOK_FIRST
    status_footer: str = STATUS_FOOTER
    nudge: str = P.NUDGE
    exhausted_nudge: str = P.EXHAUSTED
    continue_: str = P.CONTINUE
    stop: str = P.STOP_NOW
    summarize: str = SUMMARIZE
    verifier: str = VERIFIER
    judge_pointwise: str = POINTWISE_SYSTEM
    judge_pairwise: str = PAIRWISE_SYSTEM
    tools: tuple[tuple[str, str], ...] = field(default=())

    # ------------------------------------------------------------ what the texts say, filled in

    def resolved(self) -> dict[str, Any]:
        """Every key's text as it applies (no_search resolved), and the tool descriptions replaced."""
        out = {k.name: _literal(self, k) for k in KEYS}
        out["no_search"] = self.no_search if self.no_search is not None else self.system
        out["tools"] = dict(sorted(self.tools))
        return out

    @property
    def digest(self) -> str:
        """SHA-256 of the texts as they apply: two files that send the same words have the same digest."""
        return hashlib.sha256(json.dumps(self.resolved(), sort_keys=True).encode()).hexdigest()

    @property
    def is_default(self) -> bool:
        return self.digest == DEFAULT_DIGEST

    def footer(self, state: LedgerState) -> str:
        return self.status_footer.format(turn=state.turn, tokens=state.tokens, points_used=state.points_used,
                                         points_left=state.points_left, budget=state.points_used + state.points_left)

    def tool_schemas(self) -> list[dict]:
        """The protocol's seven schemas, with the descriptions an explicit `[tools]` table replaced."""
        if not self.tools:
            return P.TOOL_SCHEMAS
        new = dict(self.tools)
        return [{**s, "description": new[s["name"]]} if s["name"] in new else s for s in P.TOOL_SCHEMAS]

    def opening(self, item: Item, caps: Caps, ablation: str = "full", text_tools: bool = False) -> P.Prompt:
        """The system prompt, first user message and tools of one episode (`sandbox.prompts.build_prompt`)."""
        schemas = self.tool_schemas()
        if ablation == "closed-book":
            tools = tuple(s for s in schemas if s["name"] == "submit_answer")
            block = P.TEXT_TOOLS_BLOCK + "\n\n" if text_tools else ""
            system = self.closed_book.format(tools_block=block, task_block=P.task_block(item), **_caps(caps))
            return P.Prompt(system, self.closed_book_first_user, tools, self)
        block = P.remove_disabled(P.TOOLS_BLOCK, caps.disabled_tools)
        if text_tools:
            block += "\n\n" + P.TEXT_TOOLS_BLOCK
        template = self.no_search if ablation == "no-search" and self.no_search is not None else self.system
        system = template.format(tools_block=block, task_block=P.task_block(item, gold_given=ablation == "gold-given"),
                                 **_caps(caps))
        tools = tuple(s for s in schemas if s["name"] not in caps.disabled_tools)
        return P.Prompt(system, self.first_user, tools, self)

    # ------------------------------------------------------------ the file

    def to_toml(self) -> str:
        """The set as a commented prompts file: every key with what it is and its placeholders, then `[tools]`
        (commented out with the protocol's descriptions unless some are replaced). `load_text` of it gives this set
        back, and writing that again gives the same bytes."""
        lines = [
            "# AgentHop Workbench prompts: every text the workbench sends an agent or a judge.",
            "# Use it with --prompts FILE.toml (run, scale, serve-mcp); a key left out keeps the workbench's default.",
            "# Placeholders are {name} (Python format fields, so {max_tokens:,} prints 200,000); a literal brace is",
            "# written {{ or }}. A placeholder a key does not take, or a required one left out, is refused on load.",
            "",
        ]
        for key in KEYS:
            value = _literal(self, key) if key.name != "no_search" else (self.no_search or self.system)
            lines.append(f"# {key.name}: {key.about}.")
            if key.allowed:
                lines.append("# placeholders: " + ", ".join(
                    "{" + p + "}" + (" (required)" if p in key.required else "") for p in key.allowed))
            lines.append(f"{key.name} = {_toml_string(value)}")
            lines.append("")
        lines.append("# [tools]: the tool descriptions the agent is given. They are the protocol's (part of what is")
        lines.append("# measured); replace one only on purpose, under an explicit [tools] table.")
        if self.tools:
            lines.append("[tools]")
            lines += [f"{name} = {json.dumps(text, ensure_ascii=False)}" for name, text in sorted(self.tools)]
        else:
            lines.append("# [tools]")
            lines += [f"# {s['name']} = {json.dumps(s['description'], ensure_ascii=False)}" for s in P.TOOL_SCHEMAS]
        return "\n".join(lines) + "\n"


def _literal(prompts: Prompts, key: Key) -> str | None:
    return getattr(prompts, key.attr)


def _caps(caps: Caps) -> dict[str, int]:
    return {"budget": caps.budget, "max_turns": caps.max_turns, "max_tokens": caps.max_tokens_total}


def _toml_string(text: str) -> str:
    """A TOML multi-line basic string holding exactly `text` (the newline after the opening quotes is dropped by
    TOML; backslashes, quote runs and control characters escaped)."""
    out = []
    for i, ch in enumerate(text):
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"' and (i + 1 == len(text) or text[i + 1] == '"'):
            out.append('\\"')
        elif ch in "\n\t" or ord(ch) >= 0x20 and ch != "\x7f":
            out.append(ch)
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"""\n' + "".join(out) + '"""'


DEFAULT_PROMPTS = Prompts()
DEFAULT_DIGEST = DEFAULT_PROMPTS.digest


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
    except (OSError, UnicodeDecodeError) as exc:
        raise PromptsError(f"{path}: cannot read the prompts file ({exc.__class__.__name__}: {exc})") from None
    return load_text(text, str(path))


def load_text(text: str, source: str = "<prompts>") -> Prompts:
    """`load_prompts` of a file's text (`source` names it in messages)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _LINE.search(str(exc))
        where = f"{source}:{m.group(1)}" if m else source
        raise PromptsError(f"{where}: not TOML: {_LINE.sub('', str(exc)).strip()}") from None
    lines = text.splitlines()
    values: dict[str, Any] = {}
    for name, value in data.items():
        if name == "tools":
            values["tools"] = _tools(value, lines, source)
            continue
        key = KEY_BY_NAME.get(name)
        if key is None:
            raise PromptsError(f"{source}:{_key_line(lines, name)}: unknown key '{name}' (known: "
                               f"{', '.join(k.name for k in KEYS)}, and a [tools] table)")
        if not isinstance(value, str):
            raise PromptsError(f"{source}:{_key_line(lines, name)}: key '{name}' must be text (a TOML string), got "
                               f"{_toml_type(value)}")
        _check_placeholders(key, value, lines, source)
        values[key.attr] = value
    return replace(DEFAULT_PROMPTS, **values)


def _tools(value: Any, lines: list[str], source: str) -> tuple[tuple[str, str], ...]:
    if not isinstance(value, dict):
        raise PromptsError(f"{source}:{_key_line(lines, 'tools')}: 'tools' must be a table ([tools]) of tool name = "
                           "description")
    out = []
    for name, text in value.items():
        line = _key_line(lines, name, table="tools")
        if name not in TOOL_NAMES:
            raise PromptsError(f"{source}:{line}: [tools]: unknown tool '{name}' (known: {', '.join(TOOL_NAMES)})")
        if not isinstance(text, str):
            raise PromptsError(f"{source}:{line}: [tools] key '{name}' must be text (a TOML string), got "
                               f"{_toml_type(text)}")
        out.append((name, text))
    return tuple(sorted(out))


def _check_placeholders(key: Key, value: str, lines: list[str], source: str) -> None:
    """Unknown placeholders, malformed braces, bad format specs and missing required placeholders, by line."""
    start = _key_line(lines, key.name)
    try:
        found = [(f, spec) for _, f, spec, _ in string.Formatter().parse(value) if f is not None]
    except ValueError as exc:
        raise PromptsError(f"{source}:{start}: key '{key.name}': {exc} (write a literal brace as {{{{ or }}}})") from None
    for name, spec in found:
        line = _text_line(lines, start, "{" + name)
        if name not in key.allowed:
            takes = (", ".join("{" + p + "}" for p in key.allowed) if key.allowed else "none")
            shown = "{" + name + "}" if name else "{}"
            raise PromptsError(f"{source}:{line}: key '{key.name}': unknown placeholder {shown} (it takes: {takes}; "
                               "a literal brace is written {{ or }})")
        try:
            format(_SAMPLE[name], spec)
        except (ValueError, TypeError) as exc:
            raise PromptsError(f"{source}:{line}: key '{key.name}': placeholder {{{name}:{spec}}}: {exc}") from None
    names = {n for n, _ in found}
    for need in key.required:
        if need not in names:
            raise PromptsError(f"{source}:{start}: key '{key.name}': missing required placeholder {{{need}}}")


_SAMPLE: dict[str, Any] = {"tools_block": "", "task_block": "", "budget": 30, "max_turns": 20, "max_tokens": 200000,
                           "turn": 1, "tokens": 0, "points_used": 0, "points_left": 30}


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
        type(value), type(value).__name__)


def from_stored(text: str | None) -> Prompts:
    """The set a run stored (`runs.prompts`); None (a run stored before prompts were recorded, or one that used the
    defaults) is the defaults."""
    return DEFAULT_PROMPTS if not text else load_text(text, "stored prompts")

