"""Issue 12 §3 and §5: intervals that mean what they say, and tests that support what the sentences announce.

Real stores made by the CLI (`workbench.cli.main`), some outcomes then set by SQL so that the expected numbers
can be computed by hand from the stored rows.
"""

from __future__ import annotations

import json
import sqlite3
import statistics

import numpy as np
import pytest

from stats.multiplicity import holm
from stats.significance import cronbach_alpha, mcnemar_exact
from storage import Store
from workbench.cli import main
from workbench.service import reports


def _run(db, agent: str, name: str, *extra: str) -> None:
    assert (
        main(
            ["--batch", "run", "--agent", agent, "--run", name, "--db", str(db), "--quiet", "--format", "json", *extra]
        )
        == 0
    )


@pytest.fixture(scope="module")
def base_db(tmp_path_factory):
    """o (oracle), h and h2 (heuristic, the same outcomes), r (random), heur3 (heuristic, 3 replicates)."""
    db = tmp_path_factory.mktemp("measure") / "s.sqlite"
    for agent, name in (("oracle", "o"), ("heuristic", "h"), ("heuristic", "h2"), ("random", "r")):
        _run(db, agent, name)
    _run(db, "heuristic", "heur3", "--replicates", "3")
    return db


@pytest.fixture
def db(base_db, tmp_path):
    """A copy each test may change by SQL (SQLite's backup: a file copy could miss what is still in the WAL)."""
    copy = tmp_path / "s.sqlite"
    src, dst = sqlite3.connect(base_db), sqlite3.connect(copy)
    with dst:
        src.backup(dst)
    src.close()
    dst.close()
    return copy


def _set(store: Store, run: str, item: str, **fields) -> None:
    cols = ", ".join(f"{k} = ?" for k in fields)
    store.conn.execute(
        f"UPDATE trajectories SET {cols} WHERE run_id = ? AND item_id = ?",
        (*fields.values(), store.run(run)["id"], item),
    )
    store.conn.commit()


