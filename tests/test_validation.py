"""Malformed datasets: one clear error naming file, line and field; exit status 2; nothing written."""

import json
import os
import subprocess
import sys

import pytest

from sandbox.corpus import open_release
from sandbox.release import DatasetError
from tests.cli_inprocess import batch
from tests.conftest import G, S, mini_rows, write_release


def broken(kind):
    qa, graphs, papers, labels = mini_rows()
    if kind == "options":
        qa[0]["options"] = qa[0]["options"][:3]
    elif kind == "correct_index":
        qa[0]["correct_index"] = 4
    elif kind == "correct_index_type":
        qa[0]["correct_index"] = "1"
    elif kind == "distractors":
        qa[0]["distractor_types"] = ["correct", "no_context", "seed_only", "wrong_paper"]
    elif kind == "no_graph":
        graphs[0]["sample_id"] = "st_9999"
    elif kind == "gold_missing":
        qa[0]["gold_paper_ids"] = ["9" * 40]
    elif kind == "gold_no_text":
        papers.pop(2)
    elif kind == "section_text":
        papers[0]["sections"][1]["text"] = None
    elif kind == "missing_question":
        del qa[0]["question"]
    elif kind == "duplicate":
        qa.append(dict(qa[0]))
    return qa, graphs, papers, labels


CASES = {
    "options": ("qa/full.jsonl", 1, "options"),
    "correct_index": ("qa/full.jsonl", 1, "correct_index"),
    "correct_index_type": ("qa/full.jsonl", 1, "correct_index"),
    "distractors": ("qa/full.jsonl", 1, "distractor_types"),
    "no_graph": ("qa/full.jsonl", 1, "id"),
    "gold_missing": ("qa/full.jsonl", 1, "gold_paper_ids[0]"),
    "gold_no_text": ("qa/full.jsonl", 1, "gold_paper_ids[0]"),
    "section_text": ("paper_pool/papers.jsonl", 1, "sections[1].text"),
    "missing_question": ("qa/full.jsonl", 1, "question"),
    "duplicate": ("qa/full.jsonl", 2, "id"),
}


@pytest.mark.parametrize("kind", sorted(CASES))
def test_each_defect_is_named(tmp_path, kind):
    root = write_release(tmp_path / "bad", *broken(kind))
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    rel, line, field = CASES[kind]
    assert info.value.path.endswith(rel) and info.value.line == line and info.value.field == field
    assert not list((tmp_path / "cache").glob("corpus/*.sqlite"))  # nothing imported


def test_bad_json_line(tmp_path):
    root = write_release(tmp_path / "bad", *mini_rows())
    with open(root / "graphs/full.jsonl", "a") as fh:
        fh.write("{not json\n")
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    assert info.value.line == 2 and "not valid JSON" in str(info.value)


def test_cli_exit_2_and_store_untouched(tmp_path, capsys):
    root = write_release(tmp_path / "bad", *broken("options"))
    db = tmp_path / "results.sqlite"
    proc = batch(capsys, "run", "--data", str(root), "--agent", "oracle", "--run", "x", "--db", str(db))
    assert proc.returncode == 2
    assert "qa/full.jsonl:1" in proc.stderr and "'options'" in proc.stderr and "Traceback" not in proc.stderr
    assert not db.exists()


def test_missing_directory_is_a_usage_error(tmp_path, capsys):
    proc = batch(capsys, "run", "--data", str(tmp_path / "nope"), "--db", str(tmp_path / "s.sqlite"))
    assert proc.returncode == 2 and "does not exist" in proc.stderr


def test_label_problems_are_warnings(tmp_path):
    qa, graphs, papers, labels = mini_rows()
    labels.append({"sample_id": "nope", "analysis": {}})
    labels[0]["analysis"]["section_recall_labels"].append(
        {"arxiv_id": "2104.05678", "section": "No Such Header", "relevance": "direct"}
    )
    root = write_release(tmp_path / "ok", qa, graphs, papers, labels)
    corpus, report = open_release(root, tmp_path / "cache")
    assert report.label_warnings == {
        "empty_arxiv_id": 1,
        "unknown_arxiv_id": 1,
        "unknown_sample": 1,
        "unresolved_section": 1,
    }
    assert corpus.item("st_0001").seed_paper_id == S and corpus.item("st_0001").gold_paper_ids == (G,)


