"""The paper's further panel tables as text cells (AgentHop §4, App. E), titled in the order every front end shows
them, and the sentences for early submission and the item-total summary. Shared by `report --panel` and the
TUI's Panel screen."""

from __future__ import annotations

from typing import Literal

from workbench.service.records.panel import PanelReport, RankStability, Spread, Table4Step
from workbench.views.cells import NOT_MEASURED, num, pct, points, sig
from workbench.views.lineage import TIER_LABELS, best_test_table

EMPTY = "nothing to show with these runs (the legend says what the table needs)"


def extra_tables(panel: PanelReport) -> list[tuple[str, tuple[tuple[str, ...], list[tuple[str, ...]]]]]:
    """The further tables of the paper's panel (after the fingerprints), titled."""
    return [
        (
            "Table 3 · after a wrong-paper read, the paper's overlapping categories (share of events)",
            table3_table(panel),
        ),
        ("Table 4 · closed-book → no-search → full (paired McNemar p per step)", table4_table(panel)),
        (
            "Table 9 · after the evidence: ours (three categories) and the paper's denominator (residual kept)",
            table9_table(panel),
        ),
        ("Table 9 · MT-fail: why MT paper recall failed (shares of those trajectories)", mt_fail_table(panel)),
        ("Table 10 · type × depth, accuracy ± Wilson 95 % half-width, Δ = st_d1 − mt_d2", table10_table(panel)),
        ("Table 11 · evidence contact of recall-credited trajectories (pooled full-tool runs)", table11_table(panel)),
        ("Table 12 · top-6 MT conversions, adjacent pairs (McNemar on items both recalled)", table12_table(panel)),
        ("Table 13 · bigram Δ-accuracy over the evaluated models: mean Δ, Sig. count, models", table13_table(panel)),
        ("Table 14 · top-1 trigram and its concentration, by tier", table14_table(panel)),
        ("Table 15 · no answer (NA) by what ended the trajectory", table15_table(panel)),
        ("Table 17 · run-to-run over replicates: mean ± SD (range), and rank stability", table17_table(panel)),
        (
            "Table 17 · across separately stored runs of one model: mean ± SD (range), and rank stability",
            table17_runs_table(panel),
        ),
        (
            "Table 19 · closed-book accuracy by stratum (venue, seed year, seed citation quartile), per tier",
            table19_table(panel),
        ),
        (
            "pairwise accuracy tests (ours, not the paper's Table 13): Sig. counts (Holm; unadjusted beside)",
            pairwise_accuracy_table(panel),
        ),
        ("Figure 2 · within-family generation gap (older → newer generation of a family)", figure2_table(panel)),
        ("best (*) and tier-leader (†) marks: the paired test beside each", best_test_table(panel)),
        ("Figure 4 · item difficulty (runs right per item) by type × depth and consensus tier", figure4_table(panel)),
    ]


def extra_lines(panel: PanelReport) -> list[str]:
    """Early submission across the panel and the item-total summary, as sentences."""
    tables = panel.get("tables") or {}
    lines = []
    early = tables.get("early_submit")
    if early and early["mean_delta"] is not None:  # a mean Δ exactly when some run was tested
        lines.append(
            f"early submission (within 3 actions of a wrong-paper read): mean Δ accuracy "
            f"{early['mean_delta'] * 100:+.1f} pts across {early['n_tested']} runs; significant "
            f"(p < 0.05) in {early['n_significant']} of {early['n_tested']} runs"
        )
    itc = tables.get("item_total_summary")
    if itc:
        lines.append(
            f"item-total correlation over {itc['n']} items: median {itc['median']:.2f} (quartiles "
            f"{itc['q1']:.2f}–{itc['q3']:.2f}), > 0.2 for {pct(itc['share_above_0_2'])}, ≤ 0 for "
            f"{pct(itc['share_at_most_0'])}"
        )
    return lines


def table3_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """After a wrong-paper read, the paper's overlapping categories (shares of events)."""
    cats = ("Recover", "Stay", "Think", "Re-nav", "Submit")
    header = ("run", "events", *cats)
    rows = [
        (e["run"], str(e["n_events"]), *(pct(e["shares"][c]) for c in cats))
        for e in (panel.get("tables") or {}).get("table3") or []
    ]
    return header, rows


