"""Family and tier on every run (the paper's panel groups by both): derived from the model string, chosen at launch,
re-tagged afterwards, stored, and carried by resume, merge, JSONL export and reference import."""

from __future__ import annotations

import json

import pytest

from sandbox.corpus import open_release
from storage import Store
from storage.schema import MIGRATIONS, SCHEMA_VERSION
from tests.cli_inprocess import batch
from tests.interop_data import logs, write_experiment, write_interop_release
from workbench.service import families
from workbench.service.launch import LaunchError, LaunchRequest, run_spec
from workbench.service.reference_import import import_reference


@pytest.mark.parametrize(
    "model, family, tier",
    [
        ("gemini/gemini-3-pro-preview", "Gemini", "closed-frontier"),
        ("openai/gpt-5.4", "GPT", "closed-frontier"),
        ("openai/gpt-5.3-codex", "GPT", "closed-frontier"),
        ("o3-mini", "GPT", "closed-frontier"),
        ("anthropic/claude-opus-4-6", "Claude", "closed-frontier"),
        ("zai/glm-5.1", "GLM", "open-frontier"),
        ("deepseek/deepseek-reasoner", "DeepSeek", "open-frontier"),
        ("moonshot/kimi-k2.5", "Kimi", "open-frontier"),
        ("minimax/MiniMax-M2.7", "MiniMax", "open-frontier"),
        ("hosted_vllm/google/gemma-4-31b-it", "Gemma", "compute-efficient"),
        ("hosted_vllm/Qwen/Qwen3.5-35B-A3B", "Qwen", "compute-efficient"),
        ("Qwen/Qwen3-235B-A22B", "Qwen", "open-frontier"),  # an open-weight flagship is not compute-efficient
        ("meta-llama/Llama-3.1-8B-Instruct", "Llama", "compute-efficient"),
        ("mistral/mistral-large-latest", "Mistral", "compute-efficient"),
        ("xai/grok-4", "Grok", "closed-frontier"),
        ("my-own-model", None, None),
        (None, None, None),
    ],
)
def test_the_table_of_known_families(model, family, tier):
    assert families.derive(model) == (family, tier)


def test_launch_derives_or_takes_the_chosen_tags():
    spec = run_spec(LaunchRequest(agent="llm", model="openai/gpt-5.4"))
    assert (spec.family, spec.tier, spec.tagged) == ("GPT", "closed-frontier", ())
    spec = run_spec(LaunchRequest(agent="llm", model="openai/gpt-5.4", family="gpt", tier="Open Frontier"))
    assert (spec.family, spec.tier, spec.tagged) == ("GPT", "open-frontier", ("family", "tier"))
    scripted = run_spec(LaunchRequest(agent="heuristic"))
    assert (scripted.family, scripted.tier) == (None, None)
    with pytest.raises(LaunchError) as bad:
        run_spec(LaunchRequest(agent="heuristic", tier="mid"))
    assert "unknown tier 'mid'" in bad.value.problems["tier"]


def test_one_appended_migration_adds_the_columns(tmp_path):
    store = Store(tmp_path / "s.db")
    cols = {r[1] for r in store.conn.execute("PRAGMA table_info(runs)")}
    assert {"family", "tier"} <= cols and len(MIGRATIONS) == SCHEMA_VERSION
    assert "family" in MIGRATIONS[-1] or any("ADD COLUMN family" in m for m in MIGRATIONS)


def _runs(capsys, db):
    out = batch(capsys, "runs", "--db", db, "--format", "json")
    assert out.returncode == 0, out.stderr
    return {r["name"]: r for r in json.loads(out.stdout)}


