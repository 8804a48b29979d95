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
