"""A release published on the Hugging Face Hub (`hf:OWNER/NAME[@REVISION]`), fetched into huggingface_hub's cache.

`snapshot_download` (a dataset repository) does the fetching, so its cache, its resumable downloads and its
settings (`HF_ENDPOINT`, `HF_TOKEN`, `HF_HUB_OFFLINE`, `HF_HOME`) are the ones a user of the Hub already has;
only the four release files are fetched. What comes back is a release directory like any other: it is
validated and imported by `sandbox.corpus`, and its fingerprint is that of its four files, wherever they lie.

With the Hub unreachable the cached snapshot of the revision last resolved (or of the pinned commit) serves.
Every failure a user can act on (no such repository, a gated one without access, a revision that does not
exist, nothing cached while offline, a snapshot without the release files) is a `DatasetError` of one line
naming the repository.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sandbox.release import DatasetError

PREFIX = "hf:"
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9_]|[.-](?![.-])){0,95}"  # the Hub's rule: ASCII, no "--" or "..", ≤ 96
_SPEC = re.compile(rf"hf:({_NAME})/({_NAME})(?:@([^\s@]+))?")
_COMMIT = re.compile(r"[0-9a-f]{40}")
LIBRARY = "agenthop-workbench"  # the user agent's library name: the Hub's download statistics count it


@dataclass(frozen=True)
class HubSpec:
    """A release on the Hub as the user named it: `repo` is OWNER/NAME, `revision` a branch, tag or commit
    (None: the default branch)."""

    repo: str
    revision: str | None = None

    @property
    def text(self) -> str:
        """The spec as typed: `hf:OWNER/NAME` or `hf:OWNER/NAME@REVISION`."""
        return f"{PREFIX}{self.repo}" + (f"@{self.revision}" if self.revision else "")


@dataclass(frozen=True)
class Snapshot:
    """A fetched release: where its files lie in the Hub's cache, the repository and the commit it resolved to."""

    path: Path
    repo: str
    commit: str


@dataclass(frozen=True)
class Fetching:
    """How far a fetch has come: files finished of those fetched, bytes written of those known so far (a file's
    size is known once its download starts; cached files count as finished at once)."""

    spec: str
    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int


OnFetch = Callable[[Fetching], None]


def is_hub(spec: str) -> bool:
    """Whether a `--data` value names a release on the Hub (`hf:…`)."""
    return spec.startswith(PREFIX)


def parse(spec: str) -> HubSpec:
    """The repository and revision of `hf:OWNER/NAME[@REVISION]`; a DatasetError for anything else."""
    parsed = _match(spec)
    if parsed is None:
        from sandbox.release import DatasetError

        raise DatasetError(spec, None, None, "is not a Hub dataset: write hf:OWNER/NAME or hf:OWNER/NAME@REVISION")
    return parsed


def _match(spec: str) -> HubSpec | None:
    """The spec read by the pattern alone (naming stays light: the release format is imported to fail only)."""
    match = _SPEC.fullmatch(spec.strip())
    if match is None:
        return None
    owner, name, revision = match.groups()
    return HubSpec(f"{owner}/{name}", revision)


def hub_key(spec: str) -> str:
    """How a run records a Hub release: the spec with surrounding blanks removed (a bad one is refused later)."""
    return spec.strip()


def hub_label(key: str) -> str:
    """A recorded Hub release as a person reads it: the repository's name, with a pinned revision."""
    parsed = _match(key)
    if parsed is None:
        return key
    return parsed.repo.split("/", 1)[1] + (f"@{parsed.revision}" if parsed.revision else "")


def pinned(repo: str, commit: str) -> str:
    """The spec that opens exactly one recorded commit (offline too, once it is cached)."""
    return f"{PREFIX}{repo}@{commit}"


def fetch(spec: str, on_fetch: OnFetch | None = None) -> Snapshot:
    """The release named by `spec`, fetched into (or found in) the Hub's cache; `on_fetch` hears how far it is.

    Only the four release files are asked for. A DatasetError of one line for every failure a user can act on."""
    from sandbox.release import RELEASE_FILES

    parsed = parse(spec)
    import httpx2
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import HFValidationError

    try:
        with _quiet_hub_log():
            folder = snapshot_download(
                parsed.repo,
                repo_type="dataset",
                revision=parsed.revision,
                allow_patterns=list(RELEASE_FILES),
                endpoint=os.environ.get("HF_ENDPOINT") or None,
                library_name=LIBRARY,
                tqdm_class=_progress_class(parsed.text, on_fetch) if on_fetch else _silent_class(),
            )
    except (
        OSError,
        httpx2.HTTPError,
        HFValidationError,
    ) as exc:  # the Hub's errors are OSErrors, the network's httpx2's
        raise _hub_error(parsed, exc) from None
    path = Path(folder)
    commit = path.name
    snapshot = Snapshot(path, parsed.repo, commit if _COMMIT.fullmatch(commit) else parsed.revision or commit)
    _require_files(parsed, snapshot)
    return snapshot


@contextmanager
def _quiet_hub_log() -> Iterator[None]:
    """The Hub client's own warnings held back while it fetches: every failure is worded here, in one line."""
    log = logging.getLogger("huggingface_hub")
    level = log.level
    log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        log.setLevel(level)


def cached_file(spec: str, rel: str) -> Path | None:
    """A release file of `spec` as the Hub's cache holds it (the revision last resolved), without asking the Hub;
    None when it is not cached or `spec` is not a Hub dataset."""
    parsed = _match(spec)
    if parsed is None:
        return None
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(parsed.repo, rel, revision=parsed.revision, repo_type="dataset")
    return Path(found) if isinstance(found, str) else None


