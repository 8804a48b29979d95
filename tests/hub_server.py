"""A stand-in for the Hugging Face Hub on 127.0.0.1: the endpoints `huggingface_hub.snapshot_download` calls for a
dataset repository, answered as the Hub answers them (point `HF_ENDPOINT` at `endpoint`).

- `GET /api/datasets/OWNER/NAME/revision/REV`: the repository's info (`sha`: the commit REV resolves to,
  `siblings`: its files); an unknown repository is 401 `X-Error-Code: RepoNotFound` (the Hub says 401, not 404,
  to a caller without a token), an unknown revision 404 `RevisionNotFound`.
- `GET /api/datasets/OWNER/NAME/tree/REV?recursive=…`: every file (`oid`: its git blob id, `size`, and `lfs` for
  a file stored in LFS) and folder.
- `HEAD` / `GET /datasets/OWNER/NAME/resolve/REV/PATH`: the file, with `X-Repo-Commit` and an `ETag`; a file in LFS
  is a 302 to a CDN (`localhost`, another origin than the Hub's 127.0.0.1, as the real CDN is another host)
  carrying `X-Linked-Etag` (its sha256) and `X-Linked-Size`, and the CDN serves it with `Range` (resumed
  downloads). A gated repository answers its files 401 `GatedRepo` unless the request bears `token`.

Every request is recorded (method, path, whether it bore an Authorization header, its Range) in `requests`.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlparse


@dataclass
class Repo:
    """A dataset repository: its files at each commit, and the branches and tags naming commits."""

    commits: dict[str, dict[str, bytes]]  # commit → path → content
    refs: dict[str, str]  # branch or tag → commit ("main" is the default branch)
    lfs: frozenset[str] = frozenset()  # paths stored in LFS (served through the CDN)
    gated: bool = False
    cut: set[str] = field(default_factory=set)  # paths whose next download breaks off halfway (then served whole)


def commit_id(label: str) -> str:
    """A 40-hex commit id derived from a label (stable across runs)."""
    return hashlib.sha1(label.encode()).hexdigest()


def blob_id(content: bytes) -> str:
    """The git blob id of a file's content, as the Hub's tree listing gives it."""
    return hashlib.sha1(b"blob %d\0" % len(content) + content).hexdigest()


def release_files(root: Path) -> dict[str, bytes]:
    """Every file under a release directory, by its path relative to it."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@dataclass
class Request:
    method: str
    path: str
    authorized: bool
    range: str | None = None  # the Range header of a resumed download


