"""Benchmark audit (the paper's Stage 7 review): verdicts and label edits on a dataset, and the corrected release.

Verdicts (pass / flag / remove, a note, the three quality checks, each yes / no / not assessed)
and section-label edits (add / remove / re-classify, and undo) live in the results store, keyed
by the dataset's fingerprint, with reviewer and time. An undo is an edit of its own that names
the edit it cancels, so the history is never rewritten.

`apply_edits` is the one place edits take effect: the review sheet (`evidence`, which the TUI
and `--batch audit show` print) and the corrected release (`write_corrected`) both go through
it, so what a reviewer sees is what is exported. An added label must name a paper of the item's
neighbourhood that has text and a section that resolves exactly as the import resolves the
release's labels (`Corpus.resolve_label`); anything else is refused before it is stored.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from sandbox import release
from sandbox.corpus import Corpus
from sandbox.records import Item
from sandbox.sections import alias, alias_index
from storage import Store
from storage.json_types import JsonObject, JsonValue
from storage.rows import LabelAction, LabelEditRow, VerdictRow

CHECKS = ("question_ok", "gold_supported", "labels_accurate")
RELEVANCES = ("direct", "supporting")


class AuditError(ValueError):
    """An audit request a user must fix (unknown item or label, a label that cannot resolve, output in the way)."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


class EditNote(TypedDict):
    """How a label on the review sheet differs from the release (copied from its edit's stamp)."""

    action: Literal["added", "reclassified"]
    was: NotRequired[JsonValue]  # a re-classified label's relevance in the release
    reviewer: JsonValue
    time: JsonValue


class SheetLabel(TypedDict):
    """One label on the review sheet: the label, the section it resolves to, its text and how it was edited."""

    arxiv_id: str
    label: str
    relevance: JsonValue
    resolved: str | None
    method: str
    gold_paper: bool
    text: str | None
    edit: EditNote | None


class EditBy(TypedDict):
    """The undo that cancelled an edit."""

    id: int
    reviewer: str
    time: str


class HistoryEntry(TypedDict):
    """One edit of the item's history as the sheet lists it."""

    id: int
    action: LabelAction
    arxiv_id: str
    section: str
    relevance: str | None
    reviewer: str
    time: str
    undoes: int | None
    undone_by: EditBy | None


class Checks(TypedDict):
    """The three quality checks of a verdict: yes (true) / no (false) / not assessed (null)."""

    question_ok: bool | None
    gold_supported: bool | None
    labels_accurate: bool | None


class VerdictRecord(TypedDict):
    """A stored verdict as exported."""

    verdict: str
    note: str
    reviewer: str
    time: str
    checks: Checks


class Evidence(TypedDict):
    """The review sheet of one item (`evidence`)."""

    id: str
    question: str
    options: list[str]
    gold: str
    distractor_types: list[str]
    gold_arxiv_ids: list[str]
    labels: list[SheetLabel]
    edits: list[HistoryEntry]
    verdict: VerdictRecord | None


def _item(corpus: Corpus, item_id: str) -> Item:
    try:
        return corpus.item(item_id)
    except KeyError:
        raise AuditError(f"no item '{item_id}' in the dataset") from None


# ---------------------------------------------------------------- edits in force


def undone(edits: Sequence[LabelEditRow]) -> dict[int, LabelEditRow]:
    """Edit id → the undo that cancelled it."""
    return {e["undoes"]: e for e in edits if e["action"] == "undo" and e["undoes"] is not None}


def edits_in_force(edits: Sequence[LabelEditRow]) -> list[LabelEditRow]:
    """The edits that count, in order: neither undo rows nor edits an undo cancelled."""
    cancelled = undone(edits)
    return [e for e in edits if e["action"] != "undo" and e["id"] not in cancelled]


def apply_edits(labels: Sequence[Mapping[str, JsonValue]], edits: Sequence[LabelEditRow]) -> list[JsonObject]:
    """One item's label rows with its edits in force applied in order (each edit leaves a trace in `_audit`;
    a re-classified label keeps the release's relevance in `_reclassified_from`). Extra keys of the rows pass
    through untouched, as the release's rows carry them."""
    out = [dict(lab) for lab in labels]
    for e in edits_in_force(edits):
        out = _applied(out, e)
    return out


