"""Files and folders made unwritable for the process running the tests, whoever it is.

A file mode binds an ordinary user but not root (the suite may run as root in a container), so as root the paths
are made immutable (`chattr +i`), which binds root too; where neither is possible the test is skipped rather than
passing on a store it could in fact write.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def unwritable(*paths: Path) -> Iterator[str]:
    """`paths` (files, then their folder) made unwritable for this process for the block; the words the refusal
    should use for the first of them."""
    if getattr(os, "geteuid", lambda: -1)() != 0:
        modes = [(p, p.stat().st_mode) for p in paths]
        for p in paths:
            p.chmod(0o555 if p.is_dir() else 0o444)
        try:
            yield "not writable by this user" if paths[0].is_file() else "is read-only"
        finally:
            for p, mode in reversed(modes):
                p.chmod(mode)
        return
    if shutil.which("chattr") is None:
        pytest.skip("running as root without chattr: no way to make a file read-only for root here")
    done: list[Path] = []
    try:
        for p in paths:
            if subprocess.run(["chattr", "+i", str(p)], capture_output=True).returncode != 0:
                pytest.skip("chattr +i refused here (no CAP_LINUX_IMMUTABLE, or a file system without flags)")
            done.append(p)
        yield "immutable"
    finally:
        for p in reversed(done):
            subprocess.run(["chattr", "-i", str(p)], check=True)
