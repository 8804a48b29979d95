"""The type of a JSON value: what the store keeps in its JSON columns and what a model's wire carries.

Used where a value really is any JSON (a tool's arguments as the model wrote them, a tool's schema, a stored
payload passed through unread); a value with a known shape gets a TypedDict or a dataclass instead.
"""

from __future__ import annotations

from typing import TypeAlias

JsonScalar: TypeAlias = str | int | float | bool | None
JsonValue: TypeAlias = JsonScalar | list["JsonValue"] | dict[str, "JsonValue"]
JsonObject: TypeAlias = dict[str, JsonValue]

__all__ = ["JsonObject", "JsonScalar", "JsonValue"]
