"""The general-agent setting in words: the out-of-domain measures of a run, a compare's sides, the registry table."""

from __future__ import annotations

from workbench.service.records.compare import CompareReport
from workbench.service.records.general import AgainstPlain, OffDomainMeasures, SettingShown
from workbench.service.records.report import RunReport
from workbench.service.records.sequential import RegistryTable
from workbench.views.cells import frac, num, pct

Row = tuple[str, str, str, str, str]
MEAN_AXES = ("calls/turn", "tokens", "turns", "points")  # the compare's means; the other axes are proportions


def _share(pair: list | None) -> str:
    return "—" if not pair else f"{pct(pair[0] / pair[1] if pair[1] else None)} ({frac(pair)})"


def setting_text(setting: SettingShown) -> str:
    """'builtin, 40 tools of 50, full descriptions, 1 point a call, order seed 0, tool block ≈1,083 tokens'."""
    detail = {"full": "full descriptions", "short": "one-line summaries", "names": "names and parameters only"}
    block = setting.get("tool_block_tokens")
    tokens = block["extra"] if block else None
    unit = "point" if setting.get("cost") == 1 else "points"
    return (
        f"{setting['source']}, {setting['count']} tools of {setting.get('registry_size', '?')}, "
        f"{detail.get(setting['detail'] or '', setting['detail'])}, {setting['cost']} {unit} a call, order seed "
        f"{setting['seed']}" + (f", extra tool block ≈{tokens:,} tokens (characters / 4)" if tokens else "")
    )


def general_rows(report: RunReport) -> list[Row]:
    """The report's general-setting section as (section, metric, ST, MT, all) cells (none for a plain run)."""
    g = report.get("general_setting")
    if not g:
        return []
    return _measure_rows(g) + _straying_rows(g) + _against_plain_rows(g.get("against_plain"))


GENERAL = "general setting"  # the section of the report's rows


def _measure_rows(g: OffDomainMeasures) -> list[Row]:
    """The setting, and the out-of-domain share of calls (with its interval), trajectories, points and turns."""
    iv = g.get("share_interval")
    share = _share(g["share_counts"]) + (f" [95% {pct(iv[0])} – {pct(iv[1])}]" if iv else "")
    points = _share(g["points"]) + f" · {num(g['points_per_trajectory'])} per trajectory"
    turns = _share(g["turns"]) + f" · {num(g['turns_per_trajectory'])} per trajectory"
    return [
        (GENERAL, "setting", "", "", setting_text(g["setting"])),
        (GENERAL, "out-of-domain call share", "", "", share),
        (GENERAL, "trajectories with ≥1 such call", "", "", _share(g["trajectories_with_any"])),
        (GENERAL, "points out of domain", "", "", points),
        (GENERAL, "turns out of domain", "", "", turns),
    ]


def _straying_rows(g: OffDomainMeasures) -> list[Row]:
    """The out-of-domain tools most called, and the items where the agent strayed most (share of their calls)."""
    rows: list[Row] = []
    top = list(g["per_tool"].items())[:5]
    if top:
        rows.append((GENERAL, "most called", "", "", " · ".join(f"{k} {v}" for k, v in top)))
    items = sorted(
        ((k, v) for k, v in (g.get("per_item") or {}).items() if v[1] and v[0]),
        key=lambda kv: (-kv[1][0] / kv[1][1], -kv[1][1], kv[0]),
    )[:5]
    if items:  # not only in the JSON
        rows.append((GENERAL, "items most out of domain", "", "", " · ".join(f"{k} {_share(v)}" for k, v in items)))
    return rows


def _against_plain_rows(vs: AgainstPlain | None) -> list[Row]:
    """Each axis against the plain counterpart (Δ and McNemar's p), or that the store holds none."""
    if not vs:
        return [(GENERAL, "vs plain", "", "", "no plain counterpart in the store (the same run without the setting)")]
    rows: list[Row] = []
    for r in vs["rows"]:
        if r["delta"] is None:
            continue
        p = "" if r["p"] is None else f", McNemar p = {r['p']:.3g}"
        if r["axis"].lower() in MEAN_AXES:
            change = f"{num(r['a'])} → {num(r['b'])} (Δ {r['delta']:+.2f}"
        else:
            change = f"{pct(r['a'])} → {pct(r['b'])} (Δ {r['delta'] * 100:+.1f} pts"
        rows.append((GENERAL, f"{r['axis']} vs {vs['plain']}", "", "", f"{change}{p}; n = {r['n']})"))
    return rows


def compare_lines(cmp: CompareReport) -> list[str]:
    """One line per side of a compare that is in the setting."""
    out = []
    for side, g in (cmp.get("general_setting") or {}).items():
        if g:
            out.append(
                f"{side.upper()}: general setting ({setting_text(g['setting'])}): out-of-domain calls "
                f"{_share(g['share_counts'])}, trajectories with one {_share(g['trajectories_with_any'])}, "
                f"points {_share(g['points'])}, turns {_share(g['turns'])}"
            )
    return out


REGISTRY_HEADER = (
    "run",
    "extra tools",
    "detail",
    "tool tokens",
    "prompt (measured)",
    "accuracy (common items)",
    "Δ vs plain",
    "McNemar p",
    "out-of-domain share",
    "mechanism",
)


REGISTRY_NOTE = (
    "tool tokens: the tools' size in the prompt (system-prompt tool block + request schemas, the seven tools and the "
    "extras; characters / 4), as the study's Table 8 sizes its registry; prompt (measured): the median input of a "
    "trajectory's first model call as the provider counted it (— for a scripted agent); the plain run is the "
    "study's 'irrelevant tools filtered' level; accuracy over the items a level shares with the plain run "
    "(replicate 0), the items its Δ and p are computed on"
)


def registry_rows(registry: RegistryTable) -> list[tuple[str, ...]]:
    """The registry-size table as text cells."""
    rows: list[tuple[str, ...]] = []
    for r in registry["rows"]:
        acc = r["accuracy"]
        rows.append(
            (
                r["run"],
                str(r["count"]),
                r["detail"] or "—",
                "—" if r.get("tool_tokens") is None else f"≈{r['tool_tokens']:,}",
                "—" if r.get("prompt_tokens") is None else f"{r['prompt_tokens']:,.0f}",
                _share(acc),
                "—" if r["delta"] is None else f"{r['delta'] * 100:+.1f} pts",
                "—" if r["p"] is None else f"{r['p']:.3g}",
                "—" if r.get("share_counts") is None else _share(r["share_counts"]),
                r["mechanism"],
            )
        )
    return rows


def general_table(report: RunReport):
    """The general-setting rows as a rich Table (the TUI's diagnostics tab), or None for a plain run."""
    from rich.table import Table
    from rich.text import Text

    rows = general_rows(report)
    if not rows:
        return None
    table = Table(title=Text("General setting · out-of-domain tools"), title_justify="left")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for _, metric, _, _, value in rows:
        table.add_row(Text(metric), Text(value))
    return table
