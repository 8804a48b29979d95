"""Datasets as a front end reaches them: naming one, opening it (fetching a Hub release, importing it into the
corpus cache on first use), checking a release directory, generating a benchmark — the one door to `sandbox`'s
release, Hub and corpus code.

Naming is light (pathlib only), so the runs list and the parser may use it at first paint; everything that opens
or generates imports its machinery when called.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox.datasets import BUILTIN, dataset_key, dataset_label, open_dataset, qa_file, run_dataset
from sandbox.hub import Fetching, is_hub

__all__ = [
    "BUILTIN",
    "Fetching",
    "builtin_defects",
    "check_hub_spec",
    "check_release_dir",
    "dataset_key",
    "dataset_label",
    "demo_item_count",
    "generate_benchmark",
    "is_hub",
    "open_dataset",
    "open_imported",
    "qa_file",
    "run_dataset",
]


def open_imported(fingerprint: str, cache_dir: Path) -> Any:
    """The corpus imported earlier for `fingerprint`, read-only, without its release directory (moved since);
    None when the cache holds no usable copy."""
    from sandbox.corpus import open_cached

    return open_cached(fingerprint, cache_dir)


def check_release_dir(path: Path) -> None:
    """DatasetError when `path` is not a release directory."""
    from sandbox.release import require_release_dir

    require_release_dir(path)


def check_hub_spec(spec: str) -> None:
    """DatasetError when `spec` is not `hf:OWNER/NAME[@REVISION]` (nothing is asked of the Hub)."""
    from sandbox.hub import parse

    parse(spec)


def demo_item_count() -> int:
    """How many items the built-in benchmark has."""
    from sandbox.synth import PRESETS

    return PRESETS["demo"].items


def generate_benchmark(out: Path, seed: int, preset: str, items: int | None, papers: int | None) -> Path:
    """Write a generated benchmark to `out` (NotEnoughPapers when too few papers are asked for the items)."""
    from sandbox import synth

    return synth.generate(out, seed=seed, preset=preset, items=items, papers=papers)


def builtin_defects() -> dict[str, str]:
    """The real release's defects the built-in benchmark copies on purpose (its import notes them, not warns)."""
    from sandbox.synth import DELIBERATE_DEFECTS

    return DELIBERATE_DEFECTS
