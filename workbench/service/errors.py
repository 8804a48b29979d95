"""The errors of the floors below that a front end catches, in one place: the one door for error classes.

A front end catches these (and the application layer's own, e.g. `LaunchError`, `PlayError`) and words them; it
never imports the sandbox or the store to name one. Each is loaded on first use (PEP 562), so naming
`StoreError` does not import the runner: the TUI's first paint stays light.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what the names are, for the type checker and the reader; at run time they load on first use
    from sandbox.agents.llm import ConfigError
    from sandbox.agents.local_model import LocalModelUnavailable
    from sandbox.release import DatasetError
    from sandbox.runner.selection import InvalidSlice
    from sandbox.synth.sizes import NotEnoughPapers
    from storage.errors import RunConflict, StoreError, StoreFull, StoreReadOnly

# name → the module that defines it
_HOMES = {
    "DatasetError": "sandbox.release",
    "InvalidSlice": "sandbox.runner.selection",
    "NotEnoughPapers": "sandbox.synth.sizes",
    "ConfigError": "sandbox.agents.llm",
    "LocalModelUnavailable": "sandbox.agents.local_model",
    "StoreError": "storage.errors",
    "RunConflict": "storage.errors",
    "StoreReadOnly": "storage.errors",
    "StoreFull": "storage.errors",
}

__all__ = [
    "ConfigError",
    "DatasetError",
    "InvalidSlice",
    "LocalModelUnavailable",
    "NotEnoughPapers",
    "RunConflict",
    "StoreError",
    "StoreFull",
    "StoreReadOnly",
]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
