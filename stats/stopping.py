"""Stopping behaviour: when agents stop searching, and what they do after reading the wrong paper.

AgentHop §4.3 / Appendix E.2, PROTOCOL §3. The paper's Table 3 shares do not sum to 100%, so the
categories here are defined once, precisely, and are mutually exclusive and exhaustive within
their population. Every share is a [num, den] pair.

Input: one dict per trajectory with

* `kind` — 'st' or 'mt'; `correct` — bool; `termination` — 'answer', 'budget', 'token_limit',
  'max_turns' or 'error'; `n_gold` — number of gold papers (default 1 for ST, 2 for MT);
* `actions` — every tool call in order, rejected ones included (the sequence is what the agent
  *chose*), each a dict with `tool`, `status` ('ok', 'rejected', 'disabled', 'error', 'not_found',
  'metadata_only', 'unresolved', …), `paper` (the paper id the call names, or None),
  `paper_role` ('gold', 'bridge', 'seed', 'other' or None) and, for reads, `delivered`.

Definitions used by every function:

* A **gold read** is a `read_section` with `delivered` true on a paper whose role is 'gold'.
  Only delivered reads count as having read a paper (PROTOCOL §3); a rejected or failed call
  still counts as an *action* (a decision) everywhere else.
* A **wrong-paper read** is a delivered `read_section` of a paper whose role is not 'gold'
  (`wrong_roles`, by default bridge, seed, other and unknown roles alike).
* A call **names** a paper when its `paper` is not None (get_paper_info, get_references,
  list_sections, read_section). `search_papers` names none and counts as navigation.
"""
from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from stats.ratio import Ratio

Action = Mapping[str, Any]
Trajectory = Mapping[str, Any]

MT_FAIL = ("0-Gold", "Prem", "Explored", "Stayed", "All-Gold")
AFTER_EVIDENCE = ("Imm", "Thnk", "Read", "End")
AFTER_WRONG = ("Recover", "Stay", "Think", "Re-nav", "Submit", "Other", "End")
WRONG_ROLES: tuple[str | None, ...] = ("bridge", "seed", "other", None)
EARLY_WINDOW = 3
SUBMIT, THINK, READ, SEARCH = "submit_answer", "think", "read_section", "search_papers"


def n_gold(traj: Trajectory) -> int:
    """Gold papers of the item: `n_gold` when given, else 1 for ST and 2 for MT."""
    value = traj.get("n_gold")
    if value is None:
        return 2 if traj.get("kind") == "mt" else 1
    return int(value)


def is_gold_read(action: Action) -> bool:
    return action.get("tool") == READ and bool(action.get("delivered")) and action.get("paper_role") == "gold"


def is_wrong_read(action: Action, wrong_roles: Collection[str | None] = WRONG_ROLES) -> bool:
    return (action.get("tool") == READ and bool(action.get("delivered"))
            and action.get("paper_role") != "gold" and action.get("paper_role") in wrong_roles)


def gold_reach(actions: Sequence[Action]) -> list[tuple[str, int]]:
    """Distinct gold papers in the order first delivered, with the index of that first read."""
    seen: dict[str, int] = {}
    for i, action in enumerate(actions):
        if is_gold_read(action):
            paper = action.get("paper")
            if paper is None:
                raise ValueError(f"action {i}: a gold read must name its paper (`paper`)")
            seen.setdefault(str(paper), i)
    return list(seen.items())


def last_gold_read(actions: Sequence[Action]) -> int | None:
    """Index of the last delivered gold read, or None."""
    hits = [i for i, a in enumerate(actions) if is_gold_read(a)]
    return hits[-1] if hits else None


# ---------------------------------------------------------------------------------------------
# MT failures


