"""The item browser: a dataset's items with how many of the store's runs got each right; filter, sort, open.

The corpus is opened in a thread worker when the screen mounts (never at app startup: the
first open of a release imports it). Rows, filters and sorting are `workbench.service.items`, the
functions `--batch items` uses, so both show the same numbers. Enter opens the item view;
`a` audits the item, `p` plays it. The browser's wording and arithmetic (filter names, the question column's
width, the status line) are `workbench.tui.forms.items`'.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import DataTable, Input, Select, Static
from textual.widgets.data_table import ColumnKey
from textual.worker import Worker, WorkerState

from workbench.service import items
from workbench.tui.forms.items import RIGHT_LABELS, next_sort, question_width, status_text
from workbench.tui.host import WorkbenchNode
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.meters import theme_style
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.tui.widgets.tables import ItemsTable, clicked_sort
from workbench.views.cells import counted, fetch_line

COLUMNS = (
    ("id", "ITEM"),
    ("kind", "TYPE"),
    ("depth", "DEPTH"),
    ("reasoning", "REASONING"),
    ("tier", "TIER"),
    ("venue", "VENUE"),
    ("right", "RIGHT"),
    ("question", "QUESTION"),
)
SORT_OF_COLUMN = {
    "id": "id",
    "kind": "kind",
    "depth": "depth",
    "reasoning": "reasoning",
    "tier": "tier",
    "venue": "venue",
    "right": "right",
    "question": "file",
}
FILTERS = ("kind", "depth", "reasoning", "tier", "right")


def right_cell(row: items.ItemRow, app) -> Text:
    """`k/n` coloured by the outcome (theme colours): all right, none right, some; `—` when no run has it."""
    style = {
        "all": theme_style(app, "success"),
        "none": theme_style(app, "error"),
        "some": theme_style(app, "warning"),
    }.get(row.outcome, Style(dim=True))
    return Text(row.right_text, style=style, justify="right")


class ItemsScreen(WorkbenchNode, Screen):
    HELP_TITLE = "Items"
    FOOTER_WIDE_ONLY = frozenset({"items.audit", "items.play"})  # in ? help only, below 112 columns
    AUTO_FOCUS = "#items-table"
    BINDINGS = [
        Binding("slash", "search", "Search", id="items.search", key_display="/"),
        Binding("f", "filters", "Filters", id="items.filters"),
        Binding("s", "sort", "Sort", id="items.sort"),
        Binding("S", "sort_reverse", "Reverse sort", id="items.sort_reverse", show=False),
        Binding("d", "dataset", "Dataset", id="items.dataset"),
        Binding("a", "audit", "Audit", id="items.audit"),
        Binding("p", "play", "Play", id="items.play"),
        Binding("x", "clear_filters", "Clear filters", id="items.clear_filters", show=False),
        Binding("escape,q", "back", "Back", id="items.back"),
    ]
    NEEDS_ITEMS = {"audit", "play", "sort", "sort_reverse", "search", "filters", "clear_filters"}

    def __init__(self, dataset: str = items.BUILTIN):
        super().__init__()
        self.dataset = dataset
        self.corpus: Any = None
        self.view: items.Browse | None = None
        self.shown: list[items.ItemRow] = []
        self.sort_key = "file"
        self.sort_reverse = False
        self.error: str | None = None

    def compose(self) -> ComposeResult:
        yield Static("", id="items-title", classes="title-bar")
        with Horizontal(id="items-filters"):
            yield Select([(Text(k), k) for k in items.KINDS], prompt="type", compact=True, id="filter-kind")
            yield Select(
                [(Text(f"depth {d}"), d) for d in items.DEPTHS], prompt="depth", compact=True, id="filter-depth"
            )
            yield Select([], prompt="reasoning", compact=True, id="filter-reasoning")
            yield Select([], prompt="tier", compact=True, id="filter-tier")
            yield Select(
                [(Text(label), key) for key, label in RIGHT_LABELS.items()],
                prompt="right",
                compact=True,
                id="filter-right",
            )
            yield Input(placeholder="/ search id and question…", id="filter-text")
        yield Static("", id="items-status")
        yield ItemsTable(id="items-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="items-message")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one(ItemsTable)
        for key, label in COLUMNS:
            table.add_column(Text(label + "  "), key=key)
        self.query_one("#items-message").display = False
        table.focus()
        self.load(self.dataset)

    # ------------------------------------------------------------ loading

    def load(self, dataset: str) -> None:
        """Open `dataset`'s corpus in a thread (the first open of a release imports it) with a loading indicator."""
        self.dataset, self.corpus, self.view, self.error = dataset, None, None, None
        self._title()
        table = self.query_one(ItemsTable)
        table.display = True
        table.loading = True
        if self.focused is None:
            table.focus()
        self.query_one("#items-message").display = False
        self.query_one("#items-status", Static).update(Text(f" opening {self._label()}…"))
        self.app.corpora.forget_error(dataset)  # a release put back in place opens on the next try
        self.run_worker(
            partial(self.app.corpora.corpus, dataset, on_fetch=self._fetching),
            name="items-corpus",
            group="items-corpus",
            thread=True,
            exclusive=True,
            exit_on_error=False,
        )

    def _fetching(self, event: Any) -> None:
        """A Hub release's download in the status line (called from the download's threads)."""
        if event.bytes_total:
            status = self.query_one("#items-status", Static)
            self.app.call_from_thread(status.update, Text(f" {fetch_line(event)}"))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.name != "items-corpus" or event.state not in (WorkerState.SUCCESS, WorkerState.ERROR):
            return
        self.query_one(ItemsTable).loading = False
        if event.state == WorkerState.ERROR:
            self._fail(str(worker.error))
            return
        self.corpus = worker.result
        self._set_choices()
        self.refresh_rows()
        self.refresh_bindings()

    def _fail(self, error: str) -> None:
        """Say why the dataset cannot be shown (a moved or deleted release, a broken file) and what still works."""
        self.error = error
        self.query_one(ItemsTable).display = False
        message = self.query_one("#items-message", Static)
        message.display = True
        message.update(
            Text.assemble(
                (f"Cannot open the dataset {self._label()}\n\n", "bold"),
                sanitize(error),
                "\n\n",
                "If the release directory moved, the runs made on it are still in the store (their trajectories open "
                "from the runs list); press ",
                ("d", "bold reverse"),
                " to open the release from its new place.\n",
            )
        )
        self.query_one("#items-status", Static).update(Text(""))
        self._title()
        self.refresh_bindings()

    def refresh_rows(self) -> None:
        """Recount outcomes from the store (cheap) and redraw; the corpus stays open."""
        if self.corpus is None:
            return
        store = self.app.open_store(create=False)
        self.view = items.browse(self.corpus, self.dataset, store)
        self._title()
        self.render_rows()

    def on_screen_resume(self) -> None:
        self.refresh_rows()  # a play or a run may have finished while the item view was on top

    def _set_choices(self) -> None:
        rows = items.item_rows(self.corpus.items, {})
        for name in ("reasoning", "tier"):
            select = self.query_one(f"#filter-{name}", Select)
            select.set_options([(Text(sanitize(v)), v) for v in items.choices(rows, name)])

    # ------------------------------------------------------------ showing

    def _label(self) -> str:
        return items.DatasetChoice(self.dataset).label

    def _title(self) -> None:
        title = Text.assemble((" Items", "bold"), "  ·  ", sanitize(self._label()))
        if self.view is not None:
            n = len(self.view.runs)
            title.append(
                f"  ·  {len(self.view.rows)} items  ·  right = runs right of {counted(n, 'run')} on this dataset"
            )
        self.query_one("#items-title", Static).update(title)

    def current_filter(self) -> items.ItemFilter:
        values: dict[str, Any] = {}
        for name in FILTERS:
            select = self.query_one(f"#filter-{name}", Select)
            values[name] = None if select.is_blank() else select.value
        return items.ItemFilter(**values, text=self.query_one("#filter-text", Input).value.strip())

    def render_rows(self) -> None:
        if self.view is None:
            return
        flt = self.current_filter()
        rows = items.sort_rows(items.filter_rows(self.view.rows, flt), self.sort_key, self.sort_reverse)
        table = self.query_one(ItemsTable)
        current = self.current_item_id
        width = self.question_width()
        self._drawn_width = width
        table.clear()
        for r in rows:
            table.add_row(
                Text(sanitize(r.id)),
                Text(r.kind),
                Text(str(r.depth), justify="right"),
                Text(sanitize(r.reasoning)),
                Text(sanitize(r.tier)),
                Text(sanitize(r.venue)),
                right_cell(r, self.app),
                Text(clip(" ".join(sanitize(r.question).split()), width)),
                key=r.id,
            )
        self.shown = rows
        ids = [r.id for r in rows]
        if current in ids:
            table.move_cursor(row=ids.index(current), animate=False)
        self._label_columns()
        self._status(self.view, flt)

    def question_width(self) -> int:
        """The question column's width at the terminal's width now (`forms.items.question_width`)."""
        return question_width(self.app.size.width)

    def on_resize(self) -> None:
        """A wider or narrower terminal re-clips the questions (only when their width changes)."""
        if self.view is not None and getattr(self, "_drawn_width", None) != self.question_width():
            self.render_rows()

    def _label_columns(self) -> None:
        table = self.query_one(ItemsTable)
        arrow = " ▼" if self.sort_reverse else " ▲"
        for key, label in COLUMNS:
            sorted_here = self.sort_key != "file" and SORT_OF_COLUMN[key] == self.sort_key
            column = table.columns.get(ColumnKey(key))
            if column is not None:
                column.label = Text(label + (arrow if sorted_here else "  "))
        table.refresh()

    def _status(self, view: items.Browse, flt: items.ItemFilter) -> None:
        line = status_text(len(self.shown), len(view.rows), flt.active(), self.sort_key, self.sort_reverse)
        note = view.note()
        text = Text(sanitize(line))
        if note:
            text.append(f" · {note}", style=theme_style(self.app, "warning"))
        self.query_one("#items-status", Static).update(text)

    @property
    def current_item_id(self) -> str | None:
        table = self.query_one(ItemsTable)
        if not self.shown or table.cursor_row is None or not (0 <= table.cursor_row < len(self.shown)):
            return None
        return self.shown[table.cursor_row].id

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Item actions are hidden until the dataset's items are listed."""
        return not (action in self.NEEDS_ITEMS and self.view is None)

    # ------------------------------------------------------------ events

    def on_select_changed(self, event: Select.Changed) -> None:
        self.render_rows()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "filter-text":
            self.render_rows()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.query_one(ItemsTable).focus()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_open()

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        key = SORT_OF_COLUMN[str(event.column_key.value)]
        self.sort_key, self.sort_reverse = clicked_sort(self.sort_key, self.sort_reverse, key)
        self.render_rows()

    # ------------------------------------------------------------ actions

    def action_open(self) -> None:
        from workbench.tui.screens.itemview import ItemScreen

        item_id = self.current_item_id
        if item_id is None or self.corpus is None:
            return
        ids = [r.id for r in self.shown]
        self.app.push_screen(ItemScreen(self.corpus, self.dataset, ids, ids.index(item_id)))

    def action_search(self) -> None:
        self.query_one("#filter-text", Input).focus()

    def action_filters(self) -> None:
        self.query_one("#filter-kind", Select).focus()

    def action_clear_filters(self) -> None:
        for name in FILTERS:
            self.query_one(f"#filter-{name}", Select).clear()
        self.query_one("#filter-text", Input).value = ""
        self.render_rows()
        self.query_one(ItemsTable).focus()

    def action_sort(self) -> None:
        self.sort_key = next_sort(self.sort_key)
        self.sort_reverse = False
        self.render_rows()  # the status line names the sort

    def action_sort_reverse(self) -> None:
        self.sort_reverse = not self.sort_reverse
        self.render_rows()

    def action_dataset(self) -> None:
        from workbench.tui.screens.dialogs import DatasetModal

        store = self.app.open_store(create=False)
        choices = items.known_datasets(store.runs() if store is not None else [])

        def chosen(spec: str | None) -> None:
            if spec and (spec != self.dataset or self.error):
                self.load(spec)

        self.app.push_screen(DatasetModal("Browse the items of", choices, self.dataset), chosen)

    def action_audit(self) -> None:
        item_id = self.current_item_id
        self.app.open_audit(self.dataset, item_id)

    def action_play(self) -> None:
        item_id = self.current_item_id
        if item_id:
            self.app.play_items(
                self.dataset, [item_id], fingerprint=self.corpus.fingerprint if self.corpus is not None else None
            )

    def action_back(self) -> None:
        """From the filter bar back to the table; from the table back to the previous screen."""
        table = self.query_one(ItemsTable)
        if self.focused is not None and self.focused is not table and table.display:
            table.focus()
            return
        self.app.pop_screen()