def test_changed_file_is_a_new_corpus_and_warm_open_reuses(tmp_path):
    root = write_release(tmp_path / "ok", *mini_rows())
    c1, r1 = open_release(root, tmp_path / "cache")
    c2, r2 = open_release(root, tmp_path / "cache")
    assert r1 is not None and r2 is None and c1.fingerprint == c2.fingerprint
    qa, graphs, papers, labels = mini_rows()
    qa[0]["question"] += " Really?"
    write_release(root, qa, graphs, papers, labels)
    c3, r3 = open_release(root, tmp_path / "cache")
    assert r3 is not None and c3.fingerprint != c1.fingerprint
    assert json.loads(json.dumps(c3.item("st_0001").question)).endswith("Really?")


def test_bytes_that_are_not_utf8_name_file_and_line(tmp_path):
    root = write_release(tmp_path / "bad", *mini_rows())
    pool = root / "paper_pool/papers.jsonl"
    lines = pool.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b"Intro text.", b"Intro \xff\xfe text.")  # line 3: the target paper
    pool.write_bytes(b"".join(lines))
    with pytest.raises(DatasetError) as info:
        open_release(root, tmp_path / "cache")
    assert info.value.path.endswith("paper_pool/papers.jsonl") and info.value.line == 3
    assert "not valid UTF-8 (byte 0xff at column" in str(info.value)
    assert not list((tmp_path / "cache").glob("corpus/*.sqlite"))


def test_a_file_starting_with_bad_bytes_exits_2_without_a_traceback(tmp_path, capsys):
    root = write_release(tmp_path / "bad", *mini_rows())
    qa = root / "qa/full.jsonl"
    qa.write_bytes(b"\xff\xfe" + qa.read_bytes())
    db = tmp_path / "results.sqlite"
    proc = batch(capsys, "run", "--data", str(root), "--agent", "oracle", "--run", "x", "--db", str(db))
    assert proc.returncode == 2, proc.stderr
    assert "qa/full.jsonl:1: is not valid UTF-8 (byte 0xff at column 1)" in proc.stderr
    assert "Traceback" not in proc.stderr and not db.exists()


def test_lone_surrogates_are_stored_as_replacement_characters(tmp_path):
    from sandbox.tools import run_tool

    qa, graphs, papers, labels = mini_rows()
    papers[2]["sections"][0]["text"] = "Intro \ud83d text."  # half an emoji, as scraped text has
    papers[2]["sections"][1]["header"] = "3 Method \udc00"
    graphs[0]["nodes"][G]["abstract"] = "Frequency \ud83d\ude00 domain \ud83d decomposition."  # a pair stays an emoji
    root = write_release(tmp_path / "sur", qa, [], [], labels)
    for rel, rows in (("graphs/full.jsonl", graphs), ("paper_pool/papers.jsonl", papers)):  # escaped, as JSON allows
        (root / rel).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="ascii")
    assert "\\ud83d" in (root / "paper_pool/papers.jsonl").read_text()
    corpus, report = open_release(root, tmp_path / "cache")
    assert report.data_warnings == {"lone_surrogates": 3}  # two strings of the pool, one of the graph
    view = corpus.view(corpus.item("st_0001"))
    outputs = [
        run_tool(view, "read_section", {"paper_id": G, "section": "A"}).text,
        run_tool(view, "list_sections", {"paper_id": G}).text,
        run_tool(view, "get_paper_info", {"paper_id": G}).text,
    ]
    assert outputs[0] == "=== 1 Introduction ===\n\nIntro \ufffd text."
    assert "(B) 3 Method \ufffd (85 chars)" in outputs[1]
    assert "Abstract: Frequency \U0001f600 domain \ufffd decomposition." in outputs[2]
    # the same bytes give the same outputs: a fresh import into another cache agrees
    again, _ = open_release(root, tmp_path / "cache2")
    view2 = again.view(again.item("st_0001"))
    assert [
        run_tool(view2, n, a).text
        for n, a in (
            ("read_section", {"paper_id": G, "section": "A"}),
            ("list_sections", {"paper_id": G}),
            ("get_paper_info", {"paper_id": G}),
        )
    ] == outputs


