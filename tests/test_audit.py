"""Benchmark audit from the command line: verdicts and label edits stored, a corrected release written back."""

import json

import pytest

from sandbox.corpus import open_release
from tests.cli_inprocess import batch
from workbench.cli import main
from workbench.service import audit


@pytest.fixture
def cli(capsys):
    """`--batch audit ARGS` in this process (no process boundary is under test here)."""
    return lambda *args: batch(capsys, "audit", *args)


def test_audit_round_trip(mini_dir, tmp_path, cli):
    db = str(tmp_path / "s.sqlite")
    data = ["--data", str(mini_dir), "--db", db]
    shown = json.loads(cli("show", "st_0001", *data).stdout)
    assert shown["gold"] == "B" and any(lab["gold_paper"] and lab["text"] for lab in shown["labels"])
    assert (
        cli(
            "verdict",
            "st_0001",
            "--verdict",
            "flag",
            "--note",
            "ambiguous [option] C",
            "--reviewer",
            "ana",
            "--gold-supported",
            "no",
            *data,
        ).returncode
        == 0
    )
    assert (
        cli(
            "label",
            "st_0001",
            "--action",
            "reclassify",
            "--arxiv-id",
            "2305.01234",
            "--section",
            "2 Related Work",
            "--relevance",
            "direct",
            "--reviewer",
            "ana",
            *data,
        ).returncode
        == 0
    )
    assert (
        cli(
            "label",
            "st_0001",
            "--action",
            "add",
            "--arxiv-id",
            "2104.05678",
            "--section",
            "1 Introduction",
            "--relevance",
            "supporting",
            "--reviewer",
            "ana",
            *data,
        ).returncode
        == 0
    )
    out = tmp_path / "corrected"
    proc = cli("export", "--out", str(out), *data)
    assert proc.returncode == 0, proc.stderr
    verdicts = [json.loads(x) for x in (out / "audit" / "verdicts.jsonl").read_text().splitlines()]
    assert verdicts[0]["verdict"] == "flag" and verdicts[0]["checks"]["gold_supported"] is False
    assert verdicts[0]["note"] == "ambiguous [option] C"
    corpus, _report = open_release(out, tmp_path / "cache")
    labels = {(lab.arxiv_id, lab.section): lab for lab in corpus.item("st_0001").labels}
    assert labels[("2305.01234", "2 Related Work")].relevance == "direct"
    assert labels[("2104.05678", "1 Introduction")].section_index == 0
    # a remove verdict drops the item from the corrected release
    assert cli("verdict", "st_0001", "--verdict", "remove", "--reviewer", "bo", *data).returncode == 0
    again = cli("export", "--out", str(tmp_path / "c2"), *data)
    assert json.loads(again.stdout)["items"] == 0 and json.loads(again.stdout)["removed"] == 1


def test_audit_mistakes_exit_2(mini_dir, tmp_path, cli):
    db = tmp_path / "s.sqlite"
    proc = cli("verdict", "st_9999", "--verdict", "pass", "--reviewer", "x", "--data", str(mini_dir), "--db", str(db))
    assert proc.returncode == 2 and "no item" in proc.stderr and not db.exists()
    proc = cli(
        "label",
        "st_0001",
        "--action",
        "add",
        "--arxiv-id",
        "a",
        "--section",
        "s",
        "--reviewer",
        "x",
        "--data",
        str(mini_dir),
        "--db",
        str(db),
    )
    assert proc.returncode == 2 and "relevance" in proc.stderr


