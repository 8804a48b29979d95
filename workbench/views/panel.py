"""The panel (the paper's Table 2) as text cells, its title and notes, and as tidy rows of numbers."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, cast

from workbench.service.records.columns import COLUMN_TERMS, PANEL_COLUMNS, PANEL_GROUPS
from workbench.service.records.panel import PanelBigram, PanelReport, RowErrors
from workbench.views.cells import counted, num, pct, points
from workbench.views.report import _arrow, _tidy

PANEL_TIDY_HEADER = (
    "table",
    "run",
    "axis",
    "metric",
    "split",
    "value",
    "numerator",
    "denominator",
    "best",
    "tier_best",
    "family",
    "tier",
)


def tidy_panel_rows(panel: PanelReport) -> list[list[Any]]:
    """The panel as numbers: one row per run and column, with numerator, denominator and whether it is best."""
    group = {col: (g or "accuracy").lower().replace(" ", "_") for g, cols in PANEL_GROUPS for col in cols}
    rows = []
    for r in panel["rows"]:
        tier_best = (panel.get("tier_best") or {}).get(r.get("tier") or "", {})
        for col, _ in PANEL_COLUMNS:
            metric, _, split = COLUMN_TERMS[col].partition(".")  # the report's names: paper_recall, st
            rows.append(
                [
                    "table2",
                    *_tidy(r["run"], group[col], metric, split or "all", r["counts"].get(col)),
                    int(r["run"] in panel["best"].get(col, ())),
                    int(r["run"] in tier_best.get(col, ())),
                    r.get("family") or "",
                    r.get("tier") or "",
                ]
            )
    return rows


PANEL_STATISTICS = (
    "cronbach_alpha",
    "coverage",
    "replicates",
    "ablation_lift",
    "external",
    "best_tests",
    "tier_best_tests",
    "bigram_panel",
    "fingerprints",
    "item_total_correlation",
)
IDENTITY = ("run", "family", "tier")  # a dict's fields that say whose numbers it holds: columns, not path parts


def tidy_all_rows(panel: PanelReport) -> list[list[Any]]:
    """Every table of the panel as tidy rows under PANEL_TIDY_HEADER, told apart by the `table` column: Table 2
    (`tidy_panel_rows`), then the panel statistics and each of `panel["tables"]` (table3 … figure5) flattened —
    one row per number, `metric` its dotted path inside the table (list positions and keys such as strata and
    run names included), `run` / `family` / `tier` from the enclosing entry that names them. A measure that
    could not be computed is a row with an empty value, so a reader sees it was looked for."""
    names = {r["run"] for r in panel.get("rows", [])}
    out = tidy_panel_rows(panel)
    fields = cast(dict[str, Any], panel)  # the statistics are walked by name
    blocks = [(k, fields[k]) for k in PANEL_STATISTICS if k in fields]
    blocks += list((panel.get("tables") or {}).items())
    for table, data in blocks:
        for ident, path, value in _leaves(data, {}, [], names):
            out.append(
                [
                    table,
                    ident.get("run", ""),
                    "",
                    ".".join(path),
                    "",
                    value,
                    "",
                    "",
                    "",
                    "",
                    ident.get("family", ""),
                    ident.get("tier", ""),
                ]
            )
    return out


Leaf = tuple[dict[str, str], list[str], str | int | float]  # (identity, path, value: "" where not computed)


def _leaves(obj: Any, ident: dict[str, str], path: list[str], names: set[str]) -> Iterator[Leaf]:
    """(identity, path, value) for each number (or None) under `obj`; strings other than identities are labels,
    not numbers, and are left to the JSON export."""
    if isinstance(obj, dict):
        yield from _dict_leaves(obj, ident, path, names)
    elif isinstance(obj, (list, tuple)):
        yield from _list_leaves(obj, ident, path, names)
    elif obj is None or isinstance(obj, bool):
        yield ident, path, "" if obj is None else int(obj)
    elif isinstance(obj, (int, float)):
        yield ident, path, "" if math.isnan(obj) else obj


def _is_identity(key: Any, value: Any) -> bool:
    """Whether a dict's field says whose numbers it holds (a run, family or tier named, or None)."""
    return key in IDENTITY and (value is None or isinstance(value, str))


def _dict_leaves(obj: Any, ident: dict[str, str], path: list[str], names: set[str]) -> Iterator[Leaf]:
    """A dict's leaves: its identity fields name whose numbers they are (columns, not path parts), and a key that is
    a run's name names the run below it; every other key joins the path."""
    ident = {**ident, **{k: obj[k] or "" for k in IDENTITY if k in obj and _is_identity(k, obj[k])}}
    for key, value in obj.items():
        if _is_identity(key, value):
            continue
        sub = {**ident, "run": str(key)} if str(key) in names and "run" not in ident else ident
        yield from _leaves(value, sub, [*path, str(key)], names)


def _list_leaves(obj: Any, ident: dict[str, str], path: list[str], names: set[str]) -> Iterator[Leaf]:
    """A list's leaves: an entry named by its identity fields keeps the list's path when those fields tell the
    entries apart; otherwise its position joins the path."""
    distinct = len(obj) > 0 and _distinct(obj)
    for i, value in enumerate(obj):
        named = isinstance(value, dict) and any(k in value for k in IDENTITY)
        yield from _leaves(value, ident, path if named and distinct else [*path, str(i)], names)


def _distinct(entries: Sequence[Any]) -> bool:
    """Whether a list's entries are told apart by their identity fields alone (else the position stays in the path)."""
    keys = [tuple(e.get(k) for k in IDENTITY) if isinstance(e, dict) else None for e in entries]
    return None not in keys and len(set(keys)) == len(keys)


