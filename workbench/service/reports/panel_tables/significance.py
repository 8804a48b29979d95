"""The paired test of one column between two runs, and the tables built from it: Table 12 (the walk down the top
MT conversions) and Table 13 (every pair's accuracy test, Holm-adjusted, as Sig. counts). The panel's best and
tier-leader marks (Table 2) read the same test."""

from __future__ import annotations

import itertools

from workbench.service.records.panel import (
    AccuracyPair,
    ColumnTest,
    PairwiseAccuracy,
    PanelRow,
    SigCounts,
    Table12,
    Table12Step,
)

LOWER_IS_BETTER = {"tokens", "turns", "points", "MaxTok", "MaxTurn", "MaxBudget"}
MEAN_COLUMNS = {"calls/turn", "tokens", "turns", "points"}


ItemTerms = dict[str, tuple[float, float]]  # item → (numerator, denominator) over the item's trajectories


def paired_column_test(col: str, first: ItemTerms, second: ItemTerms) -> ColumnTest:
    """The paired test of one column between the best run (`first`) and a runner-up, on items both have a value for."""
    from stats.significance import paired_sign_test

    items = [i for i in first if i in second and first[i][1] > 0 and second[i][1] > 0]
    test = paired_sign_test(_item_values(first, items), _item_values(second, items))
    better, worse = _best_first(col, test["first_higher"], test["second_higher"])
    return {
        "test": "McNemar exact" if _one_outcome_per_item(col, first, second, items) else "sign test on per-item values",
        "n": test["n"],
        "best_better": better,
        "runner_up_better": worse,
        "p": test["p"],
        "agrees": better > worse,
    }


def _item_values(terms: ItemTerms, items: list[str]) -> list[float]:
    """Each item's value: its numerator ÷ its denominator."""
    return [terms[i][0] / terms[i][1] for i in items]


def _one_outcome_per_item(col: str, first: ItemTerms, second: ItemTerms, items: list[str]) -> bool:
    """Whether each item is one 0/1 outcome on both sides (a proportion column, one trajectory each): then the sign
    test is McNemar's exact test."""
    return col not in MEAN_COLUMNS and all(first[i][1] == 1 and second[i][1] == 1 for i in items)


def _best_first(col: str, first_higher: int, second_higher: int) -> tuple[int, int]:
    """(items the first run is better on, items the second is): lower is better in the resource columns."""
    return (second_higher, first_higher) if col in LOWER_IS_BETTER else (first_higher, second_higher)


def table12(rows: list[PanelRow], per_item: dict[str, dict[str, ItemTerms]], top: int = 6) -> Table12:
    """Table 12's walk: the `top` evaluated runs by MT conversion (highest first), each adjacent pair tested with
    `paired_column_test` on the MT items both recalled (McNemar's exact test with one trajectory per item); a
    step separates where p < 0.05 in the higher run's direction."""
    valued = [(r["Conv mt"], r) for r in rows if r["Conv mt"] is not None]
    ranked = [r for _, r in sorted(valued, key=lambda vr: (-vr[0], vr[1]["run"]))][:top]
    steps: list[Table12Step] = []
    for hi, lo in itertools.pairwise(ranked):
        test = paired_column_test("Conv mt", per_item[hi["run"]]["Conv mt"], per_item[lo["run"]]["Conv mt"])
        steps.append(
            {
                "higher": hi["run"],
                "lower": lo["run"],
                "conversion": [hi["Conv mt"], lo["Conv mt"]],
                "separated": test["p"] < 0.05 and test["agrees"],
                "test": test["test"],
                "n": test["n"],
                "best_better": test["best_better"],
                "runner_up_better": test["runner_up_better"],
                "p": test["p"],
            }
        )
    return {"ranked": [r["run"] for r in ranked], "steps": steps}


def pairwise_accuracy(rows: list[PanelRow], per_item: dict[str, dict[str, ItemTerms]]) -> PairwiseAccuracy:
    """Every pair of evaluated runs tested on accuracy (`paired_column_test` on the common items; McNemar's exact
    test with one trajectory per item), Holm-adjusted across the pairs; per run its Sig. counts — how many runs it
    beats and how many beat it at Holm p < 0.05 (and unadjusted, beside)."""
    from stats.multiplicity import holm

    tests = [
        (
            a["run"],
            b["run"],
            paired_column_test("accuracy", per_item[a["run"]]["accuracy"], per_item[b["run"]]["accuracy"]),
        )
        for i, a in enumerate(rows)
        for b in rows[i + 1 :]
    ]
    adjusted = holm([test["p"] for _, _, test in tests])
    pairs: list[AccuracyPair] = [
        {
            "first": first,
            "second": second,
            "test": test["test"],
            "n": test["n"],
            "best_better": test["best_better"],
            "runner_up_better": test["runner_up_better"],
            "p": test["p"],
            "p_holm": p_holm,
        }
        for (first, second, test), p_holm in zip(tests, adjusted, strict=True)
    ]
    return {"pairs": pairs, "sig": sig_counts(rows, pairs)}


def sig_counts(rows: list[PanelRow], pairs: list[AccuracyPair]) -> list[SigCounts]:
    """Per run: the runs it beats and the runs that beat it at p < 0.05, Holm-adjusted and unadjusted (a pair
    whose items split evenly has no winner)."""
    counts = {r["run"]: {"wins": 0, "losses": 0, "wins_raw": 0, "losses_raw": 0} for r in rows}
    for pair in pairs:
        if pair["best_better"] == pair["runner_up_better"]:
            continue
        first_wins = pair["best_better"] > pair["runner_up_better"]
        winner, loser = (pair["first"], pair["second"]) if first_wins else (pair["second"], pair["first"])
        for key, p in (("", pair["p_holm"]), ("_raw", pair["p"])):
            if p is not None and p < 0.05:
                counts[winner]["wins" + key] += 1
                counts[loser]["losses" + key] += 1
    return [
        {
            "run": r["run"],
            "accuracy": r["accuracy"],
            "wins": counts[r["run"]]["wins"],
            "losses": counts[r["run"]]["losses"],
            "wins_raw": counts[r["run"]]["wins_raw"],
            "losses_raw": counts[r["run"]]["losses_raw"],
        }
        for r in rows
    ]
