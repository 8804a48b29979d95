"""The panel as the paper reads it, as text cells: Table 2 grouped by tier and family with the best (*) and tier
leader (†) marks, the fingerprints per run and family with their tests and words, the top trigrams per family.

Shared by `report --panel` (table, Markdown) and the TUI's Panel screen, so both print the same cells."""

from __future__ import annotations

import math
from typing import Any, Literal

from workbench.service.records.columns import PANEL_COLUMNS
from workbench.service.records.panel import (
    Figure5Point,
    LineageGroup,
    PanelReport,
    PanelRow,
    RankStability,
    Spread,
    Table4Step,
    cell,
)
from workbench.views.cells import NOT_MEASURED, num, pct, sig

BEST_MARK, TIER_MARK, SHADE_MARK = " *", " †", " ‡"
EMPTY = "nothing to show with these runs (the legend says what the table needs)"
TIER_LABELS = {
    "closed-frontier": "Closed Frontier",
    "open-frontier": "Open Frontier",
    "compute-efficient": "Compute-Efficient",
}  # the paper's names of workbench.service.families.TIERS
MEAN_LIKE = ("calls/turn", "tokens", "turns", "points")
SIGNATURE_LABELS = {
    "calls_per_turn": "calls/turn",
    "think_share": "think",
    "read_share": "read",
    "nav_share": "nav",
    "early_commit": "early commit",
    "verify_before_commit": "verify",
    "over_search": "over-search",
    "under_engagement": "no read",
    "search_volume": "searches",
}
SHARES = (
    "think_share",
    "read_share",
    "nav_share",
    "early_commit",
    "verify_before_commit",
    "over_search",
    "under_engagement",
)


def section_label(group: LineageGroup) -> str:
    """`Closed Frontier · GPT`; `untiered · no family` for runs nobody tagged and no model names."""
    tier = TIER_LABELS.get(group["tier"], "untiered") if group["tier"] else "untiered"
    return f"{tier} · {group['family'] or 'no family'}"


def run_cells(panel: PanelReport, row: PanelRow) -> tuple[str, ...]:
    """One run's Table 2 cells with * (panel best) and † (tier leader) as they stand, ‡ where a tier leader's
    conversion cell is separated from the tier's runner-up by the paired test (the paper's shading)."""
    tier = row.get("tier") or ""
    marks = (
        (panel["best"], BEST_MARK),
        ((panel.get("tier_best") or {}).get(tier, {}), TIER_MARK),
        ((panel.get("tier_shaded") or {}).get(tier, {}), SHADE_MARK),
    )
    cells = [_run_cell(row, col, marks) for col, _ in PANEL_COLUMNS]
    name = row["run"] if row.get("ablation", "full") == "full" else f"{row['run']} [{row['ablation']}]"
    return (name, *cells)


def _run_cell(row: PanelRow, col: str, marks: tuple[tuple[dict[str, list[str]], str], ...]) -> str:
    """One Table 2 cell of a run with each mark (*, †, ‡) whose column lists the run, in that order."""
    v = cell(row, col)
    text = num(v, 0 if col == "tokens" else 2) if col in MEAN_LIKE else pct(v)
    return text + "".join(mark for marked, mark in marks if row["run"] in marked.get(col, ()))


def grouped_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, list[tuple[str, ...]]]]]:
    """(header, [(section label, rows)]) in the panel's lineage order (tier, family, accuracy)."""
    by_run = {r["run"]: r for r in panel["rows"]}
    header = ("run", *(c for c, _ in PANEL_COLUMNS))
    groups = panel.get("lineage") or [{"tier": None, "family": None, "runs": list(by_run)}]
    return header, [(section_label(g), [run_cells(panel, by_run[name]) for name in g["runs"]]) for g in groups]


def signature_cell(key: str, value: float | None) -> str:
    """A share as a percentage, calls per turn and searches per trajectory as numbers."""
    return pct(value) if key in SHARES else num(value, 2)


