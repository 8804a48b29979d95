"""Stopping behaviour: when agents stop searching, and what they do after reading the wrong paper.

AgentHop §4.3 / Appendix E.2, docs/metrics.md. The paper's Table 3 shares do not sum to 100%, so the
categories here are defined once, precisely, and are mutually exclusive and exhaustive within
their population (`LEGEND` states each choice in a sentence; the report prints it). Every share
is a [num, den] pair.

Input: one dict per trajectory with

* `kind` — 'st' or 'mt'; `correct` — bool; `termination` — 'answer', 'budget', 'token_limit',
  'max_turns' or 'error'; `n_gold` — number of gold papers of the item (stored with the
  trajectory; when missing, 1 for ST and 2 for MT); `paper_recall` — the stored flag (when missing,
  derived from the delivered gold reads), which defines Table 9's population;
* `actions` — every tool call in order, rejected ones included (the sequence is what the agent
  *chose*), each either a dict with `tool`, `status`, `paper`, `paper_role`, `delivered` or the
  store's compact list [tool, status, paper, paper_role, delivered]. `status` is 'ok', 'rejected',
  'disabled', 'error', 'not_found', 'metadata_only', 'unresolved', …; `paper` the paper id the
  call names, or None; `paper_role` 'gold', 'bridge', 'seed', 'other' or None.

Definitions used by every function:

* A **gold read** is a `read_section` with `delivered` true on a paper whose role is 'gold'.
  Only delivered reads count as having read a paper (docs/protocol.md "What is measured"); a rejected or failed call
  still counts as an *action* (a decision) everywhere else.
* A **wrong-paper read** is a delivered `read_section` of a paper that is not gold for the item
  (roles 'other', 'seed' and 'bridge'): the paper's Table 3 conditions "on landing on a non-gold paper",
  the seed and the bridge included when they are not gold for the item.
* A call **names** a paper when its `paper` is not None (get_paper_info, get_references,
  list_sections, read_section). `search_papers` names none and counts as navigation, and so does
  `get_references` whatever paper it names: it asks where to go next, not what a paper says.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any, NamedTuple, TypedDict, cast

from stats.ratio import Pair, Ratio
from stats.significance import fisher_exact_two_sided

Action = Mapping[str, Any] | Sequence[Any]
Trajectory = Mapping[str, Any]

MT_FAIL = ("0-Gold", "Prem", "Explored", "Stayed")
AFTER_EVIDENCE = ("Imm", "Thnk", "Read")
LEFT_OUT = ("Nav", "End")  # after the evidence, outside the paper's three categories
AFTER_WRONG = ("Recover", "Stay", "Think", "Re-nav", "Submit", "Other", "End")
# a wrong-paper read is a read of any paper that is not gold for the item: seed and bridge included (paper Table 3)
WRONG_ROLES: tuple[str | None, ...] = ("other", "seed", "bridge")
EARLY_WINDOW = 3
SUBMIT, THINK, READ, SEARCH, REFS = "submit_answer", "think", "read_section", "search_papers", "get_references"
NAVIGATION = (SEARCH, REFS)
FIELDS = ("tool", "status", "paper", "paper_role", "delivered")


class AllGoldWrong(TypedDict):
    n: int
    share: Pair


class MtFail(TypedDict):
    """Table 9: the MT trajectories whose paper recall failed, by category, with each one's accuracy."""

    n: int
    n_mt: int
    counts: dict[str, int]
    shares: dict[str, Pair]
    accuracy: dict[str, Pair]
    prem_submitted: int
    all_gold_wrong: AllGoldWrong


class EvidenceGroup(TypedDict):
    """What followed the read that reached the golds in one group (ST, or MT reading every gold)."""

    n: int
    n_reached: int
    not_reached: int
    left_out: dict[str, int]
    counts: dict[str, int]
    shares: dict[str, Pair]
    accuracy: dict[str, Pair]


class AfterEvidence(TypedDict):
    st: EvidenceGroup
    mt_both: EvidenceGroup


