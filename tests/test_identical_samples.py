"""A parallel study over an agent whose samples of an item cannot differ (issue 44 §18): the oracle (no draw at all)
and an LLM at temperature 0 make K identical samples, the heuristic nearly so (its draws only break ties), so
pass@k and every strategy sit on pass@1, a flat plot. Said at launch, by the CLI and the Scaling screen; the paper
samples a model at a temperature above 0, so the seed is left as it is."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.cli_inprocess import batch
from workbench.service.launch import LaunchRequest, run_spec
from workbench.service.scaling.studies import identical_samples_note


def spec_of(agent: str, **options):
    request = LaunchRequest(dataset="builtin", agent=agent, name="s", **options)
    return replace(run_spec(request), replicates=4)


@pytest.mark.parametrize(
    ("agent", "options", "words"),
    [
        ("oracle", {}, "identical"),
        ("heuristic", {}, "only break ties"),
        ("llm", {"model": "openai/test-model", "temperature": 0.0}, "temperature 0"),
    ],
)
def test_a_study_of_samples_that_cannot_differ_is_told_so(agent, options, words):
    note = identical_samples_note(spec_of(agent, **options))
    assert note is not None and words in note and "pass@1" in note


@pytest.mark.parametrize(
    ("agent", "options"), [("random", {}), ("llm", {"model": "openai/test-model", "temperature": 0.7})]
)
def test_samples_that_differ_need_no_word(agent, options):
    assert identical_samples_note(spec_of(agent, **options)) is None


def test_the_cli_says_it_before_the_study_runs(tmp_path, capsys):
    db = tmp_path / "store.sqlite"
    done = batch(capsys, "scale", "parallel", "--agent", "oracle", "--k", "1,2", "--limit", "2", "--db", str(db))
    assert done.returncode == 0
    [line] = [line for line in done.stderr.splitlines() if "identical" in line]
    assert line.startswith("warning: the oracle agent")
