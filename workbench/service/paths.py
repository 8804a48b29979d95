"""Where things live: the results store, the corpus cache, the config file and the TUI's state (platformdirs).

Precedence for the store: --db, then AGENTHOP_DB, then the user data dir.
"""
from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP = "agenthop-workbench"


def store_path(flag: str | None = None) -> Path:
    if flag:
        return Path(flag).expanduser()
    env = os.environ.get("AGENTHOP_DB")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP)) / "store.sqlite"


def cache_dir() -> Path:
    env = os.environ.get("AGENTHOP_CACHE")
    return Path(env).expanduser() if env else Path(platformdirs.user_cache_dir(APP))


def export_dir() -> Path:
    """Where exports the TUI offers go by default: $AGENTHOP_EXPORTS, else the user's downloads directory when there
    is one, else `exports` in the data dir (made here, so the offered path can be written). Never the working
    directory, which is wherever the TUI happened to be started (a source checkout, `/`)."""
    env = os.environ.get("AGENTHOP_EXPORTS")
    if env:
        return Path(env).expanduser()
    downloads = Path(platformdirs.user_downloads_dir())
    if downloads.is_dir():
        return downloads
    folder = Path(platformdirs.user_data_dir(APP)) / "exports"
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return Path.home()
    return folder


def config_path() -> Path:
    env = os.environ.get("AGENTHOP_CONFIG")
    return Path(env).expanduser() if env else Path(platformdirs.user_config_dir(APP)) / "config.toml"


def state_path() -> Path:
    """What the TUI remembers between sessions (theme, reviewer): a file of its own in the user state dir, so the
    user's config file, with its comments, is never rewritten."""
    env = os.environ.get("AGENTHOP_STATE")
    return Path(env).expanduser() if env else Path(platformdirs.user_state_dir(APP)) / "state.toml"
