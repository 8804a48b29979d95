"""Behavioural fingerprints of models and families (AgentHop §4.2, RQ1 and RQ3), tested over models.

The paper reads its panel by family: GPT commits early, Anthropic and GLM verify before committing, DeepSeek and
Kimi over-search. Here each model gets a tool-call signature, each family the mean of its models, and each family is
set against the mean of the other families' models by a permutation test over models (the unit is the model: the
trajectories of one model are not independent evidence about its family). Holm adjusts across the signatures of a
family. The words are computed from these tests only, never from a family's name (`family_words`).

Signatures of one model (its trajectories pooled; each a ratio, None when its denominator is 0). Calls to tools
outside the AgentHop protocol (the general-agent setting's out-of-domain tools) are dropped first, so every share
is over the protocol's own calls and runs of that setting compare with plain ones:

* `calls_per_turn` — tool calls ÷ model turns that emitted ≥ 1 call (the paper's parallel-call measure, RQ3);
* `think_share`, `read_share`, `nav_share` — think, read_section and navigation calls (search_papers,
  get_references, list_sections, get_paper_info) ÷ all protocol calls;
* `early_commit`, `verify_before_commit`, `over_search` — Table 9's Imm, Thnk and Read over the trajectories
  that read every gold (ST after the gold, MT-both after both golds; the paper's denominator: the residual —
  navigation without a read, or no submit — stays in it): Imm = the submit came right after the read that
  reached the golds (RQ1's early commitment), Thnk = only think calls between it and the submit (verify before
  commit), Read = reading on after it, a re-read of a gold section too (over-search, not search volume);
* `under_engagement` — trajectories that never had a read_section delivered ÷ all (RQ4: giving up without
  reading, not early commitment);
* `search_volume` — search_papers calls per trajectory (descriptive; no word rests on it).

Input per trajectory: `actions`, the store's compact [tool, status, paper, role, delivered] lists (every call in
order, rejected ones included), `tool_calls` / `turns_with_calls`, and `kind` / `n_gold` (how many golds count as
all of them).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NotRequired, TypedDict

import numpy as np

from stats import ngrams, stopping
from stats.multiplicity import holm

SIGNATURES = (
    "calls_per_turn",
    "think_share",
    "read_share",
    "nav_share",
    "early_commit",
    "verify_before_commit",
    "over_search",
    "under_engagement",
    "search_volume",
)
THINK, READ, SEARCH = "think", "read_section", "search_papers"
NAVIGATION = ("search_papers", "get_references", "list_sections", "get_paper_info")
EXACT_LIMIT = 20_000  # enumerate every relabelling up to this many; beyond, a seeded Monte Carlo sample
N_RANDOM = 9_999
# The words and the signature (and direction) that must support each (§4.2, Table 9)
WORDS = {
    "commits early": ("early_commit", 1),
    "verifies": ("verify_before_commit", 1),
    "over-searches": ("over_search", 1),
    "under-engages": ("under_engagement", 1),
}
BALANCED = "balanced"


class SignatureValue(TypedDict):
    """One signature of one model: the pooled ratio (None without a denominator) and its two sums."""

    value: float | None
    numerator: float
    denominator: float


class PermutationTest(TypedDict):
    """Mean of the group minus mean of the rest, its permutation p and the smallest p the design can reach."""

    effect: float | None
    p: float | None
    min_p: float | None
    n_group: int
    n_rest: int
    method: str | None


class SignatureTest(PermutationTest):
    """One family against the others on one signature; the Holm-adjusted fields are set once every test is in."""

    family_mean: float | None
    others_mean: float | None
    p_holm: NotRequired[float | None]
    min_p_holm: NotRequired[float | None]
    significant: NotRequired[bool]


class FamilyTests(TypedDict):
    models: list[str]
    signatures: dict[str, SignatureTest]
    words: list[str]
    n_tests: int


class FamilyTrigram(TypedDict):
    """One of a family's top trigrams: the share of its trajectories containing it, and the other families' mean."""

    trigram: list[str]
    trajectories: int
    n: int
    share: float | None
    others_mean_share: float | None


class TrigramTest(PermutationTest):
    """A family's top trigram tested over runs against the other families', Holm-adjusted across the families."""

    trigram: list[str]
    p_holm: NotRequired[float | None]
    significant: NotRequired[bool]


AFTER_GOLD = {"Imm": "early_commit", "Thnk": "verify_before_commit", "Read": "over_search"}


def in_domain(actions: Sequence[Sequence[Any]]) -> list[Sequence[Any]]:
    """The calls of the AgentHop protocol's own tools (out-of-domain calls of the general setting dropped)."""
    return [a for a in actions if a[0] in ngrams.TOOLS]


