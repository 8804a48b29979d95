"""The files the TUI's export dialogs offer and accept: a name made safe from run or source names, and the check
that a file's directory exists where the CLI refuses a missing one."""

from __future__ import annotations

from pathlib import Path


def safe_stem(text: str, fallback: str) -> str:
    """`text` as a file name's stem: each character other than a letter, a digit, `-`, `_` or `.` as `_`
    (`fallback` for an empty text)."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text) or fallback


def missing_directory(value: str) -> str | None:
    """Why the file `value` cannot be written for want of its directory, or None: a typo in the directory is never
    created (the CLI refuses a missing one too)."""
    parent = Path(value).expanduser().parent
    return None if parent.is_dir() else f"no directory {parent}: create it first, or choose another"
