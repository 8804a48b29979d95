"""Reports from hand-built trajectories with hand-computed values, and the panel and compare commands."""
import json

import pytest

from stats import axes
from storage import Store
from workbench import reports
from workbench.cli import main


def rec(kind, correct, pr, sr, term="answer", calls=2, with_calls=2, tokens=100, turns=3, points=6, chosen=None,
        seq=("get_references", "read_section"), pred=1, cidx=1, item="i", rep=0, depth=1):
    return {"kind": kind, "depth": depth, "correct": correct, "paper_recall": pr, "section_recall": sr,
            "termination": term, "tool_calls": calls, "turns_with_calls": with_calls, "tokens": tokens, "turns": turns,
            "points_used": points, "chosen_type": chosen or ("correct" if correct else "seed_only"),
            "tool_sequence": list(seq), "predicted_index": pred, "correct_index": cidx, "item_id": item,
            "replicate": rep, "paper_recall_any": pr, "section_recall_any": sr, "section_recall_loose": sr}


RECORDS = [
    rec("st", True, True, True, item="a"),
    rec("st", False, True, False, item="b", pred=0),
    rec("st", False, False, False, term="budget", item="c", pred=-1, chosen="no_answer", calls=5, with_calls=3),
    rec("mt", True, True, True, item="d", depth=2, tokens=300),
    rec("mt", False, False, False, term="max_turns", item="e", pred=-1, chosen="no_answer", turns=20, points=30),
]


def test_four_axes_by_hand():
    four = axes.four_axes(RECORDS)
    assert four["accuracy"].as_list() == [2, 5]
    assert four["search"]["paper_recall"]["st"].as_list() == [2, 3]
    assert four["search"]["paper_recall"]["mt"].as_list() == [1, 2]
    assert four["synthesis"]["conversion"]["st"].as_list() == [1, 2]  # P(correct | recall) among ST
    assert four["synthesis"]["conversion"]["mt"].as_list() == [1, 1]
    assert four["tool_use"]["calls_per_turn"].as_list() == [13, 11]
    assert four["resource"]["avg_tokens"].value == pytest.approx(700 / 5)
    assert four["resource"]["max_budget_rate"].as_list() == [1, 5]
    assert four["resource"]["max_turns_rate"].as_list() == [1, 5]
    assert axes.attribution(RECORDS)["counts"] == {"no_answer": 2, "seed_only": 1}
    assert axes.type_depth(RECORDS)["mt_d2"].as_list() == [1, 1]


def test_empty_run_has_no_fake_zeros():
    four = axes.four_axes([])
    assert four["accuracy"].value is None and four["synthesis"]["conversion"]["all"].value is None


def test_position_bias_by_hand():
    bias = reports.position_bias(RECORDS)
    assert bias["predicted_distribution"] == {"A": 1, "B": 2, "C": 0, "D": 0}
    assert bias["correct_position_distribution"] == {"A": 0, "B": 5, "C": 0, "D": 0}
    assert bias["accuracy_when_correct_at"] == {"B": [2, 5]}


def test_separating_axis_sentence():
    rows = [{"axis": "PR mt", "delta": 0.01}, {"axis": "Conv mt", "delta": -0.12}, {"axis": "SR st", "delta": 0.05}]
    assert reports.separating_axis(rows) == "B retrieves as well as A but converts 12 points less than A on multi-target items."


@pytest.fixture(scope="module")
def panel_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("panel") / "s.sqlite"
    for agent, name in (("oracle", "o"), ("heuristic", "h"), ("random", "r")):
        assert main(["--batch", "run", "--agent", agent, "--run", name, "--db", str(db), "--quiet", "--format", "json"]) == 0
    return db


