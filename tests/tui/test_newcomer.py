"""Slips a newcomer meets in the first hour (issue 26), driven through the real app with Pilot."""

from __future__ import annotations

import pytest
from textual.widgets import DataTable, Input, Select
from tui_support import make_app, settle

from tests.cli_inprocess import batch
from tests.openai_server import FakeOpenAI, tool_reply
from workbench.tui.screens.launch import LaunchScreen

SIZE = (120, 36)


def _answer(req, n):
    return tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))


@pytest.fixture
def local_llm_run(tmp_path, monkeypatch, capsys):
    """An interrupted LLM run against the local test server (no API key anywhere), in this test's store."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    db = tmp_path / "store.sqlite"
    with FakeOpenAI(_answer) as srv:
        done = batch(
            capsys,
            "run",
            "--agent",
            "llm",
            "--model",
            "openai/m",
            "--base-url",
            srv.url,
            "--client",
            "native",
            "--temperature",
            "0.3",
            "--limit",
            "2",
            "--workers",
            "1",
            "--max-turns",
            "7",
            "--question-type",
            "single-target",
            "--run",
            "local",
            "--db",
            str(db),
            "--quiet",
        )
        assert done.returncode == 0, done.stderr
        import sqlite3

        with sqlite3.connect(db) as conn:  # as a killed run leaves it: its last episode lost
            last = conn.execute("SELECT MAX(id) FROM trajectories").fetchone()[0]
            conn.execute("DELETE FROM steps WHERE trajectory_id = ?", (last,))
            conn.execute("DELETE FROM trajectories WHERE id = ?", (last,))
            conn.execute("UPDATE runs SET status = 'interrupted'")
        yield srv


async def test_R_fills_the_relaunch_form_from_every_stored_setting_and_starts_without_a_key(local_llm_run):
    """R left Base URL and Client at their defaults (the form read them from the identity's options, which never
    hold them), so Start on a local-server run failed with "no API key"."""
    srv = local_llm_run
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        home.query_one(DataTable).move_cursor(row=home.shown.index("local"))
        await pilot.press("R")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, LaunchScreen)
        assert form.query_one("#base_url", Input).value == srv.url
        assert form.query_one("#client", Select).value == "native"
        assert form.query_one("#model", Input).value == "openai/m"
        assert form.query_one("#max_turns", Input).value == "7"
        assert form.query_one("#limit", Input).value == "2"
        assert form.query_one("#question_type", Select).value == "single-target"
        assert form.form.options.get("temperature") == 0.3
        asked = len(srv.requests)
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        run = app.store.run("local")
        assert run["status"] == "done" and len(app.store.trajectories(run["id"])) == 2, run["status"]
        assert len(srv.requests) > asked  # the lost episode was played against the stored server


async def test_ctrl_c_says_how_to_quit_in_plain_words(seeded):
    """Textual's hint is written in markup ("Press [b]q[/b] to quit the app"), and every toast here is plain text:
    the brackets showed."""
    from tests.textual_private import notifications

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+c")
        await pilot.pause()
        shown = [n.message for n in notifications(app)]
        assert any(m.startswith("Press q to quit") for m in shown), shown
        assert not any("[b]" in m or "[/b]" in m for m in shown)


def test_every_hint_names_the_command_that_exists():
    """The Scaling screen's empty hint said `agenthop --batch scale …`: the only command is agenthop-tui. (`agenthop`
    alone is also the Inspect task's name, which is no command: only `agenthop` followed by a flag or a subcommand
    is a hint that names a command that does not exist.)"""
    import re
    from pathlib import Path

    from workbench.cli.parser import build_parser

    root = Path(__file__).resolve().parents[2]
    commands = "|".join(re.escape(c) for c in sorted(_subcommands(build_parser()), key=len, reverse=True))
    wrong = re.compile(rf"(?<![\w/.-])agenthop\s+(?:--?[a-z]|(?:{commands})\b)")
    assert wrong.search("run `agenthop --batch scale sequential`") and wrong.search("agenthop report x")
    assert not wrong.search("logs of the agenthop task") and not wrong.search("agenthop-tui --batch run")
    found = [
        f"{path.relative_to(root)}:{n}"
        for package in ("workbench", "sandbox", "storage", "stats")
        for path in (root / package).rglob("*.py")
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if wrong.search(line)
    ]
    assert found == []


def _subcommands(parser) -> set[str]:
    """Every subcommand name the CLI's parser knows, at any depth."""
    import argparse

    names: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                names.add(name)
                names |= _subcommands(sub)
    return names


async def test_the_empty_scaling_screen_names_agenthop_tui():
    from workbench.tui.screens.scaling import ScalingScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.action_scaling()
        await settle(pilot, app)
        screen = app.screen
        assert isinstance(screen, ScalingScreen)
        shown = " ".join(str(w.render()) for w in screen.query("Static"))
        assert "agenthop-tui --batch scale sequential" in shown


