"""The corpus import in one pass with bulk inserts, its graphs in a worker process on large releases: the cache
it builds is the one the in-process import builds, row for row, and a bad line is named the same way."""

import json
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox import graph_import
from sandbox.corpus import open_release
from sandbox.release import DatasetError, check_graph
from tests.conftest import M, mini_rows, write_release


def tables(cache) -> dict[str, list[tuple]]:
    """Every row of every table of the one corpus in `cache`, in key order."""
    (path,) = cache.glob("corpus/*.sqlite")
    db = sqlite3.connect(path)
    names = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    out = {n: db.execute(f"SELECT * FROM {n} ORDER BY 1, 2").fetchall() for n in names}
    db.close()
    return out


def spy_workers(monkeypatch) -> list:
    """The worker processes started (the real class, recorded)."""
    started = []
    real = graph_import.GraphWorker

    class Recorded(real):
        def __init__(self, *args):
            super().__init__(*args)
            started.append(self.process.pid)

    monkeypatch.setattr("sandbox.corpus.GraphWorker", Recorded)
    return started


def test_the_worker_builds_the_same_cache_as_the_in_process_import(demo_dir, tmp_path, monkeypatch):
    started = spy_workers(monkeypatch)
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", "off")
    here, report_here = open_release(demo_dir, tmp_path / "here")
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", "on")
    there, report_there = open_release(demo_dir, tmp_path / "there")
    assert len(started) == 1  # the second import did use a worker
    assert report_there == report_here and report_here.nodes > 0 and report_here.metadata_only > 0
    mine, theirs = tables(tmp_path / "here"), tables(tmp_path / "there")
    listed = sum(len(json.loads(view)[0]) for _, view in mine["neighbourhoods"])
    assert mine == theirs and listed > len(mine["nodes"])  # nodes shared between neighbourhoods
    item = here.items[0]
    assert here.view(item).nodes == there.view(item).nodes
    assert [p.name for p in (tmp_path / "there" / "corpus").iterdir()] == [
        next((tmp_path / "there" / "corpus").glob("*.sqlite")).name
    ]  # the worker's scratch file is gone


@pytest.mark.parametrize("worker", ["on", "off"])
def test_a_bad_graph_line_is_named_the_same_with_or_without_the_worker(tmp_path, monkeypatch, worker):
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", worker)
    qa, graphs, papers, labels = mini_rows()
    second = json.loads(json.dumps(graphs[0]))
    del second["nodes"][M]
    graphs.append(second)
    root = write_release(tmp_path / "dup", qa, graphs, papers, labels)
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    assert info.value.path.endswith("graphs/full.jsonl") and (info.value.line, info.value.field) == (2, "sample_id")
    assert "duplicate sample_id 'st_0001' (first on line 1)" in str(info.value)
    assert not list((tmp_path / "cache").glob("corpus/*"))  # nothing imported, no scratch file left


@pytest.mark.parametrize("worker", ["on", "off"])
@pytest.mark.parametrize("bad", ["node", "edges"])
def test_a_repeated_sample_with_a_bad_node_or_edge_names_the_type_first(tmp_path, monkeypatch, worker, bad):
    """Nodes are checked once per distinct node while they are stored, yet a line's errors are still found in
    `release.check_graph`'s order: its nodes, then its edges, then whether its sample_id repeats."""
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", worker)
    qa, graphs, papers, labels = mini_rows()
    second = json.loads(json.dumps(graphs[0]))
    if bad == "node":
        second["nodes"][M] = {**second["nodes"][M], "title": 7}
    else:
        second["edges"] = {M: [M, 3]}
    root = write_release(tmp_path / "dup", qa, [*graphs, second], papers, labels)
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    want = f"nodes.{M}.title" if bad == "node" else f"edges.{M}"
    assert (info.value.line, info.value.field) == (2, want)
    with pytest.raises(DatasetError) as direct:
        check_graph(second, info.value.path, 2)
    assert str(direct.value) == str(info.value)


@pytest.mark.parametrize(
    "bad, field, message",
    [
        ({"title": 7}, "title", "must be a string"),
        ({"arxivId": ["2104.05678"]}, "arxivId", "must be a string or null"),
        ({"authors": "Ada Lovelace"}, "authors", "must be a list of {name} objects"),
        (None, "", "must be an object"),
    ],
)
@pytest.mark.parametrize("worker", ["on", "off"])
def test_a_node_of_the_wrong_type_is_named_on_its_first_line_even_where_the_paper_recurs(
    tmp_path, monkeypatch, worker, bad, field, message
):
    """A paper that was fine on line 1 and is malformed on line 2 is caught on line 2 (file, line and field), with
    the graphs worker or without, and nothing is imported: a repeated node is recognised by its bytes, so a
    malformed one must never pass as the earlier good one."""
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", worker)
    qa, graphs, papers, labels = mini_rows()
    second = json.loads(json.dumps(graphs[0]))
    second["sample_id"] = "st_0002"
    second["nodes"][M] = "not a node" if bad is None else {**second["nodes"][M], **bad}
    third = json.loads(json.dumps(second))
    third["sample_id"] = "st_0003"
    root = write_release(tmp_path / "bad", qa, [*graphs, second, third], papers, labels)
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    where = f"nodes.{M}" + (f".{field}" if field else "")
    assert (info.value.line, info.value.field) == (2, where) and message in str(info.value)
    assert not list((tmp_path / "cache").glob("corpus/*"))


