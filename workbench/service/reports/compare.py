"""Two runs compared item by item: paired deltas with their intervals, McNemar's test, Holm's adjustment,
the attribution of wrong answers, and the axis that separates them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import numpy as np

from sandbox.records import is_termination
from stats import axes
from stats.axes import Table
from storage import Store
from storage.rows import RunRow, TrajectoryRow
from workbench.service.records.columns import COLUMN_TERMS, PANEL_COLUMNS
from workbench.service.records.compare import (
    AttributionDelta,
    CompareReport,
    CompareRow,
    ConvMarginals,
    Holm,
    ItemSide,
    McNemarTest,
    RunLabel,
    Separation,
    SideTokens,
    ToolUse,
)
from workbench.service.records.general import OffDomainMeasures
from workbench.service.records.report import RunReport
from workbench.service.reports.panel import PAIRED_BY_ID, _stacked, resolution_warnings
from workbench.service.reports.prompts import prompt_warnings
from workbench.service.reports.run import _dig, estimates_tokens, report_of, transition_layout

_CAPS = {"MaxTok": "token_limit", "MaxTurn": "max_turns", "MaxBudget": "budget", "Err": "error"}
# Rows beyond the panel's columns, shown when either run has any: episodes ended in error, and episodes that met
# an API error whatever their ending (a comparison without errors keeps the panel's rows and test family)
ERROR_ROWS = (
    ("Err", ("axes", "resource", "error_rate"), "error_rate"),
    ("API err", ("axes", "resource", "api_error_rate"), "api_error_rate"),
)
CACHE_GAP = 0.10  # cache-hit rates further apart than this bias a comparison of the protocol's token counts


RecallKey = Literal["paper_recall", "section_recall"]
_RECALL: dict[str, RecallKey] = {"PR": "paper_recall", "SR": "section_recall"}


def paired_outcomes(axis: str, a: TrajectoryRow, b: TrajectoryRow) -> tuple[bool, bool] | None:
    """The 0/1 outcomes McNemar compares for one item on a binary axis; None when the item is not in the
    test (another split; for conversion, not recalled by both; a side that did not measure the outcome, e.g.
    section recall on a dataset without recall labels) or the axis is not binary. An unmeasured outcome is
    never read as 0: that would test measured recall against nothing."""
    head, _, kind = axis.partition(" ")
    if kind and a.get("kind") != kind:
        return None
    if axis == "accuracy":
        return bool(a.get("correct")), bool(b.get("correct"))
    if head in _RECALL:
        return _measured_pair(a, b, _RECALL[head])
    if head == "Conv":
        if not (a.get("paper_recall") and b.get("paper_recall")):
            return None
        return bool(a.get("correct")), bool(b.get("correct"))
    if axis in _CAPS:
        return a.get("termination") == _CAPS[axis], b.get("termination") == _CAPS[axis]
    if axis == "API err":
        return bool(a.get("api_errors")), bool(b.get("api_errors"))
    return None


def _measured_pair(a: TrajectoryRow, b: TrajectoryRow, key: RecallKey) -> tuple[bool, bool] | None:
    """Both sides' 0/1 value of `key`, or None when either side did not measure it (None in the record)."""
    if a[key] is None or b[key] is None:
        return None
    return bool(a[key]), bool(b[key])


def _mcnemar_or_none(pairs: list[tuple[bool, bool] | None]) -> McNemarTest | None:
    """Exact McNemar over the measured pairs; None when no item has both sides measured."""
    from stats.significance import mcnemar_exact

    kept = [p for p in pairs if p is not None]
    if not kept:
        return None
    # stats.significance builds the record's keys in a plain dict
    return cast("McNemarTest", mcnemar_exact([x for x, _ in kept], [y for _, y in kept]))


