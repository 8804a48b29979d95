"""How a headless command ends: its exit code, and the exceptions that are a user's mistake.

A user's mistake is any exception whose class carries `exit_code` (the dataset, store, config, audit, items,
scaling and import errors of the packages below, and `UsageError` here): the CLI prints its message in one line
and exits with that code. The classes live where they are raised and say so themselves, so no table of error
names has to follow them, and a command imports only what it uses.
"""

from __future__ import annotations

from enum import IntEnum

from workbench.views.cells import shell_word


class ExitCode(IntEnum):
    OK = 0
    INTERNAL = 1  # our bug: a traceback
    USAGE = 2  # bad input: one line, nothing written
    INCOMPLETE = 3  # a run stopped by --max-run-tokens / --max-run-cost, an unreachable model server, a full disk
    INTERRUPTED = 130  # Ctrl-C (128 + SIGINT); SIGTERM and SIGHUP give 128 + their number


class UsageError(Exception):
    """A user's mistake in flags or names: reported in one line, exit 2."""

    exit_code = ExitCode.USAGE


class Terminated(Exception):
    """SIGTERM or SIGHUP ended a run (as Ctrl-C does): exit 128 + the signal's number."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def user_exit_code(exc: BaseException) -> int | None:
    """The exit code a user's mistake carries, or None for anything else (our bug)."""
    code = getattr(type(exc), "exit_code", None)
    return int(code) if isinstance(code, int) else None


# What the user can do about a store problem (`storage.StoreError.remedy`), in this front end's words.
REMEDIES = {
    "another_store": "choose another --db",
    "writable_store": "make it writable, or choose another --db",
    "free_space": "free space on its disk, or choose another --db",
    "rename_or_delete_run": "choose another --run name, or move the old run aside (--batch rename {run} NEW) or "
    "delete it (--batch delete {run})",
    "campaign_run_changed": "keep the run's settings in the campaign file to resume it, give its model another name "
    "there, or move the old run aside (--batch rename {run} NEW) or delete it (--batch delete {run})",
    "rename_to_keep_both": "rename one of them (--batch rename {run} NEW) to keep both",
    "tag_alike": "give the shards one tag (--batch runs tag {run} --family NAME --tier TIER --db STORE on the "
    "store that differs), then merge again",
}


def user_message(exc: BaseException) -> str:
    """A user's mistake in one line: its message, then what to do about it in flags where the error names it. An
    error carrying several `problems` (the launch service's) is one line each."""
    problems = getattr(exc, "problems", None)
    if problems:
        return "\nerror: ".join(problems.values())
    remedy = REMEDIES.get(getattr(exc, "remedy", None) or "")
    run = getattr(exc, "run", None)
    return f"{exc}: {remedy.format(run=shell_word(run) if run else 'NAME')}" if remedy else str(exc)
