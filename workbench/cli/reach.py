"""The commands that reach beyond one process: `serve-mcp` (any MCP client) and `merge` (stores of other hosts)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from storage.rows import RunRow
from workbench.cli.context import _remove_store, _run_corpus, open_data, until_signal
from workbench.cli.errors import ExitCode, UsageError
from workbench.cli.run import _item_ids


def cmd_serve_mcp(args: argparse.Namespace) -> int:
    """Serve the run to MCP clients until the client leaves (stdio) or a signal (http); resumable like any run."""
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        raise UsageError(
            "serve-mcp needs the MCP SDK, an optional extra: pip install 'agenthop-workbench[mcp]' (or pip install mcp)"
        )
    token = _bearer_token(args)  # a reachable server without a token is refused before anything is opened
    from sandbox.records import Caps
    from workbench.service import paths
    from workbench.service.datasets import dataset_key
    from workbench.service.execution import select_items
    from workbench.service.mcp_session import session_spec
    from workbench.service.stores import open_store, run_lock

    corpus = open_data(args.data, getattr(args, "quiet", False))
    base = session_spec(
        args.run_name,
        dataset_key(args.data),
        Caps(budget=args.budget, max_turns=args.max_turns, max_tokens_total=args.max_tokens_total),
        args.replicates,
        _item_ids(args.ids),
        args.question_type,
        args.depth,
        args.limit,
        prompts=_prompts(args.prompts),
    )
    select_items(corpus, base)  # a slice that selects nothing is refused before anything is served
    sock = _listen(args.host, args.port) if args.transport == "http" else None
    store = open_store(paths.new_store_path(args.db))
    from workbench.mcp.server import McpSession, serve_http, serve_stdio

    with run_lock(store.path, args.run_name):  # a second server on the run is refused here
        if sock is None:
            sys.stderr.write(f"serving run '{args.run_name}' over stdio\n")
            asyncio.run(until_signal(serve_stdio(McpSession(base, corpus, store))))
            return ExitCode.OK
        received = asyncio.run(serve_http(McpSession(base, corpus, store, token_env=args.token_env), sock, token))
    if received:
        sys.stderr.write("stopped: finished trajectories are stored; serve the same run again to resume\n")
        return 128 + received
    return ExitCode.OK


def _bearer_token(args: argparse.Namespace) -> str | None:
    """The token HTTP requests must carry (None: none asked); AccessRefused (exit 2) for a host other machines
    reach without one (`workbench.mcp.auth`)."""
    import os

    from workbench.mcp.auth import bearer_token

    if args.transport != "http":
        if args.token_env is not None:
            raise UsageError("--token-env guards --transport http; stdio is reached by the client that starts it")
        return None
    return bearer_token(args.host, args.token_env, os.environ)


def _prompts(path: str | None):
    """The --prompts file's set (None: ours), checked before anything is served."""
    from workbench.service.prompts import load

    return load(path) if path else None


def _listen(host: str, port: int):
    """A bound, listening socket (before the store is touched: a port in use is a usage error)."""
    import socket

    if not 0 <= port <= 65535:
        raise UsageError(f"--port must be 0 to 65535, got {port}")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        family = infos[0][0]
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock


def cmd_merge(args: argparse.Namespace) -> int:
    """Copy runs from other stores into this one (shards of a run become one run); all or nothing."""
    from workbench.cli.render.runs import print_merge
    from workbench.service import paths
    from workbench.service.errors import StoreError
    from workbench.service.stores import merge, open_store

    names = _merge_names(args.runs)
    missing = [s for s in args.sources if not Path(s).is_file()]
    if missing:
        raise UsageError(f"no store at {', '.join(missing)}")
    sources = [open_store(Path(s), readonly=True) for s in args.sources]  # an older store is migrated first
    path = paths.store_path(args.db)
    created = not path.exists()
    dest = open_store(path)
    try:
        merged = merge(dest, sources, names, include_partial=args.include_partial, item_order=_item_order)
    except StoreError:
        dest.close()
        if created:  # refused: leave no trace of a store this command made
            _remove_store(path)
        raise
    print_merge([m.as_dict() for m in merged], str(path), args.format)
    return ExitCode.OK


def _merge_names(runs: str | None) -> list[str] | None:
    """The runs `--runs a,b` names (None: all of them); an empty list is a mistake."""
    if runs is None:
        return None
    names = [n.strip() for n in runs.split(",") if n.strip()]
    if not names:
        raise UsageError("--runs is empty: name the runs (comma-separated), or leave --runs out to merge them all")
    return names


def _item_order(run: RunRow) -> dict[str, int] | None:
    """Each item's position in the run's dataset, so merged trajectories are stored in a single host's order
    (None when the dataset cannot be opened here: item ids order them then)."""
    corpus, _ = _run_corpus(run)
    if corpus is None or corpus.fingerprint != run["dataset_fingerprint"]:
        return None
    return {item.id: i for i, item in enumerate(corpus.items)}
