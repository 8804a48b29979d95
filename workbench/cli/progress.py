"""Progress on stderr: a rich progress bar on a terminal, one plain line per step otherwise: a run's (one line per
trajectory) and a Hub release's download (one line per file)."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

from workbench.views.cells import NOT_MEASURED, fetch_line, fraction

if TYPE_CHECKING:
    from rich.progress import Progress as Bar
    from rich.progress import TaskID

    from workbench.service.datasets import Fetching
    from workbench.service.execution import RunEvent


class Progress:
    def __init__(self, name: str, quiet: bool = False, stream: TextIO | None = None):
        self.name = name
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.bar: Bar | None = None
        self.task: TaskID | None = None
        self.t0 = time.monotonic()
        self.new = 0

    def update(self, event: RunEvent) -> None:
        if self.quiet:
            return
        if event.kind == "step":
            if event.step is not None and event.step.kind == "retry":  # a transient failure, retried in place
                self._retry(event.item_id, event.replicate, event.step.text or "")
        elif event.kind == "retry":  # an infrastructure failure: the whole attempt again
            self._retry(event.item_id, event.replicate, event.note or "")
        elif event.kind == "started":
            self._start(event)
        elif event.kind == "trajectory":
            self.new += 1
            self._trajectory(event)

    def _start(self, event: RunEvent) -> None:
        msg = f"run '{self.name}': {event.planned} planned, {event.skipped} already done"
        if self.tty:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bar

            bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("acc {task.fields[acc]}"),
                TimeRemainingColumn(),
                console=Console(file=self.stream),
                transient=False,
            )
            bar.start()
            bar.console.print(msg)
            self.bar = bar
            self.task = bar.add_task(self.name, total=event.planned, completed=event.done, acc=NOT_MEASURED)
        else:
            self.stream.write(msg + "\n")
            self.stream.flush()

    def _trajectory(self, event: RunEvent) -> None:
        acc = fraction(event.correct / event.done if event.done else None)
        t = event.trajectory
        if self.bar is not None and self.task is not None:
            self.bar.update(self.task, completed=event.done, acc=acc)
            return
        assert t is not None  # a "trajectory" event carries the trajectory it announces
        rate = self.new / max(time.monotonic() - self.t0, 1e-9)
        mark = "✓" if t.correct else "✗"
        self.stream.write(
            f"[{event.done}/{event.planned}] {event.item_id} r{event.replicate} {mark} [{t.termination}] "
            f"ans={t.answer} points={t.points_used} turns={t.turns} (acc={acc}, {rate:.1f} ep/s)\n"
        )
        self.stream.flush()

    def _retry(self, item_id: str | None, replicate: int, why: str) -> None:
        """Say a retry is coming: backoffs add up to minutes, and a run that prints nothing meanwhile looks hung."""
        why = " ".join(why.split())
        line = f"retrying {item_id} r{replicate}: {why[:240] + '…' if len(why) > 240 else why}"
        if self.bar is not None:
            self.bar.console.print(line, markup=False, highlight=False)
        else:
            self.stream.write(line + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class FetchProgress:
    """A Hub release's download on stderr: a rich bar of bytes on a terminal, one line per finished file otherwise.

    Silent while nothing is downloaded (every file already in the Hub's cache), so a cached release opens quietly.
    `update` is called from the Hub client's download threads as well as from the caller's."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None):
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.bar: Bar | None = None  # drawn once a download starts
        self.task: TaskID | None = None
        self.files_said = 0

    def update(self, event: Fetching) -> None:
        if self.quiet or not event.bytes_total:
            return
        if self.tty:
            self._draw(event)
        elif event.files_done > self.files_said:
            self.files_said = event.files_done
            self.stream.write(fetch_line(event) + "\n")
            self.stream.flush()

    def _draw(self, event: Fetching) -> None:
        if self.bar is None or self.task is None:
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, TextColumn, TransferSpeedColumn
            from rich.progress import Progress as Bar

            self.bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TransferSpeedColumn(),
                TextColumn("{task.fields[files]}"),
                console=Console(file=self.stream),
            )
            self.bar.start()
            self.task = self.bar.add_task(event.spec, total=event.bytes_total, files="")
        self.bar.update(
            self.task,
            completed=event.bytes_done,
            total=event.bytes_total,
            files=f"{event.files_done}/{event.files_total} files" if event.files_total else "",
        )

    def close(self) -> None:
        if self.bar is not None:
            self.bar.stop()
            self.bar = None


