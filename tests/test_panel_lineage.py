"""`report --panel` as the paper's Table 2: rows grouped by tier and family, tier leaders marked (†) only where the
leader beats the tier's runner-up significantly (McNemar's exact test, rebuilt here with scipy), fingerprints."""

from __future__ import annotations

import csv
import io
import json

import pytest
from scipy.stats import binomtest

from storage import Store
from tests.cli_inprocess import batch

RUNS = (
    ("o", "oracle", 0, "Beta", "closed"),
    ("r", "random", 0, "Gamma", "closed"),
    ("h", "heuristic", 0, "Alpha", "open"),
    ("h2", "heuristic", 1, "Alpha", "open"),
)


@pytest.fixture(scope="module")
def lineage_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("lineage") / "s.sqlite"
    from workbench.cli import main

    for name, agent, seed, family, tier in RUNS:
        assert (
            main(
                [
                    "--batch",
                    "run",
                    "--agent",
                    agent,
                    "--seed",
                    str(seed),
                    "--run",
                    name,
                    "--db",
                    str(db),
                    "--family",
                    family,
                    "--tier",
                    tier,
                    "--quiet",
                    "--format",
                    "json",
                ]
            )
            == 0
        )
    return db


def _panel(capsys, db, fmt="json"):
    out = batch(capsys, "report", "--panel", *(r[0] for r in RUNS), "--db", str(db), "--format", fmt)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout) if fmt == "json" else out.stdout


def _mcnemar_p(store, a, b):
    first = {t["item_id"]: bool(t["correct"]) for t in store.trajectories(store.run(a)["id"])}
    second = {t["item_id"]: bool(t["correct"]) for t in store.trajectories(store.run(b)["id"])}
    only_a = sum(first[i] and not second[i] for i in first)
    only_b = sum(second[i] and not first[i] for i in first)
    return binomtest(only_a, only_a + only_b, 0.5).pvalue if only_a + only_b else 1.0, only_a, only_b


def test_rows_grouped_by_tier_then_family_then_accuracy(lineage_db, capsys):
    panel = _panel(capsys, lineage_db)
    assert [(g["tier"], g["family"]) for g in panel["lineage"]] == [
        ("closed-frontier", "Beta"),
        ("closed-frontier", "Gamma"),
        ("open-frontier", "Alpha"),
    ]
    acc = {r["run"]: r["accuracy"] for r in panel["rows"]}
    alpha = panel["lineage"][2]["runs"]
    assert acc[alpha[0]] >= acc[alpha[1]]


def test_tier_leaders_marked_as_they_stand_and_conversion_shaded_only_where_mcnemar_separates(lineage_db, capsys):
    panel = _panel(capsys, lineage_db)
    store = Store(lineage_db, readonly=True)
    p_closed, _, _ = _mcnemar_p(store, "o", "r")
    assert p_closed < 0.05
    assert panel["tier_best"]["closed-frontier"]["accuracy"] == ["o"]
    assert panel["tier_best_tests"]["closed-frontier"]["accuracy"]["p"] == pytest.approx(p_closed)
    acc = {r["run"]: r["accuracy"] for r in panel["rows"]}
    top = max(acc[n] for n in ("h", "h2"))
    # the open tier's leader is marked whatever its test says (the paper's Table 2)
    assert sorted(panel["tier_best"]["open-frontier"]["accuracy"]) == sorted(n for n in ("h", "h2") if acc[n] == top)
    if acc["h"] != acc["h2"]:
        leader, runner = sorted(("h", "h2"), key=lambda n: -acc[n])
        p_open, _, _ = _mcnemar_p(store, leader, runner)
        assert panel["tier_best_tests"]["open-frontier"]["accuracy"]["p"] == pytest.approx(p_open)
    # shading (‡): a tier leader's conversion, only where McNemar on the items both recalled separates it
    for tier, tests in panel["tier_best_tests"].items():
        for col in ("Conv st", "Conv mt"):
            t = tests.get(col)
            shaded = panel["tier_shaded"].get(tier, {}).get(col)
            assert bool(shaded) == bool(t and t["separated"])
            if t and t["separated"]:
                assert t["p"] < 0.05 and shaded == t["best"]


def test_every_format_carries_the_grouping_and_marks(lineage_db, capsys):
    table = _panel(capsys, lineage_db, "table")
    assert "Closed Frontier · Beta" in table and "Open Frontier · Alpha" in table and "†" in table
    assert "fingerprints (paper §4.2)" in table and "family vs the other families" in table
    md = _panel(capsys, lineage_db, "markdown")
    assert "| **Closed Frontier · Beta** |" in md and "| family / run |" in md
    rows = list(csv.DictReader(io.StringIO(_panel(capsys, lineage_db, "csv"))))
    o_acc = next(r for r in rows if r["run"] == "o" and r["metric"] == "accuracy")
    assert (o_acc["tier_best"], o_acc["family"], o_acc["tier"]) == ("1", "Beta", "closed-frontier")


