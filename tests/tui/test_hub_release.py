"""A release on the Hugging Face Hub in the TUI, against the stand-in on 127.0.0.1 (tests/hub_server.py) and the real
huggingface_hub client in this process: the launch form takes `hf:OWNER/NAME`, a run launched from it fetches the
release (its download said on the live screen) and records the repository and commit, the item browser opens it,
and its dataset dialog takes one typed in."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Static
from tui_support import make_app, settle

from sandbox import synth
from storage import Store
from tests.hub_server import HubServer, Repo, commit_id, release_files
from workbench.tui.screens.launch import default_name, release_problem, validate

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
    result = validate({"dataset_kind": "release", "path": SPEC, "agent": "oracle", "name": "x"}, set())
    assert result.errors == {} and result.spec.dataset == SPEC
    assert default_name("oracle", "release", SPEC, set()) == "oracle-agenthop"  # as `--batch run --data hf:…` names it


async def test_a_run_launched_from_the_tui_fetches_the_release_and_records_its_commit(hub, tmp_path):
    from workbench.tui.jobs import RunJob

    result = validate({"dataset_kind": "release", "path": SPEC, "agent": "oracle", "name": "tui"}, set())
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
