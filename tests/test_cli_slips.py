"""Slips a newcomer met at the command line (issue 44): help that says `(default: None)` or hides a format, a
shard numbering left unsaid, a broken config file passed over in silence, a run compared with itself, Python's
exception names in messages, and `--model` without `--agent llm`."""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import pytest

from tests.cli_inprocess import batch
from workbench.cli.parser import build_parser

DOCS = Path(__file__).parents[1] / "docs"


def _helps(parser: argparse.ArgumentParser, command: str = ""):
    """(command, its --help text) for every command and subcommand."""
    yield command, " ".join(parser.format_help().split())
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _helps(sub, f"{command} {name}".strip())


def test_no_help_says_default_none():
    """`export --help` said `(default: None)` of a required flag (and `scale sequential` of the swept caps)."""
    said = [command for command, text in _helps(build_parser()) if "(default: None)" in text]
    assert said == []


def test_the_commands_list_names_every_export_format():
    top = dict(_helps(build_parser()))[""]
    assert "export a run as the reference's summary.json, as JSON Lines, or as an Inspect AI log" in top, top


def test_the_export_format_is_said_to_be_required_with_what_each_writes():
    text = dict(_helps(build_parser()))["export"]
    assert "what to write (required)" in text and "an Inspect AI log" in text


def test_shards_are_said_to_count_from_1(capsys):
    text = dict(_helps(build_parser()))["run"]
    assert "counted from 1 (1/4 … 4/4" in text
    r = batch(capsys, "run", "--shard", "0/4")
    assert r.returncode == 2 and "counted from 1" in r.stderr, r.stderr
    page = " ".join((DOCS / "campaigns.md").read_text(encoding="utf-8").split())
    assert "Shards are counted from 1" in page


# ---------------------------------------------------------------- --model without --agent (item 19)


@pytest.mark.parametrize("model", ["openai/test-model", "local/smollm2"])
def test_a_model_implies_the_llm_agent(capsys, model):
    r = batch(capsys, "run", "--model", model, "--dry-run", "--limit", "1", "--format", "json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert (plan["agent"], plan["model"]) == ("llm", model)


def test_no_model_is_the_heuristic_and_a_model_for_a_scripted_agent_is_still_refused(capsys):
    r = batch(capsys, "run", "--dry-run", "--limit", "1", "--format", "json")
    assert r.returncode == 0 and json.loads(r.stdout)["agent"] == "heuristic", r.stderr
    r = batch(capsys, "run", "--agent", "heuristic", "--model", "openai/test-model", "--dry-run")
    assert r.returncode == 2 and "--model applies to --agent llm only" in r.stderr


def test_the_agents_page_shows_whole_model_lines_and_how_to_raise_a_local_models_timeout():
    page = (DOCS / "agents.md").read_text(encoding="utf-8")
    lines = [line for line in page.splitlines() if line.startswith("agenthop-tui --batch run --model ")]
    assert any("local/smollm2" in line for line in lines) and len(lines) >= 3
    assert "agenthop-tui --batch run --model local/smollm2 --max-tokens 4000 --timeout 3600" in " ".join(page.split())


# ---------------------------------------------------------------- a broken config file (item 7)


@pytest.fixture
def broken_config(tmp_path, monkeypatch) -> Path:
    path = tmp_path / "config.toml"
    path.write_text("[ui\ntheme = 'x'\n", encoding="utf-8")
    monkeypatch.setenv("AGENTHOP_CONFIG", str(path))
    return path


def test_a_broken_config_file_is_one_warning_line_where_it_does_not_matter(capsys, broken_config):
    r = batch(capsys, "items", "--format", "json")
    assert r.returncode == 0, r.stderr
    warnings = [line for line in r.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and str(broken_config) in warnings[0] and "not valid TOML" in warnings[0], r.stderr
    assert "line 1" in warnings[0]


def test_a_broken_config_file_refuses_an_llm_run_whose_prices_it_holds(capsys, broken_config):
    r = batch(capsys, "run", "--model", "openai/test-model", "--dry-run", "--limit", "1")
    assert r.returncode == 2 and "warning:" not in r.stderr
    assert str(broken_config) in r.stderr and "not valid TOML" in r.stderr, r.stderr


# ---------------------------------------------------------------- a run compared with itself (item 8)


def test_compare_refuses_a_run_compared_with_itself(capsys):
    assert batch(capsys, "run", "--limit", "2", "--run", "a", "--quiet").returncode == 0
    r = batch(capsys, "compare", "a", "a")
    assert r.returncode == 2 and "two different runs" in r.stderr and r.stdout == "", r.stderr


# ---------------------------------------------------------------- Python's exception names in messages (item 9)


def _said_in_words(stderr: str) -> bool:
    """One line, and none of Python's own vocabulary: `FileNotFoundError:`, `[Errno 2]`, `ValueError:`."""
    return len(stderr.strip().splitlines()) == 1 and not re.search(r"\w+Error\b|\[Errno", stderr)


def test_files_that_cannot_be_read_are_said_in_words(capsys, tmp_path):
    (tmp_path / "junk.eval").write_text("hi", encoding="utf-8")
    (tmp_path / "junk.json").write_text("{}", encoding="utf-8")
    (tmp_path / "folder.json").mkdir()
    cases = {
        ("run", "--prompts", str(tmp_path / "none.toml"), "--dry-run"): "none.toml: no such file",
        (
            "run",
            "--prompts",
            str(tmp_path / "folder.json"),
            "--dry-run",
        ): "cannot read the prompts file (is a directory)",
        ("run", "--extra-tools", str(tmp_path / "folder.json"), "--dry-run"): "cannot be read (is a directory)",
        ("import-inspect", str(tmp_path / "junk.eval"), "--run", "x"): "junk.eval: not an Inspect log (.eval or .json)",
        ("import-inspect", str(tmp_path / "junk.json"), "--run", "x"): "junk.json: not an Inspect log (.eval or .json)",
    }
    for args, words in cases.items():
        r = batch(capsys, *args)
        assert r.returncode == 2 and words in r.stderr and _said_in_words(r.stderr), (args, r.stderr)


# ---------------------------------------------------------------- report --ci (item 11)


def test_the_report_puts_each_interval_in_its_own_column_within_120_columns(capsys, monkeypatch):
    """The intervals filled the `all` column (a 170-character table with empty ST/MT cells), the first row had no
    axis, and the table said "resource" where the README says "resources"."""
    monkeypatch.setenv("COLUMNS", "200")  # room to spare: the table's own width is measured
    assert batch(capsys, "run", "--limit", "10", "--run", "h", "--quiet").returncode == 0
    r = batch(capsys, "report", "h", "--ci")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    table = lines[1 : next(i for i, line in enumerate(lines) if line.startswith("└")) + 1]
    assert max(len(line) for line in table) <= 120
    rows = [[cell.strip() for cell in line.split("│")[1:-1]] for line in table if line.startswith("│")]
    assert rows[0][:2] == ["outcome", "accuracy"]
    assert any(row[0] == "resources" for row in rows) and not any(row[0] == "resource" for row in rows)
    paper = next(row for row in rows if row[:2] == ["95% Wilson", "paper recall"])
    assert all(re.fullmatch(r"\d+\.\d% – \d+\.\d% \(n=\d+\)", cell) for cell in paper[2:]), paper
