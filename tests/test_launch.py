"""One launch service for both front ends: the same choices make the same RunSpec from `--batch run` and from the
TUI's launch form, the same problems are refused in the same words, and no other front-end path builds a RunSpec."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from workbench.cli import main
from workbench.cli.parser import build_parser
from workbench.cli.run import build_spec
from workbench.service.launch import LaunchError, LaunchRequest, run_spec

ROOT = Path(__file__).resolve().parents[1]
PRICING = '[[pricing]]\nprefix = "test-model"\ninput_per_m = 1.5\noutput_per_m = 6.0\n'

# The flag and the form field (its id, the label its messages use) of each choice
FLAG = {
    "agent": "--agent",
    "model": "--model",
    "base_url": "--base-url",
    "client": "--client",
    "ablation": "--ablation",
    "budget": "--budget",
    "max_turns": "--max-turns",
    "max_tokens": "--max-tokens-total",
    "limit": "--limit",
    "ids": "--ids",
    "question_type": "--question-type",
    "depth": "--depth",
    "workers": "--workers",
    "replicates": "--replicates",
    "seed": "--seed",
    "name": "--run",
    "local_threads": "--local-threads",
}


@pytest.fixture(autouse=True)
def config(tmp_path, monkeypatch):
    """A config file with a `[[pricing]]` entry: both front ends must record it in an LLM run."""
    path = tmp_path / "config.toml"
    path.write_text("# mine\n" + PRICING)
    monkeypatch.setenv("AGENTHOP_CONFIG", str(path))
    return path


def cli_spec(choices: dict[str, str], data: str, extra: tuple[str, ...] = ()):
    argv = ["run", "--data", data, "--dry-run", *extra]
    for key, value in choices.items():
        argv += [FLAG[key], value]
    return build_spec(build_parser().parse_args(argv))[1]


def form_spec(choices: dict[str, str], data: str, options: dict | None = None):
    """The RunSpec the launch form starts for the same choices, its name filled in as the form fills it."""
    from workbench.tui.forms.launch import LaunchForm
    from workbench.tui.forms.launch_fields import LaunchFields

    fields = (
        LaunchFields(**choices, dataset_kind="builtin")
        if data == "builtin"
        else LaunchFields(**choices, dataset_kind="release", path=data)
    )
    result = LaunchForm(set(), fields, options, llm_ok=True).check()
    assert result.errors == {}
    return result.spec


LLM = {"agent": "llm", "model": "openai/test-model", "workers": "3"}
COMBINATIONS = {
    "scripted, defaults": ({"agent": "heuristic", "workers": "4"}, (), None),
    "scripted, named, slice": (
        {
            "agent": "oracle",
            "name": "mine",
            "question_type": "multi-target",
            "depth": "2",
            "limit": "5",
            "workers": "2",
        },
        (),
        None,
    ),
    "ids": ({"agent": "random", "ids": "st_0001,mt_0002", "seed": "3", "workers": "4"}, (), None),
    "ablation, caps, replicates": (
        {
            "agent": "random",
            "ablation": "no-search",
            "budget": "12",
            "max_turns": "9",
            "max_tokens": "50000",
            "replicates": "3",
            "seed": "7",
            "workers": "4",
        },
        (),
        None,
    ),
    "llm": (LLM, (), None),
    "llm, base URL, client": (
        {**LLM, "base_url": "http://127.0.0.1:9/v1", "client": "native", "name": "local"},
        (),
        None,
    ),
    "llm, temperature (relaunched)": (
        {**LLM, "client": "litellm"},
        ("--temperature", "0.3"),
        {"temperature": 0.3, "text_tools": False},
    ),
    "llm, gold-given, slice": ({**LLM, "ablation": "gold-given", "limit": "4", "replicates": "2"}, (), None),
    "local model, threads": (
        {"agent": "llm", "model": "local/smollm2", "local_threads": "2", "workers": "1"},
        (),
        None,
    ),
    "local model, text tools off": (
        {"agent": "llm", "model": "local/smollm2", "workers": "1"},
        ("--no-text-tools",),
        {"text_tools": False, "max_tokens": 256},
    ),
}


@pytest.mark.parametrize("data", ["builtin", "release"])
@pytest.mark.parametrize("combination", list(COMBINATIONS))
def test_the_cli_and_the_form_build_the_same_runspec(combination, data, demo_dir):
    choices, extra_flags, relaunched = COMBINATIONS[combination]
    data = "builtin" if data == "builtin" else str(demo_dir)
    cli, form = cli_spec(choices, data, extra_flags), form_spec(choices, data, relaunched)
    differ = {
        f.name: (getattr(cli, f.name), getattr(form, f.name))
        for f in dataclasses.fields(cli)
        if getattr(cli, f.name) != getattr(form, f.name)
    }
    assert differ == {}
    if choices["agent"] == "llm":
        assert cli.agent_options["pricing"] == [{"prefix": "test-model", "input_per_m": 1.5, "output_per_m": 6.0}]


def test_a_local_model_runs_with_its_own_defaults_unless_the_user_set_them():
    """`local/smollm2` writes its calls as text: a new run records text tools on (it recorded off, and sent native
    schemas, whatever the README said); the user's choice wins; other models keep text tools off."""
    local = run_spec(LaunchRequest(agent="llm", model="local/smollm2")).agent_options
    assert local["text_tools"] is True and local["max_tokens"] == 256 and "local_threads" not in local
    chosen = run_spec(
        LaunchRequest(agent="llm", model="local/smollm2", text_tools=False, max_tokens=512, local_threads=3)
    ).agent_options
    assert chosen["text_tools"] is False and chosen["max_tokens"] == 512 and chosen["local_threads"] == 3
    assert run_spec(LaunchRequest(agent="llm", model="openai/m")).agent_options["text_tools"] is False
    args = build_parser().parse_args(["run", "--agent", "llm", "--model", "local/smollm2"])
    assert args.text_tools is None and args.local_threads is None
    spec = run_spec(LaunchRequest(agent="llm", model="local/smollm2", local_threads=2))
    assert "local_threads" not in spec.identity("f")["agent_options"]  # how the server runs, not what the run is
    with pytest.raises(LaunchError) as refused:
        run_spec(LaunchRequest(agent="llm", model="openai/m", local_threads=2))
    assert refused.value.problems == {
        "local_threads": "local_threads: applies to local/ models only (their server runs on this machine)"
    }