def _applied(labels: list[JsonObject], e: LabelEditRow) -> list[JsonObject]:
    """The labels with one edit applied: a label added, the edited label removed, or re-classified in place."""
    stamp: JsonObject = {"action": e["action"], "reviewer": e["reviewer"], "time": e["created_at"]}
    same = [lab for lab in labels if lab.get("arxiv_id") == e["arxiv_id"] and lab.get("section") == e["section"]]
    if e["action"] == "add":
        return [*labels, _added_label(e, stamp)]
    if e["action"] == "remove":
        return [lab for lab in labels if lab not in same]
    for lab in same:
        lab.setdefault("_reclassified_from", lab.get("relevance"))
        lab["relevance"] = e["relevance"]
        lab["_audit"] = stamp
    return labels


def _added_label(e: LabelEditRow, stamp: JsonObject) -> JsonObject:
    """The release-format label row an `add` edit makes."""
    return {
        "paper": "",
        "arxiv_id": e["arxiv_id"],
        "section": e["section"],
        "relevance": e["relevance"],
        "what_it_contains": "added in audit",
        "_audit": stamp,
    }


def item_edits(store: Store | None, fingerprint: str, item_id: str) -> list[LabelEditRow]:
    """The item's stored label edits, oldest first (none without a store)."""
    return store.label_edits(fingerprint, item_id) if store is not None else []


# ---------------------------------------------------------------- the review sheet


def evidence(corpus: Corpus, item_id: str, store: Store | None = None) -> Evidence:
    """What a reviewer looks at: the question, options, gold answer and the text of each labelled section, with
    the stored label edits applied (`edit` says how a label differs from the release), the item's edit history
    (`edits`, each with `undone_by`) and its latest verdict. Without a store, the release's labels as they are."""
    item = _item(corpus, item_id)
    edits = item_edits(store, corpus.fingerprint, item_id)
    base: list[JsonObject] = [
        {"arxiv_id": lab.arxiv_id, "section": lab.section, "relevance": lab.relevance} for lab in item.labels
    ]
    verdict = store.verdicts(corpus.fingerprint).get(item_id) if store is not None else None
    return {
        "id": item.id,
        "question": item.question,
        "options": list(item.options),
        "gold": "ABCD"[item.correct_index],
        "distractor_types": list(item.distractor_types or ()),
        "gold_arxiv_ids": list(item.gold_arxiv_ids),
        "labels": [_sheet_label(corpus, item, lab) for lab in apply_edits(base, edits)],
        "edits": edit_history(edits),
        "verdict": None if verdict is None else verdict_record(verdict),
    }


def _text(lab: Mapping[str, JsonValue], key: str) -> str:
    value = lab.get(key)
    return value if isinstance(value, str) else ""


def _sheet_label(corpus: Corpus, item: Item, lab: Mapping[str, JsonValue]) -> SheetLabel:
    """One label (edits applied) resolved to its section, with its text and how it differs from the release."""
    arxiv_id, section = _text(lab, "arxiv_id"), _text(lab, "section")
    idx, method = _resolution(corpus, item, lab)
    header = corpus.headers(arxiv_id)[idx][0] if idx is not None else None
    return {
        "arxiv_id": arxiv_id,
        "label": section,
        "relevance": lab.get("relevance"),
        "resolved": None if idx is None else f"({alias(idx)}) {header or ''}".strip(),
        "method": method,
        "gold_paper": arxiv_id in item.gold_arxiv_ids,
        "text": corpus.section_text(arxiv_id, idx) if idx is not None else None,
        "edit": _edit_note(lab),
    }


def _stamp(lab: Mapping[str, JsonValue]) -> Mapping[str, JsonValue] | None:
    stamp = lab.get("_audit")
    return stamp if isinstance(stamp, dict) else None


def _resolution(corpus: Corpus, item: Item, lab: Mapping[str, JsonValue]) -> tuple[int | None, str]:
    """The section a label resolves to: a release label's as the import resolved it, an added one's by the same rule."""
    arxiv_id, section = _text(lab, "arxiv_id"), _text(lab, "section")
    stamp = _stamp(lab)
    if not (stamp and stamp["action"] == "add"):
        for known in item.labels:
            if known.arxiv_id == arxiv_id and known.section == section:
                return known.section_index, known.method
    return corpus.resolve_label(arxiv_id, section)


def _edit_note(lab: Mapping[str, JsonValue]) -> EditNote | None:
    """`added` or `reclassified` (with the release's relevance) from the label's edit stamp; None if unedited."""
    stamp = _stamp(lab)
    if not stamp:
        return None
    if stamp["action"] == "add":
        return {"action": "added", "reviewer": stamp["reviewer"], "time": stamp["time"]}
    was = lab.get("_reclassified_from")
    if was != lab["relevance"]:
        return {"action": "reclassified", "was": was, "reviewer": stamp["reviewer"], "time": stamp["time"]}
    return None