class AfterWrongRead(TypedDict):
    """The action right after each wrong-paper read (events)."""

    n_events: int
    n_trajectories: int
    counts: dict[str, int]
    shares: dict[str, Pair]


class EarlySubmit(TypedDict):
    """Submits within `window` actions after a wrong-paper read, against the other trajectories with such a read."""

    window: int
    share: Pair
    accuracy: Pair
    accuracy_non_early: Pair
    non_early_unsubmitted: int
    delta: float | None
    p: float
    test: str


class NonSubmission(TypedDict):
    """Trajectories that ended without an answer, by ending."""

    n: int
    share: Pair
    counts: dict[str, int]
    shares: dict[str, Pair]


class StoppingBehaviour(TypedDict):
    mt_fail: MtFail
    after_evidence: AfterEvidence
    after_wrong_read: AfterWrongRead
    early_submit: EarlySubmit
    non_submission: NonSubmission


LEGEND = {
    "wrong_paper_read": "A wrong-paper read is a delivered read_section of any paper that is not gold for the item "
    "(the paper's Table 3: 'conditional on landing on a non-gold paper'), the seed and the bridge included.",
    "mt_fail": "MT-fail (paper Table 9): the MT trajectories whose paper recall failed, right or wrong, so n = MT "
    "trajectories × (1 − MT paper recall); four categories summing to n: 0-Gold = no gold paper read "
    "(delivered); otherwise, after the first read of the last gold reached, Explored = it searched, asked "
    "for references or named a paper other than the golds read, Stayed = it only named golds already "
    "read (re-read, listed, looked up), Prem = it only thought or submitted, or the run ended. "
    "all_gold_wrong (not part of Table 9) = wrong MT answers after reading every gold, over the MT "
    "trajectories that recalled.",
    "after_evidence": "Imm / Thnk / Read: what followed the gold read (ST) or the read that reached the second gold "
    "(MT-both: MT trajectories that read every gold), right or wrong, up to the first "
    "submit: Read = some read_section (reading more sections, a later re-read of a gold section "
    "included), Imm = submit next, Thnk = only "
    "think calls then submit. Left out of the three, as the paper does, and out of the "
    "denominator n (counted apart under left_out): Nav = navigation without a read "
    "(get_references, list_sections, search_papers, get_paper_info) then submit; End = neither "
    "a submit nor a read followed.",
    "after_wrong_read": "The action right after each wrong-paper read (events, several per trajectory possible), "
    "in this order: Submit, Think, Recover (names a gold paper), Re-nav (search_papers, "
    "get_references on any paper, or any call naming another non-gold paper), Stay (reads, "
    "lists sections of or looks up the same paper), Other (an unknown tool), End (nothing).",
    "early_submit": f"Early submit: a submit_answer among the {EARLY_WINDOW} actions right after some wrong-paper "
    "read; share over trajectories with at least one wrong-paper read. Δ-accuracy = accuracy of the "
    "early submitters − of the other trajectories with a wrong-paper read (non-submissions wrong), "
    "Fisher's exact two-sided p.",
    "n_gold": "Gold papers per item come from the item, stored with each trajectory (trajectories stored "
    "before that field existed assume 1 for ST and 2 for MT).",
}


def compact(actions: Sequence[Action]) -> Sequence[Sequence[Any]]:
    """Actions as [tool, status, paper, role, delivered] lists (dicts are converted; lists pass through)."""
    if not actions or type(actions[0]) in (list, tuple) or not isinstance(actions[0], Mapping):
        return cast(Sequence[Sequence[Any]], actions)  # one trajectory's actions are all lists or all dicts
    return [[a.get(k) for k in FIELDS] for a in cast(Sequence[Mapping[str, Any]], actions)]


def n_gold(traj: Trajectory) -> int:
    """Gold papers of the item: `n_gold` when given, else 1 for ST and 2 for MT."""
    value = traj.get("n_gold")
    if value is None or math.isnan(value):
        return 2 if traj.get("kind") == "mt" else 1
    return int(value)