def fingerprint_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per family: its mean row (with its words), then its runs' signatures."""
    fp = panel.get("fingerprints") or {}
    sigs = fp.get("signatures") or list(SIGNATURE_LABELS)
    header = ("family / run", *(SIGNATURE_LABELS[s] for s in sigs), "words")
    rows: list[tuple[str, ...]] = []
    families = fp.get("families") or {}
    members: dict[str, list[str]] = {}
    for run, fam in (fp.get("family_of") or {}).items():
        members.setdefault(fam, []).append(run)
    for fam in sorted(members):
        tests = families.get(fam, {}).get("signatures", {})
        means = [signature_cell(s, tests[s]["family_mean"]) if s in tests else NOT_MEASURED for s in sigs]
        words = ", ".join(families.get(fam, {}).get("words") or []) or NOT_MEASURED
        rows.append((f"{fam} (mean of {len(members[fam])})", *means, words))
        for run in sorted(members[fam]):
            rows.append((f"  {run}", *(signature_cell(s, fp["models"][run][s]["value"]) for s in sigs), ""))
    return header, rows


def effect_cell(key: str, test: dict[str, Any]) -> str:
    """`+12.0 pts p .031` (shares) or `+0.35 p .031`: the family minus the others, and the Holm-adjusted p."""
    if test.get("effect") is None:
        return NOT_MEASURED
    effect = f"{test['effect'] * 100:+.1f} pts" if key in SHARES else f"{test['effect']:+.2f}"
    mark = " *" if test.get("significant") else ""
    return f"{effect} p {sig(test['p_holm'])}{mark}"


def family_test_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per family and signature: family − mean of the other families' runs, with the Holm-adjusted permutation p
    (* where below 0.05)."""
    fp = panel.get("fingerprints") or {}
    sigs = fp.get("signatures") or list(SIGNATURE_LABELS)
    header = ("family vs the rest", *(SIGNATURE_LABELS[s] for s in sigs))
    families = fp.get("families") or {}
    if len(families) < 2:  # one family has no others to be tested against
        return header, []
    rows = [
        (fam, *(effect_cell(s, fam_tests["signatures"][s]) for s in sigs))
        for fam, fam_tests in sorted(families.items())
    ]
    return header, rows


def trigram_lines(panel: PanelReport) -> list[str]:
    """`Alpha: get_references → list_sections → read_section on 100.0% of its 120 trajectories (others 51.7%)`."""
    lines = []
    for fam, tops in sorted(((panel.get("fingerprints") or {}).get("trigrams") or {}).items()):
        for t in tops:
            lines.append(
                f"{fam}: {' → '.join(t['trigram'])} on {pct(t['share'])} of its {t['n']} trajectories "
                f"(other families' mean {pct(t['others_mean_share'])})"
            )
    return lines


def fingerprint_notes(panel: PanelReport) -> list[str]:
    """Runs left out of the fingerprints, and why; a note when fewer than two families could be compared."""
    fp = panel.get("fingerprints") or {}
    lines = [f"not in the fingerprints: {run} ({why})" for run, why in sorted((fp.get("excluded") or {}).items())]
    if fp and len(fp.get("families") or {}) < 2:
        lines.append("family tests need runs of at least two families")
    for fam, tests in sorted((fp.get("families") or {}).items()):
        floors = [t["min_p_holm"] for t in tests["signatures"].values() if t.get("min_p_holm") is not None]
        if not tests["words"] and floors and min(floors) >= 0.05:
            lines.append(
                f"{fam}: no word can be supported with these runs (the smallest attainable Holm-adjusted "
                f"p is {sig(min(floors))}: add runs to the family or to the others)"
            )
    return lines


def markdown_table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    def esc(cell: object) -> str:
        return str(cell).replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def grouped_markdown(panel: PanelReport) -> str:
    """Table 2 grouped as one Markdown table, each group opened by a bold row naming tier and family."""
    header, sections = grouped_table(panel)
    rows: list[tuple[str, ...]] = []
    for label, cells in sections:
        rows.append((f"**{label}**", *([""] * (len(header) - 1))))
        rows.extend(cells)
    return markdown_table(header, rows)


def titled_tables(panel: PanelReport) -> list[tuple[str, tuple[tuple[str, ...], list[tuple[str, ...]]]]]:
    """The panel's tables after Table 2, titled, in the order every front end shows them."""
    return [
        (
            "fingerprints (paper §4.2): per family (mean of its runs, the words the tests support) and per run",
            fingerprint_table(panel),
        ),
        (
            "family vs the other families: difference, Holm-adjusted (all families' tests) permutation p over runs "
            "(* p < 0.05)",
            family_test_table(panel),
        ),
        (
            "family trigrams: each family's top trigram, share of trajectories per run, family − the others "
            "(Holm-adjusted permutation p over runs)",
            trigram_test_table(panel),
        ),
    ]


