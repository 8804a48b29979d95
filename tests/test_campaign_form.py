"""The campaign screen's model (`workbench.tui.forms.campaign`), without a terminal: a run's row, the plan's line,
the line of a campaign under way, a path that names no file."""

from __future__ import annotations

from workbench.service.campaign.preview import RunPreview
from workbench.service.records.campaign import CampaignTotals
from workbench.tui.forms.campaign import path_problem, plan_line, row_cells, running_line, shard_note

LLM = RunPreview("p-gpt-full", "gpt", "openai", "run", episodes=40, already_done=10, cost_usd=1.5, scripted=False)
UNPRICED = RunPreview("p-x-full", "x", "http://h/v1", "run", episodes=20, already_done=0, cost_usd=None, scripted=False)
SCRIPTED = RunPreview("p-h-full", "h", "scripted", "run", episodes=20, already_done=20, cost_usd=0.0, scripted=True)


def test_a_runs_row_shows_its_progress_and_its_estimated_cost():
    assert row_cells(LLM, (10, 40, "interrupted")) == (
        "p-gpt-full", "gpt", "openai", "40", "10/40", "$1.50", "■ interrupted"
    )  # fmt: skip
    assert row_cells(UNPRICED, (0, 20, "not started"))[5:] == ("—", "· not started")
    assert row_cells(SCRIPTED, (20, 20, "done"))[5:] == ("—", "✓ done")


def test_the_plan_line_counts_runs_endpoints_episodes_and_the_cost_of_the_rest():
    assert plan_line([LLM, UNPRICED, SCRIPTED]) == (
        "3 runs on 3 endpoint(s) · 80 episodes, 30 done · estimated cost of the rest $1.50 (+ 1 unpriced runs) · "
        "ctrl+r starts (finished episodes are kept)"
    )


def test_a_campaign_under_way_says_its_totals_and_why_it_stopped():
    totals = CampaignTotals(runs_done=1, runs=3, episodes_done=30, episodes=80, tokens=12_300, cost=0.42, eta_s=95)
    assert running_line("p", totals, "stopped", "http://h/v1 unreachable: p-x-full") == (
        "campaign 'p': runs 1/3 · episodes 30/80 · tokens 12.3k · cost $0.4200 · ETA 1m35s · stopped: "
        "http://h/v1 unreachable: p-x-full"
    )


def test_a_path_that_names_no_file_is_said(tmp_path):
    (tmp_path / "c.toml").write_text("")
    assert path_problem(str(tmp_path / "c.toml")) is None
    assert path_problem(str(tmp_path / "nope.toml")) == f"no file at {tmp_path / 'nope.toml'}"


def test_a_shards_store_is_said_with_the_command_for_that_shard(tmp_path):
    assert shard_note("2/3", tmp_path / "c.toml", tmp_path / "h2.sqlite") == (
        "shard 2/3: this store holds the campaign's shard 2/3, so that shard is planned and ctrl+r runs it "
        f"(as `agenthop-tui --batch campaign run {tmp_path}/c.toml --shard 2/3 --db {tmp_path}/h2.sqlite`)"
    )
