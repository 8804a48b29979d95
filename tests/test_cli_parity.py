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


@pytest.mark.parametrize(
    "argv",
    [
        ["--db", "{db}", "--batch", "runs", "--format", "json"],
        ["--db={db}", "--format", "json", "--batch", "runs"],
        ["--batch", "--db", "{db}", "--format", "json", "runs"],
        ["--batch", "runs", "--db", "{db}", "--format", "json"],
    ],
)
def test_common_options_before_or_after_the_command(store, capsys, argv):
    assert main([a.format(db=store) for a in argv]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)] == ["o1"]


def test_a_format_the_command_does_not_offer_is_still_refused_before_it(store, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--batch", "--format", "csv", "runs", "--db", str(store)])
    assert exc.value.code == 2
    assert "invalid choice: 'csv'" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        (["synth", "--out", "{tmp}/bench", "--seed", "-5"], "--seed: must be at least 0"),
        (["run", "--agent", "oracle", "--seed", "-5", "--db", "{tmp}/s.db"], "--seed: must be at least 0"),
        (
            ["scale", "plateau", "--scores", "{tmp}/scores.json", "--alpha", "5"],
            "--alpha: must be above 0 and at most 0.5",
        ),
        (["scale", "plateau", "--scores", "{tmp}/scores.json", "--boot-seed", "-1"], "--boot-seed: must be at least 0"),
    ],
)
def test_the_same_kind_of_number_has_the_same_bounds_everywhere(tmp_path, capsys, argv, message):
    (tmp_path / "scores.json").write_text(json.dumps({"8k": {"a": 0, "b": 1}, "16k": {"a": 1, "b": 1}}))
    with pytest.raises(SystemExit) as exc:
        main(["--batch", *[a.format(tmp=tmp_path) for a in argv]])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and message in err and "scores.json" not in err.splitlines()[-1]
    assert not (tmp_path / "bench").exists() and not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(
    "name, message",
    [
        ("", "a run needs a name"),
        ("   ", "a run needs a name"),
        ("x" * 300, "at most 80 characters"),
        ("two\nlines", "printable characters only"),
    ],
)
def test_a_run_name_the_launch_form_refuses_is_refused_by_the_cli(tmp_path, capsys, name, message):
    from workbench.tui.forms.launch import validate
    from workbench.tui.forms.launch_fields import LaunchFields

    db = tmp_path / "s.db"
    with pytest.raises(SystemExit) as exc:
        main(["--batch", "run", "--agent", "oracle", "--run", name, "--db", str(db)])
    assert exc.value.code == 2 and message in capsys.readouterr().err and not db.exists()
    form = "a run name is needed" if not name.strip() else message
    assert validate(LaunchFields(name=name), set(), llm_ok=True).errors["name"] == f"name: {form}"


@pytest.mark.parametrize(
    "agent, model, ablation, seed, expected",
    [
        ("heuristic", "", "full", 0, "heuristic-builtin"),
        ("random", "", "no-search", 3, "random-builtin-no-search-seed3"),
        ("llm", "openai/gpt-4.1", "full", 7, "openai_gpt-4.1-builtin-seed7"),
    ],
)
def test_the_default_name_is_the_same_in_the_cli_and_the_form(tmp_path, capsys, agent, model, ablation, seed, expected):
    from workbench.tui.forms.launch import default_name

    assert default_name(agent, "builtin", "", set(), model, ablation, seed) == expected
    if agent != "llm":  # the CLI path runs it for real (an LLM would need a server)
        db = tmp_path / "s.db"
        assert (
            main(
                [
                    "--batch",
                    "run",
                    "--agent",
                    agent,
                    "--ablation",
                    ablation,
                    "--seed",
                    str(seed),
                    "--limit",
                    "1",
                    "--quiet",
                    "--db",
                    str(db),
                ]
            )
            == 0
        )
        capsys.readouterr()
        assert main(["--batch", "runs", "--format", "json", "--db", str(db)]) == 0
        assert [r["name"] for r in json.loads(capsys.readouterr().out)] == [expected]


def test_an_llm_run_from_the_form_records_the_config_files_pricing_as_the_cli_does(tmp_path, monkeypatch):
    """A run costs the same wherever it was started: the form reads `[[pricing]]` as `--batch run` does."""
    from workbench.cli.parser import build_parser
    from workbench.cli.run import build_spec
    from workbench.tui.forms.launch import LaunchForm
    from workbench.tui.forms.launch_fields import LaunchFields

    config = tmp_path / "config.toml"
    config.write_text('# mine\n[[pricing]]\nprefix = "test-model"\ninput_per_m = 1.5\noutput_per_m = 6.0\n')
    monkeypatch.setenv("AGENTHOP_CONFIG", str(config))
    args = build_parser().parse_args(["run", "--agent", "llm", "--model", "openai/test-model", "--dry-run"])
    cli_options = build_spec(args)[1].agent_options
    spec = LaunchForm(set(), LaunchFields(agent="llm", model="openai/test-model"), llm_ok=True).check().spec
    assert spec is not None
    assert (
        spec.agent_options["pricing"]
        == cli_options["pricing"]
        == [{"prefix": "test-model", "input_per_m": 1.5, "output_per_m": 6.0}]
    )


def test_every_command_closes_the_stores_it_opens(tmp_path, capsys):
    """In-process `main` (the TUI's jobs, the tests) leaves no store open: a copy of the database file alone holds
    every commit. An open connection kept recent commits in the WAL, and a copy of the file lost them."""
    import shutil

    from storage import Store

    db = tmp_path / "s.sqlite"
    assert main(["--batch", "run", "--agent", "random", "--run", "r", "--db", str(db), "--quiet", "--limit", "6"]) == 0
    assert main(["--batch", "report", "r", "--db", str(db), "--format", "json"]) == 0
    capsys.readouterr()
    assert not db.with_name("s.sqlite-wal").exists() or db.with_name("s.sqlite-wal").stat().st_size == 0
    copy = tmp_path / "copy.sqlite"
    shutil.copy(db, copy)
    with Store(copy, readonly=True) as store:
        assert len(store.trajectories(store.run("r")["id"])) == 6


@pytest.mark.parametrize("argv", [["--version"], ["--batch", "--version"]])
def test_version_from_either_front_end(capsys, argv):
    from importlib.metadata import version

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 0 and capsys.readouterr().out == f"agenthop-workbench {version('agenthop-workbench')}\n"


def test_a_users_mistake_is_known_by_the_exit_code_its_class_carries(tmp_path, capsys):
    """No table of error names: the dataset's, the store's, the slice's errors each carry exit code 2."""
    from sandbox.release import DatasetError
    from sandbox.runner import InvalidSlice
    from storage import StoreError
    from workbench.cli.errors import ExitCode, UsageError, user_exit_code

    for cls in (DatasetError, InvalidSlice, StoreError, UsageError):
        assert cls.exit_code == ExitCode.USAGE
    assert user_exit_code(KeyError("x")) is None and user_exit_code(UsageError("x")) == 2
    assert main(["--batch", "report", "x", "--db", str(tmp_path / "none.sqlite")]) == ExitCode.USAGE
    assert capsys.readouterr().err.startswith("error: no store at")
