"""A person as an agent, without the UI: the same Episode and Runner, one call per turn, quitting is cancellation."""

from __future__ import annotations

import asyncio

import pytest

from sandbox.agents.estimated import EstimatedUsage
from sandbox.agents.human import HumanAgent, NotYourTurn, is_human
from sandbox.episode import Episode
from sandbox.ledger import INSUFFICIENT
from sandbox.prompts import EXHAUSTED, build_prompt
from sandbox.records import Caps
from sandbox.runner import Runner, RunSpec, default_factory
from storage import Store


async def test_a_person_plays_under_the_episodes_rules(demo_corpus):
    item = demo_corpus.items[0]
    caps = Caps(budget=7)
    agent = HumanAgent("ana")
    steps = []
    episode = Episode(
        demo_corpus.view(item), EstimatedUsage(agent), caps, build_prompt(item, caps), on_step=steps.append
    )
    task = asyncio.create_task(episode.run())
    seed = item.seed_paper_id

    first = await agent.turn()
    assert first.turn == 1 and [m["role"] for m in first.messages] == ["system", "user"] and first.footer is None
    agent.send("think", {"reasoning": "a note"})
    with pytest.raises(NotYourTurn):  # one call per turn
        agent.send("think", {"reasoning": "a second call in the same turn"})
    after_think = await agent.turn()
    assert after_think.texts[0].startswith("Noted.\nTurn: 1  |  Tokens used: ")

    agent.send("list_sections", {"paper_id": seed})
    listed = await agent.turn()
    assert listed.footer.startswith("Turn: 2  |") and listed.footer.endswith("|  Budget used: 1")
    agent.send("read_section", {"paper_id": seed, "section": "A"})
    await agent.turn()
    agent.send("read_section", {"paper_id": seed, "section": "B"})  # 1 point left: rejected at cost 0
    rejected = await agent.turn()
    assert rejected.texts[0].startswith(INSUFFICIENT.format(left=1, name="read_section", cost=5))
    assert rejected.footer.endswith("Budget used: 6")
    agent.send("get_paper_info", {"paper_id": seed})  # executed: resets the rejections, leaves 0 points
    exhausted = await agent.turn()
    assert exhausted.messages[-1] == {"role": "user", "content": EXHAUSTED}
    agent.send("read_section", {"paper_id": seed, "section": "A"})
    await agent.turn()
    agent.send("get_references", {"paper_id": seed})  # the second consecutive rejection ends the episode
    traj = await task

    assert traj.termination == "budget" and traj.points_used == 7 and traj.turns == 7 and not agent.waiting
    with pytest.raises(NotYourTurn):
        agent.send("submit_answer", {"answer": "A"})
    usages = [s.usage for s in steps if s.kind == "assistant"]
    assert all(u["raw"] == {"estimated": True} and u["prompt"] > 600 for u in usages)
    assert traj.tokens == sum(u["prompt"] + u["completion"] for u in usages)
    assert [s.status for s in steps if s.kind == "tool"] == ["ok", "ok", "ok", "rejected", "ok", "rejected", "rejected"]


async def test_a_person_answers(demo_corpus):
    item = demo_corpus.items[1]
    agent = HumanAgent("ana")
    episode = Episode(demo_corpus.view(item), agent, Caps(), build_prompt(item, Caps()))
    task = asyncio.create_task(episode.run())
    await agent.turn()
    agent.send("submit_answer", {"answer": "ABCD"[item.correct_index], "reasoning": ""})
    traj = await task
    assert (traj.termination, traj.correct, traj.turns, traj.points_used) == ("answer", True, 1, 0)


def _spec(**kw) -> RunSpec:
    return RunSpec(name="human-ana", dataset="builtin", agent="human:ana", workers=1, estimate_tokens=True, **kw)


async def test_quitting_mid_item_leaves_it_unfinished_and_resuming_plays_it_again(demo_corpus, tmp_path):
    a, b = demo_corpus.items[0], demo_corpus.items[1]
    store = Store(tmp_path / "store.sqlite")
    ready: asyncio.Queue[HumanAgent] = asyncio.Queue()

    async def factory(item, replicate, attempt):
        agent = HumanAgent("ana")
        await ready.put(agent)
        return agent

    spec = _spec(item_ids=(a.id, b.id))
    task = asyncio.create_task(Runner(spec, demo_corpus, store, factory=factory).run())
    first = await ready.get()
    await first.turn()
    first.send("submit_answer", {"answer": "A"})
    second = await ready.get()
    await second.turn()
    second.send("get_paper_info", {"paper_id": b.seed_paper_id})
    await second.turn()
    task.cancel()  # the person quits in the middle of item b
    with pytest.raises(asyncio.CancelledError):
        await task

    run = store.run("human-ana")
    assert run["status"] == "interrupted" and store.finished(run["id"]) == {(a.id, 0)}
    rows = store.conn.execute("SELECT item_id, status FROM trajectories WHERE run_id = ?", (run["id"],)).fetchall()
    assert sorted(map(tuple, rows)) == [(a.id, "done"), (b.id, "running")]

    task = asyncio.create_task(Runner(spec, demo_corpus, store, factory=factory).run())
    again = await ready.get()  # item a is skipped; item b starts over from its first turn
    assert (await again.turn()).turn == 1
    again.send("submit_answer", {"answer": "ABCD"[b.correct_index]})
    result = await task
    assert (result["status"], result["skipped"], result["done"]) == ("done", 1, 2)
    rows = store.conn.execute("SELECT item_id, status FROM trajectories WHERE run_id = ?", (run["id"],)).fetchall()
    assert sorted(map(tuple, rows)) == [(a.id, "done"), (b.id, "done")]
    traj_b = next(t for t in store.trajectories(run["id"]) if t["item_id"] == b.id)
    assert traj_b["correct"] and traj_b["turns"] == 1 and traj_b["points_used"] == 0
    store.close()


def test_the_runner_cannot_make_up_a_person():
    assert is_human("human:ana") and not is_human("heuristic") and not is_human(None)
    with pytest.raises(ValueError, match="humans play in the TUI"):
        default_factory(_spec())
