"""How values cross the store's columns: JSON text in and out, long texts keyed by hash, rows as typed records,
the time a row is stamped with, the rowid an INSERT wrote. Shared by every table's methods (`storage.store`)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, TypeVar

import orjson


def inserted_id(cur: sqlite3.Cursor) -> int:
    """The rowid the INSERT just run on `cur` wrote (sqlite3 types `lastrowid` Optional, None before any insert)."""
    rowid = cur.lastrowid
    assert rowid is not None, "an INSERT sets lastrowid"
    return rowid


def now() -> str:
    """The time in UTC to the second, as ISO 8601 (`2026-12-04T20:14:34+00:00`): written at each episode's start
    and end, so one second's text is built once (building it cost ~2 µs, twice per episode)."""
    return _iso_second(int(time.time()))


@lru_cache(maxsize=1)
def _iso_second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).isoformat()


Record = TypeVar("Record")


def as_records(rows: Iterable[sqlite3.Row], record: Callable[..., Record]) -> list[Record]:
    """Rows of a query as the records its columns make (`storage.rows`)."""
    return [as_record(record, dict(r)) for r in rows]


def as_record(record: Callable[..., Record], columns: Mapping[str, Any]) -> Record:
    """One row's columns as its record: SQLite's rows are untyped, the query's columns fix the record's keys."""
    return record(**columns)


# json.dumps with these options builds an encoder on every call; one kept encoder writes the same text
ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


# orjson writes what json writes, value for value (its text is compact), ~10× faster: a step's arguments and usage, a
# trajectory's reads and actions, on the engine's one thread. Passed through to `default` (as json does): datetimes
# and dataclasses; what orjson refuses (an integer beyond 64 bits) goes through json. A NaN or an infinity, which
# JSON cannot carry, is written as null rather than as json's invalid `NaN` (which SQLite's JSON functions refuse).
_AS_JSON_DOES = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def json_text(value: Any) -> str | None:
    """A value as the JSON text its column stores (None as NULL)."""
    if value is None:
        return None
    try:
        return orjson.dumps(value, default=str, option=_AS_JSON_DOES).decode()
    except (orjson.JSONEncodeError, TypeError):
        return ENCODER.encode(value)


def decode_json_column(texts: list[str | None]) -> list[Any]:
    """Many JSON texts decoded by one parser call (an array of them), NULL ones as None: a run's
    action lists decode faster than with one `json.loads` per row."""
    if not texts:
        return []
    return json.loads("[" + ",".join(t if t else "null" for t in texts) + "]")


def opt_str(value: Any) -> str | None:
    """A value as a text column's text (None as NULL)."""
    return None if value is None else str(value)


def text_key(text: str) -> str:
    """The key of a long text in `texts` (a step's, a run's prompts file)."""
    return hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()
