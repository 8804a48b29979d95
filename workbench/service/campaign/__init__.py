"""Campaigns: a panel's runs (each model's ablations and replicates) and its studies (sweeps, parallel studies) as
one TOML file, executed as ordinary runs in the store, on their endpoints' lanes at once, resumable.

One module per concern: `file` (the file read into typed records, every problem at its line and key), `example`
(the commented file `campaign init` writes), `plan` (the runs it makes, through `launch.run_spec` and
`scaling.plan_study`), `status` (how far each run is), `execute` (the lanes), `tracker` (the running totals a
progress display shows), `tables` (the panel and the studies' tables at the end).
"""

from __future__ import annotations

from workbench.service.campaign.example import EXAMPLE
from workbench.service.campaign.execute import CampaignOutcome, Outcome, execute_campaign
from workbench.service.campaign.file import CampaignFile, CampaignFileError, ModelEntry, load_campaign
from workbench.service.campaign.plan import (
    CampaignPlan,
    PlannedRun,
    check_against_store,
    check_models,
    plan_campaign,
    store_shard,
)
from workbench.service.campaign.status import RunState, campaign_status, planned_pairs
from workbench.service.campaign.tables import CampaignTables, campaign_tables
from workbench.service.campaign.tracker import CampaignTracker

__all__ = [
    "EXAMPLE",
    "CampaignFile",
    "CampaignFileError",
    "CampaignOutcome",
    "CampaignPlan",
    "CampaignTables",
    "CampaignTracker",
    "ModelEntry",
    "Outcome",
    "PlannedRun",
    "RunState",
    "campaign_status",
    "campaign_tables",
    "check_against_store",
    "check_models",
    "execute_campaign",
    "load_campaign",
    "plan_campaign",
    "planned_pairs",
    "store_shard",
]
