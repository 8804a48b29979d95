"""The graphs file into the corpus cache: in one pass, rows in bulk, in a worker process when the file is large.

A paper-sized release's graphs file (~100 MB) costs about as much to parse as the paper pool
(~240 MB) costs to parse and store, and the two do not depend on each other: so on a large
release, when a core is free, a worker process parses the graphs and writes their rows to an
SQLite file of its own while the importing process stores the papers, and the rows are then copied into the
corpus with one `INSERT … SELECT` per table. Small releases (tests, the demo) are imported
in-process, where a worker's start-up would cost more than it saves. Either way the rows
are written by the same function, so the cache is the same.

A repeated node (most nodes recur in many neighbourhoods: 200k occurrences of 11k nodes) is
recognised by its id and its `marshal` bytes (format 2, which has no back-references, so equal
values give equal bytes; a quarter of `repr`'s cost, on the worker's critical path), so only a
new node is serialised, hashed and tokenised; two nodes
whose bytes differ but whose JSON agrees (keys in another order) still meet at the JSON digest.
"""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import sqlite3
import sys
from pathlib import Path
from typing import Any, TypedDict

import orjson

from sandbox import release

WORKER_MIN_BYTES = 16 << 20  # below this a worker process's start-up costs more than the parallel parse saves
Graphs = dict[str, dict[str, dict]]  # sample_id -> s2id -> {"arxivId", "title"}: what items and labels are checked on


def graph_tables() -> str:
    """The corpus schema's statements for the three tables written here (the worker's file has only these)."""
    from sandbox.corpus_schema import SCHEMA

    wanted = ("CREATE TABLE nodes ", "CREATE TABLE edges ", "CREATE TABLE neighbourhoods ")
    return ";\n".join(s.strip() for s in SCHEMA.split(";") if s.strip().startswith(wanted)) + ";"


class _NodeRows:
    """The distinct nodes met so far: each gets one `nodes` row (by the digest of its id and JSON) and one shared
    {"arxivId", "title"} record, pickled once from the worker."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}  # digest -> row id
        self.seen: dict[tuple[str, bytes], int] = {}  # (s2id, marshal bytes of the node) -> its row id
        self.new: list[tuple[Any, ...]] = []  # rows not yet written
        self.infos: dict[int, dict[str, str]] = {}  # row id -> the node's {"arxivId", "title"}, read-only downstream

    def row_id(self, s2id: str, node: dict, path: Path, lineno: int) -> int:
        """The node's row id, checking and queueing a node never seen before."""
        from sandbox.corpus_schema import tokens

        key = (s2id, marshal.dumps(node, 2))  # equal bytes mean equal JSON (1, 1.0 and True differ here as there)
        nid = self.seen.get(key)
        if nid is not None:  # a node with these bytes was checked when first seen: equal bytes, equal types
            return nid
        release.check_node(s2id, node, path, lineno)
        text = json.dumps(node, ensure_ascii=False, sort_keys=True)
        digest = hashlib.sha1(f"{s2id}\0{text}".encode()).hexdigest()
        nid = self.ids.get(digest)
        if nid is None:
            toks = " ".join(sorted(tokens(f"{node.get('title') or ''} {node.get('abstract') or ''}")))
            nid = self.ids[digest] = len(self.ids) + 1
            self.new.append((nid, digest, s2id, node.get("arxivId") or "", text, toks))
        self.seen[key] = nid
        return nid

    def info(self, nid: int, node: dict) -> dict[str, str]:
        """The node's shared {"arxivId", "title"} record."""
        info = self.infos.get(nid)
        if info is None:
            info = self.infos[nid] = {"arxivId": node.get("arxivId") or "", "title": node.get("title") or ""}
        return info

    def write_new(self, db: sqlite3.Connection) -> None:
        """Insert the rows queued since the last write."""
        if self.new:
            db.executemany(
                "INSERT INTO nodes (id, digest, s2id, arxiv_id, has_text, json, tokens) VALUES (?, ?, ?, ?, 0, ?, ?)",
                self.new,
            )
            self.new.clear()


def write_graphs(db: sqlite3.Connection, path: Path, data: release.Warnings) -> tuple[Graphs, int]:
    """Validate every neighbourhood and write its nodes, edges and neighbourhood rows; (graphs, distinct nodes).

    `has_text` is left 0: whether a node's paper has text is known once the pool is stored
    (`mark_text`). Raises DatasetError on the first bad line.
    """
    graphs: Graphs = {}
    first_line: dict[str, int] = {}
    table = _NodeRows()
    for lineno, obj in release.json_lines(path, data):
        sample_id, nodes, edges = release.check_graph_shape(obj, path, lineno)
        pairs: list[tuple[str, int]] = []
        view: dict[str, dict] = {}
        for s2id, node in nodes.items():
            nid = table.row_id(s2id, node, path, lineno)
            view[s2id] = table.info(nid, node)
            pairs.append((s2id, nid))
        release.check_edges(edges, path, lineno)  # after the nodes, as `release.check_graph` checks them
        if sample_id in first_line:  # two neighbourhoods for one item: which one the agent sees would be a guess
            raise release.DatasetError(
                path, lineno, "sample_id", f"duplicate sample_id '{sample_id}' (first on line {first_line[sample_id]})"
            )
        first_line[sample_id] = lineno
        table.write_new(db)
        db.executemany(
            "INSERT INTO edges VALUES (?, ?, ?, ?)",
            [(sample_id, src, i, dst) for src, refs in edges.items() for i, dst in enumerate(refs)],
        )
        db.execute("INSERT INTO neighbourhoods VALUES (?, ?)", (sample_id, neighbourhood(pairs, edges)))
        graphs[sample_id] = view
    return graphs, len(table.ids)


