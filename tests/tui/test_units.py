"""Pure parts of the TUI: transitions, config TOML, meters, monitor, wrapping, marks, form validation."""

from __future__ import annotations

import itertools
import math
import tomllib
from dataclasses import replace
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.records import LedgerState, Step
from workbench.tui import config
from workbench.tui.forms.launch import default_name, validate
from workbench.tui.forms.launch_fields import LaunchFields
from workbench.tui.monitor import RunMonitor
from workbench.tui.widgets.itempane import options_text
from workbench.tui.widgets.meters import bar, level
from workbench.tui.widgets.plaintext import sanitize, wrap
from workbench.tui.widgets.transcript import Gold, build_entries, group_turns, mark

toml_scalar = st.one_of(
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.text(max_size=20),
    st.floats(allow_nan=False, allow_infinity=False),
)
toml_key = st.text(min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        toml_key,
        st.one_of(
            toml_scalar, st.lists(st.text(max_size=5), max_size=3), st.dictionaries(toml_key, toml_scalar, max_size=4)
        ),
        max_size=5,
    )
)
def test_toml_writer_round_trips(data):
    assert tomllib.loads(config.dumps(data)) == data


def test_remember_theme_keeps_other_tables(tmp_path):
    path = tmp_path / "state.toml"
    path.write_text('[audit]\nreviewer = "ana"\n[ui]\ntheme = "x"\nother = 1\n')
    config.remember_theme(path, "agenthop-light")
    data = tomllib.loads(path.read_text())
    assert data == {"audit": {"reviewer": "ana"}, "ui": {"theme": "agenthop-light", "other": 1}}
    keymap, warnings = config.keymap(data | {"keys": {"a": "x, y", "b": 3}})
    assert keymap == {"a": "x,y"} and len(warnings) == 1


def test_what_the_app_remembers_wins_over_the_config_file_which_wins_over_defaults(monkeypatch):
    monkeypatch.setenv("USER", "login")
    cfg = {"ui": {"theme": "nord"}, "audit": {"reviewer": "from-config"}}
    state = {"ui": {"theme": "agenthop-light"}, "audit": {"reviewer": " ana "}}
    assert (config.theme(cfg, state), config.reviewer(cfg, state)) == ("agenthop-light", "ana")
    assert (config.theme(cfg, {}), config.reviewer(cfg, {})) == ("nord", "from-config")
    assert (config.theme({}, {"ui": {"theme": "  "}}), config.reviewer({}, {})) == (None, "login")


def test_meter_levels_at_70_and_90_percent():
    assert [level(u, 30) for u in (0, 20, 21, 26, 27, 30, 31)] == ["ok", "ok", "warn", "warn", "over", "over", "over"]
    assert level(0, 0) == "ok" and level(1, 0) == "over"
    filled, empty = bar(15, 30, 10)
    assert len(filled) + len(empty) == 10 and filled == "█████"


def _step(i, turn, kind="tool", name="read_section", **kw):
    return Step(
        index=i,
        turn=turn,
        kind=kind,
        ledger=LedgerState(turn, kw.pop("used", 0), 30, kw.pop("tokens", 0), 0),
        tool_name=name if kind == "tool" else None,
        **kw,
    )


def test_monitor_throughput_eta_and_in_flight_rows():
    now = [100.0]
    mon = RunMonitor("r", {"budget": 30}, clock=lambda: now[0])
    mon.feed(SimpleNamespace(kind="started", done=2, planned=10, correct=1))
    mon.feed(SimpleNamespace(kind="step", item_id="a", replicate=0, step=_step(0, 1, used=5)))
    mon.feed(SimpleNamespace(kind="step", item_id="b", replicate=0, step=_step(0, 1, used=1)))
    now[0] = 104.0
    traj = SimpleNamespace(termination="answer", correct=True, error=None)
    mon.feed(
        SimpleNamespace(kind="trajectory", item_id="a", replicate=0, trajectory=traj, done=3, planned=10, correct=2)
    )
    snap = mon.snapshot()
    assert snap.rate == 0.25 and snap.eta_s == 28.0 and snap.accuracy == 2 / 3
    assert [e.key for e in snap.episodes] == [("b", 0)] and snap.terminations["answer"] == 1
    steps, finished, _ = mon.steps(("a", 0))
    assert finished and len(steps) == 1
    mon.finish("done")
    assert mon.snapshot().status == "done" and mon.snapshot().episodes == ()


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300), st.integers(1, 40))
def test_wrap_keeps_every_character_and_width(text, width):
    clean = sanitize(text)
    lines = wrap(clean, width)
    from rich.cells import cell_len

    assert all(cell_len(line) <= max(width, 2) for line in lines)
    assert "".join(lines).replace(" ", "") == clean.replace("\n", "").replace(" ", "")