class Facts(NamedTuple):
    """What every table needs of one trajectory, found in one pass over its (compact) actions."""

    actions: Sequence[Sequence[Any]]
    reached: list[tuple[str, int]]  # distinct golds read, in order, with the index of the first read
    last_gold: int | None  # index of the last delivered gold read
    wrong: list[int]  # indices of the wrong-paper reads

    @classmethod
    def of(cls, traj: Trajectory, wrong_roles: Collection[str | None] = WRONG_ROLES) -> Facts:
        return cls.scan(traj.get("actions") or [], wrong_roles)

    @classmethod
    def scan(cls, actions: Sequence[Action], wrong_roles: Collection[str | None] = WRONG_ROLES) -> Facts:
        """The one pass that classifies reads (gold / wrong-paper); every other function asks it."""
        actions = compact(actions)
        seen: dict[str, int] = {}
        last = None
        wrong = []
        for i, (tool, _, paper, role, delivered) in enumerate(actions):
            if tool != READ or not delivered:
                continue
            if role == "gold":
                if paper is None:
                    raise ValueError(f"action {i}: a gold read must name its paper (`paper`)")
                seen.setdefault(str(paper), i)
                last = i
            elif role in wrong_roles:
                wrong.append(i)
        return cls(actions, list(seen.items()), last, wrong)

    def evidence_read(self, golds: int | None = None) -> int | None:
        """The index of the read that reached the evidence: the first delivered read of the `golds`-th distinct gold
        paper (None: the last one reached); None when fewer golds were read. Table 9 times Imm / Thnk / Read from
        it, so a later re-read of a gold section is reading on."""
        wanted = len(self.reached) if golds is None else golds
        if wanted < 1 or len(self.reached) < wanted:
            return None
        return self.reached[wanted - 1][1]


def _of_kind(
    trajectories: Sequence[Trajectory], facts: Sequence[Facts] | None, kind: str
) -> list[tuple[Trajectory, Facts]]:
    """The trajectories of one kind ('st', 'mt') with their facts (scanned here when not given)."""
    facts = facts if facts is not None else [Facts.of(t) for t in trajectories]
    return [(t, f) for t, f in zip(trajectories, facts, strict=True) if t.get("kind") == kind]


def _with_category(
    pool: Sequence[tuple[Trajectory, Facts]], cats: Sequence[str | None], category: str
) -> list[tuple[Trajectory, Facts]]:
    """The members of `pool` whose category (`cats`, one per member) is `category`."""
    return [member for member, c in zip(pool, cats, strict=True) if c == category]


def _correct_by_category(
    pool: Sequence[tuple[Trajectory, Facts]], cats: Sequence[str | None], categories: Sequence[str]
) -> dict[str, int]:
    """Per category: how many of its members answered right."""
    return {c: sum(bool(t.get("correct")) for t, _ in _with_category(pool, cats, c)) for c in categories}


def _submitted(traj: Trajectory) -> bool:
    return traj.get("termination") == "answer"


# ---------------------------------------------------------------------------------------------
# MT failures


def paper_recalled(traj: Trajectory, facts: Facts) -> bool:
    """Paper recall of a trajectory: its stored `paper_recall` flag when given (the very flag the report's
    paper recall counts, so Table 9's n = MT items × (1 − MT paper recall) holds by construction), else
    whether the delivered reads reached every gold paper."""
    flag = traj.get("paper_recall")
    if flag is None or math.isnan(flag):
        return len(facts.reached) >= n_gold(traj)
    return bool(flag)


def mt_fail_category(traj: Trajectory) -> str | None:
    """Why a multi-target trajectory missed paper recall; one of MT_FAIL, or None when it recalled every gold
    paper (outside Table 9's population; see LEGEND["mt_fail"]).

    With the golds read (delivered): `0-Gold` none; otherwise, on the actions after the first read of
    the last gold reached: `Explored` if one searches, asks for references, or names a paper other
    than the golds read; else `Stayed` if one names a gold already read; else `Prem`.
    """
    facts = Facts.of(traj)
    if paper_recalled(traj, facts):
        return None
    return _mt_fail(facts.actions, facts.reached)