def edit_history(edits: Sequence[LabelEditRow]) -> list[HistoryEntry]:
    """The item's edits in order, each with the undo that cancelled it (`undone_by`)."""
    cancelled = undone(edits)
    return [
        {
            "id": e["id"],
            "action": e["action"],
            "arxiv_id": e["arxiv_id"],
            "section": e["section"],
            "relevance": e["relevance"],
            "reviewer": e["reviewer"],
            "time": e["created_at"],
            "undoes": e["undoes"],
            "undone_by": _undone_by(cancelled.get(e["id"])),
        }
        for e in edits
    ]


def _undone_by(undo: LabelEditRow | None) -> EditBy | None:
    return None if undo is None else {"id": undo["id"], "reviewer": undo["reviewer"], "time": undo["created_at"]}


def verdict_record(v: VerdictRow) -> VerdictRecord:
    """A stored verdict as exported: the checks yes (true) / no (false) / not assessed (null)."""
    return {
        "verdict": v["verdict"],
        "note": v["note"] or "",
        "reviewer": v["reviewer"],
        "time": v["created_at"],
        "checks": {
            "question_ok": _check(v["question_ok"]),
            "gold_supported": _check(v["gold_supported"]),
            "labels_accurate": _check(v["labels_accurate"]),
        },
    }


def _check(value: int | None) -> bool | None:
    return None if value is None else bool(value)


# ---------------------------------------------------------------- recording edits


def check_edit(
    corpus: Corpus,
    item_id: str,
    edits: Sequence[LabelEditRow],
    action: str,
    arxiv_id: str,
    section: str,
    relevance: str | None,
) -> str:
    """Why this label edit cannot be made (AuditError), else a short description of what it does.

    An added label names a paper of the item's neighbourhood that has text, and a section of it that resolves
    as the import would resolve it; a removed or re-classified one is a label the item has now.
    """
    item = _item(corpus, item_id)
    arxiv_id, section = arxiv_id.strip(), section.strip()
    _check_request(action, arxiv_id, section)
    current = apply_edits(
        [{"arxiv_id": lab.arxiv_id, "section": lab.section, "relevance": lab.relevance} for lab in item.labels], edits
    )
    mine = [lab for lab in current if lab["arxiv_id"] == arxiv_id and lab["section"] == section]
    if action == "add":
        return _check_add(corpus, item, arxiv_id, section, relevance, bool(mine))
    if not mine:
        raise AuditError(f"{item_id} has no label {arxiv_id} · “{section}”")
    if action == "reclassify":
        return _check_reclassify(mine, arxiv_id, section, relevance)
    return f"removed label {arxiv_id} · “{section}”"


def _check_request(action: str, arxiv_id: str, section: str) -> None:
    """A known action on a label named by paper and section."""
    if action not in ("add", "remove", "reclassify"):
        raise AuditError(f"label action must be add, remove or reclassify, got {action!r}")
    if not arxiv_id or not section:
        raise AuditError("a label needs an arXiv id and a section")


def _check_reclassify(
    mine: Sequence[Mapping[str, JsonValue]], arxiv_id: str, section: str, relevance: str | None
) -> str:
    """A re-classification to a relevance the label does not have yet."""
    _need_relevance(relevance)
    if all(lab["relevance"] == relevance for lab in mine):
        raise AuditError(f"{arxiv_id} · “{section}” is {relevance} already")
    return f"re-classified {arxiv_id} · “{section}” as {relevance}"


def _check_add(corpus: Corpus, item: Item, arxiv_id: str, section: str, relevance: str | None, exists: bool) -> str:
    """An added label: a paper of the item's neighbourhood with text, a section of it that resolves, not a label
    already, and a relevance (checked last: a wrong paper or section is the thing to hear about first)."""
    _check_paper(corpus, item, arxiv_id)
    idx, method = corpus.resolve_label(arxiv_id, section)
    if idx is None:
        raise AuditError(f"section “{section}” matches no section of {arxiv_id} ({_listed_sections(corpus, arxiv_id)})")
    if exists:
        raise AuditError(f"{arxiv_id} · “{section}” is a label of {item.id} already (re-classify it instead)")
    _need_relevance(relevance)
    header = corpus.headers(arxiv_id)[idx][0] or ""
    return f"added {relevance} label {arxiv_id} · “{section}” → ({alias(idx)}) {header} ({method})"


