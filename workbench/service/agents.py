"""What a front end asks about agents, and the agents it hands over: the one door to `sandbox.agents`.

Which agents measure tokens, whether an agent string names a person, the reasoning efforts a provider takes,
whether a model can be reached as configured, loading the model client before a run, and the person's agent of a
play session. Every function imports the agent code it needs when called.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from storage.json_types import JsonValue


def llm_available() -> bool:
    """The LLM agent exists in this build (it is imported only when a run uses it)."""
    import importlib.util

    try:
        return importlib.util.find_spec("sandbox.agents.llm") is not None
    except (ImportError, ValueError):
        return False


def measures_tokens(agent: str | None, identity: Any = None) -> bool:
    """Whether a run's token counts are measurements (a scripted agent's or an MCP client's are not)."""
    from sandbox.agents.registry import measures_tokens as measured

    return measured(agent, identity)


def is_human(agent: str | None) -> bool:
    """Whether a run's agent is a person (`human:NAME`)."""
    from sandbox.agents.human import is_human as human

    return human(agent)


def reasoning_efforts() -> tuple[str, ...]:
    """The named reasoning efforts (a provider may take a number of thinking tokens besides)."""
    from sandbox.agents.providers import REASONING_EFFORTS

    return tuple(REASONING_EFFORTS)


def valid_effort(text: str) -> bool:
    from sandbox.agents.providers import valid_effort as valid

    return valid(text)


def check_model(model: str, agent_options: Mapping[str, JsonValue]) -> None:
    """The model can be reached as configured (a key, a local model installed) before a run is created; ConfigError
    or LocalModelUnavailable (`workbench.service.errors`) with the reason otherwise."""
    from sandbox.agents.llm import config_from_options
    from sandbox.agents.local_model import LOCAL_PREFIX, check_installed

    if model.startswith(LOCAL_PREFIX):
        check_installed(model[len(LOCAL_PREFIX) :])
    else:
        config_from_options({"model": model, **agent_options}).check()


def needs_litellm(spec: Any) -> bool:
    """Whether the run's model goes through litellm (the native client serves the providers it knows; a local model
    has its own server)."""
    from sandbox.agents.local_model import LOCAL_PREFIX, litellm_name
    from sandbox.agents.providers import native_provider

    model = spec.model or ""
    if spec.agent != "llm" or model.startswith(LOCAL_PREFIX):
        return False
    return spec.agent_options.get("client") == "litellm" or not native_provider(litellm_name(model))


def load_litellm() -> None:
    """Import litellm now (several seconds), so the first episodes do not."""
    from sandbox.agents.llm import litellm_module

    litellm_module()


def human_agent(player: str, on_turn: Callable[..., Any]) -> Any:
    """The agent of a person's play: each turn is the tool call the front end sends it."""
    from sandbox.agents.human import HumanAgent

    return HumanAgent(player, on_turn=on_turn)
