"""`agenthop-tui`: the Textual workbench, or with `--batch` the same operations headless.

The package: `parser` (the command line), `errors` (exit codes, user mistakes), `context` (what a command
opens and closes), and one module per command group: `run` (run, scale), `results` (runs, report, compare,
leaderboard, export, rename, delete), `data` (synth, items, audit, import-reference, import-inspect),
`reach` (serve-mcp, merge), `campaign` (campaign init, run, status, report).

Exit status: 0 success, 2 bad input (dataset, flags, run conflicts; nothing written),
1 an internal failure (with a traceback), 3 a run stopped incomplete by --max-run-tokens/--max-run-cost, by a
model server on this machine that refuses connections or by the store's disk filling up, 130 interrupted (128 + the
signal: 143 SIGTERM, 129 SIGHUP).
The `--batch` path never imports textual, and litellm only when an LLM agent runs.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Callable
from contextlib import ExitStack

from workbench.cli.errors import ExitCode, Terminated, user_exit_code, user_message

# each command by its module and function, imported when it runs: `agenthop-tui` without --batch (the TUI's first
# paint) loads none of them, and one command loads only its own group
COMMANDS = {
    "run": "run:cmd_run",
    "scale": "run:cmd_scale",
    "runs": "results:cmd_runs",
    "report": "results:cmd_report",
    "delete": "results:cmd_delete",
    "rename": "results:cmd_rename",
    "compare": "results:cmd_compare",
    "export": "results:cmd_export",
    "leaderboard": "results:cmd_leaderboard",
    "audit": "data:cmd_audit",
    "items": "data:cmd_items",
    "import-reference": "data:cmd_import_reference",
    "import-inspect": "data:cmd_import_inspect",
    "synth": "data:cmd_synth",
    "prompts": "prompts:cmd_prompts",
    "merge": "reach:cmd_merge",
    "campaign": "campaign:cmd_campaign",
    "serve-mcp": "reach:cmd_serve_mcp",
}


def command(name: str) -> Callable[[argparse.Namespace], int]:
    """The function behind a --batch command."""
    module, _, function = COMMANDS[name].partition(":")
    return getattr(importlib.import_module(f"workbench.cli.{module}"), function)


def batch(argv: list[str]) -> int:
    """Run one headless command; map user mistakes to exit 2 and our bugs to exit 1 with a traceback."""
    from workbench.cli.context import _RESOURCES
    from workbench.cli.parser import attach_list_values, build_parser, hoist_common_options, imply_agent

    parser = build_parser()
    args = imply_agent(parser.parse_args(attach_list_values(hoist_common_options(argv))))
    _warn_of_config(args)
    with ExitStack() as resources:
        token = _RESOURCES.set(resources)
        try:
            return _dispatch(args)
        finally:
            _RESOURCES.reset(token)


def _warn_of_config(args: argparse.Namespace) -> None:
    """A config file that does not read is said in one warning line (the TUI says it at start). Where it matters —
    an LLM run records its `[[pricing]]` — the launch service refuses the run instead (exit 2), so no warning."""
    from workbench.service.config import config_problem

    if args.command in ("run", "scale") and getattr(args, "agent", None) == "llm":
        return
    problem = config_problem()
    if problem is not None:
        sys.stderr.write(f"warning: {problem}; its settings are not used\n")


def _dispatch(args: argparse.Namespace) -> int:
    try:
        return command(args.command)(args)
    except KeyboardInterrupt:
        sys.stderr.write("interrupted: finished trajectories are stored; run the same command again to resume\n")
        return ExitCode.INTERRUPTED
    except Terminated as exc:
        import signal

        try:  # after SIGHUP the terminal may be gone
            sys.stderr.write(
                f"stopped by {signal.Signals(exc.signum).name}: finished trajectories are stored; "
                "run the same command again to resume\n"
            )
            sys.stderr.flush()
        except OSError:
            pass
        return 128 + exc.signum
    except Exception as exc:
        if isinstance(exc, BrokenPipeError):
            raise  # the reader of stdout went away: `main` ends quietly
        code = user_exit_code(exc)
        if code is not None:
            sys.stderr.write(f"error: {user_message(exc)}\n")
            return code
        sys.stderr.write(f"internal error in '{args.command}' (please report it):\n{traceback.format_exc()}")
        return ExitCode.INTERNAL


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if "--batch" in argv:
            argv.remove("--batch")
            status = batch(argv)
        else:
            from workbench.cli.interactive import run_app

            status = run_app(argv)
        sys.stdout.flush()  # a broken pipe shows here, not in the flush at exit (which would print a traceback)
        return int(status)
    except BrokenPipeError:
        return broken_pipe()
    except SystemExit as exc:
        if isinstance(exc.__context__, BrokenPipeError):  # rich's answer to a broken pipe is SystemExit(1)
            return broken_pipe()
        raise


def broken_pipe() -> int:
    """`… | head -1`: the reader has what it wanted, which is no failure; exit 0 without a word. As Python's
    docs advise, stdout is pointed at /dev/null so the interpreter's final flush does not fail again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return ExitCode.OK
