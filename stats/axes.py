"""The four diagnostic axes of one run (docs/protocol.md "What is measured"), from trajectory records.

A record is a mapping with at least: kind ('st'|'mt'), depth, correct, paper_recall,
section_recall, termination, tokens, model_calls (or turns), points_used, tool_calls,
turns_with_calls. Every function takes the records as a list of mappings or as a `Table` (the
same fields as numpy columns, built once per run): a report over tens of thousands of
trajectories computes each number as one array operation instead of a pass over dicts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict, TypeVar

import numpy as np

from stats.ratio import Ratio

# the words of sandbox.records.Termination, in its order (stats imports nothing of the sandbox)
TERMINATIONS = ("answer", "budget", "token_limit", "max_turns", "error")
Record = Mapping[str, Any]
FLAGS = ("correct", "paper_recall", "paper_recall_any", "section_recall", "section_recall_any", "section_recall_loose")
AMOUNTS = (
    "tokens",
    "turns",
    "model_calls",
    "points_used",
    "tool_calls",
    "turns_with_calls",
    "cost_usd",
    "api_errors",
    "prompt_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cut_off_turns",
    "lost_calls",
)
NUMBERS = ("depth", "replicate", "predicted_index", "correct_index", "n_gold", "section_reachable")
LABELS = (
    "kind",
    "termination",
    "reasoning_type",
    "consensus_tier",
    "venue",
    "chosen_type",
    "item_id",
    "error_kind",
)
COLUMNS = FLAGS + AMOUNTS + NUMBERS + LABELS


@dataclass(frozen=True)
class Table:
    """A run's trajectories as columns: flags as bools, amounts and numbers as floats (NaN = missing),
    labels as object arrays (None = missing)."""

    n: int
    columns: Mapping[str, np.ndarray]

    @classmethod
    def of(cls, records: Sequence[Record] | Table) -> Table:
        if isinstance(records, Table):
            return records
        return cls.from_columns({k: [r.get(k) for r in records] for k in COLUMNS}, len(records))

    @classmethod
    def from_columns(cls, columns: Mapping[str, Sequence[Any]], n: int) -> Table:
        """From one sequence per field (missing fields are all-missing); None becomes NaN or None."""
        out: dict[str, np.ndarray] = {}
        for key in COLUMNS:
            values = columns.get(key)
            if key in LABELS:
                out[key] = np.array([None] * n if values is None else list(values), dtype=object)
            else:
                arr = np.full(n, np.nan) if values is None else np.array(values, dtype=np.float64)  # None → NaN
                out[key] = (np.nan_to_num(arr) != 0) if key in FLAGS else arr
                if key in FLAGS:
                    out[f"{key}:known"] = ~np.isnan(arr)
        return cls(n, out)

    def __getitem__(self, key: str) -> np.ndarray:
        return self.columns[key]

    def known(self, key: str) -> np.ndarray:
        """Where a flag was measured (None in a record: e.g. section recall on a dataset without labels)."""
        return self.columns.get(f"{key}:known", np.ones(self.n, dtype=bool))

    def amount(self, key: str) -> np.ndarray:
        """An amount with missing values as 0 (a missing count adds nothing)."""
        return np.nan_to_num(self.columns[key])

    def subset(self, mask: np.ndarray) -> Table:
        return Table(int(mask.sum()), {k: v[mask] for k, v in self.columns.items()})

    @property
    def st(self) -> np.ndarray:
        return self.columns["kind"] == "st"

    @property
    def mt(self) -> np.ndarray:
        return self.columns["kind"] == "mt"

    def turns(self) -> np.ndarray:
        """Model turns: calls that returned a reply (`model_calls`); turns used up by API errors are not
        model turns (docs/metrics.md: the resources row). Records without `model_calls` fall back to `turns`."""
        calls = self.columns["model_calls"]
        return np.where(np.isnan(calls), self.amount("turns"), calls)


def _py(x: Any) -> int | float:
    """A numpy scalar as a plain int (when whole) or float, so JSON and equality stay simple."""
    x = float(x)
    return int(x) if x.is_integer() else x


def _share(mask: np.ndarray, within: np.ndarray | None = None) -> Ratio:
    if within is not None:
        mask = mask[within]
    return Ratio(int(mask.sum()), int(mask.size))


def by_kind(table: Table, fn) -> dict[str, Ratio]:
    """`fn(table, within)` for the ST, MT and all records."""
    return {"st": fn(table, table.st), "mt": fn(table, table.mt), "all": fn(table, np.ones(table.n, dtype=bool))}


def accuracy(records: Sequence[Record] | Table) -> Ratio:
    """Correct ÷ all trajectories; non-submissions count as wrong."""
    return _share(Table.of(records)["correct"])


def accuracy_by_kind(records: Sequence[Record] | Table) -> dict[str, Ratio]:
    """Accuracy over ST, MT and all trajectories (docs/metrics.md: every axis as ST / MT / all)."""
    return by_kind(Table.of(records), lambda t, w: _share(t["correct"], w))


def recall(records: Sequence[Record] | Table, key: str) -> dict[str, Ratio]:
    """The share of trajectories with the flag; a None flag is unmeasured (a dataset without recall labels)
    and stays out of the denominator, so such a run reports no section recall rather than 0%."""
    return by_kind(Table.of(records), lambda t, w: _share(t[key], w & t.known(key)))


def conversion(records: Sequence[Record] | Table, condition: str = "paper_recall") -> dict[str, Ratio]:
    """P(correct | condition = 1): how often reaching the evidence becomes a right answer."""
    return by_kind(Table.of(records), lambda t, w: _share(t["correct"], w & t[condition]))


def calls_per_turn(records: Sequence[Record] | Table) -> Ratio:
    """Tool calls ÷ assistant turns that emitted at least one call."""
    t = Table.of(records)
    return Ratio(_py(t.amount("tool_calls").sum()), _py(t.amount("turns_with_calls").sum()))


def mean(records: Sequence[Record] | Table, key: str) -> Ratio:
    t = Table.of(records)
    values = t.turns() if key == "turns" else t.amount(key)
    return Ratio(_py(values.sum()), t.n)


def terminations(records: Sequence[Record] | Table) -> dict[str, int]:
    ends = Table.of(records)["termination"]
    return {term: int((ends == term).sum()) for term in TERMINATIONS}


def error_kinds(records: Sequence[Record] | Table) -> dict[str, int]:
    """How many trajectories carry each error kind (`context_overflow`, `api_errors_at_cap`, …), most first: why
    the `error` endings ended, and why a turn cap came after failed model calls (`api_errors_at_cap` ends
    `max_turns`). Trajectories without one are not counted."""
    found: dict[str, int] = {}
    for kind in Table.of(records)["error_kind"]:
        if kind:
            found[str(kind)] = found.get(str(kind), 0) + 1
    return dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))


def cap_rate(records: Sequence[Record] | Table, termination: str) -> Ratio:
    return _share(Table.of(records)["termination"] == termination)


def _keys(values: np.ndarray) -> np.ndarray:
    return np.array(["?" if v is None or v == "" else str(v) for v in values], dtype=object)


Split = TypeVar("Split")


def split_by(
    records: Sequence[Record] | Table, keys: np.ndarray, fn: Callable[[Table, np.ndarray], Split]
) -> dict[str, Split]:
    """`fn(table, within)` per distinct key (sorted as strings)."""
    t = Table.of(records)
    return {k: fn(t, keys == k) for k in sorted(set(keys.tolist()))}


def splits(records: Sequence[Record] | Table, key: str) -> dict[str, Ratio]:
    """Accuracy per value of `key` (sorted by value as a string; missing or empty values are "?")."""
    t = Table.of(records)
    return split_by(t, _keys(t[key]), lambda tt, w: _share(tt["correct"], w))


def type_depth_keys(table: Table) -> np.ndarray:
    depth = table["depth"]
    return np.array(
        [f"{k}_d{'None' if math.isnan(d) else int(d)}" for k, d in zip(table["kind"], depth, strict=True)], dtype=object
    )


def type_depth(records: Sequence[Record] | Table) -> dict[str, Ratio]:
    """Accuracy per `st_d1`, `st_d2`, `mt_d1`, `mt_d2`."""
    t = Table.of(records)
    return split_by(t, type_depth_keys(t), lambda tt, w: _share(tt["correct"], w))


class Attribution(TypedDict):
    """Which option type the wrong answers chose: counts and rates over the wrong answers."""

    n_wrong: int
    counts: dict[str, int]
    rates: dict[str, float]


def attribution(records: Sequence[Record] | Table) -> Attribution:
    """Which option type wrong answers chose: no_context, seed_only, wrong_paper, no_answer (unknown otherwise)."""
    t = Table.of(records)
    wrong = ~t["correct"]
    chosen = [c or "unknown" for c in t["chosen_type"][wrong]]
    counts = {k: chosen.count(k) for k in sorted(set(chosen))}
    return Attribution(
        n_wrong=int(wrong.sum()),
        counts=counts,
        rates={k: v / len(chosen) for k, v in counts.items()} if chosen else {},
    )


def attribution_terms(
    records: Sequence[Record] | Table, kinds: Sequence[str]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each trajectory's (numerator, denominator) of the rate of each chosen option type among wrong answers
    (`attribution`'s rates): wrong ∧ chose the type / wrong, so a bootstrap can resample them like any ratio."""
    t = Table.of(records)
    wrong = (~t["correct"]).astype(float)
    chosen = np.array([c or "unknown" for c in t["chosen_type"]], dtype=object)
    return {k: (wrong * (chosen == k), wrong) for k in kinds}


