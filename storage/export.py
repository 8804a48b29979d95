"""JSON Lines export of a stored run: one line per trajectory with every step and its full text.

For taking a run elsewhere (pandas, jq, another machine) without the SQLite file; texts that
the store deduplicates by hash come back in full on every step.
"""

from __future__ import annotations

import errno
import json
import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from storage.store import Store

INTERNAL_STEP_KEYS = ("trajectory_id", "text_hash")
RUN_HEADER = (
    "name",
    "agent",
    "model",
    "family",
    "tier",
    "dataset",
    "dataset_fingerprint",
    "dataset_repo",
    "dataset_revision",
    "ablation",
    "seed",
    "caps",
    "prompt_hash",
)
# what the run was asked beyond its caps: the sequential strategy and its scaling design, the token axis's context
# budget, the general-agent setting (its tools, order, detail, cost): `prompts show RUN` prints the prompts themselves
CONFIG_HEADER = ("scaling", "context_budget", "extra_tools")


def trajectory_lines(
    store: Store, run_name: str, all_attempts: bool = False, with_steps: bool = True
) -> Iterator[dict[str, Any]]:
    """(trajectory dict, with its `steps` unless asked not to) for each trajectory of the run, in store order."""
    run = store.run(run_name)
    header = {k: run.get(k) for k in RUN_HEADER}  # a store read before a migration lacks its columns
    config = run.get("config") or {}
    header.update({k: config[k] for k in CONFIG_HEADER if config.get(k) is not None})
    for t in store.trajectories(run["id"], final_only=not all_attempts):
        line = {"run": header, **t}
        if with_steps:
            line["steps"] = [{k: v for k, v in s.items() if k not in INTERNAL_STEP_KEYS} for s in store.steps(t["id"])]
        yield line


def export_jsonl(
    store: Store, run_name: str, out: TextIO | Path | str, all_attempts: bool = False, with_steps: bool = True
) -> int:
    """Write the run as JSON Lines to a stream or a file (written atomically); the number of lines.

    Final attempts only unless `all_attempts`. Raises StoreError for an unknown run (before writing).
    """
    store.run(run_name)  # fail on an unknown run before creating any file
    if not isinstance(out, (str, Path)):
        return _write(store, run_name, out, all_attempts, with_steps)
    with atomic_text_file(Path(out)) as fh:
        return _write(store, run_name, fh, all_attempts, with_steps)


@contextmanager
def atomic_text_file(path: Path) -> Iterator[TextIO]:
    """A text file written beside `path` and renamed onto it when the block ends without error, so a reader
    never sees half a file and a failure leaves none. A directory at `path` is refused up front (renaming onto
    it would fail only after all the writing); OSError (missing folder, permissions) reaches the caller."""
    if path.is_dir():
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    fd, tmp = _created_beside(path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            yield fh
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _created_beside(path: Path) -> tuple[int, str]:
    """A new hidden file next to `path` (descriptor, name), its mode 0666 less the umask as any file a user
    writes: `tempfile.mkstemp` makes it 0600, which the rename kept (exports came out -rw------- under umask
    022). O_EXCL with a random name, as mkstemp does, so nothing else's file is ever opened."""
    while True:
        tmp = str(path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue


def _write(store: Store, run_name: str, fh: TextIO, all_attempts: bool, with_steps: bool) -> int:
    n = 0
    for line in trajectory_lines(store, run_name, all_attempts, with_steps):
        fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
        n += 1
    return n