class JudgingProgress:
    """How far the judging of a parallel run is, on stderr: judging a finished run can take long after its sampling
    said "already done". On a terminal one line rewritten in place; otherwise a line at each tenth and at the end."""

    def __init__(self, name: str, quiet: bool = False, stream: TextIO | None = None):
        self.name = name
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.shown: tuple[str, int] | None = None

    def __call__(self, judge: str, done: int, total: int) -> None:
        if self.quiet or total <= 0:
            return
        tenth = done * 10 // total
        if not self.tty and (judge, tenth) == self.shown and done < total:
            return
        self.shown = (judge, tenth)
        line = f"judging '{self.name}' ({judge}): {done}/{total} items"
        if self.tty:
            self.stream.write(f"\r{line}" + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


class CampaignProgress:
    """A whole campaign's progress on stderr, one display for all its runs (`workbench.service.campaign
    .CampaignTracker`'s totals: runs done, episodes, tokens, cost, time left). On a terminal one line rewritten in
    place (at most ten times a second), with a line above it as each run ends; otherwise a line as each run ends
    and at each tenth of the campaign's episodes."""

    REDRAW_S = 0.1

    def __init__(self, name: str, states: list, quiet: bool = False, stream: TextIO | None = None):
        from workbench.service.campaign import CampaignTracker

        self.name = name
        self.quiet = quiet
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.tracker = CampaignTracker(states)
        self.drawn = 0.0
        self.tenth = -1
        self.open_line = False  # a line is drawn in place (terminal) and must be cleared before another is printed
        if not quiet:
            totals = self.tracker.totals()
            self._say(
                f"campaign '{name}': {totals.runs} runs, {totals.episodes} episodes, "
                f"{totals.episodes_done} already done"
            )

    def update(self, run: str, event: RunEvent) -> None:
        self.tracker.feed(run, event)
        if self.quiet:
            return
        if event.kind == "retry" or (event.kind == "step" and event.step is not None and event.step.kind == "retry"):
            why = " ".join((event.note or (event.step.text if event.step else "") or "").split())
            self._say(f"{run}: retrying {event.item_id} r{event.replicate}: {why[:200]}")
        elif event.kind == "trajectory":
            self._progress()

    def ended(self, run: str, result) -> None:
        """A run's end: said in one line (with why it stopped early, if it did)."""
        status = result["status"]
        self.tracker.ended(run, "done" if status == "done" and result["done"] >= result["planned"] else status)
        if self.quiet:
            return
        why = f" ({result['stop_reason']})" if result.get("stop_reason") else ""
        self._say(f"run '{run}': {status}, {result['done']}/{result['planned']}{why}")
        self._progress(force=True)

    def skipped(self, run: str) -> None:
        self.tracker.ended(run, "not started")

    def _progress(self, force: bool = False) -> None:
        from workbench.views.campaign import totals_line

        totals = self.tracker.totals()
        line = totals_line(self.name, totals)
        if self.tty:
            now = time.monotonic()
            if force or now - self.drawn >= self.REDRAW_S:
                self.drawn = now
                self.stream.write(f"\r\x1b[K{line}")
                self.stream.flush()
                self.open_line = True
            return
        tenth = totals.episodes_done * 10 // max(totals.episodes, 1)
        if force or tenth != self.tenth:
            self.tenth = tenth
            self.stream.write(line + "\n")
            self.stream.flush()

    def _say(self, line: str) -> None:
        if self.open_line:
            self.stream.write("\r\x1b[K")
            self.open_line = False
        self.stream.write(line + "\n")
        self.stream.flush()
        if self.tty:
            self._progress(force=True)

    def close(self) -> None:
        if self.open_line:
            self.stream.write("\n")
            self.stream.flush()
            self.open_line = False