async def test_e_exports_what_the_cli_exports_with_the_usual_permissions(seeded, tmp_path, capsys, monkeypatch):
    """The TUI's `e` wrote JSONL without steps by default while `export --format jsonl` includes them, and both
    wrote files -rw------- under umask 022 (the temporary file's mode, kept by the rename)."""
    import os
    import stat

    os.umask(0o022)
    tui_file, cli_file = tmp_path / "tui.jsonl", tmp_path / "cli.jsonl"
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        home.query_one(DataTable).move_cursor(row=home.shown.index("heur-s0"))
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("#export-path", Input).value = str(tui_file)
        await pilot.press("enter")  # the defaults, as a newcomer leaves them
        await settle(pilot, app)
    done = batch(capsys, "export", "heur-s0", "--format", "jsonl", "--out", str(cli_file), "--db", str(seeded))
    assert done.returncode == 0, done.stderr
    assert tui_file.read_text() == cli_file.read_text() and '"steps": [' in tui_file.read_text()
    for path in (tui_file, cli_file):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644, oct(path.stat().st_mode)


async def test_the_live_screen_shows_a_scripted_agents_tokens_as_not_measured(tmp_path):
    """TOKENS read `0/200K` for a heuristic run, whose agent calls no model: "—", as every other view says."""
    from workbench.tui.screens.live import LiveScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        form.query_one("#limit", Input).value = "2"
        form.query_one("#workers", Input).value = "1"
        await pilot.pause()
        await pilot.press("ctrl+r")
        await settle(pilot, app)
        live = app.screen
        assert isinstance(live, LiveScreen)
        live.refresh_view()
        table = live.query_one(DataTable)
        cells = [str(table.get_cell_at((row, 4))) for row in range(table.row_count)]
        assert cells and all(c.strip() == "— not measured" for c in cells), cells


@pytest.fixture
def tall_plateau(capsys) -> dict:
    """A plateau whose close accuracies drew a figure ~75 rows tall (the general-agentbench fixture)."""
    import json
    from pathlib import Path

    scores = Path(__file__).resolve().parents[1] / "data" / "general-agentbench-sequential.json"
    done = batch(
        capsys,
        "scale",
        "plateau",
        "--scores",
        str(scores),
        "--study",
        "Qwen3-235B_mcpbench_distraction_all_sequential",
        "--format",
        "json",
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_the_scaling_screens_plot_fits_the_terminal(tall_plateau):
    from functools import partial

    from workbench.tui.screens.scaling import ScalingScreen
    from workbench.tui.widgets.plot import PlotView
    from workbench.views.figures import plateau_figure

    app = make_app()
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.pause()
        app.push_screen(ScalingScreen())
        await settle(pilot, app)
        plot = app.screen.query_one(PlotView)
        plot.display = True
        plot.show(partial(plateau_figure, tall_plateau))
        await pilot.pause()
        assert 12 <= len(plot.text.plain.splitlines()) <= 40


def test_the_workbench_refuses_to_draw_into_a_pipe(tmp_path):
    """`agenthop-tui | cat` ran the TUI at a fixed 80x24 into the pipe."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "--db", str(tmp_path / "s.sqlite")],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            cwd=root,
            env=dict(os.environ),
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the TUI started with its output going into a pipe")
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == "error: the workbench needs a terminal; use --batch for scripts\n"
    assert not (tmp_path / "s.sqlite").exists()
    helped = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "--help"], capture_output=True, text=True, timeout=30, cwd=root
    )
    assert helped.returncode == 0 and "agenthop-tui" in helped.stdout  # --help still prints into a pipe


async def test_home_and_end_move_the_runs_cursor_and_deleting_the_last_run_keeps_the_position(seeded):
    """Home/End (listed by ?) did nothing on the runs list; deleting the last row put the cursor on the first run,
    so a following `r` renamed another run than the one now under the cursor's old place."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        home = app.screen
        table = home.query_one(DataTable)
        table.focus()
        last = len(home.shown) - 1
        await pilot.press("end")
        assert table.cursor_row == last
        await pilot.press("home")
        assert table.cursor_row == 0
        await pilot.press("end")
        doomed = home.current_name()
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("y")
        await settle(pilot, app)
        assert doomed not in home.shown and len(home.shown) == last
        assert table.cursor_row == last - 1 and home.current_name() == home.shown[-1]


async def test_the_launch_forms_model_and_base_url_show_a_whole_model_string_and_url_at_160_columns():
    """Model showed ~19 characters and Base URL ~15 even at 160 columns (the form stayed 110 wide)."""
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        form = app.screen
        model, url = form.query_one("#model", Input), form.query_one("#base_url", Input)
        assert model.content_size.width >= len("openrouter/anthropic/claude-sonnet-4.5")
        assert url.content_size.width >= len("http://127.0.0.1:8000/v1")


def test_a_clipped_name_keeps_its_end():
    """Names that differ at the end (`openai_fake-model-a`, `…-b`) were clipped to the same `openai_fake-model-…`."""
    from workbench.tui.widgets.plaintext import clip_middle

    names = ["openai_fake-model-builtin", "openai_fake-model-builtin-2", "openai_fake-model-builtin-3"]  # defaults
    clipped = [clip_middle(n, 20) for n in names]
    assert len(set(clipped)) == 3 and all(len(c) == 20 and "…" in c for c in clipped)
    assert clip_middle("short", 20) == "short" and clip_middle("abcdef", 1) == "…"


async def test_the_runs_list_at_80_columns_tells_long_names_apart(seeded):
    from storage import Store

    store = Store(seeded)
    store.rename_run("heur-s0", "openai_fake-model-long-builtin")  # the default names of three runs alike
    store.rename_run("random-s1", "openai_fake-model-long-builtin-2")
    store.close()
    app = make_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        names = [str(table.get_cell_at((row, 0))) for row in range(table.row_count)]
        long = [n for n in names if n.startswith("openai")]
        assert len(long) == 2 and long[0] != long[1] and {n[-3:] for n in long} != {long[0][-3:]}


@pytest.fixture
def plateau_group(tmp_path, capsys):
    """A sequential group `g` of two points levels (a tiny one: only its imports are under test)."""
    db = tmp_path / "scaling.sqlite"
    done = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "6,30",
        "--run",
        "g",
        "--limit",
        "4",
        "--db",
        str(db),
        "--quiet",
        "--boot",
        "200",
    )
    assert done.returncode == 0, done.stderr
    return db


