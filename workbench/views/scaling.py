"""The scaling results as text cells, notes and CSV rows: the CLI's tables and the TUI's show the same strings."""

from __future__ import annotations

from typing import Literal, cast, get_args

from stats.judges import TrialSpread
from workbench.service.records.parallel import (
    GAP_KEYS,
    STRATEGY_KEYS,
    JudgeJson,
    JudgeTrials,
    KRowJson,
    ParallelReport,
    Strategy,
    StudyRowJson,
    TrialRow,
)
from workbench.service.records.sequential import (
    ComparisonRow,
    Level,
    Plateau,
    StrategyComparison,
    ToolsReport,
    Transition,
)
from workbench.views.cells import NOT_MEASURED, CsvCell, pct, shell_word, sig
from workbench.views.cells import usd as money

Palette = dict[str, tuple[int, int, int] | str]


STRATEGIES: tuple[Strategy, ...] = ("pass_at_k", "majority", "pointwise", "pairwise")


TERMINAL_PALETTE: Palette = {
    "line": "blue",
    "gain": "green",
    "loss": "red",
    "mark": "yellow",
    "shade": "gray",
    "pass_at_k": "blue",
    "majority": "magenta",
    "pointwise": "cyan",
    "pairwise": "green",
}


def flags(result: Plateau) -> list[str]:
    """The plateau's caveats in words: censored, no significant gain, borderline, degenerate variance, FPC 0,
    and budget levels that sit at or below the prompt overhead or that no item reached."""
    names = [
        name for name in ("censored", "no_significant_gain", "degenerate_variance", "fpc_zero") if result.get(name)
    ]
    if any(t.get("borderline") for t in result["transitions"]):
        names.append("borderline")
    return [n.replace("_", " ") for n in names] + _level_flags(result.get("levels") or [])


def _level_flags(levels: list[Level]) -> list[str]:
    """The budget levels at or below the prompt overhead, and those no item reached, in words."""
    out = []
    degenerate = [str(lv["budget"]) for lv in levels if lv.get("degenerate")]
    never = [str(lv["budget"]) for lv in levels if lv.get("never_reached")]
    if degenerate:
        out.append(f"at/below the prompt overhead: {', '.join(degenerate)}")
    if never:
        out.append(f"never reached: {', '.join(never)}")
    return out


LEVEL_COLUMNS = ("budget", "n", "acc", "tokens", "cost", "acc/$", "acc/Mtok", "cont.", "reached", "max", "flag")


LEVELS_NOTE = (
    "tokens, cost: the level's own / with the levels below it (continuation chain); acc/$, acc/Mtok: "
    "accuracy per mean chain spend per item; reached: items over the level's cap (STOP: told to answer); "
    "max: the furthest any item went (context tokens, turns or points)"
)


def spent(usd: float | None, measured: bool = True) -> str:
    """An amount of money: `—` for a scripted agent (no model), `unpriced` for a model without prices."""
    if not measured:
        return NOT_MEASURED
    return "unpriced" if usd is None else money(usd, 4)


def _pair(marginal: float | None, cumulative: float | None, fmt: str, measured: bool = True) -> str:
    """One figure when a level stands alone; `level / chain` when its answers also cost the levels below."""
    if not measured:
        return NOT_MEASURED
    if cumulative is None:
        return "unpriced"
    if marginal == cumulative:
        return format(cumulative, fmt)
    return f"{format(marginal or 0, fmt)} / {format(cumulative, fmt)}"


def level_cells(level: Level) -> list[str]:
    """A budget level as text cells (the CLI table and the TUI show the same)."""
    note = []
    if level.get("degenerate"):
        note.append(f"≤ overhead ({level['overhead_tokens']:,.0f})")
    if level.get("never_reached"):
        note.append("never reached")
    reached = str(level["n_reached"]) + (f" ({level['n_stopped']} STOP)" if level.get("n_stopped") else "")
    return [
        str(level["budget"]),
        str(level["n"]),
        pct(level["accuracy"]),
        _pair(level["tokens_marginal"], level["tokens_cumulative"], ",.0f", level.get("measured", True)),
        _pair(level["cost_usd_marginal"], level["cost_usd_cumulative"], ".4f", level.get("measured", True)),
        sig(level["accuracy_per_usd"]),
        sig(level["accuracy_per_million_tokens"]),
        str(level["continues"]),
        reached,
        f"{level['max_reached']:,}",
        "; ".join(note),
    ]