def test_a_repeated_paper_replaces_the_earlier_one_across_insert_batches(tmp_path, monkeypatch):
    """Papers go in in batches: a paper repeated after its first batch was written still replaces it whole."""
    monkeypatch.setattr("sandbox.corpus.PAPER_BATCH", 2)
    qa, graphs, papers, labels = mini_rows()
    again = json.loads(json.dumps(papers[0]))
    again["sections"] = [{"header": "Only", "text": "the last record counts"}]
    root = write_release(tmp_path / "rep", qa, graphs, [*papers, again], labels)
    corpus, _ = open_release(root, tmp_path / "cache")
    assert corpus.headers(again["arxiv_id"]) == [("Only", len("the last record counts"))]
    assert corpus.headers(papers[2]["arxiv_id"])[0] == ("1 Introduction", len("Intro text."))


SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from([0.0, 1.0, 2.5]), st.text(max_size=3))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=2), inner, max_size=3)),
    max_leaves=6,
)
NODES = st.fixed_dictionaries(
    {},
    optional={
        "title": st.text(max_size=3),
        "year": VALUES,
        "extra": VALUES,
        "authors": st.lists(st.dictionaries(st.just("name"), VALUES), max_size=2),
    },
)


@settings(max_examples=150, deadline=None)
@given(st.lists(NODES, min_size=1, max_size=5))
def test_nodes_are_shared_exactly_when_their_json_is_the_same(nodes):
    """Occurrences of one id are stored once per distinct JSON text: never merged where JSON tells them apart
    (1, 1.0 and True compare equal in Python), never split where it does not (keys in another order)."""
    db = sqlite3.connect(":memory:")
    db.executescript(graph_import.graph_tables())
    graphs = [{"sample_id": f"s{i}", "nodes": {"p": node}, "edges": {}} for i, node in enumerate(nodes)]
    path = write_jsonl(graphs)
    from sandbox.release import Warnings

    _, n_nodes = graph_import.write_graphs(db, path, Warnings())
    distinct = {json.dumps(n, ensure_ascii=False, sort_keys=True) for n in nodes}
    assert n_nodes == len(distinct)
    texts = dict(db.execute("SELECT id, json FROM nodes"))
    stored = {sample: texts[json.loads(view)[0][0][1]] for sample, view in db.execute("SELECT * FROM neighbourhoods")}
    assert [json.loads(stored[f"s{i}"]) for i in range(len(nodes))] == [json.loads(json.dumps(n)) for n in nodes]


def write_jsonl(rows):
    import tempfile
    from pathlib import Path

    fd, name = tempfile.mkstemp(suffix=".jsonl")
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return Path(name)


def test_the_fingerprint_is_the_one_runs_recorded_before(tmp_path):
    """Hashing the files in parallel threads changes nothing: SHA-256 over `file:digest` lines in release order,
    so existing caches and runs' dataset fingerprints stay valid; a second call is served from the memo."""
    import hashlib

    from sandbox import release
    from sandbox.corpus import fingerprint

    root = write_release(tmp_path / "r", *mini_rows())
    (root / "audit" / "recall_labels.jsonl").unlink()  # an absent file is part of the identity too
    lines = []
    for rel in release.RELEASE_FILES:
        path = root / rel
        lines.append(
            f"{rel}:{hashlib.sha256(path.read_bytes()).hexdigest()}\n" if path.is_file() else f"{rel}:absent\n"
        )
    want = hashlib.sha256("".join(lines).encode()).hexdigest()
    assert fingerprint(root, tmp_path / "cache") == want
    memo = json.loads((tmp_path / "cache" / "fingerprints.json").read_text())
    assert len(memo) == 3 and fingerprint(root, tmp_path / "cache") == want


def test_the_worker_is_used_for_a_large_graphs_file_only_when_a_core_is_free(tmp_path, monkeypatch):
    big, small = tmp_path / "big.jsonl", tmp_path / "small.jsonl"
    with open(big, "wb") as fh:
        fh.truncate(graph_import.WORKER_MIN_BYTES)
    small.write_text("{}\n")
    monkeypatch.delenv("AGENTHOP_IMPORT_WORKER", raising=False)
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (0.8, 0.8, 0.8))
    assert graph_import.use_worker(big) and not graph_import.use_worker(small)
    monkeypatch.setattr("os.getloadavg", lambda: (1.2, 1.0, 1.0))  # most of a core free: the worker still pays
    assert graph_import.use_worker(big)
    monkeypatch.setattr("os.getloadavg", lambda: (1.6, 1.0, 1.0))  # both cores busy: the processes would take turns
    assert not graph_import.use_worker(big)
    monkeypatch.setattr("os.cpu_count", lambda: 1)
    monkeypatch.setattr("os.getloadavg", lambda: (0.0, 0.0, 0.0))  # one idle core: still only turns to take
    assert not graph_import.use_worker(big)
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", "on")
    assert graph_import.use_worker(small)


