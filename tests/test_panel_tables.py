"""The panel's further tables and figures (Tables 3, 4, 9, 10, 15, 17, early submission, item-total summary,
Figures 2, 4, 5), each rebuilt here independently from the stored trajectories (plain loops, scipy, numpy)."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binomtest, fisher_exact, kendalltau

from storage import Store
from tests.cli_inprocess import batch

RUNS = (  # name, agent, seed, ablation, replicates, family
    ("h", "heuristic", 0, "full", 1, "Alpha"),
    ("h2", "heuristic", 1, "full", 2, "Alpha"),
    ("hn", "heuristic", 0, "no-search", 1, None),
    ("hc", "heuristic", 0, "closed-book", 1, None),
    ("o", "oracle", 0, "full", 2, "Beta"),
    ("r", "random", 0, "full", 2, "Gamma"),
)
NAMES = [r[0] for r in RUNS]
EVALUATED = [r[0] for r in RUNS if r[3] == "full"]  # the model pool: ablation runs are never in it
LIMIT = 24


@pytest.fixture(scope="module")
def tables_db(tmp_path_factory):
    from workbench.cli import main

    db = tmp_path_factory.mktemp("tables") / "s.sqlite"
    for name, agent, seed, ablation, reps, family in RUNS:
        args = [
            "--batch",
            "run",
            "--agent",
            agent,
            "--seed",
            str(seed),
            "--ablation",
            ablation,
            "--replicates",
            str(reps),
            "--limit",
            str(LIMIT),
            "--run",
            name,
            "--db",
            str(db),
            "--quiet",
            "--format",
            "json",
        ]
        assert main(args + (["--family", family] if family else [])) == 0
    return db


@pytest.fixture(scope="module")
def panel(tables_db):
    from workbench.service.reports import panel_report

    return json.loads(json.dumps(panel_report(Store(tables_db, readonly=True), NAMES), default=str))


@pytest.fixture(scope="module")
def stored(tables_db):
    store = Store(tables_db, readonly=True)
    return {n: store.trajectories(store.run(n)["id"]) for n in NAMES}


def first_rep(trajs):
    return {t["item_id"]: bool(t["correct"]) for t in trajs if t["replicate"] == 0}


def test_table3_overlapping_categories_by_brute_force(panel, stored):
    for entry in panel["tables"]["table3"]:
        counts = dict.fromkeys(("Recover", "Stay", "Think", "Re-nav", "Submit"), 0)
        events = 0
        for t in stored[entry["run"]]:
            acts = t["actions"]
            for i, (tool, _, _, role, delivered) in enumerate(acts):
                if tool == "read_section" and delivered and role != "gold":  # any non-gold paper
                    events += 1
                    j = i + 1
                    seen = set()
                    while j < len(acts) and acts[j][0] != "read_section":
                        seen.add(acts[j][0])
                        j += 1
                    if j < len(acts):
                        counts["Recover" if acts[j][3] == "gold" else "Stay"] += 1
                    counts["Think"] += "think" in seen
                    counts["Submit"] += "submit_answer" in seen
                    counts["Re-nav"] += bool(
                        seen & {"search_papers", "get_references", "list_sections", "get_paper_info"}
                    )
        assert entry["n_events"] == events
        for c, v in counts.items():
            assert entry["shares"][c] == (pytest.approx(v / events) if events else None)


def test_table4_chain_with_paired_p(panel, stored):
    (chain,) = panel["tables"]["table4"]
    assert chain["runs"] == {"closed-book": "hc", "no-search": "hn", "full": "h"}
    cb, ns, full = (first_rep(stored[n]) for n in ("hc", "hn", "h"))
    assert chain["accuracy"]["closed-book"] == pytest.approx(np.mean(list(cb.values())))
    for step, (a, b) in zip(chain["steps"], ((cb, ns), (ns, full)), strict=True):
        up = sum(b[i] and not a[i] for i in a)
        down = sum(a[i] and not b[i] for i in a)
        assert step["delta"] == pytest.approx((sum(b.values()) - sum(a.values())) / len(a))
        assert step["p"] == pytest.approx(binomtest(up, up + down, 0.5).pvalue if up + down else 1.0)


def _after_evidence(t):
    """Table 9's category, timed from the read that reaches the golds: the first read of the n_gold-th distinct gold
    paper (ST: the gold read; MT: the second gold's); a later re-read of a gold section is reading on."""
    first_reads = {}
    for i, a in enumerate(t["actions"]):
        if a[0] == "read_section" and a[4] and a[3] == "gold":
            first_reads.setdefault(a[2], i)
    needed = int(t["n_gold"] or 1)
    if len(first_reads) < needed:
        return None
    start = sorted(first_reads.values())[needed - 1]
    between = set()
    for a in t["actions"][start + 1 :]:
        if a[0] == "read_section":
            return "Read"
        if a[0] == "submit_answer":
            return "Imm" if not between else "Thnk" if between == {"think"} else "Nav"
        between.add(a[0])
    return "End"


def test_table9_ours_and_the_paper_denominator(panel, stored):
    for entry in panel["tables"]["table9"]:
        for group, kind in (("st", "st"), ("mt_both", "mt")):
            cats = [c for c in (_after_evidence(t) for t in stored[entry["run"]] if t["kind"] == kind) if c]
            ours = sum(c in ("Imm", "Thnk", "Read") for c in cats)
            for c in ("Imm", "Thnk", "Read"):
                assert entry[group]["ours"][c] == (pytest.approx(cats.count(c) / ours) if ours else None)
                assert entry[group]["paper"][c] == (pytest.approx(cats.count(c) / len(cats)) if cats else None)


def _cell_counts(trajs, cell, replicate=None):
    kind, depth = cell.split("_d")
    outs = [
        bool(t["correct"])
        for t in trajs
        if t["kind"] == kind and t["depth"] == int(depth) and (replicate is None or t["replicate"] == replicate)
    ]
    return sum(outs), len(outs)


def test_table10_wilson_per_cell_and_the_fixed_delta(panel, stored):
    """Δ is st_d1 − mt_d2 whatever the data (never the hardest minus the easiest cell), with Fisher's exact p on
    those two cells (replicate 0 where the run has replicates)."""
    z = 1.959963984540054
    for entry in panel["tables"]["table10"]:
        trajs = stored[entry["run"]]
        if entry["run"] in ("h", "hc"):  # one replicate: the plain Wilson interval
            for cell in ("st_d1", "st_d2", "mt_d1", "mt_d2"):
                right, n = _cell_counts(trajs, cell)
                p = right / n
                half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
                got = entry["cells"][cell]
                assert (got["right"], got["n"]) == (right, n)
                lo, hi = (
                    max(0.0, (p + z * z / (2 * n)) / (1 + z * z / n) - half),
                    min(1.0, (p + z * z / (2 * n)) / (1 + z * z / n) + half),
                )
                if 0 < p < 1:
                    assert got["half_width"] == pytest.approx((hi - lo) / 2)
        (re_, ne), (rh, nh) = _cell_counts(trajs, "st_d1"), _cell_counts(trajs, "mt_d2")
        d = entry["delta"]
        assert (d["easiest"], d["hardest"]) == ("st_d1", "mt_d2")
        assert d["delta"] == pytest.approx(re_ / ne - rh / nh)
        replicated = any(t["replicate"] > 0 for t in trajs)
        if replicated:
            (re_, ne), (rh, nh) = _cell_counts(trajs, "st_d1", 0), _cell_counts(trajs, "mt_d2", 0)
        assert d["p_basis"] == ("replicate 0" if replicated else "trajectories")
        assert d["p"] == pytest.approx(fisher_exact([[re_, ne - re_], [rh, nh - rh]]).pvalue)
    # the closed-book run's easiest cell by the data is not st_d1: a data-picked Δ would differ in sign
    hc = next(e for e in panel["tables"]["table10"] if e["run"] == "hc")
    assert hc["delta"]["delta"] < 0


@pytest.fixture(scope="module")
def capped(tmp_path_factory):
    """Two runs of which one is cut short by a turn cap (the random agent, 3 turns): trajectories without a letter."""
    from workbench.cli import main
    from workbench.service.reports import panel_report

    db = tmp_path_factory.mktemp("capped") / "s.sqlite"
    for name, agent, extra in (("rt", "random", ["--max-turns", "3"]), ("hb", "heuristic", ["--budget", "2"])):
        args = ["--batch", "run", "--agent", agent, "--limit", str(LIMIT), "--run", name, "--db", str(db), "--quiet"]
        assert main(args + extra) == 0
    store = Store(db, readonly=True)
    stored = {n: store.trajectories(store.run(n)["id"]) for n in ("rt", "hb")}
    return json.loads(json.dumps(panel_report(store, ["rt", "hb"]), default=str)), stored


def test_table15_no_answer_by_cap(capped):
    """NA = trajectories with no parsed letter: the episode stores −1 for it (a cap ended the run, or the submit was
    no letter); counted by what ended them, by hand from the stored rows."""
    panel, stored = capped
    total = 0
    for entry in panel["tables"]["table15"]:
        trajs = stored[entry["run"]]
        na = [t for t in trajs if t["predicted_index"] is None or t["predicted_index"] < 0]
        assert (entry["na"], entry["n"]) == (len(na), len(trajs))
        assert entry["na_share"] == pytest.approx(len(na) / len(trajs))
        for cap in ("max_turns", "budget", "token_limit", "error", "answer"):
            assert entry["by_cap"][cap] == sum(t["termination"] == cap for t in na)
        total += len(na)
    assert total > 0  # some run ended without a letter: the test can fail


def test_early_submission_across_the_panel(panel, stored):
    significant = tested = 0
    deltas = []
    for name in EVALUATED:  # the panel's mean is over the evaluated models, never an ablation run
        early, other = [], []
        for t in stored[name]:
            acts = t["actions"]
            wrong = [i for i, a in enumerate(acts) if a[0] == "read_section" and a[4] and a[3] != "gold"]
            if not wrong:
                continue
            hasty = any(a[0] == "submit_answer" for i in wrong for a in acts[i + 1 : i + 4])
            (early if hasty else other).append(bool(t["correct"]))
        if early and other:
            tested += 1
            deltas.append(np.mean(early) - np.mean(other))
            p = fisher_exact([[sum(early), len(early) - sum(early)], [sum(other), len(other) - sum(other)]]).pvalue
            significant += p < 0.05
    e = panel["tables"]["early_submit"]
    assert {r["run"] for r in e["runs"]} == set(EVALUATED)
    assert (e["n_tested"], e["n_significant"]) == (tested, significant)
    assert e["mean_delta"] == (pytest.approx(np.mean(deltas)) if deltas else None)


def test_alpha_coverage_item_total_and_figures_4_and_5_over_the_evaluated_models_only(panel, stored):
    """The done-when of the panel: α, coverage, the item-total correlations and Figures 4 and 5 are over the
    full-setting runs (h, h2, o, r), never the closed-book or no-search run, rebuilt here from the trajectories."""
    items = sorted(first_rep(stored["h"]))
    matrix = np.array([[first_rep(stored[n])[i] for n in EVALUATED] for i in items], dtype=float)
    k = len(items)
    totals = matrix.sum(axis=0)  # per model
    alpha = k / (k - 1) * (1 - matrix.var(axis=1, ddof=1).sum() / totals.var(ddof=1))
    assert panel["evaluated"] == EVALUATED and panel["n_evaluated"] == len(EVALUATED)
    assert panel["cronbach_alpha"] == pytest.approx(alpha)
    right = matrix.sum(axis=1)
    assert sum(panel["coverage"]["counts"].values()) == k
    itc = []
    for j in range(k):
        rest = totals - matrix[j]
        if matrix[j].std() > 0 and rest.std() > 0:
            itc.append(np.corrcoef(matrix[j], rest)[0, 1])
    s = panel["tables"]["item_total_summary"]
    assert s["n"] == len(itc) and s["median"] == pytest.approx(np.median(itc))
    assert s["share_above_0_2"] == pytest.approx(np.mean(np.array(itc) > 0.2))
    # Figure 4: 4 models → low 0–1, mid 2–3, high 4 right (the paper's 6 and 12 of 19, scaled and rounded)
    f4 = panel["tables"]["figure4"]
    assert f4["n_runs"] == 4 and f4["edges"] == {"low": [0, 1], "mid": [2, 3], "high": [4, 4]}
    kinds = {t["item_id"]: f"{t['kind']}_d{t['depth']}" for t in stored["h"]}
    for cell, counts in f4["type_depth"].items():
        mine = [r for i, r in zip(items, right, strict=True) if kinds[i] == cell]
        assert counts == {
            "low": sum(r <= 1 for r in mine),
            "mid": sum(2 <= r <= 3 for r in mine),
            "high": sum(r >= 4 for r in mine),
        }
    assert [p["run"] for p in panel["tables"]["figure5"]] == EVALUATED
    for point in panel["tables"]["figure5"]:
        trajs = stored[point["run"]]
        assert point["paper_recall"] == pytest.approx(np.mean([bool(t["paper_recall"]) for t in trajs]))


def test_marks_stand_over_the_evaluated_models_with_the_tests_beside(panel, stored):
    """* marks the best value as it stands among the full-tool runs (ties all marked), never an ablation run;
    the paired test against the runner-up is beside it, and does not gate the mark."""
    rows = {r["run"]: r for r in panel["rows"]}
    lower = {"tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}
    for col in ("accuracy", "PR st", "turns", "points"):
        values = {n: rows[n][col] for n in EVALUATED if rows[n][col] is not None}
        best = (min if col in lower else max)(values.values())
        assert sorted(panel["best"][col]) == sorted(n for n, v in values.items() if v == best)
    assert not any(n in marked for marked in panel["best"].values() for n in ("hn", "hc"))
    flat = [c for c in ("calls/turn", "MaxTok", "MaxTurn", "MaxBudget") if len({rows[n][c] for n in EVALUATED}) == 1]
    assert flat and not any(c in panel["best"] for c in flat)  # all equal: no run is best
    # accuracy: o is best; its runner-up h and h2 tie; the test is McNemar-like on per-item values over replicates
    t = panel["best_tests"]["accuracy"]
    assert t["best"] == ["o"] and sorted(t["runner_up"]) == ["h", "h2"]
    assert t["separated"] == (t["p"] < 0.05)


def test_table17_spread_and_kendall_rank_stability(panel, stored):
    t17 = panel["tables"]["table17"]
    assert set(t17["runs"]) == {"h2", "o", "r"}  # the runs with replicates
    per_rep = {
        n: [np.mean([bool(t["correct"]) for t in stored[n] if t["replicate"] == r]) for r in (0, 1)]
        for n in ("h2", "o", "r")
    }
    for n, accs in per_rep.items():
        assert t17["runs"][n]["accuracy"]["std"] == pytest.approx(np.std(accs))
        assert t17["runs"][n]["accuracy"]["range"] == pytest.approx(max(accs) - min(accs))
    tau = kendalltau([per_rep[n][0] for n in per_rep], [per_rep[n][1] for n in per_rep]).statistic
    assert t17["rank_stability"]["accuracy"]["mean_tau"] == pytest.approx(tau)


def test_figure2_needs_a_generation_in_the_model_string(panel):
    """h and h2 are one family but name no model (scripted agents): no generation, so no gap is invented."""
    assert panel["tables"]["figure2"] == []


@pytest.mark.parametrize(
    "model,gen",
    [
        ("gemma-3-27b-it", (3,)),
        ("gemma-4-26b-a4b", (4,)),
        ("qwen3-30b-a3b", (3,)),
        ("qwen3.5-27b", (3, 5)),
        ("Qwen/Qwen3.6-35B-A3B", (3, 6)),
        ("claude-opus-4-6", None),
        ("claude-sonnet-4-6", None),
        ("deepseek-chat", None),
        (None, None),
    ],
)
def test_a_generation_is_the_number_right_after_the_lineage_name(model, gen):
    from workbench.service.reports.panel_tables.generations import generation

    assert generation(model) == gen


@pytest.mark.parametrize(
    "model,arch",
    [
        ("gemma-3-27b-it", "dense"),
        ("gemma-4-31b", "dense"),
        ("gemma-4-26b-a4b", "moe"),
        ("qwen3-32b", "dense"),
        ("qwen3-30b-a3b", "moe"),
        ("Qwen/Qwen3.6-35B-A3B", "moe"),
        ("together_ai/Qwen/Qwen3.5-35B-A3B-FP8", "moe"),
        ("claude-opus-4-6", "dense"),
        (None, "dense"),
    ],
)
def test_an_active_parameter_suffix_marks_a_mixture_of_experts(model, arch):
    from workbench.service.reports.panel_tables.generations import architecture

    assert architecture(model) == arch


@pytest.fixture(scope="module")
def cohort_panel(tables_db, tmp_path_factory):
    """The same runs with model strings of one Qwen family (all tagged Alpha): a dense lineage (h: qwen3-32b, h2:
    qwen3.5-27b; hn and hc are h's ablations) and a MoE one (r: qwen3.5-35b-a3b, o: Qwen3.6-35B-A3B)."""
    import shutil

    from workbench.cli import main
    from workbench.service.reports import panel_report

    db = tmp_path_factory.mktemp("cohort") / "s.sqlite"
    shutil.copy(tables_db, db)
    store = Store(db)
    models = {
        "h": "qwen3-32b",
        "hn": "qwen3-32b",
        "hc": "qwen3-32b",
        "h2": "qwen3.5-27b",
        "r": "qwen3.5-35b-a3b",
        "o": "Qwen/Qwen3.6-35B-A3B",
    }
    for name, model in models.items():
        store.conn.execute("UPDATE runs SET model = ? WHERE name = ?", (model, name))
    store.conn.commit()
    store.close()
    for name in ("r", "o"):
        assert main(["--batch", "runs", "tag", name, "--family", "Alpha", "--db", str(db)]) == 0
    return db, json.loads(json.dumps(panel_report(Store(db, readonly=True), NAMES), default=str))


def test_figure2_pairs_adjacent_generations_of_a_cohort_on_one_basis(cohort_panel, stored):
    """Within one architectural cohort only (the paper's Figure 2): dense Qwen 3 → 3.5 (h → h2) and the MoE lineage
    3.5 → 3.6 (r → o); dense 3.5 → MoE 3.6 (h2 → o) and dense 3 → MoE 3.5 (h → r) are no generation steps. Δ and
    the McNemar p both over replicate 0 on the items both answered."""
    _, panel = cohort_panel
    gaps = panel["tables"]["figure2"]
    assert sorted((g["older"], g["newer"], g["generations"]) for g in gaps) == [
        ("h", "h2", ["3", "3.5"]),
        ("r", "o", ["3.5", "3.6"]),
    ]
    for g in gaps:
        old, new = first_rep(stored[g["older"]]), first_rep(stored[g["newer"]])
        up = sum(new[i] and not old[i] for i in old)
        down = sum(old[i] and not new[i] for i in old)
        assert g["n"] == len(old)
        assert g["delta"] == pytest.approx((sum(new.values()) - sum(old.values())) / len(old))
        assert g["p"] == pytest.approx(binomtest(up, up + down, 0.5).pvalue if up + down else 1.0)


def test_the_cli_prints_every_table(cohort_panel, capsys):
    out = batch(capsys, "report", "--panel", *NAMES, "--db", str(cohort_panel[0]))
    assert out.returncode == 0, out.stderr
    for title in (
        "Table 3 ·",
        "Table 4 ·",
        "Table 9 ·",
        "Table 10 ·",
        "Table 11 ·",
        "Table 12 ·",
        "Table 13 ·",
        "Table 14 ·",
        "Table 15 ·",
        "Table 17 ·",
        "Table 17 · across separately stored runs",
        "Table 9 · MT-fail",
        "family trigrams",
        "Table 19 ·",
        "Figure 2 ·",
        "Figure 4 ·",
        "Figure 5 ·",
        "early submission",
        "item-total correlation over",
    ):
        assert title in out.stdout, title


def test_table19_closed_book_accuracy_by_venue(panel, stored):
    (entry,) = panel["tables"]["table19"]
    assert entry["runs"] == ["hc"] and entry["tier"] is None  # the untagged closed-book run
    assert set(entry["strata"]) == {"venue"}  # without the dataset: no seed year or citation quartile
    for venue, cell in entry["strata"]["venue"].items():
        mine = [bool(t["correct"]) for t in stored["hc"] if (t["venue"] or "—") == venue]
        assert (cell["right"], cell["n"]) == (sum(mine), len(mine))


def test_table11_evidence_contact_from_the_labels_and_reads(tables_db):
    from sandbox.datasets import open_dataset
    from workbench.service import paths
    from workbench.service.reports import panel_report

    store = Store(tables_db, readonly=True)
    t11 = panel_report(store, NAMES, cache_dir=paths.cache_dir())["tables"]["table11"]
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    header = {"exact", "normalised", "substring", "word_overlap"}
    closed = {t["item_id"]: bool(t["correct"]) for t in store.trajectories(store.run("hc")["id"])}
    groups = {g: [0, 0, []] for g in ("header", "parent", "none")}
    for name in ("h", "h2", "o", "r"):  # the full-tool runs
        for t in store.trajectories(store.run(name)["id"]):
            if not t["paper_recall"]:
                continue
            item = corpus.item(t["item_id"])
            reads = {
                (s["arxiv_id"], s["section_index"])
                for s in store.steps(t["id"])
                if s["tool_name"] == "read_section" and s["delivered"]
            }
            methods = {
                lab.method
                for lab in item.labels
                if lab.relevance == "direct"
                and lab.arxiv_id in item.gold_arxiv_ids
                and (lab.arxiv_id, lab.section_index) in reads
            }
            g = "header" if methods & header else "parent" if methods else "none"
            groups[g][0] += bool(t["correct"])
            groups[g][1] += 1
            if name in ("h", "h2"):  # the same model (heuristic) has a closed-book run; oracle and random have none
                groups[g][2].append(closed[t["item_id"]])
    corpus.close()
    total = sum(v[1] for v in groups.values())
    assert t11["n"] == total > 0
    for g, (right, n, cb) in groups.items():
        got = t11["groups"][g]
        assert got["n"] == n and got["share"] == pytest.approx(n / total)
        assert got["conversion"] == (pytest.approx(right / n) if n else None)
        assert got["closed_book_n"] == len(cb)
        assert got["closed_book"] == (pytest.approx(sum(cb) / len(cb)) if cb else None)


def test_table19_seed_year_and_citation_quartile_where_the_release_carries_them(tmp_path, capsys):
    import copy

    from tests.conftest import G, S, mini_rows, write_release

    qa, graphs, papers, labels = mini_rows()
    counts = [5, 40, 12, 300, 7, 90, 1, 55]  # rank-based quartiles of 8 gold papers' counts: two items each
    qa8, graphs8, labels8 = [], [], []
    for k, c in enumerate(counts):
        item_id = f"st_{k + 1:04d}"
        q, g, lab = copy.deepcopy(qa[0]), copy.deepcopy(graphs[0]), copy.deepcopy(labels[0])
        q["id"] = g["sample_id"] = lab["sample_id"] = item_id
        g["nodes"][G]["citationCount"] = c  # the item's (only) gold paper: its count is the item's maximum
        g["nodes"][S]["citationCount"] = 1000 - c  # the seed's, in the opposite order: never read for the quartile
        g["nodes"][S]["year"] = 2020 + k % 2
        qa8.append(q), graphs8.append(g), labels8.append(lab)
    release = write_release(tmp_path / "rel", qa8, graphs8, papers, labels8)
    db = str(tmp_path / "s.db")
    for name, agent in (("hc", "heuristic"), ("rc", "random")):
        assert (
            batch(
                capsys,
                "run",
                "--data",
                str(release),
                "--agent",
                agent,
                "--ablation",
                "closed-book",
                "--run",
                name,
                "--db",
                db,
                "--tier",
                "open",
                "--quiet",
            ).returncode
            == 0
        )
    out = batch(capsys, "report", "--panel", "hc", "rc", "--db", db, "--format", "json")
    assert out.returncode == 0, out.stderr
    (entry,) = json.loads(out.stdout)["tables"]["table19"]
    assert entry["tier"] == "open-frontier" and entry["runs"] == ["hc", "rc"]
    store = Store(db, readonly=True)
    outcomes = [
        (t["item_id"], bool(t["correct"])) for n in ("hc", "rc") for t in store.trajectories(store.run(n)["id"])
    ]
    order = sorted(range(8), key=lambda k: counts[k])
    quartile = {f"st_{k + 1:04d}": f"Q{rank // 2 + 1}" for rank, k in enumerate(order)}
    for q in ("Q1", "Q2", "Q3", "Q4"):
        mine = [ok for item, ok in outcomes if quartile[item] == q]
        cell = entry["strata"]["citation quartile"][q]
        assert (cell["right"], cell["n"]) == (sum(mine), len(mine)) and len(mine) == 4
    for year in ("2020", "2021"):
        mine = [ok for item, ok in outcomes if str(2020 + (int(item[3:]) - 1) % 2) == year]
        assert entry["strata"]["seed year"][year]["n"] == len(mine)
        assert entry["strata"]["seed year"][year]["right"] == sum(mine)


def test_table19_on_the_builtin_data_by_seed_year_and_citation_quartile(tables_db):
    """The built-in benchmark's graph nodes carry year and citationCount (generator v4): Table 19 strata by
    both, rebuilt here from the release's nodes with scipy's ranks — the seed's year, and the maximum citation
    count over the item's gold papers (App. E: "each sample takes the maximum over its gold papers")."""
    from scipy.stats import rankdata

    from sandbox.datasets import open_dataset
    from workbench.service import paths
    from workbench.service.reports import panel_report

    store = Store(tables_db, readonly=True)
    (entry,) = panel_report(store, NAMES, cache_dir=paths.cache_dir())["tables"]["table19"]
    outcomes = [(t["item_id"], bool(t["correct"])) for t in store.trajectories(store.run("hc")["id"])]
    corpus, _ = open_dataset("builtin", paths.cache_dir())
    ids = sorted({i for i, _ in outcomes})
    nodes = {i: corpus.view(corpus.item(i)).nodes[corpus.item(i).seed_paper_id].data for i in ids}
    gold_max = {
        i: max(corpus.view(corpus.item(i)).nodes[g].data["citationCount"] for g in corpus.item(i).gold_paper_ids)
        for i in ids
    }
    seed_counts = {i: nodes[i]["citationCount"] for i in ids}
    corpus.close()
    assert gold_max != seed_counts  # the seed's count would give other strata: the test can tell them apart
    ranks = rankdata([gold_max[i] for i in ids])  # average ranks, ties shared
    quartile = {i: f"Q{min(4, int((r - 1) * 4 / len(ids)) + 1)}" for i, r in zip(ids, ranks, strict=True)}
    year = {i: str(nodes[i]["year"]) if isinstance(nodes[i].get("year"), int) else "unknown" for i in ids}
    assert len(set(quartile.values())) == 4 and len(set(year.values())) > 1
    for stratum, of in (("citation quartile", quartile), ("seed year", year)):
        want = {}
        for item, ok in outcomes:
            want.setdefault(of[item], [0, 0])
            want[of[item]][0] += ok
            want[of[item]][1] += 1
        got = {k: [c["right"], c["n"]] for k, c in entry["strata"][stratum].items()}
        assert got == want


def test_figures_2_and_4_are_terminal_plots_of_the_panels_numbers(cohort_panel, stored):
    """Figure 2 and Figure 4 are drawn (plotext), within the height asked, with every family / cell / tier on the
    axis; their bars' heights are the panel's numbers, rebuilt here from the rows the views drew them from."""
    from workbench.views import panel_figures

    _, panel = cohort_panel
    text = panel_figures.figures_text(panel, width=100, height=16)
    assert "Figure 2 · within-family generation gap" in text and "Figure 4 · item difficulty" in text
    f2 = panel_figures.figure2_text(panel, 100, 12)
    gaps = [e for e in panel["tables"]["figure2"] if e["delta"] is not None]
    assert gaps and all(f"{e['older']}→{e['newer']}" in f2 for e in gaps) and len(f2.splitlines()) <= 12
    f4 = panel_figures.figure4_text(panel, 100, 16)
    assert len(f4.splitlines()) <= 16 and {"░", "▒", "█"} <= set(f4)
    fig4 = panel["tables"]["figure4"]
    for cell in fig4["type_depth"]:
        assert cell in f4
    # the buckets partition the common items: every item counted once per grouping, as plotted
    n_items = len(set.intersection(*(set(first_rep(trajs)) for trajs in stored.values())))
    assert sum(sum(c.values()) for c in fig4["type_depth"].values()) == n_items
    assert sum(sum(c.values()) for c in fig4["consensus_tier"].values()) == n_items


def test_figure_4_lists_the_consensus_tiers_in_their_order_not_the_alphabet(cohort_panel):
    """gold, silver, bronze (the release's order, strictest consensus first), not bronze, gold, silver (issue 44
    §17); in the panel's numbers and on the plot's axis."""
    from sandbox.records import CONSENSUS_TIERS
    from workbench.views import panel_figures

    _, panel = cohort_panel
    tiers = list(panel["tables"]["figure4"]["consensus_tier"])
    assert set(tiers) == {"gold", "silver", "bronze"}
    assert tiers == [t for t in CONSENSUS_TIERS if t in tiers] == ["gold", "silver", "bronze"]
    axis = next(line for line in panel_figures.figure4_text(panel, 120, 16).splitlines() if "tier gold" in line)
    assert axis.index("tier gold") < axis.index("tier silver") < axis.index("tier bronze")


def test_the_csv_export_carries_every_table_tidy(tables_db, capsys):
    """`report --panel --format csv`: one tidy CSV with a `table` column — Table 2 and every further table and
    figure — and its numbers are the JSON's (Table 19's strata and Figure 4's buckets read back here)."""
    import csv
    import io

    out = batch(capsys, "report", "--panel", *NAMES, "--db", str(tables_db), "--format", "csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    panel = json.loads(batch(capsys, "report", "--panel", *NAMES, "--db", str(tables_db), "--format", "json").stdout)
    tables = {r["table"] for r in rows}
    assert {"table2", "cronbach_alpha", "fingerprints"} <= tables
    assert {k for k, v in panel["tables"].items() if v} <= tables  # every table that has numbers
    (t19,) = panel["tables"]["table19"]
    for venue, cell in t19["strata"]["venue"].items():
        got = {
            r["metric"]: r["value"]
            for r in rows
            if r["table"] == "table19"
            and r["tier"] == (t19["tier"] or "")
            and r["metric"].startswith(f"strata.venue.{venue}.")
        }
        assert int(got[f"strata.venue.{venue}.right"]) == cell["right"]
        assert int(got[f"strata.venue.{venue}.n"]) == cell["n"]
    for cell, counts in panel["tables"]["figure4"]["type_depth"].items():
        for bucket, n in counts.items():
            (r,) = [r for r in rows if r["table"] == "figure4" and r["metric"] == f"type_depth.{cell}.{bucket}"]
            assert int(r["value"]) == n
    acc = [r for r in rows if r["table"] == "table2" and r["metric"] == "accuracy"]
    assert sorted(r["run"] for r in acc) == sorted(NAMES)


def test_a_run_named_twice_is_refused_and_the_store_untouched(tables_db, capsys):
    before = tables_db.read_bytes()
    out = batch(capsys, "report", "--panel", "h", "o", "h", "--db", str(tables_db))
    assert out.returncode == 2 and "named more than once" in out.stderr and "h" in out.stderr
    assert "Traceback" not in out.stderr
    assert tables_db.read_bytes() == before


def test_table9_mt_fail_block_by_hand(panel, stored):
    """0-Gold / Prem / Explored / Stayed over the MT trajectories whose paper recall failed (they sum to n)."""
    for entry in panel["tables"]["table9"]:
        missed = [t for t in stored[entry["run"]] if t["kind"] == "mt" and not t["paper_recall"]]
        block = entry["mt_fail"]
        assert block["n"] == len(missed) == sum(block["counts"].values())
        zero = sum(not any(a[0] == "read_section" and a[4] and a[3] == "gold" for a in t["actions"]) for t in missed)
        assert block["counts"]["0-Gold"] == zero


def _paired(a, b):
    """(only a right, only b right) over the items both have, replicate 0."""
    return sum(a[i] and not b[i] for i in a if i in b), sum(b[i] and not a[i] for i in a if i in b)


def test_table12_walk_of_adjacent_mcnemar_tests_among_the_top_mt_conversions(panel, stored):
    rows = {r["run"]: r for r in panel["rows"]}
    ranked = sorted((n for n in EVALUATED if rows[n]["Conv mt"] is not None), key=lambda n: (-rows[n]["Conv mt"], n))
    t12 = panel["tables"]["table12"]
    assert t12["ranked"] == ranked[:6]
    for step, (hi, lo) in zip(t12["steps"], itertools.pairwise(ranked), strict=True):
        assert (step["higher"], step["lower"]) == (hi, lo)

        def conv(name):  # per item: right ÷ recalled over the item's MT trajectories
            out = {}
            for t in stored[name]:
                if t["kind"] == "mt" and t["paper_recall"]:
                    r, n = out.get(t["item_id"], (0, 0))
                    out[t["item_id"]] = (r + bool(t["correct"]), n + 1)
            return {i: r / n for i, (r, n) in out.items()}

        a, b = conv(hi), conv(lo)
        items = [i for i in a if i in b]
        up, down = sum(a[i] > b[i] for i in items), sum(b[i] > a[i] for i in items)
        assert step["n"] == len(items)
        assert step["p"] == pytest.approx(binomtest(up, up + down, 0.5).pvalue if up + down else 1.0)


def test_pairwise_accuracy_sig_counts_from_pairwise_tests_with_holm(panel, stored):
    """Our pairwise accuracy tests' Sig. counts (not the paper's Table 13, which is the bigram table)."""

    def acc(name):
        out = {}
        for t in stored[name]:
            r, n = out.get(t["item_id"], (0, 0))
            out[t["item_id"]] = (r + bool(t["correct"]), n + 1)
        return {i: r / n for i, (r, n) in out.items()}

    pairs = []
    for i, a in enumerate(EVALUATED):
        for b in EVALUATED[i + 1 :]:
            x, y = acc(a), acc(b)
            up, down = sum(x[k] > y[k] for k in x), sum(y[k] > x[k] for k in x)
            pairs.append((a, b, up, down, binomtest(up, up + down, 0.5).pvalue if up + down else 1.0))
    m = len(pairs)
    order = sorted(range(m), key=lambda j: pairs[j][4])
    holm, running = [0.0] * m, 0.0
    for rank, j in enumerate(order):
        running = max(running, min(1.0, (m - rank) * pairs[j][4]))
        holm[j] = running
    wins = dict.fromkeys(EVALUATED, 0)
    losses = dict.fromkeys(EVALUATED, 0)
    for (a, b, up, down, _), p in zip(pairs, holm, strict=True):
        if p < 0.05 and up != down:
            w, l_ = (a, b) if up > down else (b, a)
            wins[w] += 1
            losses[l_] += 1
    got = {e["run"]: e for e in panel["tables"]["pairwise_accuracy"]["sig"]}
    assert {n: (got[n]["wins"], got[n]["losses"]) for n in EVALUATED} == {n: (wins[n], losses[n]) for n in EVALUATED}
    assert got["o"]["wins"] >= 1  # the oracle beats someone: the test can fail


def test_table14_top1_trigram_and_concentration_by_tier(panel, stored):
    from collections import Counter

    (tier,) = panel["tables"]["table14"]  # every run untiered
    assert [e["run"] for e in tier["runs"]] == EVALUATED
    for e in tier["runs"]:
        grams = Counter()
        for t in stored[e["run"]]:
            tools = [a[0] for a in t["actions"]]
            grams.update(tuple(tools[i : i + 3]) for i in range(len(tools) - 2))
        top, n = min(grams.items(), key=lambda kv: (-kv[1], kv[0]))
        assert e["trigram"] == list(top) and e["occurrences"] == n
        assert e["concentration"] == pytest.approx(n / sum(grams.values()))
    assert tier["mean_concentration"] == pytest.approx(np.mean([e["concentration"] for e in tier["runs"]]))


def test_table17_across_separately_stored_runs_of_one_model(panel, stored):
    """h and h2 are two stored runs of one model (heuristic agent, no model string, the same data)."""
    t17 = panel["tables"]["table17_runs"]
    ((label, runs),) = t17["runs"].items()
    assert runs == ["h", "h2"]
    accs = [np.mean([bool(t["correct"]) for t in stored[n]]) for n in runs]
    got = t17["models"][label]["accuracy"]
    assert got["mean"] == pytest.approx(np.mean(accs)) and got["std"] == pytest.approx(np.std(accs))
    assert got["range"] == pytest.approx(max(accs) - min(accs))


@settings(max_examples=200, deadline=None)
@given(st.floats(-100, 100, allow_nan=False), st.floats(-100, 100, allow_nan=False))
def test_figure2_ticks_are_evenly_spaced_and_cover_the_bars(a, b):
    """Any Δ range (points): evenly spaced round ticks (the CLI's Figure 2 had uneven ones) that include 0 and
    cover every bar, never more than a dozen."""
    from workbench.views.panel_figures import even_ticks

    low, high = min(a, b), max(a, b)
    ticks = even_ticks(low, high)
    assert 2 <= len(ticks) <= 12
    steps = [b - a for a, b in itertools.pairwise(ticks)]
    tol = 1e-9 * max(1.0, abs(ticks[0]), abs(ticks[-1]))
    assert max(steps) - min(steps) <= tol and 0 in ticks
    assert ticks[0] <= min(low, 0) + tol and ticks[-1] >= max(high, 0) - tol


def test_the_csv_names_the_run_of_every_figure2_row(cohort_panel, capsys):
    import csv
    import io

    out = batch(capsys, "report", "--panel", *NAMES, "--db", str(cohort_panel[0]), "--format", "csv")
    rows = [r for r in csv.DictReader(io.StringIO(out.stdout)) if r["table"] == "figure2"]
    assert rows and all(r["run"] for r in rows)
    deltas = {r["run"]: float(r["value"]) for r in rows if r["metric"] == "delta"}
    assert deltas == {g["newer"]: pytest.approx(g["delta"]) for g in cohort_panel[1]["tables"]["figure2"]}


@pytest.mark.parametrize("edge,text", [([0, 1], "0–1"), ([3, 3], "3"), ([3, 2], "none")])
def test_figure4_bucket_labels(edge, text):
    from workbench.views.panel_tables import edge_range

    assert edge_range(edge) == text


def test_external_rows_for_runs_outside_the_panel_are_named(tables_db, tmp_path, capsys):
    scores = tmp_path / "ext.csv"
    scores.write_text("run,score\nh,1\no,2\nnot-here,3\nnor-this,4\n")
    out = batch(capsys, "report", "--panel", "h", "o", "r", "--db", str(tables_db), "--external", str(scores))
    assert out.returncode == 0, out.stderr
    assert "2 score rows name runs not in the panel" in out.stdout and "not-here" in out.stdout
    got = json.loads(
        batch(
            capsys,
            "report",
            "--panel",
            "h",
            "o",
            "r",
            "--db",
            str(tables_db),
            "--external",
            str(scores),
            "--format",
            "json",
        ).stdout
    )
    assert got["external"]["not_in_panel"] == ["nor-this", "not-here"]
    assert "need at least 3 runs with external scores, got 2" in got["external"]["error"]


def test_calls_per_turn_gets_no_best_or_tier_mark_whatever_its_values(panel, tables_db):
    """The paper gives calls per turn no direction: no `*`, no `†` and no leaderboard mark, even where the
    evaluated runs' values differ (here made to differ by hand; every other column keeps its marks)."""
    from stats.axes import Table
    from workbench.service.reports.panel import marked_best, per_item_terms, significant_best, tier_leaders

    store = Store(tables_db, readonly=True)
    per_item = {n: per_item_terms(Table.of(store.trajectories(store.run(n)["id"]))) for n in EVALUATED}
    rows = [dict(r) for r in panel["rows"] if r["run"] in EVALUATED]
    for k, row in enumerate(rows):
        row["calls/turn"] = 1.0 + k / 4  # distinct values: a directed column would mark the highest
        row["tier"] = "closed-frontier"
    best, tests = marked_best(rows, per_item)
    assert "calls/turn" not in best and "calls/turn" not in tests and "accuracy" in best
    leaders, leader_tests, _ = tier_leaders(rows, per_item)
    assert "calls/turn" not in leaders["closed-frontier"] and "calls/turn" not in leader_tests["closed-frontier"]
    board, board_tests = significant_best(rows, per_item)
    assert "calls/turn" not in board and "calls/turn" not in board_tests


TOOL_NAMES = ("get_paper_info", "get_references", "search_papers", "list_sections", "read_section", "think")


def test_table13_bigram_delta_over_the_evaluated_models_only(panel, stored):
    """The paper's Table 13 (bigram Δ, Sig. count, models), rebuilt by hand from the evaluated runs' stored tool
    sequences (scipy's Fisher test, Bonferroni over 49): the ablation runs (hn, hc) are never in it, as α."""
    tools = (*TOOL_NAMES, "submit_answer")
    per_run = {}
    for name in EVALUATED:
        trajs = stored[name]
        rows = {}
        for a, b in itertools.product(tools, tools):
            with_it = [any(x == (a, b) for x in itertools.pairwise(t["tool_sequence"])) for t in trajs]
            right = [bool(t["correct"]) for t in trajs]
            wk = sum(w and r for w, r in zip(with_it, right, strict=True))
            wa = sum(with_it)
            ok, oa = sum(right) - wk, len(trajs) - wa
            tested = wa > 0 and oa > 0
            p = fisher_exact([[wk, wa - wk], [ok, oa - ok]])[1] if tested else 1.0
            rows[(a, b)] = (wa > 0, wk / wa - ok / oa if tested else None, min(1.0, 49 * p) < 0.05)
        per_run[name] = rows
    want = {}
    for gram in itertools.product(tools, tools):
        present = sum(per_run[n][gram][0] for n in EVALUATED)
        if present and present >= len(EVALUATED) / 2:
            deltas = [per_run[n][gram][1] for n in EVALUATED if per_run[n][gram][1] is not None]
            want[gram] = (
                float(np.mean(deltas)) if deltas else None,
                sum(per_run[n][gram][2] for n in EVALUATED),
                present,
            )
    got = {
        tuple(b["bigram"]): (b["mean_delta"], b["n_significant"], b["n_present"]) for b in panel["tables"]["table13"]
    }
    assert set(got) == set(want) and want
    for gram, (delta, n_sig, present) in want.items():
        assert got[gram][1:] == (n_sig, present), gram
        assert got[gram][0] == (None if delta is None else pytest.approx(delta)), gram
    assert panel["bigram_panel"] == panel["tables"]["table13"]
    with_ablations = {n: stored[n] for n in NAMES}
    assert any(
        sum(
            any(x == tuple(g) for t in with_ablations[n] for x in itertools.pairwise(t["tool_sequence"])) for n in NAMES
        )
        != g_present
        for g, g_present in ((b["bigram"], b["n_present"]) for b in panel["tables"]["table13"])
    )  # the ablation runs would change some count: the test can tell the pools apart


def test_a_submit_without_an_answer_is_na_under_answer_in_table15(tmp_path):
    """A model that calls submit_answer without an answer (the local server): the episode ends `answer` with no
    letter, as the reference harness ends it, and Table 15 counts it NA under `answer` — by hand from the store."""
    from tests.openai_server import FakeOpenAI, tool_reply
    from workbench.cli import main
    from workbench.service.reports import panel_report

    db = tmp_path / "s.sqlite"
    with FakeOpenAI(lambda req, n: tool_reply(("submit_answer", {"reasoning": "no letter"}))) as srv:
        args = ["--batch", "run", "--agent", "llm", "--model", "openai/test-model", "--base-url", srv.url]
        assert main([*args, "--limit", "3", "--run", "nl", "--db", str(db), "--quiet"]) == 0
    store = Store(db, readonly=True)
    trajs = store.trajectories(store.run("nl")["id"])
    assert {(t["termination"], t["answer"], t["predicted_index"], t["tool_errors"]) for t in trajs} == {
        ("answer", "", -1, 1)
    }
    (entry,) = panel_report(store, ["nl"])["tables"]["table15"]
    assert (entry["na"], entry["n"], entry["by_cap"]["answer"]) == (len(trajs), len(trajs), len(trajs))
