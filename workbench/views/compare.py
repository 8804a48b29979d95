"""Two runs compared, as text cells (the batch table and the TUI's compare screen show these very strings)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

from workbench.service.records.compare import CompareReport, CompareRow, CompareSide, Separation
from workbench.views.cells import NOT_MEASURED, counted, frac, num, pct, points, sig

MEAN_AXES = ("calls/turn", "tokens", "turns", "points")


COMPARE_HEADER = ("axis", "n", "A", "B", "Δ (B−A)", "95% CI of Δ", "McNemar p", "Holm p")


AGREEMENT_LABELS = {
    "both_right": "both right",
    "only_a": "only A right",
    "only_b": "only B right",
    "both_wrong": "both wrong",
}


def compare_rows(cmp: CompareReport) -> list[tuple[str, ...]]:
    """The compared axes as text cells (the batch table and the TUI's compare screen show these very strings):
    each row's n (the items its Δ and test are on), A, B, Δ, its interval ("no variation" when every resample
    gave the same Δ), McNemar's p and its Holm-adjusted p. A conversion row is on the items both runs recalled;
    the marginal conversions follow it on a row of their own, labelled."""
    rows: list[tuple[str, ...]] = []
    for r in cmp["rows"]:
        rows.append(_compare_row(r))
        if "a_marginal" in r:
            a, b = _marginal_cell(r, "a"), _marginal_cell(r, "b")
            rows.append((f"{r['axis']} marginal", "", a, b, "", "", "", ""))
    return rows


def _compare_row(r: CompareRow) -> tuple[str, ...]:
    """One compared axis: its n, A, B, Δ, interval, McNemar's p and Holm-adjusted p; a mean axis (calls/turn,
    tokens, …) in its own units, a proportion in percent and its Δ in points."""
    mean = r["axis"] in MEAN_AXES
    digits = 0 if r["axis"] == "tokens" else 2  # tokens are whole numbers: no decimals in values or Δ
    value: Callable[[float | None], str] = partial(num, digits=digits) if mean else pct
    change: Callable[[float], str] = partial(_signed, digits=digits) if mean else points
    delta = NOT_MEASURED if r["delta"] is None else change(r["delta"])
    low, high = r["ci_low"], r["ci_high"]
    ci = (
        NOT_MEASURED
        if low is None or high is None
        else "no variation"
        if r.get("ci_no_variation")
        else f"[{change(low)}, {change(high)}]"
    )
    n = "" if r.get("n") is None else f"{r['n']:,}"
    return (r["axis"], n, value(r["a"]), value(r["b"]), delta, ci, sig(r.get("p")), sig(r.get("p_holm")))


def _signed(value: float, digits: int) -> str:
    """A mean axis's Δ with its sign, thousands separated, to ``digits`` decimals."""
    return f"{value:+,.{digits}f}"


def _marginal_cell(row: CompareRow, side: CompareSide) -> str:
    """One run's marginal conversion on a compared row, with its counts when it has a denominator."""
    pair = (row.get("counts_marginal") or {}).get(side)
    counts = f" ({frac(pair)})" if pair and pair[1] else ""
    return pct(row.get("a_marginal") if side == "a" else row.get("b_marginal")) + counts


# what each compared axis measures, in words (the table's names are the paper's short ones: `PR st`, `Conv mt`)
AXIS_WORDS = {
    "accuracy": "items answered right",
    "PR": "paper recall (every gold paper read)",
    "SR": "section recall (every gold paper's labelled section read)",
    "Conv": "conversion (right among the items both runs recalled)",
    "calls/turn": "tool calls per turn that made one",
    "tokens": "mean tokens per trajectory (the protocol's count)",
    "turns": "mean turns per trajectory",
    "points": "mean points spent per trajectory",
    "MaxTok": "trajectories ended by the token cap",
    "MaxTurn": "trajectories ended by the turn cap",
    "MaxBudget": "trajectories ended by the points budget",
    "Err": "trajectories ended by an error",
    "API err": "trajectories with an API error",
}
MARGINAL_WORDS = "each run's conversion over its own recalled items (right/recalled)"
SPLIT_WORDS = {"st": "single-target items", "mt": "multi-target items"}


def axis_words(axis: str) -> str:
    """A compared row's name in words: `PR st` → "PR st = paper recall (every gold paper read), single-target
    items"; a marginal conversion row says it is each run's over its own recalled items."""
    name, _, rest = axis.partition(" ")
    split, _, marginal = rest.partition(" ")
    words = AXIS_WORDS.get(axis) or AXIS_WORDS.get(name)
    if words is None:
        return axis
    if marginal == "marginal":
        words = MARGINAL_WORDS
    where = f", {SPLIT_WORDS[split]}" if split in SPLIT_WORDS and axis not in AXIS_WORDS else ""
    return f"{axis} = {words}{where}"


ATTRIBUTION_HEADER = ("wrong answers chose", "A", "B", "Δ rate (B−A)", "95% CI of Δ")


