"""A run's report as rows of text cells (the batch table, the TUI's diagnostics) and as tidy rows of numbers."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Literal

from rich.console import Group
from rich.table import Table
from rich.text import Text

from workbench.service.records.ratio import Pair
from workbench.service.records.report import (
    Analytics,
    ByType,
    Interval,
    ReportCounts,
    ResourceAxis,
    RunReport,
    Stopping,
)
from workbench.views.cells import NOT_MEASURED, counted, dataset_cell, frac, num, pct, points

if TYPE_CHECKING:  # stats' record types by name only: the views load no numpy for them
    from stats.ngrams import BigramDelta, TopTrigram, TransitionMatrix
    from stats.stopping import EvidenceGroup

Row5 = tuple[str, str, str, str, str]  # (section, metric, ST, MT, all)


def _cell(v: float | None, n: Any) -> str:
    """A share with its counts: `50.0% (3/6)`."""
    return f"{pct(v)} ({frac(n)})"


def report_rows(report: RunReport) -> list[Row5]:
    """The four axes as (axis, metric, ST, MT, all) text cells, shared by the table, CSV and Markdown."""
    a, c = report["axes"], report["counts"]
    search, synthesis, searched, synthesised = a["search"], a["synthesis"], c["search"], c["synthesis"]
    rows: list[Row5] = [
        ("outcome", "accuracy", *_by_type(report["accuracy_by_type"], c["accuracy_by_type"])),
        ("search", "paper recall", *_by_type(search["paper_recall"], searched["paper_recall"])),
        ("search", "section recall", *_by_type(search["section_recall"], searched["section_recall"])),
        ("synthesis", "conversion", *_by_type(synthesis["conversion"], synthesised["conversion"])),
        ("tool use", "calls per turn", "", "", num(a["tool_use"]["calls_per_turn"])),
    ]
    rows += _resource_axis_rows(a["resource"], c["resource"])
    split_counts = c["splits"]["type_depth"]
    for k, v in report["splits"]["type_depth"].items():
        rows.append(("split", f"accuracy {k}", "", "", _cell(v, split_counts[k]) if k in split_counts else pct(v)))
    att = report["attribution"]
    for k, count in att["counts"].items():
        rows.append(("wrong answers", k, "", "", f"{count}/{att['n_wrong']}"))
    return rows + _interval_rows(report.get("intervals") or {})


# an interval's measure in words: the key's (`paper_recall` → paper recall), but for conversion given section recall
CI_LABELS = {"conversion_section": "conversion, section recall"}


def _interval_rows(intervals: Mapping[str, Interval | None]) -> list[Row5]:
    """The 95% intervals, one row per measure, each in the column of its own items (`paper_recall.mt` under MT; a
    key without a type is the whole run's), the method (Wilson or bootstrap) in the section cell."""
    by_measure: dict[str, dict[str, Interval]] = {}
    for key, iv in intervals.items():
        if iv:  # None: not measured (a scripted agent's tokens), no interval
            measure, _, kind = key.partition(".")
            by_measure.setdefault(measure, {})[kind or "all"] = iv
    rows: list[Row5] = []
    for measure, ivs in by_measure.items():
        method = (ivs.get("all") or next(iter(ivs.values()))).get("method") or "bootstrap"
        # "95% Wilson" or "95% bootstrap": how either is clustered by item is the JSON's `method`; the cell's n says it
        section = f"95% {'Wilson' if method.startswith('wilson') else 'bootstrap'}"
        st, mt, whole = (interval_text(measure, ivs[k]) if k in ivs else "" for k in ("st", "mt", "all"))
        rows.append((section, CI_LABELS.get(measure, measure.replace("_", " ")), st, mt, whole))
    return rows


def _by_type(values: ByType[float | None], counts: ByType[Pair]) -> tuple[str, str, str]:
    """The ST, MT and all cells of one measure: `50.0% (3/6)`."""
    return _cell(values["st"], counts["st"]), _cell(values["mt"], counts["mt"]), _cell(values["all"], counts["all"])


def _resource_axis_rows(r: ResourceAxis[float | None], c: ResourceAxis[Pair]) -> list[Row5]:
    """The resource axis of the core table: mean tokens (and as sent, cache reads included), turns, points, and
    the three cap rates."""
    rows: list[Row5] = [("resources", "avg tokens", "", "", num(r["avg_tokens"], 0))]
    if r["avg_prompt_tokens"] is not None:  # beside the protocol's count: what was sent, cache reads included
        rows.append(("", "avg prompt tokens incl. cache reads", "", "", num(r["avg_prompt_tokens"], 0)))
    rows.append(("", "avg turns", "", "", num(r["avg_turns"])))
    rows.append(("", "avg points", "", "", num(r["avg_points"])))
    rows.append(("", "max tokens", "", "", _cell(r["max_tokens_rate"], c["max_tokens_rate"])))
    rows.append(("", "max turns", "", "", _cell(r["max_turns_rate"], c["max_turns_rate"])))
    rows.append(("", "max budget", "", "", _cell(r["max_budget_rate"], c["max_budget_rate"])))
    return rows


MEAN_KEYS = ("calls_per_turn", "avg_tokens", "avg_turns", "avg_points")


def interval_text(measure: str, iv: Interval) -> str:
    """'94.0% – 100.0% (n=60)': the bounds and the interval's own n (its items, and its trajectories when
    replicates make them differ); a bootstrap that could not vary says so instead of [x, x]. The method is the
    row's (`_interval_rows`)."""
    fmt = (lambda v: num(v, 0 if measure == "avg_tokens" else 2)) if measure in MEAN_KEYS else pct
    n = f"n={iv['n']:,}"
    if iv.get("n_trajectories") not in (None, iv["n"]):
        n += f" items, {counted(iv['n_trajectories'], 'trajectory', 'trajectories')}"
    if iv.get("no_variation"):
        return f"no variation: {fmt(iv['low'])} ({n})"
    return f"{fmt(iv['low'])} – {fmt(iv['high'])} ({n})"


def _share(pair: list | None) -> str:
    """A [num, den] pair as "12.5% (3/24)"."""
    return "—" if not pair else f"{pct(pair[0] / pair[1] if pair[1] else None)} ({frac(pair)})"


def _arrow(names: list[str]) -> str:
    return " → ".join(names)


def detail_rows(report: RunReport, full: bool = True) -> list[tuple[str, str, str, str, str]]:
    """Everything of the report beyond the core axes, as (section, metric, ST, MT, all) text cells: the looser and
    stricter recall variants, conversion on section recall, the ceiling, splits with counts, position bias, and
    the trajectory analytics (bigrams — all occurring ones when `full`, else the significant ones —, top trigram,
    transitions, stopping behaviour) and the reference evaluator's numbers. Shared by the table, CSV and Markdown.
    """
    from workbench.views.general import general_rows

    rows = _variant_rows(report) + _ceiling_rows(report) + _resource_rows(report) + _split_rows(report)
    rows += _bias_rows(report)
    rows += hop_rows(report)
    rows += general_rows(report)  # the general-agent setting (none for a plain run)
    an = report.get("analytics")
    if an:
        rows += analytics_rows(an, full)
    return rows + _reference_rows(report)


def _variant_rows(report: RunReport) -> list[Row5]:
    """The looser and stricter recall variants and conversion on section recall, by question type."""
    search, searched = report["axes"]["search"], report["counts"]["search"]
    conversion, converted = report["axes"]["synthesis"]["conversion_section"], report["counts"]["synthesis"]
    return [
        ("search", "paper recall, any gold", *_by_type(search["paper_recall_any"], searched["paper_recall_any"])),
        (
            "search",
            "section recall, any gold",
            *_by_type(search["section_recall_any"], searched["section_recall_any"]),
        ),
        (
            "search",
            "section recall, direct or supporting",
            *_by_type(search["section_recall_loose"], searched["section_recall_loose"]),
        ),
        ("synthesis", "conversion given section recall", *_by_type(conversion, converted["conversion_section"])),
    ]


def _ceiling_rows(report: RunReport) -> list[Row5]:
    """The section-recall ceiling and how many trajectories could not reach a labelled section."""
    ceiling, n = report["section_recall_ceiling"], report["counts"]["section_recall_ceiling"]
    st, mt, every = _cell(ceiling["st"], n["st"]), _cell(ceiling["mt"], n["mt"]), _cell(ceiling["all"], n["all"])
    unreachable = f"{ceiling['unreachable']}" + (f" (+{ceiling['unknown']} unknown)" if ceiling["unknown"] else "")
    return [
        ("search", "section recall ceiling", st, mt, every),
        ("search", "items' trajectories, SR unreachable", "", "", unreachable),
    ]


def _resource_rows(report: RunReport) -> list[Row5]:
    """Error and non-submission rates, the cache-hit rate, replies the completion limit cut off."""
    r, counts = report["axes"]["resource"], report["counts"]["resource"]
    rows: list[Row5] = [
        ("resources", "error rate (ended in error)", "", "", _cell(r["error_rate"], counts["error_rate"])),
        ("resources", "episodes with an API error", "", "", _cell(r["api_error_rate"], counts["api_error_rate"])),
        ("resources", "non-submission rate", "", "", _cell(r["non_submission_rate"], counts["non_submission_rate"])),
    ]
    if r["cache_hit_rate"] is not None:
        hits = _cell(r["cache_hit_rate"], counts["cache_hit_rate"])
        rows.append(("resources", "cache hit rate (cache reads ÷ prompt tokens)", "", "", hits))
    cut = report["cut_off"]
    lost = f"{cut['turns']} in {cut['trajectories']} trajectories · {cut['calls_lost']} calls lost"
    rows.append(("resources", "replies cut off (finish_reason length)", "", "", lost))
    return rows


def _split_rows(report: RunReport) -> list[Row5]:
    """Accuracy by type × depth, reasoning type, consensus tier and venue, with counts."""
    splits, counts = report["splits"], report["counts"]["splits"]
    rows: list[Row5] = []
    for label, shares, counted_by in (
        ("type × depth", splits["type_depth"], counts["type_depth"]),
        ("reasoning", splits["reasoning_type"], counts["reasoning_type"]),
        ("consensus tier", splits["consensus_tier"], counts["consensus_tier"]),
        ("venue", splits["venue"], counts["venue"]),
    ):
        rows += [(f"split · {label}", key, "", "", _cell(v, counted_by.get(key))) for key, v in shares.items()]
    return rows


def _bias_rows(report: RunReport) -> list[Row5]:
    """Position bias: the letters predicted, where the gold answers sit, accuracy by the gold's letter."""
    bias = report.get("position_bias")
    if not bias:
        return []
    predicted = " · ".join(f"{k} {v}" for k, v in bias["predicted_distribution"].items())
    gold = " · ".join(f"{k} {v}" for k, v in bias["correct_position_distribution"].items())
    rows: list[Row5] = [
        ("position bias", "predicted letters", "", "", predicted),
        ("position bias", "gold letters", "", "", gold),
    ]
    for letter, pair in bias["accuracy_when_correct_at"].items():
        rows.append(("position bias", f"accuracy, gold at {letter}", "", "", _share(pair)))
    return rows


def _reference_rows(report: RunReport) -> list[Row5]:
    """The reference evaluator's numbers, as it wrote them."""
    ref = report.get("reference") or {}
    return [
        ("reference", key, "", "", value if isinstance(value, str) else json.dumps(value))
        for key, value in ref.items()
        if key != "schema_version"
    ]


HOP_LABELS = {
    "0": "hop 0 (the seed)",
    "1": "hop 1",
    "2": "hop 2",
    "3+": "hop 3 or more",
    "unreachable": "unreachable (no citation path)",
}


def read_hop_text(hop: int | None, measured: bool = True) -> str:
    """A read's hop from the seed as a transcript shows it: `hop 2`, `unreachable` (no citation path), or
    `hop —` in a run whose hops were never measured."""
    if not measured:
        return f"hop {NOT_MEASURED}"
    return "unreachable" if hop is None else f"hop {hop}"


def hop_cells(report: RunReport) -> list[tuple[str, str]]:
    """The reads by hop from the seed as (label, value) cells: each bucket's count and share, gold and non-gold
    reads' mean hop, the share beyond the item's depth; one "—" cell for a run whose hops were never measured,
    none for a report without them."""
    hops = report.get("read_hops")
    if not hops:
        return []
    by_hop, mean_hop, counts = hops["by_hop"], hops["mean_hop"], hops["counts"]
    if not hops["measured"] or by_hop is None or mean_hop is None or counts is None:  # all None when not measured
        return [
            (
                "hop from the seed",
                f"{NOT_MEASURED} (not measured: {counted(hops['reads'], 'read')} stored before "
                "hops were recorded; `report` measures them from the run's dataset when it "
                "can be opened)",
            )
        ]
    n = hops["reads"]
    cells = [(HOP_LABELS[k], f"{v} ({pct(v / n if n else None)})") for k, v in by_hop.items()]
    cells.append(_mean_hop_cell("mean hop, gold reads", mean_hop["gold"], counts["mean_hop"]["gold"]))
    cells.append(_mean_hop_cell("mean hop, non-gold reads", mean_hop["non_gold"], counts["mean_hop"]["non_gold"]))
    cells.append(("beyond the item's depth", f"{pct(hops['beyond_depth'])} ({frac(counts['beyond_depth'])})"))
    return cells


def _mean_hop_cell(label: str, mean: float | None, counted_pair: Pair) -> tuple[str, str]:
    """One side's mean hop, over its reachable reads (the pair's second figure)."""
    return label, f"{num(mean)} (over {counted(int(counted_pair[1]), 'reachable read')})"


def hop_rows(report: RunReport) -> list[tuple[str, str, str, str, str]]:
    """`hop_cells` as report rows (section `reads by hop`)."""
    return [("reads by hop", label, "", "", value) for label, value in hop_cells(report)]


def hop_table(report: RunReport) -> Table:
    """`hop_cells` as a small table (the TUI's diagnostics tab)."""
    hops = report.get("read_hops")
    table = Table(
        title=Text(f"Reads by hop from the seed ({counted(hops['reads'] if hops else 0, 'read')})"),
        title_justify="left",
        expand=False,
        show_edge=False,
        pad_edge=False,
    )
    table.add_column("hop")
    table.add_column("reads", justify="right")
    for label, value in hop_cells(report):
        table.add_row(Text(label), Text(value))
    return table


def analytics_rows(an: Analytics, full: bool) -> list[tuple[str, str, str, str, str]]:
    """Bigrams, top trigram, transitions (non-zero cells) and the stopping tables as report rows."""
    rows = trigram_rows(an["top_trigram"]) + [_bigram_row(b) for b in an["bigrams" if full else "significant_bigrams"]]
    if full:
        rows += _transition_rows(an["transitions"])
    return rows + stopping_rows(an["stopping"])


def _bigram_row(b: BigramDelta) -> Row5:
    """One bigram's Δ accuracy, the accuracies with and without it, Fisher's p and its Bonferroni adjustment."""
    return (
        "bigram Δacc",
        _arrow(b["bigram"]),
        "",
        "",
        f"{points(b['delta'])} (with {frac(b['accuracy_with'])}, without "
        f"{frac(b['accuracy_without'])}; p {b['p']:.3g}, Bonferroni {b['p_bonferroni']:.3g}"
        f"{', significant' if b['significant'] else ''})",
    )


def _transition_rows(tm: TransitionMatrix) -> list[Row5]:
    """The transition matrix's non-zero cells: count and share of the row."""
    return [
        ("transitions", f"{name} → {nxt}", "", "", f"{count} ({pct(prob)} of the row)")
        for name, row, probs in zip(tm["tools"], tm["counts"], tm["probabilities"], strict=True)
        for nxt, count, prob in zip(tm["tools"], row, probs, strict=True)
        if count
    ]


def stopping_rows(stop: Stopping) -> list[Row5]:
    """The stopping tables (`stats.stopping.stopping_behaviour`) as report rows: MT failures, what follows the
    evidence and a wrong read, early submits, non-submission."""
    rows: list[Row5] = []
    mt = stop["mt_fail"]
    rows.append(("stopping · MT-fail", "n (paper recall failed)", "", f"{mt['n']} of {mt.get('n_mt', '?')} MT", ""))
    for k, pair in mt["shares"].items():
        rows.append(("stopping · MT-fail", k, "", _share(pair), ""))
    if "all_gold_wrong" in mt:
        rows.append(
            ("stopping", "all golds read, wrong (not in MT-fail)", "", _share(mt["all_gold_wrong"]["share"]), "")
        )
    ev = stop["after_evidence"]
    for k in ev["st"]["shares"]:
        rows.append(
            ("stopping · after evidence", k, _share(ev["st"]["shares"][k]), _share(ev["mt_both"]["shares"][k]), "")
        )
    for k in ev["st"].get("left_out", {}):
        rows.append(
            (
                "stopping · after evidence",
                f"left out: {k}",
                str(ev["st"]["left_out"][k]),
                str(ev["mt_both"]["left_out"][k]),
                "",
            )
        )
    wrong = stop["after_wrong_read"]
    for k, pair in wrong["shares"].items():
        rows.append(("stopping · after wrong read", k, "", "", _share(pair)))
    early = stop["early_submit"]
    rows.append(
        (
            "stopping",
            f"early submit (≤ {early['window']} actions after a wrong read)",
            "",
            "",
            f"{_share(early['share'])}; accuracy {_share(early['accuracy'])}",
        )
    )
    if "delta" in early:
        rows.append(
            (
                "stopping",
                "early submit Δacc (early − other wrong-read trajectories)",
                "",
                "",
                f"{points(early['delta'])} (other {_share(early['accuracy_non_early'])}; Fisher p {early['p']:.3g})",
            )
        )
    for k, pair in stop["non_submission"]["shares"].items():
        rows.append(("stopping · non-submission", k, "", "", _share(pair)))
    return rows


def trigram_rows(top: TopTrigram | None) -> list[tuple[str, str, str, str, str]]:
    """The top trigram (by occurrences) with its concentration, and the most widespread one, labelled."""
    if not top:
        return []
    rows = [
        (
            "tool use",
            "top trigram (by occurrences)",
            "",
            "",
            f"{_arrow(top['trigram'])}: concentration "
            f"{_share(top['occurrence_share'])} of trigram occurrences; in {_share(top['trajectory_share'])} "
            "trajectories",
        )
    ]
    wide = top.get("by_trajectories")
    if wide:
        rows.append(
            (
                "tool use",
                "most widespread trigram (by trajectories)",
                "",
                "",
                f"{_arrow(wide['trigram'])}: in {_share(wide['trajectory_share'])} trajectories; "
                f"{_share(wide['occurrence_share'])} of trigram occurrences",
            )
        )
    return rows


def trigram_line(top: TopTrigram | None) -> str:
    """One line: the top trigram by occurrences and its concentration (the compare screens and analytics lines)."""
    if not top:
        return "top trigram: none (no trajectory made three calls)"
    share = top["occurrence_share"]
    return (
        f"top trigram: {_arrow(top['trigram'])} · {share[0]}/{share[1]} trigram occurrences "
        f"({pct(share[0] / share[1] if share[1] else None)}), in {top['trajectory_share'][0]}/"
        f"{top['trajectory_share'][1]} trajectories"
    )


def transition_table(tm: TransitionMatrix) -> Table:
    """The 7×7 matrix: count and row share per cell (row = tool called, column = the next call)."""
    short = {
        "get_paper_info": "info",
        "get_references": "refs",
        "search_papers": "search",
        "list_sections": "list",
        "read_section": "read",
        "think": "think",
        "submit_answer": "submit",
    }
    table = Table(title="tool transitions (row → next call): count (row share)", title_justify="left")
    table.add_column("from")
    for name in tm["tools"]:
        table.add_column(short.get(name, name), justify="right")
    for name, row, probs in zip(tm["tools"], tm["counts"], tm["probabilities"], strict=True):
        table.add_row(
            Text(short.get(name, name)),
            *(Text(f"{n} ({100 * p:.0f}%)" if n else "·") for n, p in zip(row, probs, strict=True)),
        )
    return table


def legend_lines(legend: dict[str, str] | None) -> list[str]:
    return [f"{key}: {text}" for key, text in (legend or {}).items()]


def _cost_note(report: RunReport) -> str:
    """The run's cost; `unpriced` for a model run with no prices (never a silent blank)."""
    if report.get("cost_usd") is not None:
        return f" · cost ${report['cost_usd']:.4f}"
    return " · cost unpriced" if report.get("model") else ""


def error_kinds_note(report: RunReport) -> str:
    """' · error kinds: context_overflow 2, api_errors_at_cap 1' (why episodes ended in error, or met failed calls
    at the turn cap), '' when none has one; a report stored before the kinds were counted has none."""
    kinds = report.get("error_kinds") or {}
    return " · error kinds: " + ", ".join(f"{k} {v}" for k, v in kinds.items()) if kinds else ""


def completeness(report: RunReport) -> str:
    """' · interrupted · 6 of 60 planned' when the run is not done or holds fewer trajectories than it planned
    (every number above is then over a partial run), else ''."""
    status, planned, n = report.get("status"), report.get("planned"), report["n"]
    if status in (None, "done") and (not planned or n >= planned):
        return ""
    return f" · {status or 'partial'}" + (f" · {n} of {planned} planned" if planned else "")


def report_table(report: RunReport) -> Table:
    """The four axes as rows, ST / MT / all as columns, with counts beside each share."""
    table = Table(
        title=Text(
            f"{report['run']} · {report['agent']}{' ' + report['model'] if report['model'] else ''} · "
            f"{dataset_cell(report['dataset'], report.get('dataset_repo'), report.get('dataset_revision'))} · "
            f"n={report['n']}{completeness(report)}"
        ),
        title_justify="left",
    )
    for col in ("axis", "metric", "ST", "MT", "all"):
        table.add_column(col, justify="left" if col in ("axis", "metric") else "right")
    for row in report_rows(report):
        table.add_row(*map(Text, row))
    terms = " · ".join(f"{k} {v}" for k, v in report["terminations"].items())
    table.caption = Text(f"terminations: {terms}" + error_kinds_note(report) + _cost_note(report))
    table.caption_justify = "left"
    return table


def report_block(report: RunReport) -> Group:
    """`report_table` with its title above and its terminations line below as lines of their own: as the table's
    title and caption they wrapped to its width (about 80 cells) on any terminal, and when piped."""
    table = report_table(report)
    title, caption = table.title, table.caption
    table.title = table.caption = None
    return Group(*(part for part in (title, table, caption) if part is not None))


def _ngram_lines(an: Analytics) -> list[str]:
    """The top trigram (and the most widespread one), and each significant bigram with its Δ accuracy."""
    lines = []
    top = an["top_trigram"]
    if top:
        lines.append(trigram_line(top))
        wide = top.get("by_trajectories")
        if wide:
            share = wide["trajectory_share"]
            lines.append(f"most widespread trigram: {_arrow(wide['trigram'])} in {share[0]}/{share[1]} trajectories")
    for b in an["significant_bigrams"]:
        if b["delta"] is None:  # untested (no trajectory with or without it): never significant
            continue
        lines.append(
            f"bigram {' → '.join(b['bigram'])}: Δacc {b['delta'] * 100:+.1f} pts "
            f"(p_bonf {b['p_bonferroni']:.3g}, n={b['n_with']})"
        )
    return lines


def analytics_lines(report: RunReport) -> list[str]:
    """Trajectory analytics in a few plain lines (the JSON has everything)."""
    an = report.get("analytics")
    if not an:
        return []
    return _ngram_lines(an) + _stopping_lines(an["stopping"])


def _evidence_line(group: str, g: EvidenceGroup) -> str:
    """What the trajectories of one group did after reading the evidence, with the endings left out."""
    shown = " · ".join(f"{k} {g['counts'][k]}" for k in g["shares"])
    left = " · ".join(f"{k} {v}" for k, v in g.get("left_out", {}).items())
    return f"after evidence ({group}, n={g['n']}): {shown}" + (f" (left out: {left})" if left else "")


def _stopping_lines(stop: Stopping) -> list[str]:
    """Stopping behaviour: what follows the evidence, MT failures, after a wrong read, non-submission, early
    submits."""
    lines = [_evidence_line(group, stop["after_evidence"][group]) for group in ("st", "mt_both")]
    mt = stop["mt_fail"]
    lines.append(
        "mt_fail: "
        + " · ".join(f"{k} {v}" for k, v in mt["counts"].items())
        + f" (n = {mt['n']} MT trajectories whose paper recall failed)"
        + (f"; all golds read but wrong, apart: {mt['all_gold_wrong']['n']}" if "all_gold_wrong" in mt else "")
    )
    for key, counts in (
        ("after_wrong_read", stop["after_wrong_read"]["counts"]),
        ("non_submission", stop["non_submission"]["counts"]),
    ):
        lines.append(f"{key}: " + (" · ".join(f"{k} {v}" for k, v in counts.items()) or "none"))
    early = stop["early_submit"]
    lines.append(
        f"early submit (≤ {early['window']} actions after a wrong-paper read): {frac(early['share']) or '0/0'}"
        + (f"; Δacc {points(early['delta'])} vs the others, Fisher p {early['p']:.3g}" if "delta" in early else "")
    )
    return lines


REPORT_HEADER = ("axis", "metric", "ST", "MT", "all")


TIDY_HEADER = ("run", "axis", "metric", "split", "value", "numerator", "denominator", "ci_low", "ci_high")


def _tidy(run: str, axis: str, metric: str, split: str, pair: list | None) -> list[Any]:
    """One CSV row of numbers: value = numerator ÷ denominator, empty when nothing was measured."""
    num, den = (pair or [None, None])[:2]
    value = num / den if num is not None and den else None
    return [
        run,
        axis,
        metric,
        split,
        "" if value is None else value,
        "" if num is None else num,
        "" if den is None else den,
    ]


def tidy_report_rows(report: RunReport) -> list[list[Any]]:
    """The report as numbers a program can read (one ratio per row, its numerator and denominator beside it,
    the 95% interval when asked for), as `scale … --format csv` does; the table's text cells stay the table's."""
    rows = _tidy_ratio_rows(report["run"], report["counts"]) + _tidy_count_rows(report)
    intervals = {tuple(([*k.split("."), "all"])[:2]): iv for k, iv in (report.get("intervals") or {}).items() if iv}
    for row in rows:
        iv = intervals.get((row[2], row[3])) if row[1] != "split" else None
        row.extend(["", ""] if iv is None else [iv["low"], iv["high"]])
    return rows


def _tidy_count_rows(report: RunReport) -> list[list[Any]]:
    """The tidy rows of the report's counts: each ending and error kind over all trajectories, each option type
    chosen over the wrong answers."""
    run, att = report["run"], report["attribution"]
    ended = sum(report["terminations"].values())
    rows = [_tidy(run, "terminations", k, "all", [v, ended]) for k, v in report["terminations"].items()]
    rows += [_tidy(run, "error_kinds", k, "all", [v, ended]) for k, v in report["error_kinds"].items()]
    return rows + [_tidy(run, "attribution", k, "all", [v, att["n_wrong"]]) for k, v in att["counts"].items()]


def _tidy_ratio_rows(run: str, c: ReportCounts) -> list[list[Any]]:
    """The tidy rows of the report's counted ratios: accuracy by type, the four axes, the ceiling, the splits."""
    by_type, ceiling, splits = c["accuracy_by_type"], c["section_recall_ceiling"], c["splits"]
    rows = [_tidy(run, "accuracy", "accuracy", k, by_type[k]) for k in BY_TYPE]
    for axis, measures in (
        ("search", c["search"]),
        ("synthesis", c["synthesis"]),
        ("tool_use", c["tool_use"]),
        ("resource", c["resource"]),
    ):
        rows += [_tidy(run, axis, metric, split, pair) for metric, split, pair in _leaves(measures)]
    rows += [_tidy(run, "search", "section_recall_ceiling", k, ceiling[k]) for k in BY_TYPE]
    for kind, by_value in (
        ("type_depth", splits["type_depth"]),
        ("reasoning_type", splits["reasoning_type"]),
        ("consensus_tier", splits["consensus_tier"]),
        ("venue", splits["venue"]),
    ):
        rows += [_tidy(run, "split", kind, k, v) for k, v in by_value.items()]
    return rows


BY_TYPE: tuple[Literal["st"], Literal["mt"], Literal["all"]] = ("st", "mt", "all")


def _leaves(measures: Mapping[str, object]) -> Iterator[tuple[str, str, Pair]]:
    """An axis's counted ratios as (metric, split, pair): a measure by question type gives its ST, MT and all
    pairs, a measure over all trajectories its one pair (split `all`)."""
    for metric, leaf in measures.items():
        if isinstance(leaf, dict):
            yield from ((metric, split, pair) for split, pair in leaf.items())
        elif isinstance(leaf, list):
            yield metric, "all", leaf


def label_lines(report: RunReport) -> list[str]:
    """Which label rules section recall was computed under, how many labels resolved to no section and which
    items' section recall that caps (docs/protocol.md#section-labels: unresolvable labels are reported, not
    dropped)."""
    res = report["label_resolution"]
    line = f"section recall computed under label resolution {res['version']}"
    if res["version"] != res["current"]:
        line += (
            f" (the current rules are version {res['current']}: the run's dataset could not be opened to "
            f"recompute it, so do not compare it with runs under version {res['current']})"
        )
    labels = report.get("section_labels")
    if labels is None:
        return [line]
    if labels["unresolved"] is not None:
        line += (
            f"; {labels['unresolved']} label(s) of its items resolved to no section "
            f"({labels['unresolved_direct']} direct)"
        )
    capped = labels["capped_items"]
    shown = ", ".join(capped[:10]) + (f" … (+{len(capped) - 10})" if len(capped) > 10 else "")
    line += f"; section recall capped on {len(capped)} item(s)" + (f": {shown}" if capped else "")
    return [line]
