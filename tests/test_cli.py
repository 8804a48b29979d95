"""The headless CLI: the run → report contract (JSON keys other tools rely on), listing, synth, exit codes."""
import json
import subprocess
import sys

from sandbox.corpus import open_release
from workbench.cli import main


def cli(*args, db):
    return subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", *args, "--db", str(db)],
                          capture_output=True, text=True)


def test_run_then_report_json_contract(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    assert main(["--batch", "run", "--agent", "oracle", "--run", "o1", "--db", str(db), "--quiet", "--limit", "8"]) == 0
    capsys.readouterr()
    assert main(["--batch", "report", "o1", "--db", str(db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["n"] == 8 and rep["accuracy"] == 1.0
    for axis, metric in (("search", "paper_recall"), ("search", "section_recall"), ("synthesis", "conversion")):
        assert set(rep["axes"][axis][metric]) >= {"st", "mt", "all"}
    assert rep["axes"]["tool_use"]["calls_per_turn"] == 1.0
    assert set(rep["axes"]["resource"]) >= {"avg_tokens", "avg_turns", "avg_points", "max_tokens_rate",
                                            "max_turns_rate", "max_budget_rate"}
    assert rep["terminations"] == {"answer": 8, "budget": 0, "token_limit": 0, "max_turns": 0, "error": 0}
    assert rep["counts"]["search"]["paper_recall"]["all"] == [8, 8]


def test_runs_table_and_unknown_run(tmp_path):
    db = tmp_path / "s.sqlite"
    assert cli("run", "--agent", "random", "--run", "r1", "--limit", "4", "--quiet", db=db).returncode == 0
    listing = cli("runs", "--format", "json", db=db)
    rows = json.loads(listing.stdout)
    assert [(r["name"], r["done"], r["planned"], r["status"]) for r in rows] == [("r1", 4, 4, "done")]
    table = cli("runs", db=db)
    assert "r1" in table.stdout and "4/4" in table.stdout
    missing = cli("report", "nope", db=db)
    assert missing.returncode == 2 and "no run named 'nope'" in missing.stderr


def test_report_on_missing_store_is_a_usage_error(tmp_path):
    proc = cli("report", "x", db=tmp_path / "none.sqlite")
    assert proc.returncode == 2 and "no store" in proc.stderr


def test_bad_slice_exit_2(tmp_path):
    db = tmp_path / "s.sqlite"
    proc = cli("run", "--agent", "oracle", "--ids", "st_9999", db=db)
    assert proc.returncode == 2 and "unknown item id" in proc.stderr and not db.exists()


def test_synth_writes_a_loadable_release(tmp_path):
    out = tmp_path / "bench"
    proc = subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", "synth", "--out", str(out), "--seed", "3",
                           "--items", "12", "--papers", "80"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    corpus, report = open_release(out, tmp_path / "cache")
    assert report.items == 12 and report.papers == 80
    kinds = {(i.kind, i.depth) for i in corpus.items}
    assert kinds == {("st", 1), ("st", 2), ("mt", 1), ("mt", 2)}
    again = subprocess.run([sys.executable, "-m", "workbench.cli", "--batch", "synth", "--out", str(out)],
                           capture_output=True, text=True)
    assert again.returncode == 2 and "not empty" in again.stderr


def test_synth_is_deterministic(tmp_path):
    from sandbox import synth

    a = synth.generate(tmp_path / "a", seed=5, items=8, papers=60)
    b = synth.generate(tmp_path / "b", seed=5, items=8, papers=60)
    for rel in ("qa/full.jsonl", "graphs/full.jsonl", "paper_pool/papers.jsonl", "audit/recall_labels.jsonl"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes()


def test_batch_path_never_imports_textual_or_litellm(tmp_path):
    code = ("import sys; from workbench.cli import main; rc = main(['--batch', 'run', '--agent', 'heuristic', "
            f"'--limit', '2', '--quiet', '--db', r'{tmp_path / 's.sqlite'}']); "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm')))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def test_run_flags_past_their_bounds_exit_2_and_write_nothing(tmp_path, capsys):
    """A typo such as 999999999999999999999 points used to create the run and fail inside SQLite."""
    import pytest

    db = tmp_path / "s.sqlite"
    for flag, value, message in (("--budget", "999999999999999999999", "--budget: must be at most 100,000"),
                                 ("--max-turns", "0", "--max-turns: must be at least 1"),
                                 ("--max-tokens-total", "10000000000", "at most 1,000,000,000"),
                                 ("--workers", "100000", "--workers: must be at most 256"),
                                 ("--replicates", "1001", "at most 1,000"),
                                 ("--seed", str(2**63), "--seed: must be at most"),
                                 ("--limit", "x", "'x' is not a whole number")):
        with pytest.raises(SystemExit) as stop:
            main(["--batch", "run", "--agent", "oracle", "--db", str(db), "--quiet", flag, value])
        assert stop.value.code == 2 and message in capsys.readouterr().err, flag
    assert not db.exists()
