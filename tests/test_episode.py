"""The episode loop against the reference's rules (docs/protocol.md "Rules", "Turns, tokens and terminations")."""

from dataclasses import replace

import pytest

from sandbox.agents.base import InfrastructureError, NonTransientModelError, TransientModelError
from sandbox.episode import Episode, RetryPolicy, parse_answer
from sandbox.ledger import INSUFFICIENT
from sandbox.prompts import EXHAUSTED, NUDGE, build_prompt
from sandbox.records import AssistantTurn, Caps, Usage
from tests.conftest import G, S
from tests.scripted import ScriptAgent, turn

FAST = RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0)
READ = ("read_section", {"paper_id": G, "section": "A"})
DEFAULT_CAPS = Caps()


async def play(corpus, script, caps=DEFAULT_CAPS, ablation="full"):
    item = corpus.item("st_0001")
    agent = ScriptAgent(script)
    ep = Episode(corpus.view(item), agent, caps, build_prompt(item, caps, ablation), retry=FAST)
    traj = await ep.run()
    return traj, ep, agent


async def test_footer_and_costs(mini_corpus):
    traj, _ep, agent = await play(
        mini_corpus,
        [
            turn(("get_paper_info", {"paper_id": S}), tokens=1234),
            turn(("submit_answer", {"answer": "(b)", "reasoning": "r"})),
        ],
    )
    tool_msg = agent.seen[1][-1]
    assert tool_msg["role"] == "tool"
    assert tool_msg["content"].endswith("\nTurn: 1  |  Tokens used: 1,234  |  Budget used: 1")
    assert traj.termination == "answer" and traj.correct and traj.predicted_index == 1
    assert traj.points_used == 1 and traj.turns == 2


async def test_budget_rejection_exhausted_nudge_and_double_rejection(mini_corpus):
    script = [turn(READ) for _ in range(6)] + [turn(READ), turn(READ)]
    traj, ep, agent = await play(mini_corpus, script)
    assert traj.termination == "budget"
    assert traj.points_used == 30
    # after the 6th read the budget is exactly 0: the exhausted nudge follows the tool results
    assert agent.seen[6][-1] == {"role": "user", "content": EXHAUSTED}
    rejected = [s for s in ep.steps if s.status == "rejected"]
    assert len(rejected) == 2
    assert rejected[0].text == INSUFFICIENT.format(left=0, name="read_section", cost=5)
    assert rejected[0].cost == 0 and rejected[0].ledger.points_left == 0


async def test_think_resets_the_consecutive_rejections(mini_corpus):
    think = ("think", {"reasoning": "hmm"})
    script = [turn(READ) for _ in range(6)] + [turn(READ), turn(think), turn(READ), turn(think)]
    traj, ep, _ = await play(mini_corpus, script, caps=Caps(max_turns=10))
    assert traj.termination == "max_turns"
    assert sum(s.status == "rejected" for s in ep.steps) == 2


async def test_parallel_calls_in_order_last_submit_wins(mini_corpus):
    script = [
        turn(
            ("read_section", {"paper_id": G, "section": "B"}),
            ("submit_answer", {"answer": "A"}),
            ("get_references", {"paper_id": S}),
            ("submit_answer", {"answer": "B"}),
        )
    ]
    traj, _ep, _ = await play(mini_corpus, script)
    assert traj.termination == "answer" and traj.answer == "B" and traj.correct
    assert traj.points_used == 6  # calls after a submit are still executed and charged
    assert traj.paper_recall and traj.section_recall
    assert (traj.tool_calls, traj.turns_with_calls) == (4, 1)


async def test_parallel_calls_against_running_budget(mini_corpus):
    script = [turn(*[READ] * 7)]
    traj, ep, _ = await play(mini_corpus, script)
    statuses = [s.status for s in ep.steps if s.kind == "tool"]
    assert statuses == ["ok"] * 6 + ["rejected"]
    script = [turn(*[READ] * 8)]
    traj, _, _ = await play(mini_corpus, script)
    assert traj.termination == "budget"  # two rejections in one turn


async def test_token_limit_discards_the_crossing_response(mini_corpus):
    caps = Caps(max_tokens_total=1000)
    script = [
        turn(("think", {"reasoning": "x"}), tokens=1000),
        turn(("submit_answer", {"answer": "B", "reasoning": "r"}), tokens=1),
    ]
    traj, ep, _ = await play(mini_corpus, script, caps=caps)
    assert traj.termination == "token_limit" and traj.answer is None and not traj.correct
    assert ep.steps[-1].text == "[HARNESS] Token limit reached (1,001 > 1,000). Forcing termination."