def neighbourhood(pairs: list[tuple[str, int]], edges: dict[str, list[str]]) -> bytes:
    """What an episode's view reads of its item, in one value: its (graph id, node row) pairs in file order and its
    non-empty reference lists by citing paper in the `edges` table's order (`corpus.Corpus.view`). One row per item
    rather than a row per node of a `graph` table: an item's view is one read and one parse, and the import
    writes ~1,000 rows where it wrote ~200,000 (a paper-sized release)."""
    return orjson.dumps([pairs, {src: edges[src] for src in sorted(edges) if edges[src]}])


def mark_text(db: sqlite3.Connection) -> int:
    """Set `has_text` where the node's paper is in the pool; the number of metadata-only nodes."""
    db.execute("UPDATE nodes SET has_text = 1 WHERE arxiv_id IN (SELECT arxiv_id FROM papers)")
    return db.execute("SELECT COUNT(*) FROM nodes WHERE has_text = 0").fetchone()[0]


class GraphWorker:
    """The graphs file parsed and written by a worker process into `scratch`, while the caller does other work.

    A plain `python -m sandbox.graph_import` child rather than multiprocessing: it neither forks a
    process that may run threads (the TUI) nor re-runs the caller's main script (spawn does).
    """

    def __init__(self, path: Path, scratch: Path):
        import subprocess  # here, not at the top: a warm open never starts a worker and need not import it

        self.path, self.scratch = path, scratch
        env = dict(os.environ)
        here = str(Path(__file__).resolve().parents[1])  # where `sandbox` is importable from, installed or not
        env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "sandbox.graph_import", str(path), str(scratch)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            env=env,
        )

    def join(self, db: sqlite3.Connection, data: release.Warnings) -> tuple[Graphs, int]:
        """Wait for the worker, copy its rows into `db`, and return what `write_graphs` returns."""
        import pickle

        assert self.process.stdout is not None
        blob = self.process.stdout.read()
        self.process.wait()
        try:
            outcome = pickle.loads(blob)
        # the worker died (killed, out of memory) and its truncated pickle fails in several ways (EOFError,
        # UnpicklingError, ...): the work is done here instead
        except Exception:  # noqa: BLE001 — any unreadable outcome: redone here
            self.close()
            return write_graphs(db, self.path, data)
        if "error" in outcome:
            raise release.DatasetError(*outcome["error"])
        for kind, n in outcome["counts"].items():
            data.add(kind, outcome["examples"][kind], n)
        db.commit()
        db.execute("ATTACH DATABASE ? AS w", (str(self.scratch),))
        try:
            for table in ("nodes", "edges", "neighbourhoods"):
                db.execute(f"INSERT INTO main.{table} SELECT * FROM w.{table}")
            db.commit()
        finally:
            db.execute("DETACH DATABASE w")
        self.close()
        return outcome["graphs"], outcome["nodes"]

    def close(self) -> None:
        """Stop the worker if it still runs (the import failed elsewhere) and remove its file."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self.scratch.unlink(missing_ok=True)


class WorkerOutcome(TypedDict, total=False):
    """What the worker hands back (pickled): the graphs, the distinct nodes, the warnings' counts and examples; or
    the first error's (path, line, field, message), alone."""

    error: tuple[str, int | None, str | None, str]
    graphs: Graphs
    nodes: int
    counts: dict[str, int]
    examples: dict[str, str]


def work(path: str, scratch: str) -> WorkerOutcome:
    """In the worker process: write the graphs into `scratch`; the graphs, counts and warnings, or the error."""
    data = release.Warnings()
    try:
        db = sqlite3.connect(scratch)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.executescript(graph_tables())
        graphs, n_nodes = write_graphs(db, Path(path), data)
        db.commit()
        db.close()
    except release.DatasetError as exc:
        return {"error": (exc.path, exc.line, exc.field, exc.message)}
    return {"graphs": graphs, "nodes": n_nodes, "counts": data.counts, "examples": data.examples}


def use_worker(path: Path) -> bool:
    """A worker process for a large graphs file when a core is mostly free for it (AGENTHOP_IMPORT_WORKER=on|off
    forces the choice): on a machine whose cores are all busy the two processes only take turns, and measured no
    faster; with half a core or more free it pays (2 cores at load 1.15: 3.7 s against 5.9 s in-process)."""
    forced = os.environ.get("AGENTHOP_IMPORT_WORKER", "auto")
    if forced in ("on", "off"):
        return forced == "on"
    if path.stat().st_size < WORKER_MIN_BYTES:
        return False
    cores = os.cpu_count() or 1
    if cores < 2:  # one core: the worker and the importer could only take turns
        return False
    try:
        load = os.getloadavg()[0]
    except OSError:
        return False
    return load < cores - 0.5


if __name__ == "__main__":
    import pickle

    sys.stdout.buffer.write(pickle.dumps(work(sys.argv[1], sys.argv[2]), protocol=pickle.HIGHEST_PROTOCOL))
