"""Audit mode (the paper's Stage 7 review): an item's question, options, gold answer and labelled evidence side by
side; verdicts Pass / Flag / Remove with a note and the three quality checks; section labels added, removed or
re-classified; the corrected dataset exported in the release format.

Everything is stored through `storage.Store` with the reviewer and the time (see `workbench.audit`), so the
batch `audit` commands and this screen read and write the same records.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Input, Static

from workbench import audit
from workbench.tui.plaintext import sanitize

CHECK_LABELS = {"question_ok": "question well formed", "gold_supported": "gold answer supported",
                "labels_accurate": "recall labels accurate"}


def item_rows(corpus, verdicts: dict[str, dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(item id, kind, current verdict) for the list on the left."""
    return [(i.id, f"{i.kind}_d{i.depth}", verdicts.get(i.id, {}).get("verdict", "—")) for i in corpus.items]


def evidence_text(ev: dict[str, Any]) -> Text:
    """The review sheet as plain text: question, options with the gold marked, each label with its section text."""
    out = Text()
    out.append(f"{ev['id']}\n", style="bold")
    out.append(sanitize(ev["question"]) + "\n\n")
    for i, option in enumerate(ev["options"]):
        letter = "ABCD"[i]
        kind = ev["distractor_types"][i] if ev["distractor_types"] else ""
        mark = "●" if letter == ev["gold"] else " "
        out.append(f"{mark} ({letter}) {kind:12s} ", style="bold" if letter == ev["gold"] else "")
        out.append(sanitize(option) + "\n")
    out.append("\nlabelled evidence\n", style="bold")
    for n, lab in enumerate(ev["labels"], 1):
        where = "gold paper" if lab["gold_paper"] else "other paper"
        out.append(f"\n[{n}] {lab['relevance'] or '?'} · {where} · {lab['arxiv_id'] or '(no arXiv id)'} · "
                   f"label “{sanitize(lab['label'])}” → {lab['resolved'] or 'unresolved'} ({lab['method']})\n",
                   style="bold")
        if lab["text"]:
            body = sanitize(lab["text"])
            out.append(body[:2000] + (" …" if len(body) > 2000 else "") + "\n")
    return out


