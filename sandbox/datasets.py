"""Naming a dataset: `builtin` (the generated benchmark, written once into the cache), a release directory, or a
release on the Hugging Face Hub (`hf:OWNER/NAME[@REVISION]`, fetched by `sandbox.hub` into the Hub's cache).

`dataset_key` is how every run records its dataset, and the CLI's argument parser and the item
browser need it without the corpus machinery: so this module imports synth, corpus and release
only inside the functions that open or generate a dataset (and huggingface_hub only to fetch one).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sandbox.hub import hub_key, hub_label, is_hub

if TYPE_CHECKING:
    from sandbox.corpus import Corpus, ImportReport
    from sandbox.hub import OnFetch

BUILTIN = "builtin"


def release_key(path: str | Path) -> str:
    """How a run records a release directory: its absolute path with `~` expanded and links resolved, so one
    directory has one spelling whichever way it was typed."""
    return str(Path(path).expanduser().resolve())


def dataset_key(spec: str) -> str:
    """How a run records its dataset: `builtin`, the release directory's `release_key`, or the Hub spec as typed
    (`hf:OWNER/NAME[@REVISION]`; the run records the commit it resolved to beside it)."""
    if is_hub(spec):
        return hub_key(spec)
    return spec if spec == BUILTIN else release_key(spec)


def run_dataset(run: Mapping[str, Any]) -> str:
    """The spec that reopens a stored run's dataset as the run saw it: a Hub release at the commit the run recorded
    (it opens from the Hub's cache offline, and a branch moved since does not change it), else the recorded key."""
    key = str(run["dataset"])
    repo, commit = run.get("dataset_repo"), run.get("dataset_revision")
    if is_hub(key) and repo and commit:
        from sandbox.hub import pinned

        return pinned(repo, commit)
    return key


def dataset_label(key: str) -> str:
    """A recorded dataset as a person reads it in a title or a table: `builtin`, the directory's name, or the Hub
    repository's name."""
    if is_hub(key):
        return hub_label(key)
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


def open_dataset(spec: str, cache_dir: Path, on_fetch: OnFetch | None = None) -> tuple[Corpus, ImportReport | None]:
    """Open `builtin`, a release directory or a Hub release (importing it into the corpus cache on first use).

    A Hub release is fetched first (`on_fetch` hears how far); the opened corpus then names the repository and
    the commit in `origin`, so a run records them beside the fingerprint."""
    from sandbox.corpus import open_release
    from sandbox.release import DatasetError

    if spec == BUILTIN:
        return open_release(builtin_dir(cache_dir), cache_dir)
    if is_hub(spec):
        from sandbox.hub import fetch

        snapshot = fetch(spec, on_fetch)
        corpus, report = open_release(snapshot.path, cache_dir)
        corpus.origin = snapshot
        return corpus, report
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
    if is_hub(spec):
        from sandbox.hub import cached_file

        return cached_file(spec, QA_FILE)  # in the Hub's cache once fetched; nothing is asked of the Hub
    path = Path(spec).expanduser() / QA_FILE
    return path if path.is_file() else None
