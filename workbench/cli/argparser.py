"""The argument parser both front ends use (`agenthop-tui` and `agenthop-tui --batch`): argparse with its error
first and alone. Below the app and the CLI, so the TUI's flags need not import the CLI."""

from __future__ import annotations

import argparse
from typing import NoReturn

EXIT_USAGE = 2


def version() -> str:
    """The installed package's version (`--version`), or "unknown" when run from a tree that was never installed."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("agenthop-workbench")
    except PackageNotFoundError:
        return "unknown"


class Parser(argparse.ArgumentParser):
    """argparse with its error first and alone: one line, then a one-line hint, exit 2. argparse's usage block
    before the error runs to 20 lines for `run`, and the line that matters would scroll out of view."""

    def add_version(self) -> None:
        self.add_argument("--version", action="version", version=f"agenthop-workbench {version()}")

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"error: {message}\n({self.prog} --help lists the options)\n")