def _check_paper(corpus: Corpus, item: Item, arxiv_id: str) -> None:
    """A paper of the item's neighbourhood that has text (a label names a section someone can read)."""
    papers = {n.arxiv_id: n for n in corpus.view(item).nodes.values() if n.arxiv_id}
    if arxiv_id not in papers:
        with_text = sorted(a for a, n in papers.items() if n.has_text)
        raise AuditError(
            f"{arxiv_id} is not a paper of {item.id}'s neighbourhood (papers with text: "
            f"{', '.join(with_text) or 'none'})"
        )
    if not papers[arxiv_id].has_text:
        raise AuditError(
            f"{arxiv_id} has no text in the paper pool (metadata only): no section of it can be "
            "read, so it cannot carry a label"
        )


def _listed_sections(corpus: Corpus, arxiv_id: str) -> str:
    """A paper's first twelve sections as `audit show` names them (`(C) 3 Method`), for an error."""
    headers = [h or "" for h, _ in corpus.headers(arxiv_id)]
    listed = "; ".join(f"({alias(i)}) {h}" for i, h in enumerate(headers[:12]))
    return f"its sections: {listed}{' …' if len(headers) > 12 else ''}"


def _need_relevance(relevance: str | None) -> None:
    if relevance not in RELEVANCES:
        raise AuditError("a label's relevance must be 'direct' or 'supporting'")


def section_of(corpus: Corpus, arxiv_id: str, section: str) -> str:
    """The section an added label names. The errors and `audit show` list sections as `(C) 3 Method`, so a bare
    alias (`C` or `(C)`) names that section and is stored as its header — unless a header is exactly that
    text. (Left as text, "C" would resolve as a substring of whichever header happens to contain a c.)"""
    arxiv_id, text = arxiv_id.strip(), section.strip()
    m = re.fullmatch(r"\(?([A-Z]{1,3})\)?", text)
    if not m:
        return section
    headers = corpus.headers(arxiv_id)
    if any((h or "").strip().lower() == m.group(1).lower() for h, _ in headers):  # a header that is the text wins
        return section
    idx = alias_index(m.group(1))  # before any substring match: "C" is in "1 Introduction"
    return (headers[idx][0] or section) if idx < len(headers) else section


def _read_edits(store_path: Path, fingerprint: str, item_id: str) -> list[LabelEditRow]:
    """The item's edits from the store file, read-only (nothing is created for a request that will fail)."""
    if not store_path.exists():
        return []
    store = Store(store_path, readonly=True)
    try:
        return item_edits(store, fingerprint, item_id)
    finally:
        store.close()


def record_edit(
    corpus: Corpus,
    store_path: Path,
    item_id: str,
    reviewer: str,
    action: str,
    arxiv_id: str,
    section: str,
    relevance: str | None = None,
) -> str:
    """Check a label edit against the item as it stands, then store it; what it did. Raises AuditError, and
    writes nothing, when it cannot be made."""
    if action == "add":
        section = section_of(corpus, arxiv_id, section)
    done = check_edit(
        corpus, item_id, _read_edits(store_path, corpus.fingerprint, item_id), action, arxiv_id, section, relevance
    )
    store = Store(store_path)
    try:
        store.add_label_edit(
            corpus.fingerprint,
            item_id,
            reviewer,
            action,
            arxiv_id.strip(),
            section.strip(),
            None if action == "remove" else relevance,
        )
    finally:
        store.close()
    return done


def record_verdict(
    fingerprint: str,
    store_path: Path,
    item_id: str,
    reviewer: str,
    verdict: str,
    note: str,
    checks: dict[str, bool | None],
) -> None:
    """Store a reviewer's verdict on an item (pass / flag / remove) with the note and the three checks."""
    store = Store(store_path)
    try:
        store.add_verdict(fingerprint, item_id, reviewer, verdict, note, checks)
    finally:
        store.close()


def undo_edit(corpus: Corpus, store_path: Path, item_id: str, reviewer: str, edit_id: int | None = None) -> str:
    """Undo one edit of the item (`edit_id`, or its latest edit in force) by recording an undo row; what it did."""
    _item(corpus, item_id)
    target = _undo_target(item_id, _read_edits(store_path, corpus.fingerprint, item_id), edit_id)
    store = Store(store_path)
    try:
        store.add_label_edit(
            corpus.fingerprint, item_id, reviewer, "undo", target["arxiv_id"], target["section"], undoes=target["id"]
        )
    finally:
        store.close()
    return f"undid edit {target['id']} ({target['action']} {target['arxiv_id']} · “{target['section']}”)"


