"""Reading and validating the AgentHop release format (docs/data.md): four JSON Lines files.

Every malformed record raises `DatasetError` naming the file, the line and the field,
so a user can fix the data; recall-label problems are only counted as warnings,
because the real release has such labels.

Text is UTF-8. Bytes that are not UTF-8 are an error (file and line). A lone surrogate
escape such as `\ud83d` is valid JSON (scraped text has them: half of an emoji) but not
storable text, so every string is stored with lone surrogates replaced by U+FFFD; the
tools then show U+FFFD, always the same, and the import counts the strings it repaired.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from storage.json_types import JsonObject, JsonValue

QA_FILE = "qa/full.jsonl"
GRAPHS_FILE = "graphs/full.jsonl"
PAPERS_FILE = "paper_pool/papers.jsonl"
LABELS_FILE = "audit/recall_labels.jsonl"
RELEASE_FILES = (QA_FILE, GRAPHS_FILE, PAPERS_FILE, LABELS_FILE)


@contextmanager
def staged_directory(out: Path) -> Iterator[Path]:
    """A hidden sibling of `out` to write a release into, renamed onto `out` when the block ends without
    error (and removed when it does not): a failure part-way never leaves a half-written release that a later
    load would take for a whole one. `out` must not exist or be empty; the rename refuses anything else."""
    for folder in (out.parent, *out.parent.parents):  # name the real reason, not mkdir's "File exists"
        if folder.exists() and not folder.is_dir():
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), str(folder))
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    try:
        partial.mkdir()
        yield partial
        partial.replace(out)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


class DatasetError(Exception):
    """A user's dataset is malformed: where (file, line, field) and what."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)

    def __init__(self, path: Path | str, line: int | None, fieldname: str | None, message: str):
        self.path = str(path)
        self.line = line
        self.field = fieldname
        self.message = message
        where = self.path + (f":{line}" if line else "")
        what = f" field '{fieldname}'" if fieldname else ""
        super().__init__(f"{where}:{what} {message}".replace(":: ", ": "))


@dataclass
class Warnings:
    """Counts of problems found at import that are not fatal (recall labels, repaired text), with one example each."""

    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, example: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n
        self.examples.setdefault(kind, example)


def require_release_dir(root: Path) -> None:
    """Fail clearly when `root` is not a release directory."""
    if not root.is_dir():
        raise DatasetError(root, None, None, "is not a directory")
    for rel in (QA_FILE, GRAPHS_FILE, PAPERS_FILE):
        if not (root / rel).is_file():
            raise DatasetError(
                root / rel, None, None, "is missing (a release directory needs qa/, graphs/ and paper_pool/)"
            )


