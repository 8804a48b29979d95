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
    path = config_path()
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise ConfigFileError(f"{path}: {exc}") from None


def pricing_overrides() -> list[JsonObject] | None:
    """The `[[pricing]]` entries of the config file, recorded in an LLM run's options by both the CLI and the launch
    form, so a run costs the same wherever it was started."""
    pricing = load_config().get("pricing")
    return pricing or None