def test_sanitize_drops_terminal_control():
    assert sanitize("a\x1b[31mb\rc\x00\td") == "a\ufffd[31mbc\ufffd    d"


def test_marks_gold_wrong_rejected_nudge():
    gold = Gold(frozenset({"g"}), frozenset({"1.1"}), True)
    read = {
        "kind": "tool",
        "tool_name": "read_section",
        "delivered": 1,
        "status": "ok",
        "arxiv_id": "9.9",
        "section_index": 0,
    }
    assert mark({**read, "paper_id": "g"}, gold) == "gold"
    assert mark({**read, "paper_id": "x", "arxiv_id": "1.1"}, gold) == "gold"
    assert mark({**read, "paper_id": "x"}, gold) == "wrong"
    assert mark({**read, "paper_id": "x"}, Gold()) is None
    assert mark({**read, "status": "rejected", "delivered": 0}, gold) == "rejected"
    assert mark({"kind": "nudge"}, gold) == "nudge"


def test_options_pane_marks_gold_distractors_and_choices():
    """One rendering of the options: hidden marks until revealed; an empty or missing distractor type reads
    'distractor'; a mark goes before the text; `width` clips the text."""
    from rich.style import Style

    item = SimpleNamespace(
        options=("alpha", "beta", "gamma", "delta"),
        correct_index=2,
        distractor_types=("near-miss", "", "correct", "topic\x1b[31m"),
    )
    plain = Style()
    assert options_text(item, False, plain, plain).plain == "\n(A) alpha\n(B) beta\n(C) gamma\n(D) delta"
    shown = options_text(item, True, plain, plain, lambda i: ("◀ A ", plain) if i == 1 else None, width=4)
    assert shown.plain == (
        "\n(A) ○ near-miss alp…\n(B) ○ distractor ◀ A beta\n(C) ● gold gam…\n(D) ○ topic\ufffd[31m del…"
    )  # the escape is neutralised
    item.distractor_types = None
    assert "○ distractor alpha" in options_text(item, True, plain, plain).plain


def test_recorded_caps_fall_back_to_the_protocols():
    from sandbox.records import Caps, recorded_limits

    assert recorded_limits(None) == (30, 20, 200_000)  # profile agenthop-v1
    assert recorded_limits({"budget": 12, "max_tokens_total": 5000}) == (12, 20, 5000)
    assert recorded_limits(Caps(budget=7, max_turns=3, max_tokens_total=99).as_dict()) == (7, 3, 99)
    new = LaunchFields()
    assert (new.budget, new.max_turns, new.max_tokens) == ("30", "20", "200000")


def test_entries_group_by_turn_with_separators():
    steps = [_step(0, 1, "assistant", text="hi"), _step(1, 1), _step(2, 2, "nudge", text="go on")]
    entries = build_entries(steps)
    assert [e.kind for e in entries] == ["turn", "assistant", "tool", "turn", "nudge"]
    assert [len(g) for g in group_turns([{"turn": 1}, {"turn": 1}, {"turn": 2}])] == [2, 1]


def test_launch_validation():
    ok = validate(LaunchFields(name="x", limit="3", workers="2"), set(), llm_ok=False)
    assert ok.spec is not None and ok.spec.limit == 3 and ok.spec.caps.budget == 30 and ok.spec.dataset == "builtin"
    bad = validate(
        LaunchFields(name="", budget="-1", max_turns="x", agent="llm", dataset_kind="release", path="/nonexistent"),
        set(),
        llm_ok=False,
    )
    assert bad.spec is None
    assert set(bad.errors) >= {"name", "budget", "max_turns", "agent", "model", "path"}
    exists = validate(LaunchFields(name="x"), {"x"}, llm_ok=False)
    assert exists.spec is not None and exists.notes
    assert default_name("heuristic", "builtin", "", {"heuristic-builtin"}) == "heuristic-builtin-2"


