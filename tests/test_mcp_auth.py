"""`serve-mcp --transport http` reachable from other machines only with a bearer token (`workbench.mcp.auth`).

Real server processes on loopback addresses: the token checked on every request (401 otherwise), the SDK's
host-header check on for every loopback address, and a reachable address without a token refused before
anything listens."""

from __future__ import annotations

import importlib.util
import ipaddress
import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from storage import Store
from tests.cli_inprocess import batch
from tests.test_mcp_server import ROOT, play_heuristic, run_async, serve_args
from workbench.mcp.auth import is_loopback

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mcp") is None, reason="the mcp SDK is not installed")

TOKEN = "a-test-token-of-forty-characters-0123456"
VAR = "AGENTHOP_TEST_MCP_TOKEN"
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
ACCEPT = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def start(db: Path, *extra: str, env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str, str]:
    """A real server process; its URL and what it said on stderr before serving."""
    proc = subprocess.Popen(
        [sys.executable, *serve_args(db, "m", "--transport", "http", "--port", "0", "--limit", "2", *extra)],
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    said = []
    for line in proc.stderr:
        said.append(line)
        if line.startswith("serving run"):
            return proc, line.rsplit(" ", 1)[1].strip(), "".join(said)
    raise AssertionError(f"the server did not start (exit {proc.wait()}): {''.join(said)}")


def stop(proc: subprocess.Popen) -> str:
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    return err


@given(st.ip_addresses(v=4))
def test_the_whole_of_127_0_0_0_8_is_loopback_and_nothing_else(address):
    assert is_loopback(str(address)) == (str(address).split(".")[0] == "127")


@given(st.ip_addresses(v=6))
def test_of_ipv6_only_1_is_loopback(address):
    assert is_loopback(str(address)) == (address == ipaddress.IPv6Address("::1"))
    assert is_loopback(f"[{address}]") == is_loopback(str(address))


def test_names_other_than_localhost_count_as_reachable():
    assert is_loopback("localhost") and is_loopback("LOCALHOST")
    assert not any(is_loopback(h) for h in ("0.0.0.0", "::", "example.org", "my-laptop", "127.0.0.1.example.org"))


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.7", "my-laptop.local"])
def test_a_reachable_host_without_a_token_is_refused_before_it_listens(tmp_path, capsys, host):
    db = tmp_path / "s.db"
    done = batch(capsys, "serve-mcp", "--run", "m", "--db", str(db), "--transport", "http", "--host", host)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error: --host {host} is reachable from other machines") and "--token-env" in (
        done.stderr
    )
    assert not db.exists()  # the store is opened after the socket listens: neither happened


def test_a_token_variable_unset_or_too_short_is_refused(tmp_path, capsys, monkeypatch):
    db = tmp_path / "s.db"
    args = ("serve-mcp", "--run", "m", "--db", str(db), "--transport", "http", "--host", "0.0.0.0", "--token-env", VAR)
    monkeypatch.delenv(VAR, raising=False)
    unset = batch(capsys, *args)
    assert unset.returncode == 2 and f"the environment variable {VAR} is not set or is empty" in unset.stderr
    monkeypatch.setenv(VAR, "short")
    short = batch(capsys, *args)
    assert short.returncode == 2 and "the token has 5 characters, fewer than 16" in short.stderr
    assert "short" not in short.stderr.replace("the token has", "")  # the token is never printed
    stdio = batch(capsys, "serve-mcp", "--run", "m", "--db", str(db), "--token-env", VAR)
    assert stdio.returncode == 2 and "--token-env guards --transport http" in stdio.stderr
    assert not db.exists()


def test_every_request_needs_the_token_and_only_the_variable_s_name_is_recorded(tmp_path):
    """The token asked for explicitly on loopback (a reachable host needs the same flag)."""
    db = tmp_path / "s.db"
    proc, url, said = start(db, "--token-env", VAR, env={VAR: TOKEN})
    try:
        assert f"every request needs the bearer token from ${VAR}" in said
        for headers in (
            {},
            {"authorization": "Bearer wrong-token-of-forty-characters-01234567"},
            {"authorization": TOKEN},
        ):
            refused = httpx.post(url, json=INIT, headers={**ACCEPT, **headers}, timeout=30)
            assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        assert httpx.get(url, timeout=30).status_code == 401

        async def session():
            import httpx2
            import mcp_types as types
            from mcp import Client
            from mcp.client.streamable_http import streamable_http_client

            authed = httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}, timeout=60)
            transport = streamable_http_client(url, http_client=authed)
            async with Client(transport, client_info=types.Implementation(name="heuristic", version="1")) as c:
                return await play_heuristic(c)

        assert run_async(session()) == 2
    finally:
        err = stop(proc)
    assert TOKEN not in said + err
    run = Store(db, readonly=True).run("m")
    assert run["config"]["token_envs"] == [VAR] and run["status"] == "done"
    for path in db.parent.iterdir():  # the store, its WAL and its locks: the token is in none of them
        assert not path.is_file() or TOKEN.encode() not in path.read_bytes(), path


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2"])
def test_the_host_header_check_stays_on_for_loopback(tmp_path, host):
    """A DNS rebinding reaches a loopback server under a foreign Host header: refused (421) on 127.0.0.2 too,
    which the SDK does not guard by itself."""
    proc, url, _ = start(tmp_path / "s.db", "--host", host)
    try:
        assert url.startswith(f"http://{host}:")
        rebound = httpx.post(url, json=INIT, headers={**ACCEPT, "host": "attacker.example"}, timeout=30)
        assert rebound.status_code == 421
        foreign = httpx.post(url, json=INIT, headers={**ACCEPT, "origin": "http://attacker.example"}, timeout=30)
        assert foreign.status_code == 403
        assert httpx.post(url, json=INIT, headers=ACCEPT, timeout=30).status_code == 200
    finally:
        stop(proc)
