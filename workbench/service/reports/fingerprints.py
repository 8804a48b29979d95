"""The panel's fingerprints (AgentHop §4.2): each run's tool-call signature, each family's, the family-vs-rest
permutation tests over models with Holm across signatures, the words they support, and the top trigrams per family.

Part of `panel_report` (one call, so the CLI's `report --panel` and the TUI's Panel screen show the same numbers).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, TypedDict, final

from stats import fingerprints as fp
from stats import ngrams
from stats.axes import Table
from stats.fingerprints import SignatureValue
from workbench.service.records.panel import PanelRow

LEGEND = {
    "fingerprints": "Fingerprints (paper §4.2, Table 9): per run (a model) over its own final trajectories, all "
    "replicates, out-of-domain calls (tools outside the protocol, the general-agent setting) dropped first so "
    "every share is over the protocol's own calls: calls/turn = tool calls ÷ turns with a call; think / read / "
    "nav share = think, read_section and navigation calls ÷ all protocol calls; early commit / verify / "
    "over-search = Table 9's Imm / Thnk / Read over the trajectories that read every gold (ST after the gold, "
    "MT-both after both; the residual kept in the denominator): Imm = submit right after the read that reached the "
    "golds (ST: the gold read; MT: the second gold's), Thnk = only thinking between it and the submit, Read = "
    "reading on after it (a later re-read of a gold section included); under-engagement = "
    "trajectories with no delivered read at all ÷ all (RQ4); searches = search_papers calls per trajectory "
    "(descriptive). Full-tool runs with a family only (an ablation's tools are cut by construction). A "
    "family's value is the mean of its runs; its effect is that minus the mean of the other families' runs, "
    "with a two-sided permutation p over runs (exact where there are at most 20,000 relabellings), "
    "Holm-adjusted across every family's tests together (families × signatures).",
    "fingerprint_words": "Words only where the tests support them (Holm p < 0.05, the effect's sign): commits early "
    "(Imm above the others), verifies (Thnk above), over-searches (Read after the gold above), under-engages "
    "(no read above); balanced where none of the signatures differs and the design could have shown it (the "
    "smallest attainable Holm p of each worded signature is below 0.05); otherwise no word. Never from a "
    "family's name.",
    "family_trigrams": "Top trigrams per family: the share of the family's trajectories containing the trigram, "
    "beside the mean share over the other families (the paper's Table 14 per family).",
    "trigram_tests": "Family-trigram tests (§4.2, App. E.2): for each family's top trigram, each run's share of "
    "trajectories containing it; the family's mean minus the other families' runs' mean, two-sided "
    "permutation p over runs, Holm-adjusted across the families.",
}


@final
class Excluded(TypedDict):
    """A run left out of the fingerprints, and why (an ablation, no family)."""

    excluded: str


@final
class RunFingerprint(TypedDict):
    """A run's signature (`stats.fingerprints.model_signature`), its trigrams' trajectory counts and how many
    trajectories it has."""

    signature: dict[str, SignatureValue]
    trigrams: Counter
    n: int


def run_fingerprint(row: PanelRow, table: Table, actions: list[Any]) -> RunFingerprint | Excluded:
    """One run's signature and trigram counts (its own final trajectories), or the reason it is left out."""
    if row["ablation"] != "full":
        return {"excluded": f"ablation {row['ablation']}"}
    if not row["family"]:
        return {"excluded": "no family (tag it: runs tag NAME --family F)"}
    trajectories = [
        {"actions": acts or [], "tool_calls": calls, "turns_with_calls": turns, "kind": kind, "n_gold": gold}
        for acts, calls, turns, kind, gold in zip(
            actions, table["tool_calls"], table["turns_with_calls"], table["kind"], table["n_gold"], strict=True
        )
    ]
    names = [[a[0] for a in t["actions"]] for t in trajectories]
    return {
        "signature": fp.model_signature(trajectories),
        "trigrams": ngrams.ngram_counts(names, 3)["trajectories"],
        "n": len(trajectories),
    }


def panel_fingerprints(rows: list[PanelRow], per_run: list[RunFingerprint | Excluded]) -> dict[str, Any]:
    """{"models": run → signature, "families": family → tests and words, "trigrams": family → top trigrams,
    "trigram_tests": family → its top trigram's test over runs, "excluded": runs left out and why}, from each
    run's `run_fingerprint`."""
    per_model: dict[str, dict[str, SignatureValue]] = {}
    family_of: dict[str, str | None] = {}
    grams: dict[str, Counter] = {}
    run_grams: dict[str, tuple[Counter, int]] = {}
    n_traj: Counter = Counter()
    excluded = {}
    for row, one in zip(rows, per_run, strict=True):
        if "excluded" in one:
            excluded[row["run"]] = one["excluded"]
            continue
        family = row["family"] or ""  # run_fingerprint excludes a run without a family
        per_model[row["run"]] = one["signature"]
        family_of[row["run"]] = family
        grams.setdefault(family, Counter()).update(one["trigrams"])
        n_traj[family] += one["n"]
        run_grams[row["run"]] = (one["trigrams"], one["n"])
    trigrams = fp.family_trigrams(grams, n_traj)
    return {
        "signatures": list(fp.SIGNATURES),
        "models": per_model,
        "family_of": family_of,
        # every family's mean; its tests against the others need a second family (p None without one)
        "families": fp.family_tests(per_model, family_of),
        "trigrams": trigrams,
        "trigram_tests": fp.trigram_tests(trigrams, run_grams, family_of),
        "excluded": excluded,
    }
