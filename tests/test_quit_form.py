"""The quit dialog's question (`workbench.tui.forms.quit`): the runs in progress named as running, a campaign's runs
waiting their turn counted as queued, never called running."""

from __future__ import annotations

from workbench.tui.forms.quit import quit_question


def test_running_runs_are_named_and_queued_ones_counted():
    assert quit_question(["c-g-full"], 2, ["c"]) == (
        "c-g-full is running; 2 queued runs will not start. Quit and interrupt (finished trajectories are kept; "
        "resume a run with R on the runs list, a campaign ('c') by starting it again)?"
    )


def test_runs_alone_and_a_campaign_between_runs():
    assert quit_question(["a", "b"], 0, []) == (
        "a, b are running. Quit and interrupt (finished trajectories are kept; resume a run with R on the runs list)?"
    )
    assert quit_question([], 1, ["c"]).startswith("1 queued run will not start. Quit and interrupt")
