"""The plateau's input: budget labels ("8k" < "64k" < "1.5M") and per-item scores, read from a JSON mapping
{budget: {item: score or [score per trial]}} or CSV-like (item, budget, score[, trial]) rows into the n×K (or n×K×T)
array the test takes, NaN where a score is missing; every malformed cell is refused naming where it is."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

BudgetLabel = str | int | float

_BUDGET_RE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([kKmMgG]?)\s*$")
_MULTIPLIER = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9}


def parse_budget(label: BudgetLabel) -> float:
    """The numeric value of a budget label, so that "8K" < "64k" < "1.5M" and "30" < "128".

    Numbers pass through; strings are a decimal number with an optional k/M/G suffix (any case).
    A bare number keeps its own unit: "64" is 64, not 64,000 — a grid must use one convention.
    """
    if isinstance(label, bool):
        raise ValueError(f"not a budget label: {label!r}")
    if isinstance(label, (int, float, np.integer, np.floating)):
        value = float(label)
    else:
        match = _BUDGET_RE.match(str(label))
        if not match:
            raise ValueError(f"cannot parse budget label {label!r}")
        value = float(match.group(1)) * _MULTIPLIER[match.group(2).lower()]
    if not math.isfinite(value):
        raise ValueError(f"budget label {label!r} is not finite")
    return value


def _natural_key(text: str) -> list[Any]:
    """Sort key that orders "result_2" before "result_10"."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


_MISSING = ("", "nan", "none", "null")


def _as_score(value: Any, where: str = "score") -> float:
    """A score as float in [0, 1]; None, "", "nan" (and NaN itself) become NaN, i.e. missing.

    Booleans are refused rather than read as 1/0: a true/false column is more often a flag that
    was mapped by mistake than a score (write 1 or 0). `where` names the cell in the message.
    """
    if value is None or (isinstance(value, str) and value.strip().lower() in _MISSING):
        return math.nan
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{where}: {value!r} is a boolean, not a score (write 1 or 0)")
    if not isinstance(value, (int, float, str, np.integer, np.floating)):
        raise ValueError(f"{where}: expected a number in [0, 1], got {type(value).__name__} {value!r}")
    try:
        score = float(value)
    except ValueError:
        raise ValueError(f"{where}: {value!r} is not a number") from None
    if math.isnan(score):
        return math.nan
    if not 0 <= score <= 1:
        raise ValueError(f"{where}: score {value!r} is outside [0, 1]")
    return score


TrialScores = dict[int, float]  # trial index → score


def _trials_of(value: Any, where: str) -> TrialScores:
    """One JSON cell: a score (trial 0), or a list of scores, one per trial in trial order."""
    if isinstance(value, (list, tuple)):
        return {t: _as_score(v, f"{where}, trial {t}") for t, v in enumerate(value)}
    return {0: _as_score(value, where)}


def _matrix(cells: Mapping[str, Mapping[str, TrialScores]]) -> tuple[list[str], list[str], np.ndarray]:
    """{budget: {item: {trial: score}}} → budgets sorted numerically, items in natural order, and the
    n×K matrix (n×K×T when some item has more than one trial), NaN where missing."""
    budgets = sorted(cells, key=parse_budget)
    items = sorted({i for by_item in cells.values() for i in by_item}, key=_natural_key)
    row = {item: r for r, item in enumerate(items)}
    n_trials = max((max(t) + 1 for by_item in cells.values() for t in by_item.values() if t), default=1)
    y = np.full((len(items), len(budgets), n_trials), np.nan)
    for col, budget in enumerate(budgets):
        for item, trials in cells[budget].items():
            for t, score in trials.items():
                y[row[item], col, t] = score
    return budgets, items, (y[:, :, 0] if n_trials == 1 else y)


def scores_from_mapping(mapping: Mapping[Any, Any]) -> tuple[list[str], list[str], np.ndarray]:
    """({budget: {item: score}}) → (budgets sorted numerically, item ids, n×K matrix with NaN = missing).

    A score may also be a list: the item's T trials at that budget, in trial order (trial t of one
    item pairs across budgets when trials are matched). The matrix is then n×K×T, with NaN where an
    item has fewer trials. Items are the union over budgets in natural order; an item absent at a
    budget is missing there. Malformed cells raise ValueError naming the budget and item.
    """
    if not isinstance(mapping, Mapping):
        raise ValueError(f"expected an object {{budget: {{item: score}}}}, got {type(mapping).__name__}")
    cells: dict[str, dict[str, TrialScores]] = {}
    for budget, by_item in mapping.items():
        label = str(budget)
        parse_budget(label)
        if not isinstance(by_item, Mapping):
            raise ValueError(f"budget {label!r}: expected an object {{item: score}}, got {type(by_item).__name__}")
        target = cells.setdefault(label, {})
        for item, value in by_item.items():
            target[str(item)] = _trials_of(value, f"budget {label!r}, item {str(item)!r}")
    return _matrix(cells)


def scores_from_rows(rows: Iterable[Sequence[Any]], first_line: int = 1) -> tuple[list[str], list[str], np.ndarray]:
    """CSV-like (item, budget, score[, trial]) rows → the same triple as `scores_from_mapping`.

    An empty score is missing. With a trial column, trial labels (any text, ordered naturally)
    index the T trials, the same label meaning the same trial at every budget; without one each
    (item, budget) has one score. A repeated (item, budget, trial) is accepted only if it repeats
    the same score. Errors name the line (`first_line` is the number of the first row).
    """
    parsed: list[tuple[int, str, str, str, float]] = []
    for line, entry in enumerate(rows, start=first_line):
        if len(entry) not in (3, 4):
            raise ValueError(f"line {line}: expected (item, budget, score[, trial]), got {len(entry)} fields")
        item, budget = str(entry[0]), str(entry[1]).strip()
        try:
            parse_budget(budget)
        except ValueError as exc:
            raise ValueError(f"line {line}: {exc}") from None
        trial = str(entry[3]).strip() if len(entry) == 4 else ""
        parsed.append((line, item, budget, trial, _as_score(entry[2], f"line {line}, field 'score'")))
    index = {label: t for t, label in enumerate(sorted({p[3] for p in parsed}, key=_natural_key))}
    cells: dict[str, dict[str, TrialScores]] = {}
    for line, item, budget, trial, score in parsed:
        trials = cells.setdefault(budget, {}).setdefault(item, {})
        t = index[trial]
        if t in trials and not _same(trials[t], score):
            which = f" trial {trial!r}" if trial else ""
            raise ValueError(
                f"line {line}: item {item!r} at budget {budget!r}{which} has conflicting scores "
                f"{trials[t]} and {score}" + ("" if trial else " (several trials? add a trial column)")
            )
        trials[t] = score
    return _matrix(cells)


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b