def _undo_target(item_id: str, edits: Sequence[LabelEditRow], edit_id: int | None) -> LabelEditRow:
    """The edit an undo cancels: `edit_id`, or the item's latest edit in force; it must be in force."""
    live = edits_in_force(edits)
    if edit_id is None:
        if not live:
            raise AuditError(f"{item_id} has no label edit to undo")
        return live[-1]
    target = next((e for e in edits if e["id"] == edit_id), None)
    if target is None:
        raise AuditError(f"{item_id} has no label edit {edit_id}")
    if target["action"] == "undo":
        raise AuditError(f"edit {edit_id} is an undo; make the edit again instead")
    if target not in live:
        raise AuditError(f"edit {edit_id} is undone already")
    return target


# ---------------------------------------------------------------- the corrected release


class CorrectedCounts(TypedDict):
    """What `write_corrected` wrote."""

    items: int
    removed: int
    verdicts: int
    label_rows: int
    label_edits: int


def write_corrected(corpus: Corpus, store: Store, out: Path) -> CorrectedCounts:
    """The dataset in the release format with label edits applied and removed items dropped; counts."""
    source = Path(corpus.source)
    _check_output(out, source)
    verdicts = store.verdicts(corpus.fingerprint)
    removed = {i for i, v in verdicts.items() if v["verdict"] == "remove"}
    edits: dict[str, list[LabelEditRow]] = {}
    for e in store.label_edits(corpus.fingerprint):
        edits.setdefault(e["item_id"], []).append(e)
    with release.staged_directory(out) as staged:
        for rel in release.RELEASE_FILES:
            (staged / rel).parent.mkdir(parents=True, exist_ok=True)
        kept = _filter_lines(source / release.QA_FILE, staged / release.QA_FILE, "id", removed)
        _filter_lines(source / release.GRAPHS_FILE, staged / release.GRAPHS_FILE, "sample_id", removed)
        shutil.copyfile(source / release.PAPERS_FILE, staged / release.PAPERS_FILE)
        n_labels = _write_labels(source / release.LABELS_FILE, staged / release.LABELS_FILE, removed, edits)
        with open(staged / "audit" / "verdicts.jsonl", "w", encoding="utf-8") as fh:
            for item_id, v in sorted(verdicts.items()):
                fh.write(json.dumps({"sample_id": item_id, **verdict_record(v)}, ensure_ascii=False) + "\n")
    return {
        "items": kept,
        "removed": len(removed),
        "verdicts": len(verdicts),
        "label_rows": n_labels,
        "label_edits": sum(len(edits_in_force(v)) for v in edits.values()),
    }


def _check_output(out: Path, source: Path) -> None:
    """The corrected release goes to a new or empty directory that is not its source."""
    if out.exists() and not out.is_dir():
        raise AuditError(f"{out} exists and is not a directory")
    if out.exists() and any(out.iterdir()):
        raise AuditError(f"{out} exists and is not empty")
    if out.resolve() == source.resolve():
        raise AuditError("write the corrected dataset to a new directory, not over its source")


def _filter_lines(src: Path, dst: Path, key: str, removed: set[str]) -> int:
    kept = 0
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            if line.strip() and json.loads(line).get(key) not in removed:
                fout.write(line if line.endswith("\n") else line + "\n")
                kept += 1
    return kept


def _write_labels(src: Path, dst: Path, removed: set[str], edits: Mapping[str, Sequence[LabelEditRow]]) -> int:
    """recall_labels.jsonl without the removed items, each edited item's labels with its edits applied; the
    lines written (so the count printed is the file's)."""
    text = src.read_text(encoding="utf-8") if src.is_file() else ""
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    kept = [row for row in rows if row.get("sample_id") not in removed]
    added = _unlabelled_items({row.get("sample_id") for row in kept} | removed, edits)
    with open(dst, "w", encoding="utf-8") as fh:
        for row in [*(_edited(row, edits) for row in kept), *added]:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return len(kept) + len(added)


def _unlabelled_items(skipped: set[str], edits: Mapping[str, Sequence[LabelEditRow]]) -> list[JsonObject]:
    """Label rows for the edited items that had no label row at all (and are not `skipped`)."""
    return [
        {"sample_id": sid, "analysis": {"section_recall_labels": [*apply_edits([], item_edits_)]}}
        for sid, item_edits_ in sorted(edits.items())
        if sid not in skipped and edits_in_force(item_edits_)
    ]


def _edited(row: JsonObject, edits: Mapping[str, Sequence[LabelEditRow]]) -> JsonObject:
    """A label row with its item's edits applied to its `section_recall_labels` (as it is without edits)."""
    sid = row.get("sample_id")
    if not isinstance(sid, str) or sid not in edits:
        return row
    analysis = row.get("analysis")
    analysis = dict(analysis) if isinstance(analysis, dict) else {}
    analysis["section_recall_labels"] = [*apply_edits(release.label_rows(row), edits[sid])]
    return {**row, "analysis": analysis}