def _require_files(parsed: HubSpec, snapshot: Snapshot) -> None:
    """The rule a release directory follows (`release.require_release_dir`), worded for the repository."""
    from sandbox.release import GRAPHS_FILE, PAPERS_FILE, QA_FILE, DatasetError

    required = (QA_FILE, GRAPHS_FILE, PAPERS_FILE)
    missing = [rel for rel in required if not (snapshot.path / rel).is_file()]
    at = f"at commit {snapshot.commit[:12]}"
    if len(missing) == len(required):
        raise DatasetError(parsed.text, None, None, f"holds no release {at} (none of {', '.join(required)})")
    if missing:
        raise DatasetError(
            parsed.text, None, None, f"holds no {', '.join(missing)} {at} (a release needs {', '.join(required)})"
        )


def download_command(parsed: HubSpec) -> str:
    """The command that puts the release into the Hub's cache where the Hub is reachable."""
    from sandbox.release import RELEASE_FILES

    revision = f" --revision {parsed.revision}" if parsed.revision else ""
    return f"hf download --repo-type dataset{revision} {parsed.repo} {' '.join(RELEASE_FILES)}"


def _hub_error(parsed: HubSpec, exc: Exception) -> DatasetError:
    """The one-line DatasetError for a failure of the Hub client or of the network."""
    from huggingface_hub.errors import (
        GatedRepoError,
        HfHubHTTPError,
        LocalEntryNotFoundError,
        RepositoryNotFoundError,
        RevisionNotFoundError,
    )

    from sandbox.release import DatasetError

    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    token = "the token in use has no access" if _has_token() else "HF_TOKEN is not set"
    if isinstance(exc, GatedRepoError):
        why = (
            f"is a gated dataset and {token}: accept its conditions at {endpoint}/datasets/{parsed.repo} and set "
            "HF_TOKEN to a token of that account"
        )
    elif isinstance(exc, RepositoryNotFoundError):
        why = f"is not a dataset repository on {endpoint} (or it is private and {token})"
    elif isinstance(exc, RevisionNotFoundError):
        why = f"has no revision '{parsed.revision}' on {endpoint}"
    elif isinstance(exc, LocalEntryNotFoundError):
        offline = "HF_HUB_OFFLINE is set" if _offline() else f"{endpoint} cannot be reached"
        why = (
            f"is not in the Hugging Face cache (or only part of it) and {offline}: where the Hub is reachable, run "
            f"`{download_command(parsed)}` (or this command again)"
        )
    elif isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else "?"
        why = f"cannot be fetched from {endpoint}: HTTP {status} ({_first_line(exc)})"
    else:
        why = f"cannot be fetched from {endpoint}: {type(exc).__name__}: {_first_line(exc)}"
    return DatasetError(parsed.text, None, None, why)


def _has_token() -> bool:
    """Whether huggingface_hub sends a token: HF_TOKEN, or one saved by `hf auth login`."""
    from huggingface_hub import get_token

    return bool(get_token())


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.is_offline_mode())


def _first_line(exc: Exception) -> str:
    text = " ".join(line for line in str(exc).splitlines() if line.strip())
    return text[:200] + ("…" if len(text) > 200 else "")


def _silent_class() -> type:
    """A progress bar that shows nothing (the Hub client's own would draw on stderr)."""
    return _progress_class("", None)


def _progress_class(spec: str, on_fetch: OnFetch | None) -> type:
    """A tqdm class for `snapshot_download` that draws nothing and reports to `on_fetch`.

    `snapshot_download` makes three bars of this class: the files fetched (one step per finished file, named by no
    unit), the bytes written to disk and the bytes received ("Downloading bytes": left out, the first two say it
    all). The download threads update the bytes bar at once: one lock keeps the counts and the reports in order."""
    import threading

    from tqdm import tqdm

    state = {"files_done": 0, "files_total": 0, "bytes_done": 0, "bytes_total": 0}
    lock = threading.Lock()

    class Reporting(tqdm):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.pop("name", None)
            received = str(kwargs.get("desc", "")).startswith("Downloading")
            self._kind = "files" if kwargs.get("unit", "it") != "B" else "received" if received else "bytes"
            super().__init__(*args, **{**kwargs, "disable": True})
            self.n = kwargs.get("initial", 0) or 0
            self.total = kwargs.get("total")

        def update(self, n: float | None = 1) -> bool | None:
            if self._kind == "received":
                return None
            with lock:
                self.n += n or 0
                done, total = int(self.n), int(self.total or 0)
                if self._kind == "files":
                    state["files_done"], state["files_total"] = done, total
                else:
                    state["bytes_done"], state["bytes_total"] = done, total
                if on_fetch is not None and (self._kind == "files" or n):
                    on_fetch(Fetching(spec, **state))
            return None

        def refresh(self, *args: Any, **kwargs: Any) -> None:
            if self._kind == "bytes":
                with lock:
                    state["bytes_total"] = int(self.total or 0)

        @property
        def format_dict(self) -> dict[str, float | None]:
            return {"rate": None}

        def set_postfix_str(self, *args: Any, **kwargs: Any) -> None:
            pass

        def set_description(self, *args: Any, **kwargs: Any) -> None:
            pass

        def set_description_str(self, *args: Any, **kwargs: Any) -> None:
            pass

        def close(self) -> None:
            pass

    return Reporting