def table4_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """closed-book → no-search → full for each agent and model with all three, paired p per step."""
    header = ("agent / model", "n", "closed-book", "Δ (p)", "no-search", "Δ (p)", "full")
    rows: list[tuple[str, ...]] = []
    for e in (panel.get("tables") or {}).get("table4") or []:
        acc, (s1, s2) = e["accuracy"], e["steps"]

        def step(s: Table4Step) -> str:
            return NOT_MEASURED if s["delta"] is None else f"{s['delta'] * 100:+.1f} pts ({sig(s['p'])})"

        rows.append(
            (
                f"{e['agent']} {e['model'] or ''}".strip(),
                str(e["n"]),
                pct(acc["closed-book"]),
                step(s1),
                pct(acc["no-search"]),
                step(s2),
                pct(acc["full"]),
            )
        )
    return header, rows


def table9_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Imm / Thnk / Read per run, ST and MT-both, over ours (n) and the paper's denominator (n with the residual)."""
    header = ("run", "ST Imm", "ST Thnk", "ST Read", "ST n", "MT-both Imm", "MT-both Thnk", "MT-both Read", "MT n")
    rows = []
    for entry in (panel.get("tables") or {}).get("table9") or []:
        bases: tuple[tuple[Literal["ours", "paper"], Literal["n_ours", "n_paper"]], ...] = (
            ("ours", "n_ours"),
            ("paper", "n_paper"),
        )
        for basis, n_key in bases:
            cells = [f"{entry['run']} ({basis})"]
            for group in ("st", "mt_both"):
                g = entry[group]
                cells += [pct(g[basis][c]) for c in ("Imm", "Thnk", "Read")] + [str(g[n_key])]
            rows.append(tuple(cells))
    return header, rows


def mt_fail_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Table 9's MT-fail block: 0-Gold / Prem / Explored / Stayed over the MT trajectories whose recall failed."""
    cats = ("0-Gold", "Prem", "Explored", "Stayed")
    header = ("run", *cats, "n (of MT)")
    rows: list[tuple[str, ...]] = [
        (e["run"], *(pct(e["mt_fail"]["shares"][c]) for c in cats), f"{e['mt_fail']['n']} of {e['mt_fail']['n_mt']}")
        for e in (panel.get("tables") or {}).get("table9") or []
        if "mt_fail" in e
    ]
    return header, rows


CELL_ORDER = ("st_d1", "st_d2", "mt_d1", "mt_d2")


def table10_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Accuracy ± Wilson half-width per type × depth cell, and the fixed Δ st_d1 − mt_d2 with its p."""
    header = ("run", *CELL_ORDER, "Δ st_d1−mt_d2", "p")
    rows = []
    for entry in (panel.get("tables") or {}).get("table10") or []:
        cells = []
        for c in CELL_ORDER:
            cell = entry["cells"][c]
            cells.append(
                NOT_MEASURED
                if cell["accuracy"] is None or cell["half_width"] is None
                else f"{pct(cell['accuracy'])} ±{cell['half_width'] * 100:.1f}"
            )
        d = entry.get("delta")
        rows.append(
            (
                entry["run"],
                *cells,
                f"{d['delta'] * 100:+.1f} pts" if d else NOT_MEASURED,
                (sig(d["p"]) + (" (rep. 0)" if d["p_basis"] == "replicate 0" else "")) if d else NOT_MEASURED,
            )
        )
    return header, rows


def table11_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Evidence contact of recall-credited trajectories: share, conversion, the same items' closed-book accuracy."""
    t11 = (panel.get("tables") or {}).get("table11")
    header = ("evidence contact", "share", "n", "conversion", "closed-book (same items)")
    if not t11:
        return header, []
    labels = {
        "header": "read a direct-labelled section (header match)",
        "parent": "read the labelled content inside its parent section",
        "none": "read no direct-labelled content",
    }
    rows: list[tuple[str, ...]] = [
        (labels[g], pct(v["share"]), str(v["n"]), pct(v["conversion"]), pct(v["closed_book"]))
        for g, v in t11["groups"].items()
    ]
    return header, rows