def mt_fail_category(traj: Trajectory) -> str:
    """Why a wrong multi-target trajectory failed; exactly one of MT_FAIL.

    With g = distinct gold papers read (delivered) and G = n_gold:

    * `0-Gold`   — g = 0.
    * `All-Gold` — g ≥ G: every gold was read and the answer was still wrong (a synthesis
      failure, outside the paper's three search categories; its share completes the 100%).
    * otherwise 0 < g < G; look at the actions after the first read of the last gold it reached:
      * `Explored` — some action there searches or names a paper other than the golds read
        (it kept looking elsewhere and never got the remaining gold);
      * `Stayed`   — not Explored, and some action there names a gold paper already read
        (it kept re-reading / listing / citing the same paper);
      * `Prem`     — neither: after that read it only thought and/or submitted, or the run
        ended (premature stop with evidence missing).
    """
    actions = traj.get("actions") or []
    reached = gold_reach(actions)
    if not reached:
        return "0-Gold"
    if len(reached) >= n_gold(traj):
        return "All-Gold"
    read = {paper for paper, _ in reached}
    tail = actions[reached[-1][1] + 1:]
    if any(a.get("tool") == SEARCH or (a.get("paper") is not None and str(a.get("paper")) not in read)
           for a in tail):
        return "Explored"
    if any(a.get("paper") is not None and str(a.get("paper")) in read for a in tail):
        return "Stayed"
    return "Prem"


