"""Play sessions without the UI: which items a session serves, the leaderboard against `report_of`, the batch side."""
from __future__ import annotations

import asyncio
import json

import pytest

from sandbox.agents.human import HumanAgent
from sandbox.runner import Runner, RunSpec
from storage import Store
from workbench.cli import main
from workbench.play import PlayError, SessionRequest, choose_items, reveal_rows, session_runner
from workbench.reports import PANEL_COLUMNS, _dig, leaderboard, report_of


async def _play(corpus, store, request: SessionRequest, moves) -> dict:
    """Run a session through the real runner; `moves(item)` gives the person's calls for each item."""
    async def factory(item, replicate, attempt):
        agent = HumanAgent(request.player)

        async def person():
            for name, args in moves(item):
                await agent.turn()
                agent.send(name, args)

        asyncio.get_running_loop().create_task(person())
        return agent

    return await session_runner(request, corpus, store, factory).run()


def _answer(item):
    return [("get_paper_info", {"paper_id": item.seed_paper_id}), ("submit_answer", {"answer": "ABCD"[item.correct_index]})]


def _wander(item):
    return [("read_section", {"paper_id": item.seed_paper_id, "section": "A"})] * 6 + \
        [("read_section", {"paper_id": item.seed_paper_id, "section": "B"})] * 2


@pytest.fixture
def played(demo_corpus, tmp_path):
    """A store with a heuristic and a random run, and two people: ana played three items, bo one."""
    store = Store(tmp_path / "store.sqlite")
    for agent, limit in (("heuristic", 6), ("random", 2)):
        asyncio.run(Runner(RunSpec(name=agent, dataset="builtin", agent=agent, limit=limit, workers=1),
                           demo_corpus, store).run())
    ids = [i.id for i in demo_corpus.items]
    asyncio.run(_play(demo_corpus, store, SessionRequest("ana", ids=(ids[0], ids[1])), _answer))
    asyncio.run(_play(demo_corpus, store, SessionRequest("ana", ids=(ids[4],)), _wander))
    asyncio.run(_play(demo_corpus, store, SessionRequest("bo", ids=(ids[1],)), _wander))
    yield store
    store.close()


def test_sessions_accumulate_and_choose_items(played, demo_corpus):
    ids = [i.id for i in demo_corpus.items]
    ana = played.run("human-ana-builtin")
    assert ana["agent"] == "human:ana" and ana["status"] == "done" and ana["planned"] == 3
    assert ana["config"]["slice"]["ids"] == [ids[0], ids[1], ids[4]] and ana["identity"]["estimate_tokens"]
    with pytest.raises(PlayError, match="nothing left to play"):
        choose_items(SessionRequest("ana", ids=(ids[0],)), demo_corpus, played)
    with pytest.raises(PlayError, match="unknown item"):
        choose_items(SessionRequest("ana", ids=("st_9999",)), demo_corpus, played)
    sample = choose_items(SessionRequest("ana", mode="random", count=3, seed=7), demo_corpus, played)
    assert sample == choose_items(SessionRequest("ana", mode="random", count=3, seed=7), demo_corpus, played)
    assert len(set(sample) - {ids[0], ids[1], ids[4]}) == 3  # new items, plus what the session recorded
    heuristic = {t["item_id"]: t["correct"] for t in played.trajectories(played.run("heuristic")["id"])}
    wrong = choose_items(SessionRequest("cy", mode="wrong", run="heuristic"), demo_corpus, played)
    assert set(wrong) == {i for i, ok in heuristic.items() if not ok}
    with pytest.raises(PlayError, match="not a play session"):
        choose_items(SessionRequest("cy", name="heuristic", ids=(ids[0],)), demo_corpus, played)


def test_reveal_rows_are_the_items_stored_trajectories(played, demo_corpus):
    item = demo_corpus.items[1].id
    rows = reveal_rows(played, demo_corpus.fingerprint, item, "human-bo-builtin")
    stored = played.item_trajectories(demo_corpus.fingerprint, item)
    assert rows[0]["you"] and rows[0]["run"] == "human-bo-builtin" and sum(r["you"] for r in rows) == 1
    assert sorted((r["run"], r["answer"], r["correct"], r["points_used"], r["turns"]) for r in rows) == \
        sorted((t["run"], t["answer"], t["correct"], t["points_used"], t["turns"]) for t in stored)


def test_leaderboard_is_report_of_on_the_items_people_played(played, demo_corpus):
    [board] = leaderboard(played)
    ids = [i.id for i in demo_corpus.items]
    assert board["fingerprint"] == demo_corpus.fingerprint and set(board["items"]) == {ids[0], ids[1], ids[4]}
    assert [r["run"] for r in board["rows"]][:0] == [] and {r["run"] for r in board["rows"]} == \
        {"heuristic", "random", "human-ana-builtin", "human-bo-builtin"}
    for row in board["rows"]:
        run = played.run(row["run"])
        records = [t for t in played.trajectories(run["id"]) if t["item_id"] in set(board["items"])]
        expected = report_of(run, records)
        assert row["n"] == expected["n"] and row["human"] == run["agent"].startswith("human:")
        for col, path in PANEL_COLUMNS:
            assert row[col] == _dig(expected, path), (row["run"], col)
    accuracies = [r["accuracy"] for r in board["rows"]]
    assert accuracies == sorted(accuracies, reverse=True) and [r["rank"] for r in board["rows"]] == [1, 2, 3, 4]
    ana = next(r for r in board["rows"] if r["run"] == "human-ana-builtin")
    assert (ana["n"], ana["accuracy"]) == (3, 2 / 3) and ana["tokens"] > 0  # estimated tokens
    random_row = next(r for r in board["rows"] if r["run"] == "random")
    assert random_row["n"] == 2  # covers two of the three items


def test_batch_leaderboard_prints_the_same_numbers(played, capsys):
    assert main(["--batch", "leaderboard", "--db", str(played.path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(leaderboard(played), default=str))
    assert main(["--batch", "leaderboard", "--db", str(played.path)]) == 0
    out = capsys.readouterr().out
    assert "items played by people" in out and "human-ana-builtin" in out and "2/3" in out


def test_batch_run_refuses_a_person(tmp_path, capsys):
    db = tmp_path / "store.sqlite"
    assert main(["--batch", "run", "--agent", "human:x", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: 'human:x' is a person") and "agenthop-tui" in err and len(err.strip().splitlines()) == 1
    assert not db.exists()


def test_the_setup_form_validates_before_anything_opens():
    from workbench.tui.play_setup import validate_setup

    request, errors = validate_setup({"player": "ana", "dataset": "", "mode": "random", "count": "3", "seed": "2"})
    assert errors == {} and (request.player, request.dataset, request.count, request.seed) == ("ana", "builtin", 3, 2)
    assert request.session == "human-ana-builtin"
    _, errors = validate_setup({"player": "a b", "mode": "ids", "ids": " "})
    assert set(errors) == {"player", "ids"}
    _, errors = validate_setup({"player": "ana", "mode": "random", "count": "0", "seed": "x"})
    assert set(errors) == {"count", "seed"}
    request, errors = validate_setup({"player": "ana", "mode": "wrong", "run": "heuristic", "name": "ana-vs-heur"})
    assert errors == {} and (request.run, request.session) == ("heuristic", "ana-vs-heur")
