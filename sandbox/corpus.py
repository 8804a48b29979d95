"""The corpus cache: a release dataset imported once into an indexed SQLite file, and the read API tools use.

A dataset is keyed by the SHA-256 fingerprint of its four files, so a changed file is a
new corpus and an unchanged one reopens in milliseconds. The cache is derivable: it is
built into a temporary file and renamed into place only when the whole dataset
validated, so a bad dataset leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import tempfile
import time
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from sandbox import release
from sandbox.corpus_schema import SCHEMA, SECTIONS_INDEX
from sandbox.graph_import import GraphWorker, mark_text, use_worker, write_graphs
from sandbox.records import Item, Label, QARow
from sandbox.sections import LABEL_RESOLUTION, resolve_label
from storage.json_types import JsonObject
from storage.locks import process_alive

if TYPE_CHECKING:
    from sandbox.hub import Snapshot

CORPUS_FORMAT = 5  # 2: body-heading label rule on whole heading lines only; 3: meta records label_resolution;
# 4: sections in a rowid table indexed after the bulk insert; 5: each item's neighbourhood in one row (`view`),
# in place of a `graph` table of a row per node

# ---------------------------------------------------------------- fingerprints


def fingerprint(root: Path, cache_dir: Path) -> str:
    """SHA-256 over the four release files, memoised by (path, size, mtime) so a warm open never rehashes.

    Files not in the memo are hashed in parallel threads (hashlib releases the GIL on large
    buffers): on a first open that is the papers and the graphs file at once."""
    memo_path = cache_dir / "fingerprints.json"
    try:
        memo = json.loads(memo_path.read_text())
    except (OSError, ValueError):
        memo = {}
    stats: dict[str, tuple[Path, os.stat_result] | None] = {}
    for rel in release.RELEASE_FILES:
        path = (root / rel).resolve()
        stats[rel] = (path, path.stat()) if path.is_file() else None
    stale = [found for found in stats.values() if found is not None and not _memo_hit(memo, *found)]
    if stale:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(len(stale), os.cpu_count() or 1)) as pool:
            digests = list(pool.map(release.file_sha256, [path for path, _ in stale]))
        for (path, st), digest in zip(stale, digests, strict=True):
            memo[str(path)] = [st.st_size, st.st_mtime_ns, digest]
        cache_dir.mkdir(parents=True, exist_ok=True)
        _atomic_write(memo_path, json.dumps(memo))
    outer = hashlib.sha256()
    for rel, found in stats.items():
        if found is None:
            outer.update(f"{rel}:absent\n".encode())
        else:
            outer.update(f"{rel}:{memo[str(found[0])][2]}\n".encode())
    return outer.hexdigest()


def _memo_hit(memo: dict[str, list[int | str]], path: Path, st: os.stat_result) -> bool:
    """Whether the memo holds this file at its size and modification time ([size, mtime_ns, digest])."""
    hit = memo.get(str(path))
    if not hit:
        return False
    return hit[0] == st.st_size and hit[1] == st.st_mtime_ns


def _atomic_write(path: Path, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.replace(tmp, path)


# ---------------------------------------------------------------- import


@dataclass
class ImportReport:
    """What an import found: sizes, label warnings and repaired text (`data_warnings`, e.g. `lone_surrogates`)."""

    items: int
    papers: int
    nodes: int
    metadata_only: int
    labels: int
    labels_resolved: int
    label_warnings: dict[str, int]
    resolution_methods: dict[str, int]
    data_warnings: dict[str, int] = field(default_factory=dict)


def import_release(root: Path, target: Path, fp: str) -> ImportReport:
    """Validate `root` and write the corpus to `target` atomically. Raises DatasetError; writes nothing then."""
    release.require_release_dir(root)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f"{IMPORT_PREFIX}{os.getpid()}-", suffix=".sqlite")
    os.close(fd)
    try:
        db = sqlite3.connect(tmp)
        db.execute("PRAGMA journal_mode=OFF")
        db.execute("PRAGMA synchronous=OFF")
        db.executescript(SCHEMA)
        report = _fill(db, root, fp, Path(tmp[: -len(".sqlite")] + ".graphs.sqlite"))
        db.commit()
        db.close()
        os.replace(tmp, target)
        return report
    except BaseException:
        with contextlib.suppress(Exception):
            db.close()
        Path(tmp).unlink(missing_ok=True)
        raise


IMPORT_PREFIX = ".import-"  # then the importing process's pid, "-", a random part, ".sqlite"
LEGACY_STALE_S = 3600.0  # a temp file without a pid (older versions) is stale after an hour untouched


def clean_stale_imports(corpus_dir: Path) -> list[Path]:
    """Delete the temp files of imports whose process is gone (a run killed mid-import leaves one, as large as
    the corpus); the files of imports still running, here or in another process, are left alone."""
    removed = []
    for path in corpus_dir.glob(f"{IMPORT_PREFIX}*.sqlite"):
        pid = _import_owner(path)
        try:
            stale = (not process_alive(pid)) if pid is not None else time.time() - path.stat().st_mtime > LEGACY_STALE_S
        except OSError:
            continue  # renamed or removed meanwhile
        if stale:
            path.unlink(missing_ok=True)
            removed.append(path)
    return removed


def _import_owner(path: Path) -> int | None:
    """The pid in a temp file's name, or None for a name without one."""
    pid, sep, _ = path.name[len(IMPORT_PREFIX) :].partition("-")
    return int(pid) if sep and pid.isdigit() else None  # mkstemp's random part never holds "-"