def test_compare_matches_the_stats_functions(panel_db, capsys):
    capsys.readouterr()
    assert main(["--batch", "compare", "o", "h", "--db", str(panel_db), "--format", "json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    store = Store(panel_db, readonly=True)
    o = {t["item_id"]: t["correct"] for t in store.trajectories(store.run("o")["id"])}
    h = {t["item_id"]: t["correct"] for t in store.trajectories(store.run("h")["id"])}
    only_o = sorted(i for i in o if o[i] and not h[i])
    assert sorted(cmp["agreement"]["only_a"]["items"]) == only_o
    assert cmp["agreement"]["only_b"]["n"] == 0 and cmp["n_common"] == 60
    assert cmp["tests"]["accuracy"]["only_first"] == len(only_o)
    from scipy.stats import binomtest

    assert cmp["tests"]["accuracy"]["p"] == pytest.approx(binomtest(len(only_o), len(only_o), 0.5).pvalue)
    acc = next(r for r in cmp["rows"] if r["axis"] == "accuracy")
    assert acc["a"] == 1.0 and acc["delta"] == pytest.approx(sum(h.values()) / 60 - 1.0)


def test_panel_table_and_formats(panel_db, capsys, tmp_path):
    ext = tmp_path / "ext.csv"
    ext.write_text("run,score\no,90\nh,60\nr,25\n")
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "r", "--panel", "--db", str(panel_db), "--format", "json",
                 "--external", str(ext)]) == 0
    panel = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in panel["rows"]] == ["o", "h", "r"]
    assert panel["best"]["accuracy"] == ["o"]
    assert panel["external"]["rho"] == pytest.approx(1.0)
    assert panel["coverage"]["counts"]["low"] + panel["coverage"]["counts"]["mid"] + panel["coverage"]["counts"]["high"] == 60
    assert main(["--batch", "report", "o", "h", "--panel", "--db", str(panel_db), "--format", "csv"]) == 0
    csv_text = capsys.readouterr().out
    assert csv_text.splitlines()[0].startswith("run,accuracy,PR st")
    assert main(["--batch", "report", "h", "--db", str(panel_db), "--format", "markdown", "--ci"]) == 0
    md = capsys.readouterr().out
    assert "| axis | metric | ST | MT | all |" in md and "95% CI" in md


def test_single_run_analytics(panel_db, capsys):
    capsys.readouterr()
    assert main(["--batch", "report", "h", "--db", str(panel_db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    tm = rep["analytics"]["transitions"]
    store = Store(panel_db, readonly=True)
    seqs = [t["tool_sequence"] for t in store.trajectories(store.run("h")["id"])]
    n_pairs = sum(max(len(s) - 1, 0) for s in seqs)
    assert sum(map(sum, tm["counts"])) == n_pairs
    assert rep["analytics"]["top_trigram"]["trigram"] == ["get_references", "list_sections", "read_section"] or \
        rep["analytics"]["top_trigram"]["occurrences"] > 0
    assert set(rep["analytics"]["stopping"]) >= {"mt_fail", "after_wrong_read"}


def test_compare_rows_are_the_diagnostics_numbers_with_intervals(panel_db):
    store = Store(panel_db, readonly=True)
    cmp = reports.compare_report(store, "h", "r", n_boot=2000)
    h = {t["item_id"]: t for t in store.trajectories(store.run("h")["id"])}
    r = {t["item_id"]: t for t in store.trajectories(store.run("r")["id"])}
    rh = reports.report_of(store.run("h"), list(h.values()))
    rows = {row["axis"]: row for row in cmp["rows"]}
    assert rows["Conv st"]["a"] == rh["axes"]["synthesis"]["conversion"]["st"]
    assert rows["points"]["a"] == pytest.approx(rh["axes"]["resource"]["avg_points"])
    for row in cmp["rows"]:
        if row["delta"] is not None and row["ci_low"] is not None:
            assert row["ci_low"] - 1e-9 <= row["delta"] <= row["ci_high"] + 1e-9, row["axis"]
    st_items = [i for i in h if h[i]["kind"] == "st"]
    from stats.significance import mcnemar_exact

    want = mcnemar_exact([h[i]["paper_recall"] for i in st_items], [r[i]["paper_recall"] for i in st_items])
    assert rows["PR st"]["p"] == pytest.approx(want["p"]) and rows["PR st"]["test"]["n"] == len(st_items)
    assert rows["tokens"]["p"] is None  # not a 0/1 outcome: an interval only
    pair = cmp["items"][st_items[0]]
    assert pair["a"]["id"] == h[st_items[0]]["id"] and pair["b"]["id"] == r[st_items[0]]["id"]
    assert cmp["tool_use"]["a"]["transitions"]["n"] == cmp["n_common"]


def test_compare_warns_when_the_runs_used_different_datasets(panel_db, tmp_path):
    import shutil

    db = tmp_path / "s.sqlite"
    shutil.copy(panel_db, db)
    store = Store(db)
    assert reports.compare_report(store, "o", "h", n_boot=200)["warnings"] == []
    store.conn.execute("UPDATE runs SET dataset_fingerprint = 'other' WHERE name = 'h'")
    assert "different datasets" in reports.compare_report(store, "o", "h", n_boot=200)["warnings"][0]
