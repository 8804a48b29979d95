"""Why episodes ended in error, counted beside the terminations: `report` (table, JSON, CSV) and the Diagnostics tab.

The kinds are written into a real store (as an LLM run records them: a full context window, failed calls at the turn
cap) and counted back by hand with SQL, not through the report under test."""

from __future__ import annotations

import csv
import io
import json

import pytest
from rich.console import Console
from tui_support import make_app, settle

from storage import Store
from tests.cli_inprocess import batch

KINDS = [("error", "context_overflow"), ("error", "context_overflow"), ("max_turns", "api_errors_at_cap")]


def with_error_kinds(db) -> dict[str, int]:
    """Three of heur-s0's trajectories given error kinds; the kinds counted by hand from the stored rows."""
    store = Store(db)
    run_id = store.run("heur-s0")["id"]
    ids = [t["id"] for t in store.trajectories(run_id)][: len(KINDS)]
    for tid, (termination, kind) in zip(ids, KINDS, strict=True):
        store.update_trajectory(tid, termination=termination, error_kind=kind, error="e", correct=0)
    rows = store.conn.execute(
        "SELECT error_kind, COUNT(*) FROM trajectories WHERE run_id = ? AND final = 1 AND status = 'done' "
        "AND error_kind IS NOT NULL GROUP BY error_kind",
        (run_id,),
    ).fetchall()
    store.close()
    return {kind: n for kind, n in rows}


def test_report_counts_the_error_kinds_beside_the_terminations(seeded, capsys):
    by_hand = with_error_kinds(seeded)
    assert by_hand == {"context_overflow": 2, "api_errors_at_cap": 1}
    as_json = batch(capsys, "report", "heur-s0", "--db", str(seeded), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    assert report["error_kinds"] == by_hand and list(report["error_kinds"]) == ["context_overflow", "api_errors_at_cap"]
    assert report["terminations"]["error"] == 2 and report["terminations"]["max_turns"] == 1
    table = batch(capsys, "report", "heur-s0", "--db", str(seeded))
    line = next(x for x in table.stdout.splitlines() if x.startswith("terminations:"))
    assert "error kinds: context_overflow 2, api_errors_at_cap 1" in line
    as_csv = batch(capsys, "report", "heur-s0", "--db", str(seeded), "--format", "csv")
    rows = [r for r in csv.DictReader(io.StringIO(as_csv.stdout)) if r["axis"] == "error_kinds"]
    assert {r["metric"]: (int(r["numerator"]), int(r["denominator"])) for r in rows} == {
        k: (n, report["n"]) for k, n in by_hand.items()
    }


def test_a_run_without_error_kinds_says_nothing_of_them(seeded, capsys):
    table = batch(capsys, "report", "heur-s0", "--db", str(seeded))
    assert table.returncode == 0 and "error kinds" not in table.stdout
    assert (
        json.loads(batch(capsys, "report", "heur-s0", "--db", str(seeded), "--format", "json").stdout)["error_kinds"]
        == {}
    )


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_the_diagnostics_tab_lists_the_error_kinds_under_the_endings(seeded, size):
    by_hand = with_error_kinds(seeded)
    app = make_app()
    async with app.run_test(size=size) as pilot:
        app.open_run("heur-s0", tab="diagnostics")
        await settle(pilot, app)
        panel = app.screen.query_one("#diag-failures")
        console = Console(width=size[0], record=True, file=io.StringIO())
        console.print(panel.content)
        rows = [[c.strip() for c in line.split("│")] for line in console.export_text().splitlines()[3:]]
        shown = [row[0] for row in rows if row[0]]
        assert shown[:7] == [
            "answer",
            "budget",
            "token_limit",
            "max_turns",
            "error",
            "context_overflow",
            "api_errors_at_cap",
        ]
        assert {row[0]: int(row[1]) for row in rows if row[0] in by_hand} == by_hand
        caption = Console(width=400, record=True, file=io.StringIO())
        caption.print(app.screen.query_one("#diag-axes").content)
        assert "error kinds: context_overflow 2, api_errors_at_cap 1" in caption.export_text()