class SectionCeiling(TypedDict):
    """Trajectories whose item can never reach section recall, those unknown, and the highest attainable recall."""

    unreachable: int
    unknown: int
    ceiling: dict[str, Ratio]


def section_ceiling(records: Sequence[Record] | Table) -> SectionCeiling:
    """Trajectories whose item can never reach section recall: some gold paper has no `direct` label that
    resolves to a readable section (`section_reachable` = 0). Unknown for trajectories stored before the
    field existed. `ceiling` = the highest section recall attainable = reachable / all (ST, MT, all)."""
    t = Table.of(records)
    known = ~np.isnan(t["section_reachable"])
    reachable = known & (np.nan_to_num(t["section_reachable"]) != 0)
    return SectionCeiling(
        unreachable=int((known & ~reachable).sum()),
        unknown=int((~known).sum()),
        ceiling={
            k: Ratio(int(reachable[w].sum()), int(w.sum()))
            for k, w in (("st", t.st), ("mt", t.mt), ("all", np.ones(t.n, dtype=bool)))
        },
    )


def four_axes(records: Sequence[Record] | Table) -> dict[str, Any]:
    """Every number of the foundation report, each a Ratio (the report layer renders them)."""
    t = Table.of(records)
    return {
        "accuracy": accuracy(t),
        "search": {
            "paper_recall": recall(t, "paper_recall"),
            "section_recall": recall(t, "section_recall"),
            "paper_recall_any": recall(t, "paper_recall_any"),
            "section_recall_any": recall(t, "section_recall_any"),
            "section_recall_loose": recall(t, "section_recall_loose"),
        },
        "synthesis": {
            "conversion": conversion(t, "paper_recall"),
            "conversion_section": conversion(t, "section_recall"),
        },
        "tool_use": {"calls_per_turn": calls_per_turn(t)},
        "resource": {
            "avg_tokens": mean(t, "tokens"),
            "avg_turns": mean(t, "turns"),
            "avg_points": mean(t, "points_used"),
            "max_tokens_rate": cap_rate(t, "token_limit"),
            "max_turns_rate": cap_rate(t, "max_turns"),
            "max_budget_rate": cap_rate(t, "budget"),
            "error_rate": cap_rate(t, "error"),
            "api_error_rate": api_error_rate(t),
            "non_submission_rate": _share(t["termination"] != "answer"),
            "avg_prompt_tokens": mean_prompt(t),
            "cache_hit_rate": cache_hit_rate(t),
        },
    }