def test_llm_launch_shows_a_cost_estimate_before_starting():
    values = LaunchFields(agent="llm", model="openai/gpt-4.1", limit="10", name="x")
    result = validate(values, set(), llm_ok=True)
    note = next(n for n in result.notes if n.startswith("cost"))
    assert "10 episodes" in note and "$" in note and "gpt-4.1 prices" in note
    unknown = validate(replace(values, model="hosted_vllm/mine"), set(), llm_ok=True)
    assert any("unpriced" in n for n in unknown.notes)


def test_launch_form_bounds_and_item_ids(builtin_cache):
    huge = validate(
        LaunchFields(name="x", budget="999999999999999999999", seed="-3", workers="300"), set(), llm_ok=False
    )
    assert huge.spec is None and huge.errors == {
        "budget": "points: must be at most 100,000",
        "seed": "seed: must be at least 0",
        "workers": "workers: must be at most 256",
    }
    # the built-in benchmark is generated in the cache: ids are checked against it before launch
    unknown = validate(LaunchFields(name="x", ids="st_0001, zz_9999"), set(), llm_ok=False, cache_dir=builtin_cache)
    assert unknown.spec is None and unknown.errors == {"ids": "unknown item id(s): zz_9999"}
    known = validate(LaunchFields(name="x", ids="st_0001, mt_0002"), set(), llm_ok=False, cache_dir=builtin_cache)
    assert known.spec is not None and known.spec.item_ids == ("st_0001", "mt_0002")
    empty = validate(
        LaunchFields(name="x", ids="st_0001", question_type="multi-target"),
        set(),
        llm_ok=False,
        cache_dir=builtin_cache,
    )
    assert empty.errors == {"ids": "the slice selects no items"}


def test_cost_estimate_counts_the_slice(builtin_cache, tmp_path):
    """The built-in benchmark has 30 single-target and 30 multi-target items (of each depth, 15)."""
    llm = LaunchFields(agent="llm", model="openai/gpt-4.1", name="x")
    store = tmp_path / "none.sqlite"

    def note(values, cache=builtin_cache, existing=frozenset()):
        result = validate(values, set(existing), llm_ok=True, cache_dir=cache, store_path=store)
        return next(n for n in result.notes if n.startswith("cost"))

    assert note(replace(llm, question_type="single-target")).startswith("cost ≈ 30 episodes")
    assert note(replace(llm, question_type="multi-target", depth="2", replicates="3")).startswith("cost ≈ 45 episodes")
    assert note(replace(llm, limit="7")).startswith("cost ≈ 7 episodes")
    # before the dataset can be read the slice is not counted: an upper bound, said so
    assert note(replace(llm, question_type="single-target"), cache=tmp_path / "empty").startswith("cost at most 60 ep")
    assert "≤ $" in note(replace(llm, question_type="single-target"), cache=tmp_path / "empty")
    # resuming skips finished episodes: also an upper bound
    assert note(llm, existing={"x"}).startswith("cost at most 60 episodes")


def test_failure_message_shows_the_errors_inside_an_exception_group():
    from workbench.tui.jobs import describe

    group = ExceptionGroup(
        "unhandled errors in a TaskGroup",
        [OverflowError("Python int too large to convert to SQLite INTEGER"), KeyError("x")],
    )
    assert describe(group) == "OverflowError: Python int too large to convert to SQLite INTEGER; KeyError: 'x'"
    assert describe(ValueError("plain")) == "ValueError: plain"


def test_a_stored_run_comes_back_as_the_form_values_that_resume_it(seeded):
    from storage import Store
    from workbench.tui.forms.relaunch import run_values

    store = Store(seeded)
    for name in ("heur-s0", "oracle-nosearch", "scripted-[b]llm[/b]", "random-s1"):
        run = store.run(name)
        values, options = run_values(run)
        spec = validate(values, set(), llm_ok=True, options=options).spec
        assert spec.name == name and spec.identity(run["dataset_fingerprint"]) == run["identity"], name
        assert spec.limit == run["config"]["slice"]["limit"] and spec.workers == run["config"]["workers"]
    assert run_values(store.run("oracle-nosearch"))[0].ablation == "no-search"
    store.conn.execute(
        "UPDATE runs SET caps = json_set(caps, '$.costs.read_section', 3), "
        "identity = json_set(identity, '$.caps.costs.read_section', 3) WHERE name = 'random-s1'"
    )
    import pytest

    with pytest.raises(ValueError, match="caps differ"):
        run_values(store.run("random-s1"))
    store.conn.execute("UPDATE runs SET agent = 'replay' WHERE name = 'heur-s0'")
    with pytest.raises(ValueError, match="replay agent"):
        run_values(store.run("heur-s0"))
    store.close()