def _fill(db: sqlite3.Connection, root: Path, fp: str, scratch: Path) -> ImportReport:
    data = release.Warnings()
    graphs_path = root / release.GRAPHS_FILE
    worker = GraphWorker(graphs_path, scratch) if use_worker(graphs_path) else None  # parses while papers go in
    try:
        pool = _import_papers(db, root / release.PAPERS_FILE, data)
        labels_path = root / release.LABELS_FILE
        labels = _resolve_labels(db, labels_path, pool) if labels_path.is_file() else None  # while graphs parse
        graphs, n_nodes = worker.join(db, data) if worker else write_graphs(db, graphs_path, data)
    finally:
        if worker:
            worker.close()
    n_meta = mark_text(db)
    n_items = _import_items(db, root / release.QA_FILE, graphs, pool, data)
    warnings = release.Warnings()
    methods: dict[str, int] = {}
    n_labels = n_resolved = 0
    if labels is not None:
        n_labels, n_resolved = _store_labels(db, labels, labels_path, graphs, warnings, methods, data)
    else:
        warnings.add("no_labels_file", str(labels_path))
    report = ImportReport(
        n_items, len(pool), n_nodes, n_meta, n_labels, n_resolved, warnings.counts, methods, data.counts
    )
    meta = {
        "fingerprint": fp,
        "format": str(CORPUS_FORMAT),
        "label_resolution": LABEL_RESOLUTION,
        "source": str(root.resolve()),
        "report": json.dumps(report.__dict__),
        "label_examples": json.dumps({**warnings.examples, **data.examples}),
    }
    db.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    return report


def _import_papers(db: sqlite3.Connection, path: Path, data: release.Warnings) -> dict[str, int]:
    """The paper pool, in one pass, its rows inserted in batches (a repeated paper replaces the earlier one, as
    the reference's dict does)."""
    pool: dict[str, int] = {}
    first_row: dict[str, int] = {}  # each paper's first section row: its rows are first_row .. first_row + n - 1
    papers: list[tuple[str, str, int]] = []
    sections: list[tuple[int, str, int, str | None, str, int]] = []
    row = 0

    def flush() -> None:
        db.executemany("INSERT OR REPLACE INTO papers VALUES (?, ?, ?)", papers)
        db.executemany("INSERT INTO sections VALUES (?, ?, ?, ?, ?, ?)", sections)
        papers.clear()
        sections.clear()

    for lineno, obj in release.json_lines(path, data):
        arxiv_id, title, secs = release.check_paper(obj, path, lineno)
        if arxiv_id in pool:  # the reference's dict keeps the last record
            flush()
            db.execute(
                "DELETE FROM sections WHERE id BETWEEN ? AND ?",
                (first_row[arxiv_id], first_row[arxiv_id] + pool[arxiv_id] - 1),
            )
        pool[arxiv_id], first_row[arxiv_id] = len(secs), row
        papers.append((arxiv_id, title, len(secs)))
        sections.extend((row + i, arxiv_id, i, h, t, len(t)) for i, (h, t) in enumerate(secs))
        row += len(secs)
        if len(sections) >= PAPER_BATCH:
            flush()
    flush()
    db.execute(SECTIONS_INDEX)
    return pool


PAPER_BATCH = 512  # sections per insert: a few MB of text held at once


