"""The workbench app as its screens and widgets see it: `self.app` typed as `WorkbenchApp`.

Textual types every node's `app` as `App[Any]`, so the workbench's own members (`jobs`, `store_path`, `open_run`, …)
would be untyped attribute lookups. A screen or widget that reaches them lists `WorkbenchNode` first among its
bases; the type checker then reads `self.app` through Textual's typed getter (`textual.getters.app`). At run time
the class adds nothing: `self.app` is Textual's own property, and the app's module is imported for the type
checker only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message_pump import MessagePump

if TYPE_CHECKING:
    from textual import getters

    from workbench.tui.app import WorkbenchApp


class WorkbenchNode(MessagePump):
    """A base for the workbench's screens and widgets that types `self.app` as the workbench app."""

    if TYPE_CHECKING:
        app = getters.app(WorkbenchApp)
