"""Building an agent for one (item, replicate) from a run's agent spec, with a seed that depends on both."""

from __future__ import annotations

import random
from typing import Any

from sandbox.agents.heuristic import HeuristicAgent
from sandbox.agents.oracle import OracleAgent
from sandbox.agents.random_agent import RandomAgent
from sandbox.records import Caps, Item

SCRIPTED = ("oracle", "random", "heuristic")


def measures_tokens(agent: str | None, identity: Any = None) -> bool:
    """Whether a run's token counts are measurements: a scripted agent calls no model, so its 0 tokens mean "not
    measured" unless the run estimated usage (characters / 4); an MCP client's tokens are never measured. Light
    (no statistics): the reports and every view that shows a run's TOKENS ask this one function."""
    from sandbox.agents.external import is_mcp

    if is_mcp(agent):  # an MCP client's model is out of the workbench's sight: never measured
        return False
    estimated = isinstance(identity, dict) and bool(identity.get("estimate_tokens"))
    return agent not in SCRIPTED or estimated


def episode_rng(seed: int, item_id: str, replicate: int, attempt: int = 0) -> random.Random:
    """A generator that differs per run seed, item and replicate, and is the same on every machine."""
    return random.Random(f"{seed}:{item_id}:{replicate}:{attempt}")


def make_scripted(
    kind: str, item: Item, caps: Caps, seed: int, replicate: int, attempt: int = 0, distractible: float = 0.0
) -> Any:
    """A scripted agent for one (item, replicate, attempt). `distractible` is the heuristic's out-of-domain call
    probability (the general-agent setting), drawn from a generator of its own."""
    rng = episode_rng(seed, item.id, replicate, attempt)
    if kind == "oracle":
        return OracleAgent(item)
    if kind == "random":
        return RandomAgent(item, rng, budget=caps.budget)
    if kind == "heuristic":
        return HeuristicAgent(
            item,
            rng,
            budget=caps.budget,
            distractible=distractible,
            distraction_rng=episode_rng(seed, f"{item.id}#distraction", replicate, attempt),
        )
    raise ValueError(f"unknown agent '{kind}' (expected one of {', '.join(SCRIPTED)} or llm)")
