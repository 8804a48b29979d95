"""`agenthop-tui` without `--batch`: its flags parsed here, with the CLI's parser, and the Textual app opened.

The command line is the CLI's (the one entry point parses every flag); the app itself is `workbench.tui.app`.
"""

from __future__ import annotations

import sys

from workbench.cli.argparser import Parser


def build_app(argv: list[str]):
    """Parse `agenthop-tui [--db PATH] [--theme NAME]` into an app (SystemExit on bad flags, ValueError on a bad
    theme)."""
    from workbench.tui.app import build_app as app_for

    parser = Parser(prog="agenthop-tui", description="AgentHop Workbench (use --batch for headless).")
    parser.add_version()
    parser.add_argument("--db", help="results store (default: $AGENTHOP_DB or the user data dir)")
    parser.add_argument("--theme", help="a theme name: agenthop-dark, agenthop-light, ansi-dark, textual-dark, …")
    args = parser.parse_args(argv)
    return app_for(db=args.db, theme_flag=args.theme)


def run_app(argv: list[str]) -> int:
    """Open the workbench; exit 2 with one line for a bad flag, theme or store."""
    from workbench.tui.app import run_app as run

    try:
        app = build_app(argv)
    except ValueError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return 2
    if not sys.stdout.isatty():  # `agenthop-tui | cat` drew the screen into the pipe at a fixed 80x24
        sys.stderr.write("error: the workbench needs a terminal; use --batch for scripts\n")
        return 2
    return run(app)
