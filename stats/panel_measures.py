"""Panel-level measures of the AgentHop paper that `stopping` and `significance` do not already give:
Table 3 in the paper's overlapping categories, and Table 17's rank stability across replicates.

Table 3 (action after a wrong-paper read). The paper's rows do not sum to 100 % (Opus 41.4 / 12.7 / 82.3 / 3.4 /
0.1), so its categories overlap. The reading kept here: for each wrong-paper read (a delivered read_section of a
paper that is not gold for the item, seed and bridge included, as `stopping`), look at the actions after it up to
and including the next read_section (or the end):

* Recover — that next read_section names a gold paper;
* Stay — that next read_section names a non-gold paper (another section of a wrong paper);
* Think — a think comes before that next read;
* Re-nav — another navigation tool (search_papers, get_references, list_sections, get_paper_info) comes before it;
* Submit — a submit_answer comes before it (the episode's answer, so no read follows).

An event may count in several (a think then a gold read is Think and Recover); each share is over all events.
`stopping.after_wrong_read` keeps the exclusive next-action reading beside it.

Table 17 rank stability: the runs' values of a metric at replicate r and at replicate r' ranked against each other
with Kendall's τ-b, for every pair of replicates all the runs have; τ = 1 for every pair means the ordering is
preserved.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any, TypedDict

import numpy as np

PAPER_AFTER_WRONG = ("Recover", "Stay", "Think", "Re-nav", "Submit")
NAV = ("search_papers", "get_references", "list_sections", "get_paper_info")
WRONG_ROLES = ("other", "seed", "bridge")  # any paper not gold for the item (`stopping.WRONG_ROLES`)


def after_wrong_paper_categories(actions: Sequence[Sequence[Any]]) -> list[set[str]]:
    """The categories of each wrong-paper read event of one trajectory (compact actions), in order."""
    return [_after_wrong_read(actions[i + 1 :]) for i, action in enumerate(actions) if _is_wrong_read(action)]


def _is_wrong_read(action: Sequence[Any]) -> bool:
    """A delivered read_section of a wrong paper (compact action: tool, status, paper, role, delivered)."""
    tool, _, _, role, delivered = action
    return tool == "read_section" and bool(delivered) and role in WRONG_ROLES


_BEFORE_THE_NEXT_READ = {"think": "Think", **dict.fromkeys(NAV, "Re-nav"), "submit_answer": "Submit"}


def _after_wrong_read(rest: Sequence[Sequence[Any]]) -> set[str]:
    """The categories of what followed a wrong-paper read, up to and including the next read_section: Recover
    (it reads a gold paper) or Stay (another), and Think, Re-nav, Submit for the calls before it."""
    cats: set[str] = set()
    for nxt in rest:
        if nxt[0] == "read_section":
            cats.add("Recover" if nxt[3] == "gold" else "Stay")
            break
        if nxt[0] in _BEFORE_THE_NEXT_READ:
            cats.add(_BEFORE_THE_NEXT_READ[nxt[0]])
    return cats


class Table3(TypedDict):
    """Shares of wrong-paper read events per (overlapping) category (None without events)."""

    n_events: int
    counts: dict[str, int]
    shares: dict[str, float | None]


class ReplicateTau(TypedDict):
    replicates: list[int]
    n_runs: int
    tau: float | None


class TauSummary(TypedDict):
    mean_tau: float | None
    min_tau: float | None
    preserved: bool


class RankStability(TypedDict):
    """Kendall's τ-b per replicate pair, its mean and least value, and whether the ranking is preserved."""

    pairs: list[ReplicateTau]
    mean_tau: float | None
    min_tau: float | None
    preserved: bool


def table3(trajectories_actions: Sequence[Sequence[Sequence[Any]]]) -> Table3:
    """Shares of wrong-paper read events in each (overlapping) category, over all events of a run."""
    events = [cats for actions in trajectories_actions for cats in after_wrong_paper_categories(actions)]
    n = len(events)
    counts = {c: sum(c in e for e in events) for c in PAPER_AFTER_WRONG}
    return Table3(n_events=n, counts=counts, shares={c: counts[c] / n if n else None for c in PAPER_AFTER_WRONG})


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's τ-b = (concordant − discordant) / √((n0 − ties in x)(n0 − ties in y)), n0 = n(n−1)/2; None when
    either side is constant. Numpy only (scipy.stats costs seconds to import, and the panel never loads it)."""
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    i, j = np.triu_indices(a.size, k=1)
    da, db = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n0 = i.size
    ties_a, ties_b = int((da == 0).sum()), int((db == 0).sum())
    denom = math.sqrt((n0 - ties_a) * (n0 - ties_b))
    return None if denom == 0 else float((da * db).sum() / denom)


def rank_stability(values: Mapping[str, Sequence[float | None]]) -> RankStability | None:
    """Kendall's τ-b between the runs' values at each pair of replicates (`values`: run → value per replicate);
    over the replicates every run has and the runs with a value at both. None with fewer than 2 runs or
    replicates."""
    runs = list(values)
    k = min((len(v) for v in values.values()), default=0)
    if len(runs) < 2 or k < 2:
        return None
    replicate_pairs = (_replicate_tau(values, r, s) for r, s in itertools.combinations(range(k), 2))
    taus = [t for t in replicate_pairs if t is not None]
    return RankStability(pairs=taus, **_tau_summary([t["tau"] for t in taus if t["tau"] is not None]))


def _tau_summary(valued: list[float]) -> TauSummary:
    """Mean and least τ over the replicate pairs with one, and whether every one is 1 (the ranking preserved)."""
    if not valued:
        return TauSummary(mean_tau=None, min_tau=None, preserved=False)
    return TauSummary(mean_tau=float(np.mean(valued)), min_tau=min(valued), preserved=all(t == 1.0 for t in valued))


def _replicate_tau(values: Mapping[str, Sequence[float | None]], r: int, s: int) -> ReplicateTau | None:
    """Kendall's τ-b between replicates r and s over the runs with a value at both; None with fewer than 2."""
    pairs = [(v[r], v[s]) for v in values.values() if v[r] is not None and v[s] is not None]
    if len(pairs) < 2:
        return None
    a, b = zip(*pairs, strict=True)
    return ReplicateTau(replicates=[r, s], n_runs=len(pairs), tau=kendall_tau_b(a, b))


HEADER_METHODS = ("exact", "normalised", "substring", "word_overlap")  # a label matched a section's header
BODY_METHODS = ("body_heading", "body_text")  # the labelled content found inside a (parent) section's body
CONTACT = ("header", "parent", "none")


def evidence_contact(
    golds: Sequence[str], direct_labels: Sequence[tuple[str, int, str]], reads: set[tuple[str, int]]
) -> str:
    """Table 11's group of one recall-credited trajectory: `header` — it read a section a direct label of a gold
    paper resolves to by its header; else `parent` — it read the section whose body holds a direct label's
    content (resolved by body text); else `none` — no direct-labelled content read. `direct_labels` are
    (arXiv id, section index, resolution method); `reads` the delivered (arXiv id, section index) reads."""
    gold = set(golds)
    hits = {method for arx, idx, method in direct_labels if arx in gold and (arx, idx) in reads}
    if hits & set(HEADER_METHODS):
        return "header"
    if hits & set(BODY_METHODS):
        return "parent"
    return "none"
