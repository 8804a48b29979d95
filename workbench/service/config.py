"""The user's config file (TOML): theme, key bindings, pricing overrides. Precedence: flags > env > file > defaults."""

from __future__ import annotations

import tomllib
from typing import Any

from storage.json_types import JsonObject
from workbench.service.paths import config_path


class ConfigFileError(Exception):
    """The config file exists but is not valid TOML."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


def load_config() -> dict[str, Any]:
    """The parsed config file, {} when there is none; ConfigFileError saying what is wrong with it, in words."""
    path = config_path()
    if not path.is_file():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigFileError(f"config file {path}: cannot be read ({(exc.strerror or str(exc)).lower()})") from None
    except UnicodeDecodeError:
        raise ConfigFileError(f"config file {path}: not UTF-8 text") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        why = str(exc)
        raise ConfigFileError(f"config file {path}: not valid TOML: {why[:1].lower()}{why[1:]}") from None


def config_problem() -> str | None:
    """What is wrong with the config file, in one line; None when it reads (or there is none)."""
    try:
        load_config()
    except ConfigFileError as exc:
        return str(exc)
    return None


def pricing_overrides() -> list[JsonObject] | None:
    """The `[[pricing]]` entries of the config file, recorded in an LLM run's options by both the CLI and the launch
    form, so a run costs the same wherever it was started."""
    pricing = load_config().get("pricing")
    return pricing or None
