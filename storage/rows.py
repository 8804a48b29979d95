"""The store's rows as typed records, column by column.

A column added by a later migration is present on every row (NULL on rows written before it), so every key is
required. JSON columns come back decoded: a run's `caps`, `config` and `identity` are objects whose keys the store
does not fix (each launch path writes its own).
"""

from __future__ import annotations

from typing import TypedDict

from storage.json_types import JsonObject


class RunRow(TypedDict):
    """A run as stored (`runs`), its JSON columns decoded."""

    id: int
    name: str
    kind: str
    agent: str
    model: str | None
    dataset: str
    dataset_fingerprint: str
    ablation: str
    seed: int
    replicates: int
    caps: JsonObject
    config: JsonObject
    identity: JsonObject
    version: str
    prompt_hash: str | None
    status: str
    planned: int
    created_at: str
    started_at: str | None
    finished_at: str | None
    group_name: str | None
    note: str | None
    label_resolution: str | None
    hop_rule: str | None
    prompts_text: str | None
    family: str | None
    tier: str | None
    dataset_repo: str | None
    dataset_revision: str | None