def test_a_relaunched_run_keeps_its_recorded_options():
    """A run started before the form recorded text_tools is relaunched with the options it has, or the store would
    refuse to resume it (its identity compares them)."""
    from workbench.tui.forms.launch import validate
    from workbench.tui.forms.launch_fields import LaunchFields

    values = LaunchFields(agent="llm", model="openai/m", name="x")
    new = validate(values, set(), llm_ok=True).spec
    old = validate(values, set(), llm_ok=True, options={"temperature": 0.5}).spec
    assert new.agent_options["text_tools"] is False
    assert "text_tools" not in old.agent_options and old.agent_options["temperature"] == 0.5


def cli_refusal(tmp_path, capsys, argv: list[str]) -> list[str]:
    """The CLI's error lines for `run` with `argv`; the store is not created."""
    db = tmp_path / "s.db"
    try:
        code = main(["--batch", "run", "--db", str(db), "--quiet", *argv])
    except SystemExit as exc:
        code = exc.code
    assert code == 2 and not db.exists()
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]


# (CLI flags, form values, the form field, the problem both say)
REFUSALS = {
    "model missing": (
        ["--agent", "llm"],
        {"agent": "llm", "model": ""},
        "model",
        "a model is needed for the llm agent (a litellm model string such as openai/gpt-4.1)",
    ),
    "base URL": (
        ["--agent", "llm", "--model", "openai/x", "--base-url", "ftp://h/v1"],
        {"agent": "llm", "model": "openai/x", "base_url": "ftp://h/v1"},
        "base_url",
        "must start with http:// or https://",
    ),
    "name too long": (["--run", "x" * 81], {"name": "x" * 81}, "name", "at most 80 characters"),
    "name unprintable": (["--run", "a\tb"], {"name": "a\tb"}, "name", "printable characters only"),
    "points": (["--budget", "0"], {"budget": "0"}, "budget", "must be at least 1"),
    "workers": (["--workers", "300"], {"workers": "300"}, "workers", "must be at most 256"),
    "seed": (["--seed", str(2**63)], {"seed": str(2**63)}, "seed", f"must be at most {2**63 - 1:,}"),
}
CLI_NAME = {
    "budget": "--budget",
    "workers": "--workers",
    "seed": "--seed",
    "name": "--run",
    "model": "--model",
    "base_url": "--base-url",
}
FORM_LABEL = {
    "budget": "points",
    "workers": "workers",
    "seed": "seed",
    "name": "name",
    "model": "model",
    "base_url": "base URL",
}


@pytest.mark.parametrize("case", list(REFUSALS))
def test_each_refusal_has_the_same_words_in_both_front_ends(tmp_path, capsys, case):
    """Each front end names the field its own way (`--budget`, "points"); what is wrong reads the same."""
    from workbench.tui.forms.launch import validate
    from workbench.tui.forms.launch_fields import LaunchFields

    argv, values, field, problem = REFUSALS[case]
    lines = cli_refusal(tmp_path, capsys, ["--agent", "oracle", *argv] if "--agent" not in argv else argv)
    assert any(line.endswith(f"{CLI_NAME[field]}: {problem}") for line in lines), lines
    errors = validate(LaunchFields(**{"name": "x", **values}), set(), llm_ok=True).errors
    assert errors[field] == f"{FORM_LABEL[field]}: {problem}"