def _import_items(
    db: sqlite3.Connection, path: Path, graphs: dict[str, dict[str, dict]], pool: dict[str, int], data: release.Warnings
) -> int:
    seen: dict[str, int] = {}
    n = 0
    for lineno, obj in release.json_lines(path, data):
        item = release.check_item(obj, path, lineno)
        if item["id"] in seen:
            raise release.DatasetError(
                path, lineno, "id", f"duplicate item id '{item['id']}' (first on line {seen[item['id']]})"
            )
        seen[item["id"]] = lineno
        nodes = release.check_item_graph(item, graphs.get(item["id"]), pool, path, lineno)
        item = dict(item)
        # The arXiv ids of the gold and bridge papers are the graph's, not QA's. The agent sees only S2 ids and
        # every tool maps S2 id → node arxivId → pool, so reads are recorded in the graph's arXiv ids, and
        # The protocol scores recall per gold paper. The reference evaluator takes QA's gold_arxiv_ids; where
        # the two disagree it cannot credit a read of the gold paper. So the graph's are used, and each
        # disagreement is counted and reported at import.
        for key, ids in (
            ("gold_arxiv_ids", item["gold_paper_ids"]),
            ("bridge_arxiv_ids", item.get("bridge_paper_ids") or []),
        ):
            from_graph = [nodes[pid]["arxivId"] for pid in ids]
            if item.get(key) and item[key] != from_graph:
                data.add(f"{key}_differ", f"{path}:{lineno}: {key} {item[key]} but the graph says {from_graph}")
            item[key] = from_graph
        seed_arx = nodes[item["seed_paper_id"]]["arxivId"]
        if item.get("seed_arxiv_id") and item["seed_arxiv_id"] != seed_arx:  # kept: shown only, never joined on
            data.add(
                "seed_arxiv_id_differs",
                f"{path}:{lineno}: seed_arxiv_id {item['seed_arxiv_id']!r} but the graph says {seed_arx!r}",
            )
        item.setdefault("seed_arxiv_id", seed_arx)
        _check_reach(db, item, data, f"{path}:{lineno}")
        db.execute("INSERT INTO items VALUES (?, ?, ?)", (n, item["id"], json.dumps(item, ensure_ascii=False)))
        n += 1
    if n == 0:
        raise release.DatasetError(path, None, None, "has no items")
    return n


_HOPS = """WITH RECURSIVE reach(id, hop) AS (
    SELECT ?, 0 UNION SELECT e.dst, r.hop + 1 FROM reach r JOIN edges e ON e.sample_id = ? AND e.src = r.id
    WHERE r.hop < ?)
SELECT id, MIN(hop) FROM reach GROUP BY id"""


def _check_reach(db: sqlite3.Connection, item: dict[str, Any], data: release.Warnings, where: str) -> None:
    """Count an item whose gold paper no citation path from the seed reaches within its depth (a warning, not an
    error: `search_papers` still finds the paper, and real releases have such items). The hop distances come from
    the edge index (`sandbox.citations` says why not a graph per item)."""
    from sandbox.citations import beyond_depth

    depth = item["depth"]
    hops = dict(db.execute(_HOPS, (item["seed_paper_id"], item["id"], depth)).fetchall())
    far = beyond_depth(hops, item["gold_paper_ids"], depth)
    if far:
        data.add(
            "gold_beyond_depth",
            f"{where}: gold {', '.join(far)} is not within {depth} citation hop(s) of the seed {item['seed_paper_id']}",
        )


def paper_sections(db: sqlite3.Connection, arxiv_id: str) -> tuple[list[str], list[str]]:
    """(headers, bodies) of a paper's top-level sections, in order: what a label is resolved against."""
    secs = db.execute("SELECT header, text FROM sections WHERE arxiv_id = ? ORDER BY idx", (arxiv_id,)).fetchall()
    return [h or "" for h, _ in secs], [t for _, t in secs]


@dataclass
class ResolvedLabels:
    """The labels file read and every label resolved, before the graphs are known (see `_resolve_labels`)."""

    samples: list[tuple[int, Any]]  # (line, sample_id) of every row, in file order
    latest: dict[str, tuple[int, list[tuple]]]  # sample_id -> (line of its last row, that row's resolved labels)
    data: release.Warnings  # repaired text found in the file, added to the import's when the labels are stored
    error: release.DatasetError | None = None  # a bad line: raised when the labels are stored, where it always was


