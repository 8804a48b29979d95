"""Behavioural fingerprints of models and families (AgentHop §4.2, RQ1 and RQ3), tested over models.

The paper reads its panel by family: GPT commits early, Anthropic and GLM verify before committing, DeepSeek and
Kimi over-search. Here each model gets a tool-call signature, each family the mean of its models, and each family is
set against the mean of the other families' models by a permutation test over models (the unit is the model: the
trajectories of one model are not independent evidence about its family). Holm adjusts across the signatures of a
family. The words are computed from these tests only, never from a family's name (`family_words`).

Signatures of one model (its trajectories pooled; each a ratio, None when its denominator is 0):

* `calls_per_turn` — tool calls ÷ model turns that emitted ≥ 1 call (the paper's parallel-call measure, RQ3);
* `think_share`, `read_share`, `nav_share` — think, read_section and navigation calls (search_papers,
  get_references, list_sections, get_paper_info) ÷ all calls;
* `early_commit` — over trajectories with a submit_answer: the first submit comes with no delivered read before it,
  or within EARLY_ACTIONS actions of the first delivered gold read;
* `verify_before_commit` — over trajectories with a submit after a delivered gold read: a think or a read_section
  lies between the last new evidence (the last delivered read of a paper not read before) and the first submit;
* `search_volume` — search_papers calls per trajectory.

Input per trajectory: `actions`, the store's compact [tool, status, paper, role, delivered] lists (every call in
order, rejected ones included), and `tool_calls` / `turns_with_calls`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from stats.multiplicity import holm

SIGNATURES = (
    "calls_per_turn",
    "think_share",
    "read_share",
    "nav_share",
    "early_commit",
    "verify_before_commit",
    "search_volume",
)
EARLY_ACTIONS = 3
THINK, READ, SUBMIT, SEARCH = "think", "read_section", "submit_answer", "search_papers"
NAVIGATION = ("search_papers", "get_references", "list_sections", "get_paper_info")
EXACT_LIMIT = 20_000  # enumerate every relabelling up to this many; beyond, a seeded Monte Carlo sample
N_RANDOM = 9_999
# The words and the signature (and direction) that must support each
WORDS = {
    "commits early": ("early_commit", 1),
    "verifies": ("verify_before_commit", 1),
    "over-searches": ("search_volume", 1),
}
BALANCED = "balanced"


def trajectory_terms(
    actions: Sequence[Sequence[Any]], tool_calls: float | None = None, turns_with_calls: float | None = None
) -> dict[str, tuple[float, float]]:
    """(numerator, denominator) of each signature for one trajectory; a model's value pools them (sum ÷ sum)."""
    tools = [a[0] for a in actions]
    n = len(tools)
    calls = float(n if tool_calls is None or math.isnan(tool_calls) else tool_calls)
    turns = float(0 if turns_with_calls is None or math.isnan(turns_with_calls) else turns_with_calls)
    out = {
        "calls_per_turn": (calls, turns),
        "think_share": (tools.count(THINK), n),
        "read_share": (tools.count(READ), n),
        "nav_share": (sum(t in NAVIGATION for t in tools), n),
        "search_volume": (tools.count(SEARCH), 1),
    }
    submit = next((i for i, t in enumerate(tools) if t == SUBMIT), None)
    out["early_commit"] = (0, 0) if submit is None else (float(_early(actions, submit)), 1)
    verified = _verified(actions, submit)
    out["verify_before_commit"] = (0, 0) if verified is None else (float(verified), 1)
    return out


def _delivered_read(action: Sequence[Any]) -> bool:
    return action[0] == READ and bool(action[4])


def _early(actions: Sequence[Sequence[Any]], submit: int) -> bool:
    """No delivered read before the first submit, or the submit within EARLY_ACTIONS actions of the first gold read."""
    before = actions[:submit]
    if not any(_delivered_read(a) for a in before):
        return True
    first_gold = next((i for i, a in enumerate(before) if _delivered_read(a) and a[3] == "gold"), None)
    return first_gold is not None and submit - first_gold <= EARLY_ACTIONS


def _verified(actions: Sequence[Sequence[Any]], submit: int | None) -> bool | None:
    """A think or read between the last new evidence and the first submit; None outside the population."""
    if submit is None:
        return None
    before = actions[:submit]
    if not any(_delivered_read(a) and a[3] == "gold" for a in before):
        return None
    seen: set[Any] = set()
    last_new = -1
    for i, a in enumerate(before):
        if _delivered_read(a) and a[2] not in seen:
            seen.add(a[2])
            last_new = i
    return any(a[0] in (THINK, READ) for a in before[last_new + 1 :])


