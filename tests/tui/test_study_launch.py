"""Scaling studies launched from the Scaling screen: a sequential sweep over strategies and a parallel study with
judge trials, watched level by level, their results drawn, and resumed by launching the same study again."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Select
from tui_support import make_app, settle

from workbench.tui.screens.scaling import ScalingScreen

BOOT = {"n_boot": 200, "seed": 0}


def rows_of(screen, table_id: str) -> list[list[str]]:
    table = screen.query_one(table_id, DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


async def fill(pilot, app, **values: str) -> None:
    form = app.screen
    for field_id, value in values.items():
        widget = form.query_one(f"#{field_id}")
        if isinstance(widget, Select):
            widget.value = value
        else:
            widget.value = value
    await pilot.pause()


async def test_launch_watch_and_resume_a_sweep_then_a_parallel_study(tmp_path):
    from storage import Store
    from workbench.service import scaling
    from workbench.views.scaling import comparison_rows, judge_cells, strategy_cells

    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        await app.push_screen(ScalingScreen(plateau_options=BOOT))  # an empty store: the screen says to press n
        await settle(pilot, app)
        assert "Press n to launch a study here" in str(app.screen.query_one("#scaling-caption").render())
        await pilot.press("n")
        await pilot.pause()
        await fill(
            pilot,
            app,
            **{"study-name": "S", "study-grid": "2k,4k", "study-strategies": "continue,summarize", "study-limit": "2"},
        )
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ScalingScreen)
        job = app.studies["S"]
        assert job.status == "done" and [lv["status"] for lv in job.progress()] == ["done"] * 4
        progress = str(screen.query_one("#scaling-progress").render())
        assert "study S · done" in progress and "✓ S.summarize@4k: 2/2" in progress
        assert screen.shown.kind == "strategies" and screen.shown.groups == ("S.continue", "S.summarize")
        store = Store(tmp_path / "store.sqlite", readonly=True)
        expected = scaling.strategy_comparison(store, ["S.continue", "S.summarize"], **BOOT)
        assert rows_of(screen, "#scaling-table") == [strategy_cells(r) for r in comparison_rows(expected)]
        before = store.conn.execute("SELECT COUNT(*) FROM trajectories").fetchone()[0]
        store.close()

        # the same study again resumes: every level is finished, nothing is redone
        await pilot.press("n")
        await pilot.pause()
        await fill(
            pilot,
            app,
            **{"study-name": "S", "study-grid": "2k,4k", "study-strategies": "continue,summarize", "study-limit": "2"},
        )
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert app.studies["S"].status == "done"
        store = Store(tmp_path / "store.sqlite", readonly=True)
        assert store.conn.execute("SELECT COUNT(*) FROM trajectories").fetchone()[0] == before
        store.close()

        # a study whose grid repeats a budget is refused in the form, nothing launched
        await pilot.press("n")
        await pilot.pause()
        await fill(pilot, app, **{"study-name": "bad", "study-grid": "2k,2000"})
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert "names the budget 2k twice" in str(app.screen.query_one("#study-error").render())
        await pilot.press("escape")
        await pilot.pause()
        assert "bad" not in app.studies

        await pilot.press("n")
        await pilot.pause()
        await fill(
            pilot,
            app,
            **{
                "study-kind": "parallel",
                "study-name": "P",
                "study-ks": "1,2",
                "study-agent": "random",
                "study-limit": "2",
                "study-trials": "2",
            },
        )
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        job = app.studies["P"]
        assert job.status == "done" and job.report is not None
        assert screen.shown.kind == "parallel" and screen.shown.name == "P"
        assert rows_of(screen, "#scaling-judges") == [judge_cells(j) for j in job.report["judges"]]
        assert screen.result["judge_trials"]["trials"] == 2


@pytest.mark.parametrize("size", [(80, 24), (160, 48)])
async def test_the_study_form_takes_typing_at_once_and_speaks_in_its_own_words(tmp_path, size):
    """Opened with `n`, the name field has the focus (typed text is not lost); ctrl+r starts, as in the New run form;
    a problem names the form's field, never a CLI flag."""
    app = make_app()
    async with app.run_test(size=size) as pilot:
        await settle(pilot, app)
        await app.push_screen(ScalingScreen(plateau_options=BOOT))
        await settle(pilot, app)
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        assert form.focused is not None and form.focused.id == "study-name"
        await pilot.press("ctrl+u", *"typed")  # clear the default, then type
        assert form.query_one("#study-name").value == "typed"
        for values, said in (
            ({"study-grid": "2k,2000"}, "grid names the budget 2k twice"),
            ({"study-grid": "2k,4k", "study-axis": "points"}, "grid: '2k' is not a whole number of points"),
            ({"study-kind": "parallel", "study-judge": "evidnce"}, "did you mean 'evidence'?"),
            ({"study-kind": "parallel", "study-orders": "0"}, "pairwise orders must be at least 1"),
        ):
            await fill(pilot, app, **{"study-kind": "sequential", "study-axis": "tokens", **values})
            await pilot.press("ctrl+r")
            await pilot.pause()
            error = str(form.query_one("#study-error").render())
            assert said in error and "--" not in error, error
        assert app.screen is form and not app.studies
        await pilot.press("escape")