def _split_by_recall(
    pool: list[tuple[Trajectory, Facts]],
) -> tuple[list[tuple[Trajectory, Facts]], list[Trajectory]]:
    """(the members whose paper recall failed, with their facts; the trajectories that recalled)."""
    missed = [(t, f) for t, f in pool if not paper_recalled(t, f)]
    recalled = [t for t, f in pool if paper_recalled(t, f)]
    return missed, recalled


def _mt_fail(actions: Sequence[Sequence[Any]], reached: list[tuple[str, int]]) -> str:
    if not reached:
        return "0-Gold"
    read = {paper for paper, _ in reached}
    tail = actions[reached[-1][1] + 1 :]
    if any(a[0] in NAVIGATION or (a[2] is not None and str(a[2]) not in read) for a in tail):
        return "Explored"
    if any(a[2] is not None for a in tail):
        return "Stayed"
    return "Prem"


def mt_fail_breakdown(trajectories: Sequence[Trajectory], facts: Sequence[Facts] | None = None) -> MtFail:
    """Table 9: the MT trajectories whose paper recall failed, right or wrong, in MT_FAIL (which sum to `n`).

    `n` = MT trajectories × (1 − MT paper recall). `accuracy` per category is [correct, count] (an
    agent can guess right without both papers); `prem_submitted` splits Prem by whether the run
    ended with a submitted answer. `all_gold_wrong` is not part of Table 9: wrong MT answers after
    reading every gold (a synthesis failure), over the MT trajectories that recalled.
    """
    mts = _of_kind(trajectories, facts, "mt")
    missed, recalled = _split_by_recall(mts)
    cats = [_mt_fail(f.actions, f.reached) for _, f in missed]
    counts = {c: cats.count(c) for c in MT_FAIL}
    right = _correct_by_category(missed, cats, MT_FAIL)
    prem_submitted = sum(_submitted(t) for t, c in _with_category(missed, cats, "Prem"))
    wrong_after_all = sum(not t.get("correct") for t in recalled)
    return MtFail(
        n=len(missed),
        n_mt=len(mts),
        counts=counts,
        shares={c: Ratio(v, len(missed)).as_list() for c, v in counts.items()},
        accuracy={c: [right[c], counts[c]] for c in MT_FAIL},
        prem_submitted=prem_submitted,
        all_gold_wrong=AllGoldWrong(n=wrong_after_all, share=Ratio(wrong_after_all, len(recalled)).as_list()),
    )


# ---------------------------------------------------------------------------------------------
# after the evidence


def after_evidence_category(actions: Sequence[Action], golds: int | None = None) -> str | None:
    """What the agent did after the read that reached its golds; None when it did not reach them.

    The clock starts at the first delivered read of the `golds`-th distinct gold paper (ST: the gold read; MT: the
    read that reaches the second gold; None: the last distinct gold it reached), as the paper's Table 9 times it.
    Up to the first submit_answer after that read (or the end of the run):

    * `Read` — some read_section call (reading more sections — a later re-read of a gold section too), whatever else
      came with it;
    * `Imm`  — no call at all before the submit;
    * `Thnk` — only think calls before the submit;
    * `Nav`  — navigation without a read (get_references, list_sections, search_papers,
      get_paper_info, an unknown tool), then the submit: left out of the paper's three categories;
    * `End`  — no submit and no read followed before the run ended: also left out.
    """
    facts = Facts.scan(actions)
    return _after_evidence(facts.actions, facts.evidence_read(golds))


def _after_evidence(actions: Sequence[Sequence[Any]], start: int | None) -> str | None:
    """The category of what followed the read at `start` (None: the golds were not reached)."""
    if start is None:
        return None
    between: set[str] = set()
    for action in actions[start + 1 :]:
        tool = action[0]
        if tool == READ:
            return "Read"
        if tool == SUBMIT:
            if not between:
                return "Imm"
            return "Thnk" if between == {THINK} else "Nav"
        between.add(tool)
    return "End"