def attribution_rows(cmp: CompareReport) -> list[tuple[str, ...]]:
    """Distractor attribution side by side: per option type, each run's count and rate among its wrong answers,
    the difference of the rates and its paired bootstrap interval (the batch table and the Failures tab)."""
    att_a, att_b = cmp["attribution"]["a"], cmp["attribution"]["b"]
    deltas = cmp["attribution"].get("delta") or {}
    rows: list[tuple[str, ...]] = [("wrong answers", str(att_a["n_wrong"]), str(att_b["n_wrong"]), "", "")]
    for kind in sorted(set(att_a["counts"]) | set(att_b["counts"])):
        cells = [f"{d['counts'].get(kind, 0)} ({100 * d['rates'].get(kind, 0):.0f}%)" for d in (att_a, att_b)]
        d = deltas.get(kind)
        delta = points(d["delta"] if d else None)
        ci = (
            NOT_MEASURED
            if d is None or d["ci_low"] is None
            else "no variation"
            if d["ci_no_variation"]
            else f"[{points(d['ci_low'])}, {points(d['ci_high'])}]"
        )
        rows.append((f"  → {kind}", *cells, delta, ci))
    return rows


def compare_heading(cmp: CompareReport) -> str:
    def who(side: str, name: str) -> str:
        run = cmp["runs"].get(side)
        if run is None:
            return f"{name} (?)"
        agent = run["agent"] + (f" {run['model']}" if run.get("model") else "")
        return f"{run['name']} ({agent})"

    only = (("A", cmp["only_in_a"]), ("B", cmp["only_in_b"]))
    extra = "".join(f" · {n} only in {side}" for side, n in only if n)
    return f"A = {who('a', cmp['a'])} · B = {who('b', cmp['b'])} · {cmp['n_common']} common items (replicate 0){extra}"


def token_line(cmp: CompareReport) -> str | None:
    """'tokens per trajectory, the protocol's count (prompt incl. cache reads; cache hit): A 220 (1,000; 80.0%) ·
    B 1,020 (1,000; 0.0%)', or None when neither run measured tokens: the tokens row is the protocol's count, which
    leaves cache reads out, so what each server's cache held is shown beside it."""
    tokens = cmp["tokens"]
    sides = [(side.upper(), tokens[side]) for side in ("a", "b")]
    if all(t["prompt_incl_cache"] is None for _, t in sides):
        return None
    cells = [
        f"{side} {num(t['protocol'], 0)} ({num(t['prompt_incl_cache'], 0)}; {pct(t['cache_hit_rate'])})"
        for side, t in sides
    ]
    return "tokens per trajectory, the protocol's count (prompt incl. cache reads; cache hit): " + " · ".join(cells)


def compare_legend(cmp: CompareReport) -> str:
    m = (cmp.get("holm") or {}).get("m")
    return (
        f"n: the items each row is on. Δ intervals: paired bootstrap over the common items (B = "
        f"{cmp.get('n_boot', 10_000):,}, seed {cmp.get('seed', 0)}); p: exact McNemar on the paired 0/1 outcome; "
        f"Holm p: adjusted together over the comparison's {m if m is not None else ''} tests. Conv: A, B, Δ, "
        "interval and p on the items both runs recalled (the paper's Table 12 set); 'marginal': each run's "
        "conversion over its own recalled items."
    )


SEPARATION_WORDS = {"PR": "retrieves the gold papers", "SR": "reads the labelled sections", "Conv": "converts"}


def separation_sentence(sep: Separation) -> str:
    """The compare report's `separation` in plain language: the split that separates the runs with its Δ in
    percentage points and its Holm-adjusted McNemar p, or why none is named."""
    over = f" over {sep['family']} tests" if sep.get("family") else ""
    state = sep["state"]
    if state == "incomparable":
        return "No recall or conversion split can be compared."
    if state == "equal":
        return "A and B do not differ on recall or conversion."
    if state == "unsupported":
        return (
            f"No axis separates the runs: no recall or conversion difference has a McNemar p < 0.05 after "
            f"Holm's adjustment{over}."
        )
    lead = "retrieves as well as A but " if sep["same_recall"] else ""
    where = "single-target" if sep["split"] == "st" else "multi-target"
    if sep["kind"] == "Conv" and sep.get("n") is not None:
        where = f"the {sep['n']} {where} items both recalled"
    else:
        where += " items"
    direction = "more" if sep["delta"] > 0 else "less"
    points = counted(round(abs(sep["delta"]) * 100), "percentage point")
    return (
        f"B {lead}{SEPARATION_WORDS[sep['kind']]} {points} {direction} than A on {where} (McNemar p = "
        f"{sep['p_holm']:.2g} after Holm's adjustment{over})."
    )


class CompareDocument(CompareReport):
    """The compare report as `--batch compare --format json` and the TUI's export write it: the data, and the
    sentence naming the separating axis."""

    summary: str


def compare_document(cmp: CompareReport) -> CompareDocument:
    """`cmp` with its `summary` (`separation_sentence`)."""
    return CompareDocument(**cmp, summary=separation_sentence(cmp["separation"]))