def _resolve_labels(db: sqlite3.Connection, path: Path, pool: dict[str, int]) -> ResolvedLabels:
    """Read the labels file and resolve each item's last row against the stored sections.

    Resolving needs only the paper pool, so it runs while the graphs worker is still parsing;
    what depends on the graphs (which sample ids exist) and every warning are left to
    `_store_labels`, which replays them in the order the import always said them.
    """
    out = ResolvedLabels([], {}, release.Warnings())
    cache: dict[str, tuple[list[str], list[str]]] = {}
    rows: dict[str, tuple[int, dict]] = {}
    try:
        for lineno, obj in release.json_lines(path, out.data):
            sample_id = obj.get("sample_id")
            out.samples.append((lineno, sample_id))
            if isinstance(sample_id, str):
                rows[sample_id] = (lineno, obj)
    except release.DatasetError as exc:
        out.error = exc
        return out
    for sample_id, (lineno, obj) in rows.items():
        out.latest[sample_id] = (lineno, [_resolve_one(db, lab, cache, pool) for lab in release.label_rows(obj)])
    return out


def _resolve_one(
    db: sqlite3.Connection, lab: JsonObject, cache: dict[str, tuple[list[str], list[str]]], pool: dict[str, int]
) -> tuple[str, str, str, int | None, str, str | None]:
    """(arxiv_id, section, relevance, section index, method, warning kind or None) of one label."""
    arx, section = lab.get("arxiv_id"), lab.get("section")
    given_relevance = lab.get("relevance")
    relevance = given_relevance if isinstance(given_relevance, str) else ""
    if not isinstance(section, str):
        section = ""
    if not isinstance(arx, str) or not arx:
        return arx if isinstance(arx, str) else "", section, relevance, None, "unknown_paper", "empty_arxiv_id"
    if arx not in pool:
        return arx, section, relevance, None, "unknown_paper", "unknown_arxiv_id"
    if arx not in cache:
        cache[arx] = paper_sections(db, arx)
    idx, method = resolve_label(section, *cache[arx])
    return arx, section, relevance, idx, method, "unresolved_section" if idx is None else None