class AuditScreen(Screen):
    """Review one item at a time; `p` / `f` / `x` record a verdict, labels are edited in place."""

    BINDINGS = [
        Binding("p", "verdict('pass')", "Pass", id="audit.pass"),
        Binding("f", "verdict('flag')", "Flag", id="audit.flag"),
        Binding("x", "verdict('remove')", "Remove", id="audit.remove"),
        Binding("c", "reclassify", "Re-classify label", id="audit.reclassify"),
        Binding("delete", "remove_label", "Remove label", id="audit.remove_label"),
        Binding("a", "add_label", "Add label", id="audit.add_label"),
        Binding("E", "export", "Export corrected", id="audit.export"),
        Binding("left_square_bracket", "label(-1)", "Prev label", id="audit.prev_label"),
        Binding("right_square_bracket", "label(1)", "Next label", id="audit.next_label"),
        Binding("escape", "back", "Back", id="audit.back"),
    ]

    def __init__(self, corpus, store_path: Path, reviewer: str, start: str | None = None):
        super().__init__()
        self.corpus = corpus
        self.store_path = store_path
        self.reviewer = reviewer
        self.start = start  # the item to open first (the item browser's), else the first item
        self.current: str | None = None
        self.label_index = 0

    def _store(self):
        from storage import Store

        return Store(self.store_path)

    def compose(self) -> ComposeResult:
        with Horizontal(id="audit-body"):
            yield DataTable(id="audit-items", cursor_type="row", zebra_stripes=True)
            with Vertical(id="audit-review"):
                yield Static("", id="audit-status")
                with VerticalScroll(id="audit-sheet"):
                    yield Static("", id="audit-evidence")
                with Horizontal(id="audit-checks"):
                    for key, label in CHECK_LABELS.items():
                        yield Checkbox(label, id=f"check-{key}")
                yield Input(placeholder="note for the verdict", id="audit-note")
                yield Input(placeholder="add label: ARXIV_ID | section header | direct|supporting", id="audit-add")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#audit-items", DataTable)
        table.add_columns("item", "kind", "verdict")
        self.refresh_items()
        table.focus()

    def refresh_items(self) -> None:
        store = self._store()
        try:
            verdicts = store.verdicts(self.corpus.fingerprint)
        finally:
            store.close()
        table = self.query_one("#audit-items", DataTable)
        row = table.cursor_row
        table.clear()
        for item_id, kind, verdict in item_rows(self.corpus, verdicts):
            table.add_row(Text(item_id), Text(kind), Text(verdict), key=item_id)
        if table.row_count:
            table.move_cursor(row=min(max(row, 0), table.row_count - 1))
        if self.current is None and table.row_count:
            ids = [i.id for i in self.corpus.items]
            first = self.start if self.start in ids else ids[0]
            self.show(first)
            table.move_cursor(row=ids.index(first), animate=False)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key is not None and event.row_key.value != self.current:
            self.show(str(event.row_key.value))

    def show(self, item_id: str) -> None:
        self.current = item_id
        self.label_index = 0
        self.evidence = audit.evidence(self.corpus, item_id)
        self.query_one("#audit-evidence", Static).update(evidence_text(self.evidence))
        self._status()

    def _status(self, message: str = "") -> None:
        labels = self.evidence["labels"]
        chosen = (f"label [{self.label_index + 1}] selected ([ and ] to change)" if labels else "no labels")
        self.query_one("#audit-status", Static).update(Text(
            f"reviewer {self.reviewer} · {chosen}" + (f" · {message}" if message else "")))

    def action_label(self, delta: int) -> None:
        if self.evidence["labels"]:
            self.label_index = (self.label_index + delta) % len(self.evidence["labels"])
            self._status()

    def checks(self) -> dict[str, bool]:
        return {key: self.query_one(f"#check-{key}", Checkbox).value for key in CHECK_LABELS}

    def action_verdict(self, verdict: str) -> None:
        note = self.query_one("#audit-note", Input).value
        store = self._store()
        try:
            store.add_verdict(self.corpus.fingerprint, self.current, self.reviewer, verdict, note, self.checks())
        finally:
            store.close()
        self.query_one("#audit-note", Input).value = ""
        self.refresh_items()
        self._status(f"{self.current}: {verdict}")

    def _label_edit(self, action: str, arxiv_id: str, section: str, relevance: str | None) -> None:
        store = self._store()
        try:
            store.add_label_edit(self.corpus.fingerprint, self.current, self.reviewer, action, arxiv_id, section,
                                 relevance)
        finally:
            store.close()
        self._status(f"label {action}: {arxiv_id} · {section}")

    def action_reclassify(self) -> None:
        labels = self.evidence["labels"]
        if labels:
            lab = labels[self.label_index]
            new = "supporting" if lab["relevance"] == "direct" else "direct"
            self._label_edit("reclassify", lab["arxiv_id"], lab["label"], new)

    def action_remove_label(self) -> None:
        labels = self.evidence["labels"]
        if labels:
            lab = labels[self.label_index]
            self._label_edit("remove", lab["arxiv_id"], lab["label"], None)

    def action_add_label(self) -> None:
        self.query_one("#audit-add", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "audit-add":
            return
        parts = [p.strip() for p in event.value.split("|")]
        if len(parts) != 3 or parts[2] not in ("direct", "supporting") or not parts[0] or not parts[1]:
            self._status("add label: write ARXIV_ID | section header | direct|supporting")
            return
        self._label_edit("add", parts[0], parts[1], parts[2])
        event.input.value = ""

    def action_export(self) -> None:
        from workbench.tui.dialogs import NameModal

        default = str(Path.cwd() / f"{Path(self.corpus.source).name}-audited")

        def check(value: str) -> str | None:
            path = Path(value).expanduser()
            return f"{path} exists and is not empty" if path.exists() and any(path.iterdir()) else None

        def chosen(value: str | None) -> None:
            if value:
                store = self._store()
                try:
                    counts = audit.write_corrected(self.corpus, store, Path(value).expanduser())
                except audit.AuditError as exc:
                    self.notify(str(exc), severity="error")
                    return
                finally:
                    store.close()
                self.notify(f"wrote {counts['items']} items ({counts['removed']} removed) to {value}", timeout=5)

        self.app.push_screen(NameModal("Write the corrected dataset to", default, check), chosen)

    def action_back(self) -> None:
        self.app.pop_screen()
