"""The slice of a dataset a run would play, before it starts: the launch form refuses unknown item ids and an
empty slice, and counts the episodes its cost note prices.

Read only when that costs nothing: the dataset's QA file when it is at hand (the built-in benchmark once
generated, a release directory, a Hub release once in the Hub's cache), never by opening or importing the dataset;
otherwise an upper bound from the ids or the dataset's size.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from types import SimpleNamespace

from sandbox.records import Item


@dataclass(frozen=True)
class QARow:
    """What selecting a slice needs of an item; `kind` is computed as `Item` computes it."""

    id: str
    question_type: str | None
    depth: int | None

    multi_target = Item.multi_target
    kind = Item.kind


@lru_cache(maxsize=8)
def _qa_rows(path: str, mtime_ns: int, size: int) -> tuple[QARow, ...] | None:
    """The QA file's items (cached while the file is unchanged: the form validates on every keystroke)."""
    rows = []
    try:
        with open(path, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    obj = json.loads(line)
                    rows.append(QARow(str(obj["id"]), obj.get("question_type"), obj.get("depth")))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return tuple(rows)


def dataset_rows(dataset: str, cache_dir: Path | None) -> tuple[QARow, ...] | None:
    """The dataset's items when its QA file can be read without generating or importing anything, else None."""
    from workbench.service.datasets import qa_file

    path = qa_file(dataset, cache_dir) if cache_dir is not None else None
    if path is None:
        return None
    try:
        st = path.stat()
    except OSError:
        return None
    return _qa_rows(str(path), st.st_mtime_ns, st.st_size)


def slice_episodes(spec, cache_dir: Path | None) -> tuple[tuple[int, bool] | None, str | None]:
    """((episodes the run plays, whether that count is exact), why the slice is invalid).

    Exact from the dataset's items (the runner's own `select_items`, so unknown ids are refused here, before
    launch); otherwise an upper bound from the ids or the dataset's size (the slice is applied when it opens)."""
    from workbench.service.errors import InvalidSlice
    from workbench.service.execution import select_items

    rows = dataset_rows(spec.dataset, cache_dir)
    if rows is not None:
        try:
            items = select_items(SimpleNamespace(items=list(rows)), spec)
        except InvalidSlice as exc:
            return None, str(exc)
        return (len(items) * spec.replicates, True), None
    n = len(spec.item_ids) or dataset_size(spec.dataset)
    if n is None:
        return None, None
    if spec.limit:
        n = min(n, spec.limit)
    return (n * spec.replicates, not (spec.question_type or spec.depth)), None


def dataset_size(dataset: str) -> int | None:
    """Items in the dataset without opening it: the built-in benchmark's size, or the QA file's line count."""
    if dataset == "builtin":
        from workbench.service.datasets import demo_item_count

        return demo_item_count()
    from workbench.service.datasets import is_hub, qa_file

    path = qa_file(dataset, Path()) if is_hub(dataset) else Path(dataset) / "qa" / "full.jsonl"  # Hub: if cached
    if path is None:
        return None
    try:
        with open(path, "rb") as fh:
            return sum(1 for line in fh if line.strip())
    except OSError:
        return None
