"""A campaign's progress in words, the same in the CLI's progress line and the TUI's campaign screen: runs done,
episodes, tokens, cost and the time left."""

from __future__ import annotations

from workbench.service.records.campaign import CampaignTotals
from workbench.views.cells import duration, usd


def token_count(n: int) -> str:
    """`950`, `12.3k`, `4.56M`."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.2f}M"
    if n >= 1_000:
        return f"{n / 1_000:.1f}k"
    return str(n)


def totals_line(name: str, totals: CampaignTotals) -> str:
    """`campaign 'panel': runs 3/9 · episodes 120/450 · tokens 1.20M · $0.42 · ETA 5m10s`."""
    cost = "—" if totals.cost is None else usd(totals.cost, 4)
    left = "done" if totals.episodes_done >= totals.episodes else f"ETA {duration(totals.eta_s)}"
    return (
        f"campaign '{name}': runs {totals.runs_done}/{totals.runs} · episodes {totals.episodes_done}/"
        f"{totals.episodes} · tokens {token_count(totals.tokens)} · cost {cost} · {left}"
    )
