"""The agent's own words in the stepper, the split stepper, the Live follow view, the play transcript and the
snapshots: the provider's reasoning marked, every argument in full and folding like a result, markup as plain text,
and `d` from one decision to the next."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tui_support import make_app, settle

from sandbox.records import AssistantTurn, Caps, ToolCall, Usage
from sandbox.words import merge_reasoning
from workbench.service.reports import compare_report
from workbench.tui.screens.compare import SplitStepperScreen
from workbench.tui.screens.stepper import StepperScreen
from workbench.tui.widgets.transcript import FOLD_LINES, REASONING_MARK

REASONING = (
    "The question asks how the cited work initialises its weights. [b]Not[/b] the seed's own method: "
    "the seed only adopts it. So I must find the cited paper among the references, list its sections, "
    "and read the method section; the introduction will only name it. " * 3
).strip()
THINK = (
    "I need both the Torhivulm Parsing paper and its [red]initialisation[/red] section; the seed cites "
    "it in related work. Plan: search for it by name, list its sections, read the method (usually B or C), "
    "then compare the four options word by word, because the distractors differ by one noun each. " * 2
).strip()
QUERY = "Torhivulm Parsing initialisation of weights by gallith layers renispel tokens corsolras " * 2
SUBMIT = (
    "The method section of the cited paper states it in so many words; [i]the other options[/i] "
    "swap the noun (weights, states, tokens) and fail against the text."
)
BUDGET = 15  # think 0, search 1, list 1, two reads 10: the third read is refused


class ThinkingAgent:
    """A scripted model with a long reasoning text, a long think, a long query, a gold and a non-gold read, a
    rejection and a reasoned submit: one decision of each kind."""

    name = "thinking"

    def __init__(self, item):
        self.item = item
        self.turn = 0

    async def act(self, messages, tools):
        self.turn += 1
        seed, gold = self.item.seed_paper_id, self.item.gold_paper_ids[0]
        reasoning, content, call = {
            1: (REASONING, "I'll write down a plan first.", ("think", {"reasoning": THINK})),
            2: ("Search by the method's name.", None, ("search_papers", {"query": QUERY.strip(), "top_k": 5})),
            3: (None, "Listing its sections.", ("list_sections", {"paper_id": gold})),
            4: (None, "Reading (A).", ("read_section", {"paper_id": gold, "section": "A"})),
            5: (None, "And the seed's (A).", ("read_section", {"paper_id": seed, "section": "A"})),
            6: (None, "One more.", ("read_section", {"paper_id": gold, "section": "B"})),
        }.get(
            self.turn,
            (None, "Answering.", ("submit_answer", {"answer": "ABCD"[self.item.correct_index], "reasoning": SUBMIT})),
        )
        return AssistantTurn(
            text=merge_reasoning(content, reasoning),
            reasoning=reasoning,
            tool_calls=[ToolCall(f"c{self.turn}", call[0], call[1])],
            usage=Usage(prompt=2000 * self.turn, completion=300),
            cost_usd=0.001,
        )


@pytest.fixture
def thinking_store(tmp_path, builtin_cache) -> Path:
    """A fresh store (the app's) with two identical runs of the thinking agent on the first built-in item."""
    from sandbox.datasets import open_dataset
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    corpus, _ = open_dataset("builtin", builtin_cache)
    store = Store(tmp_path / "store.sqlite")
    for name in ("thinker-a", "thinker-b"):
        spec = RunSpec(
            name=name,
            dataset="builtin",
            agent="llm",
            model="scripted/thinking",
            limit=1,
            workers=1,
            caps=Caps(budget=BUDGET),
        )
        asyncio.run(Runner(spec, corpus, store, factory=lambda item, rep, attempt: ThinkingAgent(item)).run())
    store.close()
    corpus.close()
    return tmp_path / "store.sqlite"


async def open_stepper(pilot, app) -> StepperScreen:
    run = app.store.run("thinker-a")
    app.push_screen(StepperScreen(run, [t["id"] for t in app.store.trajectories(run["id"])]))
    await settle(pilot, app)
    return app.screen


def on_screen(screen) -> str:
    return "\n".join(screen.view.transcript.visible_lines())


async def test_the_reasoning_is_marked_and_every_argument_reads_in_full(thinking_store):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        stepper = await open_stepper(pilot, app)
        assistant, think = stepper.entries[1], stepper.entries[2]
        assert assistant.lead == ((f"{REASONING_MARK} {REASONING}", "transcript--reasoning"),)
        assert assistant.body == "I'll write down a plan first."  # the content, apart from the reasoning
        assert think.lead == ((f"reasoning: {THINK}", "transcript--args"),)
        assert stepper.view.transcript.cursor_entry is think  # a step lands on the turn's call
        folded = on_screen(stepper)
        assert f"  {REASONING_MARK} The question asks" in folded and "enter unfolds" in folded
        assert THINK[-40:] not in folded.replace("\n  ", " ")
        await pilot.press("enter")  # unfolds the think: all of it, wrapped, the markup as typed
        unfolded = " ".join(line.strip() for line in stepper.view.transcript.visible_lines())
        assert THINK in unfolded and "[red]initialisation[/red]" in unfolded
        assert "Thought recorded" in unfolded or think.body in unfolded  # and its result below it
        await pilot.press("l")  # the search: its query in full under the clipped header
        search = stepper.view.transcript.cursor_entry
        assert "search_papers(" in search.plain_header and "…" in search.plain_header
        assert search.lead == ((f"query: {QUERY.strip()}", "transcript--args"),)  # top_k (5) is whole in the header
        assert search.line_count(stepper.view.transcript._width) == 1 + FOLD_LINES + 1  # folded like a long result
        assert assistant.copy_text.splitlines()[1] == f"{REASONING_MARK} {REASONING}"


async def test_d_steps_from_one_decision_to_the_next_and_back(thinking_store):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        stepper = await open_stepper(pilot, app)
        seen = []
        for _ in range(6):
            await pilot.press("d")
            await pilot.pause()
            entry = stepper.view.transcript.cursor_entry
            seen.append((entry.decision, stepper.view.position + 1))
        # from the think (turn 1): the search and the listing are no decisions
        assert seen == [
            ("gold read", 4),
            ("non-gold read", 5),
            ("rejection", 6),
            ("submit", 7),
            ("submit", 7),
            ("submit", 7),
        ]
        assert "visited 2 papers · 2 reads" in str(stepper.query_one("#item-text").render())  # the item pane follows
        await pilot.press("D", "D")
        assert (stepper.view.transcript.cursor_entry.decision, stepper.view.position + 1) == ("non-gold read", 5)
        await pilot.press("D", "D")
        assert (stepper.view.transcript.cursor_entry.decision, stepper.view.position) == ("think", 0)
        assert stepper.meter_readings()["points"][0] == 0  # the ledger as it stood at the think


async def test_the_split_stepper_shows_the_same_words_and_d_moves_the_focused_side(thinking_store):
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        await settle(pilot, app)
        report = compare_report(app.store, "thinker-a", "thinker-b", n_boot=100)
        app.push_screen(SplitStepperScreen(report, list(report["items"])))
        await settle(pilot, app)
        split = app.screen
        for side in ("a", "b"):
            view = split.view(side)
            assert (
                view.entries[1].lead[0][0].startswith(REASONING_MARK)
                and view.entries[2].lead[0][1] == "transcript--args"
            )
            assert f"{REASONING_MARK} The question asks" in "\n".join(view.transcript.visible_lines())
        await pilot.press("d")
        assert split.view("a").position == 3 and split.view("b").position == 0  # A, focused, moved on alone


STEPPING_KEYS = ("d", "d", "d", "D", "l", "h", "d", "dollar_sign", "D", "0", "d")


def _where(view) -> tuple[int, int, str | None]:
    """(turn in view, cursor entry, its decision) of a StepView."""
    entry = view.transcript.cursor_entry
    return view.position, view.transcript.cursor, entry.decision if entry else None


async def test_stepping_is_one_behaviour_in_the_stepper_and_each_side_of_the_split_stepper(thinking_store):
    """The keys' behaviour is written once (`SteppingScreen`): the same trajectory (the two runs are identical) under
    the same keys lands on the same turn and step, and y copies the same text, in the stepper and in whichever side
    of the split stepper has the focus; the other side moves only with the keys that step both (→ ← 0 $)."""
    for action in ("step", "first", "last", "decision", "browse", "toggle_gold", "copy_step", "back"):
        assert getattr(SplitStepperScreen, f"action_{action}") is getattr(StepperScreen, f"action_{action}")
    app = make_app()
    async with app.run_test(size=(160, 45)) as pilot:
        stepper = await open_stepper(pilot, app)
        alone = []
        for key in STEPPING_KEYS:
            await pilot.press(key)
            alone.append(_where(stepper.view))
        await pilot.press("y")
        copied = app.clipboard
        assert [w[2] for w in alone[:3]] == ["gold read", "non-gold read", "rejection"]  # d goes somewhere
        await pilot.press("escape")
        report = compare_report(app.store, "thinker-a", "thinker-b", n_boot=100)
        app.push_screen(SplitStepperScreen(report, list(report["items"])))
        await settle(pilot, app)
        split = app.screen
        for side, other in (("a", "b"), ("b", "a")):
            split.load(0)  # both sides back at their first turn
            split.view(side).transcript.focus()
            await pilot.pause()
            trail = []
            for key in STEPPING_KEYS:
                await pilot.press(key)
                trail.append(_where(split.view(side)))
            assert trail == alone
            assert split.view(other).position == 0  # 0 took it back; the d after moved the focused side alone
            await pilot.press("y")
            assert app.clipboard == copied


def _stepper_at(turns: int, *keys: str):
    async def run_before(pilot):
        app = pilot.app
        await settle(pilot, app)
        run = app.store.run("thinker-a")
        app.push_screen(StepperScreen(run, [t["id"] for t in app.store.trajectories(run["id"])]))
        await settle(pilot, app)
        await pilot.press(*(["l"] * turns), *keys)
        await settle(pilot, app)

    return run_before


def test_long_words_folded_at_80x24(snap_compare, thinking_store):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_stepper_at(1))