def _side(t: TrajectoryRow) -> ItemSide:
    """What the agreement grid and the split stepper need of one run's trajectory on an item."""
    return {
        "id": t["id"],
        "answer": t.get("answer"),
        "predicted_index": t.get("predicted_index"),
        "correct": bool(t.get("correct")),
        "termination": t["termination"] if is_termination(t["termination"]) else None,
        "points": t.get("points_used"),
        "turns": t.get("turns"),
        "tokens": t.get("tokens"),
        "paper_recall": bool(t.get("paper_recall")),
        "section_recall": bool(t.get("section_recall")),
    }


def tool_use(records: Sequence[TrajectoryRow]) -> ToolUse:
    """Transitions (as `transition_report` lays them out) and the top trigram of some trajectories."""
    from stats.ngrams import top_trigram

    sequences = [r["tool_sequence"] for r in records]
    # stats.ngrams builds the record's keys in a plain dict
    return {
        "transitions": transition_layout(sequences),
        "top_trigram": top_trigram(sequences),
    }


CONVERSION_SET = "items both runs recalled (paper recall), the paper's Table 12 set"


@dataclass(frozen=True)
class _Pair:
    """Two runs' replicate-0 trajectories on their common items, and each side's report over those items."""

    run_a: RunRow
    run_b: RunRow
    ta: dict[str, TrajectoryRow]
    tb: dict[str, TrajectoryRow]
    common: list[str]
    ra: RunReport
    rb: RunReport

    @property
    def recs_a(self) -> list[TrajectoryRow]:
        return [self.ta[i] for i in self.common]

    @property
    def recs_b(self) -> list[TrajectoryRow]:
        return [self.tb[i] for i in self.common]

    def correct(self, side: dict[str, TrajectoryRow], items: list[str]) -> list[bool]:
        return [bool(side[i]["correct"]) for i in items]


def _pair(store: Store, a: str, b: str) -> _Pair:
    run_a, run_b = store.run(a), store.run(b)
    ta = {t["item_id"]: t for t in store.trajectories(run_a["id"]) if t["replicate"] == 0}
    tb = {t["item_id"]: t for t in store.trajectories(run_b["id"]) if t["replicate"] == 0}
    common = [i for i in ta if i in tb]
    ra, rb = report_of(run_a, [ta[i] for i in common]), report_of(run_b, [tb[i] for i in common])
    return _Pair(run_a, run_b, ta, tb, common, ra, rb)


def compare_report(store: Store, a: str, b: str, n_boot: int = 10_000, seed: int = 0) -> CompareReport:
    """Two runs on their common items (replicate 0): per-axis values, Δ = B − A with a paired bootstrap 95%
    interval, exact McNemar on every 0/1 axis, the agreement grid with item ids, distractor attribution,
    terminations, tool use, and the sentence naming what separates them.

    A and B values are the diagnostics' own (`report_of` over the common items), so they equal what
    `report` prints for the same trajectories — except conversion: its A, B, Δ, interval and McNemar are all
    on the items both runs recalled (the paper's Table 12 set, `n` in the row), the marginal conversions
    (each run over its own recalled items, what `report` prints) beside them as `a_marginal` / `b_marginal`.
    The p-values of the comparison (every row's test and the all-split tests under `tests`) are
    Holm-adjusted together (`p_holm`), and the sentence uses the adjusted p.
    """
    pair = _pair(store, a, b)
    rows = _compare_rows(pair, n_boot, seed)
    tests = _all_split_tests(pair, rows)
    holm = adjust_comparison(rows, tests)
    ta, tb, ra, rb = pair.ta, pair.tb, pair.ra, pair.rb
    report: CompareReport = {
        "a": a,
        "b": b,
        "warnings": _compare_warnings(pair),
        "n_common": len(pair.common),
        "only_in_a": len(ta) - len(pair.common),
        "only_in_b": len(tb) - len(pair.common),
        "runs": {"a": _run_label(pair.run_a), "b": _run_label(pair.run_b)},
        "rows": rows,
        "tests": tests,
        "holm": holm,
        "n_boot": n_boot,
        "seed": seed,
        "agreement": {k: {"n": len(v), "items": v} for k, v in _agreement(pair).items()},
        "items": {
            i: {"kind": ta[i].get("kind"), "depth": ta[i].get("depth"), "a": _side(ta[i]), "b": _side(tb[i])}
            for i in pair.common
        },
        "attribution": {
            "a": ra["attribution"],
            "b": rb["attribution"],
            "delta": _attribution_deltas(pair.recs_a, pair.recs_b, n_boot, seed),
        },
        "terminations": {"a": ra["terminations"], "b": rb["terminations"]},
        "tokens": {"a": _tokens(ra), "b": _tokens(rb)},
        "tool_use": {"a": tool_use(pair.recs_a), "b": tool_use(pair.recs_b)},
        "separation": separation(rows, family=holm["m"]),
    }
    general = _general(store, pair.run_a, pair.run_b)
    if general:  # the out-of-domain measures, only when either side is in the general-agent setting
        report["general_setting"] = general
    return report


