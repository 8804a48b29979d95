"""What a command opens and the notes it prints about it: stores (closed when the command ends, however
it ends), datasets (with what their import found), and runs brought under the current label rules."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TYPE_CHECKING, Any

from storage.rows import RunRow
from workbench.cli.errors import Terminated, UsageError

if TYPE_CHECKING:
    from workbench.service.records.report import RunReport
    from workbench.service.runlist import RunListing


async def until_signal(work: Any) -> Any:
    """Await `work`, ending it on SIGTERM or SIGHUP as asyncio.run ends it on SIGINT: by cancelling it, so the
    runner marks the run interrupted (resumable) instead of dying with it `running` (kill, systemd, a closed
    terminal or a dropped SSH session would otherwise end the process without a word)."""
    import signal

    loop = asyncio.get_running_loop()
    task = asyncio.current_task()
    assert task is not None  # awaited by asyncio.run: inside a task
    received: list[int] = []

    def on_signal(signum: int) -> None:
        received.append(signum)
        task.cancel()

    signums = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    for signum in signums:
        loop.add_signal_handler(signum, on_signal, signum)
    try:
        return await work
    except asyncio.CancelledError:
        if received:
            raise Terminated(received[0]) from None
        raise
    finally:
        for signum in signums:
            loop.remove_signal_handler(signum)


def _writable_store(flag: str | None):
    """The store, opened to change it; one that does not exist is a mistake here, never created."""
    from workbench.service import paths
    from workbench.service.errors import StoreError
    from workbench.service.stores import open_store

    path = paths.store_path(flag)
    if not path.exists():
        raise StoreError(f"no store at {path}")
    return _held(open_store(path))


def _remove_store(path: Path) -> None:
    import shutil

    for extra in ("", "-wal", "-shm", "-journal"):
        Path(str(path) + extra).unlink(missing_ok=True)
    shutil.rmtree(path.with_name(path.name + ".locks"), ignore_errors=True)


@contextmanager
def _writing(out: str | None) -> Iterator[None]:
    """Turn a failure to write the user's --out (missing folder, a directory, no permission) into the one-line
    usage error; anything else is left to be a bug."""
    try:
        yield
    except OSError as exc:
        if out is None or isinstance(exc, BrokenPipeError):
            raise
        raise UsageError(f"cannot write {out}: {exc.strerror or exc}") from None


def _items_store(flag: str | None):
    """The store read-only; None when the default store does not exist yet (nothing ran). A --db that does not
    exist is a mistake (exit 2), and nothing is ever created."""
    from workbench.service import paths
    from workbench.service.stores import open_store

    path = paths.store_path(flag)
    if not path.exists():
        if flag:
            raise UsageError(f"no store at {path}")
        sys.stderr.write(f"no store at {path} yet: no runs counted\n")
        return None
    return _held(open_store(path, readonly=True))


def _open_store(flag: str | None):
    from workbench.service import paths
    from workbench.service.stores import open_store

    return _held(open_store(paths.store_path(flag), readonly=True))


def _report(store, name: str, ci: bool = False, corpus=None) -> RunReport:
    """The full diagnostics; beside them the reference evaluator's own numbers when the run's dataset opens."""
    from workbench.service.reports import diagnostics

    reason = None
    if corpus is None:
        corpus, reason = _run_corpus(store.run(name))
    report = diagnostics(store, name, ci=ci, corpus=corpus)
    if reason is not None:
        report["reference"] = {"unavailable": reason}
    return report


def _current_label_resolution(flag: str | None, names: list[str]) -> None:
    """Bring the named runs' section recall under the current label rules (`workbench.service.relabel`); notes
    on stderr."""
    from workbench.service import paths
    from workbench.service.relabel import bring_current

    for note in bring_current(paths.store_path(flag), names, _run_corpus):
        sys.stderr.write(f"note: {note}\n")


def _run_corpus(run: RunRow):
    """(the run's dataset, None), or (None, why it cannot be opened): the reference block needs it, the rest not."""
    from workbench.service import paths
    from workbench.service.relabel import run_corpus

    return run_corpus(run, paths.cache_dir())


def _runs(store) -> list[RunListing]:
    from workbench.service.runlist import runs_table

    return runs_table(store)


IMPORT_WARNINGS = {  # what each counted import problem means to the user ({n}: how many)
    "gold_beyond_depth": "{n} item(s) whose gold paper no citation path from the seed reaches within the item's "
    "depth (only search_papers finds it)",
    "no_labels_file": "no audit/recall_labels.jsonl: section recall cannot be measured",
    "empty_arxiv_id": "{n} recall label(s) without an arxiv_id (ignored, as the reference evaluator does)",
    "unknown_arxiv_id": "{n} recall label(s) whose arxiv_id is not in the paper pool",
    "unknown_sample": "{n} recall label row(s) for an item the dataset does not have",
    "unresolved_section": "{n} recall label(s) whose section matches no section of the paper",
    "duplicate_sample": "{n} repeated recall label row(s) for one item (the last row counts)",
    "gold_arxiv_ids_differ": "{n} item(s) whose gold_arxiv_ids differ from their graph nodes' arxivId (the "
    "graph's are used: they are what the tools read)",
    "bridge_arxiv_ids_differ": "{n} item(s) whose bridge_arxiv_ids differ from their graph nodes' arxivId (the "
    "graph's are used)",
    "seed_arxiv_id_differs": "{n} item(s) whose seed_arxiv_id differs from the seed node's arxivId",
    "lone_surrogates": "{n} string(s) with a lone surrogate escape (half an emoji), stored with U+FFFD in its place",
}


def open_data(spec: str, quiet: bool = False) -> Any:
    """The dataset a `--data` value names, opened: a Hub release fetched first (its download shown on stderr), and
    what an import found printed."""
    from workbench.cli.progress import FetchProgress
    from workbench.service import paths
    from workbench.service.datasets import open_dataset

    progress = FetchProgress(quiet=quiet)
    try:
        corpus, imported = open_dataset(spec, paths.cache_dir(), on_fetch=progress.update)
    finally:
        progress.close()
    if imported is not None:
        _print_import(imported, spec)
    return corpus


def _print_import(report: Any, dataset: str | None = None) -> None:
    """What an import found, on stderr. The built-in benchmark copies some of the real release's defects on
    purpose (`synth.DELIBERATE_DEFECTS`): those are one note saying so, not warnings about the user's data."""
    sys.stderr.write(
        f"imported dataset: {report.items} items, {report.papers} papers with text, {report.nodes} graph nodes "
        f"({report.metadata_only} metadata-only); {report.labels_resolved}/{report.labels} recall labels resolved\n"
    )
    deliberate: dict[str, str] = {}
    if dataset == "builtin":
        from workbench.service.datasets import builtin_defects

        deliberate = builtin_defects()
    found = {**report.label_warnings, **report.data_warnings}
    copied = [IMPORT_WARNINGS[k].format(n=n) for k, n in sorted(found.items()) if k in deliberate]
    if copied:
        sys.stderr.write(
            f"note: the built-in benchmark copies the real release's defects on purpose: {'; '.join(copied)}\n"
        )
    for kind, n in sorted(found.items()):
        if kind in deliberate:
            continue
        text = IMPORT_WARNINGS.get(kind, f"{{n}} import problem(s): {kind.replace('_', ' ')}")
        sys.stderr.write(f"warning: {text.format(n=n)}\n")


_RESOURCES: ContextVar[ExitStack | None] = ContextVar("agenthop_command_resources", default=None)


def _held(resource: Any) -> Any:
    """`resource` (a store), closed when the command ends however it ends: `batch` owns the stack. In-process
    callers (the TUI's jobs, the tests) would otherwise leave a store open with commits still in its WAL."""
    stack = _RESOURCES.get()
    if stack is not None:
        stack.callback(resource.close)
    return resource