def model_signature(trajectories: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Each signature of one model: value (pooled ratio, None without a denominator), numerator, denominator."""
    num = dict.fromkeys(SIGNATURES, 0.0)
    den = dict.fromkeys(SIGNATURES, 0.0)
    for t in trajectories:
        for key, (a, b) in trajectory_terms(
            t.get("actions") or [], t.get("tool_calls"), t.get("turns_with_calls")
        ).items():
            num[key] += a
            den[key] += b
    return {
        k: {"value": num[k] / den[k] if den[k] else None, "numerator": num[k], "denominator": den[k]}
        for k in SIGNATURES
    }


def permutation_test(values: Sequence[float], in_group: Sequence[bool], seed: int = 0) -> dict[str, Any]:
    """Mean of the group minus mean of the rest, and its two-sided permutation p over relabellings of the units.

    Exact (every choice of the group's size among the units) up to EXACT_LIMIT relabellings, else N_RANDOM seeded
    random ones with p = (1 + as extreme) / (1 + N_RANDOM). `min_p` is the smallest p the design can reach (exact:
    the share of relabellings as extreme as the most extreme one, at least 1 / count)."""
    x = np.asarray(values, dtype=float)
    g = np.asarray(in_group, dtype=bool)
    n, k = x.size, int(g.sum())
    if k in (0, n):
        return {"effect": None, "p": None, "min_p": None, "n_group": k, "n_rest": n - k, "method": None}
    total = x.sum()

    def effect_of(sum_group: np.ndarray | float) -> np.ndarray | float:
        return sum_group / k - (total - sum_group) / (n - k)

    observed = float(effect_of(x[g].sum()))
    count = math.comb(n, k)
    tol = 1e-12 * max(1.0, abs(observed))
    if count <= EXACT_LIMIT:
        sums = np.fromiter((x[list(c)].sum() for c in itertools.combinations(range(n), k)), dtype=float, count=count)
        effects = np.abs(effect_of(sums))
        p = float(np.mean(effects >= abs(observed) - tol))
        min_p = float(np.mean(effects >= effects.max() - tol))
        method = f"exact ({count} relabellings)"
    else:
        rng = np.random.default_rng(seed)
        sums = np.array([x[rng.permutation(n)[:k]].sum() for _ in range(N_RANDOM)])
        p = float((1 + np.sum(np.abs(effect_of(sums)) >= abs(observed) - tol)) / (1 + N_RANDOM))
        min_p = 1 / (1 + N_RANDOM)
        method = f"Monte Carlo ({N_RANDOM} relabellings, seed {seed})"
    return {"effect": observed, "p": p, "min_p": min_p, "n_group": k, "n_rest": n - k, "method": method}


def family_tests(
    per_model: Mapping[str, Mapping[str, Mapping[str, Any]]],
    family_of: Mapping[str, str | None],
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, dict[str, Any]]:
    """Per family: each signature's family mean, the others' mean, the permutation test against them (over the
    models with a value), Holm-adjusted across the family's signatures, and the words the tests support.

    Models without a family are not a family, but do count among "the others"."""
    families = sorted({f for f in family_of.values() if f})
    out: dict[str, dict[str, Any]] = {}
    for fam in families:
        rows = {}
        for sig in SIGNATURES:
            models = [m for m in per_model if per_model[m][sig]["value"] is not None]
            values = [per_model[m][sig]["value"] for m in models]
            group = [family_of.get(m) == fam for m in models]
            test = permutation_test(values, group, seed)
            inside = [v for v, g in zip(values, group) if g]
            rest = [v for v, g in zip(values, group) if not g]
            rows[sig] = {
                "family_mean": float(np.mean(inside)) if inside else None,
                "others_mean": float(np.mean(rest)) if rest else None,
                **test,
            }
        adjusted = holm([rows[s]["p"] for s in SIGNATURES])
        floor = holm([rows[s]["min_p"] for s in SIGNATURES])
        for sig, p_adj, p_floor in zip(SIGNATURES, adjusted, floor):
            rows[sig]["p_holm"] = p_adj
            rows[sig]["min_p_holm"] = p_floor
            rows[sig]["significant"] = p_adj is not None and p_adj < alpha
        out[fam] = {
            "models": sorted(m for m in per_model if family_of.get(m) == fam),
            "signatures": rows,
            "words": family_words(rows, alpha),
        }
    return out


def family_words(rows: Mapping[str, Mapping[str, Any]], alpha: float = 0.05) -> list[str]:
    """The words the tests support: "commits early" (early commitment significantly above the other families),
    "verifies" (verify-before-commit above), "over-searches" (search volume above); "balanced" where none of
    the three holds, no signature differs at all, and the design could have shown a difference on every one of
    the three (its smallest attainable Holm-adjusted p is below α). Otherwise no word."""
    words = [
        word
        for word, (sig, sign) in WORDS.items()
        if rows[sig]["significant"] and rows[sig]["effect"] is not None and rows[sig]["effect"] * sign > 0
    ]
    if words:
        return words
    powered = all(rows[sig]["min_p_holm"] is not None and rows[sig]["min_p_holm"] < alpha for sig, _ in WORDS.values())
    if powered and not any(r["significant"] for r in rows.values()):
        return [BALANCED]
    return []


def family_trigrams(
    trigram_trajectories: Mapping[str, Mapping[tuple[str, ...], int]], n_trajectories: Mapping[str, int], top: int = 3
) -> dict[str, list[dict[str, Any]]]:
    """Per family, its `top` trigrams by the share of its trajectories that contain them (ties by name), each with
    that share and the mean share of the other families' trajectories containing it (the paper: Anthropic
    ls→ls→rs on ~40 % of trajectories vs a 10.7 % mean over the other families)."""
    out: dict[str, list[dict[str, Any]]] = {}
    for fam, counts in trigram_trajectories.items():
        n = n_trajectories[fam]
        others = [f for f in trigram_trajectories if f != fam and n_trajectories[f]]
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        out[fam] = [
            {
                "trigram": list(gram),
                "trajectories": c,
                "n": n,
                "share": c / n if n else None,
                "others_mean_share": (
                    float(np.mean([trigram_trajectories[f].get(gram, 0) / n_trajectories[f] for f in others]))
                    if others
                    else None
                ),
            }
            for gram, c in ranked
        ]
    return out