def trials_note(result: Plateau) -> str:
    """How T > 1 trials per item were resampled, for the plateau's header line ('' with one trial)."""
    if result.get("n_trials", 1) <= 1:
        return ""
    pairing = "matched" if result.get("matched_trials") else "unmatched"
    design = "two-stage bootstrap" if result.get("two_stage") else "cluster bootstrap"
    return f", T = {result['n_trials']} trials, {design} ({pairing} trials)"


def strategies(report: ParallelReport) -> list[Strategy]:
    """The strategies the report's rows hold, in `STRATEGIES`' order."""
    return [n for n in STRATEGIES if report["per_k"] and n in report["per_k"][0]]


TransitionColumn = Literal[
    "from",
    "to",
    "d_bar",
    "sigma_boot",
    "c_k",
    "significant",
    "tested",
    "borderline",
    "improved",
    "worsened",
    "sign_test_p",
]
TRANSITION_CSV: tuple[TransitionColumn, ...] = get_args(TransitionColumn)


SHORT = {"pass_at_k": "pass@k", "majority": "majority", "pointwise": "pointwise", "pairwise": "pairwise"}


GAP_SHORT = {"majority": "Δ maj", "pointwise": "Δ point", "pairwise": "Δ pair"}


def transition_csv(result: Plateau) -> tuple[list[str], list[list[CsvCell]]]:
    """One row per transition, its `TRANSITION_CSV` fields."""
    return list(TRANSITION_CSV), [[t.get(h) for h in TRANSITION_CSV] for t in result["transitions"]]


def parallel_columns(report: ParallelReport) -> list[str]:
    """k, each strategy (value over its interval), and each strategy's verification gap in points."""
    names = strategies(report)
    return ["k", *(SHORT[n] for n in names), *(GAP_SHORT[n] for n in names[1:])]


def _interval(ci: list[float] | None, compact: bool) -> str:
    """A 95% interval in points: `[lo, hi]`, or `lo–hi` where columns are narrow (the TUI); "no variation" when
    every resample gave the same value (every item's value equal), which is no certainty and no interval."""
    if not ci:
        return ""
    from stats.bootstrap import no_variation  # numpy: imported where an interval is shown, not with the module

    if no_variation(*ci):
        return "\nno variation"
    lo, hi = 100 * ci[0], 100 * ci[1]
    return f"\n{lo:.1f}–{hi:.1f}" if compact else f"\n[{lo:.1f}, {hi:.1f}]"


def parallel_cells(report: ParallelReport, row: KRowJson, compact: bool = False) -> list[str]:
    """Per k: each value over its 95% interval, each gap (points, pass@k − strategy) over its paired interval."""
    names = strategies(report)
    cells = [str(row["k"])]
    for name in names:
        keys = STRATEGY_KEYS[name]
        cells.append(pct(row[keys.value]) + _interval(row.get(keys.ci), compact))
    for name in names[1:]:
        gap = GAP_KEYS[name]
        cells.append(f"{row[gap.gap] * 100:+.1f}" + _interval(row.get(gap.ci), compact))
    return cells


def verdicts_note(report: ParallelReport) -> str:
    """What the judged strategies rest on when verdicts were read from the store only ('' when asked for)."""
    if report.get("verdicts") != "stored":
        return ""
    missing = report.get("verdicts_missing") or 0
    if not missing:
        return f"judge {report['judge']}: stored verdicts (never asked from here)"
    return (
        f"judge {report['judge']}: stored verdicts only, {missing} missing, so pointwise and pairwise are not "
        f"shown; `scale parallel --run {shell_word(report['run'])} --judge …` asks for them"
    )