def after_evidence(trajectories: Sequence[Trajectory], facts: Sequence[Facts] | None = None) -> AfterEvidence:
    """Imm / Thnk / Read for ST trajectories and MT trajectories that read every gold (`mt_both`).

    `n` = the trajectories in the paper's three categories, the denominator of `shares`;
    `n_reached` = all that read every gold; the difference is `left_out` (Nav, End: counted in
    `counts`, never in a share). Trajectories that did not read all their golds are `not_reached`.
    Each category also carries the accuracy of its trajectories.
    """
    facts = facts if facts is not None else [Facts.of(t) for t in trajectories]
    return AfterEvidence(
        st=_after_evidence_group(_of_kind(trajectories, facts, "st")),
        mt_both=_after_evidence_group(_of_kind(trajectories, facts, "mt")),
    )


def _after_evidence_group(pool: list[tuple[Trajectory, Facts]]) -> EvidenceGroup:
    """`after_evidence` over one group's trajectories (the ST ones, or the MT ones)."""
    complete = [(t, f) for t, f in pool if len(f.reached) >= n_gold(t)]
    cats = [_after_evidence(f.actions, f.evidence_read(n_gold(t))) for t, f in complete]
    counts = {c: cats.count(c) for c in AFTER_EVIDENCE + LEFT_OUT}
    n = sum(counts[c] for c in AFTER_EVIDENCE)
    right = _correct_by_category(complete, cats, AFTER_EVIDENCE + LEFT_OUT)
    return EvidenceGroup(
        n=n,
        n_reached=len(complete),
        not_reached=len(pool) - len(complete),
        left_out={c: counts[c] for c in LEFT_OUT},
        counts=counts,
        shares={c: Ratio(counts[c], n).as_list() for c in AFTER_EVIDENCE},
        accuracy={c: Ratio(right[c], counts[c]).as_list() for c in AFTER_EVIDENCE + LEFT_OUT},
    )


# ---------------------------------------------------------------------------------------------
# after a wrong-paper read


def after_wrong_category(actions: Sequence[Action], index: int) -> str:
    """What the action right after the wrong-paper read at `index` was; one of AFTER_WRONG.

    Checked in this order on the immediately next action: none → `End`; submit_answer → `Submit`;
    think → `Think`; names a gold paper → `Recover`; search_papers or get_references (on any paper,
    the same one included: asking for its references is moving on) → `Re-nav`; names the same paper
    → `Stay`; names another non-gold paper → `Re-nav`; anything else (an unknown tool naming no
    paper) → `Other`.
    """
    actions = compact(actions)
    if index + 1 >= len(actions):
        return "End"
    here, nxt = actions[index], actions[index + 1]
    tool, paper, role = nxt[0], nxt[2], nxt[3]
    if tool == SUBMIT:
        return "Submit"
    if tool == THINK:
        return "Think"
    if paper is not None and role == "gold":
        return "Recover"
    if tool in NAVIGATION:
        return "Re-nav"
    if paper is not None and paper == here[2]:
        return "Stay"
    if paper is not None:
        return "Re-nav"
    return "Other"


def wrong_read_indices(actions: Sequence[Action], wrong_roles: Collection[str | None] = WRONG_ROLES) -> list[int]:
    """Indices of the wrong-paper reads (see the module docstring)."""
    return Facts.scan(actions, wrong_roles).wrong