def trajectory_terms(
    actions: Sequence[Sequence[Any]],
    tool_calls: float | None = None,
    turns_with_calls: float | None = None,
    kind: str | None = None,
    n_gold: float | None = None,
) -> dict[str, tuple[float, float]]:
    """(numerator, denominator) of each signature for one trajectory; a model's value pools them (sum ÷ sum)."""
    actions = in_domain(actions)
    tools = [a[0] for a in actions]
    n = len(tools)
    calls = _recorded_or(tool_calls, n)
    turns = _recorded_or(turns_with_calls, 0)
    out = {
        "calls_per_turn": (calls, turns),
        "think_share": (tools.count(THINK), n),
        "read_share": (tools.count(READ), n),
        "nav_share": (sum(t in NAVIGATION for t in tools), n),
        "search_volume": (tools.count(SEARCH), 1),
        "under_engagement": (float(not any(a[0] == READ and a[4] for a in actions)), 1),
    }
    return {**out, **_after_gold_terms(actions, kind, n_gold)}


def _recorded_or(value: float | None, default: float) -> float:
    """A recorded count, or `default` where none was recorded (None, or NaN in a table's column)."""
    return float(default if value is None or math.isnan(value) else value)


def _after_gold_terms(
    actions: Sequence[Sequence[Any]], kind: str | None, n_gold: float | None
) -> dict[str, tuple[float, float]]:
    """The after-the-evidence signatures (AFTER_GOLD): 1 of 1 for the category that followed the read reaching the
    golds of a trajectory that read every gold, 0 of 1 for the others; 0 of 0 for a trajectory that did not."""
    facts = stopping.Facts.scan(actions)
    golds = stopping.n_gold({"kind": kind, "n_gold": n_gold})
    if len(facts.reached) < golds or facts.last_gold is None:
        return {key: (0.0, 0.0) for key in AFTER_GOLD.values()}
    category = stopping.after_evidence_category(actions, golds)
    return {key: (float(category == cat), 1.0) for cat, key in AFTER_GOLD.items()}


def model_signature(trajectories: Sequence[Mapping[str, Any]]) -> dict[str, SignatureValue]:
    """Each signature of one model: value (pooled ratio, None without a denominator), numerator, denominator."""
    num = dict.fromkeys(SIGNATURES, 0.0)
    den = dict.fromkeys(SIGNATURES, 0.0)
    for t in trajectories:
        for key, (a, b) in trajectory_terms(
            t.get("actions") or [], t.get("tool_calls"), t.get("turns_with_calls"), t.get("kind"), t.get("n_gold")
        ).items():
            num[key] += a
            den[key] += b
    return {
        k: SignatureValue(value=num[k] / den[k] if den[k] else None, numerator=num[k], denominator=den[k])
        for k in SIGNATURES
    }


def permutation_test(values: Sequence[float], in_group: Sequence[bool], seed: int = 0) -> PermutationTest:
    """Mean of the group minus mean of the rest, and its two-sided permutation p over relabellings of the units.

    Exact (every choice of the group's size among the units) up to EXACT_LIMIT relabellings, else N_RANDOM seeded
    random ones with p = (1 + as extreme) / (1 + N_RANDOM). `min_p` is the smallest p the design can reach (exact:
    the share of relabellings as extreme as the most extreme one, at least 1 / count)."""
    x = np.asarray(values, dtype=float)
    g = np.asarray(in_group, dtype=bool)
    n, k = x.size, int(g.sum())
    if k in (0, n):
        return PermutationTest(effect=None, p=None, min_p=None, n_group=k, n_rest=n - k, method=None)
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
    return PermutationTest(effect=observed, p=p, min_p=min_p, n_group=k, n_rest=n - k, method=method)


def family_tests(
    per_model: Mapping[str, Mapping[str, SignatureValue]],
    family_of: Mapping[str, str | None],
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, FamilyTests]:
    """Per family: each signature's family mean, the others' mean, the permutation test against them (over the
    models with a value), Holm-adjusted across every family's tests together (all families × signatures: one
    family of tests, as the words are read off all of them), and the words the tests support.

    Models without a family are not a family, but do count among "the others"."""
    families = sorted({f for f in family_of.values() if f})
    rows = {fam: {sig: _signature_test(per_model, family_of, fam, sig, seed) for sig in SIGNATURES} for fam in families}
    keys = [(fam, sig) for fam in families for sig in SIGNATURES]
    _adjust([rows[f][s] for f, s in keys], alpha)
    return {
        fam: FamilyTests(
            models=_members(per_model, family_of, fam),
            signatures=rows[fam],
            words=family_words(rows[fam], alpha),
            n_tests=len(keys),
        )
        for fam in families
    }


def _members(models: Iterable[str], family_of: Mapping[str, str | None], fam: str) -> list[str]:
    """The models of one family, sorted."""
    return sorted(m for m in models if family_of.get(m) == fam)


def _signature_test(
    per_model: Mapping[str, Mapping[str, SignatureValue]],
    family_of: Mapping[str, str | None],
    fam: str,
    sig: str,
    seed: int,
) -> SignatureTest:
    """One family against the others on one signature, over the models with a value: the two means and the
    permutation test."""
    models = [m for m in per_model if per_model[m][sig]["value"] is not None]
    values = [v for m in models if (v := per_model[m][sig]["value"]) is not None]
    group = [family_of.get(m) == fam for m in models]
    return SignatureTest(
        family_mean=_mean_where(values, group, True),
        others_mean=_mean_where(values, group, False),
        **permutation_test(values, group, seed),
    )


