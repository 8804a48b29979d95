"""The Live screen's plain model (`workbench.tui.forms.live`), without a terminal: the progress line and the state
in words, the meters' widths for the table's width, LAST CALL's width and an episode row's words.

The Pilot tests (tests/tui/test_live_cursor.py, test_live_store.py, test_pilot.py, the snapshots) keep what only the
screen shows: the table drawn and refreshed, the meters' colours, the cursor and the followed transcript."""

from __future__ import annotations

from dataclasses import replace

from workbench.tui.forms.live import (
    BARS,
    NARROW_BARS,
    WIDE,
    bar_widths,
    item_words,
    last_call_width,
    last_call_words,
    stats_words,
    status_words,
    verdict,
)
from workbench.tui.monitor import EpisodeRow, Snapshot
from workbench.views.campaign import duration

SNAPSHOT = Snapshot(
    name="run",
    status="running",
    done=12,
    planned=60,
    correct=6,
    new_done=12,
    elapsed_s=75.0,
    rate=1.25,
    eta_s=3725.0,
    cost_usd=None,
    terminations={},
    errors=(),
    episodes=(),
    message=None,
    version=1,
)


def test_the_progress_line_says_done_accuracy_rate_eta_elapsed_and_cost():
    assert stats_words(replace(SNAPSHOT, rate=1.5)) == (
        " 12/60  ·  acc 0.500  ·  1.5 ep/s  ·  ETA 1h02m  ·  elapsed 1m15s  ·  cost —"
    )
    ended = replace(SNAPSHOT, status="done", rate=None, cost_usd=0.0123)  # no ETA once ended; no rate measured
    assert stats_words(ended) == " 12/60  ·  acc 0.500  ·  —  ·  ETA —  ·  elapsed 1m15s  ·  cost $0.01"
    assert duration(3725.0) == "1h02m" and duration(75.0) == "1m15s" and duration(None) == "—"


def test_the_state_in_words_with_the_source_s_message():
    assert status_words(SNAPSHOT) == "▶ running"
    assert status_words(replace(SNAPSHOT, status="starting", message="reading")) == "… starting: reading"
    assert status_words(replace(SNAPSHOT, status="failed", message="boom")) == "✗ failed  boom"
    assert status_words(replace(SNAPSHOT, status="odd")) == "odd"


def test_the_meters_narrow_below_wide_tables_and_last_call_takes_8_to_48_cells():
    assert bar_widths(WIDE) == BARS and bar_widths(WIDE - 1) == NARROW_BARS
    assert [last_call_width(room) for room in (0, 8, 30, 48, 200)] == [8, 8, 30, 48, 48]


def test_an_episode_row_s_item_and_last_call():
    row = EpisodeRow(("mt-0007", 0), 3, 12, 900, 0, "read_section(p, C)", 5)
    assert item_words(row.key) == "mt-0007" and item_words(("mt-0007", 2)) == "mt-0007 r2"
    assert last_call_words(row) == "read_section(p, C)"
    done = replace(row, finished=True, correct=True, termination="answer")
    assert last_call_words(done) == "finished: answer, correct ✓"
    assert last_call_words(replace(row, finished=True)) == "finished: ?, wrong ✗"
    assert verdict(None) == "wrong ✗"
