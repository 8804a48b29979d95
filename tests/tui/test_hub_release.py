"""A release on the Hugging Face Hub in the TUI, against the stand-in on 127.0.0.1 (tests/hub_server.py) and the real
huggingface_hub client in this process: the launch form takes `hf:OWNER/NAME`, a run launched from it fetches the
release (its download said on the live screen) and records the repository and commit, the item browser opens it,
and its dataset dialog takes one typed in."""

from __future__ import annotations

from dataclasses import replace

import pytest
from textual.widgets import DataTable, Input, Static
from tui_support import make_app, settle

from sandbox import synth
from storage import Store
from tests.hub_server import HubServer, Repo, commit_id, release_files
from workbench.tui.forms.launch import default_name, release_problem, validate
from workbench.tui.forms.launch_fields import LaunchFields

SPEC = "hf:nlpai-lab/agenthop"
SIZE = (120, 36)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """The stand-in serving the generator's release; the Hub client pointed at it, with a cache of this test's own
    (huggingface_hub reads HF_HOME and the telemetry switch when imported: its constants are set here instead)."""
    from huggingface_hub import constants

    release = synth.generate(tmp_path / "agenthop", seed=0, preset="demo", items=12, papers=60)
    commit = commit_id("tui")
    server = HubServer({"nlpai-lab/agenthop": Repo({commit: release_files(release)}, {"main": commit})}).start()
    monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hf"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)  # no agent-registry look-up on huggingface.co
    yield server
    server.stop()


def test_the_launch_form_takes_a_hub_release_and_checks_only_its_form():
    assert release_problem(SPEC) is None
    assert release_problem(SPEC + "@v1.0") is None
    assert "hf:OWNER/NAME" in (release_problem("hf:agenthop") or "")
    result = validate(LaunchFields(dataset_kind="release", path=SPEC, agent="oracle", name="x"), set())
    assert result.errors == {} and result.spec.dataset == SPEC
    assert default_name("oracle", "release", SPEC, set()) == "oracle-agenthop"  # as `--batch run --data hf:…` names it


async def test_a_run_launched_from_the_tui_fetches_the_release_and_records_its_commit(hub, tmp_path):
    from workbench.tui.jobs import RunJob

    result = validate(LaunchFields(dataset_kind="release", path=SPEC, agent="oracle", name="tui"), set())
    job = RunJob(result.spec, tmp_path / "s.sqlite", tmp_path / "cache")
    said: list[str] = []
    note = job.monitor.note
    job.monitor.note = lambda message: (said.append(message), note(message))[1]
    outcome = await job.execute()
    assert outcome is not None and job.monitor.status == "done", job.monitor.message
    fetched = [m for m in said if m.startswith(f"{SPEC}: ")]
    assert fetched and fetched[-1].startswith(f"{SPEC}: 4/4 files fetched")
    (run,) = Store(tmp_path / "s.sqlite", readonly=True).runs()
    assert (run["dataset"], run["dataset_repo"], run["dataset_revision"]) == (
        SPEC,
        "nlpai-lab/agenthop",
        commit_id("tui"),
    )
    assert (run["done"], run["n_correct"]) == (12, 12)


async def test_the_item_browser_opens_a_hub_release_and_its_dialog_takes_one_typed_in(hub, seeded):
    from workbench.tui.screens.items import ItemsScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.push_screen(ItemsScreen("builtin"))
        await settle(pilot, app)
        await pilot.press("d")
        await pilot.pause()
        dialog = app.screen
        field = dialog.query_one("#dataset-path", Input)
        field.focus()
        field.value = "hf:agenthop"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is dialog
        assert "hf:OWNER/NAME" in str(dialog.query_one("#dataset-error", Static).render())
        field.value = SPEC
        await pilot.press("enter")
        await settle(pilot, app)
        browser = app.screen
        assert isinstance(browser, ItemsScreen) and browser.dataset == SPEC
        assert len(browser.shown) == 12
        assert any(path.startswith("/cdn/") or "/resolve/" in path for path in hub.served("GET"))


