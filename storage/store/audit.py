"""The audit tables: reviewers' verdicts on a dataset's items and their edits of its section labels, keyed by the
dataset's fingerprint. Nothing is overwritten: the latest verdict per item counts, and an undo is an edit of its own."""

from __future__ import annotations

from typing import Any, get_args

from storage.errors import StoreError
from storage.rows import LabelAction, LabelEditRow, VerdictRow
from storage.store.columns import as_record, inserted_id, now
from storage.store.connection import StoreConnection


class AuditTables(StoreConnection):
    """The store's methods on the audit tables (`storage.store.Store` combines them with the other tables')."""

    VERDICTS = ("pass", "flag", "remove")
    LABEL_ACTIONS: tuple[LabelAction, ...] = get_args(LabelAction)

    def add_verdict(
        self,
        fingerprint: str,
        item_id: str,
        reviewer: str,
        verdict: str,
        note: str = "",
        checks: dict[str, bool | None] | None = None,
    ) -> None:
        """Record a reviewer's verdict; the latest one per item counts, earlier ones stay as history. A check
        that is absent or None was not assessed and is stored as NULL (not as failed)."""
        if verdict not in self.VERDICTS:
            raise StoreError(f"verdict must be one of {', '.join(self.VERDICTS)}, got {verdict!r}")
        checks = checks or {}
        flags = [
            None if checks.get(k) is None else int(bool(checks[k]))
            for k in ("question_ok", "gold_supported", "labels_accurate")
        ]
        with self.transaction():
            self.conn.execute(
                "INSERT INTO audit_verdicts (dataset_fingerprint, item_id, reviewer, verdict, note, question_ok, "
                "gold_supported, labels_accurate, created_at) VALUES (?,?,?,?,?,?,?,?,?)",
                (fingerprint, item_id, reviewer, verdict, note, *flags, now()),
            )

    def add_label_edit(
        self,
        fingerprint: str,
        item_id: str,
        reviewer: str,
        action: str,
        arxiv_id: str,
        section: str,
        relevance: str | None = None,
        undoes: int | None = None,
    ) -> int:
        """Add, remove or re-classify (change the relevance of) one section label of an item, or undo an earlier
        edit of it (`undoes`: that edit's id; the edit stays in the history). Returns the new edit's id."""
        if action not in self.LABEL_ACTIONS:
            raise StoreError(f"label action must be one of {', '.join(self.LABEL_ACTIONS)}, got {action!r}")
        if action in ("add", "reclassify") and relevance not in ("direct", "supporting"):
            raise StoreError("a label's relevance must be 'direct' or 'supporting'")
        if (action == "undo") != (undoes is not None):
            raise StoreError("an undo names the edit it undoes, and only an undo does")
        with self.transaction():
            cur = self.conn.execute(
                "INSERT INTO audit_labels (dataset_fingerprint, item_id, action, arxiv_id, section, relevance,"
                " reviewer, created_at, undoes) VALUES (?,?,?,?,?,?,?,?,?)",
                (fingerprint, item_id, action, arxiv_id, section, relevance, reviewer, now(), undoes),
            )
        return inserted_id(cur)

    def verdicts(self, fingerprint: str) -> dict[str, VerdictRow]:
        """The latest verdict per item of a dataset."""
        rows = self.conn.execute(
            "SELECT * FROM audit_verdicts WHERE dataset_fingerprint = ? ORDER BY id", (fingerprint,)
        )
        return {r["item_id"]: as_record(VerdictRow, dict(r)) for r in rows}

    def label_edits(self, fingerprint: str, item_id: str | None = None) -> list[LabelEditRow]:
        """Every label edit of a dataset (or of one item), oldest first, undo rows included (`undoes` is None
        on other rows and on stores read before migration 7)."""
        sql = "SELECT * FROM audit_labels WHERE dataset_fingerprint = ?"
        args: tuple[Any, ...] = (fingerprint,)
        if item_id is not None:
            sql, args = sql + " AND item_id = ?", (fingerprint, item_id)
        return [
            as_record(LabelEditRow, {"undoes": None, **dict(r)}) for r in self.conn.execute(sql + " ORDER BY id", args)
        ]