def api_error_rate(records: Sequence[Record] | Table) -> Ratio:
    """Episodes with at least one API error (a refused request, an unreadable reply), whatever their ending: an
    episode can meet one and still answer, so this is never smaller than the error rate's share of API failures."""
    return _share(Table.of(records).amount("api_errors") > 0)


def prompt_sent(table: Table) -> np.ndarray:
    """Each trajectory's prompt tokens as sent, cache reads included: non-cached prompt + cache read + cache
    creation (the protocol's count leaves cache reads out, so what a server's prefix cache held changes it)."""
    return table.amount("prompt_tokens") + table.amount("cache_read_tokens") + table.amount("cache_creation_tokens")


def mean_prompt(records: Sequence[Record] | Table) -> Ratio:
    """Mean prompt tokens per trajectory, cache reads included (`prompt_sent`)."""
    t = Table.of(records)
    return Ratio(_py(prompt_sent(t).sum()), t.n)


def cache_hit_rate(records: Sequence[Record] | Table) -> Ratio:
    """Cache-read prompt tokens ÷ all prompt tokens sent (`prompt_sent`), over the run."""
    t = Table.of(records)
    return Ratio(_py(t.amount("cache_read_tokens").sum()), _py(prompt_sent(t).sum()))


def ratio_terms(table: Table) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Each trajectory's (numerator, denominator) contribution to every ratio the report gives an interval
    for, so a ratio over any resample of items is Σ numerators / Σ denominators (one bootstrap serves all).

    Keys follow the report: `accuracy`, `paper_recall.st` … `conversion.all`, `calls_per_turn`,
    `avg_tokens`, `avg_turns`, `avg_points`, the cap and error rates.
    """
    one = np.ones(table.n)
    correct = table["correct"].astype(float)
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {"accuracy": (correct, one)}
    for kind, within in (("st", table.st), ("mt", table.mt), ("all", np.ones(table.n, dtype=bool))):
        w = within.astype(float)
        for key in ("paper_recall", "section_recall"):
            measured = w * table.known(key)
            out[f"{key}.{kind}"] = (table[key] * measured, measured)
        recalled = table["paper_recall"] * w
        out[f"conversion.{kind}"] = (correct * recalled, recalled)
        sec = table["section_recall"] * w
        out[f"conversion_section.{kind}"] = (correct * sec, sec)
    out["calls_per_turn"] = (table.amount("tool_calls"), table.amount("turns_with_calls"))
    out["avg_tokens"] = (table.amount("tokens"), one)
    out["avg_turns"] = (table.turns(), one)
    out["avg_points"] = (table.amount("points_used"), one)
    for key, end in (
        ("max_tokens_rate", "token_limit"),
        ("max_turns_rate", "max_turns"),
        ("max_budget_rate", "budget"),
        ("error_rate", "error"),
    ):
        out[key] = ((table["termination"] == end).astype(float), one)
    out["api_error_rate"] = ((table.amount("api_errors") > 0).astype(float), one)
    return out