def trigram_test_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Per family: its top trigram, the family − others difference in the runs' shares, raw and Holm p."""
    header = ("family", "top trigram", "family − others", "p", "p (Holm)")
    tests = (panel.get("fingerprints") or {}).get("trigram_tests") or {}
    rows: list[tuple[str, ...]] = [
        (
            fam,
            " → ".join(t["trigram"]),
            NOT_MEASURED if t["effect"] is None else f"{t['effect'] * 100:+.1f} pts",
            sig(t["p"]),
            sig(t["p_holm"]) + (" *" if t.get("significant") else ""),
        )
        for fam, t in sorted(tests.items())
    ]
    return header, rows


def best_test_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """Beside the marks: per column, the best run(s), the runner-up, the paired test and whether it separates
    them (the panel's, then each tier's)."""
    header = ("scope", "column", "best", "runner-up", "test", "n", "p", "separated")
    rows: list[tuple[str, ...]] = []
    scopes = [("panel", panel.get("best_tests") or {})] + [
        (TIER_LABELS.get(tier, tier), tests) for tier, tests in (panel.get("tier_best_tests") or {}).items()
    ]
    for scope, tests in scopes:
        for col, t in tests.items():
            rows.append(
                (
                    scope,
                    col,
                    ", ".join(t["best"]),
                    ", ".join(t["runner_up"]),
                    t.get("test") or t.get("reason") or NOT_MEASURED,
                    str(t.get("n", NOT_MEASURED)),
                    sig(t["p"]) if t.get("p") is not None else NOT_MEASURED,
                    "yes" if t["separated"] else "no",
                )
            )
    return header, rows


def panel_markdown(panel: PanelReport) -> str:
    """The whole panel as Markdown: warnings, Table 2 grouped, the statistics lines, every further table, the
    trigram lines (the legend is added by the caller)."""
    from workbench.views.panel import bigram_panel_line, panel_stat_lines, panel_title

    parts = [f"> warning: {w}\n\n" for w in panel.get("warnings", [])]
    parts.append(f"**{panel_title(panel, len(panel['rows']))}**\n\n" + grouped_markdown(panel))
    stats = [*panel_stat_lines(panel), bigram_panel_line(panel)]
    parts.append("".join(f"\n{line}\n" for line in stats if line))
    for title, (header, rows) in titled_tables(panel) + extra_tables(panel):
        parts.append(f"\n**{title}**\n\n" + (markdown_table(header, rows) if rows else f"{EMPTY}\n"))
    notes = trigram_lines(panel) + fingerprint_notes(panel) + extra_lines(panel)
    parts.append("".join(f"\n- {line}" for line in notes) + ("\n" if notes else ""))
    return "".join(parts)


EXPORT_FORMATS = {".json": "json", ".csv": "csv", ".md": "markdown", ".markdown": "markdown"}


