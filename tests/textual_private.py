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
        raise AssertionError(
            f"Textual {textual.__version__}: {type(obj).__name__}.{name} is gone; the tests read it "
            "through tests/textual_private.py, which needs updating"
        ) from None


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


_PARSE_PARAMETERS = ("scope", "css", "read_from", "variables", "variable_tokens", "is_default_rules", "tie_breaker")


def share_parsed_css() -> None:
    """Parse each stylesheet once per test process instead of several times per app.

    Every app parses the same CSS (Textual's widgets' DEFAULT_CSS, the workbench's .tcss files) under the same
    theme variables, and at start parses it twice (the theme change re-parses into a fresh stylesheet whose cache is
    then dropped): ~0.05 s of CPU per app, on every one of the suite's hundreds of apps. Textual's `parse` is a pure
    function of its arguments, and the rule sets it returns are only read afterwards (each stylesheet's own cache
    already hands the same ones out again), so a process-wide cache keyed on every argument gives each app exactly
    the rule sets it would have parsed. Installed once; fails loudly if Textual's parser moves or changes shape.
    """
    import inspect

    from textual.css import stylesheet

    parse = private(stylesheet, "parse")
    if getattr(parse, "shared_by_tests", False):
        return
    if tuple(inspect.signature(parse).parameters) != _PARSE_PARAMETERS:
        raise AssertionError(
            f"Textual {textual.__version__}: textual.css.stylesheet.parse{inspect.signature(parse)} "
            "is not the parser tests/textual_private.py caches; it needs updating"
        )
    parsed: dict[tuple, list[Any]] = {}
    frozen: list[Any] = [None, ()]  # the last variable_tokens dict seen and its hashable form (one per stylesheet)

    def tokens_key(variable_tokens: dict | None) -> tuple:
        if variable_tokens is not frozen[0]:
            frozen[:] = [
                variable_tokens,
                tuple((name, tuple(tokens)) for name, tokens in (variable_tokens or {}).items()),
            ]
        return frozen[1]

    def shared(scope, css, read_from, variables=None, variable_tokens=None, is_default_rules=False, tie_breaker=0):
        key = (
            scope,
            css,
            read_from,
            tuple((variables or {}).items()),
            tokens_key(variable_tokens),
            is_default_rules,
            tie_breaker,
        )
        if key not in parsed:
            parsed[key] = list(
                parse(
                    scope,
                    css,
                    read_from,
                    variables=variables,
                    variable_tokens=variable_tokens,
                    is_default_rules=is_default_rules,
                    tie_breaker=tie_breaker,
                )
            )
        yield from parsed[key]

    shared.shared_by_tests = True
    stylesheet.parse = shared