def table12_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The walk down the top-6 MT conversions: each adjacent pair, its discordant counts, p, separated or not."""
    header = ("higher → lower", "Conv mt", "n", "higher only", "lower only", "p", "separated")
    rows: list[tuple[str, ...]] = [
        (
            f"{s['higher']} → {s['lower']}",
            f"{pct(s['conversion'][0])} → {pct(s['conversion'][1])}",
            str(s["n"]),
            str(s["best_better"]),
            str(s["runner_up_better"]),
            sig(s["p"]),
            "yes" if s["separated"] else "no",
        )
        for s in (panel["tables"].get("table12") or {"steps": []})["steps"]
    ]
    return header, rows


def table13_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """The paper's Table 13: each bigram kept (present in at least half of the evaluated models), its mean
    Δ-accuracy, its Sig. count and the models it occurs in; the largest |Δ| first."""
    header = ("bigram", "mean Δacc", "Sig. count", "models")
    kept = [b for b in panel["tables"].get("table13") or [] if b["mean_delta"] is not None]
    rows: list[tuple[str, ...]] = [
        (
            " → ".join(b["bigram"]),
            points(b["mean_delta"]),
            str(b["n_significant"]),
            f"{b['n_present']}/{panel.get('n_evaluated', len(panel['evaluated']))}",
        )
        for b in sorted(kept, key=lambda b: (-abs(b["mean_delta"] or 0.0), b["bigram"]))
    ]
    return header, rows


def pairwise_accuracy_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per run: accuracy and its Sig. counts over the pairwise accuracy tests (ours: runs it beats / runs that beat
    it, Holm and unadjusted)."""
    header = ("run", "accuracy", "Sig. >", "Sig. <", "unadjusted >", "unadjusted <")
    entries = (panel["tables"].get("pairwise_accuracy") or {"sig": []})["sig"]
    rows: list[tuple[str, ...]] = [
        (
            e["run"],
            pct(e["accuracy"]),
            str(e["wins"]),
            str(e["losses"]),
            str(e["wins_raw"]),
            str(e["losses_raw"]),
        )
        for e in sorted(entries, key=lambda e: -(e["accuracy"] or 0))
    ]
    return header, rows


def table14_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per tier: each run's top-1 trigram and its concentration, then the tier's mean concentration."""
    header = ("tier / run", "top-1 trigram", "concentration")
    rows: list[tuple[str, ...]] = []
    for t in (panel.get("tables") or {}).get("table14") or []:
        rows.append((TIER_LABELS.get(t["tier"] or "", "untiered"), "mean", pct(t["mean_concentration"])))
        for e in t["runs"]:
            gram = " → ".join(e["trigram"]) if e["trigram"] else NOT_MEASURED
            rows.append((f"  {e['run']}", gram, f"{pct(e['concentration'])} ({e['occurrences']}/{e['total']})"))
    return header, rows


def table15_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """NA share and its split by what ended the trajectory."""
    caps = ("max_turns", "budget", "token_limit", "error", "answer")
    header = ("run", "NA", *caps)
    rows = [
        (e["run"], f"{pct(e['na_share'])} ({e['na']}/{e['n']})", *(pct(e["by_cap_share"][c]) for c in caps))
        for e in (panel.get("tables") or {}).get("table15") or []
    ]
    return header, rows


T17_LABELS = {
    "accuracy": "accuracy",
    "section_recall": "section recall",
    "conversion": "conversion",
    "tokens": "tokens",
}


def table17_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Mean ± population SD (range) per metric over each run's replicates, then the rank-stability row."""
    t17 = (panel.get("tables") or {}).get("table17")
    header = ("run", *T17_LABELS.values())
    if t17 is None:
        return header, []
    rows = [(run, *(_spread_cell(m, spread.get(m)) for m in T17_LABELS)) for run, spread in t17["runs"].items()]
    if rows:
        rows.append(("rank stability (Kendall τ-b)", *(_tau(t17["rank_stability"], m) for m in T17_LABELS)))
    return header, rows


