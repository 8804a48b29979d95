"""The Live screen's refresh over 256 episodes in flight of a run another process executes (the target: < 100 ms
of the UI thread per refresh).

    python bench/live_refresh.py [--workers 256] [--latency 0.1] [--calls 8] [--seconds 10] [--size 140x50]

A `bench/llm_throughput.py` run (its own process, its model server another: `--workers` episodes in flight,
each making `--calls` calls of `--latency` seconds) writes a store; once its episodes are all in flight the real
app, headless (Textual's `run_test`), opens the Live screen on it through the store (`watch_stored_run`: what
`w` opens for a run this workbench did not launch) and watches it for `--seconds`. Every call of the screen's
`refresh_view` (the 10 Hz timer's: the poll of the store, the snapshot and the redraw) is timed on the UI thread,
and the longest freeze of the event loop is recorded (a heartbeat, as in bench/tui.py). Prints JSON; asserts
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tui import Heartbeat  # noqa: E402 — the bench directory is put on the path just above

ITEMS = 640  # the demo benchmark bench/client_overhead.py's 256x0.1 runs on (generated once, kept)


def in_flight(store_path: Path) -> int:
    """Episodes in flight in the store (0 while it cannot be read yet)."""
    from storage import Store, StoreError

    try:
        with Store(store_path, readonly=True) as store:
            return store.conn.execute("SELECT COUNT(*) FROM trajectories WHERE status = 'running'").fetchone()[0]
    except StoreError:
        return 0


async def watch(store_path: Path, seconds: float, size: tuple[int, int]) -> dict:
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.screens import live
    from workbench.tui.screens.live import watch_stored_run

    took: list[float] = []
    rows: list[int] = []
    refresh = live.LiveScreen.refresh_view

    def timed(screen: live.LiveScreen) -> None:
        t = time.perf_counter()
        refresh(screen)
        took.append(time.perf_counter() - t)
        rows.append(len(screen.shown))

    live.LiveScreen.refresh_view = timed  # type: ignore[method-assign,assignment]
    beat = Heartbeat()
    app = WorkbenchApp(
        store_path=store_path,
        cache_dir=store_path.with_name("cache"),
        config_path=store_path.with_name("config.toml"),
        state_path=store_path.with_name("state.toml"),
        home=False,
    )
    async with app.run_test(size=size) as pilot:
        await app.push_screen(watch_stored_run(store_path, "bench"))
        beat.start()
        await pilot.pause(1.0)  # the screen's first paint (its table's first rows) is not a refresh
        beat.reset()
        took.clear()
        end = time.perf_counter() + seconds
        gaps = []
        while time.perf_counter() < end:
            await pilot.pause(0.1)
            gaps.append(beat.worst())
            beat.reset()
        freeze = max(gaps)
        screen = app.screen
        assert isinstance(screen, live.LiveScreen)
        status = screen.monitor.snapshot().status
    took.sort()
    return {
        "refreshes": len(took),
        "median_ms": round(statistics.median(took) * 1000, 1),
        "p95_ms": round(took[int(len(took) * 0.95)] * 1000, 1),
        "max_ms": round(took[-1] * 1000, 1),
        "rows_shown_max": max(rows),
        "rows_shown_median": statistics.median(rows),
        "longest_freeze_ms": round(freeze * 1000, 1),
        "freezes_over_100ms": sum(gap > 0.1 for gap in gaps),
        "run_status_at_the_end": status,
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=256)
    ap.add_argument("--latency", type=float, default=0.1)
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--size", default="140x50")
    args = ap.parse_args()
    width, height = map(int, args.size.split("x"))
    store_path = Path(tempfile.mkdtemp(prefix="agenthop-live-bench-")) / "store.sqlite"
    # long enough that the run is still going when the watch ends: ~(episodes × calls × latency / workers) s
    replicates = max(1, math.ceil(args.workers * (args.seconds + 30) / (args.calls * args.latency) / ITEMS))
    flags = ["--workers", str(args.workers), "--latency", str(args.latency), "--calls", str(args.calls)]
    flags += ["--items", str(ITEMS), "--replicates", str(replicates), "--client", "native", "--store", str(store_path)]
    writer = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "llm_throughput.py"), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # the server it stops mid-run says so, call by call
        text=True,
    )
    try:
        deadline = time.monotonic() + 600
        while in_flight(store_path) < args.workers:
            assert writer.poll() is None and time.monotonic() < deadline, "the run never had its episodes in flight"
            time.sleep(0.05)
        report = asyncio.run(watch(store_path, args.seconds, (width, height)))
    finally:
        writer.terminate()
        writer.wait()
    print(json.dumps({"workers": args.workers, "latency_s": args.latency, "calls": args.calls, **report}, indent=1))


if __name__ == "__main__":
    main()
