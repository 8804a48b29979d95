"""Two runs compared item by item: paired deltas with their intervals, McNemar's test, Holm's adjustment,
the attribution of wrong answers, and the axis that separates them."""

from __future__ import annotations

from typing import Any

import numpy as np

from stats import axes
from stats.axes import Table
from storage import Store
from workbench.service.reports.panel import PAIRED_BY_ID, _stacked, resolution_warnings
from workbench.service.reports.prompts import prompt_warnings
from workbench.service.reports.run import _dig, estimates_tokens, report_of, transition_layout
from workbench.views.columns import COLUMN_TERMS, PANEL_COLUMNS

_CAPS = {"MaxTok": "token_limit", "MaxTurn": "max_turns", "MaxBudget": "budget", "Err": "error"}
# Rows beyond the panel's columns, shown when either run has any: episodes ended in error, and episodes that met
# an API error whatever their ending (a comparison without errors keeps the panel's rows and test family)
ERROR_ROWS = (
    ("Err", ("axes", "resource", "error_rate"), "error_rate"),
    ("API err", ("axes", "resource", "api_error_rate"), "api_error_rate"),
)
CACHE_GAP = 0.10  # cache-hit rates further apart than this bias a comparison of the protocol's token counts


_RECALL = {"PR": "paper_recall", "SR": "section_recall"}


def paired_outcomes(axis: str, a: dict[str, Any], b: dict[str, Any]) -> tuple[bool, bool] | None:
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


def _measured_pair(a: dict[str, Any], b: dict[str, Any], key: str) -> tuple[bool, bool] | None:
    """Both sides' 0/1 value of `key`, or None when either side did not measure it (None in the record)."""
    if a.get(key) is None or b.get(key) is None:
        return None
    return bool(a[key]), bool(b[key])


def _mcnemar_or_none(pairs: list[tuple[bool, bool] | None]) -> dict[str, Any] | None:
    """Exact McNemar over the measured pairs; None when no item has both sides measured."""
    from stats.significance import mcnemar_exact

    kept = [p for p in pairs if p is not None]
    return mcnemar_exact([x for x, _ in kept], [y for _, y in kept]) if kept else None


def _side(t: dict[str, Any]) -> dict[str, Any]:
    """What the agreement grid and the split stepper need of one run's trajectory on an item."""
    return {
        "id": t["id"],
        "answer": t.get("answer"),
        "predicted_index": t.get("predicted_index"),
        "correct": bool(t.get("correct")),
        "termination": t.get("termination"),
        "points": t.get("points_used"),
        "turns": t.get("turns"),
        "tokens": t.get("tokens"),
        "paper_recall": bool(t.get("paper_recall")),
        "section_recall": bool(t.get("section_recall")),
    }


def tool_use(records: list[dict[str, Any]]) -> dict[str, Any]:
    """Transitions (as `transition_report` lays them out) and the top trigram of some trajectories."""
    from stats.ngrams import top_trigram

    sequences = [r.get("tool_sequence") or [] for r in records]
    return {"transitions": transition_layout(sequences), "top_trigram": top_trigram(sequences)}


CONVERSION_SET = "items both runs recalled (paper recall), the paper's Table 12 set"