def test_the_sheet_shows_the_edits_and_reclassify_toggles_from_the_effective_relevance(mini_dir, tmp_path, cli):
    """`audit show` applies the stored edits (the export's own function), marks them and lists the history; an undo
    is an edit of its own and the export agrees with the sheet."""
    db = tmp_path / "s.sqlite"
    data = ["--data", str(mini_dir), "--db", str(db)]
    key = ("2305.01234", "2 Related Work")
    args = ["--arxiv-id", key[0], "--section", key[1], "--reviewer", "ana", *data]

    def sheet():
        return json.loads(cli("show", "st_0001", *data).stdout)

    def label(shown):
        return next((lab for lab in shown["labels"] if (lab["arxiv_id"], lab["label"]) == key), None)

    assert label(sheet())["relevance"] == "supporting" and label(sheet())["edit"] is None
    assert cli("label", "st_0001", "--action", "reclassify", "--relevance", "direct", *args).returncode == 0
    shown = sheet()
    assert label(shown)["relevance"] == "direct"
    assert label(shown)["edit"]["action"] == "reclassified" and label(shown)["edit"]["was"] == "supporting"
    # re-classifying to what it is now is refused, to the other relevance is the toggle back
    proc = cli("label", "st_0001", "--action", "reclassify", "--relevance", "direct", *args)
    assert proc.returncode == 2 and "is direct already" in proc.stderr
    assert cli("label", "st_0001", "--action", "reclassify", "--relevance", "supporting", *args).returncode == 0
    assert label(sheet())["relevance"] == "supporting" and label(sheet())["edit"] is None  # back as released
    assert cli("label", "st_0001", "--action", "remove", *args).returncode == 0
    shown = sheet()
    assert label(shown) is None and len(shown["labels"]) == 3
    assert [e["action"] for e in shown["edits"]] == ["reclassify", "reclassify", "remove"]
    proc = cli("label", "st_0001", "--action", "remove", *args)  # removed already: nothing to remove
    assert proc.returncode == 2 and "has no label" in proc.stderr

    # undo the removal (the latest edit): the label is back, the history has four rows, the removal marked undone
    assert cli("undo", "st_0001", "--reviewer", "bo", *data).returncode == 0
    shown = sheet()
    assert label(shown)["relevance"] == "supporting"
    assert [e["action"] for e in shown["edits"]] == ["reclassify", "reclassify", "remove", "undo"]
    removal, undo = shown["edits"][2], shown["edits"][3]
    assert removal["undone_by"]["id"] == undo["id"] and undo["undoes"] == removal["id"]
    proc = cli("undo", "st_0001", "--edit", str(removal["id"]), "--reviewer", "bo", *data)
    assert proc.returncode == 2 and "undone already" in proc.stderr
    # undo the first re-classification alone: only the second (to supporting) is left, so still supporting
    assert cli("undo", "st_0001", "--edit", str(shown["edits"][0]["id"]), "--reviewer", "bo", *data).returncode == 0
    assert label(sheet())["relevance"] == "supporting"

    out = tmp_path / "corrected"
    assert cli("export", "--out", str(out), *data).returncode == 0
    corpus, _ = open_release(out, tmp_path / "cache")
    exported = [(lab.arxiv_id, lab.section, lab.relevance) for lab in corpus.item("st_0001").labels]
    assert exported == [(lab["arxiv_id"], lab["label"], lab["relevance"]) for lab in sheet()["labels"]]


def test_an_added_label_must_name_a_readable_paper_of_the_item_and_a_section_that_resolves(mini_dir, tmp_path, cli):
    db = tmp_path / "s.sqlite"
    data = ["--data", str(mini_dir), "--db", str(db)]

    def add(arxiv_id, section):
        return cli(
            "label",
            "st_0001",
            "--action",
            "add",
            "--arxiv-id",
            arxiv_id,
            "--section",
            section,
            "--relevance",
            "direct",
            "--reviewer",
            "ana",
            *data,
        )

    for arxiv_id, section, why in (
        ("9999.99999", "no such section", "is not a paper of st_0001's neighbourhood"),
        ("1901.99999", "Abstract", "has no text in the paper pool"),  # in the graph, not in the pool
        ("2104.05678", "no such section", "matches no section of 2104.05678"),
        ("2104.05678", "3.2 Frequency-Domain Decomposition", "is a label of st_0001 already"),
    ):
        proc = add(arxiv_id, section)
        assert proc.returncode == 2 and why in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert not db.exists()  # nothing written, not even the store
    proc = add("2104.05678", "Method")  # resolves (numbering dropped) as the import would resolve it
    assert proc.returncode == 0 and "→ (B) 3 Method (normalised)" in json.loads(proc.stdout)["done"]
    out = tmp_path / "corrected"
    assert cli("export", "--out", str(out), *data).returncode == 0
    corpus, _report = open_release(out, tmp_path / "cache")
    added = [lab for lab in corpus.item("st_0001").labels if lab.section == "Method"]
    assert [(lab.arxiv_id, lab.section_index, lab.method) for lab in added] == [("2104.05678", 1, "normalised")]


def test_a_check_left_unassessed_is_exported_as_null(mini_dir, tmp_path, cli):
    data = ["--data", str(mini_dir), "--db", str(tmp_path / "s.sqlite")]
    assert (
        cli("verdict", "st_0001", "--verdict", "pass", "--question-ok", "yes", "--reviewer", "ana", *data).returncode
        == 0
    )
    shown = json.loads(cli("show", "st_0001", *data).stdout)
    assert shown["verdict"]["checks"] == {"question_ok": True, "gold_supported": None, "labels_accurate": None}
    out = tmp_path / "corrected"
    assert cli("export", "--out", str(out), *data).returncode == 0
    [row] = [json.loads(x) for x in (out / "audit" / "verdicts.jsonl").read_text().splitlines()]
    assert row["checks"] == {"question_ok": True, "gold_supported": None, "labels_accurate": None}


