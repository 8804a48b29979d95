"""Placeholder entry for the Textual workbench (built in its own issue)."""
from __future__ import annotations

import sys


def run_app(argv: list[str]) -> int:
    sys.stderr.write("The interactive workbench is not built yet; use `agenthop-tui --batch run|runs|report|synth`.\n")
    return 2