def compare_at(store_path: Path | str, a: str, b: str) -> CompareReport:
    """`compare_report` over a read-only connection of its own: a front end's worker thread holds no store."""
    store = Store(store_path, readonly=True)
    try:
        return compare_report(store, a, b)
    finally:
        store.close()


def _agreement(pair: _Pair) -> dict[str, list[str]]:
    """The common items by who got them right: both, only A, only B, neither."""
    grid: dict[str, list[str]] = {"both_right": [], "only_a": [], "only_b": [], "both_wrong": []}
    for i in pair.common:
        ca, cb = bool(pair.ta[i]["correct"]), bool(pair.tb[i]["correct"])
        grid["both_right" if ca and cb else "only_a" if ca else "only_b" if cb else "both_wrong"].append(i)
    return grid


def _tokens(report: RunReport) -> SideTokens:
    """One side's token counts: the protocol's, the prompt's including cache reads, and the cache-hit rate."""
    return {
        "protocol": _dig(report, ("axes", "resource", "avg_tokens")),
        "prompt_incl_cache": _dig(report, ("axes", "resource", "avg_prompt_tokens")),
        "cache_hit_rate": _dig(report, ("axes", "resource", "cache_hit_rate")),
    }


def _both_recalled(pair: _Pair) -> dict[str, np.ndarray]:
    """Per question type, which common items are of that type and recalled (paper recall) by both runs."""
    ta, tb = pair.ta, pair.tb
    return {
        kind: np.array(
            [
                ta[i].get("kind") == kind and bool(ta[i]["paper_recall"]) and bool(tb[i]["paper_recall"])
                for i in pair.common
            ],
            dtype=bool,
        )
        for kind in ("st", "mt")
    }


def _intervals(
    pair: _Pair, names: list[str], terms: dict[str, str], both: dict[str, np.ndarray], n_boot: int, seed: int
) -> list[tuple[float | None, float | None, float | None]]:
    """Each column's paired bootstrap (Δ, low, high); conversion on the items both runs recalled, on both sides."""
    from stats.bootstrap import paired_ratio_deltas

    if len(pair.common) < 2:
        return [(None, None, None)] * len(names)
    keys = [terms[c] for c in names]
    num_a, den_a = _stacked(axes.ratio_terms(Table.of(pair.recs_a)), keys)
    num_b, den_b = _stacked(axes.ratio_terms(Table.of(pair.recs_b)), keys)
    for j, col in enumerate(names):
        if col.startswith("Conv"):
            mask = both[col.split()[1]].astype(float)
            den_a[:, j] = den_b[:, j] = mask
            num_a[:, j] = [float(c) for c in pair.correct(pair.ta, pair.common)] * mask
            num_b[:, j] = [float(c) for c in pair.correct(pair.tb, pair.common)] * mask
    return paired_ratio_deltas(num_a, den_a, num_b, den_b, n_boot=n_boot, seed=seed)