def repricing_note(report: ParallelReport) -> str:
    """Under the study's cost rule: how many judge verdicts were stored without token buckets and so keep their
    stored (cache-aware) cost ('' when every verdict was repriced, or under the cache-aware rule)."""
    n = report.get("judge_verdicts_unrepriced") or 0
    if not n:
        return ""
    return (
        f"{n} judge verdict(s) stored without token buckets (an older store) keep their stored cost: "
        "not repriced by the study's rule"
    )


def cost_columns(report: ParallelReport) -> list[str]:
    return ["k", "sampling", *(SHORT[n] for n in strategies(report)[1:])]


def _tokens(n: float) -> str:
    return f"{n:,.0f}" if n < 1e4 else (f"{n / 1e3:.1f}k" if n < 1e6 else f"{n / 1e6:.2f}M")


def cost_cells(report: ParallelReport, row: KRowJson) -> list[str]:
    """Per k: what sampling k of K costs; per strategy its relative gap (gap / pass@k) and efficiency
    ((strategy − pass@1)/(pass@k − pass@1)), what committing at k costs, and its accuracy per dollar and per
    million tokens."""
    measured = report.get("measured", True)

    def money(usd: float | None) -> str:
        return spent(usd, measured)

    def tokens(n: float | None) -> str:
        return f"{_tokens(n)} tok" if measured and n is not None else NOT_MEASURED

    def per(value: float | None, unit: str) -> str:
        return f"{sig(value if measured else None)}/{unit}"

    cells = [str(row["k"]), f"{money(row['sampling_cost_usd'])}\n{tokens(row['sampling_tokens'])}"]
    for name in strategies(report)[1:]:
        gap = GAP_KEYS[name]
        efficiency = row.get(gap.efficiency)
        cells.append(
            f"rel {pct(row.get(gap.relative_gap))} · eff "
            f"{NOT_MEASURED if efficiency is None else f'{efficiency:.2f}'}\n"
            f"{money(row[gap.cost_usd])} · {tokens(row[gap.tokens])}\n"
            f"{per(row[gap.accuracy_per_usd], '$')} · {per(row[gap.accuracy_per_million_tokens], 'Mtok')}"
        )
    return cells


def parallel_csv(report: ParallelReport) -> tuple[list[str], list[list[CsvCell]]]:
    """One row per k, numbers only: every strategy with its interval, gap, interval, relative gap, efficiency,
    cost, tokens, accuracy per dollar and per million tokens; then the k-subsets averaged over and, with a judge,
    the study's accepted coverage (`self_choice_best@k`, not a selection)."""
    names = strategies(report)
    coverage = any("accepted_coverage" in row for row in report["per_k"])
    readings = study_readings(report)
    header = _parallel_csv_header(names, coverage) + study_csv_header(readings)
    study_at = {row["k"]: row for row in report.get("study") or []}
    rows = [
        _parallel_csv_cells(names, row, coverage) + study_csv_cells(readings, study_at.get(row["k"]))
        for row in report["per_k"]
    ]
    return header, rows


def _parallel_csv_header(names: list[Strategy], coverage: bool) -> list[str]:
    """The CSV's columns of our strategies: the row's own keys (the intervals split into their bounds)."""
    header = ["k", "n", "blocks", "sampling_cost_usd", "sampling_tokens"]
    for name in names:
        header += [name, f"{name}_ci_low", f"{name}_ci_high"]
    for name in names[1:]:
        gap = GAP_KEYS[name]
        header += [gap.gap, f"{gap.ci}_low", f"{gap.ci}_high", gap.relative_gap, gap.efficiency, gap.cost_usd]
        header += [gap.tokens, gap.accuracy_per_usd, gap.accuracy_per_million_tokens]
    return header + (["subsets", "accepted_coverage"] if coverage else ["subsets"])


def _bounds(ci: list[float] | None) -> tuple[float | None, float | None]:
    """An interval's low and high bound, empty (None) without an interval."""
    return (ci[0], ci[1]) if ci else (None, None)


