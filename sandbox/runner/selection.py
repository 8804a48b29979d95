"""The slice of a run: which items of the dataset it samples (ids, then question type, then depth, then limit)."""

from __future__ import annotations

from sandbox.corpus import Corpus
from sandbox.records import Item
from sandbox.runner.spec import RunSpec


class InvalidSlice(ValueError):
    """The requested items do not exist or select nothing."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


def select_items(corpus: Corpus, spec: RunSpec) -> list[Item]:
    """Items of the slice, in dataset order: ids, then type, then depth, then limit (as the reference)."""
    items = _with_ids(corpus.items, spec.item_ids)
    if spec.question_type:
        kind = QUESTION_KINDS.get(spec.question_type, spec.question_type)
        items = [i for i in items if i.kind == kind]
    if spec.depth is not None:
        items = [i for i in items if i.depth == spec.depth]
    if spec.limit is not None:
        items = items[: spec.limit]
    if not items:
        raise InvalidSlice("the slice selects no items")
    return items


QUESTION_KINDS = {"single-target": "st", "multi-target": "mt"}  # a question type's long name → the item's kind


def _with_ids(items: list[Item], ids: tuple[str, ...]) -> list[Item]:
    """The items named by `ids`, in dataset order (all of them when none is named); an unknown id is refused."""
    if not ids:
        return items
    known = {i.id for i in items}
    missing = [i for i in ids if i not in known]
    if missing:
        raise InvalidSlice(f"unknown item id(s): {', '.join(missing[:5])}")
    wanted = set(ids)
    return [i for i in items if i.id in wanted]