def _compare_rows(pair: _Pair, n_boot: int, seed: int) -> list[CompareRow]:
    """One row per compared axis: the panel's columns, and the error rows when either run has any."""
    ra, rb = pair.ra, pair.rb
    columns = list(PANEL_COLUMNS) + [(col, path) for col, path, _ in ERROR_ROWS if any(_dig(r, path) for r in (ra, rb))]
    terms = {**COLUMN_TERMS, **{col: term for col, _, term in ERROR_ROWS}}
    both = _both_recalled(pair)
    intervals = _intervals(pair, [col for col, _ in columns], terms, both, n_boot, seed)
    return [
        _compare_row(pair, col, path, low, high, both)
        for (col, path), (_, low, high) in zip(columns, intervals, strict=True)
    ]


def _compare_row(
    pair: _Pair,
    col: str,
    path: tuple[str, ...],
    low: float | None,
    high: float | None,
    both: dict[str, np.ndarray],
) -> CompareRow:
    """One axis: A, B, Δ with its interval, and McNemar's test when the axis is 0/1 and both sides measured it."""
    from stats.bootstrap import no_variation

    va, vb = _dig(pair.ra, path), _dig(pair.rb, path)
    marginals: ConvMarginals = {}
    if col.startswith("Conv"):
        marginals = _marginals(pair, path, va, vb)
        va, vb = _conversion_on_both(pair, both[col.split()[1]])
    delta = None if va is None or vb is None else vb - va
    test = None if delta is None else _row_test(pair, col)  # a side with no value on this axis has nothing to test
    ci_low, ci_high = (None, None) if delta is None else (low, high)
    row: CompareRow = {
        "axis": col,
        **marginals,  # a conversion row's four marginal keys, in this place
        "a": va,
        "b": vb,
        "delta": delta,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "p": None if test is None else test["p"],
        "test": test,
        "n": None if delta is None else _row_n(pair, test),
        "ci_no_variation": delta is not None and no_variation(ci_low, ci_high),
        "p_holm": None,  # set by adjust_comparison, over the whole comparison's tests
    }
    return row


def _row_test(pair: _Pair, col: str) -> McNemarTest | None:
    """McNemar's exact test of one axis over the common items where it is 0/1 and both sides measured it."""
    return _mcnemar_or_none([paired_outcomes(col, pair.ta[i], pair.tb[i]) for i in pair.common])


def _row_n(pair: _Pair, test: McNemarTest | None) -> int:
    """A row's n: the items its test counts, else every common item."""
    return len(pair.common) if test is None else test["n"]


def _marginals(pair: _Pair, path: tuple[str, ...], va: float | None, vb: float | None) -> ConvMarginals:
    """A conversion row's marginal values (each run over its own recalled items, as `report` prints them)."""
    return {
        "a_marginal": va,
        "b_marginal": vb,
        "set": CONVERSION_SET,
        "counts_marginal": {"a": _dig(pair.ra["counts"], path[1:]), "b": _dig(pair.rb["counts"], path[1:])},
    }


def _conversion_on_both(pair: _Pair, keep: np.ndarray) -> tuple[float | None, float | None]:
    """Each run's accuracy on the items both recalled (`keep`): the conversion the comparison tests."""
    on = [i for i, kept in zip(pair.common, keep, strict=True) if kept]
    if not on:
        return None, None
    return float(np.mean(pair.correct(pair.ta, on))), float(np.mean(pair.correct(pair.tb, on)))


def _all_split_tests(pair: _Pair, rows: list[CompareRow]) -> dict[str, McNemarTest | None]:
    """McNemar over all the common items: accuracy (the first row's own test), conversion on the items both
    recalled, paper and section recall."""
    ta, tb, common = pair.ta, pair.tb, pair.common
    tests = {"accuracy": rows[0]["test"]}
    recalled = [i for i in common if ta[i]["paper_recall"] and tb[i]["paper_recall"]]
    tests["conversion_common_recalled"] = _mcnemar_or_none(
        [(bool(ta[i]["correct"]), bool(tb[i]["correct"])) for i in recalled]
    )
    for key in ("paper_recall", "section_recall"):
        tests[key] = _mcnemar_or_none([_measured_pair(ta[i], tb[i], key) for i in common])
    return tests


