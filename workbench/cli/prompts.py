"""`prompts export` (ours, as a commented file to start a `--prompts` file from) and `prompts show RUN` (exactly what
a stored run was told)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.context import _open_store
from workbench.cli.errors import ExitCode, UsageError


def cmd_prompts(args: argparse.Namespace) -> int:
    from workbench.service import prompts

    if args.prompts_command == "export":
        text = prompts.export_text()
        if args.out:
            try:
                with open(Path(args.out), "w", encoding="utf-8", newline="") as f:  # the bytes exactly, on any OS
                    f.write(text)
            except OSError as exc:
                raise UsageError(f"cannot write {args.out}: {exc.strerror}") from None
            sys.stderr.write(f"wrote {args.out}: pass it with --prompts after editing\n")
        else:
            sys.stdout.write(text)
        return ExitCode.OK
    store = _open_store(args.db)
    shown = prompts.stored(store.run(args.name))
    if shown["text"] is None:
        sys.stderr.write(
            f"run '{args.name}' was stored before runs recorded their prompts: it used the defaults of "
            f"workbench {shown['version']} (prompt hash {(shown['prompt_hash'] or 'unrecorded')[:12]})\n"
        )
        return ExitCode.OK
    sys.stdout.write(shown["text"])
    return ExitCode.OK