def test_fingerprints_per_run_rebuilt_from_the_stored_actions(lineage_db, capsys):
    panel = _panel(capsys, lineage_db)
    store = Store(lineage_db, readonly=True)
    trajs = store.trajectories(store.run("r")["id"])
    calls = [a[0] for t in trajs for a in t["actions"]]
    sig = panel["fingerprints"]["models"]["r"]
    assert sig["think_share"]["value"] == pytest.approx(calls.count("think") / len(calls))
    assert sig["search_volume"]["value"] == pytest.approx(calls.count("search_papers") / len(trajs))
    assert sig["calls_per_turn"]["value"] == pytest.approx(
        sum(t["tool_calls"] for t in trajs) / sum(t["turns_with_calls"] for t in trajs)
    )
    fams = panel["fingerprints"]["families"]
    assert set(fams) == {"Alpha", "Beta", "Gamma"}
    assert all(f["words"] == [] for f in fams.values())  # one or two runs per family cannot support a word


def test_a_panel_of_one_family_shows_the_family_s_mean_and_no_tests(lineage_db, capsys):
    """With one family there are no others to test it against, but its row still says what it claims, the mean of
    its runs (by hand from the runs' own values); the family-vs-others table has nothing to show and the note says
    why."""
    out = batch(capsys, "report", "--panel", "h", "h2", "--db", str(lineage_db), "--format", "json")
    assert out.returncode == 0, out.stderr
    fp = json.loads(out.stdout)["fingerprints"]
    (alpha,) = fp["families"].values()
    for sig, test in alpha["signatures"].items():
        values = [fp["models"][run][sig]["value"] for run in ("h", "h2")]
        values = [v for v in values if v is not None]
        assert test["family_mean"] == (pytest.approx(sum(values) / len(values)) if values else None), sig
        assert test["p_holm"] is None and not test["significant"]
    assert alpha["words"] == []
    table = batch(capsys, "report", "--panel", "h", "h2", "--db", str(lineage_db)).stdout
    row = next(line for line in table.splitlines() if "Alpha (mean of 2)" in line)
    calls = (fp["models"]["h"]["calls_per_turn"]["value"] + fp["models"]["h2"]["calls_per_turn"]["value"]) / 2
    assert row.split("│")[2].strip() == f"{calls:.2f}", row  # the calls/turn column, not `—`
    assert "family tests need runs of at least two families" in table


def test_imported_reference_runs_join_a_tagged_panel(tmp_path, capsys):
    """The Done-when panel on a release: reference runs imported by replay (family derived from the logged model,
    or chosen) beside scripted runs tagged into other families, grouped, with fingerprints."""
    from tests.interop_data import logs, write_experiment, write_interop_release

    release = write_interop_release(tmp_path / "release")
    exp = write_experiment(tmp_path / "experiments" / "gpt-4.1", logs())
    db = str(tmp_path / "s.db")
    assert (
        batch(
            capsys, "import-reference", str(exp), "--data", str(release), "--run", "ref", "--db", db, "--quiet"
        ).returncode
        == 0
    )
    assert (
        batch(
            capsys,
            "import-reference",
            str(exp),
            "--data",
            str(release),
            "--run",
            "ref-b",
            "--db",
            db,
            "--family",
            "Claude",
            "--tier",
            "closed",
            "--quiet",
        ).returncode
        == 0
    )
    bad = batch(
        capsys,
        "import-reference",
        str(exp),
        "--data",
        str(release),
        "--run",
        "ref-c",
        "--db",
        db,
        "--tier",
        "giant",
        "--quiet",
    )
    assert bad.returncode == 2 and "--tier: unknown tier 'giant'" in bad.stderr
    listed = json.loads(batch(capsys, "runs", "--db", db, "--format", "json").stdout)
    assert [r["name"] for r in listed] == ["ref", "ref-b"]  # nothing written for the refused import
    for name, agent, family in (("o", "oracle", "Beta"), ("h", "heuristic", "Alpha"), ("r", "random", "Alpha")):
        assert (
            batch(
                capsys,
                "run",
                "--data",
                str(release),
                "--agent",
                agent,
                "--run",
                name,
                "--db",
                db,
                "--family",
                family,
                "--tier",
                "efficient",
                "--quiet",
            ).returncode
            == 0
        )
    names = ["ref", "ref-b", "o", "h", "r"]
    out = batch(capsys, "report", "--panel", *names, "--db", db, "--format", "json")
    assert out.returncode == 0, out.stderr
    panel = json.loads(out.stdout)
    groups = {(g["tier"], g["family"]): g["runs"] for g in panel["lineage"]}
    assert groups[("closed-frontier", "GPT")] == ["ref"] and groups[("closed-frontier", "Claude")] == ["ref-b"]
    assert sorted(groups[("compute-efficient", "Alpha")]) == ["h", "r"]
    assert set(panel["fingerprints"]["families"]) == {"GPT", "Claude", "Beta", "Alpha"}
    table = batch(capsys, "report", "--panel", *names, "--db", db).stdout
    assert "Closed Frontier · GPT" in table and "Compute-Efficient · Alpha" in table


PROTOCOL_TOOLS = {
    "get_paper_info",
    "get_references",
    "search_papers",
    "list_sections",
    "read_section",
    "think",
    "submit_answer",
}


