"""The CLI and the TUI agree: the flags every command shares go before or after the command, and the same
bounds apply to the same kind of value wherever it is typed."""
from __future__ import annotations

import json

import pytest

from workbench.cli import main


@pytest.fixture
def store(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    assert main(["--batch", "run", "--agent", "oracle", "--run", "o1", "--db", str(db), "--quiet", "--limit", "2"]) == 0
    capsys.readouterr()
    return db


@pytest.mark.parametrize("argv", [
    ["--db", "{db}", "--batch", "runs", "--format", "json"],
    ["--db={db}", "--format", "json", "--batch", "runs"],
    ["--batch", "--db", "{db}", "--format", "json", "runs"],
    ["--batch", "runs", "--db", "{db}", "--format", "json"],
])
def test_common_options_before_or_after_the_command(store, capsys, argv):
    assert main([a.format(db=store) for a in argv]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["o1"]


def test_a_format_the_command_does_not_offer_is_still_refused_before_it(store, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--batch", "--format", "csv", "runs", "--db", str(store)])
    assert exc.value.code == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["synth", "--out", "{tmp}/bench", "--seed", "-5"], "--seed: must be at least 0"),
    (["run", "--agent", "oracle", "--seed", "-5", "--db", "{tmp}/s.db"], "--seed: must be at least 0"),
    (["scale", "plateau", "--scores", "{tmp}/scores.json", "--alpha", "5"], "--alpha: must be above 0 and at most 0.5"),
    (["scale", "plateau", "--scores", "{tmp}/scores.json", "--boot-seed", "-1"], "--boot-seed: must be at least 0"),
])
def test_the_same_kind_of_number_has_the_same_bounds_everywhere(tmp_path, capsys, argv, message):
    (tmp_path / "scores.json").write_text(json.dumps({"8k": {"a": 0, "b": 1}, "16k": {"a": 1, "b": 1}}))
    with pytest.raises(SystemExit) as exc:
        main(["--batch", *[a.format(tmp=tmp_path) for a in argv]])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "scores.json" not in err.splitlines()[-1]
    assert not (tmp_path / "bench").exists() and not (tmp_path / "s.db").exists()