def test_long_think_unfolded_at_80x24(snap_compare, thinking_store):
    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=_stepper_at(0, "enter"))


def test_long_words_at_160x45(snap_compare, thinking_store):
    assert snap_compare(make_app(), terminal_size=(160, 45), run_before=_stepper_at(1, "k", "k", "k", "enter"))


async def test_the_live_follow_view_shows_the_reasoning_and_every_argument_in_full(tmp_path, builtin_cache):
    """The Live screen's follow view is fed the runner's `Step`s as they happen, not the store's rows: it shows the
    same words as the stepper (the reasoning marked, the think whole once unfolded, its markup as typed)."""
    from textual.widgets import DataTable

    from sandbox.datasets import open_dataset
    from sandbox.runner import Runner, RunSpec
    from storage import Store
    from workbench.tui.monitor import RunMonitor
    from workbench.tui.screens.live import LiveScreen
    from workbench.tui.widgets.transcript import TranscriptView

    corpus, _ = open_dataset("builtin", builtin_cache)
    store = Store(tmp_path / "live.sqlite")
    monitor = RunMonitor("thinker-live", {"budget": BUDGET})
    spec = RunSpec(
        name="thinker-live",
        dataset="builtin",
        agent="llm",
        model="scripted/thinking",
        limit=1,
        workers=1,
        caps=Caps(budget=BUDGET),
    )
    await Runner(
        spec, corpus, store, on_event=monitor.feed, factory=lambda item, rep, attempt: ThinkingAgent(item)
    ).run()
    monitor.finish("done")
    store.close()
    corpus.close()
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, app)
        app.push_screen(LiveScreen(monitor))
        await settle(pilot, app)
        live = app.screen
        live.query_one(DataTable).focus()
        await pilot.press("enter")  # follow the (finished) episode
        await settle(pilot, app)
        view = live.query_one("#live-transcript", TranscriptView)
        assistant = next(e for e in view.entries if e.kind == "assistant")
        think = next(e for e in view.entries if e.kind == "tool" and e.plain_header.startswith("▸ think("))
        assert assistant.lead == ((f"{REASONING_MARK} {REASONING}", "transcript--reasoning"),)
        assert think.lead == ((f"reasoning: {THINK}", "transcript--args"),)
        view.focus()
        view.cursor = view.entries.index(assistant)  # the follow view keeps the newest in view: back to turn 1
        await pilot.pause()
        assert f"{REASONING_MARK} The question asks" in "\n".join(view.visible_lines())
        view.cursor = view.entries.index(think)
        await pilot.press("enter")  # unfolds the think: all of it, wrapped, the markup as typed
        await pilot.pause()
        unfolded = " ".join(line.strip() for line in view.visible_lines())
        assert THINK in unfolded and "[red]initialisation[/red]" in unfolded


async def test_the_play_transcript_shows_the_player_s_think_in_full_with_its_markup_as_typed(monkeypatch):
    """The play transcript clipped a call's arguments at 28 characters, as the stepper did."""
    from play_support import act, start

    from workbench.tui.widgets.transcript import TranscriptView

    typed = "the [b]method[/b] section of the cited paper says it: weights by layers, not by tokens at all"
    monkeypatch.setenv("USER", "ana")
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        screen = await start(pilot, app, ["st_0001"])
        await act(pilot, screen, "t", *typed, "enter")
        view = screen.query_one(TranscriptView)
        think = next(e for e in view.entries if e.kind == "tool" and e.plain_header.startswith("▸ think("))
        assert "…" in think.plain_header and think.lead == ((f"reasoning: {typed}", "transcript--args"),)
        shown = " ".join(line.strip() for line in view.visible_lines())
        assert typed in shown  # the result just received is unfolded: the whole think, wrapped
