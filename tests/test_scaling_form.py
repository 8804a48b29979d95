"""The Scaling screen's plain model, without a terminal: the sources it lists, the computation a source is read by,
how a launched study is followed (its progress in words, when it is drawn again, where its result shows, how a
study still sampling is read) and what its import and export dialogs accept; and the export file's text.

The Pilot tests (tests/tui/test_scaling_screen.py and its neighbours) keep what only the screen shows: the tables,
the captions, the plots, the dialogs and the keys."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from tests.cli_inprocess import batch
from workbench.service.launch import LaunchRequest
from workbench.service.scaling import ScalingInputError, StudyRequest, is_stored_judge, plan_study
from workbench.tui.forms.scaling import (
    Source,
    computation,
    export_format,
    export_path,
    export_path_problem,
    imported_studies,
    judge_tables,
    listed_sources,
    reading_judge,
    reading_options,
    sampling,
    scaling_sources,
    scores_path_problem,
    source_by_key,
    study_drawable,
    study_progress,
    study_source,
    study_state,
)
from workbench.tui.jobs import StudyJob
from workbench.views.scaling import export_text, parallel_csv

DATA = Path(__file__).parent / "data" / "general-agentbench-parallel.json"
STUDY = "Gemini2.5-Flash|swebench"


def one_study(tmp_path: Path, name: str = STUDY) -> Path:
    """A scores file of one study cut from the released data."""
    data = json.loads(DATA.read_text())
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"data": {name: data["data"][name]}}))
    return path


# ---------------------------------------------------------------- the sources listed


def test_sources_list_groups_then_parallel_runs():
    runs = [
        {"name": "a@1", "kind": "sequential", "group_name": "a"},
        {"name": "e", "kind": "eval"},
        {"name": "p", "kind": "parallel", "replicates": 4},
        {"name": "a@2", "kind": "sequential", "group_name": "a"},
    ]
    assert [(s.kind, s.name, s.detail) for s in scaling_sources(runs)] == [
        ("sequential", "a", "seq ×2"),
        ("parallel", "p", "par K=4"),
    ]


def test_sources_list_tools_groups():
    runs = [
        {"name": "r@plain", "kind": "tools", "group_name": "r"},
        {"name": "r@tools8-full", "kind": "tools", "group_name": "r"},
        {"name": "e", "kind": "eval"},
    ]
    assert [(s.kind, s.name, s.detail) for s in scaling_sources(runs)] == [("tools", "r", "tools ×2")]


def test_strategy_groups_are_listed_as_one_comparison():
    runs = [{"name": f"S.{s}@2k", "kind": "sequential", "group_name": f"S.{s}"} for s in ("summarize", "continue")]
    runs.append({"name": "lone.verifier@2k", "kind": "sequential", "group_name": "lone.verifier"})
    sources = scaling_sources(runs)
    assert next((s.kind, s.name, s.detail, s.groups) for s in sources) == (
        "strategies",
        "S",
        "cmp ×2",
        ("S.continue", "S.summarize"),
    )  # in the order of the strategies
    assert [s.name for s in sources if s.kind == "sequential"] == ["S.summarize", "S.continue", "lone.verifier"]


def test_imported_studies_follow_the_store_s_sources_and_are_found_by_key(tmp_path):
    (entry,) = imported_studies(one_study(tmp_path))
    assert (entry.source.kind, entry.source.name, entry.source.detail) == ("imported", STUDY, "file K=4")
    assert entry.path == str(tmp_path / "one.json")
    runs = [{"name": "p", "kind": "parallel", "replicates": 2}]
    listed = listed_sources(runs, {entry.source.key: entry})
    assert [s.key for s in listed] == ["parallel:p", f"imported:{STUDY}"]
    assert source_by_key(listed, f"imported:{STUDY}") == entry.source
    assert source_by_key(listed, "parallel:nope") is None and source_by_key(listed, None) is None


def test_a_bad_scores_file_is_refused_in_the_cli_s_words(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"data": {"m": {"tasks": {"t": {"s": [True, 0]}}}}}))
    with pytest.raises(ScalingInputError) as caught:
        imported_studies(bad)
    said = str(caught.value)
    assert str(bad) in said and "field 's'[0]" in said and "boolean" in said


# ---------------------------------------------------------------- the computation a source is read by


def test_an_imported_study_is_computed_as_the_cli_prints_it_and_exported_as_its_csv(tmp_path, capsys):
    path = one_study(tmp_path)
    done = batch(capsys, "scale", "parallel", "--scores", str(path), "--format", "json")
    (cli,) = json.loads(done.stdout)["studies"]
    (entry,) = imported_studies(path)
    compute = computation(
        entry.source, tmp_path / "unused.sqlite", lambda name: None, {}, None, {entry.source.key: entry}
    )
    report = compute()
    assert report == cli
    assert json.loads(export_text("imported", report, "json")) == cli
    header, rows = parallel_csv(cli)
    written = list(csv.reader(export_text("imported", report, "csv").splitlines()))
    assert written[0] == header and len(written) == len(rows) + 1
    assert [float(r[header.index("pass_at_k")]) for r in written[1:]] == [r["pass_at_k"] for r in cli["per_k"]]
    tables = judge_tables(report)
    assert tables.judges == cli["judges"] and tables.judges
    assert tables.self_choice == [r for r in cli["per_k"] if "self_choice" in r]
    assert judge_tables(None) == type(tables)([], [], [])


def test_an_imported_source_that_is_gone_is_an_error(tmp_path):
    source = Source("imported", "gone", "file K=2")
    with pytest.raises(LookupError, match="gone"):
        computation(source, tmp_path / "s.sqlite", lambda name: None, {}, None, {})()


# ---------------------------------------------------------------- the dialogs


def test_the_import_dialog_takes_an_existing_file_only(tmp_path):
    (tmp_path / "scores.json").write_text("{}")
    assert scores_path_problem("") == "a file path is needed"
    assert scores_path_problem(str(tmp_path / "missing.json")) == "no such file"
    assert scores_path_problem(str(tmp_path)) == "no such file"
    assert scores_path_problem(str(tmp_path / "scores.json")) is None


def test_the_export_dialog_offers_a_safe_file_name_and_takes_a_file_not_a_directory(tmp_path):
    assert export_path(tmp_path, Source("parallel", "p", "")) == tmp_path / "scaling-p.json"
    assert export_path(tmp_path, Source("imported", "Gemini2.5-Flash|swe bench", "")).name == (
        "scaling-Gemini2.5-Flash_swe_bench.json"
    )
    assert export_path(tmp_path, Source("sequential", "", "")).name == "scaling-scaling.json"
    assert export_path_problem("") == "a file path is needed"
    assert export_path_problem(str(tmp_path)) == "that is a directory; name a file"
    assert export_path_problem(str(tmp_path / "out.csv")) is None
    assert export_format(Path("out.CSV")) == "csv" and export_format(Path("out.json")) == "json"
    assert export_format(Path("out")) == "json"


# ---------------------------------------------------------------- a study launched from the screen


def test_a_sweep_is_followed_level_by_level_and_shown_as_its_comparison(tmp_path, shared_cache):
    launch = LaunchRequest(agent="heuristic", name="S", limit=2)
    plan = plan_study(StudyRequest("sequential", launch, grid="2k,4k", strategies="continue,summarize"))
    job = StudyJob(plan, tmp_path / "store.sqlite", shared_cache)  # four levels, run one after another
    assert job.status == "starting" and job.active
    assert reading_options({"n_boot": 200}, job) == {"n_boot": 200, "finished_only": True}  # a sweep filling in
    assert reading_options({"n_boot": 200}, None) == {"n_boot": 200}
    progress = study_progress(job)
    assert (progress.name, progress.status) == ("study S", " · starting · x cancels")
    assert progress.levels == [f"  · {level.name}: 0/0" for level in job.levels]

    asyncio.run(job.levels[0].execute())  # the study runs its levels one after another: the first one
    job.status = "running"
    assert study_state(job) == ("running", 1, 0) and not study_drawable(job, 0)  # one level: no plateau yet
    asyncio.run(job.levels[1].execute())
    assert study_state(job) == ("running", 2, 0) and study_drawable(job, 0)  # two levels: a plateau to draw
    job.status = "starting"
    asyncio.run(job.execute())  # the rest (the first two are resumed: nothing redone)
    assert job.status == "done" and not job.active
    assert study_drawable(job, 0) and reading_options({}, job) == {}
    progress = study_progress(job)
    assert progress.status == " · done"
    assert [line.split(",")[0] for line in progress.levels] == [f"  ✓ {level.name}: 2/2" for level in job.levels]
    assert all(", accuracy " in line and line.endswith("%") for line in progress.levels)

    from workbench.service.stores import open_store

    store = open_store(tmp_path / "store.sqlite")
    try:
        sources = scaling_sources(store.runs())
    finally:
        store.close()
    shown = study_source(job.plan, sources)
    assert shown is not None and (shown.kind, shown.name, shown.groups) == ("strategies", "S", tuple(job.plan.groups))
    assert not sampling(job, shown)


def test_a_parallel_study_still_sampling_is_read_from_its_stored_verdicts_only(tmp_path, shared_cache):
    launch = LaunchRequest(agent="random", name="P", limit=2)
    plan = plan_study(StudyRequest("parallel", launch, ks="1,2"))
    job = StudyJob(plan, tmp_path / "store.sqlite", shared_cache)
    source = Source("parallel", "P", "par K=2")
    assert study_source(plan, [Source("parallel", "other", ""), source]) == source
    assert study_source(plan, []) is None
    assert not sampling(job, source) and reading_judge("mine", job, source) == "mine"
    job.status = "running"  # as the study sets it while its one run samples
    assert sampling(job, source) and not sampling(job, Source("parallel", "other", ""))
    judge = reading_judge("mine", job, source)
    assert is_stored_judge(judge) and judge.name == plan.judge  # the judge's verdicts come after the sampling
    assert reading_judge(None, None, source) is None  # no study: the run's recorded judge
    assert study_state(job) == ("running", 0, 0) and not study_drawable(job, 0)
    asyncio.run(job.levels[0].execute())  # both items' K = 2 samples
    assert study_state(job) == ("running", 1, 2) and study_drawable(job, 2)
    job.status = "failed"
    assert study_drawable(job, 0) and not sampling(job, source)


def test_a_one_group_sweep_shows_as_its_group(tmp_path):
    plan = plan_study(StudyRequest("sequential", LaunchRequest(agent="heuristic", name="G", limit=2), grid="2k,4k"))
    sources = [Source("sequential", group, "seq ×2") for group in plan.groups]
    assert study_source(plan, sources) == sources[0] and len(plan.groups) == 1
