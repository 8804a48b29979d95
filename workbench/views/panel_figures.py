"""The panel's figures drawn as text with plotext: Figure 2 (generation gaps), Figure 4 (item difficulty) and
Figure 5 (accuracy against paper recall), each sized to what the caller's screen leaves."""

from __future__ import annotations

import math

from workbench.service.records.panel import Figure5Point, PanelReport
from workbench.views.cells import pct
from workbench.views.lineage import TIER_LABELS
from workbench.views.panel_tables import edge_range


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