def file_sha256(path: Path) -> str:
    """Full SHA-256 of one file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def json_lines(path: Path, warnings: Warnings | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a bad line is a DatasetError.

    Lone surrogates in strings become U+FFFD (counted in `warnings` as `lone_surrogates`).
    """
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = read_line(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(path, lineno, None, f"is not valid JSON ({json_problem(line, exc)})") from None
                if not isinstance(obj, dict):
                    raise DatasetError(path, lineno, None, f"must be a JSON object, got {type(obj).__name__}")
                if "\\u" in line:  # only an escape can make a surrogate: the common line skips the walk
                    obj, repaired = scrub_surrogates(obj)
                    if repaired and warnings is not None:
                        warnings.add("lone_surrogates", f"{path}:{lineno}", repaired)
                yield lineno, obj
    except UnicodeDecodeError:
        lineno, column, byte = _first_undecodable(path)
        raise DatasetError(path, lineno, None, f"is not valid UTF-8 (byte 0x{byte:02x} at column {column})") from None


def read_line(line: str) -> Any:
    """One JSON line: orjson (about twice json's speed on a release's lines), json for any line orjson refuses
    (a lone surrogate escape, NaN, a syntax error), so such a line reads, and a bad line is worded, as json
    reads and words it. One difference remains: an integer beyond 64 bits reads as a float (json: an int),
    which no field of a release holds (ids are strings, counts and indices small)."""
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def json_problem(line: str, exc: json.JSONDecodeError) -> str:
    """What is wrong with one JSON line, said once: the decoder's message without its own trailing "at" (it read
    "… starting at at column 5"), and an unterminated string named by its first characters. The line is decoded
    again without its line end, which the decoder otherwise reports as a control character inside the string."""
    try:
        json.loads(line.rstrip("\r\n"))
    except json.JSONDecodeError as bare:
        exc = bare
    if exc.msg.startswith("Unterminated string"):
        start = line[exc.pos : exc.pos + 24].rstrip("\r\n")
        return f"unterminated string at column {exc.colno}: {start}{'…' if len(line.rstrip()) > exc.pos + 24 else ''}"
    msg = exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg
    return f"{msg} at column {exc.colno}"


def scrub_surrogates(value: Any) -> tuple[Any, int]:
    """`value` with lone surrogates in every string (keys included) replaced by U+FFFD, and how many strings changed.

    `json.loads` already joined every valid surrogate pair, so any surrogate left is a lone one.
    """
    if isinstance(value, str):
        fixed, n = _LONE_SURROGATE.subn(REPLACEMENT, value)
        return fixed, int(n > 0)
    if isinstance(value, list):
        out: list[Any] = []
        total = 0
        for item in value:
            fixed_item, n = scrub_surrogates(item)
            out.append(fixed_item)
            total += n
        return out, total
    if isinstance(value, dict):
        pairs: dict[Any, Any] = {}
        total = 0
        for key, item in value.items():
            fixed_key, nk = scrub_surrogates(key)
            fixed_item, nv = scrub_surrogates(item)
            pairs[fixed_key] = fixed_item
            total += nk + nv
        return pairs, total
    return value, 0


def _first_undecodable(path: Path) -> tuple[int, int, int]:
    """(line, 1-based column, byte) of the first byte that is not UTF-8, numbering lines as text reading does.

    Only called after a decode failed, so the happy path never pays for it.
    """
    with open(path, encoding="utf-8", errors="surrogateescape") as fh:
        for lineno, line in enumerate(fh, 1):
            for column, ch in enumerate(line, 1):
                if "\udc80" <= ch <= "\udcff":
                    return lineno, column, ord(ch) - 0xDC00
    return 0, 0, 0


def _need(obj: dict, key: str, kind: type | tuple[type, ...], path: Path, lineno: int, optional: bool = False) -> Any:
    """The value of `key`, checked for type; bool never passes for int."""
    if key not in obj:
        if optional:
            return None
        raise DatasetError(path, lineno, key, "is missing")
    value = obj[key]
    if optional and value is None:
        return None
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise DatasetError(path, lineno, key, f"must be {_kind_name(kinds)}, got a boolean")
    if not isinstance(value, kinds):
        raise DatasetError(path, lineno, key, f"must be {_kind_name(kinds)}, got {type(value).__name__}")
    return value


def _kind_name(kinds: tuple[type, ...]) -> str:
    names = {
        str: "a string",
        int: "an integer",
        list: "a list",
        dict: "an object",
        bool: "a boolean",
        float: "a number",
    }
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _str_list(obj: dict, key: str, path: Path, lineno: int, optional: bool = False) -> list[str]:
    value = _need(obj, key, list, path, lineno, optional=optional)
    if value is None:
        return []
    for i, v in enumerate(value):
        if not isinstance(v, str):
            raise DatasetError(path, lineno, f"{key}[{i}]", f"must be a string, got {type(v).__name__}")
    return value


def check_paper(obj: dict, path: Path, lineno: int) -> tuple[str, str, list[tuple[str | None, str]]]:
    """(arxiv_id, title, [(header or None, text)]) of one pool paper."""
    arxiv_id = _need(obj, "arxiv_id", str, path, lineno)
    if not arxiv_id:
        raise DatasetError(path, lineno, "arxiv_id", "is empty")
    given_title = obj.get("title")
    title = given_title if isinstance(given_title, str) else ""
    sections = _need(obj, "sections", list, path, lineno)
    out: list[tuple[str | None, str]] = []
    for i, sec in enumerate(sections):
        if not isinstance(sec, dict):
            raise DatasetError(path, lineno, f"sections[{i}]", "must be an object with 'header' and 'text'")
        text = sec.get("text")
        if not isinstance(text, str):
            raise DatasetError(path, lineno, f"sections[{i}].text", "must be a string")
        header = sec.get("header")
        if header is not None and not isinstance(header, str):
            raise DatasetError(path, lineno, f"sections[{i}].header", "must be a string")
        out.append((header, text))
    return arxiv_id, title, out


def check_graph(obj: dict, path: Path, lineno: int) -> tuple[str, dict[str, dict], dict[str, list[str]]]:
    """(sample_id, nodes, edges) of one neighbourhood, types checked."""
    sample_id, nodes, edges = check_graph_shape(obj, path, lineno)
    for nid, node in nodes.items():
        check_node(nid, node, path, lineno)
    check_edges(edges, path, lineno)
    return sample_id, nodes, edges


def check_graph_shape(obj: dict, path: Path, lineno: int) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """(sample_id, nodes, edges) of one neighbourhood with only their own types checked: each node is then checked
    by `check_node` and the edges by `check_edges`, in that order (an import checks a node it has already seen
    with equal bytes only once)."""
    sample_id = _need(obj, "sample_id", str, path, lineno)
    nodes = _need(obj, "nodes", dict, path, lineno)
    edges = _need(obj, "edges", dict, path, lineno, optional=True) or {}
    return sample_id, nodes, edges


def check_node(nid: str, node: Any, path: Path, lineno: int) -> None:
    """One node of a neighbourhood: an object whose arxivId, title and abstract are strings or null and whose
    authors are a list or null."""
    if not isinstance(node, dict):
        raise DatasetError(path, lineno, f"nodes.{nid}", "must be an object")
    arx = node.get("arxivId")
    if arx is not None and not isinstance(arx, str):
        raise DatasetError(path, lineno, f"nodes.{nid}.arxivId", "must be a string or null")
    for key in ("title", "abstract"):
        if node.get(key) is not None and not isinstance(node.get(key), str):
            raise DatasetError(path, lineno, f"nodes.{nid}.{key}", "must be a string")
    authors = node.get("authors")
    if authors is not None and not isinstance(authors, list):
        raise DatasetError(path, lineno, f"nodes.{nid}.authors", "must be a list of {name} objects")


def check_edges(edges: Mapping[str, JsonValue], path: Path, lineno: int) -> None:
    """Each source's references: a list of paper ids (the element types are gathered in C, one set per list)."""
    for src, refs in edges.items():
        if not isinstance(refs, list) or (refs and {*map(type, refs)} != {str}):
            raise DatasetError(path, lineno, f"edges.{src}", "must be a list of paper ids")


QA_STRINGS = (
    "question_type",
    "reasoning_type",
    "cognitive_skill",
    "venue",
    "consensus_tier",
    "seed_title",
    "seed_arxiv_id",
)


def check_item(obj: dict, path: Path, lineno: int) -> dict[str, Any]:
    """One QA row, typed and self-consistent (options, correct_index, distractor types)."""
    item_id = _need(obj, "id", str, path, lineno)
    if not item_id:
        raise DatasetError(path, lineno, "id", "is empty")
    _need(obj, "question", str, path, lineno)
    correct = _check_answer(obj, path, lineno)
    _need(obj, "depth", int, path, lineno)
    for key in QA_STRINGS:
        _need(obj, key, str, path, lineno, optional=True)
    _check_papers(obj, path, lineno)
    _check_distractors(obj, correct, path, lineno)
    return obj


def _check_answer(obj: dict, path: Path, lineno: int) -> int:
    """Four options and the index of the correct one (0..3), which is returned."""
    options = _str_list(obj, "options", path, lineno)
    if len(options) != 4:
        raise DatasetError(path, lineno, "options", f"must have exactly four options, got {len(options)}")
    correct = _need(obj, "correct_index", int, path, lineno)
    if not 0 <= correct <= 3:
        raise DatasetError(path, lineno, "correct_index", f"must be 0..3, got {correct}")
    return correct


def _check_papers(obj: dict, path: Path, lineno: int) -> None:
    """The seed, a non-empty gold list (its arXiv ids, when given, aligned with it) and the bridge papers."""
    _need(obj, "seed_paper_id", str, path, lineno)
    gold = _str_list(obj, "gold_paper_ids", path, lineno)
    if not gold:
        raise DatasetError(path, lineno, "gold_paper_ids", "is empty")
    gold_arx = _str_list(obj, "gold_arxiv_ids", path, lineno, optional=True)
    if gold_arx and len(gold_arx) != len(gold):
        raise DatasetError(path, lineno, "gold_arxiv_ids", "must align with gold_paper_ids")
    _str_list(obj, "bridge_paper_ids", path, lineno, optional=True)
    _str_list(obj, "bridge_arxiv_ids", path, lineno, optional=True)


def _check_distractors(obj: dict, correct: int, path: Path, lineno: int) -> None:
    """The distractor types, when given: four strings, `correct` at the correct index and nowhere else."""
    dtypes = obj.get("distractor_types")
    if dtypes is None:
        return
    if not isinstance(dtypes, list) or len(dtypes) != 4 or not all(isinstance(d, str) for d in dtypes):
        raise DatasetError(
            path, lineno, "distractor_types", "must be null or a list of four strings aligned with options"
        )
    if dtypes[correct] != "correct" or dtypes.count("correct") != 1:
        raise DatasetError(
            path, lineno, "distractor_types", f"must mark exactly the option at correct_index ({correct}) as 'correct'"
        )


def check_item_graph(
    item: dict, nodes: dict[str, dict] | None, pool: dict[str, int], path: Path, lineno: int
) -> dict[str, dict]:
    """Cross-file checks: the item has a graph; seed, gold and bridge are nodes; gold-path papers have text.
    Returns the item's graph nodes, checked."""
    if nodes is None:
        raise DatasetError(path, lineno, "id", f"item '{item['id']}' has no graph in {GRAPHS_FILE}")
    roles = [("seed_paper_id", item["seed_paper_id"])]
    roles += [(f"gold_paper_ids[{i}]", g) for i, g in enumerate(item["gold_paper_ids"])]
    roles += [(f"bridge_paper_ids[{i}]", b) for i, b in enumerate(item.get("bridge_paper_ids") or [])]
    for fieldname, pid in roles:
        node = nodes.get(pid)
        if node is None:
            raise DatasetError(path, lineno, fieldname, f"paper '{pid}' is not a node of the item's graph")
        arx = node.get("arxivId") or ""
        if not pool.get(arx):
            raise DatasetError(path, lineno, fieldname, f"gold-path paper '{pid}' has no full text in {PAPERS_FILE}")
    return nodes


def label_rows(obj: dict) -> list[JsonObject]:
    """The `section_recall_labels` of one audit row, tolerating absent parts."""
    analysis = obj.get("analysis")
    if not isinstance(analysis, dict):
        return []
    labels = analysis.get("section_recall_labels")
    return [lab for lab in labels if isinstance(lab, dict)] if isinstance(labels, list) else []
