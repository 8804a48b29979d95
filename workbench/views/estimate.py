"""What a run would do and cost, in words: the launch form's cost line and `--dry-run`'s text (the numbers are
`workbench.service.estimate`'s)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.views.cells import counted

if TYPE_CHECKING:
    from workbench.service.records.estimate import EpisodeEstimate, Estimate


def cost_line(ep: EpisodeEstimate, episodes: int, upper_bound: bool = False) -> str:
    """One line for a launch form from `per_episode`'s estimate: "≈ 60 episodes × ~90,000 tokens ≈ $3.20 (gpt-4.1
    prices)"; with `upper_bound` (the slice is not counted yet, or a resumed run skips what is done) "at most 60
    episodes … ≤ $3.20"."""
    where = f"{ep.price.prefixes[0]} prices" if ep.price else "unpriced: no price for this model"
    about, up_to = ("at most", "≤") if upper_bound else ("≈", "≈")
    total = "" if ep.usd is None else f" {up_to} ${ep.usd * episodes:,.2f}"
    return f"{about} {counted(episodes, 'episode')} × ~{ep.tokens:,} tokens{total} ({where}; {ep.basis})"


def item_list(ids: list[str], shown: int = 12) -> str:
    """The item ids, the first `shown` of them when there are many."""
    if len(ids) <= shown:
        return ", ".join(ids)
    return f"{', '.join(ids[:shown])}, … ({len(ids) - shown} more)"


def dry_run_text(est: Estimate, item_ids: list[str], llm: bool) -> str:
    """`--dry-run`'s lines: the episodes, the items, the caps and the expected spend."""
    caps = est["caps"]
    planned = est["items"] * est["replicates"]
    done, episodes = est["already_done"], est["episodes"]
    to_play = (
        f"{planned} episodes"
        if not done
        else f"{planned} episodes, {done} already done in the stored run: {episodes} to play"
    )
    if not llm:
        spend = f"estimate: no tokens, no cost ({est['basis']})"
    else:
        usd = est["cost_usd"]
        cost_text = "unpriced (no price for this model)" if usd is None else f"≈ ${usd:,.2f}"
        extra = est["extra_tools_tokens_per_call"]
        within = f"; the extra tools add ~{extra:,} prompt tokens per call" if extra else ""
        spend = f"estimate: ~{est['tokens_per_episode']:,} tokens per episode ({est['basis']}{within}) → {cost_text}"
    return (
        f"dry run '{est['run']}': {est['items']} items × {est['replicates']} replicate(s) = {to_play}\n"
        f"items: {item_list(item_ids)}\n"
        f"caps: {caps['budget']} points, {caps['max_turns']} turns, {caps['max_tokens_total']:,} tokens; "
        f"ablation {est['ablation']}\n{spend}\n"
    )