def compare_report(store: Store, a: str, b: str, n_boot: int = 10_000, seed: int = 0) -> dict[str, Any]:
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
    from stats.bootstrap import no_variation, paired_ratio_deltas

    run_a, run_b = store.run(a), store.run(b)
    ta = {t["item_id"]: t for t in store.trajectories(run_a["id"]) if t["replicate"] == 0}
    tb = {t["item_id"]: t for t in store.trajectories(run_b["id"]) if t["replicate"] == 0}
    common = [i for i in ta if i in tb]
    recs_a, recs_b = [ta[i] for i in common], [tb[i] for i in common]
    ra, rb = report_of(run_a, recs_a), report_of(run_b, recs_b)
    grid: dict[str, list[str]] = {"both_right": [], "only_a": [], "only_b": [], "both_wrong": []}
    for i in common:
        ca, cb = bool(ta[i]["correct"]), bool(tb[i]["correct"])
        grid["both_right" if ca and cb else "only_a" if ca else "only_b" if cb else "both_wrong"].append(i)
    columns = list(PANEL_COLUMNS) + [(col, path) for col, path, _ in ERROR_ROWS if any(_dig(r, path) for r in (ra, rb))]
    terms = {**COLUMN_TERMS, **{col: term for col, _, term in ERROR_ROWS}}
    names = [col for col, _ in columns]
    both = {
        kind: np.array(
            [ta[i].get("kind") == kind and bool(ta[i]["paper_recall"]) and bool(tb[i]["paper_recall"]) for i in common],
            dtype=bool,
        )
        for kind in ("st", "mt")
    }
    intervals: list[tuple[float | None, float | None, float | None]] = [(None, None, None)] * len(names)
    if len(common) >= 2:
        keys = [terms[c] for c in names]
        num_a, den_a = _stacked(axes.ratio_terms(Table.of(recs_a)), keys)
        num_b, den_b = _stacked(axes.ratio_terms(Table.of(recs_b)), keys)
        for j, col in enumerate(names):  # conversion: correct over the items both recalled, on both sides
            if col.startswith("Conv"):
                mask = both[col.split()[1]].astype(float)
                den_a[:, j] = den_b[:, j] = mask
                num_a[:, j] = [float(bool(ta[i]["correct"])) for i in common] * mask
                num_b[:, j] = [float(bool(tb[i]["correct"])) for i in common] * mask
        intervals = paired_ratio_deltas(num_a, den_a, num_b, den_b, n_boot=n_boot, seed=seed)
    rows = []
    for (col, path), (_, low, high) in zip(columns, intervals):
        va, vb = _dig(ra, path), _dig(rb, path)
        row: dict[str, Any] = {"axis": col}
        if col.startswith("Conv"):
            on = [i for i, keep in zip(common, both[col.split()[1]]) if keep]
            row.update(
                {
                    "a_marginal": va,
                    "b_marginal": vb,
                    "set": CONVERSION_SET,
                    "counts_marginal": {"a": _dig(ra["counts"], path[1:]), "b": _dig(rb["counts"], path[1:])},
                }
            )
            va = float(np.mean([bool(ta[i]["correct"]) for i in on])) if on else None
            vb = float(np.mean([bool(tb[i]["correct"]) for i in on])) if on else None
        delta = None if va is None or vb is None else vb - va
        row.update(
            {
                "a": va,
                "b": vb,
                "delta": delta,
                "ci_low": None if delta is None else low,
                "ci_high": None if delta is None else high,
                "p": None,
                "test": None,
                "n": None,
            }
        )
        row["ci_no_variation"] = delta is not None and no_variation(row["ci_low"], row["ci_high"])
        if delta is not None:  # a side with no value on this axis has nothing to test
            row["test"] = _mcnemar_or_none([paired_outcomes(col, ta[i], tb[i]) for i in common])
            row["p"] = None if row["test"] is None else row["test"]["p"]
            row["n"] = row["test"]["n"] if row["test"] is not None else len(common)
        rows.append(row)
    tests = {"accuracy": rows[0]["test"]}
    recalled = [i for i in common if ta[i]["paper_recall"] and tb[i]["paper_recall"]]
    tests["conversion_common_recalled"] = _mcnemar_or_none(
        [(bool(ta[i]["correct"]), bool(tb[i]["correct"])) for i in recalled]
    )
    for key in ("paper_recall", "section_recall"):
        tests[key] = _mcnemar_or_none([_measured_pair(ta[i], tb[i], key) for i in common])
    holm = adjust_comparison(rows, tests)
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
    warnings += cache_warnings(ra, rb)
    attribution_delta = _attribution_deltas(recs_a, recs_b, n_boot, seed)
    return {
        "a": a,
        "b": b,
        "warnings": warnings,
        "n_common": len(common),
        "only_in_a": len(ta) - len(common),
        "only_in_b": len(tb) - len(common),
        "runs": {"a": _run_label(run_a), "b": _run_label(run_b)},
        "rows": rows,
        "tests": tests,
        "holm": holm,
        "n_boot": n_boot,
        "seed": seed,
        "agreement": {k: {"n": len(v), "items": v} for k, v in grid.items()},
        "items": {
            i: {"kind": ta[i].get("kind"), "depth": ta[i].get("depth"), "a": _side(ta[i]), "b": _side(tb[i])}
            for i in common
        },
        "attribution": {"a": ra["attribution"], "b": rb["attribution"], "delta": attribution_delta},
        "terminations": {"a": ra["terminations"], "b": rb["terminations"]},
        "tokens": {
            side: {
                "protocol": _dig(r, ("axes", "resource", "avg_tokens")),
                "prompt_incl_cache": _dig(r, ("axes", "resource", "avg_prompt_tokens")),
                "cache_hit_rate": _dig(r, ("axes", "resource", "cache_hit_rate")),
            }
            for side, r in (("a", ra), ("b", rb))
        },
        "tool_use": {"a": tool_use(recs_a), "b": tool_use(recs_b)},
        "separation": separation(rows, family=holm["m"]),
        **_general(store, run_a, run_b),
    }


