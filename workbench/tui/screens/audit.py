"""Audit mode (the paper's Stage 7 review): an item's question, options, gold answer and labelled evidence side by
side; verdicts Pass / Flag / Remove with a note and the three quality checks; section labels added, removed,
re-classified or an edit undone; the corrected dataset exported in the release format.

The screen composes and binds; the form's rules and wording are `workbench.tui.forms.audit`'s (the draft, the
label typed to be added, the title and status lines). Everything is stored with the reviewer and the time, and every
rule of what is stored is `workbench.service.audit`'s (the sheet
is `audit.evidence`, verdicts go through `audit.record_verdict`, edits through `audit.record_edit` /
`audit.undo_edit`), so the batch `audit` commands and this screen read and write the same records.

Each item shows its latest verdict: the note and the checks are loaded from it (a check never
assessed is `?`, stored as NULL, never as failed). What the reviewer changes and has not recorded
yet is a draft kept per item, so moving in the list neither records it on another item nor loses
it; leaving audit mode with drafts asks first. The verdict keys work from the note field too
(F2 / F3 / F4), and escape in a field returns to the list.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from storage.rows import VerdictRow
from workbench.service import audit
from workbench.service.datasets import dataset_label
from workbench.service.paths import export_dir
from workbench.tui.forms.audit import (
    ADD_LABEL_HELP,
    NEXT_STATE,
    Draft,
    added_label,
    edit_words,
    export_refusal,
    item_rows,
    label_after_edit,
    leave_question,
    reviewer_problem,
    status_line,
    title_line,
    toggled_relevance,
    wrapped_label,
)
from workbench.tui.host import WorkbenchNode
from workbench.tui.screens.help import bound_key
from workbench.tui.widgets.footer import KeysFooter
from workbench.tui.widgets.plaintext import clip, sanitize
from workbench.views.cells import counted

CHECK_LABELS = {
    "question_ok": "question well formed",
    "gold_supported": "gold answer supported",
    "labels_accurate": "recall labels accurate",
}
SHORT_LABELS = {"question_ok": "question ok", "gold_supported": "gold supported", "labels_accurate": "labels accurate"}
CHECK_MARKS = {None: "?", True: "✓", False: "✗"}


def head_text(ev: dict[str, Any]) -> Text:
    """The top of the review sheet: question and options with the gold marked."""
    out = Text()
    out.append(f"{ev['id']}\n", style="bold")
    out.append(sanitize(ev["question"]) + "\n\n")
    for i, option in enumerate(ev["options"]):
        letter = "ABCD"[i]
        kind = ev["distractor_types"][i] if ev["distractor_types"] else ""
        mark = "●" if letter == ev["gold"] else " "
        out.append(f"{mark} ({letter}) {kind:12s} ", style="bold" if letter == ev["gold"] else "")
        out.append(sanitize(option) + "\n")
    n = len(ev["labels"])
    out.append(
        f"\nlabelled evidence · {counted(n, 'label')} · [ ] select · c re-classify · del remove · a add · u undo",
        style="bold",
    )
    return out


def label_text(n: int, lab: dict[str, Any], selected: bool) -> Text:
    """One label of the sheet: relevance, paper, label → resolved section, how it differs from the release, text."""
    where = "gold paper" if lab["gold_paper"] else "other paper"
    out = Text()
    out.append(
        f"{'▶' if selected else ' '} [{n}] {lab['relevance'] or '?'} · {where} · "
        f"{sanitize(lab['arxiv_id']) or '(no arXiv id)'} · label “{sanitize(lab['label'])}” → "
        f"{sanitize(lab['resolved'] or 'unresolved')} ({lab['method']})",
        style="bold",
    )
    edit = lab.get("edit")
    if edit:
        out.append(f"  {edit_words(edit['action'], edit.get('was'))} by {sanitize(edit['reviewer'])}", style="italic")
    out.append("\n")
    if lab["text"]:
        body = sanitize(lab["text"])
        out.append(body[:2000] + (" …" if len(body) > 2000 else "") + "\n")
    return out


def edits_text(edits: list[dict[str, Any]]) -> Text:
    """The item's edit history, oldest first; undone edits say by whom."""
    out = Text()
    if not edits:
        return out
    out.append("\nedits of this item (u undoes the latest in force)\n", style="bold")
    for e in edits:
        what = (
            f"undo of #{e['undoes']}"
            if e["action"] == "undo"
            else f"{e['action']}{' → ' + e['relevance'] if e['relevance'] else ''}"
        )
        line = (
            f"#{e['id']} {what} · {sanitize(e['arxiv_id'])} · “{clip(sanitize(e['section']), 40)}” · "
            f"{sanitize(e['reviewer'])} · {e['time'][:16].replace('T', ' ')}"
        )
        if e["undone_by"]:
            line += f" · undone by {sanitize(e['undone_by']['reviewer'])} (#{e['undone_by']['id']})"
        out.append(line + "\n", style="dim" if e["undone_by"] or e["action"] == "undo" else "")
    return out


