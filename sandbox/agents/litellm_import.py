"""litellm imported once, offline (local cost map, no `.env` autoload, quiet): its own module because the
LLM agent and the provider rules (`providers`) both ask litellm, and the agent reads the provider rules, so
neither can hold the import without a cycle between the two."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import warnings
from typing import Any

# Coroutines litellm builds in a worker thread and hands back to be awaited: a call cancelled in between (a
# run-wide limit, Ctrl-C) leaves one unawaited, which is expected and harmless.
_ABANDONED = (
    r"coroutine '(OpenAIChatCompletion\.acompletion|AnthropicChatCompletion\.acompletion_function|"
    r"BaseLLMHTTPHandler\.async_completion|VertexLLM\.async_completion)' was never awaited"
)


@functools.cache
def litellm_module() -> Any:
    """Import litellm once (the cache holds it), offline: local model cost map, no .env autoload, quiet."""
    warnings.filterwarnings("ignore", message=_ABANDONED, category=RuntimeWarning)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    import litellm

    litellm.suppress_debug_info = True
    litellm.telemetry = False
    litellm.drop_params = False  # True makes the OpenAI route resend a request that got a 422; see providers
    litellm.num_retries = 0
    for name in (
        "LiteLLM",
        "LiteLLM Router",
        "LiteLLM Proxy",
    ):  # its per-call warnings ("priced at $0", its logging worker's event-loop notes) would flood stderr
        logging.getLogger(name).setLevel(logging.ERROR)
    return litellm


def loaded_litellm() -> Any:
    """litellm if a call of this process already imported it through `litellm_module`, else None (never imports
    it: a native run's failures are classified without it)."""
    return litellm_module() if litellm_module.cache_info().currsize else None


def without_litellm_logging():
    """Around a call: skip litellm's success-logging pipeline, which we never use.

    After every call litellm builds a logging payload, prices it again and runs its
    zero-cost diagnostics for callbacks we do not have: about a sixth of its CPU per call.
    It skips all of that for calls it marks internal. That mark is private to litellm, so
    it is used only where it exists; without it nothing changes but the speed.
    """
    try:
        from litellm._internal_context import internal_sub_call
    except ImportError:
        return contextlib.nullcontext()
    return internal_sub_call()