def _after_gold(acts, n_gold):
    """Table 9's category after the last gold read, by hand; None outside its population."""
    golds = [i for i, a in enumerate(acts) if a[0] == "read_section" and a[4] and a[3] == "gold"]
    if not golds or len({acts[i][2] for i in golds}) < n_gold:
        return None
    between = set()
    for a in acts[golds[-1] + 1 :]:
        if a[0] == "read_section":
            return "Read"
        if a[0] == "submit_answer":
            return "Imm" if not between else "Thnk" if between == {"think"} else "Nav"
        between.add(a[0])
    return "End"


def test_fingerprints_of_a_general_setting_run_leave_out_of_domain_calls(tmp_path, capsys):
    """Issue 37 item 15: a run offered out-of-domain tools (and calling them) has its shares over the protocol's
    own calls, so it compares with a plain run; early commit / verify / over-search are Table 9's Imm / Thnk /
    Read over the trajectories that read every gold; under-engagement = no delivered read. Rebuilt here."""
    db = str(tmp_path / "g.sqlite")
    common = ("--agent", "heuristic", "--limit", "12", "--db", db, "--quiet", "--format", "json")
    assert batch(capsys, "run", "--run", "plain", "--family", "Alpha", *common).returncode == 0
    general = ("--extra-tools", "builtin", "--extra-tools-count", "8", "--distractible", "0.3")
    assert batch(capsys, "run", "--run", "g", "--family", "Beta", *general, *common).returncode == 0
    assert batch(capsys, "run", "--run", "o", "--agent", "oracle", "--family", "Gamma", *common[2:]).returncode == 0
    panel = json.loads(batch(capsys, "report", "--panel", "plain", "g", "o", "--db", db, "--format", "json").stdout)
    store = Store(db, readonly=True)
    trajs = store.trajectories(store.run("g")["id"])
    assert any(a[0] not in PROTOCOL_TOOLS for t in trajs for a in t["actions"])  # it did call out of domain
    calls = [a[0] for t in trajs for a in t["actions"] if a[0] in PROTOCOL_TOOLS]
    sig = panel["fingerprints"]["models"]["g"]
    assert sig["read_share"]["value"] == pytest.approx(calls.count("read_section") / len(calls))
    assert sig["think_share"]["denominator"] == len(calls)
    cats = [_after_gold([a for a in t["actions"] if a[0] in PROTOCOL_TOOLS], t["n_gold"]) for t in trajs]
    reached = [c for c in cats if c is not None]
    for key, cat in (("early_commit", "Imm"), ("verify_before_commit", "Thnk"), ("over_search", "Read")):
        assert sig[key]["denominator"] == len(reached)
        assert sig[key]["value"] == (pytest.approx(reached.count(cat) / len(reached)) if reached else None)
    never = sum(not any(a[0] == "read_section" and a[4] for a in t["actions"]) for t in trajs)
    assert sig["under_engagement"]["value"] == pytest.approx(never / len(trajs))


def test_a_separated_conversion_is_shaded_and_a_close_one_is_not(tmp_path, capsys):
    """Two oracle runs of one tier (every item recalled and right), then by SQL B wrong on 12 single-target items
    it recalled: B's Conv st is lower and McNemar on the items both recalled separates them (p = 2 / 2^12), so A's
    Conv st is shaded ‡; Conv mt ties (no test), so nothing is shaded there."""
    db = tmp_path / "s.sqlite"
    for name in ("A", "B"):
        out = batch(capsys, "run", "--agent", "oracle", "--run", name, "--db", str(db), "--tier", "closed", "--quiet")
        assert out.returncode == 0, out.stderr
    store = Store(db)
    st = sorted(t["item_id"] for t in store.trajectories(store.run("B")["id"]) if t["kind"] == "st")
    run_b = store.run("B")["id"]
    for item in st[:12]:
        store.conn.execute("UPDATE trajectories SET correct = 0 WHERE run_id = ? AND item_id = ?", (run_b, item))
    store.conn.commit()
    store.close()
    panel = json.loads(batch(capsys, "report", "--panel", "A", "B", "--db", str(db), "--format", "json").stdout)
    test = panel["tier_best_tests"]["closed-frontier"]["Conv st"]
    assert test["best"] == ["A"] and (test["best_better"], test["runner_up_better"]) == (12, 0)
    assert test["p"] == pytest.approx(binomtest(12, 12, 0.5).pvalue) and test["separated"]
    assert panel["tier_shaded"]["closed-frontier"] == {"Conv st": ["A"]}
    md = batch(capsys, "report", "--panel", "A", "B", "--db", str(db), "--format", "markdown").stdout
    header = next(line for line in md.splitlines() if line.startswith("| run |")).split(" | ")
    a_row = next(line for line in md.splitlines() if line.startswith("| A |")).split(" | ")
    b_row = next(line for line in md.splitlines() if line.startswith("| B |")).split(" | ")
    conv = header.index("Conv st")
    assert a_row[conv].endswith("‡") and "‡" not in "".join(b_row)
    assert sum("‡" in c for c in a_row) == 1