def _mean_where(values: Sequence[float], group: Sequence[bool], inside: bool) -> float | None:
    """The mean of the values inside the group (or outside it); None when there are none."""
    chosen = [v for v, g in zip(values, group, strict=True) if g == inside]
    return float(np.mean(chosen)) if chosen else None


def _adjust(tests: Sequence[SignatureTest], alpha: float) -> None:
    """Holm-adjust one family of tests together: each gets `p_holm`, `min_p_holm` (the smallest it could reach) and
    `significant`."""
    adjusted = holm([t["p"] for t in tests])
    floor = holm([t["min_p"] for t in tests])
    for t, p_adj, p_floor in zip(tests, adjusted, floor, strict=True):
        t["p_holm"] = p_adj
        t["min_p_holm"] = p_floor
        t["significant"] = p_adj is not None and p_adj < alpha


def family_words(rows: Mapping[str, SignatureTest], alpha: float = 0.05) -> list[str]:
    """The words the tests support (WORDS): "commits early" (Imm significantly above the other families),
    "verifies" (Thnk above), "over-searches" (Read after the gold above), "under-engages" (no read at all
    above); "balanced" where none holds, no signature differs at all, and the design could have shown a
    difference on every worded one (its smallest attainable Holm-adjusted p is below α). Otherwise no word."""
    words = [word for word, (sig, sign) in WORDS.items() if _significant_in_direction(rows[sig], sign)]
    if words:
        return words
    powered = all(_could_be_significant(rows[sig], alpha) for sig, _ in WORDS.values())
    if powered and not any(r["significant"] for r in rows.values()):
        return [BALANCED]
    return []


def _significant_in_direction(test: SignatureTest, sign: int) -> bool:
    """A significant test whose effect has the sign a word needs (+1: the family above the others)."""
    return bool(test["significant"]) and test["effect"] is not None and test["effect"] * sign > 0


def _could_be_significant(test: SignatureTest, alpha: float) -> bool:
    """Whether the design could show a difference: its smallest attainable Holm-adjusted p is below α."""
    return test["min_p_holm"] is not None and test["min_p_holm"] < alpha


def family_trigrams(
    trigram_trajectories: Mapping[str, Mapping[tuple[str, ...], int]], n_trajectories: Mapping[str, int], top: int = 3
) -> dict[str, list[FamilyTrigram]]:
    """Per family, its `top` trigrams by the share of its trajectories that contain them (ties by name), each with
    that share and the mean share of the other families' trajectories containing it (the paper: Anthropic
    ls→ls→rs on ~40 % of trajectories vs a 10.7 % mean over the other families)."""
    out: dict[str, list[FamilyTrigram]] = {}
    for fam, counts in trigram_trajectories.items():
        n = n_trajectories[fam]
        others = [f for f in trigram_trajectories if f != fam and n_trajectories[f]]
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:top]
        out[fam] = [
            FamilyTrigram(
                trigram=list(gram),
                trajectories=c,
                n=n,
                share=c / n if n else None,
                others_mean_share=(
                    float(np.mean([trigram_trajectories[f].get(gram, 0) / n_trajectories[f] for f in others]))
                    if others
                    else None
                ),
            )
            for gram, c in ranked
        ]
    return out


def trigram_tests(
    family_top: Mapping[str, Sequence[FamilyTrigram]],
    run_grams: Mapping[str, tuple[Mapping[tuple[str, ...], int], int]],
    family_of: Mapping[str, str | None],
    alpha: float = 0.05,
    seed: int = 0,
) -> dict[str, TrigramTest]:
    """Per family, its top trigram (`family_top`'s first) tested over runs: each run's share of trajectories
    containing it (`run_grams`: run → (trajectories per trigram, trajectories)), the family's runs against the
    other families' by `permutation_test`, Holm-adjusted across the families (the paper: Anthropic ls→ls→rs on
    ~40 % of trajectories vs a 10.7 % mean over the others)."""
    runs = [r for r in run_grams if run_grams[r][1]]
    out: dict[str, TrigramTest] = {}
    for fam, tops in sorted(family_top.items()):
        if not tops:
            continue
        gram = tuple(tops[0]["trigram"])
        values = [run_grams[r][0].get(gram, 0) / run_grams[r][1] for r in runs]
        test = permutation_test(values, [family_of.get(r) == fam for r in runs], seed)
        out[fam] = TrigramTest(trigram=list(gram), **test)
    adjusted = holm([t["p"] for t in out.values()])
    for t, p_adj in zip(out.values(), adjusted, strict=True):
        t["p_holm"] = p_adj
        t["significant"] = p_adj is not None and p_adj < alpha
    return out