@settings(max_examples=150, deadline=None)
@given(st.text(alphabet=st.sampled_from("ab cd\n\ufffd漢é"), max_size=400), st.integers(1, 30), st.integers(1, 6))
def test_wrap_head_is_the_head_of_the_whole_wrap(text, width, n):
    from workbench.tui.widgets.plaintext import wrap_head

    whole = wrap(text, width)
    assert wrap_head(text, width, n) == (whole[:n], len(whole) > n)


def test_a_folded_70k_result_is_not_wrapped_whole_until_unfolded():
    from workbench.tui.widgets.transcript import FOLD_LINES, Entry

    body = ("a\ufffdb " * 17_500)[:70_000]  # U+FFFD: the slow (chop_cells) wrapping path
    entry = Entry("tool", 1, [("▸ read_section(x)", "transcript--call")], body, 1)
    assert entry.line_count(80) == 1 + FOLD_LINES + 1 and entry._wrapped is None
    assert entry.fold_note(78) == "⋯ 70,000 characters in all · enter unfolds"
    assert entry.head(78) == (wrap(body, 78)[:FOLD_LINES], True)
    entry.folded = False
    assert entry.line_count(80) == 1 + len(wrap(body, 78))
    short = Entry("tool", 1, [("x", "c")], "one\ntwo\nthree\nfour\nfive\nsix", 2)
    assert short.line_count(80) == 1 + FOLD_LINES + 1 and short.fold_note(78) == "⋯ 3 more lines · enter unfolds"


def test_a_narrow_header_shortens_the_arguments_and_keeps_cost_and_mark():
    from rich.cells import cell_len

    from workbench.tui.widgets.transcript import build_entries

    gold = Gold(frozenset({"g"}), frozenset(), True)
    step = {
        "kind": "tool",
        "turn": 3,
        "idx": 4,
        "tool_name": "read_section",
        "status": "ok",
        "delivered": 1,
        "arxiv_id": "1.1",
        "section_index": 2,
        "hop": 2,
        "paper_id": "g",
        "cost": 5,
        "tool_args": {"paper_id": "g", "section": "C"},
        "text": "x",
    }
    entry = build_entries([step], gold, {"g": "A Very Long Title Of The Gold Paper That Goes On"})[-1]
    assert entry.plain_header == "▸ read_section(«A Very Long Title Of The Go…», C)  −5  ★ gold  · hop 2"
    for width in (70, 50, 44):
        fitted = "".join(text for text, _ in entry.fitted_header(width))
        assert cell_len(fitted) <= width and fitted.endswith(", C)  −5  ★ gold  · hop 2"), width
    assert "".join(t for t, _ in entry.fitted_header(200)) == entry.plain_header


def test_monitor_notes_until_started_and_keeps_finished_episodes_followable():
    mon = RunMonitor("r", {"budget": 30}, clock=lambda: 1.0)
    mon.note("opening the dataset…")
    assert mon.snapshot().message == "opening the dataset…" and mon.snapshot().status == "starting"
    mon.feed(SimpleNamespace(kind="started", done=0, planned=3, correct=0))
    assert mon.snapshot().message is None
    for item in ("a", "b"):
        mon.feed(SimpleNamespace(kind="step", item_id=item, replicate=0, step=_step(0, 1, used=5)))
    traj = SimpleNamespace(termination="budget", correct=False, error=None)
    mon.feed(
        SimpleNamespace(kind="trajectory", item_id="a", replicate=0, trajectory=traj, done=1, planned=3, correct=0)
    )
    mon.finish("interrupted")
    snap = mon.snapshot()
    assert snap.episodes == () and [(e.key, e.finished, e.termination, e.correct) for e in snap.finished] == [
        (("a", 0), True, "budget", False)
    ]
    assert mon.steps(("a", 0))[1] is True