def _store_labels(db, read: ResolvedLabels, path, graphs, warnings, methods, data) -> tuple[int, int]:
    """Store the resolved labels of the items the graphs hold. Two rows for one item: the last one counts, as in
    the reference evaluator's dict keyed by sample_id (label problems are warnings, never fatal), and the repeat
    is counted."""
    if read.error is not None:
        raise read.error
    for kind, count in read.data.counts.items():
        data.add(kind, read.data.examples[kind], count)
    n = resolved = 0
    seen: dict[str, int] = {}
    for lineno, sample_id in read.samples:
        if not isinstance(sample_id, str) or sample_id not in graphs:
            warnings.add("unknown_sample", f"{path}:{lineno}")
            continue
        if sample_id in seen:
            warnings.add(
                "duplicate_sample",
                f"{path}:{lineno}: sample_id {sample_id!r} (also on line {seen[sample_id]}; the last row counts)",
            )
        seen[sample_id] = lineno
    for sample_id in sorted(seen, key=seen.__getitem__):
        lineno, labels = read.latest[sample_id]
        rows = []
        for pos, (arx, section, relevance, idx, method, problem) in enumerate(labels):
            n += 1
            if problem == "empty_arxiv_id":
                warnings.add(problem, f"{path}:{lineno} label {pos}")
            elif problem == "unknown_arxiv_id":
                warnings.add(problem, f"{path}:{lineno} label {pos}: {arx[:60]!r}")
            elif problem == "unresolved_section":
                warnings.add(problem, f"{path}:{lineno} label {pos}: {section[:60]!r}")
            if idx is not None:
                resolved += 1
            methods[method] = methods.get(method, 0) + 1
            rows.append((sample_id, pos, arx, section, relevance, idx, method))
        db.executemany("INSERT INTO labels VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    return n, resolved


# ---------------------------------------------------------------- reading

NODE_CACHE = 16_384  # nodes kept across episodes (~1 KB each before use): a paper-sized corpus's ~11,000 fit


@dataclass
class Node:
    """A paper as this item's graph presents it (the raw node dict keeps key-absent vs null).

    Kept as the cache stores it (the node's JSON, its search tokens as one string) and read on first
    use: an episode reads a few of its ~60 nodes, and parsing all of them at the start of every episode
    cost ~1 ms and ~200 objects for the garbage collector to walk, on the engine's one thread. Nothing
    changes a node once built; it is not a frozen dataclass because building one costs ~4× as much
    (`object.__setattr__` per field), ~60 per episode.
    """

    s2id: str
    raw: str
    arxiv_id: str
    has_text: bool
    raw_tokens: str

    @cached_property
    def data(self) -> dict[str, Any]:
        """The node's JSON, read as the release's lines are (`release.read_line`)."""
        return release.read_line(self.raw)  # a node is a JSON object (the import checked it)

    @cached_property
    def tokens(self) -> frozenset[str]:
        return frozenset(self.raw_tokens.split())


class ItemView:
    """The part of the corpus one item's tools may see: its neighbourhood and the text of its papers."""

    def __init__(self, corpus: Corpus, item: Item, nodes: dict[str, Node], edges: dict[str, list[str]]):
        self.corpus = corpus
        self.item = item
        self.nodes = nodes
        self.edges = edges

    def headers(self, arxiv_id: str) -> list[tuple[str | None, int]]:
        """(header or None, character count) of each section, in order."""
        return self.corpus.headers(arxiv_id)

    def section_text(self, arxiv_id: str, idx: int) -> str:
        return self.corpus.section_text(arxiv_id, idx)


class Corpus:
    """An opened corpus cache. One connection, used from one thread."""

    def __init__(self, path: Path):
        self.path = path
        self.db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, check_same_thread=False)
        self.db.execute("PRAGMA query_only=1")
        meta = dict(self.db.execute("SELECT key, value FROM meta"))
        self.fingerprint: str = meta["fingerprint"]
        self.source: str = meta.get("source", "")
        self.label_resolution: str = meta.get("label_resolution", "1")  # the rules its labels were resolved with
        self.report = ImportReport(**json.loads(meta["report"]))
        self.label_examples: dict[str, str] = json.loads(meta.get("label_examples", "{}"))
        self.labelled = "no_labels_file" not in self.report.label_warnings
        self._items: dict[str, Item] = {}
        labels: dict[str, list[Label]] = {}
        for sid, arx, section, rel, idx, method in self.db.execute(
            "SELECT sample_id, arxiv_id, section, relevance, section_index, method FROM labels ORDER BY sample_id, pos"
        ):
            labels.setdefault(sid, []).append(Label(arx, section, rel, idx, method))
        for (text,) in self.db.execute("SELECT json FROM items ORDER BY pos"):
            item = item_from_row(json.loads(text), labels, self.labelled)
            self._items[item.id] = item
        self.headers = lru_cache(maxsize=4096)(self._headers)
        self._nodes: dict[int, Node] = {}  # node row -> node, kept across episodes; see `view`
        self.origin: Snapshot | None = None  # the Hub repository and commit it was opened from (sandbox.datasets)

    def close(self) -> None:
        self.db.close()

    @property
    def items(self) -> list[Item]:
        """Items in file order (the run order)."""
        return list(self._items.values())

    def item(self, item_id: str) -> Item:
        return self._items[item_id]

    def view(self, item: Item) -> ItemView:
        """The item's neighbourhood, ordered as in the graph file.

        Its nodes come from a cache kept across episodes: a paper sits in many items' neighbourhoods and every
        replicate of an item reads the same ones, so a node's JSON is read, and its data and search tokens
        parsed, once rather than at the start of every episode (a quarter of a millisecond per episode on the
        engine's one thread, a tenth of its work per model call at hundreds of episodes in flight). The cache
        holds at most `NODE_CACHE` nodes besides the current view's: when a view's new nodes would pass that,
        it is emptied first (a plain dictionary emptied now and then costs nothing per look-up; keeping the
        most recently used in order cost a call per node per view). Nothing changes a node once built (see
        `Node`), and a node row belongs to one graph id (the import keys it by id and JSON)."""
        row = self.db.execute("SELECT view FROM neighbourhoods WHERE sample_id = ?", (item.id,)).fetchone()
        listed, edges = orjson.loads(row[0]) if row else ([], {})  # `graph_import.neighbourhood`: one read, one parse
        cache = self._nodes
        missing = [node_id for _, node_id in listed if node_id not in cache]
        if missing:
            if len(cache) + len(missing) > NODE_CACHE:
                cache.clear()
                missing = [node_id for _, node_id in listed]
            self._load_nodes(missing)
        # a graph row whose node the cache file lacks is left out, as a join of the two tables would
        nodes = {s2id: cache[node_id] for s2id, node_id in listed if node_id in cache}
        return ItemView(self, item, nodes, edges)

    def _load_nodes(self, ids: list[int]) -> None:
        """Read these node rows into the cache, a few hundred per query."""
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            marks = ",".join("?" * len(chunk))
            query = f"SELECT id, s2id, json, arxiv_id, has_text, tokens FROM nodes WHERE id IN ({marks})"
            for node_id, s2id, data, arx, has_text, toks in self.db.execute(query, chunk):
                self._nodes[node_id] = Node(s2id, data, arx, bool(has_text), toks)

    def _headers(self, arxiv_id: str) -> list[tuple[str | None, int]]:
        return list(self.db.execute("SELECT header, length FROM sections WHERE arxiv_id = ? ORDER BY idx", (arxiv_id,)))

    def section_text(self, arxiv_id: str, idx: int) -> str:
        row = self.db.execute("SELECT text FROM sections WHERE arxiv_id = ? AND idx = ?", (arxiv_id, idx)).fetchone()
        return row[0] if row else ""

    def resolve_label(self, arxiv_id: str, section: str) -> tuple[int | None, str]:
        """A label resolved exactly as the import resolves the release's labels (`sandbox.sections.resolve_label`
        over the paper's sections): (section index or None, method); a paper without text is `unknown_paper`."""
        headers, bodies = paper_sections(self.db, arxiv_id)
        if not headers:
            return None, "unknown_paper"
        return resolve_label(section, headers, bodies)


