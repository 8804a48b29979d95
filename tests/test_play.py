"""Play sessions without the UI: which items a session serves, the leaderboard against `report_of`, the batch side."""

from __future__ import annotations

import asyncio
import json

import pytest

from sandbox.agents.human import HumanAgent
from sandbox.runner import Runner, RunSpec
from storage import Store
from workbench.cli import main
from workbench.service.play import PlayError, SessionRequest, choose_items, plan_session, reveal_rows, session_runner
from workbench.service.reports import PANEL_COLUMNS, leaderboard, report_of
from workbench.service.reports.run import _dig
from workbench.views.leaderboard import leaderboard_cells
from workbench.views.play import session_notes


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
    return [
        ("get_paper_info", {"paper_id": item.seed_paper_id}),
        ("submit_answer", {"answer": "ABCD"[item.correct_index]}),
    ]


def _wander(item):
    return [("read_section", {"paper_id": item.seed_paper_id, "section": "A"})] * 6 + [
        ("read_section", {"paper_id": item.seed_paper_id, "section": "B"})
    ] * 2


@pytest.fixture
def played(demo_corpus, tmp_path):
    """A store with a heuristic and a random run, and two people: ana played three items, bo one."""
    store = Store(tmp_path / "store.sqlite")
    for agent, limit in (("heuristic", 6), ("random", 2)):
        asyncio.run(
            Runner(
                RunSpec(name=agent, dataset="builtin", agent=agent, limit=limit, workers=1), demo_corpus, store
            ).run()
        )
    ids = [i.id for i in demo_corpus.items]
    asyncio.run(_play(demo_corpus, store, SessionRequest("ana", ids=(ids[0], ids[1])), _answer))
    asyncio.run(_play(demo_corpus, store, SessionRequest("ana", ids=(ids[4],)), _wander))
    asyncio.run(_play(demo_corpus, store, SessionRequest("bo", ids=(ids[1],)), _wander))
    asyncio.run(_play(demo_corpus, store, SessionRequest("ana", name="ana-two", ids=(ids[5],)), _answer))
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
    assert sorted((r["run"], r["answer"], r["correct"], r["points_used"], r["turns"]) for r in rows) == sorted(
        (t["run"], t["answer"], t["correct"], t["points_used"], t["turns"]) for t in stored
    )


def test_leaderboard_ranks_players_over_their_sessions_with_coverage_and_an_interval(played, demo_corpus):
    from scipy.stats import binomtest

    [board] = leaderboard(played)
    ids = [i.id for i in demo_corpus.items]
    played_items = {ids[0], ids[1], ids[4], ids[5]}
    assert board["fingerprint"] == demo_corpus.fingerprint and set(board["items"]) == played_items
    rows = {r["run"]: r for r in board["rows"]}
    assert set(rows) == {"heuristic", "random", "human:ana", "human:bo"}  # one row per player
    ana = rows["human:ana"]
    assert ana["runs"] == ["human-ana-builtin", "ana-two"] and ana["name"] == "ana-two +1"
    assert (ana["n"], ana["correct"], ana["accuracy"]) == (4, 3, 3 / 4) and ana["tokens"] > 0  # estimated tokens
    # 3 of 4 right: the Wilson score interval (a bootstrap read [¼, 1], as if 1 were a likely accuracy)
    assert ana["accuracy_ci"] == pytest.approx([0.3006418, 0.9544127])
    records = [t for name in ana["runs"] for t in played.trajectories(played.run(name)["id"])]
    expected = report_of({**played.run("human-ana-builtin"), "name": "human:ana"}, records)
    for col, path in PANEL_COLUMNS:
        assert ana[col] == _dig(expected, path), col
    for name in ("heuristic", "random"):
        run = played.run(name)
        mine = [t for t in played.trajectories(run["id"]) if t["item_id"] in played_items]
        expected = report_of(run, mine)
        assert rows[name]["n"] == len(mine) and [rows[name][c] for c, _ in PANEL_COLUMNS] == [
            _dig(expected, p) for _, p in PANEL_COLUMNS
        ]
        want = binomtest(sum(bool(t["correct"]) for t in mine), len(mine)).proportion_ci(method="wilson")
        assert rows[name]["accuracy_ci"] == pytest.approx([want.low, want.high])
    # coverage: heuristic 4/4, ana 4/4, random 2/4 (= ½: ranked); bo 1/4 is listed below, unranked, saying why
    assert rows["random"]["n"] == 2 and rows["random"]["ranked"]
    bo = rows["human:bo"]
    assert (
        not bo["ranked"] and bo["rank"] is None and bo["unranked"] == "covers 1 of the 4 items played (fewer than 50%)"
    )
    ranked = [r for r in board["rows"] if r["ranked"]]
    assert board["rows"][-1] is bo and [r["rank"] for r in ranked] == [1, 2, 3]
    assert [r["accuracy"] for r in ranked] == sorted((r["accuracy"] for r in ranked), reverse=True)
    assert "human:bo" not in {name for names in board["best"].values() for name in names}
    # a stricter share leaves random unranked too
    strict = {r["run"]: r for r in leaderboard(played, min_coverage=0.75)[0]["rows"]}
    assert not strict["random"]["ranked"] and strict["heuristic"]["ranked"]


