"""Every screen's first open, over a store the size of the paper's study (the target: < 0.5 s each).

    python bench/screens.py [--store PATH] [--runs 19] [--items 1011] [--replicates 3] [--rounds 1]

Without --store a store is generated as bench/panel.py does (19 runs × 1,011 items × 3); with --store the file
is copied first, never modified. The real app runs headless (Textual's `run_test`). Each screen is opened from
the runs screen, in a fresh app, so each open is a first one (its modules imported then, as a user's first
press would). For each it prints three times: until the screen is on top of the stack, until its first refresh is done
("shown": what the user sees first), and until what a
thread worker computes for it has arrived ("ready": the Panel screen's report over the runs, the Scaling
screen's first source; the same as shown for screens with nothing to compute), and the longest freeze of the
event loop meanwhile. The Panel screen is opened over every run (57,627 trajectories). Prints numbers; asserts
nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from pathlib import Path

from textual.css.query import QueryError
from textual.widgets import DataTable

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from tui import Heartbeat, until  # noqa: E402 — the bench directory is put on the path just above


def opener(name: str):
    """(how to open the screen from the app, the screen's class name, whether it is ready)."""

    def loading(app) -> bool:
        screen = app.screen
        for widget in screen.query("*"):
            if getattr(widget, "loading", False):
                return True
        try:
            return bool(screen.query_one("#panel-loading").display)
        except QueryError:  # this screen has no loading panel
            return False

    def table_filled(selector: str):
        def ready(app) -> bool:
            try:
                return app.screen.query_one(selector, DataTable).row_count > 0
            except QueryError:  # the screen is not (yet) the one with this table
                return False

        return ready

    names = [f"run{r:02d}" for r in range(19)]
    return {
        "run (trajectories tab)": (lambda app: app.open_run("run00"), "RunScreen", table_filled("#trajectory-table")),
        "compare": (lambda app: app.compare_runs("run00", "run18"), "CompareScreen", lambda app: not loading(app)),
        "panel (19 runs)": (lambda app: app.open_panel(names), "PanelScreen", lambda app: not loading(app)),
        "scaling": (lambda app: app.action_scaling(), "ScalingScreen", lambda app: not loading(app)),
        "items": (lambda app: app.action_items(), "ItemsScreen", lambda app: not loading(app)),
        "leaderboard": (lambda app: app.action_leaderboard(), "LeaderboardScreen", lambda app: not loading(app)),
        "launch form": (lambda app: app.action_new_run(), "LaunchScreen", lambda app: True),
        "play setup": (lambda app: app.action_play(), "PlaySetupScreen", lambda app: True),
        "help": (lambda app: app.action_help(), "HelpScreen", lambda app: True),
    }[name]


SCREENS = (
    "run (trajectories tab)",
    "compare",
    "panel (19 runs)",
    "scaling",
    "items",
    "leaderboard",
    "launch form",
    "play setup",
    "help",
)


async def one(store_path: Path, cache: Path, screen: str, size: tuple[int, int]) -> tuple[float, float, float, float]:
    from workbench.tui.app import WorkbenchApp

    open_, cls, ready = opener(screen)
    app = WorkbenchApp(store_path=store_path, cache_dir=cache, config_path=store_path.with_name("config.toml"))
    beat = Heartbeat()
    async with app.run_test(size=size) as pilot:
        beat.start()
        await until(
            lambda: (
                bool(app.screen.query("#runs-table")) and app.screen.query_one("#runs-table", DataTable).row_count > 0
            )
        )
        await pilot.pause()
        beat.reset()
        t = time.perf_counter()
        open_(app)
        await until(lambda: type(app.screen).__name__ == cls)
        on_top = time.perf_counter() - t
        painted = asyncio.Event()
        app.screen.call_after_refresh(painted.set)  # after the screen's first refresh: what the user sees
        await asyncio.wait_for(painted.wait(), 60)
        shown = time.perf_counter() - t
        await until(lambda: ready(app), timeout=120)
        return on_top, shown, time.perf_counter() - t, beat.worst()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", help="an existing store to copy (default: generate one)")
    ap.add_argument("--runs", type=int, default=19)
    ap.add_argument("--items", type=int, default=1011)
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--size", default="160x45", help="terminal size, WxH")
    ap.add_argument("--only", help="comma-separated screen names (default: all)")
    args = ap.parse_args()
    width, height = (int(x) for x in args.size.lower().split("x"))
    work = Path(tempfile.mkdtemp(prefix="agenthop-screens-bench-"))
    path = work / "store.sqlite"
    from panel import bench_store

    bench_store(path, args.store, args.runs, args.items, args.replicates)
    for screen in args.only.split(",") if args.only else SCREENS:
        on_top, shown, ready, frozen = asyncio.run(one(path, work / "cache", screen, (width, height)))
        print(
            f"  {screen:24s} on top after {on_top:6.3f} s   shown after {shown:6.3f} s"
            f"   ready after {ready:6.3f} s   longest freeze {frozen:6.3f} s",
            flush=True,
        )
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
