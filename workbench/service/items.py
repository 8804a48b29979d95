"""The item browser's rows, filters and sort, shared by the TUI and `--batch items` so both show the same numbers.

A row is one item of a dataset with its slice fields and its outcome over the store's runs on
that dataset version: `Store.item_outcomes` counts, per item, the runs whose replicate-0
trajectory is correct out of the runs that have one. Outcomes are keyed by the corpus's
fingerprint, so runs made on an older version of a release are not mixed in (they are counted
separately as `stale_runs`, for a note on screen). Nothing here imports textual.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, TypedDict

from sandbox.datasets import BUILTIN, dataset_key  # light: the naming only, not the corpus
from storage.rows import ItemTrajectoryRow, RunRow
from workbench.service.neighbourhood import NeighbourhoodSummary, PaperRecord, Tree

KINDS = ("st", "mt")
DEPTHS = (1, 2)
# How many runs got an item right; the four classes partition the items.
OUTCOMES = {
    "none": "no run got it right",
    "some": "some runs but not all",
    "all": "every run got it right",
    "unrun": "no run has it",
}
SORTS = ("file", "id", "kind", "depth", "reasoning", "tier", "venue", "right")


class ItemFilterError(ValueError):
    """A filter value the dataset does not have (shown in one line; the batch command exits 2)."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


@dataclass(frozen=True)
class ItemRow:
    """One item as the browser lists it: the slice fields and how the store's runs did on it."""

    pos: int  # file order (the run order)
    id: str
    kind: str  # st | mt
    depth: int
    reasoning: str
    tier: str
    venue: str
    question: str
    right: int  # runs whose replicate-0 trajectory is correct
    ran: int  # runs with a replicate-0 trajectory on it

    @property
    def outcome(self) -> str:
        """`none`, `some`, `all` or `unrun` (the `--right` classes)."""
        if self.ran == 0:
            return "unrun"
        if self.right == 0:
            return "none"
        return "all" if self.right == self.ran else "some"

    @property
    def right_text(self) -> str:
        return f"{self.right}/{self.ran}" if self.ran else "—"

    def as_dict(self) -> ItemRecord:
        """The row as the JSON lists it (its file position left out, its outcome class added)."""
        return {
            "id": self.id,
            "kind": self.kind,
            "depth": self.depth,
            "reasoning": self.reasoning,
            "tier": self.tier,
            "venue": self.venue,
            "question": self.question,
            "right": self.right,
            "ran": self.ran,
            "outcome": self.outcome,
        }


@dataclass(frozen=True)
class ItemFilter:
    """What to keep; None (or an empty text) keeps everything. `text` matches every word in the id or question."""

    kind: str | None = None
    depth: int | None = None
    reasoning: str | None = None
    tier: str | None = None
    right: str | None = None
    text: str = ""

    def matches(self, row: ItemRow) -> bool:
        """The row passes every filter set: each chosen field equal, and every word of `text` in its id or question."""
        wanted = (
            (self.kind, row.kind),
            (self.depth, row.depth),
            (self.reasoning, row.reasoning),
            (self.tier, row.tier),
            (self.right, row.outcome),
        )
        if any(chosen is not None and value != chosen for chosen, value in wanted):
            return False
        words = self.text.lower().split()
        if words:
            hay = f"{row.id} {row.question}".lower()
            return all(w in hay for w in words)
        return True

    def active(self) -> dict[str, str | int]:
        """The filters in force (for the JSON echo and the screen's status line)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        out["text"] = self.text.strip()
        return {k: v for k, v in out.items() if v not in (None, "")}


def item_rows(items: Iterable[Any], outcomes: dict[str, tuple[int, int]]) -> list[ItemRow]:
    """Rows of a dataset's items (sandbox Items) in file order, with `Store.item_outcomes` folded in."""
    rows = []
    for pos, item in enumerate(items):
        right, ran = outcomes.get(item.id, (0, 0))
        rows.append(
            ItemRow(
                pos,
                item.id,
                item.kind,
                item.depth,
                item.reasoning_type,
                item.consensus_tier,
                item.venue,
                item.question,
                right,
                ran,
            )
        )
    return rows


def choices(rows: Sequence[ItemRow], name: str) -> list[str]:
    """The distinct values of a row field, sorted (the options of a filter)."""
    return sorted({str(getattr(r, name)) for r in rows if getattr(r, name) not in (None, "")})