@dataclass
class HubServer:
    repos: dict[str, Repo]
    token: str = "hf_test_token"
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def endpoint(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def cdn(self) -> str:
        assert self._server is not None
        return f"http://localhost:{self._server.server_address[1]}"

    def start(self) -> HubServer:
        hub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                hub._answer(self, body=True)

            def do_HEAD(self) -> None:
                hub._answer(self, body=False)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> HubServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def served(self, method: str = "GET") -> list[str]:
        """The paths of the requests of `method` answered so far."""
        return [r.path for r in self.requests if r.method == method]

    # ------------------------------------------------------------ answers

    def _answer(self, h: BaseHTTPRequestHandler, body: bool) -> None:
        url = urlparse(h.path)
        path = unquote(url.path)
        authorized = "authorization" in {k.lower() for k in h.headers}
        self.requests.append(Request(h.command, path, authorized, h.headers.get("Range")))
        if m := re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/revision/(.+)", path):
            self._info(h, m.group(1), m.group(2), body)
        elif m := re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/tree/([^/]+)(/.*)?", path):
            self._tree(h, m.group(1), m.group(2), body)
        elif m := re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
            self._resolve(h, m.group(1), m.group(2), m.group(3), body)
        elif m := re.fullmatch(r"/cdn/([0-9a-f]{64})", path):
            self._cdn(h, m.group(1), body)
        else:
            self._send(h, 404, b"not found", {}, body)

    def _commit(self, h: BaseHTTPRequestHandler, repo_id: str, revision: str, body: bool) -> tuple[Repo, str] | None:
        repo = self.repos.get(repo_id)
        if repo is None:
            headers = {"X-Error-Code": "RepoNotFound", "X-Error-Message": "Repository not found"}
            self._send(h, 401, b'{"error":"Repository not found"}', headers, body)
            return None
        commit = repo.refs.get(revision, revision if revision in repo.commits else None)
        if commit is None:
            headers = {"X-Error-Code": "RevisionNotFound", "X-Error-Message": "Invalid rev id: " + revision}
            self._send(h, 404, b'{"error":"Invalid rev id"}', headers, body)
            return None
        return repo, commit

    def _info(self, h: BaseHTTPRequestHandler, repo_id: str, revision: str, body: bool) -> None:
        found = self._commit(h, repo_id, revision, body)
        if found is None:
            return
        repo, commit = found
        info = {
            "_id": commit[:24],
            "id": repo_id,
            "author": repo_id.split("/", 1)[0],
            "sha": commit,
            "private": False,
            "gated": "manual" if repo.gated else False,
            "disabled": False,
            "downloads": 0,
            "likes": 0,
            "tags": [],
            "createdAt": "2026-01-01T00:00:00.000Z",
            "lastModified": "2026-01-01T00:00:00.000Z",
            "siblings": [{"rfilename": p} for p in repo.commits[commit]],
        }
        self._send(h, 200, json.dumps(info).encode(), {"Content-Type": "application/json"}, body)

    def _tree(self, h: BaseHTTPRequestHandler, repo_id: str, revision: str, body: bool) -> None:
        found = self._commit(h, repo_id, revision, body)
        if found is None:
            return
        repo, commit = found
        files = repo.commits[commit]
        folders = sorted({"/".join(p.split("/")[:i]) for p in files for i in range(1, p.count("/") + 1)})
        entries: list[dict[str, object]] = [
            {"type": "directory", "oid": commit_id(folder), "size": 0, "path": folder} for folder in folders
        ]
        for path, content in files.items():
            entry: dict[str, object] = {"type": "file", "oid": blob_id(content), "size": len(content), "path": path}
            if path in repo.lfs:
                entry["lfs"] = {"oid": hashlib.sha256(content).hexdigest(), "size": len(content), "pointerSize": 134}
            entries.append(entry)
        self._send(h, 200, json.dumps(entries).encode(), {"Content-Type": "application/json"}, body)

    def _resolve(self, h: BaseHTTPRequestHandler, repo_id: str, revision: str, rel: str, body: bool) -> None:
        found = self._commit(h, repo_id, revision, body)
        if found is None:
            return
        repo, commit = found
        if repo.gated and h.headers.get("Authorization") != f"Bearer {self.token}":
            headers = {
                "X-Error-Code": "GatedRepo",
                "X-Error-Message": "Access to dataset " + repo_id + " is restricted. You must have access to it.",
            }
            self._send(h, 401, b'{"error":"gated"}', headers, body)
            return
        content = repo.commits[commit].get(rel)
        if content is None:
            headers = {"X-Error-Code": "EntryNotFound", "X-Repo-Commit": commit}
            self._send(h, 404, b'{"error":"Entry not found"}', headers, body)
            return
        if rel in repo.lfs:
            sha = hashlib.sha256(content).hexdigest()
            headers = {
                "Location": f"{self.cdn}/cdn/{sha}",
                "X-Repo-Commit": commit,
                "X-Linked-Etag": f'"{sha}"',
                "X-Linked-Size": str(len(content)),
                "ETag": f'"{blob_id(content)}"',
            }
            self._send(h, 302, b"", headers, body)
            return
        headers = {"X-Repo-Commit": commit, "ETag": f'"{blob_id(content)}"', "Accept-Ranges": "bytes"}
        if body and rel in repo.cut:
            repo.cut.discard(rel)
            self._break_off(h, content, headers)
            return
        self._send_content(h, content, headers, body)

    def _cdn(self, h: BaseHTTPRequestHandler, sha: str, body: bool) -> None:
        for repo in self.repos.values():
            for files in repo.commits.values():
                for content in files.values():
                    if hashlib.sha256(content).hexdigest() == sha:
                        self._send_content(h, content, {"ETag": f'"{sha}"', "Accept-Ranges": "bytes"}, body)
                        return
        self._send(h, 404, b"no such blob", {}, body)

    def _send_content(self, h: BaseHTTPRequestHandler, content: bytes, headers: dict[str, str], body: bool) -> None:
        """The whole file, or from the offset of a `Range: bytes=N-` header (206), as a resumed download asks."""
        m = re.fullmatch(r"bytes=(\d+)-", h.headers.get("Range") or "")
        if m and body:
            start = int(m.group(1))
            headers = {**headers, "Content-Range": f"bytes {start}-{len(content) - 1}/{len(content)}"}
            self._send(h, 206, content[start:], headers, body)
        else:
            self._send(h, 200, content, headers, body)

    @staticmethod
    def _break_off(h: BaseHTTPRequestHandler, content: bytes, headers: dict[str, str]) -> None:
        """The whole file announced, half of it sent, the connection closed: a download the network broke off."""
        h.send_response(200)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(content)))
        h.end_headers()
        h.wfile.write(content[: len(content) // 2])
        h.wfile.flush()
        h.close_connection = True

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, data: bytes, headers: dict[str, str], body: bool) -> None:
        h.send_response(status)
        for key, value in headers.items():
            h.send_header(key, value)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        if body and data:
            h.wfile.write(data)
