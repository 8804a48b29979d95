"""Reports from hand-built trajectories with hand-computed values, and the panel and compare commands."""

import json

import numpy as np
import pytest

from stats import axes
from storage import Store
from workbench.cli import main
from workbench.service import reports


def rec(
    kind,
    correct,
    pr,
    sr,
    term="answer",
    calls=2,
    with_calls=2,
    tokens=100,
    turns=3,
    points=6,
    chosen=None,
    seq=("get_references", "read_section"),
    pred=1,
    cidx=1,
    item="i",
    rep=0,
    depth=1,
):
    return {
        "kind": kind,
        "depth": depth,
        "correct": correct,
        "paper_recall": pr,
        "section_recall": sr,
        "termination": term,
        "tool_calls": calls,
        "turns_with_calls": with_calls,
        "tokens": tokens,
        "turns": turns,
        "points_used": points,
        "chosen_type": chosen or ("correct" if correct else "seed_only"),
        "tool_sequence": list(seq),
        "predicted_index": pred,
        "correct_index": cidx,
        "item_id": item,
        "replicate": rep,
        "paper_recall_any": pr,
        "section_recall_any": sr,
        "section_recall_loose": sr,
    }


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


def separating_axis(rows, family=None):
    """The sentence both front ends print: the service's decision, worded by the views."""
    from workbench.views.compare import separation_sentence

    return separation_sentence(reports.separation(rows, family=family))


def test_separating_axis_sentence():
    rows = [
        {"axis": "PR mt", "delta": 0.01, "p_holm": 1.0},
        {"axis": "Conv mt", "delta": -0.12, "p_holm": 0.004, "n": 25},
        {"axis": "SR st", "delta": 0.05, "p_holm": 0.2},
    ]
    assert separating_axis(rows, family=11) == (
        "B retrieves as well as A but converts 12 percentage points less than A on the 25 multi-target items both "
        "recalled (McNemar p = 0.004 after Holm's adjustment over 11 tests)."
    )


def test_separating_axis_never_announces_what_its_adjusted_test_does_not_support():
    """The largest Δ (SR st, 30 points) has a raw p < 0.05 but Holm-adjusted 0.09: it is not named; PR mt is."""
    rows = [
        {"axis": "SR st", "delta": 0.30, "p": 0.03, "p_holm": 0.09},
        {"axis": "PR mt", "delta": -0.10, "p": 0.001, "p_holm": 0.006},
        {"axis": "Conv st", "delta": 0.2, "p_holm": None},
    ]
    assert separating_axis(rows, family=6) == (
        "B retrieves the gold papers 10 percentage points less than A on "
        "multi-target items (McNemar p = 0.006 after Holm's adjustment "
        "over 6 tests)."
    )
    rows[1]["p_holm"] = 0.07
    assert separating_axis(rows, family=6) == (
        "No axis separates the runs: no recall or conversion difference "
        "has a McNemar p < 0.05 after Holm's adjustment over 6 tests."
    )


