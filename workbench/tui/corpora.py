"""Corpora opened on demand for the stepper (gold papers, titles), cached per dataset, never at startup.

Opening a release the first time imports it into the corpus cache, which can take a
while: callers use `item_context` from a thread worker. When the release directory has
moved or gone, the copy imported earlier (the cache is keyed by the dataset's
fingerprint, which the run recorded) is used read-only. A corpus that still cannot be
opened is remembered as unavailable for a while (`RETRY_AFTER_S`, or until
`forget_failures`: `R` in the stepper) and the stepper degrades: no gold marks, no
titles, but the transcript and meters still work.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

RETRY_AFTER_S = 30.0
MOVED_NOTE = "the release directory has moved: marks and titles come from the copy imported earlier"


@dataclass(frozen=True)
class ItemContext:
    item_id: str
    item: Any = None  # the Item (sandbox.records), or None when unavailable
    titles: dict[str, str] = field(default_factory=dict)  # S2 paper id → title (the item's neighbourhood)
    arxiv: dict[str, str] = field(default_factory=dict)  # S2 paper id → arXiv id
    note: str | None = None  # why the item is missing, or a warning (dataset changed since the run)


def unavailable(dataset: str, exc: Exception) -> str:
    """Why a run's corpus cannot be shown, in the TUI's words (the dataset errors speak the CLI's)."""
    from workbench.service.errors import DatasetError

    if isinstance(exc, DatasetError) and not Path(dataset).expanduser().exists():
        return (
            f"corpus unavailable: the release directory {dataset} is gone (moved or deleted) and the corpus "
            "cache holds no copy of it; press R to look again once it is back"
        )
    detail = exc.message if isinstance(exc, DatasetError) else str(exc)
    return f"corpus unavailable: {detail}"


class CorpusCache:
    def __init__(self, cache_dir: Path, clock: Callable[[], float] = time.monotonic):
        self.cache_dir = cache_dir
        self.clock = clock
        self._lock = threading.Lock()
        self._corpora: dict[str, Any] = {}
        self._notes: dict[str, str] = {}  # dataset → a warning about where its corpus came from
        self._errors: dict[str, tuple[str, float]] = {}  # dataset → (why it is unavailable, when that was found)
        self._contexts: dict[tuple[str, str], ItemContext] = {}

    def cached(self, dataset: str, item_id: str) -> ItemContext | None:
        with self._lock:
            return self._contexts.get((dataset, item_id))

    def forget_failures(self) -> None:
        """Try unavailable corpora again on next use (a release put back, a cache rebuilt)."""
        with self._lock:
            self._errors.clear()

    def _corpus(self, dataset: str, fingerprint: str | None = None, on_fetch: Any = None) -> Any:
        with self._lock:
            if dataset in self._corpora:
                return self._corpora[dataset]
            failure = self._errors.get(dataset)
            if failure is not None and self.clock() - failure[1] < RETRY_AFTER_S:
                raise LookupError(failure[0])
        from workbench.service.datasets import is_hub, open_dataset, open_imported

        note = None
        corpus: Any = None
        if fingerprint and is_hub(dataset):  # a run's Hub release: its import, without asking the Hub
            corpus = open_imported(fingerprint, self.cache_dir)
        try:
            if corpus is None:
                corpus, _ = open_dataset(dataset, self.cache_dir, on_fetch=on_fetch)
        # a missing or invalid release: its earlier import, else degrade and say why
        except Exception as exc:  # noqa: BLE001 — whatever a release's readers raise, the TUI degrades
            imported = open_imported(fingerprint, self.cache_dir) if fingerprint else None
            if imported is None:
                message = unavailable(dataset, exc)
                with self._lock:
                    self._errors[dataset] = (message, self.clock())
                raise LookupError(message) from None
            corpus, note = imported, MOVED_NOTE
        with self._lock:
            self._errors.pop(dataset, None)
            self._corpora.setdefault(dataset, corpus)
            if note:
                self._notes[dataset] = note
            return self._corpora[dataset]

    def corpus(self, dataset: str, fingerprint: str | None = None, on_fetch: Any = None) -> Any:
        """The opened corpus (imported on first use: call from a thread worker); LookupError when unavailable.
        `on_fetch` hears a Hub release's download (from the download's threads)."""
        return self._corpus(dataset, fingerprint, on_fetch)

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
            corpus = self._corpus(dataset, fingerprint)
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
            note = self._notes.get(dataset)
            if fingerprint and corpus.fingerprint != fingerprint:
                note = "the dataset changed since this run: marks may be wrong"
            ctx = ItemContext(item_id, item, titles, arxiv, note)
        with self._lock:
            self._contexts[(dataset, item_id)] = ctx
        return ctx

    def close(self) -> None:
        with self._lock:
            for corpus in self._corpora.values():
                with contextlib.suppress(Exception):
                    corpus.close()
            self._corpora.clear()