def check_filter(flt: ItemFilter, rows: Sequence[ItemRow]) -> ItemFilter:
    """`flt` with reasoning type and tier matched case-insensitively to the dataset's own spelling.

    Raises ItemFilterError for a value the dataset does not have, so a typo is an error, not an empty list.
    """
    if flt.kind is not None and flt.kind not in KINDS:
        raise ItemFilterError(f"type must be one of {', '.join(KINDS)}, got {flt.kind!r}")
    if flt.depth is not None and flt.depth not in DEPTHS:
        raise ItemFilterError(f"depth must be 1 or 2, got {flt.depth!r}")
    if flt.right is not None and flt.right not in OUTCOMES:
        raise ItemFilterError(f"right must be one of {', '.join(OUTCOMES)}, got {flt.right!r}")
    reasoning = _spelled(rows, "reasoning", flt.reasoning, "reasoning type")
    tier = _spelled(rows, "tier", flt.tier, "consensus tier")
    return replace(flt, reasoning=reasoning, tier=tier)


def _spelled(rows: Sequence[ItemRow], name: str, value: str | None, label: str) -> str | None:
    """The dataset's spelling of the `name` value asked for (matched without regard to case), None for none asked."""
    if value is None:
        return None
    known = choices(rows, name)
    match = next((k for k in known if k.lower() == value.lower()), None)
    if match is None:
        raise ItemFilterError(f"no {label} {value!r} in this dataset (it has: {', '.join(known) or 'none'})")
    return match


def filter_rows(rows: Iterable[ItemRow], flt: ItemFilter) -> list[ItemRow]:
    return [r for r in rows if flt.matches(r)]


def sort_rows(rows: Iterable[ItemRow], key: str = "file", reverse: bool = False) -> list[ItemRow]:
    """Rows ordered by a column; `right` orders by the share right (unrun items last), ties in file order."""
    if key not in SORTS:
        raise ItemFilterError(f"sort must be one of {', '.join(SORTS)}, got {key!r}")

    def value(r: ItemRow) -> Any:
        if key == "file":
            return r.pos
        if key == "right":
            return (r.ran == 0, r.right / r.ran if r.ran else 0.0, r.ran)
        return getattr(r, key)

    ordered = sorted(rows, key=lambda r: r.pos)
    return sorted(ordered, key=value, reverse=reverse)


# ---------------------------------------------------------------- datasets and the store


@dataclass(frozen=True)
class DatasetChoice:
    """A dataset the browser can open: `builtin` or a release directory some run in the store used."""

    spec: str
    runs: int = 0
    fingerprints: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        return self.spec if self.spec == BUILTIN else (Path(self.spec).name or self.spec)


def known_datasets(runs: Iterable[RunRow]) -> list[DatasetChoice]:
    """`builtin` first, then every other dataset the runs used, in order of first use."""
    seen: dict[str, list] = {BUILTIN: [0, []]}
    for r in runs:
        slot = seen.setdefault(r["dataset"], [0, []])
        slot[0] += 1
        fp = r["dataset_fingerprint"]
        if fp and fp not in slot[1]:
            slot[1].append(fp)
    return [DatasetChoice(spec, n, tuple(fps)) for spec, (n, fps) in seen.items()]


def same_dataset(spec: str, recorded: str) -> bool:
    """Whether a run's recorded dataset names `spec` (runs record release directories resolved)."""
    try:
        return dataset_key(spec) == dataset_key(recorded)
    except OSError:
        return spec == recorded


@dataclass
class Browse:
    """A dataset's rows and which runs they count."""

    spec: str
    fingerprint: str
    rows: list[ItemRow]
    runs: list[str] = field(default_factory=list)  # runs counted (on this dataset version)
    stale_runs: list[str] = field(default_factory=list)  # runs on the same release path but another version

    def note(self) -> str | None:
        if not self.stale_runs:
            return None
        n = len(self.stale_runs)
        return (
            f"{n} run{'s' if n > 1 else ''} on this path used another version of the dataset "
            f"({', '.join(self.stale_runs[:3])}{'…' if n > 3 else ''}) and {'are' if n > 1 else 'is'} not counted"
        )


def browse(corpus: Any, spec: str, store: Any | None) -> Browse:
    """The rows of `corpus` (opened from `spec`) with outcomes from `store` (None: no store yet, nothing ran)."""
    if store is None:
        return Browse(spec, corpus.fingerprint, item_rows(corpus.items, {}))
    outcomes = store.item_outcomes(corpus.fingerprint)
    counted, stale = [], []
    for r in store.runs():
        if r.get("dataset_fingerprint") == corpus.fingerprint:
            counted.append(r["name"])
        elif same_dataset(spec, r["dataset"]):
            stale.append(r["name"])
    return Browse(spec, corpus.fingerprint, item_rows(corpus.items, outcomes), counted, stale)


class ItemRecord(TypedDict):
    """An item of the browser's list as its JSON has it."""

    id: str
    kind: str
    depth: int
    reasoning: str
    tier: str
    venue: str
    question: str
    right: int
    ran: int
    outcome: str


