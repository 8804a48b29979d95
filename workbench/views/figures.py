"""The scaling figures drawn as text with plotext (the plateau, the verification gap): the CLI prints them and
the TUI shows them in its theme's colours."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from workbench.service.records.parallel import JudgeJson, ParallelReport, Strategy
from workbench.service.records.sequential import Plateau, RegistryTable, StrategyComparison, StrategyStudy, Transition
from workbench.views.axis import ValueAxis, value_axis
from workbench.views.scaling import SHORT, Palette, flags, strategies


def _figure(width: int, height: int):
    import plotext as plt

    plt.main()  # after subplots the active figure is a subplot: reset the whole (master) figure
    plt.clear_figure()
    plt.limit_size(False, False)  # the widget's size, not the (headless or real) terminal's, bounds the figure
    plt.theme("clear")
    plt.plotsize(max(20, width), max(6, height))
    return plt


PANEL_OVERHEAD = 4  # a plateau panel's rows besides its values: title, frame top and bottom, x tick labels
FIGURE_OVERHEAD = 5  # the parallel figure's: title, frame top and bottom, x tick labels, x label


def _axis(plt, axis: ValueAxis) -> None:
    """Put the current (sub)plot's y range and ticks on `axis`."""
    plt.ylim(axis.lo, axis.hi)
    plt.yticks(axis.ticks, axis.labels)


def _build(plt, palette: Palette | None) -> str:
    text = plt.build()
    return text if palette else plt.uncolorize(text)


def bar_label(t: Transition) -> str:
    """The transition with its decision in words, so a colourless bar still says what it is."""
    if not t.get("tested", True):
        sign = "not tested"
    else:
        sign = "gain" if t["significant"] else ("borderline" if t.get("borderline") else "no gain")
    return f"{t['from']}→{t['to']} {sign}"


_SIGN_MARK = {"gain": "+", "borderline": "~", "no gain": "-", "not tested": "?"}