def table17_runs_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per model with several stored runs: mean ± SD (range) per metric across the runs, then rank stability."""
    t17 = (panel.get("tables") or {}).get("table17_runs")
    header = ("model (runs)", *T17_LABELS.values())
    if t17 is None:
        return header, []
    rows = [
        (f"{label} ({', '.join(t17['runs'][label])})", *(_spread_cell(m, spread.get(m)) for m in T17_LABELS))
        for label, spread in t17["models"].items()
    ]
    if rows:
        rows.append(("rank stability (Kendall τ-b)", *(_tau(t17["rank_stability"], m) for m in T17_LABELS)))
    return header, rows


def _spread_cell(metric: str, s: Spread | None) -> str:
    if not s:
        return NOT_MEASURED
    if metric == "tokens":
        return f"{num(s['mean'], 0)} ± {num(s['std'], 0)} (range {num(s['range'], 0)})"
    return f"{pct(s['mean'])} ± {pct(s['std'])} (range {pct(s['range'])})"


def _tau(stability: dict[str, RankStability | None], metric: str) -> str:
    s = stability.get(metric)
    if not s or s["mean_tau"] is None:
        return NOT_MEASURED
    return f"τ mean {s['mean_tau']:.2f}, min {s['min_tau']:.2f}" + (" (preserved)" if s["preserved"] else "")


def table19_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Closed-book accuracy per stratum value (rows) for each tier (columns; its closed-book runs pooled)."""
    entries = (panel.get("tables") or {}).get("table19") or []
    header = ("stratum", *(TIER_LABELS.get(e["tier"] or "", "untiered") + f" ({len(e['runs'])})" for e in entries))
    keys = sorted(
        {(k, v) for e in entries for k, vals in e["strata"].items() for v in vals},
        key=lambda kv: (
            ("venue", "seed year", "citation quartile").index(kv[0])
            if kv[0] in ("venue", "seed year", "citation quartile")
            else 9,
            kv[1],
        ),
    )
    rows = []
    for k, v in keys:
        cells = []
        for e in entries:
            c = e["strata"].get(k, {}).get(v)
            cells.append(NOT_MEASURED if c is None else f"{pct(c['accuracy'])} ({c['right']}/{c['n']})")
        rows.append((f"{k}: {v}", *cells))
    return header, rows


def figure2_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Within-family generation gap: older → newer, Δ accuracy as a bar, its p, and the axes that moved."""
    header = ("family", "generations", "older → newer", "Δ accuracy", "", "p", "axes that moved")
    rows: list[tuple[str, ...]] = []
    for e in (panel.get("tables") or {}).get("figure2") or []:
        d = e["delta"]
        bar = NOT_MEASURED if d is None else ("█" * max(1, round(abs(d) * 20)) if d else "·")
        moved = (
            ", ".join(
                f"{m['axis']} {m['delta'] * 100:+.0f}" if m["axis"] != "calls/turn" else f"calls/turn {m['delta']:+.2f}"
                for m in e["moved"]
            )
            or NOT_MEASURED
        )
        rows.append(
            (
                e["family"],
                " → ".join(e.get("generations") or []),
                f"{e['older']} → {e['newer']}",
                NOT_MEASURED if d is None else f"{d * 100:+.1f} pts",
                ("−" if d and d < 0 else "+") + bar,
                sig(e["p"]),
                moved,
            )
        )
    return header, rows


def figure4_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Items per difficulty bucket (low / mid / high: how many runs got them right), by type × depth and tier."""
    f = (panel.get("tables") or {}).get("figure4")
    if not f:
        return ("group", "low", "mid", "high"), []
    e = f["edges"]
    header = ("group", *(f"{b} ({edge_range(e[b])})" for b in ("low", "mid", "high")))
    rows = [
        (key, *(str(counts[b]) for b in ("low", "mid", "high")))
        for part in ("type_depth", "consensus_tier")
        for key, counts in f[part].items()
    ]
    return header, rows


def edge_range(edge: list[int]) -> str:
    """A bucket's counts: `7–12`, `3` when it holds one count, `none` when the panel is too small to fill it."""
    low, high = edge
    return "none" if high < low else str(low) if high == low else f"{low}–{high}"
