"""The four diagnostic axes of one run (PROTOCOL §3), from trajectory records.

A record is a mapping with at least: kind ('st'|'mt'), depth, correct, paper_recall,
section_recall, termination, tokens, turns, points_used, tool_calls, turns_with_calls.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from stats.ratio import Ratio, share

TERMINATIONS = ("answer", "budget", "token_limit", "max_turns", "error")
Record = Mapping[str, Any]


def by_kind(records: Sequence[Record], fn) -> dict[str, Ratio]:
    """`fn` applied to the ST, MT and all records."""
    st = [r for r in records if r.get("kind") == "st"]
    mt = [r for r in records if r.get("kind") == "mt"]
    return {"st": fn(st), "mt": fn(mt), "all": fn(list(records))}


def accuracy(records: Sequence[Record]) -> Ratio:
    """Correct ÷ all trajectories; non-submissions count as wrong."""
    return share(bool(r.get("correct")) for r in records)


def recall(records: Sequence[Record], key: str) -> dict[str, Ratio]:
    """The share of trajectories with the flag; a None flag is unmeasured (a dataset without recall labels)
    and stays out of the denominator, so such a run reports no section recall rather than 0%."""
    return by_kind(records, lambda rs: share(bool(r[key]) for r in rs if r.get(key) is not None))


def conversion(records: Sequence[Record], condition: str = "paper_recall") -> dict[str, Ratio]:
    """P(correct | condition = 1): how often reaching the evidence becomes a right answer."""
    return by_kind(records, lambda rs: share(bool(r.get("correct")) for r in rs if r.get(condition)))


def calls_per_turn(records: Iterable[Record]) -> Ratio:
    """Tool calls ÷ assistant turns that emitted at least one call."""
    calls = turns = 0
    for r in records:
        calls += r.get("tool_calls") or 0
        turns += r.get("turns_with_calls") or 0
    return Ratio(calls, turns)


def mean(records: Sequence[Record], key: str) -> Ratio:
    return Ratio(sum((r.get(key) or 0) for r in records), len(records))


def terminations(records: Iterable[Record]) -> dict[str, int]:
    counts = Counter(r.get("termination") for r in records)
    return {t: counts.get(t, 0) for t in TERMINATIONS}


def cap_rate(records: Sequence[Record], termination: str) -> Ratio:
    return share(r.get("termination") == termination for r in records)


def splits(records: Sequence[Record], key: str) -> dict[str, Ratio]:
    """Accuracy per value of `key` (sorted by value as a string)."""
    groups: dict[str, list[Record]] = {}
    for r in records:
        groups.setdefault(str(r.get(key) if r.get(key) not in (None, "") else "?"), []).append(r)
    return {k: accuracy(v) for k, v in sorted(groups.items())}


def type_depth(records: Sequence[Record]) -> dict[str, Ratio]:
    """Accuracy per `st_d1`, `st_d2`, `mt_d1`, `mt_d2`."""
    return splits([{**r, "_td": f"{r.get('kind')}_d{r.get('depth')}"} for r in records], "_td")


def attribution(records: Sequence[Record]) -> dict[str, Any]:
    """Which option type wrong answers chose: no_context, seed_only, wrong_paper, no_answer (unknown otherwise)."""
    wrong = [r for r in records if not r.get("correct")]
    counts = Counter(r.get("chosen_type") or "unknown" for r in wrong)
    return {"n_wrong": len(wrong), "counts": dict(sorted(counts.items())),
            "rates": {k: v / len(wrong) for k, v in sorted(counts.items())} if wrong else {}}


def four_axes(records: Sequence[Record]) -> dict[str, Any]:
    """Every number of the foundation report, each a Ratio (the report layer renders them)."""
    return {
        "accuracy": accuracy(records),
        "search": {
            "paper_recall": recall(records, "paper_recall"),
            "section_recall": recall(records, "section_recall"),
            "paper_recall_any": recall(records, "paper_recall_any"),
            "section_recall_any": recall(records, "section_recall_any"),
            "section_recall_loose": recall(records, "section_recall_loose"),
        },
        "synthesis": {
            "conversion": conversion(records, "paper_recall"),
            "conversion_section": conversion(records, "section_recall"),
        },
        "tool_use": {"calls_per_turn": calls_per_turn(records)},
        "resource": {
            "avg_tokens": mean(records, "tokens"),
            "avg_turns": mean(records, "turns"),
            "avg_points": mean(records, "points_used"),
            "max_tokens_rate": cap_rate(records, "token_limit"),
            "max_turns_rate": cap_rate(records, "max_turns"),
            "max_budget_rate": cap_rate(records, "budget"),
            "error_rate": cap_rate(records, "error"),
            "non_submission_rate": share(r.get("termination") != "answer" for r in records),
        },
    }
