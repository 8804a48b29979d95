"""Slips a newcomer meets in the first hour at the command line (issue 26): one word for an unpriced cost,
tables without trailing spaces, and a store created only where a directory exists."""

from __future__ import annotations

import pytest

from tests.cli_inprocess import batch
from tests.openai_server import FakeOpenAI, tool_reply


def _answer(req, n):
    return tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))


def test_runs_says_what_the_tui_says_for_an_unpriced_run_and_pipes_no_trailing_spaces(tmp_path, capsys, monkeypatch):
    """`runs` said "unpriced" where the TUI said "—" (the TUI now says "unpriced" too: tests/tui/test_newcomer.py);
    its piped table padded every line with spaces."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "s.sqlite"
    with FakeOpenAI(_answer) as srv:
        done = batch(
            capsys,
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/no-price-m",
            "--base-url",
            srv.url,
            "--limit",
            "1",
            "--workers",
            "1",
            "--run",
            "u",
            "--db",
            str(db),
            "--quiet",
        )
    assert done.returncode == 0, done.stderr
    assert (
        batch(
            capsys, "run", "--agent", "heuristic", "--limit", "1", "--run", "h", "--db", str(db), "--quiet"
        ).returncode
        == 0
    )
    listed = batch(capsys, "runs", "--db", str(db))
    assert listed.returncode == 0
    row = next(line for line in listed.stdout.splitlines() if line.lstrip("│ ").startswith("u "))
    scripted = next(line for line in listed.stdout.splitlines() if line.lstrip("│ ").startswith("h "))
    assert "unpriced" in row and "—" in scripted and "unpriced" not in scripted
    assert not [line for line in listed.stdout.splitlines() if line != line.rstrip()]
    report = batch(capsys, "report", "h", "--db", str(db))
    assert report.returncode == 0 and not [line for line in report.stdout.splitlines() if line != line.rstrip()]


@pytest.mark.parametrize(
    "command",
    [
        ("run", "--agent", "heuristic", "--limit", "1"),
        ("scale", "sequential", "--axis", "points", "--grid", "5,10", "--limit", "1", "--run", "g"),
    ],
)
def test_a_store_in_a_directory_that_does_not_exist_is_refused(tmp_path, capsys, command):
    """`run --db /typo/dir/x.sqlite` made the directories and a store, where `report --db` said "no store"."""
    missing = tmp_path / "typo" / "dir"
    proc = batch(capsys, *command, "--db", str(missing / "x.sqlite"), "--quiet")
    assert proc.returncode == 2 and str(missing) in proc.stderr and "no directory" in proc.stderr, proc.stderr
    assert not (tmp_path / "typo").exists()
    fine = batch(capsys, "run", "--agent", "heuristic", "--limit", "1", "--db", str(tmp_path / "x.sqlite"), "--quiet")
    assert fine.returncode == 0 and (tmp_path / "x.sqlite").exists()  # an existing directory gets its store


def test_every_option_of_every_command_says_what_it_is_for(capsys):
    """`--help` listed --db, --format and every `synth` option without a word."""
    import argparse

    from workbench.cli.parser import build_parser

    def bare(parser, command=""):
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from bare(sub, f"{command} {name}".strip())
            elif action.option_strings and not (action.help or "").strip():
                yield f"{command} {action.option_strings[-1]}"

    assert list(bare(build_parser())) == []

    def helps(parser):
        yield parser.format_help()  # every help string formats (a stray % would raise here)
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    yield from helps(sub)

    assert all("%(" not in text for text in helps(build_parser()))
    synth_help = batch(capsys, "synth", "--help").stdout
    assert "the generator's seed" in synth_help and "papers with full text" in synth_help


def test_the_reports_title_and_terminations_take_one_line_each(tmp_path, capsys):
    """The title and terminations line were the table's title and caption, wrapped to its width (~80 cells)."""
    name = "heuristic-builtin-full-points-30-turns-20-seed-0-first-sweep"
    db = tmp_path / "s.sqlite"
    assert (
        batch(
            capsys, "run", "--agent", "heuristic", "--limit", "6", "--run", name, "--db", str(db), "--quiet"
        ).returncode
        == 0
    )
    for brief in ((), ("--ci",)):
        out = batch(capsys, "report", name, *brief, "--db", str(db)).stdout.splitlines()
        assert any(line.startswith(f"{name} · heuristic · builtin · n=6") for line in out), out[:3]
        ends = next(line for line in out if line.startswith("terminations:"))
        assert ends.rstrip().endswith("error 0") or "cost" in ends
