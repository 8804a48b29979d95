"""The user's config file (TOML): theme, key bindings, pricing overrides. Precedence: flags > env > file > defaults."""
from __future__ import annotations

import tomllib
from typing import Any

from workbench.paths import config_path


class ConfigFileError(Exception):
    """The config file exists but is not valid TOML."""


def load_config() -> dict[str, Any]:
    path = config_path()
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except (tomllib.TOMLDecodeError, OSError) as exc:
        raise ConfigFileError(f"{path}: {exc}") from None