def test_leaderboard_marks_only_a_significant_best_and_none_where_an_entrant_is_unmeasured(
    played, demo_corpus, tmp_path, capsys
):
    """The board's `*` was the bare top value (`best_cells`): 3 of 4 right was "best" over 4 items, and a person's
    estimated tokens were "fewest" beside a scripted agent that measures none. Now: the panel's test against the
    runner-up (`significant_best`), and no mark in the token columns while a ranked entrant does not measure them."""
    [small] = leaderboard(played)  # 4 items: no paired test can reach p < 0.05 (at best 2 · ½⁴ = 0.125)
    assert small["best"] == {} and small["best_tests"] and not any(t["marked"] for t in small["best_tests"].values())
    store = Store(tmp_path / "seven.sqlite")
    asyncio.run(
        Runner(
            RunSpec(name="heuristic", dataset="builtin", agent="heuristic", limit=8, workers=1), demo_corpus, store
        ).run()
    )
    ids = tuple(i.id for i in demo_corpus.items[:7])
    asyncio.run(_play(demo_corpus, store, SessionRequest("ana", ids=ids), _answer))  # right in 2 turns, 1 point
    asyncio.run(_play(demo_corpus, store, SessionRequest("cy", ids=ids), _wander))  # 8 reads, never answers
    [board] = leaderboard(store)
    rows = {r["run"]: r for r in board["rows"]}
    assert [r["ranked"] for r in board["rows"]] == [True] * 3 and not rows["heuristic"]["tokens_measured"]
    tests = board["best_tests"]
    # ana took fewer turns and points on all 7 items (sign test p = 2 · ½⁷): marked
    assert board["best"] == {"turns": ["human:ana"], "points": ["human:ana"]}
    assert tests["turns"]["p"] == pytest.approx(2 / 2**7) and tests["turns"]["marked"]
    # ana is right on 7 of 7, the heuristic on 5: McNemar over the 2 discordant items is p = 0.5, no mark
    assert tests["accuracy"]["best"] == ["human:ana"] and not tests["accuracy"]["marked"]
    assert tests["accuracy"]["p"] >= 0.05
    # ana's estimated tokens are fewer than cy's on every item (p < 0.05), but the heuristic measures none
    assert rows["human:ana"]["tokens"] < rows["human:cy"]["tokens"] and rows["heuristic"]["tokens"] is None
    assert tests["tokens"]["p"] < 0.05 and not tests["tokens"]["marked"]
    assert tests["tokens"]["reason"] == tests["MaxTok"]["reason"] == "tokens not measured for heuristic"
    header, cells = leaderboard_cells(board)
    ana = dict(
        zip(header, next(c for c, r in zip(cells, board["rows"], strict=True) if r["run"] == "human:ana"), strict=True)
    )
    assert ana["turns"].endswith(" *") and not ana["tokens"].endswith("*") and not ana["accuracy"].endswith("*")
    assert main(["--batch", "leaderboard", "--db", str(store.path)]) == 0
    out = capsys.readouterr().out
    assert "* best, p < 0.05 vs the runner-up" in out and "none in tokens and MaxTok" in out
    store.close()