async def _folder_run(folder, store_path, cache_dir, name: str, ids: str) -> None:
    """A run on a release directory, of the items `ids` only (so that a resume has episodes left to run)."""
    from workbench.tui.jobs import RunJob

    values = LaunchFields(dataset_kind="release", path=str(folder), agent="oracle", name=name, ids=ids)
    job = RunJob(validate(values, set()).spec, store_path, cache_dir)
    await job.execute()
    assert job.monitor.status == "done", job.monitor.message


def _first_ids(folder, n: int) -> str:
    import json

    lines = (folder / "qa" / "full.jsonl").read_text().splitlines()
    return ", ".join(json.loads(line)["id"] for line in lines[:n])


async def test_a_folder_run_resumes_from_the_form_through_hf_of_the_same_files(hub, tmp_path, builtin_cache):
    """The run's identity is its data's fingerprint: the form does not refuse `hf:` for the stored directory (nor
    the reverse, by the same rule), and starting resumes the run; its dataset as recorded stays the directory."""
    from workbench.tui.forms.resume import resume_conflicts
    from workbench.tui.screens.launch import LaunchScreen

    folder, store_path = tmp_path / "agenthop", tmp_path / "store.sqlite"
    await _folder_run(folder, store_path, builtin_cache, "shared", _first_ids(folder, 3))
    stored = Store(store_path, readonly=True).run("shared")
    hub_spec = validate(LaunchFields(dataset_kind="release", path=SPEC, agent="oracle", name="shared"), set()).spec
    assert resume_conflicts(hub_spec, stored) == {}
    folder_spec = validate(LaunchFields(dataset_kind="release", path=str(folder), agent="oracle", name="shared"), set())
    assert resume_conflicts(folder_spec.spec, {**stored, "dataset": SPEC}) == {}  # the reverse: a Hub run, a folder
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        home.query_one(DataTable).move_cursor(row=home.shown.index("shared"))
        await pilot.press("R")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen) and form.query_one("#path", Input).value == str(folder)
        form.query_one("#ids", Input).value = ""
        form.query_one("#path", Input).value = SPEC
        await pilot.pause()
        messages = str(form.query_one("#launch-messages").render())
        assert "differs" not in messages and form.result.spec is not None, messages
        assert "fingerprints are compared when the run starts" in messages
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert [job.monitor.status for job in app.jobs.values()] == ["done"], [
            job.monitor.message for job in app.jobs.values()
        ]
    (run,) = Store(store_path, readonly=True).runs()
    assert (run["name"], run["dataset"], run["done"], run["n_correct"]) == ("shared", str(folder), 12, 12)
    assert any("/resolve/" in path or path.startswith("/cdn/") for path in hub.served("GET"))


async def test_a_different_dataset_is_still_refused(hub, tmp_path, builtin_cache):
    """Another directory is refused in the form by its key; another release on the Hub, whose content the form cannot
    know without fetching it, is refused when the run starts, by the fingerprint, and the stored run is untouched."""
    from workbench.tui.jobs import RunJob

    folder, store_path = tmp_path / "agenthop", tmp_path / "store.sqlite"
    other = synth.generate(tmp_path / "other", seed=1, preset="demo", items=12, papers=60)
    commit = commit_id("other")
    hub.repos["nlpai-lab/other"] = Repo({commit: release_files(other)}, {"main": commit})
    await _folder_run(folder, store_path, builtin_cache, "shared", _first_ids(folder, 3))
    stored = Store(store_path, readonly=True).run("shared")
    base = LaunchFields(dataset_kind="release", agent="oracle", name="shared")
    refused = validate(replace(base, path=str(other)), {"shared"}, stored=stored)
    assert refused.spec is None and "dataset differs from the stored run's agenthop" in refused.errors["path"]
    deferred = validate(replace(base, path="hf:nlpai-lab/other"), {"shared"}, stored=stored)
    assert deferred.spec is not None
    job = RunJob(deferred.spec, store_path, builtin_cache)
    await job.execute()
    assert job.monitor.status == "failed" and "dataset_fingerprint differs" in job.monitor.message
    (run,) = Store(store_path, readonly=True).runs()
    assert (run["dataset"], run["done"]) == (str(folder), 3)