def test_corpus_cache_falls_back_to_the_import_of_a_moved_release_and_retries_failures(tmp_path):
    from sandbox import synth
    from sandbox.datasets import open_dataset
    from workbench.tui.corpora import MOVED_NOTE, RETRY_AFTER_S, CorpusCache

    release, cache = tmp_path / "release", tmp_path / "cache"
    synth.generate(release, seed=5, items=8, papers=60)
    corpus, _ = open_dataset(str(release), cache)
    fingerprint, item_id = corpus.fingerprint, corpus.items[0].id
    corpus.close()
    release.rename(tmp_path / "moved")
    ctx = CorpusCache(cache).item_context(str(release), fingerprint, item_id)
    assert ctx.item is not None and ctx.item.id == item_id and ctx.note == MOVED_NOTE and ctx.titles
    # no copy under that fingerprint: unavailable, said in the TUI's words, remembered for a while
    now = [0.0]
    corpora = CorpusCache(tmp_path / "empty-cache", clock=lambda: now[0])
    ctx = corpora.item_context(str(release), fingerprint, item_id)
    assert ctx.item is None and ctx.note == (
        f"corpus unavailable: the release directory {release} is gone (moved or "
        "deleted) and the corpus cache holds no copy of it; press R to look "
        "again once it is back"
    )
    (tmp_path / "moved").rename(release)
    assert corpora.item_context(str(release), fingerprint, item_id).item is None  # still remembered
    now[0] = RETRY_AFTER_S
    assert corpora.item_context(str(release), fingerprint, item_id).item is not None  # looked again
    corpora.close()


def test_binding_ids_are_read_from_the_source_of_every_screen():
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.config import binding_ids, unknown_keys
    from workbench.tui.screens.launch import LaunchScreen
    from workbench.tui.screens.live import LiveScreen
    from workbench.tui.screens.runs import RunsScreen
    from workbench.tui.screens.stepper import StepperScreen
    from workbench.tui.screens.trajectories import RunScreen
    from workbench.tui.widgets.tables import RunsTable, TrajectoryTable
    from workbench.tui.widgets.transcript import TranscriptView

    declared = {
        b.id
        for cls in (
            WorkbenchApp,
            RunsScreen,
            RunScreen,
            StepperScreen,
            LiveScreen,
            LaunchScreen,
            TranscriptView,
            RunsTable,
            TrajectoryTable,
        )
        for b in cls.BINDINGS
        if b.id
    }
    known = binding_ids()
    assert declared <= known and {"runs.relaunch", "run.filter", "stepper.retry_corpus"} <= known
    assert unknown_keys({"stepper.next": "space", "runs.nonexistent": "x", "run.flter": "f"}, known) == (
        "[keys] run.flter, runs.nonexistent: no such binding id (ignored); ? lists each screen's keys with their ids"
    )
    assert unknown_keys({"stepper.next": "space"}, known) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-2, 2, allow_nan=False), min_size=1, max_size=8), st.integers(2, 40), st.booleans())
def test_a_value_axis_keeps_values_apart_with_even_ticks(values, rows, bars):
    """plotext labelled a tick a hair below zero `-0.000`, put ticks at uneven rows (0.17, 0.35, 0.52 two and
    three rows apart) and drew different values on one row; `value_axis` lays the rows out itself."""
    from workbench.views.axis import MAX_AXIS_ROWS, value_axis

    axis = value_axis(values, rows, bars=bars)
    assert axis.rows <= MAX_AXIS_ROWS and axis.lo <= min(values) + 1e-9 and axis.hi >= max(values) - 1e-9
    assert (axis.rows - 1) % axis.every == 0 and len(axis.ticks) >= 2  # a tick on the bottom and the top row
    labels = axis.labels
    assert not any(label.startswith("-") and float(label) == 0 for label in labels)
    steps = {round(float(b) - float(a), 12) for a, b in itertools.pairwise(labels)}
    assert len(steps) == 1 and steps.pop() > 0  # the labels read evenly, as they are spaced
    distinct = sorted({round(v, 9) for v in values} | ({0.0} if bars else set()))
    span = distinct[-1] - distinct[0]

    def apart(points: list[float]) -> bool:  # far enough apart for MAX_AXIS_ROWS to tell (with room to spare)
        return all(b - a >= span / 20 for a, b in itertools.pairwise(points))

    if apart(distinct):
        assert len({axis.row(v) for v in distinct}) == len(distinct)  # never two values on one row
    if bars and apart(sorted({abs(v) for v in distinct})):
        heights = {abs(v): abs(axis.row(v) - axis.row(0.0)) for v in distinct}
        assert len(set(heights.values())) == len(heights)  # nor two bars of different values equally tall
    if len(distinct) == 1 or (apart(distinct) and axis.rows > rows):  # it grew only because it had to
        assert axis.step <= min((b - a for a, b in itertools.pairwise(distinct)), default=math.inf) * (1 + 1e-9)