async def test_the_study_form_launches_with_the_clis_orders_tie_rule_caps_and_cost_mode(tmp_path):
    """The fields the CLI has reach the study: a parallel study with one fixed order, the study's tie rule, its cost
    mode and a points cap is recorded and reported as `scale parallel --orders 1 --tie-rule first --cost-mode study
    --budget 12` would be."""
    from storage import Store

    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        await app.push_screen(ScalingScreen(plateau_options=BOOT))
        await settle(pilot, app)
        await pilot.press("n")
        await pilot.pause()
        await fill(
            pilot,
            app,
            **{
                "study-kind": "parallel",
                "study-name": "P1",
                "study-ks": "1,2",
                "study-limit": "2",
                "study-orders": "1",
                "study-tie-rule": "first",
                "study-cost-mode": "study",
                "study-budget": "12",
            },
        )
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        job = app.studies["P1"]
        assert job.status == "done" and job.report is not None
        store = Store(tmp_path / "store.sqlite", readonly=True)
        run = store.run("P1")
        store.close()
        scaling = run["config"]["scaling"]
        assert (scaling["orders"], scaling["tie_rule"], scaling["cost_mode"]) == (1, "first", "study")
        assert run["caps"]["budget"] == 12
        assert job.report["majority_rule"] == "first" and job.report["cost_mode"] == "study"
        assert job.report["pairwise_orders"] == 1


async def test_a_parallel_study_is_drawn_while_it_samples(tmp_path, monkeypatch):
    """A parallel study of an LLM agent whose server holds its last reply: pass@k is drawn from the items whose K
    samples are in while the study still samples (its judge not asked yet), then the judged report once done."""
    import threading

    from tui_support import until

    from tests.openai_server import FakeOpenAI, tool_reply
    from workbench.service.launch import LaunchRequest
    from workbench.service.scaling import StudyRequest, plan_study

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    hold = threading.Event()

    def brain(req, n):
        if n >= 3:  # the fourth episode waits: at least one item has both its samples by then
            hold.wait(30)
        return tool_reply(("submit_answer", {"answer": "B", "reasoning": "r"}))

    app = make_app()
    with FakeOpenAI(brain) as srv:
        launch = LaunchRequest(
            agent="llm", model="openai/gpt-4.1-mini", base_url=srv.url, name="PS", limit=2, workers=1
        )
        plan = plan_study(StudyRequest("parallel", launch, ks="1,2"))
        async with app.run_test(size=(140, 44)) as pilot:
            await settle(pilot, app)
            await app.push_screen(ScalingScreen(plateau_options=BOOT))
            await settle(pilot, app)
            screen = app.screen
            screen._launch(plan)
            job = app.studies["PS"]
            try:
                await until(pilot, lambda: screen.result is not None and screen.shown is not None, rounds=2000)
                assert job.status == "running" and screen.shown.kind == "parallel"
                assert [row["k"] for row in screen.result["per_k"]] == [1, 2]
                assert "pointwise" not in screen.result["per_k"][0]  # no verdict yet: the judge comes after
            finally:
                hold.set()
            await until(pilot, lambda: job.status == "done", rounds=2000)
            await settle(pilot, app)
            assert "pointwise" in screen.result["per_k"][0]


async def test_a_parallel_study_of_the_oracle_says_its_samples_are_identical(tmp_path):
    """Issue 44 §18: K samples of a deterministic agent are one sample K times (a flat plot): said as it launches."""
    app = make_app()
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot, app)
        await app.push_screen(ScalingScreen(plateau_options=BOOT))
        await settle(pilot, app)
        await pilot.press("n")
        await pilot.pause()
        await fill(
            pilot,
            app,
            **{"study-kind": "parallel", "study-name": "P", "study-agent": "oracle", "study-limit": "2"},
        )
        await fill(pilot, app, **{"study-ks": "1,2", "study-judge": "none"})
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        assert app.studies["P"].status == "done"
        notes = [n.message for n in app._notifications if "identical" in n.message]
        assert len(notes) == 1 and notes[0].startswith("the oracle agent is deterministic")
