"""Naming a dataset: `builtin` (the generated benchmark, written once into the cache) or a release directory."""
from __future__ import annotations

from pathlib import Path

from sandbox import synth
from sandbox.corpus import Corpus, ImportReport, open_release
from sandbox.release import QA_FILE, DatasetError

BUILTIN = "builtin"


def _builtin_root(cache_dir: Path, seed: int = 0) -> Path:
    return cache_dir / "builtin" / f"v{synth.GENERATOR_VERSION}-seed{seed}"


def builtin_dir(cache_dir: Path, seed: int = 0) -> Path:
    """Where the built-in benchmark lives; generated on first use (deterministic, so always the same bytes)."""
    root = _builtin_root(cache_dir, seed)
    if not (root / "qa" / "full.jsonl").is_file() or not (root / ".complete").exists():
        synth.generate(root, seed=seed, preset="demo")
        (root / ".complete").write_text("ok\n")
    return root


def open_dataset(spec: str, cache_dir: Path) -> tuple[Corpus, ImportReport | None]:
    """Open `builtin` or a release directory (importing it into the corpus cache on first use)."""
    if spec == BUILTIN:
        return open_release(builtin_dir(cache_dir), cache_dir)
    path = Path(spec).expanduser()
    if not path.exists():
        raise DatasetError(path, None, None, "does not exist (use --data builtin or a release directory)")
    return open_release(path, cache_dir)


def qa_file(spec: str, cache_dir: Path) -> Path | None:
    """The dataset's QA file when it can be read right now, without generating or importing anything (a form
    checks item ids and counts a slice from it); None when it is not there yet."""
    if spec == BUILTIN:
        root = _builtin_root(cache_dir)
        path = root / QA_FILE
        return path if path.is_file() and (root / ".complete").exists() else None
    path = Path(spec).expanduser() / QA_FILE
    return path if path.is_file() else None