def test_the_first_plateau_on_the_scaling_screen_imports_no_scipy(plateau_group):
    """The first open of the Scaling screen took 1.3-2 s, 0.75 s of it importing scipy.stats for a normal quantile
    and tail, and 0.08 s the runner for a type name; the TUI's plateau now needs neither."""
    import subprocess
    import sys
    from pathlib import Path

    code = """
import sys
from pathlib import Path
from workbench.service.scaling.results import compute_plateau
result = compute_plateau(Path(sys.argv[1]), "g", {"n_boot": 200})
assert result["transitions"], result
print("HEAVY", sorted({m.split(".")[0] for m in sys.modules if m.split(".")[0] == "scipy"}
                     | {m for m in sys.modules if m == "sandbox.runner"}))
"""
    proc = subprocess.run(
        [sys.executable, "-c", code, str(plateau_group)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[2],
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY []" in proc.stdout, proc.stdout


async def test_a_neighbourhood_label_too_long_for_its_pane_ends_in_an_ellipsis():
    """Labels were cut at the pane's edge without a mark that there is more."""
    from rich.style import Style
    from test_items_screen import _big_view
    from textual.app import App

    from workbench.service.neighbourhood import Neighbourhood
    from workbench.tui.widgets.citations import NeighbourhoodTree

    class TreeApp(App):
        CSS = "NeighbourhoodTree { width: 30; }"

        def compose(self):
            yield NeighbourhoodTree()

    app = TreeApp()
    async with app.run_test(size=SIZE) as pilot:
        tree = app.query_one(NeighbourhoodTree)
        tree.show(Neighbourhood(_big_view()))
        await pilot.pause()
        node = tree.cursor_node
        depth, up = 0, node.parent
        while up is not None:
            depth, up = depth + 1, up.parent
        label = tree.render_label(node, Style(), Style())
        room = tree.scrollable_content_region.width - depth * tree.guide_depth
        assert node.label.cell_len > room  # too long for the pane
        assert label.cell_len <= room and label.plain.endswith("…"), (label.plain, room)


async def test_the_diagnostics_title_and_terminations_take_one_line_each_at_160_columns(seeded):
    """The report's title and its terminations line were the axes table's title and caption, wrapped to the
    table's width (about 60 cells) even at 160 columns."""
    from rich.console import Console

    from storage import Store
    from workbench.tui.widgets.diagnostics import DiagnosticsPanel
    from workbench.views.report import report_table

    store = Store(seeded)
    store.rename_run("heur-s0", "heuristic-builtin-full-points-30-turns-20-seed-0-first-sweep")  # long, as names are
    store.close()
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.pause()
        app.open_run("heuristic-builtin-full-points-30-turns-20-seed-0-first-sweep", tab="diagnostics")
        await settle(pilot, app)
        report = app.screen.query_one(DiagnosticsPanel).report
        axes = app.screen.query_one("#diag-axes")
        console = Console(width=axes.content_size.width, record=True, color_system=None)
        console.print(axes.content)
        lines = console.export_text().splitlines()
    title = f"heuristic-builtin-full-points-30-turns-20-seed-0-first-sweep · {report['agent']} · {report['dataset']} · n={report['n']}"
    caption = report_table(report).caption.plain
    assert len(title) < 150 and 60 < len(caption) < 150  # each fits a line at 160 columns
    assert any(title in line for line in lines), "\n".join(lines)
    assert any(caption in line for line in lines), lines


async def test_the_runs_list_says_unpriced_as_the_cli_does(local_llm_run, seeded_store_file):
    """The runs list said "—" for a model run without prices, where `runs` and the reports say "unpriced" ("—" is
    a scripted agent's cost, never measured)."""
    app = make_app()
    async with app.run_test(size=(160, 36)) as pilot:
        await pilot.pause()
        home = app.screen
        table = home.query_one(DataTable)
        cost = str(table.get_cell("local", "cost")).strip()  # by its key: DATA shows only while datasets differ
        assert cost == "unpriced"