class ItemTrajectory(TypedDict):
    """One stored trajectory on an item, as the item view and `--show` list it."""

    id: int
    run: str
    run_id: int
    agent: str
    ablation: str
    replicate: int
    answer: str | None
    correct: bool
    termination: str | None
    points: int
    turns: int
    paper_recall: bool
    section_recall: bool


class LabelResolution(TypedDict):
    """A recall label with the section it resolved to and the rule that decided it."""

    arxiv_id: str
    label: str
    relevance: str
    resolved: str | None
    method: str


class NeighbourhoodRecord(NeighbourhoodSummary):
    """The item's neighbourhood: its size and its tree."""

    tree: Tree


class ItemDetail(ItemRecord):
    """One item for `--batch items --show` (its JSON)."""

    cognitive_skill: str
    options: list[str]
    gold: str
    distractor_types: list[str]
    seed: PaperRecord
    bridge: list[PaperRecord]
    gold_papers: list[PaperRecord]
    neighbourhood: NeighbourhoodRecord
    trajectories: list[ItemTrajectory]
    labels: list[LabelResolution]


def trajectory_row(t: ItemTrajectoryRow) -> ItemTrajectory:
    """One stored trajectory on an item, as the item view and `--show` list it."""
    return {
        "id": t["id"],
        "run": t["run"],
        "run_id": t["run_id"],
        "agent": t["agent"] + (f" {t['model']}" if t.get("model") else ""),
        "ablation": t.get("ablation") or "full",
        "replicate": t.get("replicate", 0),
        "answer": t.get("answer"),
        "correct": bool(t.get("correct")),
        "termination": t.get("termination"),
        "points": t.get("points_used") or 0,
        "turns": t.get("turns") or 0,
        "paper_recall": bool(t.get("paper_recall")),
        "section_recall": bool(t.get("section_recall")),
    }


def item_detail(corpus: Any, item_id: str, store: Any | None) -> tuple[ItemDetail, Any]:
    """One item for `--batch items --show`: question, options with the gold and distractor types, its
    outcome, its neighbourhood tree and every stored trajectory on it (the JSON), and the tree a console draws
    (`neighbourhood.text_tree`: labelled, still plain data). Raises ItemFilterError for an unknown id."""
    from workbench.service.neighbourhood import Neighbourhood, text_tree, tree_dict

    try:
        item = corpus.item(item_id)
    except KeyError:
        raise ItemFilterError(f"no item '{item_id}' in the dataset") from None
    outcomes = store.item_outcomes(corpus.fingerprint) if store is not None else {}
    row = item_rows([item], outcomes)[0]
    nb = Neighbourhood(corpus.view(item))
    trajectories = [trajectory_row(t) for t in store.item_trajectories(corpus.fingerprint, item_id)] if store else []
    detail: ItemDetail = {
        **row.as_dict(),
        "cognitive_skill": item.cognitive_skill,
        "options": list(item.options),
        "gold": "ABCD"[item.correct_index],
        "distractor_types": list(item.distractor_types or ()),
        "seed": nb.paper(item.seed_paper_id).as_dict(),
        "bridge": [nb.paper(b).as_dict() for b in item.bridge_paper_ids],
        "gold_papers": [nb.paper(g).as_dict() for g in item.gold_paper_ids],
        "neighbourhood": {**nb.summary(), "tree": tree_dict(nb)},
        "trajectories": trajectories,
        "labels": label_resolutions(corpus, item),
    }
    return detail, text_tree(nb)


def label_resolutions(corpus: Any, item: Any) -> list[LabelResolution]:
    """Each recall label of the item with the section it resolved to (`(B) 3 Method`, None when it resolved to
    none) and the rule that decided it (docs/protocol.md#section-labels: exact, normalised, substring, word_overlap,
    body_heading, body_text; unresolved; unknown_paper when its arXiv id has no text)."""
    from sandbox.sections import alias

    out: list[LabelResolution] = []
    for lab in item.labels:
        resolved = None
        if lab.section_index is not None:
            headers = corpus.headers(lab.arxiv_id)
            header = headers[lab.section_index][0] if lab.section_index < len(headers) else None
            resolved = f"({alias(lab.section_index)}) {header or ''}".strip()
        out.append(
            {
                "arxiv_id": lab.arxiv_id,
                "label": lab.section,
                "relevance": lab.relevance,
                "resolved": resolved,
                "method": lab.method,
            }
        )
    return out


def label_line(lab: LabelResolution) -> str:
    """One label as a line: relevance, paper, the label → the section it resolved to (method)."""
    return (
        f"{lab['relevance'] or '—'} · {lab['arxiv_id'] or 'no arXiv id'} · {lab['label']!r} → "
        f"{lab['resolved'] or 'no section'} ({lab['method']})"
    )
