"""Reading a `.env` file the user names: KEY=VALUE lines into the environment (existing variables win)."""
from __future__ import annotations

import os
from pathlib import Path

from workbench.config import ConfigFileError


def load_env_file(path: Path) -> list[str]:
    """Set each variable not already set; return the names set (never their values)."""
    try:
        lines = path.read_text().splitlines()
    except OSError as exc:
        raise ConfigFileError(f"cannot read env file {path}: {exc.strerror}") from None
    names = []
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.removeprefix("export ").split("=", 1)
        key, value = key.strip(), value.strip().strip("'\"")
        if key and key not in os.environ:
            os.environ[key] = value
            names.append(key)
    return names
