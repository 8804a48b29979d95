"""Per-provider concurrency and requests-per-minute limits shared by every episode of a run."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext


class RateLimiter:
    """At most `concurrency` calls in flight and `rpm` call starts per minute (a token bucket, smooth)."""

    def __init__(
        self, concurrency: int | None = None, rpm: float | None = None, clock=time.monotonic, sleep=asyncio.sleep
    ):
        self.sem = asyncio.Semaphore(concurrency) if concurrency else None
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next_slot = 0.0
        self.clock = clock
        self.sleep = sleep
        self.lock = asyncio.Lock()

    async def _pace(self) -> None:
        if not self.interval:
            return
        async with self.lock:
            now = self.clock()
            wait = self.next_slot - now
            self.next_slot = max(now, self.next_slot) + self.interval
        if wait > 0:
            await self.sleep(wait)

    def slot(self) -> AbstractAsyncContextManager[None]:
        """Hold a call's place for as long as the call lasts; a limiter with neither limit has nothing to hold
        and hands out one shared empty context (no generator per call: a local server's runs call it at
        thousands of calls per second)."""
        if self.sem is None and not self.interval:
            return _NO_LIMIT
        return self._slot()

    @asynccontextmanager
    async def _slot(self) -> AsyncIterator[None]:
        if self.sem is None:
            await self._pace()
            yield
            return
        async with self.sem:
            await self._pace()
            yield


_NO_LIMIT: AbstractAsyncContextManager[None] = nullcontext()
