"""A release line that is not JSON is named once, clearly: no doubled word, an unterminated string quoted."""

from __future__ import annotations

import itertools
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.release import DatasetError, Warnings, json_lines, read_line


@pytest.mark.parametrize(
    "line, said",
    [
        ('{"id": "st_0001", "question": "How does it\n', 'unterminated string at column 31: "How does it'),
        ('{"id": "st_0001", "question": "' + "x" * 40 + "\n", 'unterminated string at column 31: "' + "x" * 23 + "…"),
        ('{"id": "a\x01b"}\n', "Invalid control character at column 10"),
        ("{not json\n", "Expecting property name enclosed in double quotes at column 2"),
    ],
)
def test_a_bad_line_says_what_and_where_once(tmp_path, line, said):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "ok"}\n' + line, encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        list(json_lines(path))
    message = str(info.value)
    assert info.value.line == 2 and f"is not valid JSON ({said})" in message
    words = message.split()
    assert not [a for a, b in itertools.pairwise(words) if a == b]  # "starting at at column" no more


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(), json_values, max_size=5), st.booleans())
def test_a_line_reads_as_json_reads_it(obj, ascii_only):
    """The fast reader (orjson) gives what json gives, escaped or not, lone surrogates included (json reads
    those; they are then repaired and counted by `json_lines`)."""
    line = json.dumps(obj, ensure_ascii=ascii_only)
    assert read_line(line) == json.loads(line)


def test_lone_surrogates_are_still_repaired_and_counted(tmp_path):
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "a\\ud800b"}\n{"id": "ok", "x": NaN}\n', encoding="utf-8")
    warnings = Warnings()
    rows = list(json_lines(path, warnings))
    assert rows[0] == (1, {"id": "a\ufffdb"}) and rows[1][1]["id"] == "ok" and math.isnan(rows[1][1]["x"])
    assert warnings.counts == {"lone_surrogates": 1}
