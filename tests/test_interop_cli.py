"""`import-reference` and `export` from the command line: the same functions, exit codes for user mistakes."""

import json

import pytest

from tests.cli_inprocess import batch
from tests.interop_data import logs, write_experiment, write_interop_release


@pytest.fixture
def cli(capsys):
    """`--batch ARGS` in this process: no process boundary is under test here."""
    return lambda *args: batch(capsys, *args)


def test_import_then_export_summary_and_jsonl(tmp_path, cli):
    release = write_interop_release(tmp_path / "release")
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs())
    db = str(tmp_path / "s.sqlite")
    proc = cli(
        "import-reference", str(exp), "--data", str(release), "--run", "ref", "--db", db, "--format", "json", "--quiet"
    )
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["imported"] == 5 and summary["output_mismatches"] == 0
    out = tmp_path / "summary.json"
    proc = cli("export", "ref", "--format", "agenthop-summary", "--out", str(out), "--db", db)
    assert proc.returncode == 0, proc.stderr
    ref = json.loads(out.read_text())
    assert ref["fingerprint"]["schema_version"] == "agenthop-eval-v1" and ref["total"] == 5
    lines = cli("export", "ref", "--format", "jsonl", "--db", db).stdout.splitlines()
    assert len(lines) == 5 and all(json.loads(x)["steps"] for x in lines)
    report = json.loads(cli("report", "ref", "--db", db, "--format", "json").stdout)
    assert report["agent"] == "replay" and report["n"] == 5
    assert report["dataset"] == str(release.resolve())  # recorded as every run records it, so filters match


def test_import_errors_are_usage_errors(tmp_path, cli):
    release = write_interop_release(tmp_path / "release")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli("import-reference", str(empty), "--data", str(release), "--run", "x", "--db", str(tmp_path / "s.sqlite"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = cli("export", "nope", "--format", "jsonl", "--db", str(tmp_path / "s.sqlite"))
    assert proc.returncode == 2


def test_export_warns_on_stderr_when_the_replay_mismatched(tmp_path, cli):
    import copy

    release = write_interop_release(tmp_path / "release")
    bad = logs()
    bad["st_0001"] = copy.deepcopy(bad["st_0001"])
    bad["st_0001"]["budget_used"] = 7
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", bad, extras=False)
    db = str(tmp_path / "s.sqlite")
    assert (
        cli("import-reference", str(exp), "--data", str(release), "--run", "ref", "--db", db, "--quiet").returncode == 0
    )
    proc = cli("export", "ref", "--format", "agenthop-summary", "--db", db)
    assert proc.returncode == 0 and "warning: 1 imported trajectories did not replay as logged" in proc.stderr
    assert json.loads(proc.stdout)["workbench_warnings"]


def test_logs_of_another_release_are_refused_unless_forced(tmp_path, capsys):
    """The interop logs against the built-in benchmark (its st_0001 … are other questions) and against a copy
    whose correct answers moved: correct_index differs. Exit 2, no store written; --force imports."""
    from workbench.cli import main

    release = write_interop_release(tmp_path / "release")
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs())
    db = tmp_path / "s.sqlite"
    capsys.readouterr()
    assert (
        main(["--batch", "import-reference", str(exp), "--data", "builtin", "--run", "x", "--db", str(db), "--quiet"])
        == 2
    )
    err = capsys.readouterr().err
    assert "does not match the dataset" in err and "differs for" in err and "--force" in err and not db.exists()
    qa = release / "qa" / "full.jsonl"
    rows = [json.loads(line) for line in qa.read_text().splitlines()]
    for row in rows[:3]:  # the same question with its options in another order
        old, new = row["correct_index"], (row["correct_index"] + 1) % 4
        for key in ("options", "distractor_types"):
            row[key][old], row[key][new] = row[key][new], row[key][old]
        row["correct_index"] = new
    qa.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert (
        main(
            ["--batch", "import-reference", str(exp), "--data", str(release), "--run", "x", "--db", str(db), "--quiet"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "correct_index differs for 3 of 5 samples" in err and not db.exists()
    assert (
        main(
            [
                "--batch",
                "import-reference",
                str(exp),
                "--data",
                str(release),
                "--run",
                "x",
                "--db",
                str(db),
                "--quiet",
                "--force",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "caps: budget 30 · max_turns 20" in out and "{" not in out and "field_mismatches: " in out
