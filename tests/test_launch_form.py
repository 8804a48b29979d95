"""The launch form's model without a terminal (`workbench.tui.forms`): its fields in, a RunSpec or the problems by
field out, the notes before Start, the fields that apply, the name that follows the choices, a stored run as fields
and what starting under its name would resume. The Pilot tests (tests/tui/) keep only what the screen shows."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from sandbox.records import Caps
from storage import Store
from tests.cli_inprocess import batch
from workbench.tui.forms.launch import LaunchForm, default_name, validate
from workbench.tui.forms.launch_fields import LaunchFields, disabled_fields, form_request
from workbench.tui.forms.relaunch import run_values

LLM = LaunchFields(agent="llm", model="openai/gpt-4.1", name="x")


@pytest.fixture(scope="module")
def builtin_cache(shared_cache):
    """The corpus cache with the built-in benchmark generated in it: a slice is counted from its QA file."""
    from sandbox.datasets import open_dataset

    corpus, _ = open_dataset("builtin", shared_cache)
    corpus.close()
    return shared_cache


def stored_run(capsys, db, name: str, *flags: str) -> dict:
    """A finished run made by `--batch run` (two episodes of the built-in benchmark unless `flags` say otherwise),
    as the store returns it."""
    done = batch(capsys, "run", "--run", name, "--db", str(db), "--quiet", "--workers", "1", *flags)
    assert done.returncode == 0, done.stderr
    with Store(db, readonly=True) as store:
        return store.run(name)


# ---------------------------------------------------------------- fields in, problems by field out


def test_a_new_form_holds_a_new_runs_defaults_and_names_it_as_the_cli_would():
    new = LaunchFields()
    assert (new.dataset_kind, new.agent, new.ablation, new.client, new.tier) == (
        "builtin",
        "heuristic",
        "full",
        "auto",
        "auto",
    )
    assert (new.budget, new.max_turns, new.max_tokens) == (str(Caps.budget), str(Caps.max_turns), "200000")
    assert (new.workers, new.replicates, new.seed, new.limit, new.extra_kind) == ("8", "1", "0", "", "none")
    form = LaunchForm({"heuristic-builtin"}, llm_ok=False)
    assert form.fields.name == "heuristic-builtin-2" and not form.name_typed
    spec = form.check().spec
    assert spec is not None and (spec.caps.budget, spec.workers, spec.limit, spec.dataset) == (30, 8, None, "builtin")


@pytest.mark.parametrize(
    "typed, errors",
    [
        ({"budget": "lots"}, {"budget": "points: 'lots' is not a whole number"}),
        ({"budget": "0"}, {"budget": "points: must be at least 1"}),
        ({"max_turns": "0"}, {"max_turns": "turns: must be at least 1"}),
        ({"max_tokens": " "}, {"max_tokens": "tokens: a number is needed"}),
        ({"workers": "0"}, {"workers": "workers: must be at least 1"}),
        ({"dataset_kind": "release"}, {"path": "release directory: a path (or hf:OWNER/NAME) is needed"}),
        ({"agent": "llm", "model": "openai/m", "local_threads": "2"}, {}),  # threads are a local/ model's only
        (
            {"agent": "llm", "model": "local/smollm2", "local_threads": "x"},
            {"local_threads": "threads: 'x' is not a whole number"},
        ),
        ({"distractible": "x"}, {"distractible": "distractible: 'x' is not a number (a probability, 0 to 1)"}),
        (
            {"agent": "llm", "budget": "x", "max_turns": "y", "max_tokens": "z", "workers": "0"},
            {
                "budget": "points: 'x' is not a whole number",
                "max_turns": "turns: 'y' is not a whole number",
                "max_tokens": "tokens: 'z' is not a whole number",
                "model": "model: a model is needed for the llm agent (a litellm model string such as openai/gpt-4.1)",
                "workers": "workers: must be at least 1",
            },
        ),
    ],
)
def test_each_problem_is_said_by_its_field_in_the_forms_words(typed, errors):
    result = validate(LaunchFields(name="x", **typed), set(), llm_ok=True)
    assert result.errors == errors and (result.spec is None) == bool(errors)


def test_numbers_are_read_with_their_thousands_separators():
    spec = validate(LaunchFields(name="x", budget="1_000", max_turns="1,000"), set(), llm_ok=True).spec
    assert (spec.caps.budget, spec.caps.max_turns) == (1000, 1000)


def test_an_llm_agent_this_build_lacks_is_refused_at_the_agent_field():
    errors = validate(LLM, set(), llm_ok=False).errors
    assert errors == {"agent": "agent: the LLM agent is not available in this build (sandbox.agents.llm is missing)"}


# ---------------------------------------------------------------- what applies, and the name


def test_only_the_fields_that_apply_to_the_choices_are_on():
    def on(**typed: str) -> set[str]:
        return {key for key, off in disabled_fields(LaunchFields(**typed)).items() if not off}

    assert on() == {"distractible"}  # the heuristic on the built-in benchmark: no path, no model, no registry
    assert on(agent="oracle", dataset_kind="release") == {"path"}
    assert on(agent="llm", model="openai/gpt-4.1") == {"model", "base_url", "client"}
    assert on(agent="llm", model=" local/smollm2") == {"model", "base_url", "client", "local_threads"}
    registry = {"extra_count", "extra_detail", "extra_cost"}
    assert on(agent="random", extra_kind="builtin") == registry
    assert on(agent="random", extra_kind="file") == registry | {"extra_source"}
    assert on(agent="random", extra_kind="mcp") == registry | {"extra_source", "extra_timeout"}


def test_the_name_follows_the_choices_until_one_is_typed():
    form = LaunchForm(set(), llm_ok=True)
    form.set("agent", "llm")
    assert form.fields.name == "llm-builtin"
    form.set("model", "openai/gpt-4o-mini")
    assert form.fields.name == "openai_gpt-4o-mini-builtin"  # as --batch run names it
    form.set("seed", "seven")  # a seed that is no number names the run as seed 0 (and is refused by its field)
    assert form.fields.name == "openai_gpt-4o-mini-builtin"
    form.set("seed", "7")
    assert form.fields.name == "openai_gpt-4o-mini-builtin-seed7"
    form.set("name", "mine")
    form.set("model", "openai/gpt-4.1")
    assert form.fields.name == "mine" and form.name_typed  # a name the person typed is kept
    form.set("name", "openai_gpt-4.1-builtin-seed7")  # typed back to the suggestion: it follows again
    form.set("ablation", "no-search")
    assert form.fields.name == "openai_gpt-4.1-builtin-no-search-seed7"
    assert LaunchForm(set(), LaunchFields(name="kept"), llm_ok=True).fields.name == "kept"
    assert default_name("heuristic", "builtin", "", {"heuristic-builtin"}) == "heuristic-builtin-2"


# ---------------------------------------------------------------- notes: cost and a token cap


def test_a_token_cap_at_the_prompt_overhead_is_warned_of_not_refused():
    from workbench.service.estimate import prompt_overhead

    overhead = prompt_overhead(Caps(), "full")
    at = validate(replace(LLM, max_tokens=str(overhead)), set(), llm_ok=True)
    assert at.spec is not None and at.errors == {}
    assert any(f"⚠ tokens: {overhead:,} is at or below the prompt overhead" in note for note in at.notes)
    above = validate(replace(LLM, max_tokens=str(overhead + 1)), set(), llm_ok=True)
    assert not any("prompt overhead" in note for note in above.notes)


def test_the_cost_note_counts_one_episode_in_the_singular_and_is_read_once(builtin_cache, tmp_path):
    memo: dict = {}

    def notes(fields: LaunchFields) -> list[str]:
        store = tmp_path / "none.sqlite"
        return validate(fields, set(), llm_ok=True, cache_dir=builtin_cache, store_path=store, notes_memo=memo).notes

    one = notes(replace(LLM, limit="1"))
    assert one[-1].startswith("cost ≈ 1 episode × ~")
    assert notes(replace(LLM, limit="1", workers="2")) == one and len(memo) == 1  # another keystroke: kept


def test_a_dataset_whose_size_is_not_known_yet_is_said_so():
    hub = replace(LLM, dataset_kind="release", path="hf:nobody/nothing-cached")
    assert validate(hub, set(), llm_ok=True).notes == ["cost: the dataset's size is unknown until it is opened"]


# ---------------------------------------------------------------- the LLM's threads, prompts, extra tools


def test_a_local_models_threads_reach_its_run():
    spec = validate(replace(LLM, model="local/smollm2", local_threads="2"), set(), llm_ok=True).spec
    assert spec.agent_options["local_threads"] == 2 and spec.agent_options["text_tools"] is True


def test_a_prompts_file_is_checked_naming_its_line_key_and_placeholder(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('nudge = "go on {budgt}"\n')
    good = tmp_path / "good.toml"
    good.write_text('first_user = "Begin."\n')
    refused = validate(LaunchFields(name="mine", prompts=str(bad)), set(), llm_ok=False)
    assert refused.spec is None and list(refused.errors) == ["prompts"]
    assert refused.errors["prompts"].startswith(f"prompts file: {bad}:1: key 'nudge': unknown placeholder {{budgt}}")
    spec = validate(LaunchFields(name="mine", prompts=f" {good} "), set(), llm_ok=False).spec
    assert spec is not None and spec.prompts.first_user == "Begin."


def test_the_extra_tools_problems_name_the_forms_fields():
    count = validate(LaunchFields(name="x", extra_kind="builtin", extra_count="999"), set(), llm_ok=True).errors
    assert list(count) == ["extra_source"] and "tool count 999: the registry has only" in count["extra_source"]
    assert "--" not in count["extra_source"]
    mcp = LaunchFields(name="x", extra_kind="mcp", extra_timeout="soon")  # no server: the source is refused too
    assert validate(mcp, set(), llm_ok=True).errors == {
        "extra_source": "extra tools: a tools file or the command that starts the MCP server is needed",
        "extra_timeout": "tool timeout: 'soon' is not a number of seconds",
    }


def test_the_mcp_timeout_reaches_the_request():
    errors: dict[str, str] = {}
    mcp = LaunchFields(extra_kind="mcp", extra_source="python server.py", extra_timeout="7.5")
    assert form_request(mcp, None, errors).extra_tools_timeout == 7.5 and not errors
    assert form_request(replace(mcp, extra_timeout=""), None, errors).extra_tools_timeout == 30.0 and not errors
    assert form_request(replace(mcp, extra_kind="file"), None, errors).extra_tools_timeout == 30.0  # MCP calls only


# ---------------------------------------------------------------- a stored run: relaunched, resumed, refused


def test_a_stored_run_comes_back_as_its_fields_and_options(tmp_path, capsys):
    run = stored_run(capsys, tmp_path / "s.sqlite", "heur", "--agent", "heuristic", "--limit", "6")
    fields, options = run_values(run)
    assert (fields.name, fields.agent, fields.limit, fields.workers, fields.dataset_kind) == (
        "heur",
        "heuristic",
        "6",
        "1",
        "builtin",
    )
    assert options == {}
    with pytest.raises(ValueError, match="ran the replay agent, which the launch form cannot start"):
        run_values({**run, "agent": "replay"})
    with pytest.raises(ValueError, match="is a scaling run: resume it with the --batch scale command"):
        run_values({**run, "kind": "scaling"})


def test_an_llm_run_comes_back_with_the_server_and_client_it_last_used(tmp_path, capsys, monkeypatch):
    from tests.openai_server import FakeOpenAI, tool_reply

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with FakeOpenAI(lambda req, n: tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))) as srv:
        flags = ("--agent", "llm", "--model", "openai/m", "--base-url", srv.url, "--client", "native")
        more = ("--temperature", "0.3", "--limit", "2", "--max-turns", "7", "--question-type", "single-target")
        run = stored_run(capsys, tmp_path / "s.sqlite", "local", *flags, *more)
    fields, options = run_values(run)
    assert (fields.base_url, fields.client, fields.model) == (srv.url, "native", "openai/m")
    assert (fields.max_turns, fields.limit, fields.question_type) == ("7", "2", "single-target")
    assert options.get("temperature") == 0.3 and "base_url" not in options and "client" not in options


def test_resuming_with_another_configuration_is_refused_naming_the_stored_value(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    stored_run(capsys, db, "heur-s0", "--agent", "heuristic", "--limit", "2")
    reads: list[str] = []

    def read(name: str) -> dict | None:
        reads.append(name)
        with Store(db, readonly=True) as store:
            return store.run(name)

    with Store(db, readonly=True) as store:
        fields, options = run_values(store.run("heur-s0"))
    form = LaunchForm({"heur-s0"}, fields, options, llm_ok=False, stored_run=read)
    assert form.check().notes == ["starting resumes 'heur-s0': its finished episodes are kept"]
    form.set("seed", "5")
    refused = form.check()
    assert refused.spec is None and refused.errors["seed"] == "seed differs from the stored run's 0"
    assert refused.errors["name"] == (
        "'heur-s0' is a stored run with another configuration: keep its values to resume it, choose another name, "
        "or on Runs rename (r) or delete (d) it"
    )
    assert "rename (R) or delete (x)" in form.check(keys=("R", "x")).errors["name"]  # the keys as bound
    form.set("max_turns", "12")
    assert form.check().errors["max_turns"] == "turns differs from the stored run's 20"
    form.set("name", "heur-s5")  # another name is a new run: no conflict
    assert form.check().spec is not None
    for key, value in (("name", "heur-s0"), ("seed", "0"), ("max_turns", "20")):
        form.set(key, value)
    resumed = form.check()
    assert resumed.spec is not None and resumed.notes == ["starting resumes 'heur-s0': its finished episodes are kept"]
    assert reads == ["heur-s0"]  # read once for the name, however many keystrokes
    unknown = validate(LaunchFields(name="heur-s0"), {"heur-s0"}, llm_ok=False)  # its configuration not at hand
    assert unknown.notes == [
        "a run named 'heur-s0' exists: starting resumes it if the configuration matches (otherwise the run is refused)"
    ]


def test_a_stored_runs_prompts_file_is_asked_for_to_resume_it(tmp_path, capsys):
    good = tmp_path / "good.toml"
    good.write_text('first_user = "Begin."\n')
    stored = stored_run(
        capsys, tmp_path / "s.sqlite", "mine", "--agent", "heuristic", "--limit", "2", "--prompts", str(good)
    )
    ours = validate(LaunchFields(limit="2", name="mine"), {"mine"}, llm_ok=False, stored=stored)
    assert ours.errors["prompts"].startswith("prompts file differs from the stored run's (a file hashed")
    fields, options = run_values(stored)  # the relaunched form asks for the file: it is a field
    assert "prompts" in validate(fields, {"mine"}, llm_ok=False, options=options, stored=stored).errors
    resumed = validate(replace(fields, prompts=str(good)), {"mine"}, llm_ok=False, options=options, stored=stored)
    assert resumed.spec is not None and resumed.notes == ["starting resumes 'mine': its finished episodes are kept"]


def test_a_folder_run_is_resumed_through_hf_with_a_note_that_the_files_are_compared(tmp_path, capsys, demo_dir):
    ids = ",".join(json.loads(line)["id"] for line in (demo_dir / "qa" / "full.jsonl").read_text().splitlines()[:2])
    flags = ("--agent", "oracle", "--data", str(demo_dir), "--ids", ids)
    stored = stored_run(capsys, tmp_path / "s.sqlite", "shared", *flags)
    through_hf = LaunchFields(dataset_kind="release", path="hf:nlpai-lab/agenthop", agent="oracle", name="shared")
    result = validate(through_hf, {"shared"}, llm_ok=False, stored=stored)
    assert result.spec is not None and result.errors == {}
    assert result.notes == [
        "starting resumes 'shared' if its data holds the same files as the stored run's release "
        "(their fingerprints are compared when the run starts)"
    ]


def test_the_launch_form_the_cli_and_a_run_share_one_default_for_workers():
    """Workers: the form said 4 where `run` uses 8 (issue 44 §17); one constant now, the CLI's 8."""
    from sandbox.records import DEFAULT_WORKERS
    from sandbox.runner import RunSpec
    from workbench.cli.parser import build_parser
    from workbench.service.launch import LaunchRequest

    args = build_parser().parse_args(["run"])
    assert DEFAULT_WORKERS == 8
    assert args.workers == DEFAULT_WORKERS == LaunchRequest(dataset="builtin", agent="heuristic").workers
    assert LaunchFields().workers == str(DEFAULT_WORKERS) and RunSpec(name="x", dataset="d", agent="a").workers == 8
    spec = LaunchForm(set(), llm_ok=False).check().spec
    assert spec is not None and spec.workers == DEFAULT_WORKERS