# ---------------------------------------------------------------- QA: reviewer, relevance, aliases, honest counts


def run(capsys, *args):
    capsys.readouterr()
    try:
        code = main(["--batch", "audit", *args])
    except SystemExit as exc:  # argparse's own refusals
        code = exc.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("reviewer", ["", "   "])
def test_a_blank_reviewer_is_refused(mini_dir, tmp_path, capsys, reviewer):
    db = tmp_path / "s.sqlite"
    code, err = run(
        capsys,
        "verdict",
        "st_0001",
        "--verdict",
        "pass",
        "--reviewer",
        reviewer,
        "--data",
        str(mini_dir),
        "--db",
        str(db),
    )
    assert code == 2 and "reviewer name cannot be empty" in err and not db.exists()


def test_add_needs_relevance_but_a_wrong_paper_or_an_existing_label_is_said_first(
    mini_dir, mini_corpus, tmp_path, capsys
):
    db = tmp_path / "s.sqlite"
    code, err = run(
        capsys,
        "label",
        "st_0001",
        "--action",
        "add",
        "--arxiv-id",
        "2104.05678",
        "--section",
        "1 Introduction",
        "--reviewer",
        "ana",
        "--data",
        str(mini_dir),
        "--db",
        str(db),
    )
    assert code == 2 and "--action add needs --relevance" in err and not db.exists()
    with pytest.raises(audit.AuditError, match="is not a paper of st_0001's neighbourhood"):
        audit.check_edit(mini_corpus, "st_0001", [], "add", "9999.99999", "1 Introduction", None)
    with pytest.raises(audit.AuditError, match="is a label of st_0001 already"):
        audit.check_edit(mini_corpus, "st_0001", [], "add", "2305.01234", "2 Related Work", None)
    with pytest.raises(audit.AuditError, match="has no label"):
        audit.check_edit(mini_corpus, "st_0001", [], "reclassify", "2305.01234", "9 Nowhere", None)


def test_an_alias_names_the_section_it_lists(mini_dir, tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    data = ["--data", str(mini_dir), "--db", str(db)]
    code, err = run(
        capsys,
        "label",
        "st_0001",
        "--action",
        "add",
        "--arxiv-id",
        "2104.05678",
        "--section",
        "Z",
        "--relevance",
        "direct",
        "--reviewer",
        "ana",
        *data,
    )
    assert code == 2 and "(C) 3.1 Method Details" in err  # the error lists aliases …
    code, err = run(
        capsys,
        "label",
        "st_0001",
        "--action",
        "add",
        "--arxiv-id",
        "2104.05678",
        "--section",
        "C",
        "--relevance",
        "direct",
        "--reviewer",
        "ana",
        *data,
    )
    assert code == 0, err  # … and the alias it lists is accepted, stored as the section's header
    shown = json.loads(
        (capsys.readouterr(), main(["--batch", "audit", "show", "st_0001", *data]), capsys.readouterr().out)[2]
    )
    added = [lab for lab in shown["labels"] if lab["arxiv_id"] == "2104.05678" and lab["label"] == "3.1 Method Details"]
    assert added and added[0]["relevance"] == "direct"


def test_audit_export_counts_the_label_lines_it_writes(mini_dir, tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    data = ["--data", str(mini_dir), "--db", str(db)]
    out = tmp_path / "a"
    assert run(capsys, "verdict", "st_0001", "--verdict", "pass", "--reviewer", "bo", *data)[0] == 0
    assert run(capsys, "export", "--out", str(out), *data)[0] == 0
    assert run(capsys, "verdict", "st_0001", "--verdict", "remove", "--reviewer", "bo", *data)[0] == 0
    capsys.readouterr()
    assert main(["--batch", "audit", "export", "--out", str(tmp_path / "b"), *data]) == 0
    counts = json.loads(capsys.readouterr().out)
    lines = (tmp_path / "b" / "audit" / "recall_labels.jsonl").read_text().splitlines()
    assert counts["label_rows"] == len(lines) == 0 and counts["removed"] == 1
    assert len((out / "audit" / "recall_labels.jsonl").read_text().splitlines()) == 1