def _parallel_csv_cells(names: list[Strategy], row: KRowJson, coverage: bool) -> list[CsvCell]:
    """One k's numbers in `_parallel_csv_header`'s columns."""
    cells: list[CsvCell] = [row["k"], row["n"], row["blocks"], row["sampling_cost_usd"], row["sampling_tokens"]]
    for name in names:
        keys = STRATEGY_KEYS[name]
        cells += [row[keys.value], *_bounds(row.get(keys.ci))]
    for name in names[1:]:
        gap = GAP_KEYS[name]
        cells += [row[gap.gap], *_bounds(row.get(gap.ci)), row[gap.relative_gap], row[gap.efficiency]]
        cells += [row[gap.cost_usd], row[gap.tokens], row[gap.accuracy_per_usd], row[gap.accuracy_per_million_tokens]]
    cells.append(row.get("subsets", row["blocks"]))
    if coverage:
        cells.append(row.get("accepted_coverage"))
    return cells


# ---------------------------------------------------------------- the study's readings (GA-Bench Tables 15-18)


STUDY_SHORT = {"majority": "majority", "pairwise": "pairwise", "best_at_k": "best@k", "retain_at_k": "retain@k"}
STUDY_FIELDS = ("value", "gap", "gap_ci_low", "gap_ci_high", "relative_gap", "efficiency", "n")


def study_readings(report: ParallelReport) -> list[str]:
    """The study's readings a report holds, in the order first met (majority, pairwise, then each judge's)."""
    names: dict[str, None] = {}
    for row in report.get("study") or []:
        names.update(dict.fromkeys(r["reading"] for r in row["readings"]))
    return list(names)


def study_label(reading: str) -> str:
    """`best_at_k:gpt5` → `best@k gpt5`: the reading's short name and its judge."""
    kind, _, judge = reading.partition(":")
    return f"{STUDY_SHORT.get(kind, kind)} {judge}".strip()


def study_columns(report: ParallelReport) -> list[str]:
    """k, the study's pass@k (best of the first k), and each of its readings (value, then its gap)."""
    return ["k", "pass@k (first k)", *(study_label(r) for r in study_readings(report))]


def study_cells(report: ParallelReport, row: StudyRowJson, compact: bool = False) -> list[str]:
    """One k of the study's table: each reading's value (= when the study's k = 1 row copies pass@1), its gap to
    the study's pass@k in points over the paired interval, and its relative gap and efficiency."""
    by_name = {r["reading"]: r for r in row["readings"]}
    cells = [str(row["k"]), pct(row["pass_at_k"]) + _interval(row.get("pass_at_k_ci"), compact)]
    for name in study_readings(report):
        r = by_name.get(name)
        if r is None:
            cells.append(NOT_MEASURED)
            continue
        efficiency = NOT_MEASURED if r["efficiency"] is None else f"{r['efficiency']:.2f}"
        cells.append(
            f"{pct(r['value'])}{' =' if r['copies_pass1'] else ''}\n"
            f"Δ {r['gap'] * 100:+.1f}{_interval(r['gap_ci'], compact).replace(chr(10), ' ')}\n"
            f"rel {pct(r['relative_gap'])} · eff {efficiency}"
        )
    return cells


def study_csv_header(readings: list[str]) -> list[str]:
    return ["study_pass_at_k", *(f"study_{name}_{field}" for name in readings for field in STUDY_FIELDS)]


def study_csv_cells(readings: list[str], row: StudyRowJson | None) -> list[CsvCell]:
    """The study's pass@k and each reading's value, gap, interval, relative gap, efficiency and items at one k."""
    if row is None:
        return [None] * (1 + len(readings) * len(STUDY_FIELDS))
    by_name = {r["reading"]: r for r in row["readings"]}
    cells: list[CsvCell] = [row["pass_at_k"]]
    for name in readings:
        r = by_name.get(name)
        if r is None:
            cells += [None] * len(STUDY_FIELDS)
            continue
        low, high = r["gap_ci"] or (None, None)
        cells += [r["value"], r["gap"], low, high, r["relative_gap"], r["efficiency"], r["n"]]
    return cells