def test_tag_at_launch_retag_resume_merge_and_export(capsys, tmp_path):
    db, other = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    run = ("run", "--agent", "heuristic", "--limit", "3", "--run", "h", "--db", db, "--quiet")
    assert batch(capsys, *run, "--family", "Scripted-A", "--tier", "open").returncode == 0
    row = _runs(capsys, db)["h"]
    assert (row["family"], row["tier"]) == ("Scripted-A", "open-frontier")
    table = batch(capsys, "runs", "--db", db).stdout
    assert "Scripted-A · open" in table

    # re-tag afterwards; a bad value writes nothing and exits 2
    bad = batch(capsys, "runs", "tag", "h", "--tier", "huge", "--db", db)
    assert bad.returncode == 2 and "unknown tier 'huge'" in bad.stderr
    assert _runs(capsys, db)["h"]["tier"] == "open-frontier"
    ok = batch(capsys, "runs", "tag", "h", "--family", "qwen", "--tier", "efficient", "--db", db)
    assert ok.returncode == 0 and "family Qwen, tier compute-efficient" in ok.stdout

    # a resume without tags keeps them; one with a tag changes only that one
    assert batch(capsys, *run[:-3], "--limit", "5", "--run", "h", "--db", db, "--quiet").returncode == 0
    row = _runs(capsys, db)["h"]
    assert (row["family"], row["tier"], row["done"]) == ("Qwen", "compute-efficient", 5)
    assert batch(capsys, *run, "--tier", "closed").returncode == 0
    assert (_runs(capsys, db)["h"]["family"], _runs(capsys, db)["h"]["tier"]) == ("Qwen", "closed-frontier")

    # merge carries them; the JSONL export names them in every line's run header
    assert batch(capsys, "merge", db, "--db", other).returncode == 0
    assert (_runs(capsys, other)["h"]["family"], _runs(capsys, other)["h"]["tier"]) == ("Qwen", "closed-frontier")
    lines = batch(capsys, "export", "h", "--db", other, "--format", "jsonl").stdout.splitlines()
    assert {json.loads(line)["run"]["family"] for line in lines} == {"Qwen"}


def test_a_run_stored_before_tags_reads_derived_ones(tmp_path):
    store = Store(tmp_path / "s.db")
    store.create_or_resume_run(
        "old",
        {"x": 1},
        {
            "agent": "llm",
            "model": "deepseek/deepseek-chat",
            "dataset": "builtin",
            "dataset_fingerprint": "f",
            "caps": {},
            "config": {},
            "version": "0",
        },
    )
    from workbench.service.runlist import runs_table

    row = next(r for r in runs_table(store) if r["name"] == "old")
    assert (row["family"], row["tier"]) == ("DeepSeek", "open-frontier")


def test_reference_import_derives_or_takes_the_tags(tmp_path):
    corpus, _ = open_release(write_interop_release(tmp_path / "release"), tmp_path / "cache")
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs())
    store = Store(tmp_path / "store.sqlite")
    import_reference(exp, corpus, store, "ref")
    assert (store.run("ref")["family"], store.run("ref")["tier"]) == ("GPT", "closed-frontier")
    import_reference(exp, corpus, store, "ref2", family="OpenAI", tier="open-frontier")
    assert (store.run("ref2")["family"], store.run("ref2")["tier"]) == ("OpenAI", "open-frontier")
    corpus.close()


@pytest.mark.parametrize("command", ["tag", "run"])
def test_a_family_holding_a_comma_is_refused_as_the_tui_form_could_not_read_it_back(capsys, tmp_path, command):
    db = str(tmp_path / "a.db")
    run = ("run", "--agent", "heuristic", "--limit", "1", "--run", "h", "--db", db, "--quiet")
    if command == "tag":
        assert batch(capsys, *run).returncode == 0
        out = batch(capsys, "runs", "tag", "h", "--family", "a,b", "--db", db)
    else:
        out = batch(capsys, *run, "--family", "a,b")
    assert out.returncode == 2 and "family: 'a,b' holds a comma" in out.stderr
    rows = json.loads(batch(capsys, "runs", "--db", db, "--format", "json").stdout or "[]")
    assert all(r["family"] != "a,b" for r in rows) and len(rows) == (command == "tag")


def test_parse_tag_of_the_tui_field():
    assert families.parse_tag("GPT, closed") == ("GPT", "closed", None)
    assert families.parse_tag(", auto") == (None, "auto", None)
    assert families.parse_tag("GPT, mid")[2].startswith("tier: unknown tier")
    assert families.parse_tag(" , ")[2]
