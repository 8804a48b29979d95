"""The headless CLI: the run → report contract (JSON keys other tools rely on), listing, synth, exit codes."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.corpus import open_release
from tests.cli_inprocess import batch
from workbench.cli import main


@pytest.fixture
def cli(capsys):
    """`--batch ARGS --db DB` in this process; the tests of a real process boundary (a closed pipe, a terminal, the
    entry point's imports) start one themselves."""
    return lambda *args, db: batch(capsys, *args, "--db", str(db))


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
    assert set(rep["axes"]["resource"]) >= {
        "avg_tokens",
        "avg_turns",
        "avg_points",
        "max_tokens_rate",
        "max_turns_rate",
        "max_budget_rate",
    }
    assert rep["terminations"] == {"answer": 8, "budget": 0, "token_limit": 0, "max_turns": 0, "error": 0}
    assert rep["counts"]["search"]["paper_recall"]["all"] == [8, 8]


def test_runs_table_and_unknown_run(tmp_path, cli):
    db = tmp_path / "s.sqlite"
    assert cli("run", "--agent", "random", "--run", "r1", "--limit", "4", "--quiet", db=db).returncode == 0
    listing = cli("runs", "--format", "json", db=db)
    rows = json.loads(listing.stdout)
    assert [(r["name"], r["done"], r["planned"], r["status"]) for r in rows] == [("r1", 4, 4, "done")]
    table = cli("runs", db=db)
    assert "r1" in table.stdout and "4/4" in table.stdout
    missing = cli("report", "nope", db=db)
    assert missing.returncode == 2 and "no run named 'nope'" in missing.stderr


def test_report_on_missing_store_is_a_usage_error(tmp_path, cli):
    proc = cli("report", "x", db=tmp_path / "none.sqlite")
    assert proc.returncode == 2 and "no store" in proc.stderr


def test_bad_slice_exit_2(tmp_path, cli):
    db = tmp_path / "s.sqlite"
    proc = cli("run", "--agent", "oracle", "--ids", "st_9999", db=db)
    assert proc.returncode == 2 and "unknown item id" in proc.stderr and not db.exists()


def test_synth_writes_a_loadable_release(tmp_path, capsys):
    out = tmp_path / "bench"
    proc = synth_cli(capsys, "--out", str(out), "--seed", "3", "--items", "12", "--papers", "80")
    assert proc.returncode == 0, proc.stderr
    corpus, report = open_release(out, tmp_path / "cache")
    assert report.items == 12 and report.papers == 80
    kinds = {(i.kind, i.depth) for i in corpus.items}
    assert kinds == {("st", 1), ("st", 2), ("mt", 1), ("mt", 2)}
    again = synth_cli(capsys, "--out", str(out))
    assert again.returncode == 2 and "not empty" in again.stderr


def test_synth_is_deterministic(tmp_path):
    from sandbox import synth

    a = synth.generate(tmp_path / "a", seed=5, items=8, papers=60)
    b = synth.generate(tmp_path / "b", seed=5, items=8, papers=60)
    for rel in ("qa/full.jsonl", "graphs/full.jsonl", "paper_pool/papers.jsonl", "audit/recall_labels.jsonl"):
        assert (a / rel).read_bytes() == (b / rel).read_bytes()


def test_batch_path_never_imports_textual_or_litellm(tmp_path):
    code = (
        "import sys; from workbench.cli import main; rc = main(['--batch', 'run', '--agent', 'heuristic', "
        f"'--limit', '2', '--quiet', '--db', r'{tmp_path / 's.sqlite'}']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'litellm')))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[]"


def synth_cli(capsys, *args) -> subprocess.CompletedProcess:
    """`--batch synth` in this process (a subprocess per case costs seconds), as a CompletedProcess."""
    return batch(capsys, "synth", *args)


def test_synth_with_too_few_papers_is_a_usage_error_that_names_enough(tmp_path, capsys):
    out = tmp_path / "b"
    proc = synth_cli(capsys, "--out", str(out), "--items", "3", "--papers", "5")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "5 papers are too few for 3 items" in proc.stderr and not out.exists()
    suggested = proc.stderr.rsplit("--papers ", 1)[1].strip()
    again = synth_cli(capsys, "--out", str(out), "--items", "3", "--papers", suggested)
    assert again.returncode == 0, again.stderr  # the suggestion works


def test_synth_suggestion_at_scale():
    from dataclasses import replace

    from sandbox import synth
    from sandbox.synth.pool import _builds

    with pytest.raises(synth.NotEnoughPapers) as info:
        synth.generate(Path("/nonexistent/never-written"), items=400, papers=60)
    exc = info.value
    assert exc.built < 400
    demo = synth.PRESETS["demo"]
    assert _builds(0, replace(demo, items=400, papers=exc.suggested_papers))  # the suggestion works
    assert not _builds(0, replace(demo, items=400, papers=exc.suggested_papers - 1))  # and is the least


def test_synth_out_that_cannot_be_a_directory(tmp_path, capsys):
    afile = tmp_path / "file.txt"
    afile.write_text("x")
    proc = synth_cli(capsys, "--out", str(afile), "--items", "4", "--papers", "40")
    assert proc.returncode == 2 and "exists and is not a directory" in proc.stderr and "Traceback" not in proc.stderr
    proc = synth_cli(capsys, "--out", str(afile / "sub"), "--items", "4", "--papers", "40")
    assert proc.returncode == 2 and "cannot write" in proc.stderr and "Traceback" not in proc.stderr
    proc = synth_cli(capsys, "--out", "/proc/forbidden", "--items", "4", "--papers", "40")
    assert proc.returncode == 2 and "cannot write /proc/forbidden" in proc.stderr and "Traceback" not in proc.stderr
    assert afile.read_text() == "x"


def test_listing_runs_imports_no_scientific_stack(tmp_path):
    """`--batch runs` (and its error path) is a quick look: no scipy, numpy, textual or litellm import."""
    from storage import Store

    db = tmp_path / "s.sqlite"
    Store(db).close()
    code = (
        "import sys; from workbench.cli import main; "
        f"rcs = [main(['--batch', 'runs', '--db', r'{db}']), main(['--batch', 'report', 'nope', '--db', r'{db}'])]; "
        "print(rcs, sorted({m.split('.')[0] for m in sys.modules} & {'scipy', 'numpy', 'textual', 'litellm'}))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "[0, 2] []"


def test_delete_counts_the_unfinished_trajectories_of_an_interrupted_run(tmp_path, capsys):
    """An interrupted run holds the trajectories its stop left unfinished: `delete` names them with the finished
    ones (it said "0 trajectories" for a run holding only unfinished ones), counted here from the store."""
    from storage import Store

    db = str(tmp_path / "s.sqlite")
    assert main(["--batch", "run", "--agent", "oracle", "--limit", "2", "--quiet", "--db", db, "--run", "i"]) == 0
    store = Store(db)
    run_id = store.run("i")["id"]
    for item in ("x1", "x2"):
        store.begin_trajectory(run_id, item, 0, 0, {})  # begun, never finished: what an interrupted run holds
    store.update_run(run_id, status="interrupted")
    done, left = store.conn.execute(
        "SELECT SUM(status = 'done'), SUM(status != 'done') FROM trajectories WHERE run_id = ?", (run_id,)
    ).fetchone()
    store.close()
    assert (done, left) == (2, 2)
    capsys.readouterr()
    assert main(["--batch", "delete", "i", "--yes", "--db", db]) == 0
    assert capsys.readouterr().out == "deleted run 'i' (4 trajectories, 2 of them unfinished, status interrupted)\n"


def test_delete_and_rename_runs(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    base = ["--batch", "run", "--agent", "oracle", "--limit", "2", "--quiet", "--db", db]
    assert main([*base, "--run", "a"]) == 0 and main([*base, "--run", "b"]) == 0
    assert main([*base, "--run", "a", "--budget", "20"]) == 2  # a different configuration under the same name
    assert "--batch rename a NEW" in capsys.readouterr().err
    assert main(["--batch", "rename", "a", "b", "--db", db]) == 2  # taken
    assert "already exists" in capsys.readouterr().err
    assert main(["--batch", "rename", "a", "a-30", "--db", db]) == 0
    assert capsys.readouterr().out == "renamed run 'a' to 'a-30'\n"
    assert main([*base, "--run", "a", "--budget", "20"]) == 0  # the name is free again
    assert main(["--batch", "delete", "b", "--db", db]) == 2  # stdin is not a terminal: --yes is needed
    assert "cannot be undone: add --yes" in capsys.readouterr().err
    assert main(["--batch", "delete", "b", "--yes", "--db", db]) == 0
    assert "deleted run 'b' (2 trajectories" in capsys.readouterr().out
    assert main(["--batch", "runs", "--format", "json", "--db", db]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["a-30", "a"]
    assert main(["--batch", "delete", "b", "--yes", "--db", db]) == 2 and "no run named 'b'" in capsys.readouterr().err
    missing = tmp_path / "none.sqlite"
    assert main(["--batch", "delete", "x", "--yes", "--db", str(missing)]) == 2 and not missing.exists()
    assert main(["--batch", "rename", "x", "y", "--db", str(missing)]) == 2 and not missing.exists()


def test_a_dataset_without_labels_reports_section_recall_as_unmeasured(tmp_path, capsys):
    from tests.conftest import mini_rows, write_release

    root = write_release(tmp_path / "nolabels", *mini_rows())
    (root / "audit/recall_labels.jsonl").unlink()
    db = str(tmp_path / "s.sqlite")
    assert (
        main(
            [
                "--batch",
                "run",
                "--data",
                str(root),
                "--agent",
                "oracle",
                "--run",
                "n",
                "--quiet",
                "--db",
                db,
                "--format",
                "json",
            ]
        )
        == 0
    )
    captured = capsys.readouterr()
    assert "warning: no audit/recall_labels.jsonl: section recall cannot be measured" in captured.err
    assert "recall label(s) no labels file" not in captured.err
    rep = json.loads(captured.out)
    assert rep["axes"]["search"]["paper_recall"]["all"] == 1.0
    assert rep["axes"]["search"]["section_recall"] == {"st": None, "mt": None, "all": None}
    assert rep["counts"]["search"]["section_recall"]["all"] == [0, 0]
    assert main(["--batch", "report", "n", "--db", db]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "section recall" in line)
    assert "—" in row and "0.0%" not in row


def test_run_flags_past_their_bounds_exit_2_and_write_nothing(tmp_path, capsys):
    """A typo such as 999999999999999999999 points used to create the run and fail inside SQLite."""
    import pytest

    db = tmp_path / "s.sqlite"
    for flag, value, message in (
        ("--budget", "999999999999999999999", "--budget: must be at most 100,000"),
        ("--max-turns", "0", "--max-turns: must be at least 1"),
        ("--max-tokens-total", "10000000000", "at most 1,000,000,000"),
        ("--workers", "100000", "--workers: must be at most 256"),
        ("--replicates", "1001", "at most 1,000"),
        ("--seed", str(2**63), "--seed: must be at most"),
        ("--limit", "x", "'x' is not a whole number"),
    ):
        with pytest.raises(SystemExit) as stop:
            main(["--batch", "run", "--agent", "oracle", "--db", str(db), "--quiet", flag, value])
        assert stop.value.code == 2 and message in capsys.readouterr().err, flag
    assert not db.exists()


def test_every_out_that_cannot_be_written_is_a_usage_error(tmp_path, capsys):
    """export (both formats) and audit export: a missing folder, a directory, a file as a folder → exit 2, one
    line naming the path and the reason, nothing left behind (no temporary files either)."""
    db = tmp_path / "s.sqlite"
    assert main(["--batch", "run", "--agent", "oracle", "--run", "o", "--db", str(db), "--quiet", "--limit", "2"]) == 0
    afile = tmp_path / "afile"
    afile.write_text("x")
    outdir = tmp_path / "outs"
    outdir.mkdir()

    def listing() -> list[str]:  # SQLite's own -wal/-shm sidecars come and go with readers: not our output
        return sorted(p.name for p in tmp_path.iterdir() if not p.name.endswith(("-wal", "-shm")))

    before = listing()
    cases = [
        (["export", "o", "--format", fmt, "--out", out], reason)
        for fmt in ("jsonl", "agenthop-summary")
        for out, reason in (
            (str(tmp_path / "missing" / "x.json"), "No such file or directory"),
            (str(outdir), "Is a directory"),
            (str(afile / "x.json"), "Not a directory"),
        )
    ]
    cases += [
        (["audit", "export", "--out", str(afile / "sub")], "Not a directory"),
        (["audit", "export", "--out", "/proc/x"], "No such file or directory"),
    ]
    for args, reason in cases:
        capsys.readouterr()
        assert main(["--batch", *args, "--db", str(db)]) == 2, args
        err = capsys.readouterr().err
        assert err == f"error: cannot write {args[-1]}: {reason}\n", (args, err)
    assert main(["--batch", "audit", "export", "--out", str(afile), "--db", str(db)]) == 2
    assert "exists and is not a directory" in capsys.readouterr().err
    assert listing() == before and list(outdir.iterdir()) == []
    assert afile.read_text() == "x"
    good = tmp_path / "good.jsonl"
    assert main(["--batch", "export", "o", "--format", "jsonl", "--out", str(good), "--db", str(db)]) == 0
    assert len(good.read_text().splitlines()) == 2


def test_llm_flags_are_checked_when_parsed(tmp_path, capsys):
    """Out-of-range sampling settings used to be sent to the provider as they were, on every call."""
    db = tmp_path / "s.sqlite"
    llm = [
        "--batch",
        "run",
        "--agent",
        "llm",
        "--model",
        "openai/x",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--db",
        str(db),
        "--quiet",
    ]
    for flag, value, message in (
        (
            "--reasoning-effort",
            "bogus",
            "--reasoning-effort: invalid choice: 'bogus' (choose from none, minimal, "
            "low, medium, high, or a number of thinking tokens for Anthropic models)",
        ),
        ("--reasoning-effort", "0", "invalid choice: '0'"),
        ("--top-p", "5", "--top-p: must be above 0 and at most 1, got 5"),
        ("--top-p", "0", "--top-p: must be above 0 and at most 1, got 0"),
        ("--temperature", "-1", "--temperature: must be between 0 and 2, got -1"),
        ("--temperature", "nan", "--temperature: must be between 0 and 2, got nan"),
        ("--top-k", "0", "--top-k: must be at least 1"),
        ("--timeout", "0", "--timeout: must be above 0"),
        ("--rpm", "-3", "--rpm: must be above 0"),
        ("--max-run-cost", "-1", "--max-run-cost: must be between 0 and"),
        ("--max-run-cost", "inf", "--max-run-cost: must be between 0 and"),
    ):
        with pytest.raises(SystemExit) as stop:
            main([*llm, flag, value])
        assert stop.value.code == 2 and message in capsys.readouterr().err, (flag, value)
    assert not db.exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agent", "oracle", "--model", "x"], "error: --model applies to --agent llm only"),
        (
            ["--agent", "heuristic", "--text-tools", "--temperature", "3"],
            "argument --temperature: must be between 0 and 2",
        ),
        (
            ["--agent", "heuristic", "--text-tools", "--temperature", "1"],
            "error: --temperature, --text-tools apply to --agent llm only",
        ),
        (
            ["--agent", "random", "--timeout", "30", "--base-url", "http://h/v1"],
            "error: --base-url, --timeout apply to --agent llm only",
        ),
        (
            ["--agent", "oracle", "--ids", ""],
            "error: --ids is empty: name the items (comma-separated), or leave --ids out to run them all",
        ),
        (["--agent", "oracle", "--ids", " , "], "error: --ids is empty"),
    ],
    ids=["model", "temperature-range", "text-tools", "timeout", "ids-empty", "ids-commas"],
)
def test_flags_that_would_be_ignored_are_refused(tmp_path, argv, message, cli):
    db = tmp_path / "s.sqlite"
    proc = cli("run", "--quiet", *argv, db=db)
    assert proc.returncode == 2 and message in proc.stderr, proc.stderr
    assert not db.exists()


def test_an_unset_key_variable_with_a_base_url_is_warned_about(tmp_path, cli, monkeypatch):
    """A local server may need no key, so the run goes on; a misspelt variable must not pass unnoticed."""
    from tests.openai_server import FakeOpenAI, tool_reply

    brain = lambda req, n: tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))  # noqa: E731
    monkeypatch.delenv("NOPE_KEY", raising=False)
    with FakeOpenAI(brain) as srv:
        proc = cli(
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/test-model",
            "--base-url",
            srv.url,
            "--api-key-env",
            "NOPE_KEY",
            "--limit",
            "1",
            "--quiet",
            db=tmp_path / "s.sqlite",
        )
    assert proc.returncode == 0, proc.stderr
    assert (
        f"warning: --api-key-env NOPE_KEY: that variable is not set; the calls to {srv.url} go without a key"
        in proc.stderr.splitlines()
    )


@pytest.mark.parametrize(
    "command",
    [
        ["report", "o"],
        ["report", "o", "--format", "json"],
        ["runs"],
        ["run", "--agent", "oracle", "--run", "o", "--limit", "3", "--quiet"],
        ["compare", "o", "p"],
        ["--help"],
    ],
    ids=["report", "report-json", "runs", "run", "compare", "help"],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path, command, cli):
    """`… | head -1`: stdout's pipe closes before the command writes; it used to exit 1 (rich's SystemExit)."""
    import os

    db = tmp_path / "s.sqlite"
    for name in ("o", "p") if command[0] == "compare" else ("o",):  # compare needs two runs
        assert cli("run", "--agent", "oracle", "--run", name, "--limit", "3", "--quiet", db=db).returncode == 0
    read, write = os.pipe()
    os.close(read)  # every write to stdout now fails with EPIPE
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "--batch", *command, "--db", str(db)],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
        )
    finally:
        os.close(write)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr


