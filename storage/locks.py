"""One writer per run: an OS lock file per run, beside the store, held while a process executes the run.

Two processes resuming the same run would both think every pending item theirs and write
each twice (or collide on the trajectories' unique key). A lease row in the store would
need heartbeats and a timeout to tell a dead holder from a slow one; `flock` needs
neither: the kernel drops the lock when its holder exits, however it exits (SIGKILL,
a crash, an SSH drop), so a stale lock cannot exist. The file also records the
holder's pid and host, to name it in the refusal and to tell a run whose status says
`running` but whose process is gone (`holder` is None).

Locks live in `<store>.locks/`, one small file per run (named by a hash of the run's
name, so any name is a safe file name). They are left in place after release:
removing a lock file while another process may be opening it would let two holders in.
Without `fcntl` (Windows) runs are not locked.
"""

from __future__ import annotations

import hashlib
import os
import socket
from pathlib import Path

from storage.access import check_writable, store_error
from storage.errors import StoreError

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


class RunBusy(StoreError):
    """Another process executes this run now."""


def lock_path(store_path: Path, run_name: str) -> Path:
    digest = hashlib.sha256(run_name.encode("utf-8")).hexdigest()[:24]
    return store_path.with_name(store_path.name + ".locks") / f"{digest}.lock"


def _read_owner(path: Path) -> tuple[int, str] | None:
    """(pid, host) written by the holder, or None when the file is empty or unreadable."""
    try:
        text = path.read_text(encoding="utf-8").split()
        return int(text[0]), text[1]
    except (OSError, ValueError, IndexError):
        return None


def process_alive(pid: int) -> bool:
    """Whether `pid` runs. Where that cannot be asked safely (Windows: os.kill would terminate it), assume it does.
    The corpus cache asks it too, of the import a temporary file names."""
    if pid == os.getpid() or os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True


def _describe(path: Path) -> str:
    owner = _read_owner(path)
    if owner is None:  # the holder has not written its pid yet
        return "pid unknown"
    pid, host = owner
    return f"pid {pid}" if host == socket.gethostname() else f"pid {pid} on {host}"


class RunLock:
    """The lock of one run; `acquire` raises RunBusy naming the holder, `release` lets the next one in."""

    def __init__(self, store_path: Path, run_name: str):
        self.store_path = Path(store_path)
        self.path = lock_path(self.store_path, run_name)
        self.run_name = run_name
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock, or refuse: RunBusy naming the holder; StoreReadOnly, before the locks' folder is created,
        when the store cannot be written here (every holder of a lock writes the store); StoreFull when the disk
        has no room for the lock file."""
        if fcntl is None:
            return
        check_writable(self.store_path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise store_error(self.store_path, exc) or exc from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise RunBusy(
                f"run '{self.run_name}' is in progress in another process ({_describe(self.path)}); "
                "wait for it or stop it"
            ) from None
        try:
            os.ftruncate(fd, 0)
            os.write(fd, f"{os.getpid()} {socket.gethostname()}\n".encode())
        except OSError as exc:
            os.close(fd)
            raise store_error(self.store_path, exc) or exc from None
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        os.ftruncate(self._fd, 0)  # an empty file: nobody holds it (read by `holder`)
        os.close(self._fd)  # closing drops the flock
        self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def holder(store_path: Path, run_name: str) -> int | None:
    """The pid executing the run now, or None. Read from the lock file, not by probing the lock (a probe
    would make a run starting at that instant refuse itself). A holder on this host whose process is gone
    (killed before it could empty the file) holds nothing; one on another host is taken at its word."""
    owner = _read_owner(lock_path(Path(store_path), run_name))
    if owner is None:
        return None
    pid, host = owner
    if host == socket.gethostname() and not process_alive(pid):
        return None
    return pid