def bar_ticks(transitions: list[Transition], width: int) -> list[str]:
    """One label per bar, the longest form that fits its slot: plotext drops a tick label that would overlap
    its neighbour (or the frame), so `16→32 no gain` for a few bars, `16→32 -` (+ gain, ~ borderline, - no
    gain, ? not tested; the table above says it in words) or `16→32` when many share the width, the
    transition's number if even that does not fit."""
    slot = max((width - 12) // max(len(transitions), 1) - 2, 1)  # less the y-axis labels, a margin each side
    marked = [f"{t['from']}→{t['to']} {_SIGN_MARK[bar_label(t).split(' ', 1)[1]]}" for t in transitions]
    for labels in ([bar_label(t) for t in transitions], marked, [f"{t['from']}→{t['to']}" for t in transitions]):
        if max(map(len, labels)) <= slot:
            return labels
    return [str(i) for i in range(1, len(transitions) + 1)]


def _row_limit(max_rows: int | None) -> int | None:
    """The value axis's rows when the whole figure may take at most `max_rows` (the terminal's, or the screen's)."""
    return None if max_rows is None else max(max_rows - FIGURE_OVERHEAD, 3)


def plateau_figure(
    result: Plateau, width: int, height: int, palette: Palette | None, max_rows: int | None = None
) -> str:
    """Accuracy per budget (line) with the plateau marked, above C_k per transition (bars coloured by sign).
    Each panel takes half of `height`, or more when its values need the rows (`value_axis`): the figure may be
    taller than asked, but never than `max_rows` (the terminal's)."""
    pal = palette or {}
    transitions = result["transitions"]
    top, bottom = _plateau_axes(result, height, max_rows)
    upper = top.rows + PANEL_OVERHEAD
    lower = bottom.rows + PANEL_OVERHEAD if bottom else max(PANEL_OVERHEAD, height - upper)
    plt = _figure(width, upper + lower)  # taller than asked when the values need the rows
    plt.subplots(2, 1)
    plt.subplot(1, 1)
    plt.plotsize(max(20, width), upper)
    _accuracy_panel(plt, result, top, pal)
    plt.subplot(2, 1)
    plt.plotsize(max(20, width), lower)
    if transitions:
        _bounds_panel(plt, transitions, bottom, width, pal)
    return _build(plt, palette)


def _plateau_axes(result: Plateau, height: int, max_rows: int | None) -> tuple[ValueAxis, ValueAxis | None]:
    """The value axes of the plateau's two panels, each half of `height` (of `max_rows` at most): accuracy, and the
    C_k bars standing on zero (None without a bound)."""
    bounds = [c for t in result["transitions"] if (c := t["c_k"]) is not None]
    cap = None if max_rows is None else max(max_rows, 2 * PANEL_OVERHEAD + 4)
    top = value_axis(
        result["accuracy"], height // 2 - PANEL_OVERHEAD, limit=None if cap is None else cap // 2 - PANEL_OVERHEAD
    )
    if not bounds:
        return top, None
    # bars stand on zero: different bounds get different heights
    limit = None if cap is None else cap - cap // 2 - PANEL_OVERHEAD
    return top, value_axis(bounds, height - height // 2 - PANEL_OVERHEAD, bars=True, limit=limit)


def _accuracy_panel(plt, result: Plateau, axis: ValueAxis, pal: Palette) -> None:
    """The upper panel: accuracy per budget, the plateau's budget marked, the caveats in the title."""
    labels = [str(b) for b in result["budgets"]]
    x = list(range(1, len(labels) + 1))
    k = result.get("k_star")
    caveats = flags(result)
    plt.title(
        f"accuracy by budget · plateau at {result.get('plateau_budget')} (k*={k})"
        + (f" · {', '.join(caveats)}" if caveats else "")
    )
    plt.plot(x, result["accuracy"], marker="dot", color=pal.get("line"))
    _axis(plt, axis)
    if k:
        plt.vline(k, pal.get("mark"))
        plt.text(
            f"plateau {result.get('plateau_budget')}",
            k,
            max(result["accuracy"]),
            color=pal.get("mark"),
            alignment="left",
        )
    plt.xticks(x, labels)


def _bounds_panel(plt, transitions: list[Transition], axis: ValueAxis | None, width: int, pal: Palette) -> None:
    """The lower panel: C_k per transition as bars, coloured by the decision the label states (under Holm a C_k > 0
    can be not significant); untested transitions have no bound and no bar."""
    positions = list(range(1, len(transitions) + 1))
    plt.title("C_k: one-sided lower bound of the gain (coloured: significant gain or not)")
    for role, significant in (("gain", True), ("loss", False)):
        xs = [
            p
            for p, t in zip(positions, transitions, strict=True)
            if t["significant"] is significant and t.get("c_k") is not None
        ]
        if xs:  # one series per decision, drawn only where it applies (no zero-height bars)
            plt.bar(xs, [transitions[p - 1]["c_k"] for p in xs], color=pal.get(role), width=0.5)
    if axis:
        _axis(plt, axis)
    plt.xticks(positions, bar_ticks(transitions, width))
    plt.xlim(0.5, len(transitions) + 0.5)


MARKERS = {"pass_at_k": "o", "majority": "x", "pointwise": "+", "pairwise": "*"}  # tell the lines apart uncoloured


def parallel_figure(
    report: ParallelReport, width: int, height: int, palette: Palette | None, max_rows: int | None = None
) -> str:
    """pass@k and each committing strategy against k (the gap is the distance between the lines), with a legend;
    each line has its own marker, so the series are told apart without colour (NO_COLOR, an ANSI theme). Taller
    than `height` when two values would otherwise share a row (`value_axis`), but never than `max_rows`."""
    pal = palette or {}
    rows = report["per_k"]
    x = [r["k"] for r in rows]
    names = strategies(report)
    values = [r[n] for r in rows for n in names]
    axis = value_axis(values, height - FIGURE_OVERHEAD, limit=_row_limit(max_rows))
    plt = _figure(width, axis.rows + FIGURE_OVERHEAD)  # taller than asked when the values need the rows
    judge = f" (judge {report['judge']})" if report.get("judge") else ""
    plt.title(f"pass@k vs committed accuracy{judge} · ░ gap to the best strategy")
    if len(names) > 1 and len(x) > 1:
        _gap_band(plt, report, names[1:], width, axis.rows, pal)
    for name in names:
        plt.plot(x, [r[name] for r in rows], label=SHORT[name], marker=MARKERS[name], color=pal.get(name))
    _axis(plt, axis)
    plt.xticks(x, list(map(str, x)))
    plt.xlabel("k")
    return _build(plt, palette)


def _gap_band(plt, report: ParallelReport, committing: list[Strategy], width: int, rows: int, pal: Palette) -> None:
    """Shade the band between pass@k and the best committing strategy at each k (the verification gap)."""
    per_k = report["per_k"]
    best = [max(r[n] for n in committing) for r in per_k]
    gx, gy = gap_points([r["k"] for r in per_k], best, [r["pass_at_k"] for r in per_k], width, rows)
    if gx:
        plt.scatter(gx, gy, marker="░", color=pal.get("shade"))


def gap_points(
    x: Sequence[float], low: Sequence[float], high: Sequence[float], width: int, height: int
) -> tuple[list[float], list[float]]:
    """Points filling the band between two piecewise-linear curves, about two per character cell each way
    (plotext has no fill-between: a dense scatter drawn under the lines shades the band, in any theme)."""
    top = max(*high, *low)
    bottom = min(*high, *low)
    span = (top - bottom) or 1.0
    columns = max(2, 2 * width)
    step_y = span / max(2, 2 * height)
    gx: list[float] = []
    gy: list[float] = []
    for i in range(columns + 1):
        at = x[0] + (x[-1] - x[0]) * i / columns
        j = max(0, min(len(x) - 2, next((n for n in range(len(x) - 1) if x[n + 1] >= at), len(x) - 2)))
        w = (at - x[j]) / ((x[j + 1] - x[j]) or 1)
        lo = low[j] + (low[j + 1] - low[j]) * w
        hi = high[j] + (high[j + 1] - high[j]) * w
        y = lo + step_y
        while y < hi - step_y / 2:
            gx.append(at)
            gy.append(y)
            y += step_y
    return gx, gy


STRATEGY_MARKERS = ("o", "x", "+", "*", "#")  # one per strategy group, told apart without colour
STRATEGY_COLOURS = ("line", "gain", "mark", "loss", "shade")  # palette roles cycled over the strategies


def strategies_figure(
    comparison: StrategyComparison, width: int, height: int, palette: Palette | None, max_rows: int | None = None
) -> str:
    """The strategies overlaid (the study's Figure 6): accuracy against budget per strategy, each level's Wilson
    interval as a vertical bar, and each strategy's plateau budget (k*) circled; the legend names the k*."""
    pal = palette or {}
    budgets = _budgets(comparison)
    at = {b: i + 1 for i, b in enumerate(budgets)}
    axis = value_axis(_interval_bounds(comparison) or [0.0, 1.0], height - FIGURE_OVERHEAD, limit=_row_limit(max_rows))
    plt = _figure(width, axis.rows + FIGURE_OVERHEAD)
    plt.title(f"accuracy by {comparison['axis']} budget per strategy · bars: 95% Wilson · ◉ plateau (k*)")
    for i, study in enumerate(comparison["studies"]):
        _strategy_line(plt, study, i, at, pal.get(STRATEGY_COLOURS[i % len(STRATEGY_COLOURS)]))
    _axis(plt, axis)
    plt.xticks(list(at.values()), budgets)
    plt.xlabel(f"{comparison['axis']} budget")
    return _build(plt, palette)


def _budgets(comparison: StrategyComparison) -> list[str]:
    """Every budget of the compared strategies, once each, in budget order."""
    from stats.plateau import parse_budget

    return sorted({str(b) for s in comparison["studies"] for b in s["budgets"]}, key=parse_budget)


def _interval_bounds(comparison: StrategyComparison) -> list[float]:
    """The bounds of every level's Wilson interval: the figure's value axis spans them."""
    return [v for s in comparison["studies"] for lv in s["levels"] for v in (lv["accuracy_ci"] or []) if v is not None]


def _strategy_line(
    plt, study: StrategyStudy, i: int, at: dict[str, int], colour: tuple[int, int, int] | str | None
) -> None:
    """The i-th strategy's accuracy per budget (at its budget's position, offset a little so two strategies' bars
    stand apart), each level's Wilson interval as a bar, its plateau level circled."""
    levels = [lv for lv in study["levels"] if lv["accuracy"] is not None]
    x = [at[str(lv["budget"])] + 0.08 * i for lv in levels]
    for xi, lv in zip(x, levels, strict=True):
        if lv["accuracy_ci"]:
            plt.plot([xi, xi], lv["accuracy_ci"], color=colour, marker="│")
    plt.plot(
        x,
        [lv["accuracy"] for lv in levels],
        marker=STRATEGY_MARKERS[i % len(STRATEGY_MARKERS)],
        color=colour,
        label=f"{study['strategy']} (k*={study['k_star']}: {study['plateau_budget']})",
    )
    star = [(xi, lv["accuracy"]) for xi, lv in zip(x, levels, strict=True) if lv["budget"] == study["plateau_budget"]]
    if star:
        plt.scatter([star[0][0]], [star[0][1]], marker="◉", color=colour)


JUDGE_METRICS: tuple[tuple[Literal["tpr", "fpr", "precision", "accuracy", "self_choice"], str], ...] = (
    ("tpr", "TPR"),
    ("fpr", "FPR"),
    ("precision", "precision"),
    ("accuracy", "accuracy"),
    ("self_choice", "self-choice"),
)


def judges_figure(
    judges: list[JudgeJson], width: int, height: int, palette: Palette | None, max_rows: int | None = None
) -> str:
    """Every judge of a run on one figure (self, external, evidence): its rates against the truth, one line each."""
    pal = palette or {}
    plt = _figure(width, min(max(10, height), max_rows or max(10, height)))
    plt.title("judges against the truth (pointwise verdicts)")
    x = list(range(1, len(JUDGE_METRICS) + 1))
    for i, judge in enumerate(judges):
        points = [(xi, judge[key]) for xi, (key, _) in zip(x, JUDGE_METRICS, strict=True) if judge.get(key) is not None]
        if points:
            plt.plot(
                [p[0] for p in points],
                [p[1] for p in points],
                label=f"{judge['role']}: {judge['judge']}",
                marker=STRATEGY_MARKERS[i % len(STRATEGY_MARKERS)],
                color=pal.get(STRATEGY_COLOURS[i % len(STRATEGY_COLOURS)]),
            )
    plt.ylim(0, 1)
    plt.xticks(x, [label for _, label in JUDGE_METRICS])
    return _build(plt, palette)


REGISTRY_MARKERS = {"full": "o", "short": "x", "names": "+"}
REGISTRY_COLOURS = {"full": "pass_at_k", "short": "majority", "names": "pointwise"}  # palette roles reused


def registry_points(registry: RegistryTable) -> dict[str, list[tuple[float, float, float | None]]]:
    """detail → [(tool count, accuracy, out-of-domain share)], the plain run (count 0) opening every line."""
    plain = [r for r in registry["rows"] if r["count"] == 0]
    lines: dict[str, list[tuple[float, float, float | None]]] = {}
    for r in registry["rows"]:
        if r["count"] == 0 or not r["accuracy"][1] or r["detail"] is None:  # a level with tools has its detail
            continue
        lines.setdefault(r["detail"], [])
        lines[r["detail"]].append((r["count"], r["accuracy"][0] / r["accuracy"][1], r["share"]))
    for _detail, points in lines.items():
        if plain and plain[0]["accuracy"][1]:
            points.insert(0, (0, plain[0]["accuracy"][0] / plain[0]["accuracy"][1], 0.0))
    return lines


def registry_figure(
    registry: RegistryTable, width: int, height: int, palette: Palette | None, max_rows: int | None = None
) -> str:
    """Accuracy against the number of out-of-domain tools, one line per description detail (the study's registry-size
    ablation), and the out-of-domain call share of the full-detail runs as a dotted line; each line has its own
    marker, so they are told apart without colour."""
    pal = palette or {}
    lines = registry_points(registry)
    axis = value_axis(_registry_values(lines) or [0.0, 1.0], height - FIGURE_OVERHEAD, limit=_row_limit(max_rows))
    plt = _figure(width, axis.rows + FIGURE_OVERHEAD)
    plt.title("accuracy vs extra tools, per detail · ood share (full) dotted")
    _detail_lines(plt, lines, pal)
    _share_line(plt, lines, pal)
    _axis(plt, axis)
    xs = sorted({x for pts in lines.values() for x, _, _ in pts})
    if xs:
        plt.xticks(xs, [str(int(x)) for x in xs])
    plt.xlabel("out-of-domain tools offered")
    return _build(plt, palette)


def _registry_values(lines: dict[str, list[tuple[float, float, float | None]]]) -> list[float]:
    """Every accuracy and out-of-domain share drawn: the value axis spans them."""
    return [v for pts in lines.values() for _, acc, share in pts for v in (acc, share) if v is not None]


def _detail_lines(plt, lines: dict[str, list[tuple[float, float, float | None]]], pal: Palette) -> None:
    """Accuracy against the tools offered, one line per description detail, each with its own marker."""
    for detail, pts in lines.items():
        plt.plot(
            [p[0] for p in pts],
            [p[1] for p in pts],
            label=f"acc {detail}",
            marker=REGISTRY_MARKERS.get(detail, "o"),
            color=pal.get(REGISTRY_COLOURS.get(detail, "line")),
        )


def _share_line(plt, lines: dict[str, list[tuple[float, float, float | None]]], pal: Palette) -> None:
    """The out-of-domain call share, dotted, of the full-detail runs (else of the first detail drawn)."""
    full = lines.get("full") or next(iter(lines.values()), [])
    shares = [(x, s) for x, _, s in full if s is not None]
    if shares:
        plt.plot([x for x, _ in shares], [s for _, s in shares], label="ood share", marker="·", color=pal.get("loss"))