def _compare_warnings(pair: _Pair) -> list[str]:
    """What makes the comparison less than like for like: other datasets, resolutions or prompts, estimated
    tokens, caches that held different shares of the prompts."""
    run_a, run_b = pair.run_a, pair.run_b
    warnings = []
    if run_a["dataset_fingerprint"] != run_b["dataset_fingerprint"]:
        warnings.append(f"A and B ran on different datasets (their fingerprints differ): {PAIRED_BY_ID}")
    warnings += resolution_warnings([run_a, run_b], "A and B")
    warnings += prompt_warnings([run_a, run_b], "A and B")
    estimated = [side for side, run in (("A", run_a), ("B", run_b)) if estimates_tokens(run)]
    if estimated:
        who = " and ".join(estimated)
        compares = "two estimates" if len(estimated) == 2 else "an estimate with a count"
        warnings.append(
            f"{who}'s tokens are estimated (characters / 4 of the conversation each turn), not counted "
            f"by a model provider: the tokens row compares {compares}"
        )
    return warnings + cache_warnings(pair.ra, pair.rb)


def cache_warnings(ra: RunReport, rb: RunReport) -> list[str]:
    """A warning when the runs' cache-hit rates differ by more than CACHE_GAP: the protocol's token count leaves
    cache reads out, so the run whose server cache held more is charged fewer tokens for the same prompts."""
    path = ("axes", "resource", "cache_hit_rate")
    ha, hb = _dig(ra, path), _dig(rb, path)
    if ha is None or hb is None or abs(ha - hb) <= CACHE_GAP:
        return []
    return [
        f"A's and B's cache-hit rates differ ({ha:.0%} against {hb:.0%} of prompt tokens read from a cache): the "
        f"tokens row (the protocol's count, which leaves cache reads out) favours the run whose cache held more; "
        f"compare prompt tokens incl. cache reads ({_dig(ra, ('axes', 'resource', 'avg_prompt_tokens')):,.0f} "
        f"against {_dig(rb, ('axes', 'resource', 'avg_prompt_tokens')):,.0f})"
    ]


def _general(store: Store, run_a: RunRow, run_b: RunRow) -> dict[str, OffDomainMeasures | None] | None:
    """The out-of-domain measures of each side in the general-agent setting (None when neither is in it)."""
    from workbench.service.reports.offdomain import offdomain_measures

    sides = {"a": offdomain_measures(store, run_a), "b": offdomain_measures(store, run_b)}
    return sides if any(sides.values()) else None


def adjust_comparison(rows: list[CompareRow], tests: dict[str, McNemarTest | None]) -> Holm:
    """Holm-adjust every p-value of one comparison together: each row's McNemar test and the all-split tests
    (`tests`; its accuracy test is the accuracy row's own, counted once). Sets `p_holm` on each row and test
    dict in place; returns the family (names of the tests, in order) and its size m."""
    from stats.multiplicity import holm

    family = _test_family(rows, tests)
    for (_, test), adjusted in zip(family, holm([t["p"] for _, t in family]), strict=True):
        test["p_holm"] = adjusted
    for row in rows:
        row["p_holm"] = None if row["test"] is None else row["test"].get("p_holm")
    return {
        "method": "Holm (1979) step-down over every McNemar test of this comparison",
        "m": len(family),
        "family": [name for name, _ in family],
    }


def _test_family(rows: list[CompareRow], tests: dict[str, McNemarTest | None]) -> list[tuple[str, McNemarTest]]:
    """(name, test) of every distinct test of the comparison, rows first: a test shared by a row and the all-split
    tests (accuracy) counts once."""
    family: list[tuple[str, McNemarTest]] = []
    seen: set[int] = set()
    for name, test in [(r["axis"], r["test"]) for r in rows] + [(f"all: {k}", t) for k, t in tests.items()]:
        if test is not None and id(test) not in seen:
            seen.add(id(test))
            family.append((name, test))
    return family


