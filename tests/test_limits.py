"""The run's per-provider limits (sandbox.agents.limits): calls in flight and call starts per minute."""

from __future__ import annotations

import asyncio

from sandbox.agents.limits import RateLimiter


async def _in_flight(limiter: RateLimiter, calls: int) -> int:
    """The most calls inside their slot at once, each holding it over a few passes of the event loop."""
    inside, most = 0, 0

    async def call() -> None:
        nonlocal inside, most
        async with limiter.slot():
            inside += 1
            most = max(most, inside)
            for _ in range(3):
                await asyncio.sleep(0)
            inside -= 1

    await asyncio.gather(*(call() for _ in range(calls)))
    return most


async def test_a_concurrency_limit_holds_calls_in_flight_to_it():
    assert await _in_flight(RateLimiter(concurrency=2), 7) == 2


async def test_without_limits_every_call_goes_at_once():
    assert await _in_flight(RateLimiter(), 7) == 7


async def test_a_requests_per_minute_limit_spaces_the_starts():
    now, slept = [100.0], []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    limiter = RateLimiter(rpm=60, clock=lambda: now[0], sleep=sleep)  # one start a second
    for _ in range(3):
        async with limiter.slot():
            pass
    assert slept == [1.0, 2.0]  # the second start waits a second, the third two (the clock did not move)
