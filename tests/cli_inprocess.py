"""The real CLI in this process, read like a finished subprocess: for tests where no process boundary is under test
(an interpreter start-up per call costs a fifth of a second, two seconds when it imports litellm)."""

from __future__ import annotations

import subprocess

from workbench.cli import main


def batch(capsys, *args: str) -> subprocess.CompletedProcess:
    """`agenthop-tui --batch ARGS` through `main`: its exit code, stdout and stderr, read from pytest's capsys (or
    capfd, to see what reaches the file descriptors too)."""
    capsys.readouterr()
    try:
        code = main(["--batch", *args])
    except SystemExit as exit_:  # argparse's usage errors exit as the interpreter would
        code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)