def panel_cells(panel: Mapping[str, Any]) -> tuple[tuple, list[tuple]]:
    """Table 2's text cells (the leaderboard's rows are read by the same columns)."""
    cols = [c for c, _ in PANEL_COLUMNS]
    rows = []
    for r in panel["rows"]:
        cells = []
        for c in cols:
            v = r[c]  # a PanelRow, or a leaderboard row: both keyed by PANEL_COLUMNS' labels
            text = num(v, 0 if c == "tokens" else 2) if c in ("calls/turn", "tokens", "turns", "points") else pct(v)
            if r["run"] in panel["best"].get(c, ()):
                text += " *"
            cells.append(text)
        name = r["run"] if r.get("ablation", "full") == "full" else f"{r['run']} [{r['ablation']}]"
        rows.append((name, *cells))
    return ("run", *cols), rows


def grouped_header(panel: PanelReport, header: tuple) -> tuple:
    """Column headers with the paper's Table 2 groups (Search / Synthesis / Tool use / Resources) on the first
    column of each group."""
    first = {cols[0]: group for group, cols in ((g["group"], g["columns"]) for g in panel.get("groups", [])) if group}
    return tuple(f"{first[h]}: {h}" if h in first else h for h in header)


def panel_title(panel: PanelReport, n_runs: int) -> str:
    """'panel · 3 runs · cells over the 58 items common to all · * best of the evaluated models (tests beside)'
    (the cells are computed on those; the marks stand as the values do, the paired tests are in their table)."""
    n = panel["n_common_items"]
    items = counted(n, "item") if n_runs == 1 else f"cells over the {counted(n, 'item')} common to all"
    return f"panel · {counted(n_runs, 'run')} · {items}" + (
        " · * best of the evaluated models (tests beside)" if panel.get("best") else ""
    )


def error_line(errors: RowErrors | None) -> str | None:
    """'2 of 60 ended in error (3.3%) · 5 of 60 met an API error (8.3%) · 3 replies cut off, 1 call lost', or None
    when a run met no error at all (the panel's cells say nothing about failures)."""
    if not errors:
        return None
    ended, met, cut = errors.get("error") or [0, 0], errors.get("api_error") or [0, 0], errors.get("cut_off") or {}
    if not (ended[0] or met[0] or cut.get("turns")):
        return None
    parts = [
        f"{ended[0]:g} of {ended[1]} ended in error ({pct(ended[0] / ended[1] if ended[1] else None)})",
        f"{met[0]:g} of {met[1]} met an API error ({pct(met[0] / met[1] if met[1] else None)})",
    ]
    if cut.get("turns"):
        parts.append(f"{counted(cut['turns'], 'reply', 'replies')} cut off, {counted(cut['calls_lost'], 'call')} lost")
    return " · ".join(parts)


def panel_stat_lines(panel: PanelReport) -> list[str]:
    """Cronbach's α (items as components), the item-total correlations and each run's run-to-run spread (Table 17)."""
    lines = [_alpha_line(panel), _item_total_line(panel.get("item_total_correlation"))]
    lines += [f"{r['run']}: {error_line(r.get('errors'))}" for r in panel["rows"] if error_line(r.get("errors"))]
    lines += [
        f"replicates of {name}: mean {pct(spread['mean'])}, run-to-run SD (population, Table 17) "
        f"{pct(spread['std'])}, range {pct(spread['range'])} (n = {spread['n']})"
        for name, spread in (panel.get("replicates") or {}).items()
        if spread
    ]
    return [line for line in lines if line]


def _alpha_line(panel: PanelReport) -> str:
    """Cronbach's α over the evaluated runs and the items' coverage buckets ("" without coverage)."""
    coverage = panel.get("coverage")
    if not coverage:
        return ""
    alpha = panel.get("cronbach_alpha")
    return (
        f"Cronbach's α (items as components, runs as respondents): "
        f"{'undefined (the run totals do not vary)' if alpha is None else f'{alpha:.3f}'}; item coverage: "
        + " · ".join(f"{k} {v}" for k, v in coverage["counts"].items())
    )


def _item_total_line(itc: dict[str, float | None] | None) -> str:
    """How many items have a corrected item-total correlation, and the (at most five) most negative ones."""
    if not itc:
        return ""
    valued = {k: v for k, v in itc.items() if v is not None}
    negative = sorted((v, k) for k, v in valued.items() if v < 0)
    listed = ", ".join(f"{k} {v:+.2f}" for v, k in negative[:5]) + (" …" if len(negative) > 5 else "")
    return (
        f"corrected item-total correlation (across runs): {len(valued)} items with a value, {len(negative)} negative"
        + (": " + listed if negative else "")
    )


def bigram_panel_line(panel: PanelReport) -> str:
    """The panel's bigrams kept (present in at least half of the runs) and the two extreme mean Δ-accuracies."""
    kept = [b for b in panel.get("bigram_panel") or [] if b.get("mean_delta") is not None]
    if not kept:
        return ""
    n_runs = len(panel.get("rows") or [])
    hi = max(kept, key=lambda b: b["mean_delta"] or 0.0)  # every kept bigram has a mean Δ
    lo = min(kept, key=lambda b: b["mean_delta"] or 0.0)

    def one(b: PanelBigram) -> str:
        return f"{_arrow(b['bigram'])} {points(b['mean_delta'])} (present in {b['n_present']}/{n_runs})"

    return (
        f"bigram panel: {len(kept)} bigrams present in at least half of the {n_runs} runs; highest mean Δacc "
        f"{one(hi)}, lowest {one(lo)}"
    )
