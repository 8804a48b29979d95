"""The TUI's two TOML files: the user's config (read, never written) and the app's state (what it remembers).

The config file is the user's:

    [ui]
    theme = "agenthop-light"

    [keys]
    "stepper.next" = "right,l,space"
    "runs.delete" = "D"

    [audit]
    reviewer = "ana"

The state file (`paths.state_path`) has the same tables for what the app remembers — the theme last chosen
with `T`, the reviewer last named with `R` — and wins over the config file for them. Only the state file is
written, with the tiny writer below, so the user's comments and layout are never lost. A broken file never
stops the app: `load` reports the problem and the defaults apply.
"""

from __future__ import annotations

import ast
import math
import os
import re
import tomllib
from collections.abc import Mapping
from datetime import date, datetime, time
from pathlib import Path
from typing import TypeAlias

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")  # \Z: "$" would accept a trailing newline

TomlValue: TypeAlias = (
    str
    | int
    | float
    | bool
    | datetime
    | date
    | time
    | list["TomlValue"]
    | tuple["TomlValue", ...]
    | dict[str, "TomlValue"]
)
TomlTable: TypeAlias = dict[str, TomlValue]
"""A parsed TOML file (what `tomllib` returns): the user writes anything there, so its values are any TOML."""


class ConfigError(Exception):
    """The config file exists but cannot be used."""


def load(path: Path) -> TomlTable:
    """The parsed file, {} when it does not exist. Raises ConfigError for unreadable or invalid TOML."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: {exc.strerror or exc}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None


def keymap(config: Mapping[str, TomlValue]) -> tuple[dict[str, str], list[str]]:
    """The `[keys]` table as a Textual keymap (binding id → keys) and warnings for entries that are not strings."""
    table = config.get("keys", {})
    if not isinstance(table, dict):
        return {}, ['[keys] must be a table of binding-id = "key"']
    out, warnings = {}, []
    for binding_id, keys in table.items():
        joined = _keys(keys)
        if joined is None:
            warnings.append(f'[keys] {binding_id}: expected a key string such as "ctrl+n"')
        else:
            out[str(binding_id)] = joined
    return out, warnings


def _keys(keys: TomlValue) -> str | None:
    """A [keys] entry as Textual's comma-separated keys: "ctrl+n, f2" or ["ctrl+n", "f2"]; None when it is
    neither a non-blank string nor a non-empty list of strings."""
    if isinstance(keys, str):
        return _key_string(keys)
    if isinstance(keys, list):
        return _key_list(keys)
    return None


def _key_string(keys: str) -> str | None:
    """ "ctrl+n, f2" as "ctrl+n,f2"; None when blank."""
    if not keys.strip():
        return None
    return ",".join(k.strip() for k in keys.split(",") if k.strip())


def _key_list(keys: list[TomlValue]) -> str | None:
    """["ctrl+n", "f2"] as "ctrl+n,f2"; None when empty or when an entry is not a string."""
    names = [k.strip() for k in keys if isinstance(k, str)]
    return ",".join(names) if names and len(names) == len(keys) else None


def binding_ids(root: Path | None = None) -> set[str]:
    """Every binding id the workbench declares (`Binding(..., id="…")` in its source), found by reading the source
    rather than importing every screen (some import scipy): the names a [keys] entry can use. Screens added later
    are covered without a list to maintain."""
    root = root or Path(__file__).resolve().parents[1]
    ids: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "Binding(" in text:
            ids.update(_binding_ids_in(text))
    return ids


def _binding_ids_in(source: str) -> set[str]:
    """The constant `id=` arguments of the `Binding(...)` calls in one module's source."""
    ids: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "Binding":
            ids.update(
                kw.value.value
                for kw in node.keywords
                if kw.arg == "id" and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str)
            )
    return ids


def unknown_keys(keymap: dict[str, str], known: set[str]) -> str | None:
    """A warning naming the [keys] entries that match no binding id (a typo would otherwise do nothing), or None."""
    unknown = sorted(k for k in keymap if k not in known)
    if not unknown:
        return None
    return f"[keys] {', '.join(unknown)}: no such binding id (ignored); ? lists each screen's keys with their ids"


