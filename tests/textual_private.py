"""Textual's private state that the tests read, in one place.

Pilot offers no public way to see the notifications shown, the callbacks still waiting for a refresh, or the
colour filters in force; the tests read them from Textual's private attributes. Each read goes through `private`,
which fails with a message naming the attribute and the Textual version when an upgrade removes it, instead of a
test quietly waiting for nothing or passing on an empty list.
"""
from __future__ import annotations

from typing import Any

import textual


def private(obj: Any, name: str) -> Any:
    """`obj.<name>`, or an AssertionError saying which private attribute of which Textual version is gone."""
    try:
        return getattr(obj, name)
    except AttributeError:
        raise AssertionError(f"Textual {textual.__version__}: {type(obj).__name__}.{name} is gone; the tests read it "
                             "through tests/textual_private.py, which needs updating") from None


def notifications(app: Any) -> list[Any]:
    """The notifications the app has shown and still holds (each has `message`, `severity`, `markup`)."""
    return list(private(app, "_notifications"))


def messages(app: Any) -> list[str]:
    return [n.message for n in notifications(app)]


def after_refresh_callbacks(screen: Any) -> list[Any]:
    """Callbacks of `call_after_refresh` the screen keeps until it has refreshed."""
    return list(private(screen, "_callbacks"))


def filters(app: Any) -> list[Any]:
    """The line filters in force (NO_COLOR adds one)."""
    return list(private(app, "_filters"))
