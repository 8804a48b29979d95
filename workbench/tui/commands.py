"""The command palette (ctrl+p): the workbench's actions, every key of the current screen, and each run by name."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

if TYPE_CHECKING:
    from workbench.tui.app import WorkbenchApp

Command = tuple[str, str, Callable[[], object]]


class WorkbenchCommands(Provider):
    def commands(self) -> Iterator[Command]:
        app = cast("WorkbenchApp", self.app)  # the palette's provider is no DOM node: typed by a cast (host.py)
        screen = self.screen
        yield "New run…", "configure and launch a run", app.action_new_run
        yield "Run the built-in benchmark (heuristic agent)", "one click baseline", app.action_run_builtin
        yield "Runs", "go to the list of runs", app.action_home
        yield "Compare two runs…", "side by side on their common items: axes, agreement, tool use", app.action_compare
        yield "Browse items…", "a dataset's items: filters, citation tree, every stored trajectory", app.action_items
        yield "Audit the benchmark…", "review items: verdicts, label edits, the corrected release", app.action_audit
        yield "Scaling…", "sequential plateaus and parallel sampling (verification gap)", app.action_scaling
        yield (
            "Open a campaign file…",
            "a panel and its studies as one file: its plan and estimated cost, started and watched run by run",
            app.action_open_campaign,
        )
        yield (
            "Play the benchmark…",
            "answer items yourself under the agents' tools and budget, then see how the models did",
            app.action_play,
        )
        yield (
            "Panel: Table 2 by family and tier, fingerprints…",
            "several runs as the paper reads its panel: tier "
            "leaders, family fingerprints with their tests, figures; export",
            app.action_panel,
        )
        yield (
            "Leaderboard: people and models",
            "accuracy and the four axes on the items people played",
            app.action_leaderboard,
        )
        yield "Keys and help", "the keys of this screen", app.action_help
        yield "Toggle light / dark theme", "AgentHop light ↔ dark (remembered)", app.action_toggle_theme
        seen = set()
        for active in screen.active_bindings.values():
            binding, node = active.binding, active.node
            # the workbench's own bindings (they all have ids), not every widget's cursor keys
            if not binding.id or not binding.description or binding.system or binding.id in seen:
                continue
            seen.add(binding.id)
            where = (
                "global"
                if node is app
                else (getattr(screen, "HELP_TITLE", None) or type(screen).__name__.removesuffix("Screen"))
            )
            key = app.get_key_display(binding)
            yield (
                f"{where}: {binding.description}",
                f"key {key}" + (f" · {binding.id}" if binding.id else ""),
                partial(app.run_action, binding.action, node),
            )
        watchable = set(app.jobs) | app.runs_in_progress()  # launched here, or executed by any process now
        for name in app.run_names():
            yield f"Open run: {name}", "its trajectories and diagnostics", partial(app.open_run, name)
            if name in watchable:
                yield f"Watch run: {name}", "the live monitor", partial(app.watch_run, name)

    async def discover(self) -> Hits:
        for title, help_text, callback in self.commands():
            yield DiscoveryHit(Content(title), callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self.commands():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
