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


class StoreLocationError(ValueError):
    """A store asked for (--db, AGENTHOP_DB) in a directory that does not exist: a typo, most likely."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


def new_store_path(flag: str | None = None) -> Path:
    """`store_path` for a command that creates the store when there is none. A store chosen by --db or
    AGENTHOP_DB goes only into a directory that exists (`run --db /typo/dir/x.sqlite` made the directories and a
    store, while `report --db` on the same path said "no store"); the user data dir is made on first use."""
    path = store_path(flag)
    chosen = bool(flag) or bool(os.environ.get("AGENTHOP_DB"))
    if chosen and not path.exists() and not path.parent.is_dir():
        raise StoreLocationError(
            f"no directory {path.parent} for the store {path.name}: create it first, or choose another --db"
        )
    return path


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
