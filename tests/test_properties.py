"""Hypothesis over tool arguments and turn sequences: nothing escapes, points never go negative, five endings."""

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sandbox.episode import Episode, RetryPolicy
from sandbox.ledger import Ledger
from sandbox.prompts import build_prompt
from sandbox.records import TERMINATIONS, TOOL_NAMES, AssistantTurn, Caps, ToolCall, Usage
from sandbox.tools import run_tool
from tests.conftest import B, G, M, S
from tests.scripted import ScriptAgent

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
paper_ids = st.sampled_from([S, B, G, M, "unknown", ""]) | json_values
arg_dicts = st.fixed_dictionaries(
    {},
    optional={
        "paper_id": paper_ids,
        "section": st.sampled_from(["A", "(b)", "Method", "zz", ""]) | json_values,
        "query": st.text(max_size=30) | json_values,
        "top_k": json_values,
        "answer": st.sampled_from(["A", "B", "(c)", "E"]) | json_values,
        "reasoning": json_values,
    },
)
names = st.sampled_from((*TOOL_NAMES, "keyword_search", "")) | st.text(max_size=10)
calls = st.lists(st.tuples(names, arg_dicts | json_values), max_size=4)
turns = st.lists(
    st.one_of(calls.map(lambda cs: ("calls", cs)), st.text(max_size=10).map(lambda t: ("text", t))), max_size=25
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=names, args=arg_dicts | json_values)
def test_tools_never_raise(mini_corpus, name, args):
    view = mini_corpus.view(mini_corpus.item("st_0001"))
    outcome = run_tool(view, name, args)
    assert isinstance(outcome.text, str)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    script=turns,
    budget=st.integers(0, 40),
    max_turns=st.integers(1, 25),
    tokens=st.integers(0, 5000),
    disabled=st.lists(st.sampled_from(TOOL_NAMES), max_size=2, unique=True),
)
def test_every_episode_ends_in_one_of_five(mini_corpus, script, budget, max_turns, tokens, disabled):
    caps = Caps(budget=budget, max_turns=max_turns, max_tokens_total=20_000, disabled_tools=tuple(disabled))
    agent_turns = []
    for kind, payload in script:
        if kind == "text":
            agent_turns.append(AssistantTurn(text=payload, usage=Usage(prompt=tokens)))
        else:
            agent_turns.append(
                AssistantTurn(
                    text=None,
                    usage=Usage(prompt=tokens),
                    tool_calls=[ToolCall(f"c{i}", n, a) for i, (n, a) in enumerate(payload)],
                )
            )
    item = mini_corpus.item("st_0001")
    ep = Episode(mini_corpus.view(item), ScriptAgent(agent_turns), caps, build_prompt(item, caps), retry=RetryPolicy())
    traj = asyncio.run(ep.run())
    assert traj.termination in TERMINATIONS
    assert traj.error_kind != "exception", ep.steps[-1].text
    assert all(s.ledger.points_left >= 0 for s in ep.steps)
    assert 0 <= traj.points_used <= budget
    assert traj.turns <= max_turns


@given(st.lists(st.sampled_from((*TOOL_NAMES, "nope")), max_size=60), st.integers(0, 35))
def test_ledger_never_negative_and_rejections_consecutive(seq, budget):
    ledger = Ledger(Caps(budget=budget))
    consecutive = 0
    for name in seq:
        decision = ledger.decide(name)
        consecutive = consecutive + 1 if decision.verdict == "rejected" else 0
        assert ledger.points_left >= 0
        assert ledger.rejections == consecutive
        assert decision.cost == (Caps().cost(name) if decision.verdict == "execute" else 0)


def test_stats_counts_the_sandboxs_terminations():
    """stats keeps its own copy of the five words (it imports nothing of the sandbox): the same words, in order."""
    from stats import axes

    assert axes.TERMINATIONS == TERMINATIONS