def _attribution_deltas(
    recs_a: list[TrajectoryRow], recs_b: list[TrajectoryRow], n_boot: int, seed: int
) -> dict[str, AttributionDelta]:
    """Per option type chosen by wrong answers: its rate among each run's wrong answers (as `axes.attribution`),
    Δ = B − A, and a paired bootstrap 95% interval over the common items (`axes.attribution_terms`)."""
    from stats.bootstrap import no_variation, paired_ratio_deltas

    ta, tb = Table.of(recs_a), Table.of(recs_b)
    kinds = sorted(set(axes.attribution(ta)["counts"]) | set(axes.attribution(tb)["counts"]))
    if not kinds:
        return {}
    num_a, den_a = _stacked(axes.attribution_terms(ta, kinds), kinds)
    num_b, den_b = _stacked(axes.attribution_terms(tb, kinds), kinds)
    found = (
        paired_ratio_deltas(num_a, den_a, num_b, den_b, n_boot=n_boot, seed=seed)
        if len(recs_a) >= 2
        else [(None, None, None)] * len(kinds)
    )
    out: dict[str, AttributionDelta] = {}
    for j, k in enumerate(kinds):
        ra, rb = _rate(num_a[:, j], den_a[:, j]), _rate(num_b[:, j], den_b[:, j])
        delta = None if ra is None or rb is None else rb - ra
        _, low, high = found[j]
        out[k] = {
            "a": ra,
            "b": rb,
            "delta": delta,
            "ci_low": None if delta is None else low,
            "ci_high": None if delta is None else high,
            "ci_no_variation": delta is not None and no_variation(low, high),
        }
    return out


def _rate(num: np.ndarray, den: np.ndarray) -> float | None:
    """Σ num / Σ den, None when the denominator is 0 (no wrong answers on that side)."""
    total = den.sum()
    return float(num.sum() / total) if total else None


def _run_label(run: RunRow) -> RunLabel:
    return {
        "name": run["name"],
        "agent": run["agent"],
        "model": run["model"],
        "ablation": run["ablation"],
        "dataset": run["dataset"],
        "dataset_fingerprint": run["dataset_fingerprint"],
    }


SEPARATES = 0.05  # a difference is announced only when its Holm-adjusted p is below this
SAME_RECALL = 0.02  # paper recall closer than this (2 points): a conversion gap between runs that retrieve alike


def _split_deltas(rows: list[CompareRow]) -> dict[str, tuple[CompareRow, float]]:
    """axis → (row, its Δ) for the recall and conversion splits that have a Δ."""
    out = {}
    for r in rows:
        delta = r["delta"]
        if r["axis"].startswith(("PR", "SR", "Conv")) and delta is not None:
            out[r["axis"]] = (r, delta)
    return out


def separation(rows: list[CompareRow], family: int | None = None) -> Separation:
    """Which recall or conversion split separates the runs most among those whose Holm-adjusted McNemar p
    (`p_holm`) is below 0.05, as data (`workbench.views.compare.separation_sentence` words it): `state` is
    `incomparable` (no split has a Δ), `equal` (every Δ is zero), `unsupported` (no difference the comparison's own
    adjusted test supports: never announced) or `separates`, with the split, its row and whether recall was the
    same (a conversion gap between runs that retrieve alike)."""
    shares = _split_deltas(rows)
    if not shares:
        return {"state": "incomparable", "family": family}
    if all(abs(delta) < 1e-12 for _, delta in shares.values()):
        return {"state": "equal", "family": family}
    supported = {
        axis: (row, delta, p)
        for axis, (row, delta) in shares.items()
        if (p := row.get("p_holm")) is not None and p < SEPARATES
    }
    if not supported:
        return {"state": "unsupported", "family": family}
    axis, (row, delta, p_holm) = max(supported.items(), key=lambda kv: abs(kv[1][1]))
    kind, split = axis.split()
    recall = shares.get(f"PR {split}")
    same_recall = kind == "Conv" and recall is not None and abs(recall[1]) < SAME_RECALL
    return {
        "state": "separates",
        "family": family,
        "axis": axis,
        "kind": kind,
        "split": split,
        "delta": delta,
        "p_holm": p_holm,
        "n": row.get("n"),
        "same_recall": same_recall,
    }
