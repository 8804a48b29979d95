"""Whether a store file can be written here and, if not, why, in words; and SQLite's own "read-only" and "disk
full" as the store's errors.

A writing command on a store it cannot write must stop before it touches anything (no run-lock folder, no journal
beside the file) and say which file and why: its mode, an immutable flag, a folder that cannot be written, a file
system mounted read-only. `os.access` answers for the process at hand (root included: an immutable file or a
read-only mount binds root, a mode does not); the words come from what the file and its folder are. What no check
can see beforehand (the disk filling up mid-run, a remount) SQLite reports at the write itself: `store_error`
turns those errors into the store's, so every front end words them once.
"""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import subprocess
from pathlib import Path

from storage.errors import StoreError, StoreFull, StoreReadOnly


def write_problem(path: Path) -> str | None:
    """Why the store file `path` (existing, or to be created) cannot be written by this process; None when it can.

    It never opens the file: closing any descriptor of a database file drops every POSIX lock this process holds
    on it, SQLite's included, and a run asks this of the store it has open (`storage.locks`)."""
    folder = path.parent
    if _mounted_read_only(folder):
        return "its file system is mounted read-only"
    if path.exists() and not os.access(path, os.W_OK):
        if _immutable(path):
            return "the file is immutable (chattr +i)"
        return f"the file is not writable by this user (mode {stat.filemode(path.stat().st_mode)[1:]})"
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        why = "immutable (chattr +i)" if _immutable(folder) else "read-only"
        if not path.exists():
            return f"its folder {folder} is {why}"
        return f"its folder {folder} is {why}, and SQLite writes its journal and the run locks beside the file"
    return None


def _mounted_read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no such folder (yet), or no statvfs (Windows)
        return False


def _immutable(path: Path) -> bool:
    """The Linux immutable flag (`chattr +i`), as `lsattr` reads it in a process of its own (never a descriptor of
    ours: see `write_problem`); False wherever it cannot be read. Asked only of a path already found unwritable."""
    try:
        done = subprocess.run(["lsattr", "-d", str(path)], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):  # no lsattr (not Linux, no e2fsprogs)
        return False
    flags = done.stdout.split(maxsplit=1)[0] if done.returncode == 0 and done.stdout.strip() else ""
    return "i" in flags


def refusal(path: Path, why: str) -> StoreReadOnly:
    """The one-line refusal of a write to the store at `path`, saying why."""
    return StoreReadOnly(f"{path}: the store cannot be written: {why}; nothing was changed", remedy="writable_store")


def check_writable(path: Path) -> None:
    """Refuse (StoreReadOnly) before anything is created when the store at `path` cannot be written."""
    problem = write_problem(path)
    if problem is not None:
        raise refusal(path, problem)


def full(path: Path, detail: str) -> StoreFull:
    """The store's disk is full: what SQLite (or the OS) said."""
    return StoreFull(f"{path}: the store's disk is full ({detail})", remedy="free_space")


def store_error(path: Path, exc: BaseException) -> StoreError | None:
    """SQLite's read-only and disk-full errors, and an OSError of a full or read-only disk, as the store's; None for
    any other error."""
    if isinstance(exc, sqlite3.Error):
        name = getattr(exc, "sqlite_errorname", "") or ""
        if name.startswith("SQLITE_READONLY"):
            return refusal(path, write_problem(path) or "SQLite can only read it here")
        if name == "SQLITE_FULL":
            return full(path, str(exc))
        return None
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC)):
        return full(path, (exc.strerror or str(exc)).lower())
    if isinstance(exc, OSError) and exc.errno == errno.EROFS:
        return refusal(path, "its file system is mounted read-only")
    return None
