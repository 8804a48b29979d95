"""The general-agent setting: AgentHop's seven tools among N out-of-domain tools the agent should ignore.

The scaling study (arXiv 2602.18998 §2.2, App. B.8) finds agents degrade when one framework offers every domain's
tools at once and splits the loss into tool confusion (calls to other domains' tools) and context overhead (a
longer registry in the prompt), separated by shrinking the registry's descriptions (its Table 8). This module is
the setting's one definition:

- which tools: a registry (`builtin`, a `FILE.json` of OpenAI-format schemas with canned results, or `mcp:COMMAND`),
  from which `count` tools are drawn by a seeded permutation, so that with one seed the 8 tools of a smaller
  registry are among the 16 of a larger one (the registry-size ablation is nested);
- how they are shown: at a `detail` of `full` descriptions, `short` one-line summaries, or `names` (name and
  parameters only); the protocol's seven tools are always shown in full, so only the registry changes;
- in which order: the seven and the extras shuffled together by the same seed, recorded with the run;
- what they cost: `cost` points a call (1 by default), charged by the ledger like any call.

`setting_record` is what a run records and compares on resume; `ExtraTools` is what an episode uses.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TypedDict

from sandbox.records import TOOL_NAMES, ToolSchema
from sandbox.tools import ToolOutcome
from storage.json_types import JsonObject, JsonValue

DETAILS = ("full", "short", "names")
SHORT_CHARS = 80  # a `short` description: the first sentence, at most this many characters
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")  # what OpenAI accepts as a function name


class RegistryError(ValueError):
    """A registry that cannot be used: a malformed file entry, an MCP server that lists nothing usable, a count
    larger than the registry. The message names the file, the entry's index and the field."""

    exit_code = 2


class TokenEstimate(TypedDict):
    """Estimated tokens (characters / 4) of the protocol's part and the extras' part of a prompt section."""

    protocol: int
    extra: int


class SettingIdentity(TypedDict):
    """What a resume must match of a setting (`setting_identity`): None for a key the recorded setting lacks."""

    source: str | None
    count: int | None
    detail: str | None
    cost: int | None
    seed: int | None
    tools: list[str] | None
    order: list[str] | None
    digest: str | None


class SettingRecord(TypedDict):
    """What a run records of its setting (`setting_record`): which tools (`source`, `where`, `count`, `tools`,
    their `digest`), how shown (`detail`), in which `order`, at what `cost`, and the registry's size in the prompt."""

    source: str  # builtin | file | mcp
    count: int
    detail: str
    cost: int
    seed: int
    tools: list[str]
    order: list[str]
    digest: str
    registry_size: int
    tool_block_tokens: TokenEstimate
    schema_tokens: TokenEstimate
    tokens_estimated: str
    where: NotRequired[str]  # the file (absolute) or the command; none for the built-in registry


@dataclass(frozen=True)
class ExtraTool:
    """One out-of-domain tool: its schema and, for a file registry, the canned result every call gets."""

    name: str
    description: str
    parameters: JsonObject  # a JSON Schema, shown to the agent as it is
    canned: str | None = None

    def parameter_names(self) -> list[str]:
        """The names of its parameters, in the schema's order."""
        props = self.parameters.get("properties")
        return list(props) if isinstance(props, dict) else []

    def required(self) -> list[str]:
        """The names of the parameters its schema requires."""
        names = self.parameters.get("required")
        return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []

    def schema(self, detail: str = "full") -> ToolSchema:
        """The schema as the agent is shown it at `detail` (the protocol's `TOOL_SCHEMAS` layout)."""
        if detail == "full":
            return {"name": self.name, "description": self.description, "parameters": self.parameters}
        params = _without_descriptions(self.parameters)
        if detail == "names":
            return {"name": self.name, "parameters": params}
        return {"name": self.name, "description": one_line(self.description), "parameters": params}


def one_line(description: str) -> str:
    """The first sentence of a description, cut at `SHORT_CHARS` (with an ellipsis): the study's one-line summary."""
    first = re.split(r"(?<=[.!?])\s", description.strip(), maxsplit=1)[0].splitlines()[0] if description.strip() else ""
    return first if len(first) <= SHORT_CHARS else first[: SHORT_CHARS - 1].rstrip() + "…"


