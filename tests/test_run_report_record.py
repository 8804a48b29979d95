"""The run report's and the leaderboard's typed records (`workbench.service.records.report.RunReport`, `Board`) against the
JSON `report --format json` and `leaderboard --format json` print: every key the JSON holds is declared, every
required key is there, at every level the record types (the axes, the counts, the analytics, the intervals, the
board's rows, …), and the terminations and error kinds are keyed by their closed sets of words. The JSON is the one
tests/test_json_shapes.py holds byte for byte to the commands' output, so a key added to an output without its
record (or a record key the output no longer fills) fails here."""

from __future__ import annotations

import json
import types
from pathlib import Path
from typing import Any, Literal, NotRequired, TypeVar, Union, get_args, get_origin, get_type_hints, is_typeddict

from workbench.service.records.leaderboard import Board
from workbench.service.records.report import RunReport

GOLDEN = Path(__file__).parent / "data" / "json_shapes" / "core.json"


def _strip(hint: Any) -> Any:
    """A hint without NotRequired, and with None dropped from a union (None values are checked as present)."""
    if get_origin(hint) is NotRequired:
        hint = get_args(hint)[0]
    if get_origin(hint) in (Union, types.UnionType):
        kept = [a for a in get_args(hint) if a is not type(None)]
        return kept[0] if len(kept) == 1 else hint
    return hint


def _record(hint: Any) -> tuple[type | None, dict[Any, Any]]:
    """The TypedDict a hint names (itself, or the origin of a parametrised generic one) and its type variables'
    bindings."""
    origin = get_origin(hint) or hint
    if not is_typeddict(origin):
        return None, {}
    params = getattr(origin, "__parameters__", ())
    return origin, dict(zip(params, get_args(hint), strict=True))


def _hints(record: Any) -> dict[str, Any]:
    """A record's field types, resolving the stats record types its module names under TYPE_CHECKING only."""
    import stats.axes
    import stats.ngrams
    import stats.significance
    import stats.stopping

    names = {k: v for m in (stats.axes, stats.ngrams, stats.significance, stats.stopping) for k, v in vars(m).items()}
    return get_type_hints(record, localns=names, include_extras=True)


def mismatches(hint: Any, value: Any, path: str = "report") -> list[str]:
    """Where `value` departs from `hint`'s keys: undeclared keys, missing required ones, keys outside a Literal."""
    hint = _strip(hint)
    if isinstance(hint, TypeVar) or value is None:
        return []
    record, bound = _record(hint)
    if record is not None:
        if not isinstance(value, dict):
            return [f"{path}: {type(value).__name__}, not an object"]
        hints = _hints(record)
        # NotRequired read from the hints: under postponed annotations a TypedDict's __required_keys__ has them all
        required = [k for k, h in hints.items() if get_origin(h) is not NotRequired] if record.__total__ else []
        found = [f"{path}.{k}: not in {record.__name__}" for k in value if k not in hints]
        found += [f"{path}.{k}: missing" for k in required if k not in value]
        for key, inner in hints.items():
            if key in value:
                found += mismatches(bound.get(inner, inner), value[key], f"{path}.{key}")
        return found
    if get_origin(hint) is dict and isinstance(value, dict):
        key_hint, value_hint = get_args(hint)
        found = []
        if get_origin(key_hint) is Literal:
            found += [f"{path}: key {k!r} not one of the {key_hint}" for k in value if k not in get_args(key_hint)]
        for k, v in value.items():
            found += mismatches(value_hint, v, f"{path}.{k}")
        return found
    if get_origin(hint) is list and isinstance(value, list):
        return [m for i, v in enumerate(value) for m in mismatches(get_args(hint)[0], v, f"{path}[{i}]")]
    return []


def test_the_full_report_json_matches_its_record():
    report = json.loads(GOLDEN.read_text())["report"]
    assert report["analytics"]["bigrams"] and report["analytics"]["top_trigram"]  # the nested records are exercised
    assert mismatches(RunReport, report) == []


def test_the_checker_finds_an_undeclared_key_a_missing_one_and_a_word_outside_the_set():
    report = json.loads(GOLDEN.read_text())["report"]
    report["cut_off"]["extra"] = 1
    del report["axes"]["resource"]["avg_turns"]
    report["terminations"]["gave_up"] = 0
    found = mismatches(RunReport, report)
    assert "report.cut_off.extra: not in CutOff" in found
    assert "report.axes.resource.avg_turns: missing" in found
    assert any(m.startswith("report.terminations: key 'gave_up'") for m in found), found


def test_intervals_match_their_record():
    from tests.test_reports import RECORDS
    from workbench.service.reports.run import intervals

    found = intervals(RECORDS * 2, n_boot=200)
    assert any(found.values())
    hint = _hints(RunReport)["intervals"]
    assert mismatches(hint, found, "intervals") == []


def test_the_leaderboard_json_matches_its_record():
    boards = json.loads(GOLDEN.read_text())["leaderboard"]
    assert boards and boards[0]["rows"]  # a board with rows: the row record is exercised
    assert mismatches(list[Board], boards, "leaderboard") == []


def test_the_plateau_json_matches_its_record():
    """`stats.plateau.PlateauResult.to_dict` and the `Plateau` record name the same fields (the record mirrors the
    dataclass: it cannot import it, `--batch runs` must not load numpy): a field added to one only is found."""
    import numpy as np

    from stats.plateau import plateau
    from workbench.service.records.sequential import Plateau

    scores = np.array([[0, 0, 1], [0, 1, 1], [1, 1, 1], [0, 0, 0], [0, 1, 1]], dtype=float)
    found = json.loads(json.dumps(plateau(scores, [1, 2, 3], n_boot=50).to_dict()))
    assert found["transitions"]  # the transition record is exercised too
    assert mismatches(Plateau, found, "plateau") == []