def test_a_value_axis_of_a_range_just_below_zero_reads_zero_not_minus_zero():
    from workbench.views.axis import value_axis

    assert value_axis([-0.0004, 0.2996], 12).labels == ["-0.1", "0.0", "0.1", "0.2", "0.3"]


def test_counts_read_in_the_right_number():
    """`visited 1 papers`, `1 items played by people`, `1 pts`: one helper (views.cells.counted) words every count."""
    from workbench.service.reports import separation
    from workbench.views.cells import counted
    from workbench.views.compare import separation_sentence
    from workbench.views.leaderboard import leaderboard_title

    def separating_axis(rows):
        return separation_sentence(separation(rows))

    assert [counted(n, "paper") for n in (0, 1, 2, 1234)] == ["0 papers", "1 paper", "2 papers", "1,234 papers"]
    assert counted(1, "percentage point") == "1 percentage point" and counted(3, "child", "children") == "3 children"
    board = {"dataset": "builtin", "n_items": 1, "rows": [{"rank": 1}]}
    assert " · 1 item played by people · 1 ranked of 1" in leaderboard_title(board)
    rows = [{"axis": "PR st", "delta": -0.63, "p_holm": 0.001}, {"axis": "SR st", "delta": 0.01, "p_holm": 0.01}]
    assert separating_axis(rows).startswith(
        "B retrieves the gold papers 63 percentage points less than A on single-target items"
    )
    rows[0]["delta"] = 0.01
    assert "SR" not in separating_axis(rows) and "1 percentage point more" in separating_axis(rows)


async def test_the_private_textual_state_the_tests_read_is_still_there():
    """An upgrade of Textual that drops one of them fails here, by name, not as a test that waits for nothing."""
    from tests.textual_private import after_refresh_callbacks, filters, notifications
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp(theme="agenthop-dark", home=False)
    async with app.run_test() as pilot:
        app.notify("hello")
        await pilot.pause()
        assert [n.message for n in notifications(app)] == ["hello"]
        assert isinstance(filters(app), list) and isinstance(after_refresh_callbacks(app.screen), list)


def test_launch_form_client_choice_reaches_the_run():
    """The form's Client field is `--client`: auto records nothing (the runner picks), a forced one is kept."""
    values = LaunchFields(agent="llm", model="openai/m", base_url="http://127.0.0.1:9/v1", name="x")
    auto = validate(values, set(), llm_ok=True)
    assert auto.spec is not None and "client" not in auto.spec.agent_options
    forced = validate(replace(values, client="litellm"), set(), llm_ok=True)
    assert forced.spec.agent_options["client"] == "litellm" and forced.spec.identity("f") == auto.spec.identity("f")
    assert validate(replace(values, client="curl"), set(), llm_ok=True).errors == {"client": "client: unknown 'curl'"}
    scripted = validate(LaunchFields(agent="oracle", client="native", name="y"), set(), llm_ok=True)
    assert scripted.spec is not None and scripted.spec.agent_options == {}


async def test_the_app_collects_young_garbage_less_often():
    """The TUI's process raises the collector's first threshold (workbench.tui.app.GC_FIRST_THRESHOLD): at Python's 700 a
    full collection over Textual's and Rich's filled caches froze the screen for up to ~0.1 s every few key presses.
    The test processes set the same threshold for speed (conftest), so Python's default is put back first."""
    import gc

    from workbench.tui.app import GC_FIRST_THRESHOLD, WorkbenchApp

    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        app = WorkbenchApp(theme="agenthop-dark", home=False)
        async with app.run_test() as pilot:
            await pilot.pause()
            assert gc.get_threshold() == (GC_FIRST_THRESHOLD, 10, 10) and GC_FIRST_THRESHOLD > 700
    finally:
        gc.set_threshold(*before)