def _without_descriptions(parameters: JsonObject) -> JsonObject:
    """The parameters with every property's description removed (types, enums, required kept)."""
    out = dict(parameters)
    props = parameters.get("properties")
    if isinstance(props, dict):
        out["properties"] = {
            k: {f: v for f, v in p.items() if f != "description"} if isinstance(p, dict) else p
            for k, p in props.items()
        }
    return out


# ------------------------------------------------------------------------------------------------ registries


def parse_source(text: str) -> tuple[str, str]:
    """("builtin", ""), ("file", path) or ("mcp", command) from the `--extra-tools` value."""
    if text == "builtin":
        return "builtin", ""
    if text.startswith("mcp:"):
        command = text[4:].strip()
        if not command:
            raise RegistryError("--extra-tools mcp: needs a command that starts the MCP server (mcp:COMMAND)")
        return "mcp", command
    return "file", text


def builtin_registry() -> list[ExtraTool]:
    """The built-in registry (`sandbox.extra_tools.builtin`), as ExtraTools."""
    from sandbox.extra_tools.builtin import builtin_tools

    return [ExtraTool(s["name"], s["description"], s["parameters"]) for s, _ in builtin_tools()]


def load_file(path: str | Path) -> list[ExtraTool]:
    """A file registry: a JSON list of OpenAI-format tool schemas (`{"type": "function", "function": {...}}` or the
    bare function object), each with a `result` string, the canned text every call of that tool returns.
    Validated on load; the first problem is raised naming the file, the entry's index and the field."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistryError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text, so not a JSON list of tool schemas") from None
    except OSError as exc:  # a directory, no permission: in the system's words, not Python's exception names
        raise RegistryError(f"{path}: cannot be read ({(exc.strerror or str(exc)).lower()})") from None
    except json.JSONDecodeError as exc:
        raise RegistryError(f"{path}: line {exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, list) or not data:
        raise RegistryError(f"{path}: expected a non-empty JSON list of tool schemas")
    tools: list[ExtraTool] = []
    seen: set[str] = set()
    for index, entry in enumerate(data):
        tools.append(_file_entry(path, index, entry, seen))
    return tools


def _file_entry(path: Path, index: int, entry: JsonValue, seen: set[str]) -> ExtraTool:
    """One entry of a file registry as an extra tool; the first problem raised naming the entry and the field."""

    def bad(fieldname: str, problem: str) -> RegistryError:
        return RegistryError(f"{path}: entry {index}: field '{fieldname}': {problem}")

    if not isinstance(entry, dict):
        raise RegistryError(f"{path}: entry {index}: expected an object, got {type(entry).__name__}")
    fn, prefix = _function_of(entry, bad)
    name = _entry_name(fn, seen, lambda problem: bad(prefix + "name", problem))
    description = fn.get("description", "")
    if not isinstance(description, str):
        raise bad(prefix + "description", "expected a string")
    params = _entry_parameters(fn, lambda where, problem: bad(prefix + where, problem))
    result = entry.get("result", fn.get("result"))
    if not isinstance(result, str):
        raise bad("result", "expected the canned result text (a string) every call of this tool returns")
    return ExtraTool(name, description, params, canned=result)


def _function_of(entry: JsonObject, bad: Callable[[str, str], RegistryError]) -> tuple[JsonObject, str]:
    """The entry's function object and the prefix its fields are named by: the `function` of a wrapped schema
    (`{"type": "function", "function": {...}}`, prefix `function.`), else the entry itself."""
    if "function" not in entry and entry.get("type") != "function":
        return entry, ""
    inner = entry.get("function")
    if not isinstance(inner, dict):
        raise bad("function", "expected an object with name, description and parameters")
    return inner, "function."


def _entry_name(fn: JsonObject, seen: set[str], bad: Callable[[str], RegistryError]) -> str:
    """The function's name: a valid one, not one of the protocol's seven, not listed before (it joins `seen`)."""
    name = fn.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise bad("expected 1–64 letters, digits, '_', '.' or '-'")
    if name in TOOL_NAMES:
        raise bad(f"'{name}' is one of the protocol's seven tools")
    if name in seen:
        raise bad(f"'{name}' is listed twice")
    seen.add(name)
    return name


def _entry_parameters(fn: JsonObject, bad: Callable[[str, str], RegistryError]) -> JsonObject:
    """The function's parameters: a JSON Schema object whose properties are an object and `required` a list of
    names (an object without properties when none is given)."""
    params = fn.get("parameters", {"type": "object", "properties": {}})
    if not isinstance(params, dict) or params.get("type") != "object":
        raise bad("parameters", 'expected a JSON Schema object ({"type": "object", ...})')
    if not isinstance(params.get("properties", {}), dict):
        raise bad("parameters.properties", "expected an object")
    required = params.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise bad("parameters.required", "expected a list of parameter names")
    return params


# ------------------------------------------------------------------------------------------------ the setting


def select(tools: Sequence[ExtraTool], count: int | None, seed: int) -> list[ExtraTool]:
    """`count` tools of the registry (all when None) by a seeded permutation of its names: nested across counts."""
    pool = sorted(tools, key=lambda t: t.name)
    random.Random(f"extra-tools:{seed}").shuffle(pool)
    if count is not None and count > len(pool):
        raise RegistryError(f"--extra-tools-count {count}: the registry has only {len(pool)} tools")
    return pool[: len(pool) if count is None else count]


def presentation_order(extra: Sequence[str], seed: int) -> list[str]:
    """The seven tools and the extras shuffled together (the order of the request's tool schemas)."""
    names = [*TOOL_NAMES, *extra]
    random.Random(f"extra-tools-order:{seed}").shuffle(names)
    return names


def estimated_tokens(text: str) -> int:
    """Characters / 4, rounded up: the workbench's estimate where no tokenizer is at hand (EstimatedUsage)."""
    return -(-len(text) // 4)


def setting_record(
    source: str, tools: Sequence[ExtraTool], count: int | None, detail: str, cost: int, seed: int
) -> SettingRecord:
    """What a run records of its setting. `identity` is compared on resume (which tools and their schemas, how many,
    detail, cost, order seed); `tool_block_tokens` and `schema_tokens` are the registry's size in the prompt."""
    from sandbox.prompts import TOOL_SCHEMAS, TOOLS_BLOCK

    kind, where = parse_source(source)
    if detail not in DETAILS:
        raise RegistryError(f"--extra-tools-detail: unknown '{detail}' (choose from {', '.join(DETAILS)})")
    if cost < 0:
        raise RegistryError("--extra-tools-cost: must be 0 or more points")
    chosen = select(tools, count, seed)
    order = presentation_order([t.name for t in chosen], seed)
    shown = [t.schema(detail) for t in chosen]
    digest = hashlib.sha256(json.dumps([[t.schema("full"), t.canned] for t in chosen], sort_keys=True).encode())
    block = extra_block(chosen, detail, cost)
    record: SettingRecord = {
        "source": kind,
        "count": len(chosen),
        "detail": detail,
        "cost": cost,
        "seed": seed,
        "tools": [t.name for t in chosen],
        "order": order,
        "digest": digest.hexdigest(),
        "registry_size": len(tools),
        "tool_block_tokens": {"protocol": estimated_tokens(TOOLS_BLOCK), "extra": estimated_tokens(block)},
        "schema_tokens": {
            "protocol": estimated_tokens(json.dumps(TOOL_SCHEMAS)),
            "extra": estimated_tokens(json.dumps(shown)),
        },
        "tokens_estimated": "characters / 4",
    }
    if kind != "builtin":  # the file (absolute: a resume may start elsewhere) or the command; not the identity
        record["where"] = str(Path(where).resolve()) if kind == "file" else where
    return record


def setting_identity(record: SettingRecord | None) -> SettingIdentity | None:
    """The part of a setting a resume must match."""
    if record is None:
        return None
    return {
        "source": record.get("source"),
        "count": record.get("count"),
        "detail": record.get("detail"),
        "cost": record.get("cost"),
        "seed": record.get("seed"),
        "tools": record.get("tools"),
        "order": record.get("order"),
        "digest": record.get("digest"),
    }


def extra_block(tools: Sequence[ExtraTool], detail: str, cost: int) -> str:
    """The system prompt's section for the extras, laid out as the protocol's tool lines are."""
    unit = "point" if cost == 1 else "points"
    lines = [f"### Other Tools ({cost} {unit} each)"]
    for t in tools:
        required = set(t.required())
        args = ", ".join(p if p in required else f"{p}=…" for p in t.parameter_names())
        text = {"full": t.description, "short": one_line(t.description), "names": ""}[detail]
        lines.append(f"- **{t.name}**({args})" + (f" — {text}" if text else ""))
    return "\n".join(lines)


ToolCaller = Callable[[str, Any], Awaitable[ToolOutcome]]


@dataclass
class ExtraTools:
    """The setting at run time: what the prompt shows and what a call returns."""

    record: SettingRecord
    tools: list[ExtraTool]
    caller: ToolCaller
    names: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.names = frozenset(t.name for t in self.tools)

    @property
    def cost(self) -> int:
        return int(self.record["cost"])

    def costs(self) -> tuple[tuple[str, int], ...]:
        """(name, cost) of every extra, for the caps the ledger charges by."""
        return tuple((t.name, self.cost) for t in self.tools)

    def tool_block(self, protocol_block: str) -> str:
        """The protocol's tool block with the extras' section after it, and the tool count it states corrected."""
        total = len(TOOL_NAMES) + len(self.tools)
        block = protocol_block.replace("You have seven tools.", f"You have {total} tools.", 1)
        return block + "\n\n" + extra_block(self._in_order(), self.record["detail"], self.cost)

    def request_tools(self, protocol: Sequence[ToolSchema]) -> tuple[ToolSchema, ...]:
        """The protocol's schemas (those the run offers) and the extras', in the recorded order."""
        by_name = {s["name"]: s for s in protocol}
        by_name.update({t.name: t.schema(self.record["detail"]) for t in self.tools})
        return tuple(by_name[n] for n in self.record["order"] if n in by_name)

    def _in_order(self) -> list[ExtraTool]:
        rank = {n: i for i, n in enumerate(self.record["order"])}
        return sorted(self.tools, key=lambda t: rank.get(t.name, len(rank)))

    async def call(self, name: str, args: Any) -> ToolOutcome:
        """One executed call; never raises (a failure is the `Error calling …` text every tool error is)."""
        try:
            return await self.caller(name, args)
        # an MCP transport failing in a way the caller did not expect: a tool error naming it, not a crashed episode
        except Exception as exc:  # noqa: BLE001 — shown to the agent as the tool's error
            return ToolOutcome(f"Error calling {name}: {type(exc).__name__}: {exc}", "error")


def check_arguments(tool: ExtraTool, args: Any) -> str | None:
    """Why `args` cannot be this tool's arguments (the protocol's error wording), or None."""
    if not isinstance(args, dict):
        return f"Error calling {tool.name}: Missing or invalid parameter — arguments must be an object"
    missing = [r for r in tool.required() if r not in args]
    if missing:
        return f"Error calling {tool.name}: Missing or invalid parameter — '{missing[0]}'"
    return None


def local_caller(tools: Sequence[ExtraTool]) -> ToolCaller:
    """Calls answered in-process: a file tool's canned text, a built-in tool's deterministic result."""
    from sandbox.extra_tools.builtin import builtin_result, builtin_tools

    handlers = {s["name"]: h for s, h in builtin_tools()}
    by_name = {t.name: t for t in tools}

    async def call(name: str, args: Any) -> ToolOutcome:
        tool = by_name[name]
        problem = check_arguments(tool, args)
        if problem:
            return ToolOutcome(problem, "error")
        if tool.canned is not None:
            return ToolOutcome(tool.canned)
        return ToolOutcome(builtin_result(name, args, handlers[name]))

    return call
