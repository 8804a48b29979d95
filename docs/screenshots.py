"""Write the documentation's screenshots (`docs/images/*.svg`) with the app itself: `python docs/screenshots.py`.

It makes a few runs of the built-in benchmark into a temporary store (offline, scripted agents, a few seconds), then
drives the real workbench headless with Textual's Pilot and saves each screen with Textual's own
`save_screenshot`: the runs list, a run in progress on the Live screen, the trajectory stepper, Compare, the Panel
and the Scaling screen's plateau. Nothing outside the temporary directory is read or written but the SVGs, so a
changed screen gets a new picture by running this one command.

    python docs/screenshots.py [--only runs,stepper,…] [--size 140x40]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
IMAGES = Path(__file__).resolve().parent / "images"
SHOTS = ("runs", "live", "stepper", "compare", "panel", "scaling")


def batch(*argv: str) -> None:
    """One `agenthop-tui --batch` command, in this process (its output is not wanted here)."""
    from contextlib import redirect_stdout
    from io import StringIO

    from workbench.cli import main

    with redirect_stdout(StringIO()):
        status = main(["--batch", *argv])
    if status != 0:
        raise SystemExit(f"--batch {' '.join(argv)} exited {status}")


def make_runs(db: Path, limit: int | None = None) -> None:
    """The runs the screenshots show: the heuristic navigator and two baselines on the built-in benchmark (tagged
    so the Panel groups them), and a sequential points sweep for the Scaling screen. `limit`: only the first items
    (for the test of this script)."""
    common = ("--db", str(db), "--quiet", *(("--limit", str(limit)) if limit else ()))
    for name, agent, seed in (("heuristic", "heuristic", 0), ("heuristic-s1", "heuristic", 1), ("random", "random", 0)):
        batch("run", "--run", name, "--agent", agent, "--seed", str(seed), "--replicates", "2", *common)
    for name, family in (("heuristic", "Navigator"), ("heuristic-s1", "Navigator"), ("random", "Baseline")):
        batch("runs", "--db", str(db), "tag", name, "--family", family, "--tier", "compute-efficient")
    batch("scale", "sequential", "--axis", "points", "--grid", "6,12,18,30", "--run", "budget", *common)


async def until(pilot, ready: Callable[[], bool], timeout: float = 60.0) -> None:
    """Let the app work until `ready()` (a screen loaded, a table filled), then one more refresh."""
    from textual.css.query import NoMatches

    def met() -> bool:
        try:
            return bool(ready())
        except NoMatches:  # the screen is still composing
            return False

    start = time.monotonic()
    while not met():
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"the screen was not ready within {timeout} s")
        await pilot.pause(0.05)
    await pilot.pause()


def _loading(app) -> bool:
    return any(getattr(w, "loading", False) for w in app.screen.query("*"))


def _is(app, cls: str) -> bool:
    return type(app.screen).__name__ == cls


async def shot_runs(app, pilot) -> None:
    await until(pilot, lambda: app.screen.query("#runs-table") and app.screen.query_one("#runs-table").row_count > 0)


async def shot_live(app, pilot) -> None:
    from sandbox.runner import RunSpec

    job = app.start_run(RunSpec(name="heuristic-live", dataset="builtin", agent="heuristic", replicates=40, workers=6))
    await until(pilot, lambda: _is(app, "LiveScreen") and job.monitor.snapshot().done >= 150)
    await pilot.press("enter")  # follow the episode under the cursor: its transcript below the meters
    await pilot.pause(0.5)


async def shot_stepper(app, pilot) -> None:
    app.open_run("heuristic")
    await until(pilot, lambda: _is(app, "RunScreen") and app.screen.query_one("#trajectory-table").row_count > 0)
    await pilot.press("enter")
    await until(pilot, lambda: _is(app, "StepperScreen"))
    for _ in range(4):
        await pilot.press("l")
    await pilot.pause(0.2)


async def shot_compare(app, pilot) -> None:
    app.compare_runs("heuristic", "random")
    await until(pilot, lambda: _is(app, "CompareScreen") and not _loading(app))


async def shot_panel(app, pilot) -> None:
    app.open_panel(["heuristic", "heuristic-s1", "random"])
    await until(pilot, lambda: _is(app, "PanelScreen") and not _loading(app) and not _panel_waiting(app))


def _panel_waiting(app) -> bool:
    return any(w.display for w in app.screen.query("#panel-loading"))


async def shot_scaling(app, pilot) -> None:
    app.action_scaling()
    await until(pilot, lambda: _is(app, "ScalingScreen") and not _loading(app))
    await pilot.pause(0.5)


SHOOT: dict[str, Callable[..., Awaitable[None]]] = {
    "runs": shot_runs,
    "live": shot_live,
    "stepper": shot_stepper,
    "compare": shot_compare,
    "panel": shot_panel,
    "scaling": shot_scaling,
}


async def shoot(name: str, work: Path, size: tuple[int, int], out: Path = IMAGES) -> Path:
    """One screenshot, in a fresh app over the temporary store, written to `out`."""
    from workbench.tui.app import WorkbenchApp

    app = WorkbenchApp(
        store_path=work / "runs.sqlite",
        cache_dir=work / "cache",
        config_path=work / "config.toml",
        state_path=work / "state.toml",
    )
    async with app.run_test(size=size) as pilot:
        await shot_runs(app, pilot)
        await SHOOT[name](app, pilot)
        path = Path(app.save_screenshot(f"{name}.svg", str(out)))
        for job in app.jobs.values():  # a run still in flight (the Live shot) is stopped before the app closes
            job.cancel()
            await until(pilot, lambda job=job: not job.active)
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", help=f"comma-separated, of: {', '.join(SHOTS)} (default: all)")
    ap.add_argument("--size", default="140x40", help="terminal size, WxH (default: 140x40)")
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(SHOTS)
    unknown = sorted(set(names) - set(SHOTS))
    if unknown:
        ap.error(f"unknown screenshot {', '.join(unknown)} (have: {', '.join(SHOTS)})")
    width, height = (int(x) for x in args.size.lower().split("x"))
    sys.path.insert(0, str(ROOT))
    work = Path(tempfile.mkdtemp(prefix="agenthop-screenshots-"))
    for var, value in (
        ("AGENTHOP_CACHE", work / "cache"),
        ("AGENTHOP_CONFIG", work / "config.toml"),
        ("AGENTHOP_STATE", work / "state.toml"),
    ):
        os.environ[var] = str(value)
    os.environ.pop("NO_COLOR", None)
    here = Path.cwd()
    os.chdir(work)  # the runs list titles its store relative to the working directory: `store: runs.sqlite`
    try:
        make_runs(work / "runs.sqlite")
        IMAGES.mkdir(exist_ok=True)
        for name in names:
            print(f"wrote {asyncio.run(shoot(name, work, (width, height))).relative_to(ROOT)}")
    finally:
        os.chdir(here)
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
