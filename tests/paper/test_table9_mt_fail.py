"""Paper Table 9 (MT-fail): its n is the MT items whose paper recall failed, n = MT items × (1 − MT paper recall).

The categories 0-Gold / Prem / Explored / Stayed split exactly that population and sum to n. A right answer
given without both gold papers (a guess) is in it; a wrong answer after reading every gold (the old
"All-Gold") is not, and is reported apart. Both tests fail on the old definition (wrong MT answers).
"""

from __future__ import annotations

import json

import pytest

from storage import Store
from workbench.cli import main
from workbench.service import reports

CATEGORIES = ("0-Gold", "Prem", "Explored", "Stayed")


def gold(paper: str) -> list:
    return ["read_section", "ok", paper, "gold", 1]


SUBMIT = ["submit_answer", "ok", None, None, 0]
SEARCH = ["search_papers", "ok", None, None, 0]
OTHER = ["read_section", "ok", "x", "other", 1]


def mt(item: str, correct: bool, recalled: bool, actions: list) -> dict:
    """One multi-target trajectory, its paper-recall flag as the runner stores it (both golds delivered)."""
    return {
        "item_id": item,
        "replicate": 0,
        "kind": "mt",
        "depth": 1,
        "n_gold": 2,
        "correct": correct,
        "paper_recall": recalled,
        "paper_recall_any": any(a[3] == "gold" for a in actions),
        "section_recall": recalled,
        "termination": "answer",
        "tool_calls": len(actions),
        "turns_with_calls": len(actions),
        "turns": len(actions),
        "points_used": len(actions),
        "tokens": 0,
        "predicted_index": 0,
        "correct_index": 0 if correct else 1,
        "actions": actions,
        "tool_sequence": [a[0] for a in actions],
    }


def test_hand_built_records_with_known_categories():
    records = [
        mt("a", True, True, [gold("g1"), gold("g2"), SUBMIT]),  # recalled and right: outside
        mt("b", False, True, [gold("g1"), OTHER, gold("g2"), SUBMIT]),  # recalled but wrong: outside (All-Gold)
        mt("c", True, False, [gold("g1"), SUBMIT]),  # a right guess after one gold: Prem, inside
        mt("d", False, False, [OTHER, SUBMIT]),  # 0-Gold
        mt("e", True, False, [SEARCH, SUBMIT]),  # 0-Gold, guessed right
        mt("f", False, False, [gold("g1"), SEARCH, SUBMIT]),  # Explored
        mt("g", False, False, [gold("g1"), gold("g1"), SUBMIT]),  # Stayed
        {**mt("s", False, False, [OTHER, SUBMIT]), "kind": "st", "n_gold": 1},  # single-target: never counted
    ]
    run = {
        "name": "hand",
        "agent": "scripted",
        "model": None,
        "dataset": "hand",
        "ablation": "full",
        "status": "done",
        "planned": len(records),
    }
    recall_mt = reports.report_of(run, records)["counts"]["search"]["paper_recall"]["mt"]
    assert recall_mt == [2, 7]
    fail = reports.analytics(records)["stopping"]["mt_fail"]
    assert fail["n"] == 7 * (1 - 2 / 7) == 5  # the old population (wrong MT answers) was 4
    assert fail["counts"] == {"0-Gold": 2, "Prem": 1, "Explored": 1, "Stayed": 1}
    assert sum(fail["counts"][c] for c in CATEGORIES) == fail["n"]
    assert fail["accuracy"]["0-Gold"] == [1, 2] and fail["accuracy"]["Prem"] == [1, 1]
    assert fail["all_gold_wrong"] == {"n": 1, "share": [1, 2]}


@pytest.mark.parametrize("agent", ["random", "heuristic"])
def test_on_a_real_store_n_is_mt_items_times_one_minus_mt_paper_recall(tmp_path, capsys, agent):
    """A real run (built-in benchmark, real SQLite store, the CLI in-process): the report's own MT paper recall
    gives Table 9's n, and the four categories sum to it."""
    db = str(tmp_path / "s.sqlite")
    assert main(["--batch", "run", "--agent", agent, "--run", "r", "--db", db, "--quiet", "--limit", "60"]) == 0
    capsys.readouterr()
    assert main(["--batch", "report", "r", "--db", db, "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    recalled, mt_items = rep["counts"]["search"]["paper_recall"]["mt"]
    fail = rep["analytics"]["stopping"]["mt_fail"]
    assert mt_items > 0 and fail["n_mt"] == mt_items
    assert fail["n"] == mt_items - recalled
    assert fail["n"] == pytest.approx(mt_items * (1 - rep["axes"]["search"]["paper_recall"]["mt"]))
    assert sum(fail["counts"][c] for c in CATEGORIES) == fail["n"] and set(fail["counts"]) == set(CATEGORIES)
    store = Store(db, readonly=True)
    rows = [t for t in store.trajectories(store.run("r")["id"]) if t["kind"] == "mt"]
    store.close()
    missed = [t for t in rows if not t["paper_recall"]]
    assert fail["n"] == len(missed)
    assert sum(fail["accuracy"][c][0] for c in CATEGORIES) == sum(bool(t["correct"]) for t in missed)
    assert fail["all_gold_wrong"]["n"] == sum(1 for t in rows if t["paper_recall"] and not t["correct"])
    if agent == "random":  # it guesses right about one time in four without reading: the old n (wrong MT) fell short
        assert fail["n"] > sum(1 for t in rows if not t["correct"])
