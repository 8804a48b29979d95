"""Where orjson stands in for the standard library on the engine's hot path, it reads and writes the same values.

`replies.loads_like_json` (a tool call's arguments) must give what `json.loads` gives, value for value and type
for type, or raise as it does; the store's `json_text` must write text that reads back as the standard library's own
text does (the spelling may differ: orjson's is compact)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.agents.replies import decode_arguments, loads_like_json
from storage.store.columns import ENCODER, json_text

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)  # beyond 64 bits too, where orjson reads a float
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


def same(a: object, b: object) -> bool:
    """Equal with the same types throughout (1 == 1.0 == True in Python; not in JSON)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)  # type: ignore[attr-defined]
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))  # type: ignore[arg-type]
    return a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b))  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(VALUES, st.sampled_from([None, (",", ":"), (", ", ": ")]))
def test_arguments_read_as_json_reads_them(value, separators):
    text = json.dumps(value, separators=separators, ensure_ascii=False)
    assert same(loads_like_json(text), json.loads(text))


@pytest.mark.parametrize(
    "text", ['{"n": NaN}', '{"n": Infinity}', '{"x": 1e400}', '{"s": "\\ud800"}', '{"n": -9223372036854775809}']
)
def test_what_orjson_refuses_or_reads_otherwise_is_read_by_json(text):
    assert same(loads_like_json(text), json.loads(text))


@pytest.mark.parametrize("text", ["{", "[1,]", "{'a': 1}", "\ufeff{}", "nul"])
def test_text_json_refuses_is_kept_raw(text):
    with pytest.raises(ValueError):
        json.loads(text)
    assert decode_arguments(text) == {"_raw": text}


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_the_store_s_json_reads_back_as_the_standard_library_s(value):
    assert same(json.loads(json_text(value) or "null"), json.loads(ENCODER.encode(value)))


def test_what_json_writes_by_default_is_written_alike():
    """Datetimes, dataclasses and non-string keys as json with `default=str` writes them."""
    import datetime
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: int

    value = {1: datetime.date(2024, 1, 2), "p": Point(1), None: True, 2.5: "f", "big": 2**70}
    assert json.loads(json_text(value) or "null") == json.loads(ENCODER.encode(value))


def test_a_number_json_cannot_carry_is_stored_as_null_which_sqlite_reads():
    import sqlite3

    text = json_text({"cost": float("nan"), "n": 1})
    assert json.loads(text or "null") == {"cost": None, "n": 1}
    assert sqlite3.connect(":memory:").execute("SELECT json_extract(?, '$.n')", (text,)).fetchone() == (1,)
