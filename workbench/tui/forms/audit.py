"""The audit screen's model: the reviewer's name rule, the item list's rows, a verdict being prepared (`Draft`) and
how a quality check moves on, a label typed to be added, which label is selected after an edit, and what the
title, status line and leaving question say.

Every rule of what is stored is `workbench.service.audit`'s; this is the form around it. Text here is unsanitised:
the screen makes it safe to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from storage.rows import VerdictRow
from workbench.service import audit
from workbench.views.cells import counted

# a quality check's next state when it is changed: not assessed → yes → no → not assessed
NEXT_STATE: dict[bool | None, bool | None] = {None: True, True: False, False: None}
ADD_LABEL_HELP = "add label: write ARXIV_ID | section header | direct or supporting"


def reviewer_problem(name: str) -> str | None:
    """Why `name` cannot be a reviewer's name (it is stored with every verdict and written to the config), or None."""
    if not name:
        return "a name is needed"
    if len(name) > 60:
        return "at most 60 characters"
    if any(not ch.isprintable() for ch in name):
        return "printable characters only"
    return None


def item_rows(corpus: Any, verdicts: dict[str, VerdictRow]) -> list[tuple[str, str, str]]:
    """(item id, kind, current verdict) for the list on the left."""
    return [
        (i.id, f"{i.kind}_d{i.depth}", verdicts[i.id]["verdict"] if i.id in verdicts else "—") for i in corpus.items
    ]


def edit_words(action: str, was: str | None) -> str:
    """How a reviewer changed a label: added it, or re-classified it from what it `was`."""
    return "+ added" if action == "added" else f"✎ re-classified (was {was or '?'})"


@dataclass(frozen=True)
class Draft:
    """A verdict being prepared: the note and the three checks (None: not assessed)."""

    note: str = ""
    checks: tuple[bool | None, bool | None, bool | None] = (None, None, None)

    @classmethod
    def of(cls, verdict: dict[str, Any] | None) -> Draft:
        """What the latest recorded verdict says (a fresh item: nothing)."""
        if verdict is None:
            return cls()
        question_ok, gold_supported, labels_accurate = (verdict["checks"][k] for k in audit.CHECKS)
        return cls(verdict["note"], (question_ok, gold_supported, labels_accurate))


@dataclass(frozen=True)
class AddedLabel:
    """A label the reviewer typed to add: the paper, the section header and how relevant it is."""

    arxiv_id: str
    section: str
    relevance: str


def added_label(text: str) -> AddedLabel | None:
    """The label typed as `ARXIV_ID | section header | direct or supporting`, or None when it is not that
    (ADD_LABEL_HELP says how to write it); whether it exists is the service's check when it is stored."""
    parts = [p.strip() for p in text.split("|")]
    if len(parts) != 3 or parts[2] not in audit.RELEVANCES or not parts[0] or not parts[1]:
        return None
    return AddedLabel(parts[0], parts[1], parts[2])


def toggled_relevance(relevance: str | None) -> str:
    """What re-classifying a label makes it: direct becomes supporting, anything else direct."""
    return "supporting" if relevance == "direct" else "direct"


def wrapped_label(index: int, n_labels: int) -> int:
    """The label selected when the selection moves to `index`: past either end it wraps round (0 without labels)."""
    return index % n_labels if n_labels else 0


def label_after_edit(index: int, n_labels: int) -> int:
    """The label selected after an edit: `index` (-1: the last, where an added label goes), kept within the
    labels the item now has (0 without labels)."""
    return max(0, min(index if index >= 0 else n_labels - 1, n_labels - 1))


def title_line(dataset: str, reviewed: int, n_items: int, reviewer: str, reviewer_key: str) -> str:
    """The title bar: the dataset, how many of its items have a verdict, and the reviewer (the key renames them)."""
    return (
        f" Audit · {dataset} · {reviewed} of {counted(n_items, 'item')} reviewed · "
        f"reviewer: {reviewer} ({reviewer_key} to change)"
    )


def status_line(verdict: dict[str, Any] | None, label_index: int, n_labels: int, drafted: bool) -> str:
    """The item's status: its latest verdict (by whom, when), the label selected, and whether changes wait to be
    recorded."""
    parts = [
        f"verdict: {verdict['verdict']} by {verdict['reviewer']} {verdict['time'][:16].replace('T', ' ')}"
        if verdict
        else "no verdict yet"
    ]
    parts.append(f"label [{label_index + 1}] of {n_labels}" if n_labels else "no labels")
    if drafted:
        parts.append("changes not recorded (p/f/x)")
    return " · ".join(parts)


def leave_question(drafted: list[str]) -> str:
    """What leaving audit mode asks when the items `drafted` (sorted) have changes not recorded."""
    n = len(drafted)
    return (
        f"{n} {'item has' if n == 1 else 'items have'} a note or checks not recorded "
        f"({', '.join(drafted[:5])}{' …' if n > 5 else ''}). Leave audit mode and discard them?"
    )


def export_refusal(value: str) -> str | None:
    """Why the corrected dataset cannot be written to the directory `value` (it holds files already), or None."""
    path = Path(value).expanduser()
    return f"{path} exists and is not empty" if path.exists() and any(path.iterdir()) else None
