"""Time the workbench TUI over a big store: the pauses a user would feel.

    python bench/tui.py [--store PATH] [--runs 19] [--items 1011] [--replicates 3] [--size 160x45]

Without --store a store of runs × items × replicates trajectories is generated (as
bench/panel.py does); with --store the file is copied first, never modified. A run
`longrun` is added to the copy: one 20-turn trajectory whose tool results are 70K
characters of paragraphs with non-ASCII punctuation (the slow wrapping path).

The real app runs headless (Textual's `run_test`); a heartbeat task on the app's event
loop records the longest gap between its ticks, which is how long the UI was frozen.
For each step it prints the time until the screen shows the result and the longest
freeze meanwhile. Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

LONG_CHARS = 70_000


class Heartbeat:
    """Ticks every 5 ms on the event loop; `worst()` is the longest gap since `reset()`."""

    def __init__(self) -> None:
        self.last = time.perf_counter()
        self.gap = 0.0
        self.task: asyncio.Task | None = None

    async def _beat(self) -> None:
        while True:
            await asyncio.sleep(0.005)
            now = time.perf_counter()
            self.gap = max(self.gap, now - self.last)
            self.last = now

    def start(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self._beat())

    def reset(self) -> None:
        self.last, self.gap = time.perf_counter(), 0.0

    def worst(self) -> float:
        return max(self.gap, time.perf_counter() - self.last)


def long_text(i: int) -> str:
    """A section as papers have them: headings, paragraphs of ~1,200 characters with non-ASCII punctuation (the
    slow, cell-measuring wrapping path), and in every other step a control character (shown as U+FFFD)."""
    sentence = "The encoder — a stack of {k} layers — maps tokens to states (Table {k}); see §{k}. "
    parts, n, k = [], 0, 0
    while n < LONG_CHARS:
        paragraph = "".join(sentence.format(k=k + j) for j in range(14))
        if k % 5 == 0:
            paragraph = f"=== {k // 5}.{k % 3} Method ===\n" + paragraph
        if i % 2 == 0 and k % 3 == 0:
            paragraph = paragraph[:40] + "\x00" + paragraph[41:]
        parts.append(paragraph)
        n += len(paragraph) + 2
        k += 1
    return "\n\n".join(parts)[:LONG_CHARS]


def add_long_run(path: Path) -> None:
    """A run with one 20-turn trajectory, 70K characters per tool result."""
    from storage import Store
    from storage.records import StepRecord

    store = Store(path)
    run_id, _ = store.create_or_resume_run(
        "longrun",
        {"long": 1},
        {
            "agent": "llm",
            "model": "bench",
            "dataset": "/nonexistent/bench-release",
            "dataset_fingerprint": "f",
            "caps": {},
            "config": {},
            "version": "bench",
            "replicates": 1,
            "planned": 1,
        },
    )
    tid = store.begin_trajectory(run_id, "st_0001", 0, 0, {"kind": "st", "question_type": "single-target", "depth": 1})
    idx = 0
    for turn in range(1, 21):
        points, tokens = min(30, turn), 9000 * turn
        meters: StepRecord = {
            "index": idx,
            "turn": turn,
            "kind": "assistant",
            "points_used": points,
            "points_left": 30 - points,
            "tokens": tokens,
            "rejections": 0,
        }
        store.add_step(tid, {**meters, "text": f"turn {turn}: reading on", "tool_args": [{"name": "read_section"}]})
        store.add_step(
            tid,
            {
                **meters,
                "index": idx + 1,
                "kind": "tool",
                "tool_name": "read_section",
                "cost": 1,
                "status": "ok",
                "tool_args": {"paper_id": f"p{turn}", "section": "C"},
                "delivered": True,
                "text": long_text(turn),
            },
        )
        idx += 2
    store.finish_trajectory(
        tid,
        {
            "termination": "max_turns",
            "correct": False,
            "turns": 20,
            "tool_calls": 20,
            "points_used": 20,
            "tokens": 180_000,
            "tool_sequence": ["read_section"] * 20,
            "continues": 0,
        },
        final=True,
    )
    store.close()


def writer(path: Path, stop: threading.Event, commits: list[int]) -> None:
    """What a background `--batch run` does to the store: a step committed every 50 ms, a trajectory every 10."""
    from storage import Store

    store = Store(path)
    run_id, _ = store.create_or_resume_run(
        "background",
        {"bg": 1},
        {
            "agent": "heuristic",
            "model": None,
            "dataset": "builtin",
            "dataset_fingerprint": "f",
            "caps": {},
            "config": {},
            "version": "bench",
            "replicates": 1,
            "planned": 10_000,
        },
    )
    item = 0
    while not stop.is_set():
        tid = store.begin_trajectory(run_id, f"q{item:05d}", 0, 0, {"kind": "st"})
        for i in range(10):
            if stop.wait(0.05):
                break
            store.add_step(
                tid,
                {
                    "index": i,
                    "turn": i + 1,
                    "kind": "tool",
                    "tool_name": "think",
                    "text": "x",
                    "points_used": 0,
                    "points_left": 30,
                    "tokens": 0,
                    "rejections": 0,
                },
            )
            commits[0] += 1
        store.finish_trajectory(
            tid, {"termination": "answer", "correct": True, "tool_sequence": ["think"], "continues": 0}, final=True
        )
        item += 1
    store.close()


async def until(cond, timeout: float = 60.0) -> float:
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.005)
    return time.perf_counter() - t0


def row(label: str, shown: float | None, frozen: float) -> None:
    shown_text = "" if shown is None else f"shown after {shown:6.3f} s"
    print(f"  {label:44s} {shown_text:24s} longest freeze {frozen:6.3f} s")


async def measure(store_path: Path, cache: Path, size: tuple[int, int]) -> None:
    from textual.css.query import QueryError
    from textual.widgets import DataTable

    from workbench.service import reports
    from workbench.tui.app import WorkbenchApp
    from workbench.tui.screens.stepper import StepperScreen
    from workbench.tui.widgets.diagnostics import DiagnosticsPanel

    computed = [0]
    original = reports.report_of

    def counted(*a, **k):
        computed[0] += 1
        return original(*a, **k)

    reports.report_of = counted
    beat = Heartbeat()
    t0 = time.perf_counter()
    app = WorkbenchApp(store_path=store_path, cache_dir=cache, config_path=store_path.with_name("config.toml"))
    async with app.run_test(size=size) as pilot:
        beat.start()

        def table_rows(selector: str) -> int:
            try:
                return app.screen.query_one(selector, DataTable).row_count
            except QueryError:  # the screen is not (yet) the one with this table
                return 0

        await until(lambda: table_rows("#runs-table") > 0)
        row("first paint (runs list with rows)", time.perf_counter() - t0, 0.0)
        await pilot.pause()

        n = app.store.conn.execute(
            "SELECT COUNT(*) FROM trajectories t JOIN runs r ON r.id = t.run_id "
            "WHERE r.name = 'run00' AND t.final = 1 AND t.status = 'done'"
        ).fetchone()[0]
        beat.reset()
        t = time.perf_counter()
        press = asyncio.ensure_future(pilot.press("enter"))
        await until(lambda: table_rows("#trajectory-table") > 0)
        first = time.perf_counter() - t
        await until(lambda: table_rows("#trajectory-table") >= n)
        every = time.perf_counter() - t
        await press
        row(f"open run00 ({n:,} trajectories): first rows", first, beat.worst())
        row("  … all rows in the table", every, beat.worst())
        await pilot.pause()

        def diagnostics_shown() -> bool:
            try:
                panel = app.screen.query_one("#diagnostics-panel", DiagnosticsPanel)
                return panel.report is not None and bool(str(panel.query_one("#diag-heatmap").render()).strip())
            except QueryError:  # the panel (or its heatmap) is not mounted yet
                return False

        beat.reset()
        t = time.perf_counter()
        press = asyncio.ensure_future(pilot.press("2"))
        shown = await until(diagnostics_shown)
        await press
        row("tab 2: diagnostics", shown, beat.worst())
        await pilot.pause()
        beat.reset()
        t = time.perf_counter()
        await pilot.press("1")
        await pilot.pause()
        row("tab 1: back to the trajectories", time.perf_counter() - t, beat.worst())
        beat.reset()
        await pilot.press("2")
        await pilot.pause()
        row("tab 2 again", None, beat.worst())

        # a run writing in the background while the diagnostics tab is open
        stop, commits = threading.Event(), [0]
        computed[0] = 0
        thread = threading.Thread(target=writer, args=(store_path, stop, commits), daemon=True)
        thread.start()
        latencies: list[float] = []
        worst = 0.0
        end = time.perf_counter() + 8.0
        keys = ["down", "up"]
        while time.perf_counter() < end:
            beat.reset()
            t = time.perf_counter()
            await pilot.press(keys[len(latencies) % 2])
            latencies.append(time.perf_counter() - t)
            await asyncio.sleep(0.1)
            worst = max(worst, beat.worst())
        stop.set()
        thread.join()
        latencies.sort()
        print(
            f"  8 s of background writes ({commits[0]} commits) with diagnostics open: {computed[0]} recomputes, "
            f"key latency median {latencies[len(latencies) // 2]:.3f} s max {latencies[-1]:.3f} s, "
            f"longest freeze {worst:.3f} s"
        )

        await pilot.press("escape")
        await pilot.pause()
        app.open_run("longrun")
        await pilot.pause()
        beat.reset()
        t = time.perf_counter()
        await pilot.press("enter")
        await until(lambda: isinstance(app.screen, StepperScreen))
        await pilot.pause()
        row("stepper: open a 20-turn, 70K-chars/step trajectory", time.perf_counter() - t, beat.worst())
        for keys, label in (
            (["dollar_sign"], "$ (last turn) at once"),
            (["0"], "0 (first turn)"),
            (["l"] * 19, "l (next turn), each"),
            (["h"] * 5, "h (previous turn), each"),
        ):
            times, frozen = [], 0.0
            for k in keys:
                beat.reset()
                t = time.perf_counter()
                await pilot.press(k)
                await pilot.pause()
                times.append(time.perf_counter() - t)
                frozen = max(frozen, beat.worst())
            row(f"{label} (max of {len(keys)})", max(times), frozen)
        stepper = app.screen
        assert isinstance(stepper, StepperScreen)
        view = stepper.view.transcript
        view.cursor = max(i for i, e in enumerate(view.entries) if e.kind == "tool")
        beat.reset()
        t = time.perf_counter()
        await pilot.press("enter")
        await pilot.pause()
        row("enter: unfold a 70K result", time.perf_counter() - t, beat.worst())
        beat.reset()
        t = time.perf_counter()
        await pilot.press("end")
        await pilot.pause()
        row("end: to its last line", time.perf_counter() - t, beat.worst())
        beat.reset()
        t = time.perf_counter()
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        row("resize to 100×30 (rewrap)", time.perf_counter() - t, beat.worst())
    reports.report_of = original


def import_time() -> float:
    code = "import time; t = time.perf_counter(); import workbench.tui.app; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return float(out.stdout)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--store", help="an existing store to copy (default: generate one)")
    ap.add_argument("--runs", type=int, default=19)
    ap.add_argument("--items", type=int, default=1011)
    ap.add_argument("--replicates", type=int, default=3)
    ap.add_argument("--size", default="160x45", help="terminal size, WxH")
    args = ap.parse_args()
    width, height = (int(x) for x in args.size.lower().split("x"))
    work = Path(tempfile.mkdtemp(prefix="agenthop-tui-bench-"))
    path = work / "store.sqlite"
    t = time.perf_counter()
    from panel import bench_store

    bench_store(path, args.store, args.runs, args.items, args.replicates)
    add_long_run(path)
    print(f"store: {path} ({path.stat().st_size / 1e6:.0f} MB, ready in {time.perf_counter() - t:.1f} s)")
    print(f"  import workbench.tui.app (textual included): {import_time():.3f} s")
    asyncio.run(measure(path, work / "cache", (width, height)))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