@pytest.mark.parametrize("worker", ["off", "on"])
def test_label_problems_are_judged_against_the_graphs_as_before(tmp_path, monkeypatch, worker):
    """Labels are resolved before the graphs are known (while the worker parses them) and judged against them
    after: unknown and repeated samples, and the problems of the row that counts (the last), are what they were."""
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", worker)
    qa, graphs, papers, labels = mini_rows()
    earlier = json.loads(json.dumps(labels[0]))
    earlier["analysis"]["section_recall_labels"] = [{"arxiv_id": "9999.00000", "section": "Intro"}]
    stray = {"sample_id": "nope", "analysis": labels[0]["analysis"]}
    root = write_release(tmp_path / "labels", qa, graphs, papers, [earlier, stray, {"sample_id": 3}, labels[0]])
    corpus, _ = open_release(root, tmp_path / "cache")
    where = f"{root / 'audit/recall_labels.jsonl'}"
    warned = corpus.report.label_warnings
    assert (warned["unknown_sample"], warned["duplicate_sample"], warned["unknown_arxiv_id"]) == (2, 1, 1)
    assert corpus.label_examples["unknown_sample"] == f"{where}:2"
    assert corpus.label_examples["duplicate_sample"] == (
        f"{where}:4: sample_id 'st_0001' (also on line 1; the last row counts)"
    )
    assert corpus.label_examples["unknown_arxiv_id"].startswith(f"{where}:4 label 3: ")  # the last row's, not 9999
    assert [label.arxiv_id for label in corpus.item("st_0001").labels] == [
        lab["arxiv_id"] for lab in labels[0]["analysis"]["section_recall_labels"]
    ]


@pytest.mark.parametrize("worker", ["off", "on"])
def test_a_bad_labels_line_is_named_after_the_items_as_before(tmp_path, monkeypatch, worker):
    """The labels file is read early now; its bad line is still reported only once the items validated."""
    monkeypatch.setenv("AGENTHOP_IMPORT_WORKER", worker)
    qa, graphs, papers, labels = mini_rows()
    root = write_release(tmp_path / "bad", qa, graphs, papers, labels)
    with open(root / "audit/recall_labels.jsonl", "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    assert info.value.path.endswith("audit/recall_labels.jsonl") and info.value.line == 2
    del qa[0]["question"]
    root = write_release(tmp_path / "worse", qa, graphs, papers, labels)
    with open(root / "audit/recall_labels.jsonl", "a", encoding="utf-8") as fh:
        fh.write("{not json\n")
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache2")
    assert info.value.path.endswith("qa/full.jsonl")
    assert not list((tmp_path / "cache2").glob("corpus/*"))


def test_views_read_through_the_node_cache_are_the_graph_file_s(demo_dir, tmp_path, monkeypatch):
    """Each item's view holds the nodes of its line of the graphs file, in the file's order and with its values,
    and its non-empty reference lists ordered by citing paper, whether its nodes were cached by an earlier view
    or not; a paper in several neighbourhoods is one node object; over NODE_CACHE, the cache keeps the last
    view's nodes only."""
    from sandbox import corpus as corpus_module

    corpus, _ = open_release(demo_dir, tmp_path / "cache")
    try:
        items = corpus.items
        lines = [json.loads(line) for line in (demo_dir / "graphs" / "full.jsonl").read_text().splitlines() if line]
        graphs = {g["sample_id"]: g for g in lines}
        expected = {item.id: list(graphs[item.id]["nodes"].items()) for item in items}
        expected_edges = {
            item.id: {src: refs for src, refs in sorted(graphs[item.id]["edges"].items()) if refs} for item in items
        }

        def seen(view):
            return [(n.s2id, n.data) for n in view.nodes.values()]

        views = [corpus.view(item) for item in items] + [corpus.view(item) for item in reversed(items)]
        assert all(seen(view) == expected[view.item.id] for view in views)
        assert all(list(v.edges.items()) == list(expected_edges[v.item.id].items()) for v in views)  # order too
        first, again = views[0], views[-1]  # the same item, its nodes cached by then
        assert all(a is b for a, b in zip(first.nodes.values(), again.nodes.values(), strict=True))
        shared = set(views[0].nodes) & set(views[1].nodes)
        assert shared and all(views[0].nodes[p] is views[1].nodes[p] for p in shared)

        monkeypatch.setattr(corpus_module, "NODE_CACHE", 10)  # less than one neighbourhood
        before = len(corpus._nodes)
        assert seen(corpus.view(items[2])) == expected[items[2].id]
        assert len(corpus._nodes) == before  # all cached already: nothing read, nothing dropped
        corpus._nodes.clear()
        for item in items[:3]:
            assert seen(corpus.view(item)) == expected[item.id]
            assert {node.s2id for node in corpus._nodes.values()} == set(graphs[item.id]["nodes"])  # its own only
    finally:
        corpus.close()
