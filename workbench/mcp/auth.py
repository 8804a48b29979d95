"""Who may reach `serve-mcp --transport http`: loopback only, or whoever holds the bearer token.

The endpoint plays episodes and writes trajectories into the store, so it is only as private as the
address it listens on. A loopback address (127.0.0.0/8, ::1, `localhost`) is reached from this
machine only; there the MCP SDK's host-header check stays on, so a web page whose name a DNS
rebinding points at 127.0.0.1 cannot drive it from a local browser. Any other address (`0.0.0.0`, a
LAN address, a host name) needs a bearer token: read from the environment variable `--token-env`
names (the variable's name is recorded with the run, never the token), compared in constant time
on every request, and any request without it is answered 401 before the MCP app sees it. Without
a token such a server is refused before it listens (docs/mcp.md, "Serving over HTTP").

The SDK is imported only by `host_header_guard`, so the command checks its flags without it.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the ASGI types of the server the SDK runs on (imported for the checker only, as the SDK is)
    from starlette.types import ASGIApp, Receive, Scope, Send

MIN_TOKEN_CHARS = 16  # `openssl rand -hex 32` gives 64; a short word is guessed


class AccessRefused(ValueError):
    """The server would be reachable without a usable token: it does not start (exit 2)."""

    exit_code = 2


def is_loopback(host: str) -> bool:
    """Whether `host` is reached from this machine only: `localhost`, 127.0.0.0/8 or ::1 (a literal address;
    any other name may resolve anywhere, and counts as reachable)."""
    text = host.strip()
    if text.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(text.strip("[]")).is_loopback
    except ValueError:
        return False


def bearer_token(host: str, token_env: str | None, environ: Mapping[str, str]) -> str | None:
    """The token every request must carry, or None when none is asked (loopback without `--token-env`).
    Raises AccessRefused when the server may not start: a reachable address without a token, or a variable
    that is unset, empty or too short to be a secret."""
    if token_env is None:
        if is_loopback(host):
            return None
        raise AccessRefused(
            f"--host {host} is reachable from other machines, and the server plays episodes into the store: "
            "it needs a bearer token (--token-env VAR, the token read from the environment variable VAR; "
            "clients send 'Authorization: Bearer <token>')"
        )
    token = environ.get(token_env, "")
    if not token.strip():
        raise AccessRefused(f"--token-env {token_env}: the environment variable {token_env} is not set or is empty")
    if len(token) < MIN_TOKEN_CHARS:
        raise AccessRefused(
            f"--token-env {token_env}: the token has {len(token)} characters, fewer than {MIN_TOKEN_CHARS} "
            "(make one with `openssl rand -hex 32`)"
        )
    return token


def host_header_guard(host: str) -> Any:
    """The SDK's DNS-rebinding protection for a loopback `host` (the SDK turns it on by itself only for
    127.0.0.1, localhost and ::1, not for 127.0.0.2); None elsewhere, where the SDK leaves it off and the
    bearer token guards."""
    if not is_loopback(host):
        return None
    from mcp.server.transport_security import TransportSecuritySettings

    name = f"[{host.strip('[]')}]" if ":" in host else host
    hosts = list(dict.fromkeys([name, "127.0.0.1", "localhost", "[::1]"]))
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{h}:*" for h in hosts],
        allowed_origins=[f"http://{h}:*" for h in hosts],
    )


UNAUTHORIZED = b'{"error": "unauthorized: send the header Authorization: Bearer <token>"}'


class BearerGate:
    """ASGI middleware: an HTTP request whose `Authorization` header is not `Bearer <token>` is answered 401 with
    `WWW-Authenticate: Bearer`; the app's lifespan passes through."""

    def __init__(self, app: ASGIApp, token: str):
        self.app = app
        self.expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        given = next((v for k, v in scope.get("headers") or [] if k.lower() == b"authorization"), b"")
        if scope["type"] == "http" and hmac.compare_digest(given, self.expected):
            await self.app(scope, receive, send)
            return
        await send(
            {
                "type": "http.response.start",
                "status": 401,
                "headers": [
                    (b"content-type", b"application/json"),
                    (b"www-authenticate", b'Bearer realm="agenthop-workbench"'),
                    (b"content-length", str(len(UNAUTHORIZED)).encode()),
                ],
            }
        )
        await send({"type": "http.response.body", "body": UNAUTHORIZED})