def test_declining_delete_on_a_terminal_is_no_error(tmp_path, cli):
    """Answering no keeps the run: a choice, not a failure (it printed "error: … kept" with exit 2)."""
    import os
    import pty

    db = tmp_path / "s.sqlite"
    assert cli("run", "--agent", "oracle", "--run", "keep", "--limit", "2", "--quiet", db=db).returncode == 0
    primary, secondary = pty.openpty()
    try:
        os.write(primary, b"n\n")
        proc = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "--batch", "delete", "keep", "--db", str(db)],
            stdin=secondary,
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        os.close(primary)
        os.close(secondary)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "kept run 'keep' (2 trajectories, status done)\n"
    assert "error" not in proc.stderr and "delete run 'keep'" in proc.stderr
    assert json.loads(cli("runs", "--format", "json", db=db).stdout)[0]["name"] == "keep"


def test_dry_run_of_a_scripted_agent_costs_nothing_and_counts_what_is_left(tmp_path, cli):
    db = tmp_path / "s.sqlite"
    assert cli("run", "--agent", "oracle", "--run", "part", "--limit", "5", "--quiet", db=db).returncode == 0
    dry = cli("run", "--agent", "oracle", "--run", "part", "--limit", "8", "--replicates", "2", "--dry-run", db=db)
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert lines[0] == (
        "dry run 'part': 8 items × 2 replicate(s) = 16 episodes, 5 already done in the stored run: 11 to play"
    )
    assert lines[-1] == "estimate: no tokens, no cost ('oracle' is scripted: it calls no model)"
    est = json.loads(
        cli("run", "--agent", "oracle", "--run", "part", "--limit", "8", "--dry-run", "--format", "json", db=db).stdout
    )
    assert (est["episodes"], est["already_done"], est["tokens_per_episode"], est["cost_usd"]) == (3, 5, 0, 0.0)
    llm = cli("run", "--agent", "llm", "--model", "openai/gpt-4.1", "--run", "new", "--limit", "2", "--dry-run", db=db)
    assert llm.returncode == 0, llm.stderr
    assert (
        llm.stdout.count("90,000") == 1 and "(an assumption: no earlier run of this model in the store)" in llm.stdout
    )


def test_dry_run_counts_the_extra_tools_in_every_calls_prompt(tmp_path, cli):
    """The general-agent setting's tool block and schemas ride in each call: the estimate grows by them × calls."""
    db = tmp_path / "s.sqlite"
    base = (
        "run",
        "--agent",
        "llm",
        "--model",
        "openai/gpt-4.1",
        "--run",
        "g",
        "--limit",
        "2",
        "--dry-run",
        "--format",
        "json",
    )
    plain = json.loads(cli(*base, db=db).stdout)
    extra = json.loads(cli(*base, "--extra-tools", "builtin", "--extra-tools-count", "8", db=db).stdout)
    per_call = extra["extra_tools_tokens_per_call"]
    assert plain["extra_tools_tokens_per_call"] == 0 and per_call > 0
    assert extra["tokens_per_episode"] - plain["tokens_per_episode"] == per_call * 10