def test_duplicate_label_rows_last_one_counts_with_a_warning(tmp_path):
    qa, graphs, papers, labels = mini_rows()
    labels.append(
        {
            "sample_id": "st_0001",
            "analysis": {
                "section_recall_labels": [
                    {
                        "paper": "Target Paper",
                        "arxiv_id": "2104.05678",
                        "section": "Apdx_A: Proofs",
                        "relevance": "direct",
                    }
                ]
            },
        }
    )
    root = write_release(tmp_path / "dup", qa, graphs, papers, labels)
    corpus, report = open_release(root, tmp_path / "cache")
    got = [(lab.arxiv_id, lab.section, lab.relevance, lab.section_index) for lab in corpus.item("st_0001").labels]
    assert got == [("2104.05678", "Apdx_A: Proofs", "direct", 3)]  # not a union with the first row's four labels
    assert report.label_warnings == {"duplicate_sample": 1}
    assert (report.labels, report.labels_resolved) == (1, 1)


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_stale_import_temp_files_are_removed_on_open(tmp_path):
    import time

    root = write_release(tmp_path / "ok", *mini_rows())
    corpus_dir = tmp_path / "cache" / "corpus"
    corpus_dir.mkdir(parents=True)
    dead = corpus_dir / f".import-{_dead_pid()}-abc123.sqlite"
    live_child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    live = corpus_dir / f".import-{live_child.pid}-def456.sqlite"  # another process still importing
    mine = corpus_dir / f".import-{os.getpid()}-ghi789.sqlite"
    legacy_old, legacy_new = corpus_dir / ".import-k2j3h4g5.sqlite", corpus_dir / ".import-zz9yy8xx.sqlite"
    for path in (dead, live, mine, legacy_old, legacy_new):
        path.write_bytes(b"x" * 4096)
    long_ago = time.time() - 2 * 3600
    os.utime(legacy_old, (long_ago, long_ago))
    try:
        open_release(root, tmp_path / "cache")
        left = sorted(p.name for p in corpus_dir.glob(".import-*"))
        assert left == sorted([live.name, mine.name, legacy_new.name])
    finally:
        live_child.communicate(b"")


def test_a_run_killed_during_the_first_import_leaves_nothing_behind_for_long(tmp_path, demo_dir):
    """SIGKILL mid-import leaves the temp file; the next run removes it. The child pauses inside the import (its
    temp file written, the corpus being filled) until it is killed: killing at a moment found by polling, retried
    five times, missed the import, which lasts a fraction of a second, whenever the test was slower than it."""
    cache = tmp_path / "cache"
    env = dict(os.environ, AGENTHOP_CACHE=str(cache))
    args = [
        "--batch",
        "run",
        "--data",
        str(demo_dir),
        "--agent",
        "oracle",
        "--limit",
        "1",
        "--quiet",
        "--db",
        str(tmp_path / "s.sqlite"),
    ]
    paused = (
        "import runpy, sys\n"
        "import sandbox.corpus as corpus\n"
        "fill = corpus._fill\n"
        "def paused(*args):\n"
        "    print('importing', flush=True)\n"
        "    sys.stdin.read()  # killed here\n"
        "    return fill(*args)\n"
        "corpus._fill = paused\n"
        "sys.argv = ['workbench.cli', *sys.argv[1:]]\n"
        "runpy.run_module('workbench.cli', run_name='__main__')\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", paused, *args],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout.readline() == "importing\n"
        assert len(list(cache.glob("corpus/.import-*"))) == 1
    finally:
        proc.kill()
        proc.communicate()
    done = subprocess.run([sys.executable, "-m", "workbench.cli", *args], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert not list(cache.glob("corpus/.import-*")) and len(list(cache.glob("corpus/*.sqlite"))) == 1


def test_qa_arxiv_ids_that_disagree_with_the_graph_are_counted(tmp_path, capsys):
    from sandbox.recall import paper_flags
    from workbench.cli import main

    qa, graphs, papers, labels = mini_rows()
    qa[0]["gold_arxiv_ids"] = ["2104.99999"]  # the graph's gold node says 2104.05678
    qa[0]["bridge_arxiv_ids"] = ["2202.00001"]  # agrees
    qa[0]["seed_arxiv_id"] = "2305.00000"
    root = write_release(tmp_path / "ok", qa, graphs, papers, labels)
    corpus, report = open_release(root, tmp_path / "cache-direct")  # the CLI below imports into its own cache
    assert report.data_warnings == {"gold_arxiv_ids_differ": 1, "seed_arxiv_id_differs": 1}
    item = corpus.item("st_0001")
    assert item.gold_arxiv_ids == ("2104.05678",) and item.bridge_arxiv_ids == ("2202.00001",)
    assert paper_flags(item, [("2104.05678", 1)]) == (True, True)  # a read of the gold paper, as the tools record it
    assert (
        main(
            [
                "--batch",
                "run",
                "--data",
                str(root),
                "--agent",
                "oracle",
                "--quiet",
                "--format",
                "json",
                "--db",
                str(tmp_path / "s.sqlite"),
            ]
        )
        == 0
    )
    err = capsys.readouterr().err
    assert "warning: 1 item(s) whose gold_arxiv_ids differ from their graph nodes' arxivId" in err
    assert "warning: 1 item(s) whose seed_arxiv_id differs" in err