async def test_plain_text_nudge_and_empty_reply(mini_corpus):
    script = [
        AssistantTurn(text="The answer is B"),
        AssistantTurn(text="   "),
        AssistantTurn(text="", usage=Usage(7, 3)),
    ]
    traj, ep, agent = await play(mini_corpus, script)
    assert agent.seen[1][-1]["content"] == NUDGE + "\nTurn: 1  |  Tokens used: 0  |  Budget used: 0"
    # whitespace is text for the reference (`if not text`): nudged like any prose, not an error
    assert agent.seen[2][-2] == {"role": "assistant", "content": "   "}
    assert agent.seen[2][-1]["content"] == NUDGE + "\nTurn: 2  |  Tokens used: 0  |  Budget used: 0"
    assert traj.termination == "error" and traj.error_kind == "empty_response" and traj.turns == 3
    # the empty reply is logged as the harness's note, which says why the episode ended
    last = ep.steps[-1]
    assert (last.kind, last.turn, last.usage["prompt"], last.usage["completion"]) == ("harness", 3, 7, 3)
    assert last.text == "[HARNESS] Empty response — terminated as error. Raw dump keys: []"
    assert [s.kind for s in ep.steps] == ["assistant", "nudge", "assistant", "nudge", "harness"]


async def test_max_turns(mini_corpus):
    traj, _, _ = await play(mini_corpus, [], caps=Caps(max_turns=3))
    assert traj.termination == "max_turns" and traj.turns == 3


async def test_disabled_tool_is_rejected_without_counting(mini_corpus):
    caps = replace(Caps(), disabled_tools=("search_papers",))
    script = [
        turn(("search_papers", {"query": "x"})),
        turn(("search_papers", {"query": "x"})),
        turn(("submit_answer", {"answer": "A"})),
    ]
    traj, ep, agent = await play(mini_corpus, script, caps=caps, ablation="no-search")
    assert traj.termination == "answer"
    assert [s.status for s in ep.steps if s.kind == "tool"][:2] == ["disabled", "disabled"]
    assert (
        "search_papers"
        not in agent.seen[0][0]["content"]
        .split("## Constraints")[0]
        .split("### Reading")[0]
        .split("### Navigation Tools")[1]
    )


async def test_transient_errors_do_not_consume_turns(mini_corpus):
    script = [
        TransientModelError("429", retry_after=0),
        TransientModelError("503"),
        turn(("submit_answer", {"answer": "B"})),
    ]
    traj, _ep, _ = await play(mini_corpus, script)
    assert traj.termination == "answer" and traj.turns == 1 and traj.transient_retries == 2


async def test_five_consecutive_api_errors_end_as_error(mini_corpus):
    script = [NonTransientModelError("bad request")] * 5
    traj, _ep, _ = await play(mini_corpus, script)
    assert traj.termination == "error" and traj.error_kind == "api_errors" and traj.api_errors == 5


async def test_api_errors_consume_turns_and_reset_on_success(mini_corpus):
    script = (
        [NonTransientModelError("x")] * 4 + [turn(("think", {"reasoning": "r"}))] + [NonTransientModelError("x")] * 4
    )
    traj, _, _ = await play(mini_corpus, script, caps=Caps(max_turns=9))
    assert traj.termination == "max_turns" and traj.api_errors == 8


async def test_infrastructure_error(mini_corpus):
    traj, _, _ = await play(mini_corpus, [InfrastructureError("401 unauthorized")])
    assert traj.termination == "error" and traj.error_kind == "infra"


async def test_agent_bug_is_an_error_with_context(mini_corpus):
    class Broken:
        name = "broken"

        async def act(self, messages, tools):
            return AssistantTurn(text="x", tool_calls=[None])  # not a ToolCall: our contract broken

    item = mini_corpus.item("st_0001")
    ep = Episode(mini_corpus.view(item), Broken(), Caps(), build_prompt(item, Caps()), retry=FAST)
    traj = await ep.run()
    assert traj.termination == "error" and traj.error_kind == "exception"
    assert "Traceback" in ep.steps[-1].text


@pytest.mark.parametrize(
    "raw,idx",
    [
        ("A", 0),
        ("(a)", 0),
        ("B.", 1),
        ("C:", 2),
        ("D)", 3),
        (" b ", 1),
        ("E", -1),
        ("AB", -1),
        ("", -1),
        (None, -1),
        (2, -1),
        ("Answer: A", -1),
    ],
)
def test_parse_answer(raw, idx):
    assert parse_answer(raw) == idx


async def test_malformed_submit_still_ends_as_answer(mini_corpus):
    traj, _, _ = await play(mini_corpus, [turn(("submit_answer", {"answer": "maybe B"}))])
    assert traj.termination == "answer" and traj.predicted_index == -1 and traj.chosen_type == "no_answer"


async def test_recall_flags_use_resolved_section_index(mini_corpus):
    traj, _, _ = await play(
        mini_corpus, [turn(("read_section", {"paper_id": G, "section": "A"})), turn(("submit_answer", {"answer": "C"}))]
    )
    assert traj.paper_recall and not traj.section_recall and traj.chosen_type == "seed_only"
    traj, _, _ = await play(
        mini_corpus,
        [turn(("read_section", {"paper_id": G, "section": "Frequency"})), turn(("submit_answer", {"answer": "C"}))],
    )
    assert not traj.paper_recall  # "Frequency" matches no header: a failed read is not a read


def test_usage_cap_quantity_excludes_cache_reads():
    assert Usage(prompt=10, completion=5, cache_read=100, cache_creation=3).cap_quantity == 18