def cache_warnings(ra: dict[str, Any], rb: dict[str, Any]) -> list[str]:
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


def _general(store: Store, run_a: dict[str, Any], run_b: dict[str, Any]) -> dict[str, Any]:
    """The out-of-domain measures of each side in the general-agent setting (nothing when neither is in it)."""
    from workbench.service.reports.offdomain import offdomain_measures

    sides = {"a": offdomain_measures(store, run_a), "b": offdomain_measures(store, run_b)}
    return {"general_setting": sides} if any(sides.values()) else {}


def adjust_comparison(rows: list[dict[str, Any]], tests: dict[str, dict[str, Any] | None]) -> dict[str, Any]:
    """Holm-adjust every p-value of one comparison together: each row's McNemar test and the all-split tests
    (`tests`; its accuracy test is the accuracy row's own, counted once). Sets `p_holm` on each row and test
    dict in place; returns the family (names of the tests, in order) and its size m."""
    from stats.multiplicity import holm

    family: list[tuple[str, dict[str, Any]]] = []
    seen: set[int] = set()
    for name, test in [(r["axis"], r["test"]) for r in rows] + [(f"all: {k}", t) for k, t in tests.items()]:
        if test is not None and id(test) not in seen:
            seen.add(id(test))
            family.append((name, test))
    for (_, test), adjusted in zip(family, holm([t["p"] for _, t in family])):
        test["p_holm"] = adjusted
    for row in rows:
        row["p_holm"] = None if row["test"] is None else row["test"]["p_holm"]
    return {
        "method": "Holm (1979) step-down over every McNemar test of this comparison",
        "m": len(family),
        "family": [name for name, _ in family],
    }


def _attribution_deltas(
    recs_a: list[dict[str, Any]], recs_b: list[dict[str, Any]], n_boot: int, seed: int
) -> dict[str, dict[str, float | None]]:
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
    out = {}
    for j, k in enumerate(kinds):
        wrong_a, wrong_b = den_a[:, j].sum(), den_b[:, j].sum()
        ra = float(num_a[:, j].sum() / wrong_a) if wrong_a else None
        rb = float(num_b[:, j].sum() / wrong_b) if wrong_b else None
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


def _run_label(run: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": run["name"],
        "agent": run["agent"],
        "model": run["model"],
        "ablation": run["ablation"],
        "dataset": run["dataset"],
        "dataset_fingerprint": run["dataset_fingerprint"],
    }


SEPARATES = 0.05  # a difference is announced only when its Holm-adjusted p is below this


def separation(rows: list[dict[str, Any]], family: int | None = None) -> dict[str, Any]:
    """Which recall or conversion split separates the runs most among those whose Holm-adjusted McNemar p
    (`p_holm`) is below 0.05, as data (`workbench.views.compare.separation_sentence` words it): `state` is
    `incomparable` (no split has a Δ), `equal` (every Δ is zero), `unsupported` (no difference the comparison's own
    adjusted test supports: never announced) or `separates`, with the split, its row and whether recall was the
    same (a conversion gap between runs that retrieve alike)."""
    shares = {r["axis"]: r for r in rows if r["axis"].startswith(("PR", "SR", "Conv")) and r["delta"] is not None}
    if not shares:
        return {"state": "incomparable", "family": family}
    if all(abs(r["delta"]) < 1e-12 for r in shares.values()):
        return {"state": "equal", "family": family}
    supported = {k: r for k, r in shares.items() if r.get("p_holm") is not None and r["p_holm"] < SEPARATES}
    if not supported:
        return {"state": "unsupported", "family": family}
    axis, row = max(supported.items(), key=lambda kv: abs(kv[1]["delta"]))
    kind, split = axis.split()
    recall = shares.get(f"PR {split}")
    return {
        "state": "separates",
        "family": family,
        "axis": axis,
        "kind": kind,
        "split": split,
        "delta": row["delta"],
        "p_holm": row["p_holm"],
        "n": row.get("n"),
        "same_recall": kind == "Conv" and recall is not None and abs(recall["delta"]) < 0.02,
    }
