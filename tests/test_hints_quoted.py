"""A hint that suggests a command naming a run quotes the name as a shell needs it, so it can be pasted as printed:
`agenthop-tui --batch report bad name/with slash` ran a report of a run named `bad`."""

from __future__ import annotations

import shlex

from hypothesis import given
from hypothesis import strategies as st

from tests.cli_inprocess import batch
from workbench.views.cells import shell_word
from workbench.views.scaling import verdicts_note

NAME = "bad name/with slash"


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=30))
def test_a_quoted_word_reads_back_as_one_argument(text):
    assert shlex.split(f"report {shell_word(text)} --db x") == ["report", text, "--db", "x"]


def test_a_plain_name_stays_as_typed():
    assert shell_word("heur-s0") == "heur-s0" and shell_word("seqt@16k") == "seqt@16k"


def test_the_hints_after_a_run_and_on_a_name_taken_quote_the_name(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    run = ("run", "--agent", "heuristic", "--limit", "2", "--run", NAME, "--db", db)
    done = batch(capsys, *run)
    assert done.returncode == 0, done.stderr
    hint = next(line for line in done.stdout.splitlines() if "agenthop-tui --batch report" in line)
    command = hint.split(": ", 1)[1]
    assert shlex.split(command) == ["agenthop-tui", "--batch", "report", NAME]
    taken = batch(capsys, *run[:4], "3", *run[5:], "--seed", "4")  # the same name, another configuration
    assert taken.returncode == 2
    assert f"--batch rename '{NAME}' NEW" in taken.stderr and f"--batch delete '{NAME}'" in taken.stderr


def test_the_scaling_verdicts_hint_quotes_the_run():
    note = verdicts_note({"verdicts": "stored", "verdicts_missing": 3, "judge": "evidence", "run": NAME})
    command = note.split("`")[1]
    assert shlex.split(command)[:3] == ["scale", "parallel", "--run"] and shlex.split(command)[3] == NAME