def imported_note(report: ParallelReport) -> str:
    """Where an imported study's samples come from, and its null scores (counted 0, as the study counts them)."""
    if report.get("origin") != "imported":
        return ""
    return (
        f"scores from {report['source']} · a score ≥ {report['success_threshold']:g} is a success · "
        f"{report['null_scores']} null score(s) counted 0 · no spend in the file: costs not measured"
    )


def parallel_files_csv(reports: list[ParallelReport]) -> tuple[list[str], list[list[CsvCell]]]:
    """Several studies' CSV rows as one table: a `study` column first, the union of their columns (a reading a
    study lacks is empty)."""
    tables = [parallel_csv(r) for r in reports]
    header: dict[str, None] = {"study": None}
    for columns, _ in tables:
        header.update(dict.fromkeys(columns))
    names = list(header)
    rows = []
    for report, (columns, body) in zip(reports, tables, strict=True):
        for cells in body:
            by_column = dict(zip(columns, cells, strict=True))
            rows.append([report["run"], *(by_column.get(c) for c in names[1:])])
    return names, rows


def decision(t: Transition) -> str:
    """A transition's decision in words (the table, the TUI and the plot label say the same)."""
    if not t.get("tested", True):
        return "not tested (Holm stopped)"
    if t["significant"]:
        return "gain (borderline)" if t.get("borderline") else "gain"
    return "no gain, borderline" if t.get("borderline") else "no significant gain"


def c_k_text(t: Transition) -> str:
    return NOT_MEASURED if t.get("c_k") is None else f"{t['c_k']:+.4f}"


def transition_cells(t: Transition) -> list[str]:
    """A transition between adjacent levels as the CLI's and the TUI's tables show it: d̄, σ, C_k, the decision,
    the items improved / worsened and the sign test."""
    return [
        f"{t['from']} → {t['to']}",
        f"{t['d_bar']:+.4f}",
        f"{t['sigma_boot']:.4f}",
        c_k_text(t),
        decision(t),
        f"{t['improved']} / {t['worsened']}",
        f"{t['sign_test_p']:.4g}",
    ]


def comparison_rows(comparison: StrategyComparison) -> list[ComparisonRow]:
    """One flat row per (strategy, level) of a `strategy_comparison`: the CSV, the CLI table and the TUI read these."""
    rows = []
    for study in comparison["studies"]:
        for level in study["levels"]:
            low, high = level["accuracy_ci"] or (None, None)
            interval = level["accuracy_interval"]
            rows.append(
                ComparisonRow(
                    group=study["group"],
                    strategy=study["strategy"],
                    budget=level["budget"],
                    plateau_budget=study["plateau_budget"],
                    k_star=study["k_star"],
                    at_plateau=level["budget"] == study["plateau_budget"],
                    n=level["n"],
                    accuracy=level["accuracy"],
                    accuracy_low=low,
                    accuracy_high=high,
                    accuracy_interval=interval["method"] if interval else None,
                    n_eff=interval["n_eff"] if interval else None,
                    tokens_per_trajectory=level["tokens_per_trajectory"],
                    cost_usd=level["cost_usd_cumulative"],
                    summaries=level["summaries"],
                    verifier_calls=level["verifier_calls"],
                    verifier_tokens=level["verifier_tokens"],
                    verifier_cost_usd=level["verifier_cost_usd"],
                    verifier_errors=level["verifier_errors"],
                )
            )
    return rows


StrategyColumn = Literal[
    "group",
    "strategy",
    "budget",
    "k_star",
    "plateau_budget",
    "at_plateau",
    "n",
    "accuracy",
    "accuracy_low",
    "accuracy_high",
    "accuracy_interval",
    "n_eff",
    "tokens_per_trajectory",
    "cost_usd",
    "summaries",
    "verifier_calls",
    "verifier_tokens",
    "verifier_cost_usd",
    "verifier_errors",
]
STRATEGY_CSV: tuple[StrategyColumn, ...] = get_args(StrategyColumn)
STRATEGY_COLUMNS = (
    "strategy",
    "budget",
    "accuracy [95% Wilson; n_eff if clustered]",
    "k*",
    "tokens / trajectory",
    "cost",
    "summaries",
    "verifier calls · tokens · cost · errors",
)


