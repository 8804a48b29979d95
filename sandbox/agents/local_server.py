"""The local model's llama.cpp server (xllamacpp) in a process of its own.

llama.cpp logs from native code straight to the process's file descriptors: the model load, then a timing block
per request ("prompt eval time = …"). In the workbench's process those lines landed in the user's terminal, in the
middle of a run's progress. Here the parent opens the log file as this process's stderr, and this process points
its stdout there too, keeping a duplicate of the original stdout (a pipe to the parent) for one line: the server's
address, once it listens.

    python -m sandbox.agents.local_server MODEL.gguf N_CTX [N_THREADS]

serves until its stdin closes (the parent exited, or stopped it).
"""

from __future__ import annotations

import os
import sys
from typing import TextIO


def report_channel() -> TextIO:
    """The pipe to the parent (the original stdout), after pointing stdout itself at the log (stderr): whatever the
    native library prints on stdout is logged, never read as the address."""
    sys.stdout.flush()
    channel = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    return channel


def start(model_path: str, n_ctx: int, threads: int | None = None):
    """The xllamacpp server for `model_path` on a free port of 127.0.0.1, one request at a time, computing on
    `threads` threads (llama.cpp's default takes every core; prompt and generation alike)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = model_path
    params.n_ctx = n_ctx
    if threads is not None:
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
    params.use_jinja = True
    params.port = 0
    params.hostnames = ["127.0.0.1"]
    params.n_parallel = 1
    return xllamacpp.Server(params)


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    model_path, n_ctx = args[:2]
    threads = int(args[2]) if len(args) > 2 else None
    channel = report_channel()
    server = start(model_path, int(n_ctx), threads)
    channel.write(server.listening_address.rstrip("/") + "\n")
    channel.close()
    sys.stdin.read()  # blocks until the parent closes the pipe (or dies); the server lives as long as this process
    return 0


if __name__ == "__main__":
    sys.exit(main())
