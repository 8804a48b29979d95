"""Rendering reports for the terminal (rich tables) or as JSON on stdout."""
from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text


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


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def report_rows(report: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """The four axes as (axis, metric, ST, MT, all) text cells, shared by the table, CSV and Markdown."""
    a, c = report["axes"], report["counts"]
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
    for k, v in report["splits"]["type_depth"].items():
        rows.append(("split", f"accuracy {k}", "", "", _pct(v)))
    att = report["attribution"]
    for k, v in att["counts"].items():
        rows.append(("wrong answers", k, "", "", f"{v}/{att['n_wrong']}"))
    if report.get("intervals"):
        for k, iv in report["intervals"].items():
            if iv:
                rows.append(("95% CI", k, "", "", f"{_pct(iv['low'])} – {_pct(iv['high'])}"))
    return rows


def _cost_note(report: dict[str, Any]) -> str:
    """The run's cost; `unpriced` for a model run with no prices (never a silent blank)."""
    if report.get("cost_usd") is not None:
        return f" · cost ${report['cost_usd']:.4f}"
    return " · cost unpriced" if report.get("model") else ""


def report_table(report: dict[str, Any]) -> Table:
    """The four axes as rows, ST / MT / all as columns, with counts beside each share."""
    table = Table(title=Text(f"{report['run']} · {report['agent']}{' ' + report['model'] if report['model'] else ''} · "
                             f"{report['dataset']} · n={report['n']}"), title_justify="left")
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
        share = top["trajectory_share"]
        lines.append(f"top trigram: {' → '.join(top['trigram'])} in {share[0]}/{share[1]} trajectories")
    for b in an["significant_bigrams"]:
        lines.append(f"bigram {' → '.join(b['bigram'])}: Δacc {b['delta'] * 100:+.1f} pts "
                     f"(p_bonf {b['p_bonferroni']:.3g}, n={b['n_with']})")
    stop = an["stopping"]
    for key, block in stop.items():
        if isinstance(block, dict) and block.get("counts"):
            counts = " · ".join(f"{k} {v}" for k, v in block["counts"].items())
            lines.append(f"{key}: {counts}")
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


def print_report(report: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(report)
    elif fmt == "csv":
        sys.stdout.write(_csv(report_rows(report), REPORT_HEADER))
    elif fmt == "markdown":
        sys.stdout.write(f"### {report['run']}\n\n" + _markdown(report_rows(report), REPORT_HEADER))
    else:
        out = console()
        out.print(report_table(report))
        for line in analytics_lines(report):
            out.print(line, markup=False)


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
        rows.append((r["run"], *cells))
    return ("run", *cols), rows


def print_panel(panel: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(panel)
        return
    header, rows = panel_cells(panel)
    if fmt == "csv":
        sys.stdout.write(_csv(rows, header))
        return
    if fmt == "markdown":
        sys.stdout.write(_markdown(rows, header))
        return
    table = Table(title=f"panel · {len(rows)} runs · {panel['n_common_items']} common items · * best",
                  title_justify="left")
    for i, col in enumerate(header):
        table.add_column(col, justify="left" if i == 0 else "right")
    for row in rows:
        table.add_row(*map(Text, row))
    out = console()
    out.print(table)
    if panel.get("cronbach_alpha") is not None:
        counts = panel["coverage"]["counts"]
        out.print(f"Cronbach's α over runs: {panel['cronbach_alpha']:.3f}; item coverage: "
                  + " · ".join(f"{k} {v}" for k, v in counts.items()), markup=False)
    for lift in panel.get("ablation_lift", []):
        if lift["lift"] is not None:
            out.print(f"tool lift {lift['full']} vs {lift['closed_book']}: {lift['lift'] * 100:+.1f} pts", markup=False)
    if panel.get("external"):
        out.print(f"Spearman vs external scores: {panel['external']}", markup=False)


MEAN_AXES = ("calls/turn", "tokens", "turns", "points")
COMPARE_HEADER = ("axis", "A", "B", "Δ (B−A)", "95% CI of Δ", "McNemar p")
AGREEMENT_LABELS = {"both_right": "both right", "only_a": "only A right", "only_b": "only B right",
                    "both_wrong": "both wrong"}


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def compare_rows(cmp: dict[str, Any]) -> list[tuple[str, ...]]:
    """The compared axes as text cells (the batch table and the TUI's compare screen show these very strings)."""
    rows = []
    for r in cmp["rows"]:
        mean = r["axis"] in MEAN_AXES
        value = (lambda v: _num(v, 0 if r["axis"] == "tokens" else 2)) if mean else _pct
        points = (lambda v: f"{v:+,.2f}") if mean else (lambda v: f"{v * 100:+.1f} pts")
        delta = "—" if r["delta"] is None else points(r["delta"])
        ci = "—" if r.get("ci_low") is None else f"[{points(r['ci_low'])}, {points(r['ci_high'])}]"
        rows.append((r["axis"], value(r["a"]), value(r["b"]), delta, ci, _p(r.get("p"))))
    return rows


def compare_heading(cmp: dict[str, Any]) -> str:
    def who(side: str) -> str:
        run = cmp.get("runs", {}).get(side) or {"name": cmp[side], "agent": "?", "model": None}
        agent = run["agent"] + (f" {run['model']}" if run.get("model") else "")
        return f"{run['name']} ({agent})"

    extra = "".join(f" · {cmp[k]} only in {k[-1].upper()}" for k in ("only_in_a", "only_in_b") if cmp.get(k))
    return f"A = {who('a')} · B = {who('b')} · {cmp['n_common']} common items (replicate 0){extra}"


def compare_legend(cmp: dict[str, Any]) -> str:
    return (f"Δ intervals: paired bootstrap over the common items (B = {cmp.get('n_boot', 10_000):,}, seed "
            f"{cmp.get('seed', 0)}); p: exact McNemar on the paired 0/1 outcome (conversion: items both runs recalled).")


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
    for side in ("a", "b"):
        att = cmp["attribution"][side]
        wrong = " · ".join(f"{k} {v}" for k, v in att["counts"].items()) or "none"
        terms = " · ".join(f"{k} {v}" for k, v in cmp["terminations"][side].items() if v)
        top = (cmp.get("tool_use") or {}).get(side, {}).get("top_trigram")
        trigram = f" · top trigram {' → '.join(top['trigram'])} ({top['trajectory_share'][0]}/" \
                  f"{top['trajectory_share'][1]})" if top else ""
        out.print(f"{side.upper()}: wrong answers → {wrong} · endings: {terms}{trigram}", markup=False)


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
        print_json(result)
        return
    header = ("from", "to", "d_bar", "sigma_boot", "c_k", "significant", "borderline", "improved", "worsened",
              "sign_test_p")
    rows = [tuple(t.get(h) for h in header) for t in result["transitions"]]
    if fmt == "csv":
        sys.stdout.write(_csv(rows, header))
        return
    from workbench.scaling import TERMINAL_PALETTE, plateau_figure

    out = console()
    flags = [k for k in ("censored", "no_significant_gain", "degenerate_variance", "fpc_zero") if result.get(k)]
    out.print(f"plateau: k* = {result['k_star']} → {result['plateau_budget']} (n = {result['n']}, dropped "
              f"{result['n_dropped']}, FPC = {result['fpc']:.3f}, z = {result['z'] or 0:.3f}, {result['correction']})"
              + (f" · {', '.join(flags)}" if flags else ""), markup=False)
    table = Table(title_justify="left")
    for h in ("transition", "d̄", "σ_boot", "C_k", "decision", "improved / worsened", "sign test p"):
        table.add_column(h, justify="left" if h in ("transition", "decision") else "right")
    for t in result["transitions"]:
        decision = "gain" if t["significant"] else "no significant gain"
        if t.get("borderline"):
            decision += " (borderline)"
        table.add_row(*map(Text, (f"{t['from']} → {t['to']}", f"{t['d_bar']:+.4f}", f"{t['sigma_boot']:.4f}",
                                  f"{t['c_k']:+.4f}", decision, f"{t['improved']} / {t['worsened']}",
                                  f"{t['sign_test_p']:.4g}")))
    out.print(table)
    for level in result.get("levels", []):
        cost = "unpriced" if level["cost_usd"] is None else f"${level['cost_usd']:.4f}"
        out.print(f"  {level['budget']}: accuracy {_pct(level['accuracy'])}, {level['tokens']:,} tokens, {cost}, "
                  f"{level['continues']} continues", markup=False)
    if len(result["budgets"]) >= 2:
        sys.stdout.write(plateau_figure(result, 78, 22, TERMINAL_PALETTE if _color() else None) + "\n")


def print_parallel(report: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(report)
        return
    from workbench.scaling import TERMINAL_PALETTE, parallel_figure

    names = [n for n in ("pass_at_k", "majority", "pointwise", "pairwise") if n in report["per_k"][0]]
    table = Table(title=Text(f"{report['run']} · {report['items']} items · K = {report['k_max']}"
                             + (f" · judge {report['judge']}" if report["judge"] else "")), title_justify="left")
    table.add_column("k", justify="right")
    for n in names:
        table.add_column(n, justify="right")
    for n in names[1:]:
        table.add_column(f"gap {n}", justify="right")
    for r in report["per_k"]:
        cells = [str(r["k"])]
        for n in names:
            ci = r.get(f"{n}_ci")
            cells.append(f"{_pct(r[n])}" + (f" [{_pct(ci[0])}, {_pct(ci[1])}]" if ci else ""))
        cells += [f"{r[f'gap_{n}'] * 100:+.1f} pts" for n in names[1:]]
        table.add_row(*map(Text, cells))
    out = console()
    out.print(table)
    out.print(report["tie_rule"], markup=False)
    sys.stdout.write(parallel_figure(report, 78, 18, TERMINAL_PALETTE if _color() else None) + "\n")
