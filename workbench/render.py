"""Rendering reports for the terminal (rich tables) or as JSON on stdout."""
from __future__ import annotations

import json
import sys
from typing import Any

from rich.console import Console
from rich.table import Table


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def _frac(counts: list | None) -> str:
    return "" if not counts else f"{counts[0]:g}/{counts[1]}"


def console() -> Console:
    return Console(file=sys.stdout, highlight=False, soft_wrap=False)


def print_json(obj: Any) -> None:
    sys.stdout.write(json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def report_table(report: dict[str, Any]) -> Table:
    """The four axes as rows, ST / MT / all as columns, with counts beside each share."""
    a, c = report["axes"], report["counts"]
    table = Table(title=f"{report['run']} · {report['agent']}{' ' + report['model'] if report['model'] else ''} · "
                        f"{report['dataset']} · n={report['n']}", title_justify="left")
    for col in ("axis", "metric", "ST", "MT", "all"):
        table.add_column(col, justify="left" if col in ("axis", "metric") else "right")
    table.add_row("", "accuracy", "", "", f"{_pct(report['accuracy'])} ({_frac(c['accuracy'])})")
    for axis, metric, label in (("search", "paper_recall", "paper recall"), ("search", "section_recall", "section recall"),
                                ("synthesis", "conversion", "conversion")):
        v, n = a[axis][metric], c[axis][metric]
        table.add_row(axis, label, *(f"{_pct(v[k])} ({_frac(n[k])})" for k in ("st", "mt", "all")))
    table.add_row("tool use", "calls per turn", "", "", _num(a["tool_use"]["calls_per_turn"]))
    r = a["resource"]
    table.add_row("resource", "avg tokens", "", "", _num(r["avg_tokens"], 0))
    table.add_row("", "avg turns", "", "", _num(r["avg_turns"]))
    table.add_row("", "avg points", "", "", _num(r["avg_points"]))
    for key, label in (("max_tokens_rate", "max tokens"), ("max_turns_rate", "max turns"),
                       ("max_budget_rate", "max budget")):
        table.add_row("", label, "", "", f"{_pct(r[key])} ({_frac(c['resource'][key])})")
    terms = " · ".join(f"{k} {v}" for k, v in report["terminations"].items())
    table.caption = f"terminations: {terms}" + (f" · cost ${report['cost_usd']:.4f}" if report.get("cost_usd") else "")
    table.caption_justify = "left"
    return table


def print_report(report: dict[str, Any], fmt: str) -> None:
    if fmt == "json":
        print_json(report)
    else:
        console().print(report_table(report))


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
        cost = "—" if r["cost_usd"] is None else f"${r['cost_usd']:.2f}"
        table.add_row(r["name"], agent, r["dataset"], f"{r['done']}/{r['planned']}",
                      "—" if r["accuracy"] is None else f"{r['accuracy']:.3f}", cost, r["status"])
    console().print(table)
