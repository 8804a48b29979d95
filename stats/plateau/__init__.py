"""The sequential-scaling plateau: up to which budget does more budget still significantly help?

Implements the plateau of docs/scaling.md "The plateau" (the paper's Appendix A procedure) with every edge case of
§2.4. In short, for budgets b_1 < … < b_K and items i = 1..n scored y_{i,k} in [0, 1]:

1. common support: keep the items scored at every budget (and say how many were dropped);
2. paired differences d_{i,k} = y_{i,k+1} − y_{i,k}, mean d̄_k;
3. a *joint* bootstrap over items (one index draw per replicate, shared by every transition),
   σ_k = SD of the replicate means with ddof = 1;
4. FPC = sqrt((N − n)/(N − 1)) when the population size N is given, else 1;
5. a one-sided lower bound C_k = d̄_k − z_{1−α/(K−1)} · σ_k · FPC (Bonferroni; Holm optional);
6. k* = max{k : C_k > 0} + 1 with a strict inequality; the plateau budget is b_{k*}.

Why these conventions: the paired design removes between-item difficulty from each transition; the
joint draw keeps the transitions' dependence so simultaneous statements and plots stay coherent;
the strict ">" is what makes an all-zero transition (σ = 0, C = 0) non-significant.

Decisions the spec leaves open, fixed here:

* Items are put in a canonical order (lexicographic on their scores) before resampling, so the
  result is *exactly* invariant to the order rows arrive in, not only in distribution.
* A transition is `borderline` when |C_k| < 3 × its Monte-Carlo SE. The MC SE of C_k comes from the
  SE of a bootstrap SD estimate, σ/sqrt(2(B − 1)), times z·FPC (d̄_k itself has no MC error).
* An exact one-sided sign test per transition (improvements vs worsenings) is reported beside the
  normal-theory bound, because the bound is anti-conservative with few discordant pairs (§2.7).
* With T replicates per item (an n×K×T array), each item is first averaged over its trials and the
  instances are resampled (cluster bootstrap). With `two_stage=True` trials are also resampled
  inside each drawn item and the FPC multiplies only the between-instance part of each replicate
  (§2.5), so N = n does not erase run-to-run variance.

`plateau` runs the test; `scores_from_mapping` and `scores_from_rows` read scores from elsewhere. Its modules:
`scores` (budget labels and the input shapes), `support` (sorting, merging and the common support), `replicates`
(the bootstrap), `decisions` (levels, step-down, k*), `records` (`Transition`, `PlateauResult`), `search` (the test).
"""

from stats.plateau.records import PlateauResult, Transition
from stats.plateau.scores import BudgetLabel, parse_budget, scores_from_mapping, scores_from_rows
from stats.plateau.search import CORRECTIONS, plateau

__all__ = [
    "CORRECTIONS",
    "BudgetLabel",
    "PlateauResult",
    "Transition",
    "parse_budget",
    "plateau",
    "scores_from_mapping",
    "scores_from_rows",
]
