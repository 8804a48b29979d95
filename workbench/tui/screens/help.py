"""`?`: the keys of the screen it was opened from, as they are bound now (after the user's keymap)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Static

from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.plaintext import display_path

SKIP_ACTIONS = {"app.command_palette"}
WIDE = 102  # the dialog's full width (100) and the screen's edges: below it the table drops a column


def bound_key(app, binding_id: str, default: str) -> str:
    """The key `binding_id` answers to now (the user's [keys] remap, else `default`), as the footer shows it: text
    that names a key must name the one that works."""
    keys = (getattr(app, "keymap", None) or {}).get(binding_id) or default
    first = keys.split(",")[0].strip() or default
    return app.get_key_display(Binding(first, "", ""))


def key_rows(screen: Screen) -> list[tuple[str, str, str, str]]:
    """(where, keys, description, binding id) of every active binding of `screen`, keys of one id merged."""
    app = screen.app
    merged: dict[tuple[str, str], list] = {}
    order: list[tuple[str, str]] = []
    for _key, active in screen.active_bindings.items():
        binding = active.binding
        node = active.node
        where = "global" if node is app else ("screen" if node is screen else type(node).__name__)
        ident = binding.id or f"{where}:{binding.action}"
        slot = (where, ident)
        if slot not in merged:
            merged[slot] = [binding, []]
            order.append(slot)
        merged[slot][1].append(app.get_key_display(binding))
    rows = []
    for where, ident in order:
        binding, keys = merged[(where, ident)]
        description = binding.description or binding.tooltip or binding.action
        rows.append((where, " ".join(dict.fromkeys(keys)), description, binding.id or ""))
    rank = {"screen": 0, "global": 2}
    rows.sort(key=lambda r: rank.get(r[0], 1))
    return rows


class HelpScreen(WorkbenchNode, ModalScreen[None]):
    BINDINGS = [Binding("escape,q,question_mark", "dismiss_help", "Close", id="help.close")]

    def __init__(self, source: Screen):
        super().__init__(classes="dialog-screen")
        self.source = source

    def compose(self) -> ComposeResult:
        narrow = self.app.size.width < WIDE  # at 80 columns the "where" column gives its room to the binding ids
        table = Table(expand=True, show_edge=False, pad_edge=False)
        if not narrow:
            table.add_column("where", style="dim", no_wrap=True)
        table.add_column("key", style="bold", no_wrap=True)
        table.add_column("action")
        table.add_column(Text("binding id (for [keys])"), style="dim", no_wrap=True)
        for where, keys, description, ident in key_rows(self.source):
            cells = [Text(keys), Text(description), Text(ident)]
            table.add_row(*([] if narrow else [Text(where)]), *cells)
        name = getattr(self.source, "HELP_TITLE", None) or type(self.source).__name__.removesuffix("Screen")
        config = display_path(self.app.config_path)
        note = Text.assemble(
            ("Remap any key in ", "dim"),
            (config, "bold"),
            (" under a [keys] table, e.g.\n", "dim"),
            ('  [keys]\n  "stepper.next" = "right,l,space"\n', ""),
            ("ctrl+p opens the command palette with every action; ctrl+q quits.", "dim"),
        )
        with Vertical(classes="dialog help-dialog"):
            yield Static(Text(f"Keys · {name}"), classes="dialog-title")
            with VerticalScroll(id="help-keys"):
                yield Static(table)
            yield Static(note, id="help-note")

    def action_dismiss_help(self) -> None:
        self.dismiss(None)
