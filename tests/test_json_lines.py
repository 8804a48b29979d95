"""A release line that is not JSON is named once, clearly: no doubled word, an unterminated string quoted."""

from __future__ import annotations

import itertools

import pytest

from sandbox.release import DatasetError, json_lines


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