def mt_fail_breakdown(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    """Counts and shares of MT_FAIL over wrong MT trajectories; `prem_submitted` splits Prem by
    whether the run ended with a submitted answer."""
    wrong = [t for t in trajectories if t.get("kind") == "mt" and not t.get("correct")]
    cats = [mt_fail_category(t) for t in wrong]
    counts = {c: cats.count(c) for c in MT_FAIL}
    prem_submitted = sum(1 for t, c in zip(wrong, cats) if c == "Prem" and t.get("termination") == "answer")
    return {"n": len(wrong), "counts": counts,
            "shares": {c: Ratio(v, len(wrong)).as_list() for c, v in counts.items()},
            "prem_submitted": prem_submitted}


# ---------------------------------------------------------------------------------------------
# after the evidence


def after_evidence_category(actions: Sequence[Action]) -> str | None:
    """What the agent did after its last gold read; None when it read no gold.

    * `Imm`  — the next action is submit_answer;
    * `Thnk` — one or more think calls, then submit_answer;
    * `Read` — some other tool call came before any submit (more reading or navigation);
    * `End`  — no submit followed (only thinks, or nothing) before the run ended.
    """
    last = last_gold_read(actions)
    if last is None:
        return None
    after = actions[last + 1:]
    thinks = 0
    for action in after:
        tool = action.get("tool")
        if tool == SUBMIT:
            return "Imm" if thinks == 0 else "Thnk"
        if tool != THINK:
            return "Read"
        thinks += 1
    return "End"


def after_evidence(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    """AFTER_EVIDENCE for ST trajectories and MT trajectories that read every gold (`mt_both`).

    Trajectories that did not read all their golds are outside the population and counted as
    `not_reached`. Each category also carries the accuracy of its trajectories.
    """
    out: dict[str, Any] = {}
    for group, kind in (("st", "st"), ("mt_both", "mt")):
        pool = [t for t in trajectories if t.get("kind") == kind]
        complete = [t for t in pool if len(gold_reach(t.get("actions") or [])) >= n_gold(t)]
        cats = [after_evidence_category(t.get("actions") or []) for t in complete]
        counts = {c: cats.count(c) for c in AFTER_EVIDENCE}
        out[group] = {
            "n": len(complete), "not_reached": len(pool) - len(complete), "counts": counts,
            "shares": {c: Ratio(v, len(complete)).as_list() for c, v in counts.items()},
            "accuracy": {c: Ratio(sum(bool(t.get("correct")) for t, k in zip(complete, cats) if k == c),
                                  counts[c]).as_list() for c in AFTER_EVIDENCE},
        }
    return out


# ---------------------------------------------------------------------------------------------
# after a wrong-paper read


def after_wrong_category(actions: Sequence[Action], index: int) -> str:
    """What the action right after the wrong-paper read at `index` was; one of AFTER_WRONG.

    Checked in this order on the immediately next action: none → `End`; submit_answer →
    `Submit`; think → `Think`; names the same paper → `Stay`; names a gold paper → `Recover`;
    search or names another non-gold paper → `Re-nav`; anything else (an unknown tool naming
    no paper) → `Other`.
    """
    if index + 1 >= len(actions):
        return "End"
    here, nxt = actions[index], actions[index + 1]
    tool = nxt.get("tool")
    if tool == SUBMIT:
        return "Submit"
    if tool == THINK:
        return "Think"
    paper = nxt.get("paper")
    if paper is not None and paper == here.get("paper"):
        return "Stay"
    if paper is not None and nxt.get("paper_role") == "gold":
        return "Recover"
    if tool == SEARCH or paper is not None:
        return "Re-nav"
    return "Other"


def wrong_read_indices(actions: Sequence[Action], wrong_roles: Collection[str | None] = WRONG_ROLES) -> list[int]:
    return [i for i, a in enumerate(actions) if is_wrong_read(a, wrong_roles)]


def after_wrong_read(trajectories: Sequence[Trajectory],
                     wrong_roles: Collection[str | None] = WRONG_ROLES) -> dict[str, Any]:
    """AFTER_WRONG over every wrong-paper read event (a trajectory can contribute several)."""
    cats = [after_wrong_category(t.get("actions") or [], i)
            for t in trajectories for i in wrong_read_indices(t.get("actions") or [], wrong_roles)]
    counts = {c: cats.count(c) for c in AFTER_WRONG}
    with_wrong = sum(1 for t in trajectories if wrong_read_indices(t.get("actions") or [], wrong_roles))
    return {"n_events": len(cats), "n_trajectories": with_wrong, "counts": counts,
            "shares": {c: Ratio(v, len(cats)).as_list() for c, v in counts.items()}}


def early_submit(trajectories: Sequence[Trajectory], window: int = EARLY_WINDOW,
                 wrong_roles: Collection[str | None] = WRONG_ROLES) -> dict[str, Any]:
    """Trajectories that submitted within `window` actions after some wrong-paper read.

    The share is over trajectories with at least one wrong-paper read; `accuracy` is that of the
    early submitters (how often a hasty answer after a wrong read was still right).
    """
    pool, early = [], []
    for traj in trajectories:
        actions = traj.get("actions") or []
        hits = wrong_read_indices(actions, wrong_roles)
        if not hits:
            continue
        pool.append(traj)
        if any(a.get("tool") == SUBMIT for i in hits for a in actions[i + 1:i + 1 + window]):
            early.append(traj)
    return {"window": window, "share": Ratio(len(early), len(pool)).as_list(),
            "accuracy": Ratio(sum(bool(t.get("correct")) for t in early), len(early)).as_list()}


def non_submission(trajectories: Sequence[Trajectory]) -> dict[str, Any]:
    """Runs that ended without an answer, per cap: counts and shares over all trajectories."""
    total = len(trajectories)
    ends = [str(t.get("termination")) for t in trajectories if t.get("termination") != "answer"]
    counts = {e: ends.count(e) for e in sorted(set(ends))}
    return {"n": total, "share": Ratio(len(ends), total).as_list(), "counts": counts,
            "shares": {e: Ratio(v, total).as_list() for e, v in counts.items()}}


def stopping_behaviour(trajectories: Sequence[Trajectory],
                       wrong_roles: Collection[str | None] = WRONG_ROLES) -> dict[str, Any]:
    """All stopping-behaviour tables of one run."""
    return {"mt_fail": mt_fail_breakdown(trajectories), "after_evidence": after_evidence(trajectories),
            "after_wrong_read": after_wrong_read(trajectories, wrong_roles),
            "early_submit": early_submit(trajectories, wrong_roles=wrong_roles),
            "non_submission": non_submission(trajectories)}