def _setting(files: tuple[Mapping[str, TomlValue], ...], table: str, key: str) -> str | None:
    """`[table] key` from the first file that has it as a non-blank string (state before config)."""
    for data in files:
        section = data.get(table, {})
        value = section.get(key) if isinstance(section, dict) else None
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def theme(config: Mapping[str, TomlValue], state: Mapping[str, TomlValue] | None = None) -> str | None:
    """The theme last chosen in the app (state), else the config file's `[ui] theme`."""
    return _setting((state or {}, config), "ui", "theme")


def reviewer(config: Mapping[str, TomlValue], state: Mapping[str, TomlValue] | None = None) -> str:
    """Who audit verdicts are recorded under: the reviewer last named in the app (state), else the config file's
    `[audit] reviewer`, else $USER, else "reviewer"."""
    return (
        _setting((state or {}, config), "audit", "reviewer")
        or os.environ.get("USER")
        or os.environ.get("USERNAME")
        or "reviewer"
    )


def load_quietly(path: Path) -> TomlTable:
    """`load`, with a broken or unreadable file read as empty (the app warns about the config file at start)."""
    try:
        return load(path)
    except ConfigError:
        return {}


def remember_theme(path: Path, name: str) -> None:
    """Store the theme choice in the state file `path`, keeping the rest of its tables and values."""
    remember(path, "ui", "theme", name)


def remember_reviewer(path: Path, name: str) -> None:
    """Store the audit reviewer's name (`[audit] reviewer`) in the state file `path`, keeping the rest of it."""
    remember(path, "audit", "reviewer", name)


def saved_panels(state: Mapping[str, TomlValue]) -> dict[str, list[str]]:
    """The panels saved in the app (`[panels] NAME = ["run", …]`), by name; anything else there is ignored."""
    table = state.get("panels")
    if not isinstance(table, dict):
        return {}
    return {
        str(k): [str(x) for x in v]
        for k, v in table.items()
        if isinstance(v, list) and all(isinstance(x, str) for x in v)
    }


def remember(path: Path, table: str, key: str, value: TomlValue) -> None:
    """Set `[table] key = value` in the file, keeping its other tables and values; a file that does not parse, or
    that this little writer cannot write back, is left alone."""
    try:
        config = load(path)
    except ConfigError:
        return  # never overwrite a file the user is editing and broke
    section = config.setdefault(table, {})
    if not isinstance(section, dict):
        return
    if section.get(key) == value:
        return
    section[key] = value
    try:
        text = dumps(config)
    except TypeError:  # a value this little writer does not handle (dates, arrays of tables): leave the file alone
        return
    _write(path, text)


def save(path: Path, config: TomlTable) -> None:
    _write(path, dumps(config))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# ---------------------------------------------------------------- a tiny TOML writer


def dumps(config: TomlTable) -> str:
    """TOML for a dict of scalars, lists of scalars and (nested) tables. Enough for this config file."""
    lines = ["# AgentHop Workbench state: what the app remembers (rewritten by it; settings go in config.toml)"]
    _table(lines, [], config)
    return "\n".join(lines) + "\n"


def _table(lines: list[str], prefix: list[str], table: TomlTable) -> None:
    """Append `table` at the dotted name `prefix`: its header (when it has values of its own, or is empty), its
    values, then its sub-tables."""
    scalars, tables = _partition(table)
    if prefix and (scalars or not tables):
        lines.append("")
        lines.append("[" + ".".join(_key(p) for p in prefix) + "]")
    for key, value in scalars.items():
        lines.append(f"{_key(key)} = {_value(value)}")
    for key, sub in tables.items():
        _table(lines, [*prefix, key], sub)


def _partition(table: TomlTable) -> tuple[TomlTable, dict[str, TomlTable]]:
    """A table's values and its sub-tables, apart (TOML writes a table's own values before its sub-tables)."""
    scalars: TomlTable = {}
    tables: dict[str, TomlTable] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            tables[key] = value
        else:
            scalars[key] = value
    return scalars, tables


def _key(key: str) -> str:
    return key if _BARE_KEY.match(key) else _string(key)


def _string(text: str) -> str:
    out = ['"']
    for ch in text:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _value(value: TomlValue) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to TOML")


def _float(value: float) -> str:
    """A float as TOML writes it: nan and ±inf by name, the rest as Python's shortest round-tripping repr."""
    if math.isnan(value):
        return "nan"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return repr(value)
