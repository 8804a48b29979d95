"""What each further table and figure of the panel holds and how it is computed, in words: the panel report's
legend carries these beside its own (`panel.PANEL_LEGEND`) and the fingerprints' (`fingerprints.LEGEND`)."""

from __future__ import annotations

LEGEND = {
    "table11": "Table 11 (evidence contact), pooled over the full-tool runs on one dataset: each recall-credited "
    "trajectory (paper recall = 1) by what it read — header: a section a direct label of a gold paper "
    "resolves to by its header (exact, normalised, substring, word overlap); parent: else the section "
    "whose body holds a direct label's content (resolved by body text); none: no direct-labelled content "
    "— with each group's conversion and the same items' closed-book accuracy (the panel's closed-book "
    "runs on that dataset; — without one). Needs the dataset's labels: without the corpus it is left out.",
    "table19": "Table 19 (closed-book accuracy by stratum, per tier): the closed-book runs of each tier pooled, "
    "accuracy per the item's venue, its seed paper's year and the rank-based quartile among the items (Q1 lowest) "
    "of its citation count, the maximum over its gold papers (App. E: 'each sample takes the maximum over its "
    "gold papers'), read from the graph nodes where the release carries them (year, citationCount; the built-in "
    "benchmark carries both). Year and "
    "quartile need the dataset (opened from the corpus cache).",
    "table3": "Table 3 (action after a wrong-paper read: a read of any paper not gold for the item, seed and bridge "
    "included), the paper's overlapping categories: per wrong-paper read, "
    "up to and including the next read_section: Recover (that read is of a gold paper), Stay (of a "
    "non-gold paper), Think / Re-nav / Submit (a think, another navigation call, a submit before it); "
    "an event may count in several, each share is over all events (stats.panel_measures).",
    "table17": "Table 17 (run-to-run): per run with replicates, accuracy, section recall, conversion (P(correct | "
    "paper recall)) and mean tokens per replicate: mean, population SD, range; rank stability = "
    "Kendall's τ-b between the runs' values at each pair of replicates all of them have (preserved: τ = 1 "
    "for every pair).",
    "figure2": "Figure 2 (within-family generation gap): a cohort is a family's evaluated runs of one architecture "
    "(the paper: 'within the same architectural cohort' — dense with dense, MoE with MoE; a model string with an "
    "active-parameter suffix such as -a3b is MoE, any other dense; runs tagged with different families are different "
    "cohorts) whose model string names a generation right after the lineage's name (gemma-3-27b → 3, qwen3.5-27b → "
    "3.5; claude-opus-4-6 names none, and two sizes of one generation are no gap); every run of one generation "
    "against every run of the next in its cohort (Gemma 3 → 4, dense Qwen 3 → 3.5, the Qwen MoE lineage 3.5 → 3.6; a "
    "dense → MoE step is no generation step): Δ accuracy newer − older and the exact McNemar p on one basis "
    "(replicate 0, the items both answered), and the Table 2 axes that moved by 5 points or more. 'run' is the newer "
    "run (the CSV's run column), 'older' the other.",
    "table4": "Table 4: for each agent, model and seed with a closed-book, a no-search and a full run in the "
    "panel, the accuracies on the items all three answered (replicate 0) and each step's Δ with the exact McNemar p "
    "between adjacent settings.",
    "table9": "Table 9 (ST after the gold; MT-both after both golds): Imm / Thnk / Read over ours (the three "
    "categories) and over the paper's denominator (every trajectory that read its golds, the residual — "
    "navigation without a read, or no submit — kept in it, so the three sum to at most 100 %).",
    "table10": "Table 10: accuracy per type × depth cell with its Wilson 95 % half-width (clustered by item with "
    "replicates); Δ = st_d1 − mt_d2, the design's easiest and hardest cells fixed before looking (never picked "
    "from the data), with Fisher's exact two-sided p on those two cells' right / wrong counts (over replicate 0 "
    "when the run has replicates, so the test counts independent items: 'p_basis').",
    "table12": "Table 12: the evaluated runs ranked by MT conversion (top 6); each adjacent pair tested on the MT "
    "items both recalled — McNemar's exact test with one trajectory per item, the exact sign test on per-item "
    "conversions with replicates; 'separated' where p < 0.05 in the higher run's direction. Ranks are read only "
    "where a step separates.",
    "table13": "Table 13 (bigram Δ-accuracy, the paper's): per tool bigram present in at least half of the evaluated "
    "models (full-tool runs; never an ablation run, as α), its mean Δ-accuracy over the models where Δ is defined "
    "(accuracy with the bigram − without, each model's own trajectories), Sig. count = models where it is "
    "significant (Fisher's exact, Bonferroni over the 49 bigrams, p < 0.05) and models = those it occurs in.",
    "pairwise_accuracy": "Pairwise accuracy tests (ours, not the paper's Table 13): every pair of evaluated runs "
    "tested on accuracy over the common items (McNemar's exact test; the sign test on per-item accuracies with "
    "replicates), Holm-adjusted across all pairs; per run, Sig. > = runs it beats and Sig. < = runs that beat it at "
    "Holm p < 0.05, the unadjusted counts beside.",
    "table14": "Table 14 by tier: each evaluated run's top-1 trigram of tool calls (most occurrences over its own "
    "trajectories, as the fingerprints; ties by name) and its concentration = those occurrences ÷ all the run's "
    "trigram occurrences; per tier the mean concentration.",
    "table17_runs": "Table 17 across separately stored runs: runs of one model (agent, model, dataset and "
    "setting) stored apart, two or more: each run's accuracy, section recall, conversion and mean tokens over "
    "its trajectories on the common items (all replicates), their mean, population SD and range across the "
    "runs; rank stability = Kendall's τ-b between the models' values at their first, second, … run (by seed, "
    "then name).",
    "table15": "Table 15: NA = trajectories without a parseable answer letter ÷ all, split by what ended them "
    "(max_turns, budget, token_limit, error; 'answer' = a voluntary submit without a letter).",
    "early_submit": "Early submission (App. E.2): per run, accuracy of trajectories submitting within 3 actions of "
    "a wrong-paper read minus the other wrong-read trajectories (Fisher's exact); across the panel (the "
    "evaluated models: full-tool runs), the mean Δ over runs where both groups exist and in how many of them "
    "p < 0.05.",
    "item_total_summary": "Item-total discrimination (§4.4): the corrected item-total correlations of the common "
    "items summarised: median, quartiles, share > 0.2 and share ≤ 0 (items with a value).",
    "figure5": "Figure 5: one point per evaluated model (full-tool run), accuracy against paper recall (all "
    "items), by tier; the diagonal is accuracy = recall.",
    "figure4": "Figure 4: each common item by how many evaluated models (full-tool runs) answered it right "
    "(replicate 0), bucketed low / mid / high with the paper's cut points (0–6, 7–12, 13–19 of 19) scaled to "
    "the panel's size (a bucket a small panel cannot fill reads 'none'), by type × depth and by consensus tier.",
    "table9_mt_fail": "Table 9's MT-fail block ('mt_fail' of each table9 entry): 0-Gold / Prem / Explored / Stayed "
    "over the MT trajectories whose paper recall failed (they sum to 100 %; see stopping's mt_fail).",
}