def strategies_csv(comparison: StrategyComparison) -> tuple[list[str], list[list[CsvCell]]]:
    """One row per (strategy, level), its `STRATEGY_CSV` fields."""
    return list(STRATEGY_CSV), [[row[h] for h in STRATEGY_CSV] for row in comparison_rows(comparison)]


def _count(n: float | None) -> str:
    """A token count; `—` when not measured (a scripted agent or verifier calls no model), never 0."""
    return NOT_MEASURED if n is None else f"{n:,.0f}"


def strategy_cells(row: ComparisonRow) -> list[str]:
    """One (strategy, level) row as table cells; the plateau level is starred."""
    low, high = row["accuracy_low"], row["accuracy_high"]
    acc = "—" if row["accuracy"] is None else f"{row['accuracy']:.3f} [{low:.3f}, {high:.3f}]"
    if row["accuracy"] is not None and row.get("accuracy_interval") == "wilson, clustered by item":
        acc += f" n_eff {row['n_eff']:.1f}"  # replicates of one item: Wilson at the effective n
    cost = "—" if row["cost_usd"] is None else f"${row['cost_usd']:.4f}"
    vcost = "—" if row["verifier_cost_usd"] is None else f"${row['verifier_cost_usd']:.4f}"
    verifier = (
        f"{row['verifier_calls']} · {_count(row['verifier_tokens'])} · {vcost} · {row['verifier_errors']}"
        if row["strategy"].startswith("verifier")
        else ""
    )
    return [
        row["strategy"],
        str(row["budget"]),
        acc,
        "★" if row["at_plateau"] else "",
        _count(row["tokens_per_trajectory"]),
        cost,
        str(row["summaries"]) if row["strategy"] == "summarize" else "",
        verifier,
    ]


def strategy_summary(comparison: StrategyComparison) -> list[str]:
    """One line per strategy: its plateau, as the study's Table 14 reads (k*, the plateau budget, the flags); then what
    differs between the groups besides the strategy (their grids, their seeds)."""
    lines = []
    for s in comparison["studies"]:
        flag = (
            " (censored: no plateau within the grid)"
            if s.get("censored")
            else (" (no significant gain)" if s.get("no_significant_gain") else "")
        )
        lines.append(f"{s['strategy']} ({s['group']}): k* = {s['k_star']} → {s['plateau_budget']}{flag}, n = {s['n']}")
    lines += [f"not like for like: {d}" for d in comparison.get("differences") or []]
    return lines


JUDGE_COLUMNS = (
    "judge",
    "role",
    "verdicts (unparsed)",
    "pairwise (unparsed)",
    "TPR",
    "FPR",
    "precision",
    "accuracy",
    "self-choice (study)",
)
JUDGE_NOTE = (
    "judges against the truth over every stored pointwise verdict: TPR = accepted correct / correct, "
    "FPR = accepted wrong / wrong, precision = correct / accepted, accuracy over parsed verdicts (unparsed: "
    "missing, not Wrong; unparsed pairwise verdicts keep the leader in bump sort, counted); self-choice "
    "(study, main text) = accepted correct / correct samples, a recall beside the committed accuracy "
    "(pointwise) it is not"
)


