"""Corpora opened on demand for the stepper (gold papers, titles), cached per dataset, never at startup.

Opening a release the first time imports it into the corpus cache, which can take a
while: callers use `item_context` from a thread worker. A corpus that cannot be opened
(moved release, deleted cache) is remembered as unavailable and the stepper degrades:
no gold marks, no titles, but the transcript and meters still work.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ItemContext:
    item_id: str
    item: Any = None  # sandbox.records.Item, or None when unavailable
    titles: dict[str, str] = field(default_factory=dict)  # S2 paper id → title (the item's neighbourhood)
    arxiv: dict[str, str] = field(default_factory=dict)  # S2 paper id → arXiv id
    note: str | None = None  # why the item is missing, or a warning (dataset changed since the run)


class CorpusCache:
    def __init__(self, cache_dir: Path):
        self.cache_dir = cache_dir
        self._lock = threading.Lock()
        self._corpora: dict[str, Any] = {}
        self._errors: dict[str, str] = {}
        self._contexts: dict[tuple[str, str], ItemContext] = {}

    def cached(self, dataset: str, item_id: str) -> ItemContext | None:
        with self._lock:
            return self._contexts.get((dataset, item_id))

    def _corpus(self, dataset: str) -> Any:
        with self._lock:
            if dataset in self._corpora:
                return self._corpora[dataset]
            if dataset in self._errors:
                raise LookupError(self._errors[dataset])
        from sandbox.datasets import open_dataset

        try:
            corpus, _ = open_dataset(dataset, self.cache_dir)
        except Exception as exc:  # a missing or invalid release: degrade, remember why
            message = f"corpus unavailable ({exc})"
            with self._lock:
                self._errors[dataset] = message
            raise LookupError(message) from None
        with self._lock:
            self._corpora.setdefault(dataset, corpus)
            return self._corpora[dataset]

    def corpus(self, dataset: str) -> Any:
        """The opened corpus (imported on first use: call from a thread worker); LookupError when unavailable."""
        return self._corpus(dataset)

    def forget_error(self, dataset: str) -> None:
        """Let the next open of `dataset` try again (it failed before: a moved release may be back)."""
        with self._lock:
            self._errors.pop(dataset, None)

    def item_context(self, dataset: str, fingerprint: str | None, item_id: str) -> ItemContext:
        """The item with its neighbourhood's titles; never raises (the context says what is missing)."""
        hit = self.cached(dataset, item_id)
        if hit is not None:
            return hit
        try:
            corpus = self._corpus(dataset)
        except LookupError as exc:
            return ItemContext(item_id, note=str(exc))
        try:
            item = corpus.item(item_id)
        except KeyError:
            ctx = ItemContext(item_id, note=f"item {item_id} is not in the dataset any more")
        else:
            view = corpus.view(item)
            titles = {s2: str(n.data.get("title") or "") for s2, n in view.nodes.items()}
            arxiv = {s2: n.arxiv_id for s2, n in view.nodes.items() if n.arxiv_id}
            note = None
            if fingerprint and corpus.fingerprint != fingerprint:
                note = "the dataset changed since this run: marks may be wrong"
            ctx = ItemContext(item_id, item, titles, arxiv, note)
        with self._lock:
            self._contexts[(dataset, item_id)] = ctx
        return ctx

    def close(self) -> None:
        with self._lock:
            for corpus in self._corpora.values():
                try:
                    corpus.close()
                except Exception:
                    pass
            self._corpora.clear()