def item_from_row(row: QARow, labels: dict[str, list[Label]], labelled: bool = True) -> Item:
    """An Item from a validated QA row (defaults follow the reference loader); `labelled` is False when the
    dataset has no recall-labels file."""
    dtypes = row.get("distractor_types")
    return Item(
        id=row["id"],
        question_type=_text(row.get("question_type")),
        depth=int(row.get("depth") or 0),
        reasoning_type=_text(row.get("reasoning_type")),
        cognitive_skill=_text(row.get("cognitive_skill")),
        venue=_text(row.get("venue")),
        consensus_tier=_text(row.get("consensus_tier")),
        question=row["question"],
        options=tuple(row["options"]),
        correct_index=row["correct_index"],
        distractor_types=tuple(dtypes) if dtypes else None,
        seed_paper_id=row["seed_paper_id"],
        seed_arxiv_id=_text(row.get("seed_arxiv_id")),
        seed_title=_text(row.get("seed_title")),
        gold_paper_ids=tuple(row["gold_paper_ids"]),
        gold_arxiv_ids=_ids(row.get("gold_arxiv_ids")),
        bridge_paper_ids=_ids(row.get("bridge_paper_ids")),
        bridge_arxiv_ids=_ids(row.get("bridge_arxiv_ids")),
        filter_agreement=row.get("filter_agreement"),
        labels=tuple(labels.get(row["id"], ())),
        labelled=labelled,
    )


def _text(value: str | None) -> str:
    """A text field of a QA row; "" when absent or null (as the reference loader)."""
    return value or ""


def _ids(value: list[str] | None) -> tuple[str, ...]:
    """A list-of-ids field of a QA row as a tuple; () when absent or null."""
    return tuple(value or ())


def cache_path(fp: str, cache_dir: Path) -> Path:
    """Where the corpus of the dataset with fingerprint `fp` is (or would be) imported. The label-resolution
    version is part of the name: labels are resolved at import, so new rules mean a new import, never a stale one."""
    return cache_dir / "corpus" / f"{fp[:24]}-v{CORPUS_FORMAT}-r{LABEL_RESOLUTION}.sqlite"


def open_cached(fp: str, cache_dir: Path) -> Corpus | None:
    """The corpus already imported for fingerprint `fp`, opened read-only without its release directory (which
    may have moved since); None when there is no usable copy."""
    path = cache_path(fp, cache_dir)
    if not path.is_file():
        return None
    try:
        corpus = Corpus(path)
    except (sqlite3.DatabaseError, KeyError, ValueError):
        return None
    if corpus.fingerprint != fp:
        corpus.close()
        return None
    return corpus


def open_release(root: Path, cache_dir: Path) -> tuple[Corpus, ImportReport | None]:
    """Open the corpus for a release directory, importing it first if no valid cache exists.

    Returns the corpus and, when an import happened, its report (so callers can show warnings).
    """
    release.require_release_dir(root)
    fp = fingerprint(root, cache_dir)
    target = cache_path(fp, cache_dir)
    if target.parent.is_dir():
        clean_stale_imports(target.parent)
    report = None
    if not target.exists():
        report = import_release(root, target, fp)
    try:
        corpus = Corpus(target)
    except (sqlite3.DatabaseError, KeyError):
        target.unlink(missing_ok=True)
        report = import_release(root, target, fp)
        corpus = Corpus(target)
    return corpus, report