def test_a_broken_config_file_refuses_an_llm_run_in_both(tmp_path, capsys, config):
    """An LLM run from either front end would otherwise cost differently: the CLI refused it, the form ignored the
    file."""
    from workbench.tui.forms.launch import validate
    from workbench.tui.forms.launch_fields import LaunchFields

    config.write_text("[[pricing]\n")
    lines = cli_refusal(tmp_path, capsys, ["--agent", "llm", "--model", "openai/x"])
    form = validate(LaunchFields(agent="llm", model="openai/x", name="x"), set(), llm_ok=True).errors
    assert lines == [f"error: {form['pricing']}"] and str(config) in form["pricing"]
    scripted = LaunchFields(agent="oracle", name="x")
    assert validate(scripted, set(), llm_ok=True).errors == {}  # a scripted run reads no price


def test_every_problem_at_once(tmp_path, capsys):
    """One error carries every problem: the form marks each field, the CLI prints one line each."""
    with pytest.raises(LaunchError) as exc:
        run_spec(
            LaunchRequest(
                agent="llm", base_url="h:9", client="curl", budget=0, name=" ", ablation="x", depth=3, temperature=7.0
            )
        )
    assert exc.value.problems == {
        "name": "name: a run name is needed",
        "model": "model: a model is needed for the llm agent (a litellm model string such as openai/gpt-4.1)",
        "base_url": "base_url: must start with http:// or https://",
        "client": "client: unknown 'curl'",
        "ablation": "ablation: unknown 'x'",
        "depth": "depth: must be 1 or 2, got 3",
        "budget": "budget: must be at least 1",
        "temperature": "temperature: must be between 0 and 2",
    }
    assert exc.value.exit_code == 2
    assert cli_refusal(tmp_path, capsys, ["--agent", "llm", "--base-url", "h:9"]) == [
        "error: --model: a model is needed for the llm agent (a litellm model string such as openai/gpt-4.1)",
        "error: --base-url: must start with http:// or https://",
    ]


def test_a_scripted_agent_refuses_a_zero_temperature_too(tmp_path, capsys):
    """0 is a temperature, not "not given": `--agent oracle --temperature 0` used to pass and look like a setting."""
    assert cli_refusal(tmp_path, capsys, ["--agent", "oracle", "--temperature", "0"]) == [
        "error: --temperature applies to --agent llm only"
    ]
    with pytest.raises(LaunchError, match="temperature, options apply to agent llm only"):
        run_spec(LaunchRequest(agent="random", temperature=0.0, options={"top_k": 3}))


def test_the_default_name_is_made_unique_only_when_asked():
    """The CLI resumes by running the same command again (the same name); the form proposes a new run."""
    request = LaunchRequest(agent="random", ablation="no-search", seed=2)
    assert run_spec(request).name == "random-builtin-no-search-seed2"
    assert run_spec(request, existing={"random-builtin-no-search-seed2"}).name == "random-builtin-no-search-seed2-2"
    assert run_spec(dataclasses.replace(request, name="  mine ")).name == "mine"


def test_the_clients_are_the_llm_agents():
    """The service names the clients without importing the LLM agent (0.25 s at the form); they must agree."""
    from sandbox.agents.llm import CLIENTS as AGENT_CLIENTS
    from workbench.service.launch import CLIENTS

    assert set(CLIENTS) == set(AGENT_CLIENTS)


# The places that build a RunSpec that is no user's launch choice; a new front-end path must go through
# workbench/service/launch.py instead of joining this list.
NON_USER_RUNSPECS = {
    "workbench/service/launch.py": "the launch service itself",
    "workbench/service/reference_import.py": "the replay run of imported reference trajectories",
    "workbench/service/mcp_session.py": "the MCP server's base spec (its agent is the MCP client)",
    "workbench/service/play.py": "a person's play session",
    "workbench/service/inspect/log_import.py": "the replay run of an imported Inspect log",
    "workbench/service/inspect/task.py": "the Inspect task's episodes (Inspect's model plays them; -T options checked there)",
}


def test_only_the_launch_service_builds_a_users_runspec():
    builders = sorted(
        str(p.relative_to(ROOT))
        for p in (ROOT / "workbench").rglob("*.py")
        if re.search(r"\bRunSpec\(", p.read_text(encoding="utf-8"))
    )
    assert builders == sorted(NON_USER_RUNSPECS)