def panel_document(panel: PanelReport, fmt: str) -> str:
    """The panel as a file's text in `fmt` (json, csv, markdown): exactly what `report --panel --format fmt`
    prints, so the TUI's export and the CLI's output are one text."""
    import csv
    import io
    import json

    from workbench.views.panel import PANEL_TIDY_HEADER, tidy_all_rows
    from workbench.views.report import legend_lines

    if fmt == "json":
        return json.dumps(panel, indent=2, sort_keys=False, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        writer = csv.writer(buf)
        writer.writerow(PANEL_TIDY_HEADER)
        writer.writerows(tidy_all_rows(panel))
        return buf.getvalue()
    if fmt == "markdown":
        legend = legend_lines(panel.get("legend"))
        return panel_markdown(panel) + "".join(f"\n- {line}" for line in legend) + ("\n" if legend else "")
    raise ValueError(f"unknown panel format '{fmt}' (json, csv, markdown)")


CELL_ORDER = ("st_d1", "st_d2", "mt_d1", "mt_d2")


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


def table15_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """NA share and its split by what ended the trajectory."""
    caps = ("max_turns", "budget", "token_limit", "error", "answer")
    header = ("run", "NA", *caps)
    rows = [
        (e["run"], f"{pct(e['na_share'])} ({e['na']}/{e['n']})", *(pct(e["by_cap_share"][c]) for c in caps))
        for e in (panel.get("tables") or {}).get("table15") or []
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
        ("Table 13 · pairwise accuracy tests: Sig. counts (Holm; unadjusted beside)", table13_table(panel)),
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


def figure5_text(panel: PanelReport, width: int = 72, height: int = 18) -> str:
    """Figure 5: accuracy against paper recall, one point per run, a marker per tier, with the diagonal."""
    points = [
        p
        for p in (panel.get("tables") or {}).get("figure5") or []
        if p["paper_recall"] is not None and p["accuracy"] is not None
    ]
    if not points:
        return ""
    plt = _plot(width, height)
    plt.plot([0, 1], [0, 1], marker="·", label="accuracy = recall")
    markers = {"closed-frontier": "●", "open-frontier": "▲", "compute-efficient": "■"}
    for tier, mine in _by_tier(points):
        plt.scatter(
            [p["paper_recall"] for p in mine],
            [p["accuracy"] for p in mine],
            marker=markers.get(tier or "", "x"),
            label=TIER_LABELS.get(tier or "", "untiered"),
        )
    plt.xlim(0, 1)
    plt.ylim(0, 1)
    plt.xlabel("paper recall")
    plt.title("Figure 5 · accuracy against paper recall (one point per run)")
    return plt.uncolorize(plt.build())


def _by_tier(points: list[Figure5Point]) -> list[tuple[str | None, list[Figure5Point]]]:
    """The points grouped by tier in the tiers' order, the untiered (None, or a tier we do not know) last."""
    groups = [
        (tier, [p for p in points if (p["tier"] if p["tier"] in TIER_LABELS else None) == tier])
        for tier in [*TIER_LABELS, None]
    ]
    return [(tier, mine) for tier, mine in groups if mine]


def _plot(width: int, height: int):
    """plotext, cleared and sized for one figure (the module is a global canvas: every figure starts afresh)."""
    import plotext as plt

    plt.main()
    plt.clear_figure()
    plt.limit_size(False, False)
    plt.theme("clear")
    plt.plotsize(max(30, width), max(10, height))
    return plt


def even_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Evenly spaced ticks on a round step (1, 2, 2.5, 5 × 10^k) covering [low, high] and 0 (a range narrower than
    1e-9 is read as [0, 1]): whole multiples of the step, so every gap is the same."""
    low, high = min(low, 0.0), max(high, 0.0)
    if high - low < 1e-9:
        high = low + 1.0
    raw = (high - low) / max(1, count - 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first, last = math.floor(low / step), math.ceil(high / step)
    return [k * step for k in range(first, last + 1)]


def figure2_text(panel: PanelReport, width: int = 72, height: int = 14) -> str:
    """Figure 2: the within-family generation gaps, one bar per pair of runs (older → newer generation, Δ accuracy
    in points), on evenly spaced ticks."""
    gaps = [(e, d) for e in panel["tables"].get("figure2") or [] if (d := e["delta"]) is not None]
    if not gaps:
        return ""
    plt = _plot(width, height)
    values = [round(d * 100, 1) for _, d in gaps]
    plt.bar([f"{e['older']}→{e['newer']}" for e, _ in gaps], values, width=0.5)
    plt.hline(0)
    ticks = even_ticks(min(values), max(values))
    plt.ylim(ticks[0], ticks[-1])
    plt.yticks(ticks, [f"{t:g}" for t in ticks])
    plt.ylabel("Δ accuracy (pts)")
    plt.title("Figure 2 · within-family generation gap (newer − older generation)")
    return plt.uncolorize(plt.build())


def figure4_text(panel: PanelReport, width: int = 72, height: int = 16) -> str:
    """Figure 4: items per difficulty bucket (low / mid / high: runs right per item), three bars (░ ▒ █, told
    apart without colour) per type × depth cell, then per consensus tier (prefixed `tier`)."""
    f = (panel.get("tables") or {}).get("figure4")
    if not f:
        return ""
    groups = [*f["type_depth"].items(), *((f"tier {k}", v) for k, v in f["consensus_tier"].items())]
    if not groups:
        return ""
    plt = _plot(width, height)
    e = f["edges"]
    buckets = ("low", "mid", "high")
    plt.multiple_bar(
        [k for k, _ in groups],
        [[v[b] for _, v in groups] for b in buckets],
        labels=[f"{b} ({edge_range(e[b])} right)" for b in buckets],
        marker=["░", "▒", "█"],
    )
    plt.ylim(0, max(v[b] for _, v in groups for b in buckets) * 1.4 + 1)  # headroom: the legend sits top left
    plt.ylabel("items")
    plt.title("Figure 4 · item difficulty by type × depth and consensus tier")
    return plt.uncolorize(plt.build())


def figures_text(panel: PanelReport, width: int = 72, height: int = 18) -> str:
    """Every figure of the panel as text, each no taller than `height` rows (the caller passes what the terminal
    leaves): Figure 2, Figure 4, then Figure 5 and the points it plots (so no number is only a dot)."""
    parts = [
        figure2_text(panel, width, max(10, height - 4)),
        figure4_text(panel, width, height),
        figure5_text(panel, width, height),
    ]
    points = [
        f"{p['run']}: recall {pct(p['paper_recall'])}, accuracy {pct(p['accuracy'])}"
        for p in (panel.get("tables") or {}).get("figure5") or []
    ]
    return "\n".join([x for x in parts if x] + points)


def table3_table(panel: PanelReport) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
    """After a wrong-paper read, the paper's overlapping categories (shares of events)."""
    cats = ("Recover", "Stay", "Think", "Re-nav", "Submit")
    header = ("run", "events", *cats)
    rows = [
        (e["run"], str(e["n_events"]), *(pct(e["shares"][c]) for c in cats))
        for e in (panel.get("tables") or {}).get("table3") or []
    ]
    return header, rows


T17_LABELS = {
    "accuracy": "accuracy",
    "section_recall": "section recall",
    "conversion": "conversion",
    "tokens": "tokens",
}


def _spread_cell(metric: str, s: Spread | None) -> str:
    if not s:
        return NOT_MEASURED
    if metric == "tokens":
        return f"{num(s['mean'], 0)} ± {num(s['std'], 0)} (range {num(s['range'], 0)})"
    return f"{pct(s['mean'])} ± {pct(s['std'])} (range {pct(s['range'])})"


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
    """Per run: accuracy and its Sig. counts (runs it beats / runs that beat it, Holm and unadjusted)."""
    header = ("run", "accuracy", "Sig. >", "Sig. <", "unadjusted >", "unadjusted <")
    entries = (panel["tables"].get("table13") or {"sig": []})["sig"]
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


def _tau(stability: dict[str, RankStability | None], metric: str) -> str:
    s = stability.get(metric)
    if not s or s["mean_tau"] is None:
        return NOT_MEASURED
    return f"τ mean {s['mean_tau']:.2f}, min {s['min_tau']:.2f}" + (" (preserved)" if s["preserved"] else "")
