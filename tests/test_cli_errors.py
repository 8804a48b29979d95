"""A mistake on the command line reads as one line first: argparse's error, then a one-line hint, exit 2."""

from __future__ import annotations

import pytest

from workbench.cli import main


@pytest.mark.parametrize(
    "argv, first",
    [
        (["--batch", "run", "--run", ""], "error: argument --run: a run needs a name"),
        (["--batch", "run", "--run", "   "], "error: argument --run: a run needs a name"),
        (["--batch", "run", "--workers", "x"], "error: argument --workers: 'x' is not a whole number"),
        (["--batch", "run", "--bogus"], "error: unrecognized arguments: --bogus"),
        (["--batch", "nosuchcommand"], "error: argument COMMAND: invalid choice: 'nosuchcommand'"),
        (["--themes"], "error: unrecognized arguments: --themes"),
    ],
)
def test_the_error_comes_first_and_alone(argv, first, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AGENTHOP_DB", str(tmp_path / "s.sqlite"))
    with pytest.raises(SystemExit) as stop:
        main(argv)
    err = capsys.readouterr().err.splitlines()
    assert stop.value.code == 2
    assert err[0].startswith(first) and len(err) == 2 and err[1].endswith("--help lists the options)")
    assert not (tmp_path / "s.sqlite").exists()  # an empty name never creates (and names) a run