def _json(capsys, *args: str):
    capsys.readouterr()
    assert main(["--batch", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- intervals (§3 first bullet, §5 third bullet)


def test_a_perfect_score_reads_a_wilson_interval_not_certainty(db, capsys):
    rep = _json(capsys, "report", "o", "--ci", "--db", str(db))
    acc = rep["intervals"]["accuracy"]
    assert rep["correct"] == rep["n"] == 60
    assert 0.9398 <= acc["low"] <= 0.9402 and acc["high"] == 1 and acc["method"] == "wilson"
    capsys.readouterr()
    assert main(["--batch", "report", "o", "--ci", "--db", str(db)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "95% Wilson" in x and "accuracy" in x)
    assert "94.0% – 100.0% (n=60)" in line


def test_each_interval_states_its_own_n(db, capsys):
    """An MT interval counts the MT items (a conversion interval the recalled ones), not the run's 60."""
    store = Store(db, readonly=True)
    h = store.trajectories(store.run("h")["id"])
    n_mt = sum(t["kind"] == "mt" for t in h)
    recalled_mt = [t for t in h if t["kind"] == "mt" and t["paper_recall"]]
    iv = _json(capsys, "report", "h", "--ci", "--db", str(db))["intervals"]
    assert 0 < n_mt < 60
    assert iv["paper_recall.mt"]["n"] == n_mt and iv["accuracy"]["n"] == 60
    assert iv["conversion.mt"]["n"] == len(recalled_mt)
    assert iv["conversion.mt"]["successes"] == sum(bool(t["correct"]) for t in recalled_mt)
    capsys.readouterr()
    assert main(["--batch", "report", "h", "--ci", "--db", str(db)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if "95% Wilson" in x and "paper recall" in x)
    st, mt, whole = [cell.strip() for cell in line.split("│")[3:6]]  # each interval in its own column
    assert mt.endswith(f"(n={n_mt})") and whole.endswith("(n=60)") and st.endswith(f"(n={60 - n_mt})")


def test_replicates_cluster_the_wilson_interval_by_item(db, capsys):
    rep = _json(capsys, "report", "heur3", "--ci", "--db", str(db))
    acc = rep["intervals"]["accuracy"]
    assert (acc["n"], acc["n_trajectories"], acc["trials"]) == (60, 180, 180)
    assert acc["method"] == "wilson, clustered by item" and 60 <= acc["n_eff"] <= 180
    # by hand from the stored rows: per item y_i of m_i = 3 right; V = Σ(y_i − p̂·3)² / 180², deff = V / (p̂(1−p̂)/180)
    from stats.wilson import wilson, wilson_bounds

    store = Store(db, readonly=True)
    y: dict[str, int] = {}
    for t in store.trajectories(store.run("heur3")["id"]):
        y[t["item_id"]] = y.get(t["item_id"], 0) + int(bool(t["correct"]))
    yi = np.array(list(y.values()), dtype=float)
    p = yi.sum() / 180
    deff = max(1.0, ((yi - 3 * p) ** 2).sum() / 180**2 / (p * (1 - p) / 180))
    assert 0 < p < 1 and deff > 1.5  # the replicates of an item mostly agree
    assert acc["design_effect"] == pytest.approx(deff) and acc["n_eff"] == pytest.approx(180 / deff)
    assert (acc["low"], acc["high"]) == pytest.approx(wilson_bounds(p, 180 / deff))
    naive = wilson(yi.sum(), 180)
    assert acc["high"] - acc["low"] > naive.high - naive.low


def test_unmeasured_tokens_have_no_interval_and_a_constant_mean_says_no_variation(db, capsys):
    store = Store(db)
    store.conn.execute("UPDATE trajectories SET points_used = 6 WHERE run_id = ?", (store.run("o")["id"],))
    store.conn.commit()
    iv = _json(capsys, "report", "o", "--ci", "--db", str(db))["intervals"]
    assert iv["avg_tokens"] is None  # a scripted agent's tokens are not measured: no 0–0 interval
    assert iv["avg_points"]["no_variation"] is True and iv["avg_points"]["low"] == 6
    assert iv["avg_turns"]["no_variation"] is (iv["avg_turns"]["low"] == iv["avg_turns"]["high"])
    capsys.readouterr()
    assert main(["--batch", "report", "o", "--ci", "--db", str(db)]) == 0
    lines = [x for x in capsys.readouterr().out.splitlines() if "95% bootstrap" in x]
    assert lines and not any("avg tokens" in x for x in lines)
    points = next(x for x in lines if "avg points" in x)
    assert "no variation: 6.00" in points and "6.00 – 6.00" not in points


# ---------------------------------------------------------------- compare (§3 second bullet, §5 third bullet)


def test_compare_conversion_is_on_the_items_both_recalled(db, capsys):
    store = Store(db, readonly=True)
    o = {t["item_id"]: t for t in store.trajectories(store.run("o")["id"])}
    h = {t["item_id"]: t for t in store.trajectories(store.run("h")["id"])}
    cmp = _json(capsys, "compare", "o", "h", "--db", str(db))
    rows = {r["axis"]: r for r in cmp["rows"]}
    for kind in ("st", "mt"):
        both = [i for i in o if o[i]["kind"] == kind and o[i]["paper_recall"] and h[i]["paper_recall"]]
        own_h = [i for i in h if h[i]["kind"] == kind and h[i]["paper_recall"]]
        row = rows[f"Conv {kind}"]
        assert both and row["n"] == len(both) == row["test"]["n"]
        assert row["a"] == pytest.approx(np.mean([bool(o[i]["correct"]) for i in both]))
        assert row["b"] == pytest.approx(np.mean([bool(h[i]["correct"]) for i in both]))
        assert row["delta"] == pytest.approx(row["b"] - row["a"])
        assert row["ci_low"] - 1e-9 <= row["delta"] <= row["ci_high"] + 1e-9
        want = mcnemar_exact([o[i]["correct"] for i in both], [h[i]["correct"] for i in both])
        assert row["p"] == pytest.approx(want["p"])
        assert row["b_marginal"] == pytest.approx(np.mean([bool(h[i]["correct"]) for i in own_h]))
        assert row["set"].startswith("items both runs recalled")
    capsys.readouterr()
    assert main(["--batch", "compare", "o", "h", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    conv = next(x for x in out.splitlines() if "Conv st " in x and "marginal" not in x)
    assert f"│ {rows['Conv st']['n']} " in conv.replace("  ", " ") or f" {rows['Conv st']['n']} │" in conv
    assert "Conv st marginal" in out and "Table 12 set" in out


def test_compare_p_values_are_holm_adjusted_together(db, capsys):
    cmp = _json(capsys, "compare", "o", "h", "--db", str(db))
    family = [r["test"] for r in cmp["rows"] if r["test"] is not None]
    family += [t for k, t in cmp["tests"].items() if t is not None and k != "accuracy"]
    assert cmp["holm"]["m"] == len(family) == len(cmp["holm"]["family"])
    assert [t["p_holm"] for t in family] == pytest.approx(holm([t["p"] for t in family]))
    for r in cmp["rows"]:
        assert r["p_holm"] == (None if r["test"] is None else r["test"]["p_holm"])
    assert cmp["tests"]["accuracy"]["p_holm"] == cmp["rows"][0]["p_holm"]
    assert "after Holm's adjustment over" in cmp["summary"]


def test_compare_says_no_axis_separates_runs_its_adjusted_test_cannot_tell_apart(db, capsys):
    """h2 = h with two single-target items no longer recalled: a 2-item difference (McNemar p = 0.5) is not a
    separating axis, whatever its Δ."""
    store = Store(db)
    st_recalled = [
        t["item_id"] for t in store.trajectories(store.run("h2")["id"]) if t["kind"] == "st" and t["paper_recall"]
    ][:2]
    for item in st_recalled:
        _set(store, "h2", item, paper_recall=0)
    cmp = _json(capsys, "compare", "h", "h2", "--db", str(db))
    pr = next(r for r in cmp["rows"] if r["axis"] == "PR st")
    assert pr["delta"] < 0 and pr["p"] == pytest.approx(0.5)
    assert cmp["summary"].startswith("No axis separates the runs")
    capsys.readouterr()
    assert main(["--batch", "compare", "h", "h2", "--db", str(db)]) == 0
    assert "No axis separates the runs" in capsys.readouterr().out


def test_an_identical_pair_shows_no_variation_not_a_zero_interval(db, capsys):
    cmp = _json(capsys, "compare", "h", "h2", "--db", str(db))
    acc = cmp["rows"][0]
    assert acc["delta"] == 0 and acc["ci_no_variation"] is True
    from workbench.views.compare import compare_rows

    cells = {row[0]: row for row in compare_rows(cmp)}
    assert cells["accuracy"][5] == "no variation"
    from workbench.views.compare import attribution_rows

    deltas = cmp["attribution"]["delta"]
    assert deltas and all(d["delta"] == 0 and d["ci_no_variation"] for d in deltas.values())
    assert all(row[4] == "no variation" for row in attribution_rows(cmp)[1:])


# ---------------------------------------------------------------- panel (§3 third to fifth bullets)


def test_best_cell_is_marked_as_it_stands_with_its_test_beside(db, capsys):
    """The paper marks the best cell as it stands: h2 beats h by one item — marked, and the McNemar test beside it
    says it does not separate them (p = 1)."""
    store = Store(db)
    h2 = store.trajectories(store.run("h2")["id"])
    wrong = next(t["item_id"] for t in h2 if not t["correct"] and t["paper_recall"])
    _set(store, "h2", wrong, correct=1)  # h2 beats h by one item: best, but not significantly
    panel = _json(capsys, "report", "h", "h2", "--panel", "--db", str(db))
    acc = {r["run"]: r["accuracy"] for r in panel["rows"]}
    assert acc["h2"] > acc["h"]
    assert panel["best"]["accuracy"] == ["h2"]
    test = panel["best_tests"]["accuracy"]
    assert test["best"] == ["h2"] and test["runner_up"] == ["h"] and test["separated"] is False
    assert (
        test["test"] == "McNemar exact"
        and test["p"] == 1.0
        and (test["best_better"], test["runner_up_better"]) == (1, 0)
    )
    capsys.readouterr()
    assert main(["--batch", "report", "h", "h2", "--panel", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "*" in "".join(x for x in out.splitlines() if x.startswith("│ h2"))


def test_a_best_cell_separated_by_its_mcnemar_test(db, capsys):
    store = Store(db, readonly=True)
    panel = reports.panel_report(store, ["o", "h", "r"])
    o = {t["item_id"]: t["correct"] for t in store.trajectories(store.run("o")["id"])}
    h = {t["item_id"]: t["correct"] for t in store.trajectories(store.run("h")["id"])}
    want = mcnemar_exact([o[i] for i in o], [h[i] for i in o])
    test = panel["best_tests"]["accuracy"]
    assert panel["best"]["accuracy"] == ["o"] and test["runner_up"] == ["h"] and test["separated"]
    assert test["p"] == pytest.approx(want["p"]) and want["p"] < 0.05
    assert test["n"] == 60
    for col, t in panel["best_tests"].items():  # the mark stands; `separated` is the test's verdict beside it
        assert t["best"] == panel["best"][col]
        if t["separated"]:
            assert t["p"] < 0.05 and t["best_better"] > t["runner_up_better"]


def test_panel_alpha_in_the_papers_orientation_and_item_total(db, capsys):
    store = Store(db, readonly=True)
    panel = _json(capsys, "report", "o", "h", "r", "--panel", "--db", str(db))
    cols = {}
    for name in ("o", "h", "r"):
        cols[name] = {t["item_id"]: int(t["correct"]) for t in store.trajectories(store.run(name)["id"])}
    items = list(cols["o"])
    respondents = np.array([[cols[n][i] for i in items] for n in ("o", "h", "r")], dtype=float)  # runs × items
    cov = np.cov(respondents, rowvar=False, ddof=1)
    k = len(items)
    assert panel["cronbach_alpha"] == pytest.approx(k / (k - 1) * (1 - np.trace(cov) / cov.sum()))
    assert panel["cronbach_alpha"] == pytest.approx(cronbach_alpha(respondents.T))
    totals = respondents.sum(axis=1)
    for j, item in enumerate(items):
        x, rest = respondents[:, j], totals - respondents[:, j]
        want = None if x.std() == 0 or rest.std() == 0 else float(np.corrcoef(x, rest)[0, 1])
        assert panel["item_total_correlation"][item] == (pytest.approx(want) if want is not None else None)
    capsys.readouterr()
    assert main(["--batch", "report", "o", "h", "r", "--panel", "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert f"Cronbach's α (items as components, runs as respondents): {panel['cronbach_alpha']:.3f}" in out
    assert "corrected item-total correlation (across runs)" in out


def test_run_to_run_sd_is_the_population_sd_of_table_17(db, capsys):
    store = Store(db, readonly=True)
    recs = store.trajectories(store.run("heur3")["id"])
    store_w = Store(db)
    wrong = [t["id"] for t in recs if t["replicate"] == 0]  # replicate 0 gets everything wrong: the replicates differ
    store_w.conn.executemany("UPDATE trajectories SET correct = 0 WHERE id = ?", [(i,) for i in wrong])
    store_w.conn.commit()
    recs = store.trajectories(store.run("heur3")["id"])
    per_rep = [np.mean([bool(t["correct"]) for t in recs if t["replicate"] == r]) for r in range(3)]
    panel = _json(capsys, "report", "h", "heur3", "--panel", "--db", str(db))
    spread = panel["replicates"]["heur3"]
    assert spread["std"] == pytest.approx(statistics.pstdev(per_rep)) and spread["std"] > 0
    assert spread["std"] != pytest.approx(statistics.stdev(per_rep))
    assert spread["std_ddof"] == 0 and "Table 17" in spread["std_definition"]
    capsys.readouterr()
    assert main(["--batch", "report", "h", "heur3", "--panel", "--db", str(db)]) == 0
    assert f"run-to-run SD (population, Table 17) {100 * statistics.pstdev(per_rep):.1f}%" in capsys.readouterr().out