@pytest.fixture(scope="module")
def module_cache(tmp_path_factory):
    """A module fixture runs before the per-test isolation: without this its built-in benchmark would come from
    (and go to) the user's real cache, where another version of the generator may have left one."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("AGENTHOP_CACHE", str(tmp_path_factory.mktemp("modcache")))
        yield


@pytest.fixture(scope="module")
def panel_db(tmp_path_factory, module_cache):
    db = tmp_path_factory.mktemp("panel") / "s.sqlite"
    for agent, name in (("oracle", "o"), ("heuristic", "h"), ("random", "r")):
        assert (
            main(["--batch", "run", "--agent", agent, "--run", name, "--db", str(db), "--quiet", "--format", "json"])
            == 0
        )
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
    assert (
        main(
            [
                "--batch",
                "report",
                "o",
                "h",
                "r",
                "--panel",
                "--db",
                str(panel_db),
                "--format",
                "json",
                "--external",
                str(ext),
            ]
        )
        == 0
    )
    panel = json.loads(capsys.readouterr().out)
    assert [r["run"] for r in panel["rows"]] == ["o", "h", "r"]
    assert panel["best"]["accuracy"] == ["o"]
    assert panel["external"]["rho"] == pytest.approx(1.0)
    assert (
        panel["coverage"]["counts"]["low"] + panel["coverage"]["counts"]["mid"] + panel["coverage"]["counts"]["high"]
        == 60
    )
    assert main(["--batch", "report", "o", "h", "--panel", "--db", str(panel_db), "--format", "csv"]) == 0
    csv_text = capsys.readouterr().out
    assert (
        csv_text.splitlines()[0] == "table,run,axis,metric,split,value,numerator,denominator,best,tier_best,family,tier"
    )
    assert main(["--batch", "report", "h", "--db", str(panel_db), "--format", "markdown", "--ci"]) == 0
    md = capsys.readouterr().out
    assert "| axis | metric | ST | MT | all |" in md and "| 95% Wilson | paper recall |" in md


def test_single_run_analytics(panel_db, capsys):
    capsys.readouterr()
    assert main(["--batch", "report", "h", "--db", str(panel_db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    tm = rep["analytics"]["transitions"]
    store = Store(panel_db, readonly=True)
    seqs = [t["tool_sequence"] for t in store.trajectories(store.run("h")["id"])]
    n_pairs = sum(max(len(s) - 1, 0) for s in seqs)
    assert sum(map(sum, tm["counts"])) == n_pairs
    assert (
        rep["analytics"]["top_trigram"]["trigram"] == ["get_references", "list_sections", "read_section"]
        or rep["analytics"]["top_trigram"]["occurrences"] > 0
    )
    assert set(rep["analytics"]["stopping"]) >= {"mt_fail", "after_wrong_read"}


def test_compare_rows_are_the_diagnostics_numbers_with_intervals(panel_db):
    store = Store(panel_db, readonly=True)
    cmp = reports.compare_report(store, "h", "r", n_boot=2000)
    h = {t["item_id"]: t for t in store.trajectories(store.run("h")["id"])}
    r = {t["item_id"]: t for t in store.trajectories(store.run("r")["id"])}
    rh = reports.report_of(store.run("h"), list(h.values()))
    rows = {row["axis"]: row for row in cmp["rows"]}
    assert rows["Conv st"]["a_marginal"] == rh["axes"]["synthesis"]["conversion"]["st"]  # the report's, labelled
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


# ---------------------------------------------------------------- review fixes: legend, intervals, panel, counts


def test_avg_turns_are_model_turns_not_turns_used_by_api_errors():
    # 5 turns consumed, 2 of them by API errors: 3 model turns; a record without model_calls keeps `turns`
    records = [{**rec("st", True, True, True), "turns": 5, "model_calls": 3}, rec("st", False, False, False, turns=4)]
    assert axes.four_axes(records)["resource"]["avg_turns"].as_list() == [7, 2]
    assert "API errors" in reports.legend()["avg_turns"]


def test_mt_gold_count_and_section_ceiling_come_from_the_trajectory():
    g = lambda p: ["read_section", "ok", p, "gold", 1]  # noqa: E731
    three = {
        **rec("mt", False, False, False),
        "n_gold": 3,
        "section_reachable": 0,
        "actions": [g("g1"), g("g2"), ["submit_answer", "ok", None, None, 0]],
    }
    two = {**rec("mt", False, True, False), "n_gold": 2, "section_reachable": 1, "actions": three["actions"]}
    an = reports.analytics([three, two])
    mt_fail = an["stopping"]["mt_fail"]
    assert mt_fail["n"] == 1 and mt_fail["counts"]["Prem"] == 1  # only the three-gold item missed paper recall
    assert mt_fail["all_gold_wrong"] == {"n": 1, "share": [1, 1]}  # the two-gold one read both: apart
    rep = reports.report_of(
        {"name": "x", "agent": "a", "model": None, "dataset": "d", "ablation": "full", "status": "done", "planned": 2},
        [three, two, rec("st", True, True, True)],
    )
    assert rep["section_recall_ceiling"]["unreachable"] == 1 and rep["section_recall_ceiling"]["unknown"] == 1
    assert rep["counts"]["section_recall_ceiling"]["mt"] == [1, 2]


def test_the_runner_stores_gold_count_and_reachability(panel_db, demo_corpus):
    from sandbox.recall import section_reachable

    store = Store(panel_db, readonly=True)
    cols = store.trajectory_columns(store.run("h")["id"], ("item_id", "n_gold", "section_reachable"))
    items = {i.id: i for i in demo_corpus.items}
    for item_id, n_gold, reachable in zip(cols["item_id"], cols["n_gold"], cols["section_reachable"], strict=True):
        assert n_gold == len(items[item_id].gold_paper_ids) and reachable == int(section_reachable(items[item_id]))


def test_section_reachable_needs_a_resolved_direct_label_on_every_gold():
    from sandbox.recall import section_reachable
    from sandbox.records import Item, Label

    base = dict(
        id="mt_1",
        question_type="multi-target",
        depth=1,
        reasoning_type="R",
        cognitive_skill="c",
        venue="v",
        consensus_tier="gold",
        question="q",
        options=("a", "b", "c", "d"),
        correct_index=0,
        distractor_types=None,
        seed_paper_id="s",
        seed_arxiv_id="0",
        seed_title="t",
        gold_paper_ids=("g1", "g2"),
        gold_arxiv_ids=("1", "2"),
        bridge_paper_ids=(),
        bridge_arxiv_ids=(),
    )
    ok = (Label("1", "Method", "direct", 2, "exact"), Label("2", "Results", "direct", 1, "exact"))
    assert section_reachable(Item(**base, labels=ok))
    unresolved = (
        ok[0],
        Label("2", "4.1 Setup", "direct", None, "unresolved"),
        Label("2", "X", "supporting", 3, "exact"),
    )
    assert not section_reachable(Item(**base, labels=unresolved))


def test_trajectory_columns_equal_the_row_reader(panel_db):
    store = Store(panel_db, readonly=True)
    run_id = store.run("h")["id"]
    rows = store.trajectories(run_id)
    fields = ("id", "item_id", "correct", "tokens", "actions", "tool_sequence")
    cols = store.trajectory_columns(run_id, fields)
    for f in fields:
        assert cols[f] == [r[f] for r in rows], f
    raw = store.trajectory_columns(run_id, ("tool_sequence",), raw=("tool_sequence",))["tool_sequence"]
    assert [json.loads(t) for t in raw] == cols["tool_sequence"]


def test_an_old_store_opened_read_only_still_reports(tmp_path, panel_db):
    """Fields added by a later migration read as missing, not as an error, in a store that was not migrated."""
    import shutil
    import sqlite3

    db = tmp_path / "old.sqlite"
    shutil.copy(panel_db, db)
    con = sqlite3.connect(db)
    con.execute("ALTER TABLE trajectories DROP COLUMN n_gold")
    con.execute("ALTER TABLE trajectories DROP COLUMN section_reachable")
    con.execute("ALTER TABLE audit_labels DROP COLUMN undoes")
    con.execute("ALTER TABLE runs DROP COLUMN label_resolution")
    con.execute("ALTER TABLE steps DROP COLUMN reasoning_chars")
    con.execute("ALTER TABLE steps DROP COLUMN hop")
    con.execute("ALTER TABLE runs DROP COLUMN hop_rule")  # what migrations 6 to 10 added
    con.execute("ALTER TABLE steps DROP COLUMN finish_reason")
    con.execute("ALTER TABLE trajectories DROP COLUMN cut_off_turns")
    con.execute("ALTER TABLE trajectories DROP COLUMN lost_calls")  # what the finish_reason migration added
    con.execute("ALTER TABLE runs DROP COLUMN prompts_text")  # and the run's prompts, added after them
    con.execute("ALTER TABLE runs DROP COLUMN family")  # the run's tags (family, tier)
    con.execute("ALTER TABLE runs DROP COLUMN tier")
    con.execute("ALTER TABLE runs DROP COLUMN dataset_repo")  # where a Hub release came from (repository, commit)
    con.execute("ALTER TABLE runs DROP COLUMN dataset_revision")
    for bucket in ("prompt", "completion", "cache_read", "cache_creation"):  # a judge call's token buckets
        con.execute(f"ALTER TABLE judgments DROP COLUMN {bucket}_tokens")
    con.execute("PRAGMA user_version = 5")
    con.commit()
    con.close()
    rep = reports.diagnostics(Store(db, readonly=True), "h")
    assert rep["section_recall_ceiling"]["unknown"] == rep["n"] == 60


def test_diagnostics_equal_the_record_functions(panel_db):
    """The column path (Table, compact actions, encoded sequences) gives the numbers the dict path gives."""
    store = Store(panel_db, readonly=True)
    run = store.run("h")
    records = store.trajectories(run["id"])
    rep = reports.diagnostics(store, "h")
    by_dicts = reports.report_of(run, records)
    for key in ("axes", "counts", "splits", "terminations", "attribution", "accuracy"):
        assert rep[key] == by_dicts[key], key
    assert rep["analytics"] == reports.analytics(records)
    assert rep["position_bias"] == reports.position_bias(records)


def test_reports_never_import_scipy_stats(panel_db):
    """scipy.stats costs seconds to import: panel and diagnostics use numpy-only exact tests."""
    import subprocess
    import sys

    code = (
        "import sys; from storage import Store; from workbench.service import reports; "
        f"s = Store({str(panel_db)!r}, readonly=True); reports.panel_report(s, ['o', 'h', 'r']); "
        "reports.diagnostics(s, 'h', ci=True); reports.compare_report(s, 'o', 'h', n_boot=200); "
        "print('scipy.stats' in sys.modules)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"


def test_intervals_memory_is_chunked():
    """3,000 trajectories, B = 10,000: one chunked draw, not (B, n) matrices (≈ 240 MB each)."""
    import tracemalloc

    rng = np.random.default_rng(0)
    records = [
        rec(
            "st" if i % 2 else "mt",
            bool(rng.random() < 0.5),
            bool(rng.random() < 0.6),
            False,
            item=f"q{i % 1000}",
            rep=i // 1000,
        )
        for i in range(3000)
    ]
    table = axes.Table.of(records)
    tracemalloc.start()
    out = reports.intervals(table)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 80e6, peak
    assert out["accuracy"]["n"] == 1000 and out["accuracy"]["n_trajectories"] == 3000


@pytest.fixture(scope="module")
def replicated_db(panel_db, tmp_path_factory, module_cache):
    import shutil

    db = tmp_path_factory.mktemp("rep") / "s.sqlite"
    shutil.copy(panel_db, db)
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "heuristic",
                "--run",
                "heur3",
                "--replicates",
                "3",
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
            ]
        )
        == 0
    )
    return db


def test_ci_resamples_items_with_their_replicates(replicated_db, capsys):
    capsys.readouterr()
    assert main(["--batch", "report", "heur3", "--ci", "--db", str(replicated_db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    iv = rep["intervals"]
    assert rep["n"] == 180 and iv["accuracy"]["n"] == 60 and iv["accuracy"]["n_trajectories"] == 180
    assert iv["accuracy"]["estimate"] == pytest.approx(rep["accuracy"])
    for key in (
        "paper_recall.st",
        "paper_recall.mt",
        "section_recall.mt",
        "conversion.st",
        "calls_per_turn",
        "avg_tokens",
        "avg_turns",
        "avg_points",
        "max_tokens_rate",
        "max_turns_rate",
        "max_budget_rate",
    ):
        assert key in iv
    assert iv["paper_recall.st"]["estimate"] == pytest.approx(rep["axes"]["search"]["paper_recall"]["st"])
    assert iv["avg_turns"]["estimate"] == pytest.approx(rep["axes"]["resource"]["avg_turns"])
    assert iv["accuracy"]["low"] <= rep["accuracy"] <= iv["accuracy"]["high"]


def test_legend_and_every_block_are_printed(replicated_db, capsys):
    capsys.readouterr()
    assert main(["--batch", "report", "heur3", "--db", str(replicated_db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    for key in (
        "mt_fail",
        "after_evidence",
        "wrong_paper_read",
        "after_wrong_read",
        "early_submit",
        "top_trigram",
        "bigrams",
        "avg_turns",
        "avg_tokens",
        "section_recall_ceiling",
        "n_gold",
    ):
        assert rep["legend"][key], key
    assert "Table 9" in rep["legend"]["mt_fail"] and "bridge" in rep["legend"]["wrong_paper_read"]
    assert main(["--batch", "report", "heur3", "--db", str(replicated_db)]) == 0
    table = capsys.readouterr().out
    for text in (
        "after evidence",
        "early submit",
        "tool transitions",
        "MT-fail",
        "mt_fail:",
        "Imm",
        "wrong_paper_read:",
        "reference",
        "paper recall, any gold",
        "conversion given section recall",
    ):
        assert text in table, text
    for fmt in ("markdown",):  # CSV is the numbers of the axes (test_csv_is_numbers_a_program_can_read); JSON has all
        assert main(["--batch", "report", "heur3", "--db", str(replicated_db), "--format", fmt]) == 0
        text = capsys.readouterr().out
        for part in (
            "stopping · MT-fail",
            "stopping · after evidence",
            "stopping · after wrong read",
            "transitions",
            "get_references → list_sections",
            "split · venue",
            "split · reasoning",
            "position bias",
            "section recall, direct or supporting",
            "conversion given section recall",
            "top trigram",
            "bigram Δacc",
            "early submit",
            "mt_fail",
        ):
            assert part in text, (fmt, part)


def test_splits_and_panel_cells_carry_counts(replicated_db, capsys):
    store = Store(replicated_db, readonly=True)
    rep = reports.diagnostics(store, "heur3")
    recs = store.trajectories(store.run("heur3")["id"])
    st_d1 = [r for r in recs if r["kind"] == "st" and r["depth"] == 1]
    assert rep["counts"]["splits"]["type_depth"]["st_d1"] == [sum(r["correct"] for r in st_d1), len(st_d1)]
    venue, (num, den) = next(iter(rep["counts"]["splits"]["venue"].items()))
    assert rep["splits"]["venue"][venue] == pytest.approx(num / den)
    panel = reports.panel_report(store, ["o", "heur3"])
    row = panel["rows"][1]
    assert row["counts"]["accuracy"] == [rep["correct"], 180]
    assert row["counts"]["PR st"] == rep["counts"]["search"]["paper_recall"]["st"]
    assert row["counts"]["tokens"] == rep["counts"]["resource"]["avg_tokens"]


def test_report_carries_the_reference_evaluators_numbers(replicated_db, capsys, demo_corpus):
    from workbench.service.summary import agenthop_summary

    capsys.readouterr()
    assert main(["--batch", "report", "h", "--db", str(replicated_db), "--format", "json"]) == 0
    ref = json.loads(capsys.readouterr().out)["reference"]
    summary = agenthop_summary(Store(replicated_db, readonly=True), "h", demo_corpus)
    assert ref["accuracy"] == summary["accuracy"]["overall"]
    for key in ("paper_recall", "section_recall_soft", "section_recall_hard", "conversion_rate"):
        assert ref[key] == summary["retrieval"][key], key


def test_panel_groups_best_cells_and_dataset_warning(replicated_db, tmp_path, capsys):
    import shutil

    db = tmp_path / "s.sqlite"
    shutil.copy(replicated_db, db)
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "heuristic",
                "--run",
                "cb",
                "--ablation",
                "closed-book",
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
            ]
        )
        == 0
    )
    store = Store(db)
    panel = reports.panel_report(store, ["o", "h", "cb"])
    assert [g["group"] for g in panel["groups"]] == ["", "Search", "Synthesis", "Tool use", "Resources"]
    assert panel["warnings"] == []
    cb = next(r for r in panel["rows"] if r["run"] == "cb")
    assert cb["turns"] < min(r["turns"] for r in panel["rows"] if r["run"] != "cb")  # fewest turns, yet not best
    assert "cb" not in panel["best"].get("turns", []) and "cb" not in panel["best"].get("points", [])
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "cb", "--panel", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "Search" in out and "Resources" in out and "cb [closed-book]" in out
    store.conn.execute("UPDATE runs SET dataset_fingerprint = 'other' WHERE name = 'h'")
    warned = reports.panel_report(store, ["o", "h"])["warnings"]
    assert len(warned) == 1 and "different datasets" in warned[0] and "paired by id only" in warned[0]
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "--panel", "--db", str(db)]) == 0
    assert "warning: the runs ran on different datasets" in capsys.readouterr().out


def test_report_flag_misuse_is_a_usage_error(panel_db, capsys):
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "--panel", "--ci", "--db", str(panel_db)]) == 2
    assert main(["--batch", "report", "o", "h", "--ci", "--db", str(panel_db)]) == 2
    assert main(["--batch", "report", "o", "--external", "x.csv", "--db", str(panel_db)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and "--ci" in out.err and "--external needs --panel" in out.err


def test_every_ratio_with_an_interval_is_the_one_the_report_gives():
    """stats.axes.ratio_terms (what the bootstraps resample) and four_axes (what the report prints) define each
    ratio once each: their sums must agree on every key, so a point estimate and its interval never drift."""
    table = axes.Table.of([*RECORDS, rec("mt", True, None, None, item="f")])
    four = axes.four_axes(table)
    paths = {"accuracy": ("accuracy",), "calls_per_turn": ("tool_use", "calls_per_turn")}
    for key, (num, den) in axes.ratio_terms(table).items():
        head, _, split = key.partition(".")
        if key in paths:
            ratio = four
            for part in paths[key]:
                ratio = ratio[part]
        elif split:
            group = "search" if head in ("paper_recall", "section_recall") else "synthesis"
            ratio = four[group][head][split]
        else:
            ratio = four["resource"][key]
        assert (num.sum(), den.sum()) == pytest.approx((ratio.num, ratio.den)), key


# ---------------------------------------------------------------- QA: unmeasured outcomes are never tested as 0


@pytest.fixture(scope="module")
def unlabelled_db(tmp_path_factory, demo_dir):
    """Run A on the built-in release; run B on a copy without audit/recall_labels.jsonl (no section recall)."""
    import shutil

    root = tmp_path_factory.mktemp("unlabelled")
    release = root / "release"
    shutil.copytree(demo_dir, release)
    (release / "audit" / "recall_labels.jsonl").unlink()
    db = root / "s.sqlite"
    assert (
        main(["--batch", "run", "--agent", "oracle", "--run", "A", "--db", str(db), "--quiet", "--format", "json"]) == 0
    )
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "heuristic",
                "--run",
                "B",
                "--data",
                str(release),
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
            ]
        )
        == 0
    )
    return db


def test_compare_does_not_test_an_axis_one_side_did_not_measure(unlabelled_db, capsys):
    from scipy.stats import binomtest

    capsys.readouterr()
    assert main(["--batch", "compare", "A", "B", "--db", str(unlabelled_db), "--format", "json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    rows = {r["axis"]: r for r in cmp["rows"]}
    for axis in ("SR st", "SR mt"):
        assert rows[axis]["a"] == 1.0 and rows[axis]["b"] is None
        assert rows[axis]["p"] is None and rows[axis]["test"] is None and rows[axis]["delta"] is None
    assert cmp["tests"]["section_recall"] is None
    store = Store(unlabelled_db, readonly=True)
    b = store.trajectories(store.run("B")["id"])
    assert all(t["section_recall"] is None for t in b)
    missed = sum(1 for t in b if t["kind"] == "st" and not t["paper_recall"])  # oracle recalls every item
    assert rows["PR st"]["test"]["only_first"] == missed
    assert rows["PR st"]["p"] == pytest.approx(binomtest(missed, missed, 0.5).pvalue)
    assert main(["--batch", "compare", "A", "B", "--db", str(unlabelled_db)]) == 0
    sr_line = next(line for line in capsys.readouterr().out.splitlines() if "SR st" in line)
    assert sr_line.rstrip(" │|").endswith("—")


async def test_a_report_of_an_interrupted_run_says_it_is_partial(demo_corpus, tmp_path, capsys):
    """Cancelled after 6 of the 60 planned trajectories (as Ctrl-C does): every format says so."""
    import asyncio

    from sandbox.runner import Runner, RunSpec

    db = tmp_path / "s.sqlite"
    store = Store(db)
    main_task: asyncio.Task | None = None

    def on_event(event) -> None:
        if event.kind == "trajectory" and event.done == 6:
            main_task.cancel()

    runner = Runner(
        RunSpec(name="part", dataset="builtin", agent="oracle", workers=1), demo_corpus, store, on_event=on_event
    )
    main_task = asyncio.ensure_future(runner.run())
    with pytest.raises(asyncio.CancelledError):
        await main_task
    n = len(store.trajectories(store.run("part")["id"]))
    assert store.run("part")["status"] == "interrupted" and n < 60
    capsys.readouterr()
    assert main(["--batch", "report", "part", "--db", str(db)]) == 0
    assert f"· interrupted · {n} of 60 planned" in capsys.readouterr().out
    assert main(["--batch", "report", "part", "--db", str(db), "--format", "markdown"]) == 0
    assert f"**interrupted · {n} of 60 planned**" in capsys.readouterr().out
    assert main(["--batch", "report", "part", "--db", str(db), "--format", "json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert (rep["status"], rep["planned"], rep["n"]) == ("interrupted", 60, n)


def test_accuracy_is_reported_st_mt_all_with_counts_and_splits_carry_counts():
    run = {
        "name": "x",
        "agent": "llm",
        "model": "m",
        "dataset": "d",
        "ablation": "full",
        "status": "done",
        "planned": 5,
    }
    rep = reports.report_of(run, RECORDS)
    # by hand: ST a right, b and c wrong; MT d right, e wrong
    assert rep["accuracy_by_type"] == {"st": pytest.approx(1 / 3), "mt": 0.5, "all": 0.4}
    assert rep["counts"]["accuracy_by_type"] == {"st": [1, 3], "mt": [1, 2], "all": [2, 5]}
    assert rep["accuracy"] == 0.4 and rep["counts"]["accuracy"] == [2, 5]  # the foundation keys stay
    from workbench.views.report import report_rows

    rows = {row[1]: row for row in report_rows(rep)}
    assert rows["accuracy"][2:] == ("33.3% (1/3)", "50.0% (1/2)", "40.0% (2/5)")
    assert rows["accuracy st_d1"][4] == "33.3% (1/3)" and rows["accuracy mt_d2"][4] == "100.0% (1/1)"
    assert rows["accuracy mt_d1"][4] == "0.0% (0/1)"


def test_panel_cells_are_over_the_common_items_and_say_so(panel_db, tmp_path, capsys):
    import shutil

    db = tmp_path / "s.sqlite"
    shutil.copy(panel_db, db)
    assert (
        main(
            [
                "--batch",
                "run",
                "--agent",
                "random",
                "--run",
                "r6",
                "--limit",
                "6",
                "--db",
                str(db),
                "--quiet",
                "--format",
                "json",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "r6", "--panel", "--db", str(db), "--format", "json"]) == 0
    panel = json.loads(capsys.readouterr().out)
    store = Store(db, readonly=True)
    six = {t["item_id"] for t in store.trajectories(store.run("r6")["id"])}
    assert panel["n_common_items"] == 6
    h = [t for t in store.trajectories(store.run("h")["id"]) if t["item_id"] in six]
    rows = {r["run"]: r for r in panel["rows"]}
    assert (rows["h"]["n"], rows["h"]["n_all"]) == (6, 60)
    assert rows["h"]["counts"]["accuracy"] == [sum(bool(t["correct"]) for t in h), 6]  # by hand, on the six
    assert rows["o"]["accuracy"] == 1.0 and rows["o"]["counts"]["accuracy"] == [6, 6]
    assert main(["--batch", "report", "o", "h", "r6", "--panel", "--db", str(db)]) == 0
    assert "panel · 3 runs · cells over the 6 items common to all" in capsys.readouterr().out
    assert main(["--batch", "report", "o", "--panel", "--db", str(db)]) == 0
    assert "panel · 1 run · 60 items" in capsys.readouterr().out


def test_csv_is_numbers_a_program_can_read(panel_db, capsys):
    """`report --format csv` and `--panel --format csv`: one ratio per row, value = numerator ÷ denominator,
    empty where nothing was measured; no percent signs, thousands separators or best stars in cells."""
    import csv
    import io

    store = Store(panel_db, readonly=True)
    h = store.trajectories(store.run("h")["id"])
    right_st = sum(bool(t["correct"]) for t in h if t["kind"] == "st")
    n_st = sum(t["kind"] == "st" for t in h)
    capsys.readouterr()
    assert main(["--batch", "report", "h", "--db", str(panel_db), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    by = {(r["axis"], r["metric"], r["split"]): r for r in rows}
    acc = by[("accuracy", "accuracy", "st")]
    assert (int(acc["numerator"]), int(acc["denominator"])) == (right_st, n_st)
    assert float(acc["value"]) == pytest.approx(right_st / n_st)
    assert by[("resource", "avg_tokens", "all")]["value"] == ""  # a scripted agent's tokens are not measured
    for r in rows:
        assert r["value"] == "" or float(r["value"]) == pytest.approx(float(r["numerator"]) / float(r["denominator"]))
    assert main(["--batch", "report", "o", "h", "--panel", "--db", str(panel_db), "--format", "csv"]) == 0
    panel = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    cell = next(r for r in panel if r["run"] == "o" and r["metric"] == "accuracy")
    assert (cell["value"], cell["numerator"], cell["denominator"], cell["best"]) == ("1.0", "60", "60", "1")
    assert all("%" not in v and "*" not in v for r in panel for v in r.values())


@pytest.mark.parametrize("content", ['{"a": 1}', '{"o": 90, "h": 60}', "o;90\nh;60\n", ""])
def test_an_external_file_without_run_score_rows_is_refused(panel_db, capsys, tmp_path, content):
    """`--external x.json` was read as CSV, found nothing and the panel printed without the correlation, silently."""
    ext = tmp_path / "x.json"
    ext.write_text(content)
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "--panel", "--external", str(ext), "--db", str(panel_db)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and str(ext) in out.err and "run,score" in out.err and len(out.err.splitlines()) <= 2
