"""Benchmark audit from the command line: verdicts and label edits stored, a corrected release written back."""
import json
import subprocess
import sys

from sandbox.corpus import open_release


def cli(*args):
    return subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", "audit", *args], capture_output=True,
                          text=True)


def test_audit_round_trip(mini_dir, tmp_path):
    db = str(tmp_path / "s.sqlite")
    data = ["--data", str(mini_dir), "--db", db]
    shown = json.loads(cli("show", "st_0001", *data).stdout)
    assert shown["gold"] == "B" and any(lab["gold_paper"] and lab["text"] for lab in shown["labels"])
    assert cli("verdict", "st_0001", "--verdict", "flag", "--note", "ambiguous [option] C", "--reviewer", "ana",
               "--gold-supported", "no", *data).returncode == 0
    assert cli("label", "st_0001", "--action", "reclassify", "--arxiv-id", "2305.01234", "--section", "2 Related Work",
               "--relevance", "direct", "--reviewer", "ana", *data).returncode == 0
    assert cli("label", "st_0001", "--action", "add", "--arxiv-id", "2104.05678", "--section", "1 Introduction",
               "--relevance", "supporting", "--reviewer", "ana", *data).returncode == 0
    out = tmp_path / "corrected"
    proc = cli("export", "--out", str(out), *data)
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(x) for x in (out / "audit" / "verdicts.jsonl").read_text().splitlines()]
    assert verdicts[0]["verdict"] == "flag" and verdicts[0]["checks"]["gold_supported"] is False
    assert verdicts[0]["note"] == "ambiguous [option] C"
    corpus, report = open_release(out, tmp_path / "cache")
    labels = {(lab.arxiv_id, lab.section): lab for lab in corpus.item("st_0001").labels}
    assert labels[("2305.01234", "2 Related Work")].relevance == "direct"
    assert labels[("2104.05678", "1 Introduction")].section_index == 0
    # a remove verdict drops the item from the corrected release
    assert cli("verdict", "st_0001", "--verdict", "remove", "--reviewer", "bo", *data).returncode == 0
    again = cli("export", "--out", str(tmp_path / "c2"), *data)
    assert json.loads(again.stdout)["items"] == 0 and json.loads(again.stdout)["removed"] == 1


def test_audit_mistakes_exit_2(mini_dir, tmp_path):
    db = tmp_path / "s.sqlite"
    proc = cli("verdict", "st_9999", "--verdict", "pass", "--reviewer", "x", "--data", str(mini_dir), "--db", str(db))
    assert proc.returncode == 2 and "no item" in proc.stderr and not db.exists()
    proc = cli("label", "st_0001", "--action", "add", "--arxiv-id", "a", "--section", "s", "--reviewer", "x",
               "--data", str(mini_dir), "--db", str(db))
    assert proc.returncode == 2 and "relevance" in proc.stderr
