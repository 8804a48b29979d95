"""Naming a dataset: `builtin` (the generated benchmark, written once into the cache) or a release directory.

`dataset_key` is how every run records its dataset, and the CLI's argument parser and the item
browser need it without the corpus machinery: so this module imports synth, corpus and release
only inside the functions that open or generate a dataset.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sandbox.corpus import Corpus, ImportReport

BUILTIN = "builtin"


def release_key(path: str | Path) -> str:
    """How a run records a release directory: its absolute path with `~` expanded and links resolved, so one
    directory has one spelling whichever way it was typed."""
    return str(Path(path).expanduser().resolve())


def dataset_key(spec: str) -> str:
    """How a run records its dataset: `builtin`, or the release directory's `release_key`."""
    return spec if spec == BUILTIN else release_key(spec)


def dataset_label(key: str) -> str:
    """A recorded dataset as a person reads it in a title or a table: `builtin`, or the directory's name."""
    return key if key == BUILTIN else (Path(key.rstrip("/")).name or key)


def _builtin_root(cache_dir: Path, seed: int = 0) -> Path:
    from sandbox import synth

    return cache_dir / "builtin" / f"v{synth.GENERATOR_VERSION}-seed{seed}"


def builtin_dir(cache_dir: Path, seed: int = 0) -> Path:
    """Where the built-in benchmark lives; generated on first use (deterministic, so always the same bytes)."""
    from sandbox import synth

    root = _builtin_root(cache_dir, seed)
    if not (root / "qa" / "full.jsonl").is_file() or not (root / ".complete").exists():
        if root.exists() and not (root / "qa" / "full.jsonl").is_file():
            shutil.rmtree(root)  # left half-written by a generator before writes were atomic
        try:
            synth.generate(root, seed=seed, preset="demo")
        except OSError:
            if not (root / "qa" / "full.jsonl").is_file():
                raise
            # another process renamed the same (deterministic) release into place first
        (root / ".complete").write_text("ok\n")
    return root


def open_dataset(spec: str, cache_dir: Path) -> tuple[Corpus, ImportReport | None]:
    """Open `builtin` or a release directory (importing it into the corpus cache on first use)."""
    from sandbox.corpus import open_release
    from sandbox.release import DatasetError

    if spec == BUILTIN:
        return open_release(builtin_dir(cache_dir), cache_dir)
    path = Path(spec).expanduser()
    if not path.exists():
        raise DatasetError(path, None, None, "does not exist (use --data builtin or a release directory)")
    return open_release(path, cache_dir)


def qa_file(spec: str, cache_dir: Path) -> Path | None:
    """The dataset's QA file when it can be read right now, without generating or importing anything (a form
    checks item ids and counts a slice from it); None when it is not there yet."""
    from sandbox.release import QA_FILE

    if spec == BUILTIN:
        root = _builtin_root(cache_dir)
        path = root / QA_FILE
        return path if path.is_file() and (root / ".complete").exists() else None
    path = Path(spec).expanduser() / QA_FILE
    return path if path.is_file() else None
