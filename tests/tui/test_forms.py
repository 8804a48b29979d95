"""The launch form, the dialogs and the welcome panel as a person meets them (findings of the second UX pass)."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input
from tui_support import make_app, settle

from workbench.tui.screens.launch import LaunchScreen
from workbench.tui.screens.runs import RunsScreen

SIZE = (120, 36)


async def test_resuming_with_another_seed_is_refused_in_the_form_with_the_stored_value(seeded):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        home.query_one(DataTable).move_cursor(row=home.shown.index("heur-s0"))
        await pilot.press("R")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen)
        form.query_one("#seed", Input).value = "5"
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.screen is form and not app.jobs  # the form stays open; nothing started
        messages = str(form.query_one("#launch-messages").render())  # the model's rules: tests/test_launch_form.py
        assert "seed differs from the stored run's 0" in messages and "rename (r) or delete (d)" in messages
        assert form.query_one("#seed").has_class("-invalid") and form.query_one("#start").disabled
        form.query_one("#seed", Input).value = "0"  # back to the stored value: starting resumes it
        await pilot.pause()
        assert "starting resumes 'heur-s0'" in str(form.query_one("#launch-messages").render())
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert app.store.run("heur-s0")["status"] == "done"


def test_the_refusal_names_what_differs_in_english():
    from storage.store.runs import differ_phrase

    assert differ_phrase(["seed"]) == "seed differs"
    assert differ_phrase(["caps", "seed"]) == "caps and seed differ"
    assert differ_phrase(["agent", "caps", "seed"]) == "agent, caps and seed differ"


async def test_checkboxes_show_their_state_in_the_glyph_not_only_in_colour(seeded, monkeypatch):
    from workbench.tui.screens.dialogs import ExportModal
    from workbench.tui.widgets.checkbox import Checkbox

    monkeypatch.setenv("NO_COLOR", "1")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("e")  # export the highlighted run
        await pilot.pause()
        assert isinstance(app.screen, ExportModal)
        box = app.screen.query_one("#export-steps", Checkbox)
        assert box.value and str(box.render()).startswith("▐X▌")  # steps by default, as the CLI's export
        box.focus()
        await pilot.press("space")
        await pilot.pause()
        assert not box.value and str(box.render()).startswith("▐ ▌")


def test_every_checkbox_in_the_app_is_the_one_that_shows_its_state():
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "workbench"
    stock = [
        p.name
        for p in root.rglob("*.py")
        if p.name != "checkbox.py"
        and re.search(r"from textual\.widgets import[^\n]*\bCheckbox\b|widgets\.Checkbox", p.read_text())
    ]
    assert stock == []


async def test_a_refused_cap_marks_its_field_and_the_name_box_follows_the_model(tmp_path):
    """The fields that apply, the problems and the suggested name are the model's (tests/test_launch_form.py): here,
    that the screen turns fields off and on, marks a refused one, keeps the form open and fills the name box."""
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert form.query_one("#model").disabled and form.query_one("#base_url").disabled  # heuristic: no model
        form.query_one("#budget", Input).value = "0"
        await pilot.pause()
        assert form.query_one("#budget").has_class("-invalid") and form.query_one("#start").disabled
        assert "points: must be at least 1" in str(form.query_one("#launch-messages").render())
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.screen is form and not app.jobs
        form.query_one("#budget", Input).value = "30"
        form.query_one("#agent", Select).value = "llm"
        await pilot.pause()
        assert not form.query_one("#budget").has_class("-invalid")
        assert not form.query_one("#model").disabled and form.query_one("#name", Input).value == "llm-builtin"
        form.query_one("#model", Input).value = "openai/gpt-4o-mini"
        await pilot.pause()
        assert form.query_one("#name", Input).value == "openai_gpt-4o-mini-builtin"
        # a name the user typed is kept when the model changes
        form.query_one("#name", Input).value = "mine"
        await pilot.pause()
        form.query_one("#model", Input).value = "openai/gpt-4.1"
        await pilot.pause()
        assert form.query_one("#name", Input).value == "mine"


def test_the_batch_flags_refuse_the_same_degenerate_caps(tmp_path, capsys):
    import pytest

    from workbench.cli import main

    db = tmp_path / "s.sqlite"
    base = ["--batch", "run", "--agent", "heuristic", "--limit", "1", "--run", "x", "--quiet", "--db", str(db)]
    for flag in ("--budget", "--max-turns"):
        with pytest.raises(SystemExit) as exit_:
            main([*base, flag, "0"])
        assert exit_.value.code == 2 and "must be at least 1" in capsys.readouterr().err
    assert not db.exists()


async def test_the_welcome_panel_names_the_keys_as_remapped_and_the_store_in_full(tmp_path):
    app = make_app(keymap={"runs.new": "N", "runs.builtin": "ctrl+b"})
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, RunsScreen)
        text = str(app.screen.query_one("#welcome").render())
        assert "N to configure a run" in text and "^b to run the built-in benchmark" in text
        assert "n to configure" not in text
        assert f"The store lives at {tmp_path.resolve() / 'store.sqlite'} " in text
        await pilot.press("N")
        await pilot.pause()
        assert isinstance(app.screen, LaunchScreen)


async def test_the_audit_reviewer_is_named_in_the_title_settable_and_remembered(tmp_path, builtin_cache, monkeypatch):
    import tomllib

    from sandbox.datasets import open_dataset
    from storage import Store
    from workbench.tui.screens.audit import AuditScreen
    from workbench.tui.screens.dialogs import NameModal

    monkeypatch.delenv("USER", raising=False)
    monkeypatch.delenv("USERNAME", raising=False)
    (tmp_path / "config.toml").write_text('[ui]\ntheme = "agenthop-dark"\n')
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.open_audit("builtin")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, AuditScreen)
        assert str(screen.query_one("#audit-title").render()).endswith("· reviewer: reviewer (R to change)")
        await pilot.press("R")
        await pilot.pause()
        assert isinstance(app.screen, NameModal)
        app.screen.query_one("#name-input", Input).value = "ana"
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is screen and screen.reviewer == "ana"
        assert str(screen.query_one("#audit-title").render()).endswith("· reviewer: ana (R to change)")
        await pilot.press("p")  # a verdict is recorded under the new name
        await pilot.pause()
    assert (tmp_path / "config.toml").read_text() == '[ui]\ntheme = "agenthop-dark"\n'  # the user's file, untouched
    assert tomllib.loads((tmp_path / "state.toml").read_text()) == {"audit": {"reviewer": "ana"}}
    corpus, _ = open_dataset("builtin", builtin_cache)
    store = Store(tmp_path / "store.sqlite", readonly=True)
    assert {v["reviewer"] for v in store.verdicts(corpus.fingerprint).values()} == {"ana"}
    store.close()
    corpus.close()


async def test_one_of_a_thing_is_singular(seeded):
    from workbench.tui.screens.stepper import StepperScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        run = app.store.run("heur-s0")
        first = app.store.trajectories(run["id"])[0]
        assert first["points_used"] == 29  # of 30: one point left at its last turn
        app.push_screen(StepperScreen(run, [first["id"]]))
        await settle(pilot, app)
        await pilot.press("dollar_sign")
        await pilot.pause()
        line = str(app.screen.query_one(".ledger-line").render())
        assert "1 point left · 0 consecutive rejections" in line  # "1 episode" of the cost note: test_launch_form


def test_the_notes_of_a_play_session_count_in_english():
    from workbench.service.play import SessionPlan

    plan = SessionPlan(items=("a",), left_out={"b": "s"}, replayed={}, resumed={})
    from workbench.views.play import session_notes

    assert session_notes(plan)[0].startswith("left out 1 item you played before: b")


async def test_the_threads_field_opens_for_a_local_model_and_reaches_the_run(seeded):
    """Threads: a local/ model's server threads, off until one is typed in Model; typed, it is the run's option."""
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen)
        threads = form.query_one("#local_threads", Input)
        assert threads.disabled
        form.query_one("#agent", Select).value = "llm"
        form.query_one("#model", Input).value = "local/smollm2"
        await pilot.pause()
        assert not threads.disabled
        threads.value = "2"
        await pilot.pause()
        assert form.result.spec.agent_options["local_threads"] == 2


async def test_a_prompts_file_is_checked_in_the_form_and_recorded_by_the_run_it_starts(tmp_path):
    """The form's Prompts field: a malformed file marks the field; a good one starts a run that stores it (what is
    said of a file, and of a stored run's, is the model's: tests/test_launch_form.py)."""
    from sandbox.prompt_set import load_prompts, to_toml

    bad = tmp_path / "bad.toml"
    bad.write_text('nudge = "go on {budgt}"\n')
    good = tmp_path / "good.toml"
    good.write_text('first_user = "Begin."\n')
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        form.query_one("#limit", Input).value = "2"
        form.query_one("#name", Input).value = "mine"
        form.query_one("#prompts", Input).value = str(bad)
        await pilot.pause()
        assert form.result.spec is None and form.query_one("#prompts").has_class("-invalid")
        assert "unknown placeholder {budgt}" in str(form.query_one("#launch-messages").render())
        form.query_one("#prompts", Input).value = str(good)
        await pilot.pause()
        assert not form.query_one("#prompts").has_class("-invalid")
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert app.store.run("mine")["prompts"] == to_toml(load_prompts(good))


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_launch_forms_extra_tools_problems_name_its_fields_and_it_takes_a_timeout(seeded, size):
    """A count beyond the registry is said beside the fields, at any size; an MCP server registry's per-call timeout
    is a field, off for the other registries (the words and the timeout's reading: tests/test_launch_form.py)."""
    from textual.widgets import Select

    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await pilot.press("n")
        await settle(pilot, app)
        form = app.screen
        assert isinstance(form, LaunchScreen)
        form.query_one("#extra_kind", Select).value = "builtin"
        await pilot.pause()
        assert form.query_one("#extra_timeout", Input).disabled
        form.query_one("#extra_count", Input).value = "999"
        await pilot.pause()
        messages = str(form.query_one("#launch-messages").render())
        assert "tool count 999: the registry has only" in messages, messages
        form.query_one("#extra_kind", Select).value = "mcp"
        await pilot.pause()
        assert not form.query_one("#extra_timeout", Input).disabled
        await pilot.press("escape")
        await settle(pilot, app)
