"""Reading a `.env` file the user names into the environment (existing variables win).

Parsed by python-dotenv (a dependency of litellm already): quoting, `export `, escapes and trailing
`# comments` follow its documented grammar, where a hand-written reader turned `A="abc" # c` into `abc" # c`.
"""

from __future__ import annotations

import os
from pathlib import Path

from dotenv import dotenv_values

from workbench.service.config import ConfigFileError


def load_env_file(path: Path) -> list[str]:
    """Set each variable not already set; return the names set (never their values)."""
    if not path.is_file():
        raise ConfigFileError(f"cannot read env file {path}: no such file")
    try:
        values = dotenv_values(path, interpolate=False, encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigFileError(f"cannot read env file {path}: {getattr(exc, 'strerror', None) or exc}") from None
    names = []
    for key, value in values.items():
        if key and value is not None and key not in os.environ:
            os.environ[key] = value
            names.append(key)
    return names