def test_batch_leaderboard_prints_the_same_numbers(played, capsys):
    assert main(["--batch", "leaderboard", "--db", str(played.path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(json.dumps(leaderboard(played), default=str))
    assert main(["--batch", "leaderboard", "--db", str(played.path)]) == 0
    out = capsys.readouterr().out
    assert "items played by people" in out and "ana-two +1" in out and "4/4" in out and "2/4" in out
    assert "unranked: human-bo-builtin (human:bo) covers 1 of the 4 items played (fewer than 50%)" in out
    assert main(["--batch", "leaderboard", "--db", str(played.path), "--format", "json", "--min-coverage", "0.75"]) == 0
    assert json.loads(capsys.readouterr().out) == json.loads(
        json.dumps(leaderboard(played, min_coverage=0.75), default=str)
    )
    assert main(["--batch", "leaderboard", "--db", str(played.path), "--min-coverage", "2"]) == 2
    assert "--min-coverage" in capsys.readouterr().err


def test_batch_run_refuses_a_person(tmp_path, capsys):
    db = tmp_path / "store.sqlite"
    assert main(["--batch", "run", "--agent", "human:x", "--db", str(db)]) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("error: 'human:x' is a person") and "agenthop-tui" in err and len(err.strip().splitlines()) == 1
    )
    assert not db.exists()


def test_the_setup_form_validates_before_anything_opens():
    from workbench.tui.forms.play_setup import validate_setup

    request, errors = validate_setup({"player": "ana", "dataset": "", "mode": "random", "count": "3", "seed": "2"})
    assert errors == {} and (request.player, request.dataset, request.count, request.seed) == ("ana", "builtin", 3, 2)
    assert request.session == "human-ana-builtin"
    _, errors = validate_setup({"player": "a b", "mode": "ids", "ids": " "})
    assert set(errors) == {"player", "ids"}
    _, errors = validate_setup({"player": "ana", "mode": "random", "count": "0", "seed": "x"})
    assert set(errors) == {"count", "seed"}
    request, errors = validate_setup({"player": "ana", "mode": "wrong", "run": "heuristic", "name": "ana-vs-heur"})
    assert errors == {} and (request.run, request.session) == ("heuristic", "ana-vs-heur")


def test_a_new_session_leaves_out_what_the_player_played_unless_asked_and_marks_replays(played, demo_corpus):
    ids = [i.id for i in demo_corpus.items]
    plan = plan_session(SessionRequest("ana", name="ana-three", ids=(ids[0], ids[2])), demo_corpus, played)
    assert plan.items == (ids[2],) and plan.left_out == {ids[0]: "human-ana-builtin"} and not plan.replayed
    assert "left out 1 item you played before" in session_notes(plan)[0]
    with pytest.raises(PlayError, match=r"nothing left to play in 'ana-three'.*\(in human-ana-builtin\)"):
        plan_session(SessionRequest("ana", name="ana-three", ids=(ids[0],)), demo_corpus, played)
    wrong = plan_session(SessionRequest("ana", name="ana-three", mode="wrong", run="heuristic"), demo_corpus, played)
    heuristic_wrong = {t["item_id"] for t in played.trajectories(played.run("heuristic")["id"]) if not t["correct"]}
    assert set(wrong.items) == heuristic_wrong - {ids[0], ids[1], ids[4], ids[5]}
    sample = choose_items(SessionRequest("ana", name="ana-three", mode="random", count=50), demo_corpus, played)
    assert not set(sample) & {ids[0], ids[1], ids[4], ids[5]}

    again = SessionRequest("ana", name="ana-three", ids=(ids[0],), include_played=True)
    plan = plan_session(again, demo_corpus, played)
    assert plan.items == (ids[0],) and plan.replayed == {ids[0]: "human-ana-builtin"}
    asyncio.run(_play(demo_corpus, played, again, _answer))
    [t] = played.trajectories(played.run("ana-three")["id"])
    assert (t["item_id"], t["correct"], t["error_kind"]) == (ids[0], 1, "replayed")
    assert "gold answer was shown before" in t["error"]
    ana = {r["run"]: r for r in leaderboard(played)[0]["rows"]}["human:ana"]
    assert (ana["n"], ana["excluded"]) == (4, 1)  # the replay is left out


def test_an_item_left_midway_is_kept_as_an_abandoned_attempt_and_its_replay_is_marked_resumed(played, demo_corpus):
    ids = [i.id for i in demo_corpus.items]
    request = SessionRequest("cy", ids=(ids[2],))

    async def leave_after_one_call():
        left = asyncio.Event()

        def factory(item, replicate, attempt):
            agent = HumanAgent("cy")

            async def person():
                await agent.turn()
                agent.send("get_references", {"paper_id": item.seed_paper_id})
                await agent.turn()  # the result is shown: the person leaves
                left.set()

            asyncio.get_running_loop().create_task(person())
            return agent

        task = asyncio.create_task(session_runner(request, demo_corpus, played, factory).run())
        await left.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(leave_after_one_call())
    # before any session re-opens, the attempt is unfinished (as after a crash): another session knows it was seen
    other = plan_session(SessionRequest("cy", name="cy-two", ids=(ids[2],)), demo_corpus, played)
    assert other.resumed == {ids[2]: "human-cy-builtin"} and other.mark(ids[2])[0] == "resumed"
    asyncio.run(_play(demo_corpus, played, request, _answer))  # re-opened: the item from its first turn
    run = played.run("human-cy-builtin")
    rows = [
        tuple(r)
        for r in played.conn.execute(
            "SELECT item_id, attempt, final, status, termination, error_kind, turns, tool_calls FROM trajectories "
            "WHERE run_id = ? ORDER BY id",
            (run["id"],),
        )
    ]
    assert rows == [
        (ids[2], 0, 0, "done", "error", "abandoned", 1, 1),
        (ids[2], 1, 1, "done", "answer", "resumed", 2, 2),
    ]
    [final] = played.trajectories(run["id"])
    assert final["correct"] and "resumed after seeing tool results" in final["error"]
    assert [
        s["tool_name"]
        for s in played.steps(played.trajectories(run["id"], final_only=False)[0]["id"])
        if s["kind"] == "tool"
    ] == ["get_references"]
    board = leaderboard(played)[0]
    assert ids[2] not in board["items"]  # nobody played it unmarked
    assert {r["run"]: r for r in board["rows"]}.get("human:cy") is None


def test_comparing_a_person_with_a_model_warns_that_the_person_s_tokens_are_estimated(played, capsys):
    from workbench.service.reports import compare_report
    from workbench.views.compare import attribution_rows, compare_rows

    cmp = compare_report(played, "heuristic", "human-ana-builtin")
    assert any(w.startswith("B's tokens are estimated (characters / 4") for w in cmp["warnings"])
    assert not [w for w in compare_report(played, "heuristic", "random")["warnings"] if "estimated" in w]
    row = {
        "axis": "tokens",
        "a": 12000.4,
        "b": 4365.2,
        "delta": -7635.2,
        "ci_low": -9000.6,
        "ci_high": -6000.1,
        "p": None,
    }
    assert compare_rows({"rows": [row]}) == [("tokens", "", "12,000", "4,365", "-7,635", "[-9,001, -6,000]", "—", "—")]
    assert compare_rows({"rows": [{**row, "axis": "turns"}]})[0][4] == "-7,635.20"  # other means keep two decimals
    assert main(["--batch", "compare", "heuristic", "human-ana-builtin", "--db", str(played.path)]) == 0
    out = capsys.readouterr().out
    assert "warning: B's tokens are estimated" in out
    for row in attribution_rows(cmp):  # the Failures tab's cells, printed by --batch compare
        assert all(cell in out for cell in row if cell)


def test_distractor_attribution_differences_with_a_paired_interval(played, demo_corpus):
    """Hand-computed: each run's rate of a type among its wrong answers, Δ = B − A, and the interval of the
    paired bootstrap over the common items (the same draw as every other compared axis)."""
    import numpy as np

    from stats.bootstrap import paired_ratio_deltas
    from workbench.service.reports import compare_report

    cmp = compare_report(played, "heuristic", "human-ana-builtin")
    a = {t["item_id"]: t for t in played.trajectories(played.run("heuristic")["id"])}
    b = {t["item_id"]: t for t in played.trajectories(played.run("human-ana-builtin")["id"])}
    common = [i for i in a if i in b]
    chose = lambda t: None if t["correct"] else (t["chosen_type"] or "unknown")  # noqa: E731
    kinds = sorted({chose(t) for t in [a[i] for i in common] + [b[i] for i in common]} - {None})
    assert kinds and set(cmp["attribution"]["delta"]) == set(kinds)
    for kind in kinds:
        wa = [i for i in common if not a[i]["correct"]]
        wb = [i for i in common if not b[i]["correct"]]
        ra = sum(chose(a[i]) == kind for i in wa) / len(wa) if wa else None
        rb = sum(chose(b[i]) == kind for i in wb) / len(wb) if wb else None
        got = cmp["attribution"]["delta"][kind]
        assert (got["a"], got["b"]) == (ra, rb)
        if ra is not None and rb is not None:
            assert got["delta"] == pytest.approx(rb - ra)
            col = lambda side, f: np.array([f(side[i]) for i in common], dtype=float)  # noqa: E731
            [(_delta, low, high)] = paired_ratio_deltas(
                col(a, lambda t, kind=kind: chose(t) == kind),
                col(a, lambda t: not t["correct"]),
                col(b, lambda t, kind=kind: chose(t) == kind),
                col(b, lambda t: not t["correct"]),
            )
            assert (got["ci_low"], got["ci_high"]) == (low, high) and low <= got["delta"] <= high


def test_the_leaderboard_on_a_120_column_terminal_tells_runs_named_alike_apart(played, capsys, monkeypatch):
    """Three runs whose names differ at the end all read `openai_fake-model-…`: the run column was squeezed and
    clipped at its end."""
    import sys

    played.rename_run("heuristic", "openai_fake-model-builtin-2")
    played.rename_run("random", "openai_fake-model-builtin-3")
    monkeypatch.setenv("COLUMNS", "120")
    monkeypatch.setenv("NO_COLOR", "1")
    capsys.readouterr()
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main(["--batch", "leaderboard", "--db", str(played.path)]) == 0
    out = capsys.readouterr().out
    monkeypatch.undo()
    rows = [line for line in out.splitlines() if "openai" in line and "│" in line]
    runs = [line.split("│")[2].strip() for line in rows]
    assert len(runs) == 2 and len(set(runs)) == 2, out
    assert all(r.endswith(("-2", "-3")) for r in runs), runs
