"""`import-reference` and `export` from the command line: the same functions, exit codes for user mistakes."""
import json
import subprocess
import sys

from tests.interop_data import logs, write_experiment, write_interop_release


def cli(*args, env=None):
    return subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", *args], capture_output=True, text=True,
                          env=env)


def test_import_then_export_summary_and_jsonl(tmp_path):
    release = write_interop_release(tmp_path / "release")
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs())
    db = str(tmp_path / "s.sqlite")
    proc = cli("import-reference", str(exp), "--data", str(release), "--run", "ref", "--db", db, "--format", "json",
               "--quiet")
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


def test_import_errors_are_usage_errors(tmp_path):
    release = write_interop_release(tmp_path / "release")
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = cli("import-reference", str(empty), "--data", str(release), "--run", "x", "--db", str(tmp_path / "s.sqlite"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    proc = cli("export", "nope", "--format", "jsonl", "--db", str(tmp_path / "s.sqlite"))
    assert proc.returncode == 2


def test_export_warns_on_stderr_when_the_replay_mismatched(tmp_path):
    import copy

    release = write_interop_release(tmp_path / "release")
    bad = logs()
    bad["st_0001"] = copy.deepcopy(bad["st_0001"])
    bad["st_0001"]["budget_used"] = 7
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", bad, extras=False)
    db = str(tmp_path / "s.sqlite")
    assert cli("import-reference", str(exp), "--data", str(release), "--run", "ref", "--db", db, "--quiet").returncode == 0
    proc = cli("export", "ref", "--format", "agenthop-summary", "--db", db)
    assert proc.returncode == 0 and "warning: 1 imported trajectories did not replay as logged" in proc.stderr
    assert json.loads(proc.stdout)["workbench_warnings"]
