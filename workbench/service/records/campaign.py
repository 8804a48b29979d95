"""A campaign's totals at one moment: what `workbench.service.campaign.CampaignTracker` counts and
`workbench.views.campaign` words (the CLI's progress line, the TUI's campaign screen)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CampaignTotals:
    """Runs and episodes finished of those planned, what this session spent (tokens; dollars, None while no call was
    priced) and the estimated seconds left (None: no rate yet)."""

    runs_done: int
    runs: int
    episodes_done: int
    episodes: int
    tokens: int
    cost: float | None
    eta_s: float | None
