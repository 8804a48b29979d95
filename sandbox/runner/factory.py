"""The agent of each attempt: `AgentFactory`, and the one a run gets when its caller supplies none (scripted agents
from the registry, the LLM agent imported only when asked for)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sandbox.agents.base import Agent
from sandbox.agents.human import is_human
from sandbox.agents.registry import SCRIPTED, make_scripted
from sandbox.records import Item
from sandbox.runner.spec import RunSpec

AgentFactory = Callable[[Item, int, int], Agent | Awaitable[Agent]]
"""Builds the agent of one (item, replicate, attempt). It may be async: a human agent is ready when the person is
(after looking at the previous item's answer), so the episode, and its clock, start only then."""


def default_factory(spec: RunSpec) -> AgentFactory:
    """Scripted agents from the registry; the LLM agent is imported only when asked for."""
    caps = spec.effective_caps()
    if spec.agent in SCRIPTED:
        distractible = float(spec.agent_options.get("distractible", 0.0))
        return lambda item, replicate, attempt: make_scripted(
            spec.agent, item, caps, spec.seed, replicate, attempt, distractible=distractible
        )
    if spec.agent == "llm":
        from sandbox.agents.llm import llm_factory

        return llm_factory(spec)
    if is_human(spec.agent):
        raise ValueError(f"'{spec.agent}' is a person: humans play in the TUI's play screen, which supplies the agent")
    raise ValueError(f"unknown agent '{spec.agent}'")