def _rate(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def judge_cells(j: JudgeJson) -> list[str]:
    """One judge's quality row (`stats.judges.judge_quality` with its name and role)."""
    return [
        j["judge"],
        j["role"],
        f"{j['parsed']} ({j['unparsed']})",
        f"{j.get('pairwise', 0) - j.get('pairwise_unparsed', 0)} ({j.get('pairwise_unparsed', 0)})",
        _rate(j["tpr"]),
        _rate(j["fpr"]),
        _rate(j["precision"]),
        _rate(j["accuracy"]),
        _rate(j["self_choice"]),
    ]


SELF_CHOICE_COLUMNS = ("k", "committed (pointwise)", "self-choice (study)", "accepted coverage (study's best@k)")


def self_choice_cells(row: KRowJson) -> list[str]:
    """The study's main-text self-choice beside the committed accuracy we report, at one k, each labelled."""
    return [
        str(row["k"]),
        _rate(row.get("pointwise")),
        _rate(row.get("self_choice")),
        _rate(row.get("accepted_coverage")),
    ]


TRIAL_COLUMNS = (
    "k",
    "pointwise mean ± std",
    "gap pointwise mean ± std",
    "pairwise mean ± std",
    "gap pairwise mean ± std",
    "pointwise per trial",
)


def _spread(s: TrialSpread) -> str:
    return f"{s['mean']:.4f} ± {s['std']:.4f}"


def trial_cells(row: TrialRow) -> list[str]:
    """One k over the judge's trials (the study's Table 6: per-trial accuracy and the std across trials)."""
    return [
        str(row["k"]),
        _spread(row["pointwise"]),
        _spread(row["gap_pointwise"]),
        _spread(row["pairwise"]),
        _spread(row["gap_pairwise"]),
        " / ".join(f"{v:.4f}" for v in row["pointwise"]["values"]),
    ]


def agreement_text(trials: JudgeTrials) -> str:
    """How often the judge's trials agreed on a verdict, over all samples and item by item."""
    a = trials["agreement"]
    per_item = [p["unanimous"] for p in trials["per_item"] if p["unanimous"] is not None]
    worst = min(per_item) if per_item else None
    return (
        f"{trials['trials']} trials of the judge: verdicts unanimous on {_rate(a['unanimous'])} of "
        f"{a['samples']} samples, trial pairs agree on {_rate(a['pairwise'])}; per item, unanimous share "
        f"from {_rate(worst)}"
        + (f"; {trials['verdicts_missing']} verdicts not stored" if trials["verdicts_missing"] else "")
        + " (std over trials: population, as the study's Table 6)"
    )


def strategy_note(result: Plateau) -> str | None:
    """A group's strategy and, per level, what the strategy itself did and spent (summaries; the verifier's calls,
    tokens, cost and failures, apart from the agent's): None for the original rule (nothing to add)."""
    strategy = result.get("strategy")
    if strategy in (None, "continue", "cap"):
        return None
    parts = []
    for level in result.get("levels") or []:
        if strategy == "summarize":
            parts.append(f"{level['budget']}: {level.get('summaries', 0)} summaries")
        else:
            usd = level.get("verifier_cost_usd")
            parts.append(
                f"{level['budget']}: {level.get('verifier_calls', 0)} calls, "
                f"{_count(level.get('verifier_tokens'))} tokens, {'—' if usd is None else f'${usd:.4f}'}, "
                f"{level.get('verifier_errors', 0)} failed"
            )
    head = (
        "summarize strategy (summaries replace the history)"
        if strategy == "summarize"
        else (f"{strategy} strategy · the verifier's spend, not charged to the agent")
    )
    return f"{head} · " + "; ".join(parts)


def export_text(
    kind: str, result: Plateau | StrategyComparison | ToolsReport | ParallelReport, fmt: Literal["csv", "json"]
) -> str:
    """A scaling result shown by a front end, as the file its export writes: JSON (everything), or CSV (the CLI's
    `--format csv` table of the result's `kind`, one row per transition, level or k)."""
    import csv
    import io
    import json

    if fmt == "json":
        return json.dumps(result, indent=2, sort_keys=True) + "\n"
    rows: list[list[CsvCell]]
    if kind == "tools":
        from workbench.views.general import REGISTRY_HEADER, registry_rows

        header, rows = list(REGISTRY_HEADER), [list(r) for r in registry_rows(cast(ToolsReport, result))]
    else:
        header, rows = (
            transition_csv(cast(Plateau, result))
            if kind == "sequential"
            else strategies_csv(cast(StrategyComparison, result))
            if kind == "strategies"
            else parallel_csv(cast(ParallelReport, result))
        )
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()
