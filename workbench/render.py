"""Rendering reports for the terminal (rich tables) or as JSON on stdout."""
from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from sandbox.datasets import dataset_label


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`1 paper`, `0 papers`, `2 papers`: a count with its noun in the right number (`plural` when not noun + s)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _frac(counts: list | None) -> str:
    return "" if not counts else f"{counts[0]:g}/{counts[1]}"


def console() -> Console:
    """stdout; wide when it is not a terminal, so piped tables are not squeezed to 80 columns."""
    return Console(file=sys.stdout, highlight=False, soft_wrap=False, width=None if sys.stdout.isatty() else 200)


def _color() -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    import os

    return sys.stdout.isatty() and not os.environ.get("NO_COLOR")


def print_json(obj: Any, strict: bool = False) -> None:
    """JSON on stdout. `strict` refuses non-JSON types (a numpy bool would otherwise print as the truthy
    string "False"): the scaling outputs are plain Python by construction, so a stray type is our bug."""
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=None if strict else str) + "\n")


def report_rows(report: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """The four axes as (axis, metric, ST, MT, all) text cells, shared by the table, CSV and Markdown."""
    a, c = report["axes"], report["counts"]
    if "accuracy_by_type" in report:
        rows = [("", "accuracy", *(f"{_pct(report['accuracy_by_type'][k])} ({_frac(c['accuracy_by_type'][k])})"
                                   for k in ("st", "mt", "all")))]
    else:  # a report stored before the split
        rows = [("", "accuracy", "", "", f"{_pct(report['accuracy'])} ({_frac(c['accuracy'])})")]
    for axis, metric, label in (("search", "paper_recall", "paper recall"), ("search", "section_recall", "section recall"),
                                ("synthesis", "conversion", "conversion")):
        v, n = a[axis][metric], c[axis][metric]
        rows.append((axis, label, *(f"{_pct(v[k])} ({_frac(n[k])})" for k in ("st", "mt", "all"))))
    rows.append(("tool use", "calls per turn", "", "", _num(a["tool_use"]["calls_per_turn"])))
    r = a["resource"]
    rows.append(("resource", "avg tokens", "", "", _num(r["avg_tokens"], 0)))
    rows.append(("", "avg turns", "", "", _num(r["avg_turns"])))
    rows.append(("", "avg points", "", "", _num(r["avg_points"])))
    for key, label in (("max_tokens_rate", "max tokens"), ("max_turns_rate", "max turns"),
                       ("max_budget_rate", "max budget")):
        rows.append(("", label, "", "", f"{_pct(r[key])} ({_frac(c['resource'][key])})"))
    split_counts = c.get("splits", {}).get("type_depth", {})
    for k, v in report["splits"]["type_depth"].items():
        rows.append(("split", f"accuracy {k}", "", "", f"{_pct(v)} ({_frac(split_counts[k])})" if k in split_counts
                     else _pct(v)))
    att = report["attribution"]
    for k, v in att["counts"].items():
        rows.append(("wrong answers", k, "", "", f"{v}/{att['n_wrong']}"))
    if report.get("intervals"):
        for k, iv in report["intervals"].items():
            if iv:
                rows.append(("95% CI", k, "", "", interval_text(k, iv)))
    return rows


MEAN_KEYS = ("calls_per_turn", "avg_tokens", "avg_turns", "avg_points")


def interval_text(key: str, iv: dict[str, Any]) -> str:
    """'94.0% – 100.0% (n = 60 items; Wilson)': the bounds, the interval's own n (items, and trajectories when
    replicates make them differ), and the method; a bootstrap that could not vary says so instead of [x, x]."""
    fmt = (lambda v: _num(v, 0 if key == "avg_tokens" else 2)) if key in MEAN_KEYS else _pct
    n = f"n = {counted(iv['n'], 'item')}"
    if iv.get("n_trajectories") not in (None, iv["n"]):
        n += f", {counted(iv['n_trajectories'], 'trajectory', 'trajectories')}"
    method = iv.get("method") or "bootstrap"
    if iv.get("no_variation"):
        return f"no variation: every resample gives {fmt(iv['low'])} ({n}; {method})"
    return f"{fmt(iv['low'])} – {fmt(iv['high'])} ({n}; {method})"


def _share(pair: list | None) -> str:
    """A [num, den] pair as "12.5% (3/24)"."""
    return "—" if not pair else f"{_pct(pair[0] / pair[1] if pair[1] else None)} ({_frac(pair)})"


def _arrow(names: list[str]) -> str:
    return " → ".join(names)


def detail_rows(report: dict[str, Any], full: bool = True) -> list[tuple[str, str, str, str, str]]:
    """Everything of the report beyond the core axes, as (section, metric, ST, MT, all) text cells: the looser and
    stricter recall variants, conversion on section recall, the ceiling, splits with counts, position bias, and
    the trajectory analytics (bigrams — all occurring ones when `full`, else the significant ones —, top trigram,
    transitions, stopping behaviour) and the reference evaluator's numbers. Shared by the table, CSV and Markdown.
    """
    a, c = report["axes"], report["counts"]
    rows: list[tuple[str, str, str, str, str]] = []
    cell = lambda v, n: f"{_pct(v)} ({_frac(n)})"  # noqa: E731
    for axis, metric, label in (("search", "paper_recall_any", "paper recall, any gold"),
                                ("search", "section_recall_any", "section recall, any gold"),
                                ("search", "section_recall_loose", "section recall, direct or supporting"),
                                ("synthesis", "conversion_section", "conversion given section recall")):
        v, n = a[axis][metric], c[axis][metric]
        rows.append((axis, label, *(cell(v[k], n[k]) for k in ("st", "mt", "all"))))
    ceiling = report.get("section_recall_ceiling")
    if ceiling:
        n = c.get("section_recall_ceiling", {})
        rows.append(("search", "section recall ceiling", *(cell(ceiling.get(k), n.get(k)) for k in ("st", "mt", "all"))))
        rows.append(("search", "items' trajectories, SR unreachable", "", "", f"{ceiling['unreachable']}"
                     + (f" (+{ceiling['unknown']} unknown)" if ceiling.get("unknown") else "")))
    r = a["resource"]
    for key, label in (("error_rate", "error rate"), ("non_submission_rate", "non-submission rate")):
        rows.append(("resource", label, "", "", cell(r.get(key), c["resource"].get(key))))
    split_counts = c.get("splits", {})
    for split, label in (("type_depth", "type × depth"), ("reasoning_type", "reasoning"),
                         ("consensus_tier", "consensus tier"), ("venue", "venue")):
        for key, v in report["splits"].get(split, {}).items():
            rows.append((f"split · {label}", key, "", "", cell(v, split_counts.get(split, {}).get(key))))
    bias = report.get("position_bias")
    if bias:
        rows.append(("position bias", "predicted letters", "", "",
                     " · ".join(f"{k} {v}" for k, v in bias["predicted_distribution"].items())))
        rows.append(("position bias", "gold letters", "", "",
                     " · ".join(f"{k} {v}" for k, v in bias["correct_position_distribution"].items())))
        for letter, pair in bias["accuracy_when_correct_at"].items():
            rows.append(("position bias", f"accuracy, gold at {letter}", "", "", _share(pair)))
    an = report.get("analytics")
    if an:
        rows += analytics_rows(an, full)
    ref = report.get("reference")
    if ref:
        for key, value in ref.items():
            if key != "schema_version":
                rows.append(("reference", key, "", "", value if isinstance(value, str) else json.dumps(value)))
    return rows


def analytics_rows(an: dict[str, Any], full: bool) -> list[tuple[str, str, str, str, str]]:
    """Bigrams, top trigram, transitions (non-zero cells) and the stopping tables as report rows."""
    rows: list[tuple[str, str, str, str, str]] = []
    rows += trigram_rows(an.get("top_trigram"))
    for b in an["bigrams"] if full else an["significant_bigrams"]:
        delta = "—" if b["delta"] is None else f"{b['delta'] * 100:+.1f} pts"
        rows.append(("bigram Δacc", _arrow(b["bigram"]), "", "", f"{delta} (with {_frac(b['accuracy_with'])}, without "
                     f"{_frac(b['accuracy_without'])}; p {b['p']:.3g}, Bonferroni {b['p_bonferroni']:.3g}"
                     f"{', significant' if b['significant'] else ''})"))
    if full:
        tm = an["transitions"]
        for name, row, probs in zip(tm["tools"], tm["counts"], tm["probabilities"]):
            for nxt, count, prob in zip(tm["tools"], row, probs):
                if count:
                    rows.append(("transitions", f"{name} → {nxt}", "", "", f"{count} ({_pct(prob)} of the row)"))
    stop = an["stopping"]
    mt = stop["mt_fail"]
    rows.append(("stopping · MT-fail", "n (paper recall failed)", "", f"{mt['n']} of {mt.get('n_mt', '?')} MT", ""))
    for k, pair in mt["shares"].items():
        rows.append(("stopping · MT-fail", k, "", _share(pair), ""))
    if "all_gold_wrong" in mt:
        rows.append(("stopping", "all golds read, wrong (not in MT-fail)", "", _share(mt["all_gold_wrong"]["share"]), ""))
    ev = stop["after_evidence"]
    for k in ev["st"]["shares"]:
        rows.append(("stopping · after evidence", k, _share(ev["st"]["shares"][k]), _share(ev["mt_both"]["shares"][k]),
                     ""))
    for k in ev["st"].get("left_out", {}):
        rows.append(("stopping · after evidence", f"left out: {k}", str(ev["st"]["left_out"][k]),
                     str(ev["mt_both"]["left_out"][k]), ""))
    wrong = stop["after_wrong_read"]
    for k, pair in wrong["shares"].items():
        rows.append(("stopping · after wrong read", k, "", "", _share(pair)))
    early = stop["early_submit"]
    rows.append(("stopping", f"early submit (≤ {early['window']} actions after a wrong read)", "", "",
                 f"{_share(early['share'])}; accuracy {_share(early['accuracy'])}"))
    if "delta" in early:
        rows.append(("stopping", "early submit Δacc (early − other wrong-read trajectories)", "", "",
                     f"{_delta(early['delta'])} (other {_share(early['accuracy_non_early'])}; Fisher p "
                     f"{early['p']:.3g})"))
    for k, pair in stop["non_submission"]["shares"].items():
        rows.append(("stopping · non-submission", k, "", "", _share(pair)))
    return rows


def _delta(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:+.1f} pts"


def trigram_rows(top: dict[str, Any] | None) -> list[tuple[str, str, str, str, str]]:
    """The top trigram (by occurrences) with its concentration, and the most widespread one, labelled."""
    if not top:
        return []
    rows = [("tool use", "top trigram (by occurrences)", "", "", f"{_arrow(top['trigram'])}: concentration "
             f"{_share(top['occurrence_share'])} of trigram occurrences; in {_share(top['trajectory_share'])} "
             "trajectories")]
    wide = top.get("by_trajectories")
    if wide:
        rows.append(("tool use", "most widespread trigram (by trajectories)", "", "",
                     f"{_arrow(wide['trigram'])}: in {_share(wide['trajectory_share'])} trajectories; "
                     f"{_share(wide['occurrence_share'])} of trigram occurrences"))
    return rows


def trigram_line(top: dict[str, Any] | None) -> str:
    """One line: the top trigram by occurrences and its concentration (the compare screens and analytics lines)."""
    if not top:
        return "top trigram: none (no trajectory made three calls)"
    share = top["occurrence_share"]
    return (f"top trigram: {_arrow(top['trigram'])} · {share[0]}/{share[1]} trigram occurrences "
            f"({_pct(share[0] / share[1] if share[1] else None)}), in {top['trajectory_share'][0]}/"
            f"{top['trajectory_share'][1]} trajectories")


def transition_table(tm: dict[str, Any]) -> Table:
    """The 7×7 matrix: count and row share per cell (row = tool called, column = the next call)."""
    short = {"get_paper_info": "info", "get_references": "refs", "search_papers": "search", "list_sections": "list",
             "read_section": "read", "think": "think", "submit_answer": "submit"}
    table = Table(title="tool transitions (row → next call): count (row share)", title_justify="left")
    table.add_column("from")
    for name in tm["tools"]:
        table.add_column(short.get(name, name), justify="right")
    for name, row, probs in zip(tm["tools"], tm["counts"], tm["probabilities"]):
        table.add_row(Text(short.get(name, name)), *(Text(f"{n} ({100 * p:.0f}%)" if n else "·") for n, p in zip(row, probs)))
    return table


def legend_lines(legend: dict[str, str] | None) -> list[str]:
    return [f"{key}: {text}" for key, text in (legend or {}).items()]


def _cost_note(report: dict[str, Any]) -> str:
    """The run's cost; `unpriced` for a model run with no prices (never a silent blank)."""
    if report.get("cost_usd") is not None:
        return f" · cost ${report['cost_usd']:.4f}"
    return " · cost unpriced" if report.get("model") else ""


def completeness(report: dict[str, Any]) -> str:
    """' · interrupted · 6 of 60 planned' when the run is not done or holds fewer trajectories than it planned
    (every number above is then over a partial run), else ''."""
    status, planned, n = report.get("status"), report.get("planned"), report["n"]
    if status in (None, "done") and (not planned or n >= planned):
        return ""
    return f" · {status or 'partial'}" + (f" · {n} of {planned} planned" if planned else "")


def report_table(report: dict[str, Any]) -> Table:
    """The four axes as rows, ST / MT / all as columns, with counts beside each share."""
    table = Table(title=Text(f"{report['run']} · {report['agent']}{' ' + report['model'] if report['model'] else ''} · "
                             f"{report['dataset']} · n={report['n']}{completeness(report)}"), title_justify="left")
    for col in ("axis", "metric", "ST", "MT", "all"):
        table.add_column(col, justify="left" if col in ("axis", "metric") else "right")
    for row in report_rows(report):
        table.add_row(*map(Text, row))
    terms = " · ".join(f"{k} {v}" for k, v in report["terminations"].items())
    table.caption = Text(f"terminations: {terms}" + _cost_note(report))
    table.caption_justify = "left"
    return table


def analytics_lines(report: dict[str, Any]) -> list[str]:
    """Trajectory analytics in a few plain lines (the JSON has everything)."""
    an = report.get("analytics")
    if not an:
        return []
    lines = []
    top = an["top_trigram"]
    if top:
        lines.append(trigram_line(top))
        wide = top.get("by_trajectories")
        if wide:
            share = wide["trajectory_share"]
            lines.append(f"most widespread trigram: {_arrow(wide['trigram'])} in {share[0]}/{share[1]} trajectories")
    for b in an["significant_bigrams"]:
        lines.append(f"bigram {' → '.join(b['bigram'])}: Δacc {b['delta'] * 100:+.1f} pts "
                     f"(p_bonf {b['p_bonferroni']:.3g}, n={b['n_with']})")
    stop = an["stopping"]
    ev = stop["after_evidence"]
    for group in ("st", "mt_both"):
        g = ev[group]
        shown = " · ".join(f"{k} {g['counts'][k]}" for k in g["shares"])
        left = " · ".join(f"{k} {v}" for k, v in g.get("left_out", {}).items())
        lines.append(f"after evidence ({group}, n={g['n']}): {shown}" + (f" (left out: {left})" if left else ""))
    mt = stop["mt_fail"]
    lines.append("mt_fail: " + " · ".join(f"{k} {v}" for k, v in mt["counts"].items())
                 + f" (n = {mt['n']} MT trajectories whose paper recall failed)"
                 + (f"; all golds read but wrong, apart: {mt['all_gold_wrong']['n']}" if "all_gold_wrong" in mt else ""))
    for key in ("after_wrong_read", "non_submission"):
        lines.append(f"{key}: " + (" · ".join(f"{k} {v}" for k, v in stop[key]["counts"].items()) or "none"))
    early = stop["early_submit"]
    lines.append(f"early submit (≤ {early['window']} actions after a wrong-paper read): {_frac(early['share']) or '0/0'}"
                 + (f"; Δacc {_delta(early['delta'])} vs the others, Fisher p {early['p']:.3g}" if "delta" in early else ""))
    return lines


def _csv(rows: list[tuple], header: tuple) -> str:
    import csv
    import io

    buf = io.StringIO()
    writer = csv.writer(buf)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def _markdown(rows: list[tuple], header: tuple) -> str:
    esc = lambda cell: str(cell).replace("|", "\\|")  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


REPORT_HEADER = ("axis", "metric", "ST", "MT", "all")
TIDY_HEADER = ("run", "axis", "metric", "split", "value", "numerator", "denominator", "ci_low", "ci_high")
PANEL_TIDY_HEADER = ("run", "axis", "metric", "split", "value", "numerator", "denominator", "best")


def _tidy(run: str, axis: str, metric: str, split: str, pair: list | None) -> list[Any]:
    """One CSV row of numbers: value = numerator ÷ denominator, empty when nothing was measured."""
    num, den = (pair or [None, None])[:2]
    value = num / den if num is not None and den else None
    return [run, axis, metric, split, "" if value is None else value, "" if num is None else num,
            "" if den is None else den]


def tidy_report_rows(report: dict[str, Any]) -> list[list[Any]]:
    """The report as numbers a program can read (one ratio per row, its numerator and denominator beside it,
    the 95% interval when asked for), as `scale … --format csv` does; the table's text cells stay the table's."""
    run, c = report["run"], report["counts"]
    rows = [_tidy(run, "accuracy", "accuracy", k, v) for k, v in (c.get("accuracy_by_type") or
                                                                   {"all": c["accuracy"]}).items()]
    for axis in ("search", "synthesis", "tool_use", "resource"):
        for metric, leaf in c.get(axis, {}).items():
            splits = leaf.items() if isinstance(leaf, dict) else [("all", leaf)]
            rows += [_tidy(run, axis, metric, split, pair) for split, pair in splits]
    rows += [_tidy(run, "search", "section_recall_ceiling", k, v) for k, v in c.get("section_recall_ceiling", {}).items()]
    for kind, by_value in c.get("splits", {}).items():
        rows += [_tidy(run, "split", kind, k, v) for k, v in by_value.items()]
    ended = sum(report["terminations"].values())
    rows += [_tidy(run, "terminations", k, "all", [v, ended]) for k, v in report["terminations"].items()]
    att = report["attribution"]
    rows += [_tidy(run, "attribution", k, "all", [v, att["n_wrong"]]) for k, v in att["counts"].items()]
    intervals = {tuple((k.split(".") + ["all"])[:2]): iv for k, iv in (report.get("intervals") or {}).items() if iv}
    for row in rows:
        iv = intervals.get((row[2], row[3])) if row[1] != "split" else None
        row += ["", ""] if iv is None else [iv["low"], iv["high"]]
    return rows


def tidy_panel_rows(panel: dict[str, Any]) -> list[list[Any]]:
    """The panel as numbers: one row per run and column, with numerator, denominator and whether it is best."""
    from workbench.reports import COLUMN_TERMS, PANEL_COLUMNS, PANEL_GROUPS

    group = {col: (g or "accuracy").lower().replace(" ", "_") for g, cols in PANEL_GROUPS for col in cols}
    rows = []
    for r in panel["rows"]:
        for col, _ in PANEL_COLUMNS:
            metric, _, split = COLUMN_TERMS[col].partition(".")  # the report's names: paper_recall, st
            rows.append(_tidy(r["run"], group[col], metric, split or "all", r["counts"].get(col))
                        + [int(r["run"] in panel["best"].get(col, ()))])
    return rows


def label_lines(report: dict[str, Any]) -> list[str]:
    """Which label rules section recall was computed under, how many labels resolved to no section and which
    items' section recall that caps (PROTOCOL §3: unresolvable labels are reported, not dropped)."""
    res = report.get("label_resolution")
    if not res:
        return []
    line = f"section recall computed under label resolution {res['version']}"
    if res["version"] != res["current"]:
        line += (f" (the current rules are version {res['current']}: the run's dataset could not be opened to "
                 f"recompute it, so do not compare it with runs under version {res['current']})")
    labels = report.get("section_labels") or {}
    if labels.get("unresolved") is not None:
        line += (f"; {labels['unresolved']} label(s) of its items resolved to no section "
                 f"({labels['unresolved_direct']} direct)")
    capped = labels.get("capped_items")
    if capped is not None:
        shown = ", ".join(capped[:10]) + (f" … (+{len(capped) - 10})" if len(capped) > 10 else "")
        line += f"; section recall capped on {len(capped)} item(s)" + (f": {shown}" if capped else "")
    return [line]


def print_report(report: dict[str, Any], fmt: str, brief: bool = False) -> None:
    """The report in `fmt`; `brief` (after a run, as a table) prints the four axes and where the rest is."""
    if fmt == "json":
        print_json(report)
        return
    legend = legend_lines(report.get("legend"))
    if fmt == "csv":
        sys.stdout.write(_csv(tidy_report_rows(report), TIDY_HEADER))
    elif fmt == "markdown":
        partial = completeness(report)
        sys.stdout.write(f"### {report['run']}\n\n" + (f"**{partial[3:]}**\n\n" if partial else "") + _markdown(report_rows(report) + detail_rows(report), REPORT_HEADER)
                         + "".join(f"\n- {line}" for line in legend) + ("\n" if legend else ""))
    elif brief:  # (a table after a run)
        out = console()
        out.print(report_table(report))
        out.print(f"the full diagnostics (splits, analytics, stopping behaviour, legend): agenthop-tui --batch report "
                  f"{report['run']}", markup=False, style="dim")
    else:
        out = console()
        out.print(report_table(report))
        details = Table(title="diagnostics", title_justify="left")
        for col in ("section", "metric", "ST", "MT", "all"):
            details.add_column(col, justify="left" if col in ("section", "metric") else "right")
        for row in detail_rows(report, full=False):
            details.add_row(*map(Text, row))
        out.print(details)
        if report.get("analytics"):
            out.print(transition_table(report["analytics"]["transitions"]))
        for line in analytics_lines(report):
            out.print(line, markup=False)
        for line in label_lines(report):
            out.print(line, markup=False)
        for line in legend:
            out.print(line, markup=False, style="dim")


def panel_cells(panel: dict[str, Any]) -> tuple[tuple, list[tuple]]:
    from workbench.reports import PANEL_COLUMNS

    cols = [c for c, _ in PANEL_COLUMNS]
    rows = []
    for r in panel["rows"]:
        cells = []
        for c in cols:
            v = r[c]
            text = _num(v, 0 if c == "tokens" else 2) if c in ("calls/turn", "tokens", "turns", "points") else _pct(v)
            if r["run"] in panel["best"].get(c, ()):
                text += " *"
            cells.append(text)
        name = r["run"] if r.get("ablation", "full") == "full" else f"{r['run']} [{r['ablation']}]"
        rows.append((name, *cells))
    return ("run", *cols), rows


def grouped_header(panel: dict[str, Any], header: tuple) -> tuple:
    """Column headers with the paper's Table 2 groups (Search / Synthesis / Tool use / Resources) on the first
    column of each group."""
    first = {cols[0]: group for group, cols in ((g["group"], g["columns"]) for g in panel.get("groups", [])) if group}
    return tuple(f"{first[h]}: {h}" if h in first else h for h in header)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def panel_title(panel: dict[str, Any], n_runs: int) -> str:
    """'panel · 3 runs · cells over the 58 items common to all · * best, p < 0.05 vs the runner-up' (the cells are
    computed on those; a best cell is marked only where it beats the runner-up significantly)."""
    n = panel["n_common_items"]
    items = f"{_plural(n, 'item')}" if n_runs == 1 else f"cells over the {_plural(n, 'item')} common to all"
    return (f"panel · {_plural(n_runs, 'run')} · {items}"
            + (" · * best, p < 0.05 vs the runner-up" if panel.get("best") else ""))


def print_panel(panel: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(panel)
        return
    if fmt == "csv":
        sys.stdout.write(_csv(tidy_panel_rows(panel), PANEL_TIDY_HEADER))
        return
    header, rows = panel_cells(panel)
    legend = legend_lines(panel.get("legend"))
    if fmt == "markdown":
        bigrams = bigram_panel_line(panel)
        sys.stdout.write("".join(f"> warning: {w}\n\n" for w in panel.get("warnings", []))
                         + _markdown(rows, grouped_header(panel, header))
                         + (f"\n{bigrams}\n" if bigrams else "")
                         + "".join(f"\n- {line}" for line in legend) + ("\n" if legend else ""))
        return
    out = console()
    for warning in panel.get("warnings", []):
        out.print(f"warning: {warning}", markup=False, style="bold")
    table = Table(title=panel_title(panel, len(rows)), title_justify="left")
    first = {g["columns"][0]: g["group"] for g in panel.get("groups", []) if g["group"]}
    for i, col in enumerate(header):
        table.add_column(f"{first.get(col, '')}\n{col}", justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*map(Text, row))
    out.print(table)
    for line in panel_stat_lines(panel):
        out.print(line, markup=False)
    for lift in panel.get("ablation_lift", []):
        if lift["lift"] is not None:
            out.print(f"tool lift {lift['full']} vs {lift['closed_book']}: {lift['lift'] * 100:+.1f} pts", markup=False)
    ext = panel.get("external")
    if ext:
        if ext.get("error"):
            out.print(f"Spearman vs external scores: {ext['error']}", markup=False)
        elif ext.get("rho") is None:
            out.print(f"Spearman vs external scores: undefined (n = {ext['n']})", markup=False)
        else:
            out.print(f"Spearman vs external scores: ρ = {ext['rho']:.3f}, p = {ext['p']:.3g} "
                      f"({ext.get('p_method', 'asymptotic')}, n = {ext['n']})", markup=False)
    bigrams = bigram_panel_line(panel)
    if bigrams:
        out.print(bigrams, markup=False)
    for line in legend:
        out.print(line, markup=False, style="dim")


def panel_stat_lines(panel: dict[str, Any]) -> list[str]:
    """Cronbach's α (items as components), the item-total correlations and each run's run-to-run spread (Table 17)."""
    lines = []
    if panel.get("coverage"):
        counts = panel["coverage"]["counts"]
        alpha = panel.get("cronbach_alpha")
        lines.append(f"Cronbach's α (items as components, runs as respondents): "
                     f"{'undefined (the run totals do not vary)' if alpha is None else f'{alpha:.3f}'}; item coverage: "
                     + " · ".join(f"{k} {v}" for k, v in counts.items()))
    itc = panel.get("item_total_correlation")
    if itc:
        valued = {k: v for k, v in itc.items() if v is not None}
        negative = sorted((v, k) for k, v in valued.items() if v < 0)
        lines.append(f"corrected item-total correlation (across runs): {len(valued)} items with a value, "
                     f"{len(negative)} negative" + (": " + ", ".join(f"{k} {v:+.2f}" for v, k in negative[:5])
                                                    + (" …" if len(negative) > 5 else "") if negative else ""))
    for name, spread in (panel.get("replicates") or {}).items():
        if spread:
            lines.append(f"replicates of {name}: mean {_pct(spread['mean'])}, run-to-run SD (population, Table 17) "
                         f"{_pct(spread['std'])}, range {_pct(spread['range'])} (n = {spread['n']})")
    return lines


def bigram_panel_line(panel: dict[str, Any]) -> str:
    """The panel's bigrams kept (present in at least half of the runs) and the two extreme mean Δ-accuracies."""
    kept = [b for b in panel.get("bigram_panel") or [] if b.get("mean_delta") is not None]
    if not kept:
        return ""
    n_runs = len(panel.get("rows") or [])
    hi = max(kept, key=lambda b: b["mean_delta"])
    lo = min(kept, key=lambda b: b["mean_delta"])

    def one(b: dict[str, Any]) -> str:
        return f"{_arrow(b['bigram'])} {_delta(b['mean_delta'])} (present in {b['n_present']}/{n_runs})"

    return (f"bigram panel: {len(kept)} bigrams present in at least half of the {n_runs} runs; highest mean Δacc "
            f"{one(hi)}, lowest {one(lo)}")


LEADERBOARD_FIXED = 3  # rank, name and who stay in view when the table scrolls right


def leaderboard_cells(board: dict[str, Any]) -> tuple[tuple, list[tuple]]:
    """A leaderboard as rank (— when unranked), name, who, items covered, the accuracy's 95% interval, then the
    panel's columns (`*` marks a column's best among the ranked rows)."""
    header, cells = panel_cells(board)
    rows = []
    for r, row in zip(board["rows"], cells):
        who = r["agent"] + (f" {r['model']}" if r["model"] else "") + ("" if r["ablation"] == "full" else f" · {r['ablation']}")
        ci = "—" if r["accuracy_ci"] is None else f"{100 * r['accuracy_ci'][0]:.0f}–{100 * r['accuracy_ci'][1]:.0f}%"
        rows.append(("—" if r["rank"] is None else str(r["rank"]), r["name"], who, f"{r['n']}/{board['n_items']}",
                     row[1], ci, *row[2:]))
    return ("#", "run", "who", "items", header[1], "95% CI", *header[2:]), rows


def leaderboard_title(board: dict[str, Any]) -> str:
    dataset = dataset_label(board["dataset"])
    ranked = sum(1 for r in board["rows"] if r["rank"] is not None)
    return (f"leaderboard · {dataset} · {counted(board['n_items'], 'item')} played by people · {ranked} ranked of "
            f"{len(board['rows'])} · * best")


def leaderboard_notes(board: dict[str, Any]) -> list[str]:
    """What the table cannot say: who is unranked and why, which plays were left out, how it is computed."""
    lines = [f"unranked: {r['name']} ({r['agent']}) {r['unranked']}" for r in board["rows"] if r["unranked"]]
    lines += [f"left out: {r['excluded']} play(s) of {r['agent']} made after seeing the item's tool results or gold "
              "answer (resumed / replayed)" for r in board["rows"] if r["excluded"]]
    lines.append(f"A person is one row over all their sessions; a model one row per run. Ranked: rows covering at "
                 f"least {board['min_coverage']:.0%} of the items people played, by accuracy (95% CI: Wilson score "
                 f"interval over the items a row covers). People's tokens are "
                 "estimated (characters / 4).")
    return lines


def print_leaderboard(boards: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        print_json(boards)
        return
    out = console()
    if not boards:
        out.print("no play sessions yet: people play in the TUI (agenthop-tui, then P)", markup=False)
    for board in boards:
        header, rows = leaderboard_cells(board)
        table = Table(title=Text(leaderboard_title(board)), title_justify="left")
        for i, col in enumerate(header):
            table.add_column(col, justify="left" if col in ("run", "who") else "right")
        for row in rows:
            table.add_row(*map(Text, row))
        out.print(table)
        for line in leaderboard_notes(board):
            out.print(line, markup=False, style="dim")


MEAN_AXES = ("calls/turn", "tokens", "turns", "points")
COMPARE_HEADER = ("axis", "n", "A", "B", "Δ (B−A)", "95% CI of Δ", "McNemar p", "Holm p")
AGREEMENT_LABELS = {"both_right": "both right", "only_a": "only A right", "only_b": "only B right",
                    "both_wrong": "both wrong"}


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def compare_rows(cmp: dict[str, Any]) -> list[tuple[str, ...]]:
    """The compared axes as text cells (the batch table and the TUI's compare screen show these very strings):
    each row's n (the items its Δ and test are on), A, B, Δ, its interval ("no variation" when every resample
    gave the same Δ), McNemar's p and its Holm-adjusted p. A conversion row is on the items both runs recalled;
    the marginal conversions follow it on a row of their own, labelled."""
    rows = []
    for r in cmp["rows"]:
        mean = r["axis"] in MEAN_AXES
        digits = 0 if r["axis"] == "tokens" else 2  # tokens are whole numbers: no decimals in values or Δ
        value = (lambda v: _num(v, digits)) if mean else _pct
        points = (lambda v: f"{v:+,.{digits}f}") if mean else (lambda v: f"{v * 100:+.1f} pts")
        delta = "—" if r["delta"] is None else points(r["delta"])
        ci = "—" if r.get("ci_low") is None else "no variation" if r.get("ci_no_variation") else \
            f"[{points(r['ci_low'])}, {points(r['ci_high'])}]"
        n = "" if r.get("n") is None else f"{r['n']:,}"
        rows.append((r["axis"], n, value(r["a"]), value(r["b"]), delta, ci, _p(r.get("p")), _p(r.get("p_holm"))))
        if "a_marginal" in r:
            marginal = r.get("counts_marginal") or {}
            cell = lambda side: _pct(r[f"{side}_marginal"]) + (  # noqa: E731
                f" ({_frac(marginal[side])})" if marginal.get(side) and marginal[side][1] else "")
            rows.append((f"{r['axis']} marginal", "", cell("a"), cell("b"), "", "", "", ""))
    return rows


ATTRIBUTION_HEADER = ("wrong answers chose", "A", "B", "Δ rate (B−A)", "95% CI of Δ")


def attribution_rows(cmp: dict[str, Any]) -> list[tuple[str, ...]]:
    """Distractor attribution side by side: per option type, each run's count and rate among its wrong answers,
    the difference of the rates and its paired bootstrap interval (the batch table and the Failures tab)."""
    att_a, att_b = cmp["attribution"]["a"], cmp["attribution"]["b"]
    deltas = cmp["attribution"].get("delta") or {}
    rows = [("wrong answers", str(att_a["n_wrong"]), str(att_b["n_wrong"]), "", "")]
    pts = lambda v: f"{v * 100:+.1f} pts"  # noqa: E731
    for kind in sorted(set(att_a["counts"]) | set(att_b["counts"])):
        cells = [f"{d['counts'].get(kind, 0)} ({100 * d['rates'].get(kind, 0):.0f}%)" for d in (att_a, att_b)]
        d = deltas.get(kind) or {}
        delta = "—" if d.get("delta") is None else pts(d["delta"])
        ci = "—" if d.get("ci_low") is None else "no variation" if d.get("ci_no_variation") else \
            f"[{pts(d['ci_low'])}, {pts(d['ci_high'])}]"
        rows.append((f"  → {kind}", *cells, delta, ci))
    return rows


def compare_heading(cmp: dict[str, Any]) -> str:
    def who(side: str) -> str:
        run = cmp.get("runs", {}).get(side) or {"name": cmp[side], "agent": "?", "model": None}
        agent = run["agent"] + (f" {run['model']}" if run.get("model") else "")
        return f"{run['name']} ({agent})"

    extra = "".join(f" · {cmp[k]} only in {k[-1].upper()}" for k in ("only_in_a", "only_in_b") if cmp.get(k))
    return f"A = {who('a')} · B = {who('b')} · {cmp['n_common']} common items (replicate 0){extra}"


def compare_legend(cmp: dict[str, Any]) -> str:
    m = (cmp.get("holm") or {}).get("m")
    return (f"n: the items each row is on. Δ intervals: paired bootstrap over the common items (B = "
            f"{cmp.get('n_boot', 10_000):,}, seed {cmp.get('seed', 0)}); p: exact McNemar on the paired 0/1 outcome; "
            f"Holm p: adjusted together over the comparison's {m if m is not None else ''} tests. Conv: A, B, Δ, "
            "interval and p on the items both runs recalled (the paper's Table 12 set); 'marginal': each run's "
            "conversion over its own recalled items.")


def print_compare(cmp: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(cmp)
        return
    out = console()
    out.print(compare_heading(cmp), markup=False)
    for warning in cmp.get("warnings", []):
        out.print(f"warning: {warning}", markup=False, style="bold")
    out.print(cmp["summary"], markup=False, style="bold")
    table = Table(title_justify="left")
    for col in COMPARE_HEADER:
        table.add_column(col, justify="left" if col == "axis" else "right")
    for row in compare_rows(cmp):
        table.add_row(*map(Text, row))
    out.print(table)
    out.print(compare_legend(cmp), markup=False, style="dim")
    agree = " · ".join(f"{AGREEMENT_LABELS[k]} {v['n']}" for k, v in cmp["agreement"].items())
    out.print(f"agreement: {agree}", markup=False)
    attribution = Table(title=Text("distractor attribution: rates among each run's wrong answers, Δ with a paired "
                                   "bootstrap interval over the common items"), title_justify="left")
    for col in ATTRIBUTION_HEADER:
        attribution.add_column(col, justify="left" if col == ATTRIBUTION_HEADER[0] else "right")
    for row in attribution_rows(cmp):
        attribution.add_row(*map(Text, row))
    out.print(attribution)
    for side in ("a", "b"):
        terms = " · ".join(f"{k} {v}" for k, v in cmp["terminations"][side].items() if v)
        top = (cmp.get("tool_use") or {}).get(side, {}).get("top_trigram")
        trigram = f" · top trigram {' → '.join(top['trigram'])} ({top['occurrence_share'][0]}/" \
                  f"{top['occurrence_share'][1]} trigram occurrences)" if top else ""
        out.print(f"{side.upper()}: endings: {terms}{trigram}", markup=False)


def print_runs(rows: list[dict[str, Any]], fmt: str) -> None:
    if fmt == "json":
        print_json(rows)
        return
    table = Table(title="runs", title_justify="left")
    for col in ("name", "agent / model", "data", "done", "acc", "cost", "status"):
        table.add_column(col, justify="right" if col in ("done", "acc", "cost") else "left")
    for r in rows:
        agent = r["agent"] + (f" {r['model']}" if r["model"] else "")
        if r["ablation"] != "full":
            agent += f" [{r['ablation']}]"
        cost = f"${r['cost_usd']:.2f}" if r["cost_usd"] is not None else "unpriced" if r["model"] else "—"
        cells = (r["name"], agent, r["dataset"], f"{r['done']}/{r['planned']}",
                 "—" if r["accuracy"] is None else f"{r['accuracy']:.3f}", cost, r["status"])
        table.add_row(*map(Text, cells))
    console().print(table)


def print_plateau(result: dict[str, Any], fmt: str) -> None:
    """The plateau: transitions with d̄, σ, C_k and the decision; in table mode also the plot."""
    if fmt == "json":
        print_json(result, strict=True)
        return
    if fmt == "csv":
        from workbench.views.scaling import transition_csv

        header, rows = transition_csv(result)
        sys.stdout.write(_csv(rows, tuple(header)))
        return
    from workbench.views.figures import plateau_figure
    from workbench.views.scaling import (LEVEL_COLUMNS, LEVELS_NOTE, TERMINAL_PALETTE, c_k_text, decision, flags,
                                         level_cells, trials_note)

    out = console()
    caveats = flags(result)
    first = f", k*_first = {result['k_star_first']}" if result.get("k_star_first") is not None else ""
    fragile = " (borderline: one flipped decision moves it)" if result.get("k_star_borderline") else ""
    out.print(f"plateau: k* = {result['k_star']} → {result['plateau_budget']}{fragile}{first} (n = {result['n']}, dropped "
              f"{result['n_dropped']}, FPC = {result['fpc']:.3f}, z = {result['z'] or 0:.3f}, {result['correction']}"
              f"{trials_note(result)})" + (f" · {'; '.join(caveats)}" if caveats else ""), markup=False)
    table = Table(title_justify="left")
    for h in ("transition", "d̄", "σ_boot", "C_k", "decision", "improved / worsened", "sign test p"):
        table.add_column(h, justify="left" if h in ("transition", "decision") else "right")
    for t in result["transitions"]:
        table.add_row(*map(Text, (f"{t['from']} → {t['to']}", f"{t['d_bar']:+.4f}", f"{t['sigma_boot']:.4f}",
                                  c_k_text(t), decision(t), f"{t['improved']} / {t['worsened']}",
                                  f"{t['sign_test_p']:.4g}")))
    out.print(table)
    if result.get("levels"):
        levels = Table(title=Text(f"levels · {result.get('axis')} axis, {result.get('protocol')}"), title_justify="left")
        for i, h in enumerate(LEVEL_COLUMNS):
            levels.add_column(h, justify="left" if i == 0 or h == "flag" else "right")
        for level in result["levels"]:
            levels.add_row(*map(Text, level_cells(level)))
        out.print(levels)
        out.print(LEVELS_NOTE, markup=False)
    if len(result["budgets"]) >= 2:
        sys.stdout.write(plateau_figure(result, 78, 22, TERMINAL_PALETTE if _color() else None) + "\n")


def print_parallel(report: dict[str, Any], fmt: str) -> None:
    """pass@k and each strategy per k with intervals and gaps, then what each k costs; or JSON, or CSV."""
    from workbench.views.figures import parallel_figure
    from workbench.views.scaling import (TERMINAL_PALETTE, cost_cells, cost_columns, parallel_cells, parallel_columns,
                                         parallel_csv)

    if fmt == "json":
        print_json(report, strict=True)
        return
    if fmt == "csv":
        header, rows = parallel_csv(report)
        sys.stdout.write(_csv(rows, tuple(header)))
        return
    table = Table(title=Text(f"{report['run']} · {report['items']} items · K = {report['k_max']}"
                             + (f" · judge {report['judge']}" if report["judge"] else "")
                             + " · Δ = pass@k − strategy, points [paired 95% interval]"), title_justify="left")
    for column in parallel_columns(report):
        table.add_column(column, justify="right")
    for r in report["per_k"]:
        table.add_row(*map(Text, parallel_cells(report, r)))
    out = console()
    out.print(table)
    costs = Table(title=Text("gap size and cost at k: rel = Δ / pass@k, eff = (strategy − pass@1)/(pass@k − pass@1); "
                             "cost = k/K of the sampling + the verdicts a strategy needs"), title_justify="left")
    for column in cost_columns(report):
        costs.add_column(column, justify="right")
    for r in report["per_k"]:
        costs.add_row(*map(Text, cost_cells(report, r)))
    out.print(costs)
    if report.get("items_incomplete"):
        out.print(f"{report['items_incomplete']} item(s) still miss some of the K samples and are left out "
                  "(run the same command again to finish them)", markup=False)
    if report.get("ks_unavailable"):
        out.print(f"k = {', '.join(map(str, report['ks_unavailable']))} exceed K = {report['k_max']}: not shown",
                  markup=False)
    out.print(report["tie_rule"], markup=False)
    sys.stdout.write(parallel_figure(report, 78, 18, TERMINAL_PALETTE if _color() else None) + "\n")


def print_items(view, rows: list, flt, fmt: str) -> None:
    """The item browser's list (workbench.items rows): the same columns and numbers as the TUI."""
    if fmt == "json":
        print_json({"dataset": view.spec, "fingerprint": view.fingerprint, "runs": view.runs,
                    "stale_runs": view.stale_runs, "filters": flt.active(), "n": len(rows), "total": len(view.rows),
                    "items": [r.as_dict() for r in rows]})
        return
    name = dataset_label(view.spec)
    filters = " · ".join(f"{k} {v}" for k, v in flt.active().items())
    table = Table(title=Text(f"{name} · {len(rows)} of {len(view.rows)} items · right out of {len(view.runs)} runs"
                             + (f" · {filters}" if filters else "")), title_justify="left")
    for col in ("item", "type", "depth", "reasoning", "tier", "venue", "right", "question"):
        table.add_column(col, justify="right" if col in ("depth", "right") else "left",
                         no_wrap=col != "question", max_width=70 if col == "question" else None)
    for r in rows:
        question = " ".join(r.question.split())
        table.add_row(*map(Text, (r.id, r.kind, str(r.depth), r.reasoning, r.tier, r.venue, r.right_text,
                                  question[:67] + "…" if len(question) > 68 else question)))
    out = console()
    out.print(table)
    if view.note():
        out.print(f"note: {view.note()}", markup=False)


def print_item(detail: dict[str, Any], tree: list[str], fmt: str) -> None:
    """One item: its fields, question and options (gold and distractor types shown), tree, stored trajectories."""
    if fmt == "json":
        print_json(detail)
        return
    out = console()
    say = lambda line="": out.print(Text(line))  # noqa: E731  (dataset text is never markup)
    say(f"{detail['id']} · {detail['kind']} d{detail['depth']} · {detail['reasoning']} · {detail['tier']} · "
        f"{detail['venue']} · right {detail['right']}/{detail['ran']} runs ({detail['outcome']})")
    say()
    say("Q " + " ".join(detail["question"].split()))
    types = detail["distractor_types"]
    for i, option in enumerate(detail["options"]):
        letter = "ABCD"[i]
        kind = "gold" if letter == detail["gold"] else (types[i] if i < len(types) else "distractor")
        say(f"{'●' if letter == detail['gold'] else ' '} ({letter}) {kind:<12} {' '.join(option.split())}")
    nb = detail["neighbourhood"]
    say()
    say(f"neighbourhood: {nb['papers']} papers ({nb['full_text']} full text, {nb['metadata_only']} metadata-only), "
        f"{nb['citations']} citations · ● seed ◇ bridge ★ gold · full/meta = full text or metadata only")
    for line in tree:
        say(line)
    if detail.get("labels"):
        from workbench.items import label_line

        say()
        say("recall labels → the section each resolved to (rule):")
        for lab in detail["labels"]:
            say("  " + label_line(lab))
    say()
    trajectories = detail["trajectories"]
    if not trajectories:
        say("no stored trajectories on this item")
        return
    table = Table(title=Text(f"stored trajectories ({len(trajectories)})"), title_justify="left")
    for col in ("run", "agent / model", "rep", "answer", "correct", "ending", "points", "turns", "recall P/S"):
        table.add_column(col, justify="right" if col in ("rep", "points", "turns") else "left")
    for t in trajectories:
        recall = ("●" if t["paper_recall"] else "○") + " " + ("●" if t["section_recall"] else "○")
        agent = t["agent"] + ("" if t["ablation"] == "full" else f" [{t['ablation']}]")
        table.add_row(*map(Text, (t["run"], agent, str(t["replicate"]), t["answer"] or "—",
                                  "✓" if t["correct"] else "✗", t["termination"] or "", str(t["points"]),
                                  str(t["turns"]), recall)))
    out.print(table)


def print_merge(rows: list[dict[str, Any]], dest: str, fmt: str) -> None:
    """What `merge` did, per run: copied, already there, left out as unfinished; the run's state after it."""
    if fmt == "json":
        print_json({"store": dest, "runs": rows})
        return
    table = Table(title=f"merged into {dest}", title_justify="left")
    for col in ("run", "copied", "identical", "unfinished left out", "done", "status"):
        table.add_column(col, justify="left" if col in ("run", "status") else "right")
    for r in rows:
        name = r["name"] + (" (new)" if r["created"] else "")
        table.add_row(*map(Text, (name, str(r["copied"]), str(r["identical"]), str(r["partial_skipped"]),
                                  f"{r['finished']}/{r['planned']}", r["status"])))
    console().print(table)