def after_wrong_read(
    trajectories: Sequence[Trajectory],
    wrong_roles: Collection[str | None] = WRONG_ROLES,
    facts: Sequence[Facts] | None = None,
) -> AfterWrongRead:
    """AFTER_WRONG over every wrong-paper read event (a trajectory can contribute several)."""
    facts = facts if facts is not None else [Facts.of(t, wrong_roles) for t in trajectories]
    cats: list[str] = []
    with_wrong = 0
    for f in facts:
        with_wrong += bool(f.wrong)
        cats += [after_wrong_category(f.actions, i) for i in f.wrong]
    counts = {c: cats.count(c) for c in AFTER_WRONG}
    return AfterWrongRead(
        n_events=len(cats),
        n_trajectories=with_wrong,
        counts=counts,
        shares={c: Ratio(v, len(cats)).as_list() for c, v in counts.items()},
    )


def early_submit(
    trajectories: Sequence[Trajectory],
    window: int = EARLY_WINDOW,
    wrong_roles: Collection[str | None] = WRONG_ROLES,
    facts: Sequence[Facts] | None = None,
) -> EarlySubmit:
    """Trajectories that submitted within `window` actions after some wrong-paper read, and what it cost.

    The population is the trajectories with at least one wrong-paper read; `share` = early ones
    over it. `accuracy` is that of the early submitters, `accuracy_non_early` that of the rest of
    the population (non-submissions count as wrong, as accuracy always does; how many of them
    never submitted is `non_early_unsubmitted`). `delta` = accuracy early − non-early, tested with
    Fisher's exact two-sided test on [[early right, early wrong], [non-early right, non-early
    wrong]]; `delta` is None and `p` 1 when either group is empty.
    """
    facts = facts if facts is not None else [Facts.of(t, wrong_roles) for t in trajectories]
    early = [0, 0]  # right, all
    other = [0, 0]
    unsubmitted = 0
    for traj, f in zip(trajectories, facts, strict=True):
        if not f.wrong:
            continue
        hasty = _submits_soon_after_wrong(f, window)
        group = early if hasty else other
        group[0] += bool(traj.get("correct"))
        group[1] += 1
        unsubmitted += not hasty and not _submitted(traj)
    tested = early[1] > 0 and other[1] > 0
    p = fisher_exact_two_sided(early[0], early[1] - early[0], other[0], other[1] - other[0]) if tested else 1.0
    return EarlySubmit(
        window=window,
        share=Ratio(early[1], early[1] + other[1]).as_list(),
        accuracy=Ratio(early[0], early[1]).as_list(),
        accuracy_non_early=Ratio(other[0], other[1]).as_list(),
        non_early_unsubmitted=unsubmitted,
        delta=early[0] / early[1] - other[0] / other[1] if tested else None,
        p=p,
        test="Fisher's exact, two-sided",
    )


def _submits_soon_after_wrong(facts: Facts, window: int) -> bool:
    """Whether a submit_answer is among the `window` actions right after some wrong-paper read."""
    return any(a[0] == SUBMIT for i in facts.wrong for a in facts.actions[i + 1 : i + 1 + window])


def non_submission(trajectories: Sequence[Trajectory]) -> NonSubmission:
    """Runs that ended without an answer, per cap: counts and shares over all trajectories."""
    total = len(trajectories)
    ends = [str(t.get("termination")) for t in trajectories if t.get("termination") != "answer"]
    counts = {e: ends.count(e) for e in sorted(set(ends))}
    return NonSubmission(
        n=total,
        share=Ratio(len(ends), total).as_list(),
        counts=counts,
        shares={e: Ratio(v, total).as_list() for e, v in counts.items()},
    )


def stopping_behaviour(
    trajectories: Sequence[Trajectory], wrong_roles: Collection[str | None] = WRONG_ROLES
) -> StoppingBehaviour:
    """All stopping-behaviour tables of one run, from one pass over each trajectory's actions."""
    facts = [Facts.of(t, wrong_roles) for t in trajectories]
    return StoppingBehaviour(
        mt_fail=mt_fail_breakdown(trajectories, facts),
        after_evidence=after_evidence(trajectories, facts),
        after_wrong_read=after_wrong_read(trajectories, wrong_roles, facts),
        early_submit=early_submit(trajectories, wrong_roles=wrong_roles, facts=facts),
        non_submission=non_submission(trajectories),
    )
