"""Scores files: the plateau of a study measured elsewhere, read from JSON or CSV (budgets × items), with the
errors a user must fix said as such."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from stats.plateau import parse_budget, scores_from_mapping, scores_from_rows
from storage.json_types import JsonObject, JsonValue
from workbench.service.records.sequential import Plateau
from workbench.service.scaling.sequential import ScalingInputError, plateau_result


def load_scores(path: Path, study: str | None = None) -> tuple[list[str], list[str], np.ndarray]:
    """Per-item scores from a file, as (budgets, items, n×K or n×K×T matrix); every defect is the user's (exit 2).

    JSON: {"budget": {"item": score}} (or {study: that}, chosen with --study), where a score may be
    a list of the item's trials. CSV: columns item,budget,score and optionally trial; an empty
    score is missing, as JSON null is.
    """
    text = read_scores_file(path)
    if path.suffix.lower() == ".csv":
        if study is not None:
            raise ScalingInputError(f"--study is for a JSON file of several studies; {path} is CSV (one study)")
        return _csv_scores(path, text)
    data = _chosen_study(path, _json_object(path, text), study)
    try:
        return scores_from_mapping(data)
    except ValueError as exc:
        raise ScalingInputError(f"{path}: {exc}") from None


def read_scores_file(path: Path) -> str:
    """A scores file's text; a file that cannot be read is the user's to fix."""
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ScalingInputError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None


def _json_object(path: Path, text: str) -> JsonObject:
    """The scores file's JSON: an object with keys, with no NaN or Infinity anywhere in it."""
    try:
        data = json.loads(text, parse_constant=_NonFinite)
    except json.JSONDecodeError as exc:
        raise ScalingInputError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    found = _non_finite(data)
    if found:
        raise ScalingInputError(
            f"{path}: {' → '.join(found[0])}: {found[1]} is not a score (write null for a missing one)"
        )
    if not isinstance(data, dict) or not data:
        raise ScalingInputError(f"{path}: expected an object of budgets")
    return data


def _chosen_study(path: Path, data: JsonObject, study: str | None) -> JsonObject:
    """The budgets of one study: the file's own when its keys are budgets, else the study `--study` names."""
    one_study = any(_is_budget(key) for key in data)
    if one_study:
        if study is not None:
            raise ScalingInputError(f"--study: {path} holds one study (its keys are budgets)")
        return data
    odd = next((key for key, value in data.items() if not _holds_budgets(value)), None)
    if odd is not None:  # {"a": 1} was said to hold "several studies"
        raise ScalingInputError(
            f"{path}: {odd!r} is neither a budget (8k, 16, …) nor a study of budgets; "
            'expected {"budget": {"item": score}} or {"study": {"budget": {"item": score}}}'
        )
    if study is None:
        raise ScalingInputError(f"{path} holds several studies; choose one with --study: {', '.join(data)}")
    chosen = data.get(study)
    if not isinstance(chosen, dict):  # absent: every value is a study of budgets (checked above)
        raise ScalingInputError(f"{path}: no study '{study}' (have: {', '.join(data)})")
    return chosen


def _holds_budgets(value: JsonValue) -> bool:
    """Whether a value is a study: an object with a budget among its keys."""
    return isinstance(value, dict) and any(_is_budget(k) for k in value)


def file_plateau(path: Path, study: str | None = None, **options: Any) -> Plateau:
    """`plateau_result` of a scores file; every complaint names the file (a duplicate budget with two scores,
    a single budget, too few items on the common support)."""
    budgets, items, matrix = load_scores(path, study)
    try:
        return plateau_result(budgets, items, matrix, **options)
    except ScalingInputError as exc:
        raise ScalingInputError(f"{path}: {exc}") from None


class _NonFinite:
    """JSON's NaN/Infinity extension in a scores file, kept as a marker: Python reads NaN as a float that the
    plateau would take for a missing score, so it is refused where it stands."""

    def __init__(self, constant: str):
        self.constant = constant


def _non_finite(data: Any, where: tuple[str, ...] = ()) -> tuple[tuple[str, ...], str] | None:
    """(path of keys, constant) of the first NaN/Infinity in the parsed file, or None."""
    if isinstance(data, _NonFinite):
        return where, data.constant
    children = data.items() if isinstance(data, dict) else enumerate(data) if isinstance(data, list) else ()
    for key, value in children:
        found = _non_finite(value, (*where, f"trial {key}" if isinstance(key, int) else repr(key)))
        if found:
            return found
    return None


def _is_budget(label: str) -> bool:
    try:
        parse_budget(label)
    except ValueError:
        return False
    return True


def _csv_scores(path: Path, text: str) -> tuple[list[str], list[str], np.ndarray]:
    reader = csv.DictReader(text.splitlines())
    header = [h.strip() for h in reader.fieldnames or []]
    reader.fieldnames = header
    absent = [c for c in ("item", "budget", "score") if c not in header]
    if absent:
        raise ScalingInputError(
            f"{path}: no column {', '.join(repr(c) for c in absent)} "
            "(the header must name item,budget,score and optionally trial)"
        )
    keys = ("item", "budget", "score", "trial") if "trial" in header else ("item", "budget", "score")
    rows = [_csv_fields(path, lineno, row, keys) for lineno, row in enumerate(reader, 2)]
    try:
        return scores_from_rows(rows, first_line=2)
    except ValueError as exc:
        raise ScalingInputError(f"{path}: {exc}") from None


def _csv_fields(path: Path, lineno: int, row: dict[str, str | None], keys: tuple[str, ...]) -> tuple[str | None, ...]:
    """One CSV line's fields in `keys`' order; every field but the score must be given (an empty score is missing)."""
    for key in keys:
        if key != "score" and not (row.get(key) or "").strip():
            raise ScalingInputError(f"{path}:{lineno}: field '{key}' is missing")
    return tuple(row.get(k) for k in keys)