class CheckState(Static, can_focus=True):
    """A three-state quality check: ? not assessed, ✓ yes, ✗ no. Space, enter or a click moves it on."""

    BINDINGS = [Binding("space,enter", "cycle", "Change", id="audit.check_cycle", show=False)]
    value: reactive[bool | None] = reactive(None)

    class Changed(Message):
        def __init__(self, check: CheckState) -> None:
            super().__init__()
            self.check = check

    def __init__(self, key: str, label: str, tooltip: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.key = key
        self.label = label
        self.tooltip = tooltip

    def render(self) -> Text:
        style = {None: "dim", True: "bold", False: "bold"}[self.value]
        return Text.assemble((f"[{CHECK_MARKS[self.value]}] ", style), self.label, no_wrap=True, overflow="ellipsis")

    def watch_value(self) -> None:
        self.set_class(self.value is True, "-yes")
        self.set_class(self.value is False, "-no")

    def action_cycle(self) -> None:
        self.value = NEXT_STATE[self.value]
        self.post_message(self.Changed(self))

    def on_click(self) -> None:
        self.action_cycle()


class AuditScreen(WorkbenchNode, Screen):
    """Review one item at a time; `p` / `f` / `x` (or F2 / F3 / F4, also from the note) record a verdict."""

    HELP_TITLE = "Audit"
    # in ? help only, below 112 columns: the verdicts and the label walk stay in the footer
    FOOTER_WIDE_ONLY = frozenset({"audit.note", "audit.reclassify", "audit.add_label", "audit.undo"})
    BINDINGS = [
        Binding("p", "verdict('pass')", "Pass", id="audit.pass", key_display="p/F2"),
        Binding("f", "verdict('flag')", "Flag", id="audit.flag", key_display="f/F3"),
        Binding("x", "verdict('remove')", "Remove", id="audit.remove", key_display="x/F4"),
        Binding("f2", "verdict('pass')", "Pass", id="audit.pass_any", show=False),
        Binding("f3", "verdict('flag')", "Flag", id="audit.flag_any", show=False),
        Binding("f4", "verdict('remove')", "Remove", id="audit.remove_any", show=False),
        Binding("1", "check(0)", "Question ok?", id="audit.check_question", show=False),
        Binding("2", "check(1)", "Gold supported?", id="audit.check_gold", show=False),
        Binding("3", "check(2)", "Labels accurate?", id="audit.check_labels", show=False),
        Binding("n", "note", "Note", id="audit.note"),
        Binding("left_square_bracket", "label(-1)", "Prev label", id="audit.prev_label", show=False),
        Binding("right_square_bracket", "label(1)", "Next label", id="audit.next_label", key_display="[ ]"),
        Binding("c", "reclassify", "Re-classify", id="audit.reclassify"),
        Binding("delete", "remove_label", "Remove label", id="audit.remove_label", show=False),
        Binding("a", "add_label", "Add label", id="audit.add_label"),
        Binding("u", "undo", "Undo edit", id="audit.undo"),
        Binding("E", "export", "Export corrected", id="audit.export", show=False),
        Binding("R", "reviewer", "Reviewer name", id="audit.reviewer", show=False),  # the title names the key
        Binding("escape", "back", "Back", id="audit.back"),
    ]
    TABLE_ONLY = {"check", "note", "label", "reclassify", "remove_label", "add_label", "undo", "export"}

    def __init__(self, corpus, store_path: Path, reviewer: str, start: str | None = None, dataset: str | None = None):
        super().__init__()
        self.corpus = corpus
        self.dataset = dataset or ("builtin" if not corpus.source else corpus.source)  # as runs record it
        self.store_path = store_path
        self.reviewer = reviewer
        self.start = start  # the item to open first (the item browser's), else the first item
        self.current: str | None = None
        self.label_index = 0
        self.evidence: dict[str, Any] = {"labels": [], "edits": [], "verdict": None}
        self.drafts: dict[str, Draft] = {}  # item → what was changed and not recorded yet
        self._loading = False

    def _store(self, readonly: bool = False):
        from workbench.service.stores import open_store

        if readonly and not self.store_path.exists():
            return None
        return open_store(self.store_path, readonly=readonly)

    def compose(self) -> ComposeResult:
        yield Static("", id="audit-title", classes="title-bar")
        with Horizontal(id="audit-body"):
            yield DataTable(id="audit-items", cursor_type="row", zebra_stripes=True)
            with Vertical(id="audit-review"):
                yield Static("", id="audit-status")
                with VerticalScroll(id="audit-sheet"):
                    yield Static("", id="audit-head")
                    yield Vertical(id="audit-labels")
                    yield Static("", id="audit-edits")
                with Horizontal(id="audit-checks"):
                    for i, (key, label) in enumerate(CHECK_LABELS.items(), 1):
                        yield CheckState(
                            key,
                            f"{i} {SHORT_LABELS[key]}",
                            id=f"check-{key}",
                            tooltip=f"{label}: ? not assessed · ✓ yes · ✗ no ({i} or space changes it)",
                        )
                yield Input(
                    placeholder="note for the verdict (n) · F2 pass · F3 flag · F4 remove · escape back to the list",
                    id="audit-note",
                    compact=True,
                )
                yield Input(
                    placeholder="add label (a): ARXIV_ID | section header | direct or supporting",
                    id="audit-add",
                    compact=True,
                )
                yield Static("", id="audit-message")
        yield KeysFooter()

    def on_mount(self) -> None:
        table = self.query_one("#audit-items", DataTable)
        for key in ("item", "kind", "verdict"):
            table.add_column(key, key=key)
        verdicts = self._verdicts()
        for item_id, kind, verdict in item_rows(self.corpus, verdicts):
            table.add_row(Text(item_id), Text(kind), Text(verdict), key=item_id)
        ids = [i.id for i in self.corpus.items]
        if ids:
            first = self.start if self.start in ids else ids[0]
            self.current = first
            self.call_later(self.show, first)
            table.move_cursor(row=ids.index(first), animate=False)
        self._title(verdicts)
        table.focus()

    def _verdicts(self) -> dict[str, VerdictRow]:
        store = self._store(readonly=True)
        if store is None:
            return {}
        try:
            return store.verdicts(self.corpus.fingerprint)
        finally:
            store.close()

    def _title(self, verdicts: dict[str, VerdictRow]) -> None:
        key = bound_key(self.app, "audit.reviewer", "R")
        title = title_line(self.dataset_label, len(verdicts), len(self.corpus.items), self.reviewer, key)
        self.query_one("#audit-title", Static).update(Text(sanitize(title)))

    def action_reviewer(self) -> None:
        """Name the reviewer that verdicts and edits are recorded under, remembered in the app's state file."""
        from workbench.tui import config
        from workbench.tui.screens.dialogs import NameModal

        def named(name: str | None) -> None:
            if name:
                self.reviewer = name
                config.remember_reviewer(self.app.state_path, name)
                self._title(self._verdicts())

        self.app.push_screen(
            NameModal("Reviewer name (recorded with each verdict and edit)", self.reviewer, reviewer_problem), named
        )

    def refresh_items(self, item_id: str) -> None:
        """After a verdict on `item_id`: its cell in the list and the title (the rows and the cursor stay)."""
        verdicts = self._verdicts()
        self.query_one("#audit-items", DataTable).update_cell(item_id, "verdict", Text(verdicts[item_id]["verdict"]))
        self._title(verdicts)

    @property
    def dataset_label(self) -> str:
        return dataset_label(self.dataset)

    async def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        stale = event.cursor_row != event.data_table.cursor_row  # a highlight the cursor has moved on from
        if not stale and event.row_key is not None and event.row_key.value != self.current:
            await self.show(str(event.row_key.value))

    # ------------------------------------------------------------ one item

    def _load(self, item_id: str) -> None:
        store = self._store(readonly=True)
        try:
            self.evidence = dict(audit.evidence(self.corpus, item_id, store))  # the screen keeps the sheet untyped
        finally:
            if store is not None:
                store.close()

    async def show(self, item_id: str) -> None:
        """Open an item: its sheet from the top, its note and checks from its draft or latest verdict."""
        self.current = item_id
        self.label_index = 0
        self._load(item_id)
        await self._draw_sheet()
        self.query_one("#audit-sheet", VerticalScroll).scroll_home(animate=False)
        draft = self.drafts.get(item_id) or Draft.of(self.evidence["verdict"])
        self._loading = True  # setting the fields is not an edit of the draft
        try:
            self.query_one("#audit-note", Input).value = draft.note
            for key, value in zip(audit.CHECKS, draft.checks, strict=True):
                self.query_one(f"#check-{key}", CheckState).value = value
        finally:
            self._loading = False
        self._message("")
        self._status()

    async def _draw_sheet(self) -> None:
        ev = self.evidence
        self.query_one("#audit-head", Static).update(head_text(ev))
        box = self.query_one("#audit-labels", Vertical)
        await box.remove_children()
        await box.mount_all(
            [
                Static(
                    label_text(n, lab, n - 1 == self.label_index),
                    classes="audit-label" + (" -selected" if n - 1 == self.label_index else ""),
                )
                for n, lab in enumerate(ev["labels"], 1)
            ]
        )
        self.query_one("#audit-edits", Static).update(edits_text(ev["edits"]))

    def _select_label(self, index: int) -> None:
        labels = self.evidence["labels"]
        self.label_index = wrapped_label(index, len(labels))
        widgets = list(self.query(".audit-label").results(Static))
        for n, (widget, lab) in enumerate(zip(widgets, labels, strict=True)):
            widget.update(label_text(n + 1, lab, n == self.label_index))
            widget.set_class(n == self.label_index, "-selected")
        if widgets:
            self.query_one("#audit-sheet", VerticalScroll).scroll_to_widget(
                widgets[self.label_index], animate=False, top=True
            )
        self._status()

    def draft(self) -> Draft:
        question_ok, gold_supported, labels_accurate = (
            self.query_one(f"#check-{k}", CheckState).value for k in audit.CHECKS
        )
        return Draft(self.query_one("#audit-note", Input).value, (question_ok, gold_supported, labels_accurate))

    def _draft_changed(self) -> None:
        if self._loading or self.current is None:
            return
        draft = self.draft()
        if draft == Draft.of(self.evidence["verdict"]):
            self.drafts.pop(self.current, None)
        else:
            self.drafts[self.current] = draft
        self._status()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "audit-note":
            self._draft_changed()

    def on_check_state_changed(self, event: CheckState.Changed) -> None:
        self._draft_changed()

    def _status(self) -> None:
        line = status_line(
            self.evidence.get("verdict"), self.label_index, len(self.evidence["labels"]), self.current in self.drafts
        )
        self.query_one("#audit-status", Static).update(Text(sanitize(line)))

    def _message(self, text: str, error: bool = False) -> None:
        box = self.query_one("#audit-message", Static)
        box.update(Text(text))
        box.set_class(error, "-error")

    # ------------------------------------------------------------ verdicts

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While a field has focus its keys type (F2–F4 and escape still work): the list's keys leave the footer."""
        return not (action in self.TABLE_ONLY and isinstance(self.focused, Input))

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

    def action_verdict(self, verdict: str) -> None:
        if self.current is None:
            return
        from workbench.service.errors import StoreError

        draft = self.draft()
        try:
            audit.record_verdict(
                self.corpus.fingerprint,
                self.store_path,
                self.current,
                self.reviewer,
                verdict,
                draft.note,
                dict(zip(audit.CHECKS, draft.checks, strict=True)),
            )
        except StoreError as exc:  # a store that cannot be written, or a full disk: the draft stays as typed
            self._message(str(exc), error=True)
            return
        self.drafts.pop(self.current, None)
        self._load(self.current)
        self.refresh_items(self.current)
        self._status()
        self._message(f"{self.current}: {verdict} recorded")
        self.query_one("#audit-items", DataTable).focus()

    def action_check(self, index: int) -> None:
        self.query_one(f"#check-{audit.CHECKS[index]}", CheckState).action_cycle()

    def action_note(self) -> None:
        self.query_one("#audit-note", Input).focus()

    # ------------------------------------------------------------ labels

    def action_label(self, delta: int) -> None:
        if self.evidence["labels"]:
            self._select_label(self.label_index + delta)

    async def _edit(self, do: Callable[[str], str], select: int | None = None) -> bool:
        """Run one label edit of the item shown (`do` given its id) through `workbench.service.audit` (checked, then
        stored), then redraw the sheet with the same label selected (or `select`)."""
        from workbench.service.errors import StoreError

        item_id = self.current
        if item_id is None:
            return False
        try:
            done = do(item_id)
        except (audit.AuditError, StoreError) as exc:  # an edit that cannot be made; a store that cannot be written
            self._message(str(exc), error=True)
            return False
        index = self.label_index if select is None else select
        self._load(item_id)
        self.label_index = label_after_edit(index, len(self.evidence["labels"]))
        await self._draw_sheet()
        self.call_after_refresh(self._select_label, self.label_index)
        self._message(done)
        return True

    def _selected(self) -> dict[str, Any] | None:
        labels = self.evidence["labels"]
        return labels[self.label_index] if labels else None

    async def action_reclassify(self) -> None:
        lab = self._selected()
        if lab is not None:
            new = toggled_relevance(lab["relevance"])
            await self._edit(
                lambda item_id: audit.record_edit(
                    self.corpus,
                    self.store_path,
                    item_id,
                    self.reviewer,
                    "reclassify",
                    lab["arxiv_id"],
                    lab["label"],
                    new,
                )
            )

    async def action_remove_label(self) -> None:
        lab = self._selected()
        if lab is not None:
            await self._edit(
                lambda item_id: audit.record_edit(
                    self.corpus, self.store_path, item_id, self.reviewer, "remove", lab["arxiv_id"], lab["label"]
                )
            )

    async def action_undo(self) -> None:
        await self._edit(lambda item_id: audit.undo_edit(self.corpus, self.store_path, item_id, self.reviewer))

    def action_add_label(self) -> None:
        self.query_one("#audit-add", Input).focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "audit-note":
            self.query_one("#audit-items", DataTable).focus()  # the note stays a draft until p / f / x
            return
        label = added_label(event.value)
        if label is None:
            self._message(ADD_LABEL_HELP, error=True)
            return
        if await self._edit(
            lambda item_id: audit.record_edit(
                self.corpus,
                self.store_path,
                item_id,
                self.reviewer,
                "add",
                label.arxiv_id,
                label.section,
                label.relevance,
            ),
            select=-1,
        ):
            event.input.value = ""  # the added label (the last) is selected

    # ------------------------------------------------------------ export and leaving

    def action_export(self) -> None:
        from workbench.tui.screens.dialogs import NameModal

        default = str(export_dir() / f"{Path(self.corpus.source).name}-audited")

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
                self.notify(
                    f"wrote {counted(counts['items'], 'item')} ({counts['removed']} removed) to {value}", timeout=5
                )

        self.app.push_screen(NameModal("Write the corrected dataset to", default, export_refusal), chosen)

    def action_back(self) -> None:
        """From a field back to the list; from the list out of audit mode (asking when drafts would be lost)."""
        table = self.query_one("#audit-items", DataTable)
        if self.focused is not table:
            table.focus()
            return
        if not self.drafts:
            self.app.pop_screen()
            return
        from workbench.tui.screens.dialogs import ConfirmModal

        def answer(yes: bool | None) -> None:
            if yes:
                self.app.pop_screen()

        self.app.push_screen(
            ConfirmModal(
                sanitize(leave_question(sorted(self.drafts))),
                "Discard",
                "Leave audit mode",
            ),
            answer,
        )
