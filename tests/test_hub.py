"""`--data hf:OWNER/NAME[@REVISION]` against a stand-in for the Hugging Face Hub on 127.0.0.1 (tests/hub_server.py):
the real CLI in a child process (huggingface_hub reads HF_ENDPOINT, HF_HOME and HF_HUB_OFFLINE when it is imported),
the real huggingface_hub client, a real store.

The release served is the built-in generator's, with the quirks of a real Hub repository made by hand: files that are
not the release (a dataset card, a parquet conversion) beside it, the paper pool stored in LFS (a redirect to another
host, as the Hub's CDN is), and a paper whose text holds a lone surrogate escape (half an emoji), as the real
release's does.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox import synth
from sandbox.corpus import fingerprint, open_release
from sandbox.hub import HubSpec, hub_label, parse
from sandbox.release import PAPERS_FILE, DatasetError
from tests.hub_server import HubServer, Repo, commit_id, release_files

REPO = "nlpai-lab/agenthop"
SPEC = f"hf:{REPO}"
EXTRA = {"README.md": b"---\nlicense: cc-by-4.0\n---\n# AgentHop\n", "data/train-00000-of-00001.parquet": b"PAR1"}


@pytest.fixture(scope="module")
def served_release(tmp_path_factory) -> Path:
    """The built-in generator's release, its first paper's first section ending in a lone surrogate escape."""
    root = synth.generate(tmp_path_factory.mktemp("hub") / "agenthop", seed=0, preset="demo")
    papers = root / PAPERS_FILE
    lines = papers.read_text(encoding="utf-8").splitlines(keepends=True)
    first = json.loads(lines[0])
    first["sections"][0]["text"] += " 🙂"
    lines[0] = json.dumps(first, ensure_ascii=True).replace("\\ud83d\\ude42", "\\ud83d") + "\n"
    papers.write_text("".join(lines), encoding="utf-8")
    return root


def agenthop_repo(root: Path, **kwargs) -> Repo:
    files = {**release_files(root), **EXTRA}
    commit = commit_id("agenthop-v1")
    return Repo({commit: files}, {"main": commit}, lfs=frozenset({PAPERS_FILE}), **kwargs)


@pytest.fixture
def places(tmp_path) -> dict[str, str]:
    """The child's environment: its own store, corpus cache and Hugging Face cache (never the user's)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_")}
    env.update(
        AGENTHOP_DB=str(tmp_path / "store.sqlite"),
        AGENTHOP_CACHE=str(tmp_path / "cache"),
        AGENTHOP_CONFIG=str(tmp_path / "config.toml"),
        AGENTHOP_STATE=str(tmp_path / "state.toml"),
        HF_HOME=str(tmp_path / "hf"),
        HF_HUB_DISABLE_TELEMETRY="1",
        NO_COLOR="1",
    )
    return env


def cli(env: dict[str, str], hub: HubServer | None, *args: str, **extra: str) -> subprocess.CompletedProcess:
    """`agenthop-tui --batch ARGS` in a child process pointed at the stand-in (or at a port nobody listens on)."""
    endpoint = hub.endpoint if hub is not None else "http://127.0.0.1:9"
    child = {**env, "HF_ENDPOINT": endpoint, **extra}
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", "--batch", *args], env=child, capture_output=True, text=True
    )


def error_line(proc: subprocess.CompletedProcess) -> str:
    """The one line the command said about its failure (`items` may say first that no store exists yet)."""
    (line,) = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    return line


def stored_runs(env: dict[str, str]) -> list[dict]:
    with sqlite3.connect(env["AGENTHOP_DB"]) as db:
        db.row_factory = sqlite3.Row
        return [dict(r) for r in db.execute("SELECT * FROM runs ORDER BY id")]


def test_oracle_scores_one_on_the_served_release_then_runs_from_the_cache_with_the_hub_gone(served_release, places):
    hub = HubServer({REPO: agenthop_repo(served_release)}).start()
    try:
        first = cli(places, hub, "run", "--data", SPEC, "--agent", "oracle", "--run", "online")
    finally:
        hub.stop()
    assert first.returncode == 0, first.stderr
    # one line per finished file off a terminal, and only the release's four files were asked for
    fetched = [line for line in first.stderr.splitlines() if line.startswith(f"{SPEC}: ")]
    assert [line[len(SPEC) + 2 :].split()[0] for line in fetched] == ["1/4", "2/4", "3/4", "4/4"]
    downloaded = {p.rsplit("/resolve/", 1)[-1].split("/", 1)[-1] for p in hub.served("GET") if "/resolve/" in p}
    assert downloaded == {"qa/full.jsonl", "graphs/full.jsonl", "audit/recall_labels.jsonl"}  # papers: via the CDN
    assert any(p.startswith("/cdn/") for p in hub.served("GET"))
    assert not any("README" in p or "parquet" in p for p in hub.served("GET") + hub.served("HEAD"))
    assert "1 string(s) with a lone surrogate escape" in first.stderr  # the hand-made quirk reached the import

    offline = cli(places, None, "run", "--data", SPEC, "--agent", "oracle", "--run", "offline")
    assert offline.returncode == 0, offline.stderr
    assert not any(line.startswith(f"{SPEC}: ") for line in offline.stderr.splitlines())  # nothing to download

    commit = commit_id("agenthop-v1")
    runs = stored_runs(places)
    assert [(r["dataset"], r["dataset_repo"], r["dataset_revision"]) for r in runs] == [(SPEC, REPO, commit)] * 2
    with sqlite3.connect(places["AGENTHOP_DB"]) as db:
        correct = db.execute("SELECT run_id, COUNT(*), SUM(correct) FROM trajectories WHERE final = 1 GROUP BY run_id")
        assert [(n, right) for _, n, right in correct] == [(60, 60), (60, 60)]
    report = json.loads(cli(places, None, "report", "offline", "--format", "json").stdout)
    assert (report["accuracy"], report["n"]) == (1.0, 60)
    assert (report["dataset_repo"], report["dataset_revision"]) == (REPO, commit)
    table = cli(places, None, "report", "offline").stdout
    assert f"{SPEC} @ {commit[:12]}" in table
    listed = cli(places, None, "runs").stdout
    assert f"{SPEC} @ {commit[:12]}" in listed
    exported = cli(places, None, "export", "offline", "--format", "jsonl").stdout.splitlines()
    header = json.loads(exported[0])["run"]
    assert (header["dataset"], header["dataset_repo"], header["dataset_revision"]) == (SPEC, REPO, commit)


def test_the_hub_and_a_folder_of_the_same_files_are_one_dataset(served_release, places, tmp_path):
    folder = tmp_path / "agenthop"
    shutil.copytree(served_release, folder)
    with HubServer({REPO: agenthop_repo(served_release)}) as hub:
        from_hub = cli(places, hub, "run", "--data", SPEC, "--agent", "oracle", "--run", "both", "--limit", "3")
    assert from_hub.returncode == 0, from_hub.stderr
    from_folder = cli(places, None, "run", "--data", str(folder), "--agent", "oracle", "--run", "both", "--limit", "5")
    assert from_folder.returncode == 0, from_folder.stderr
    assert "5 planned, 3 already done" in from_folder.stderr  # the folder resumed the Hub's run
    (run,) = stored_runs(places)
    expected = fingerprint(folder, tmp_path / "fp-cache")
    assert run["dataset_fingerprint"] == expected
    assert (run["dataset_repo"], run["dataset_revision"]) == (REPO, commit_id("agenthop-v1"))


def test_a_repository_that_does_not_exist_is_one_line_and_the_store_untouched(served_release, places):
    with HubServer({REPO: agenthop_repo(served_release)}) as hub:
        assert cli(places, hub, "run", "--data", SPEC, "--agent", "oracle", "--limit", "2").returncode == 0
        before = Path(places["AGENTHOP_DB"]).read_bytes()
        proc = cli(places, hub, "run", "--data", "hf:nobody/nothing", "--agent", "oracle")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "hf:nobody/nothing" in line and "is not a dataset repository" in line
    assert Path(places["AGENTHOP_DB"]).read_bytes() == before


def test_without_a_store_a_failed_fetch_creates_none(places):
    with HubServer({}) as hub:
        proc = cli(places, hub, "run", "--data", "hf:nobody/nothing", "--agent", "oracle")
    assert proc.returncode == 2
    assert not Path(places["AGENTHOP_DB"]).exists()


def test_a_gated_repository_needs_a_token_which_is_never_stored(served_release, places):
    with HubServer({REPO: agenthop_repo(served_release, gated=True)}) as hub:
        refused = cli(places, hub, "items", "--data", SPEC, "--format", "json")
        allowed = cli(places, hub, "run", "--data", SPEC, "--agent", "oracle", "--limit", "2", HF_TOKEN=hub.token)
    assert refused.returncode == 2
    line = error_line(refused)
    assert SPEC in line and "gated" in line and "HF_TOKEN is not set" in line
    assert allowed.returncode == 0, allowed.stderr
    assert hub.token.encode() not in Path(places["AGENTHOP_DB"]).read_bytes()


def test_a_snapshot_without_the_release_files_is_one_line(places):
    commit = commit_id("card-only")
    with HubServer({"someone/cards": Repo({commit: dict(EXTRA)}, {"main": commit})}) as hub:
        proc = cli(places, hub, "run", "--data", "hf:someone/cards", "--agent", "oracle")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert "hf:someone/cards" in line and "qa/full.jsonl" in line and "paper_pool/papers.jsonl" in line
    assert not Path(places["AGENTHOP_DB"]).exists()


def test_offline_without_a_cached_snapshot_says_what_to_run(places):
    proc = cli(places, None, "items", "--data", SPEC, HF_HUB_OFFLINE="1")
    assert proc.returncode == 2
    line = error_line(proc)
    assert "HF_HUB_OFFLINE is set" in line
    assert f"`hf download --repo-type dataset {REPO} qa/full.jsonl" in line
    gone = cli(places, None, "items", "--data", SPEC + "@v1")
    assert gone.returncode == 2
    assert "cannot be reached" in error_line(gone) and "--revision v1" in error_line(gone)


def test_a_pinned_revision_is_the_one_fetched_and_recorded(served_release, places, tmp_path):
    small = synth.generate(tmp_path / "small", seed=1, preset="demo", items=12, papers=60)
    old, new = commit_id("v1"), commit_id("v2")
    repo = Repo({old: release_files(small), new: release_files(served_release)}, {"main": new, "v1": old})
    with HubServer({REPO: repo}) as hub:
        pinned = cli(places, hub, "run", "--data", SPEC + "@v1", "--agent", "oracle")
        unknown = cli(places, hub, "items", "--data", SPEC + "@v9")
    assert pinned.returncode == 0, pinned.stderr
    assert "run 'oracle-agenthop@v1': 12 planned" in pinned.stderr
    (run,) = stored_runs(places)
    assert (run["dataset"], run["dataset_revision"]) == (SPEC + "@v1", old)
    assert unknown.returncode == 2 and "has no revision 'v9'" in error_line(unknown)
    # the pinned commit serves with the Hub gone, as the tag does (the cache keeps the tag's commit), and so with
    # HF_HUB_OFFLINE set
    for spec, offline in ((f"hf:{REPO}@{old}", "0"), (SPEC + "@v1", "0"), (SPEC + "@v1", "1")):
        items = cli(places, None, "items", "--data", spec, "--format", "json", HF_HUB_OFFLINE=offline)
        assert items.returncode == 0, items.stderr
        assert len(json.loads(items.stdout)["items"]) == 12


def test_the_fingerprint_is_the_content_whatever_the_path(served_release, tmp_path):
    """The Hub's cache holds each file as a link to a blob named by its hash: the fingerprint follows the link."""
    linked = tmp_path / "linked"
    for rel, content in release_files(served_release).items():
        blob = tmp_path / "blobs" / rel.replace("/", "_")
        blob.parent.mkdir(parents=True, exist_ok=True)
        blob.write_bytes(content)
        (linked / rel).parent.mkdir(parents=True, exist_ok=True)
        (linked / rel).symlink_to(blob)
    assert fingerprint(linked, tmp_path / "c1") == fingerprint(served_release, tmp_path / "c2")
    corpus, _ = open_release(linked, tmp_path / "c3")
    assert corpus.fingerprint == fingerprint(served_release, tmp_path / "c2")
    corpus.close()


NAME = st.from_regex(r"[A-Za-z0-9]{1,8}(?:[._-][A-Za-z0-9]{1,8}){0,3}", fullmatch=True)


@settings(deadline=None)  # the first example compiles the patterns: slow on a busy machine, never wrong
@given(owner=NAME, name=NAME, revision=st.none() | st.from_regex(r"[A-Za-z0-9_./-]{1,30}", fullmatch=True))
def test_a_hub_spec_reads_back_as_written(owner, name, revision):
    spec = HubSpec(f"{owner}/{name}", revision)
    assert parse(spec.text) == spec
    assert hub_label(spec.text) == name + (f"@{revision}" if revision else "")


@settings(deadline=None)
@given(st.text(max_size=40))
def test_anything_else_is_a_dataset_error_never_a_crash(text):
    try:
        parsed = parse("hf:" + text)
    except DatasetError as exc:
        assert str(exc).startswith("hf:")
    else:
        assert parsed.text == ("hf:" + text).strip()


def test_a_run_reopens_at_its_commit_after_the_branch_moved(served_release, places, tmp_path):
    """The summary export reopens the run's dataset: at the commit the run recorded, not at where main is now."""
    small = synth.generate(tmp_path / "small", seed=1, preset="demo", items=12, papers=60)
    old, new = commit_id("before"), commit_id("after")
    repo = Repo({old: release_files(served_release), new: release_files(small)}, {"main": old})
    with HubServer({REPO: repo}) as hub:
        assert (
            cli(places, hub, "run", "--data", SPEC, "--agent", "oracle", "--run", "r", "--limit", "4").returncode == 0
        )
        repo.refs["main"] = new
        moved = cli(places, hub, "items", "--data", SPEC, "--format", "json")
        summary = cli(places, hub, "export", "r", "--format", "agenthop-summary")
    assert json.loads(moved.stdout)["total"] == 12  # the branch did move
    assert summary.returncode == 0, summary.stderr
    assert json.loads(summary.stdout)["total"] == 4  # the run's four items, of the release it ran on


def test_a_store_of_the_previous_schema_gains_the_hub_columns(tmp_path):
    from storage import Store
    from storage.schema import MIGRATIONS

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:
        for statement in ";".join(MIGRATIONS[:13]).split(";"):
            if statement.strip():
                db.execute(statement)
        db.execute("PRAGMA user_version = 13")
        db.execute(
            "INSERT INTO runs (name, agent, dataset, dataset_fingerprint, caps, config, identity, version, created_at) "
            "VALUES ('old', 'oracle', '/data/release', 'f', '{}', '{}', '{}', '1', '2026-01-01')"
        )
    store = Store(path)
    (run,) = store.runs()
    assert (run["dataset_repo"], run["dataset_revision"]) == (None, None)
    store.close()


def test_a_download_the_network_breaks_off_is_taken_up_again(served_release, places):
    """huggingface_hub retries a file whose connection dropped mid-way, asking with a Range for what follows the
    10 MB blocks it already holds (this file is smaller than one block: it comes again whole), and the release
    opens as if nothing happened."""
    repo = agenthop_repo(served_release)
    repo.cut.add("qa/full.jsonl")
    with HubServer({REPO: repo}) as hub:
        proc = cli(places, hub, "items", "--data", SPEC, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    size = len(release_files(served_release)["qa/full.jsonl"])
    gets = [r for r in hub.requests if r.method == "GET" and r.path.endswith("/qa/full.jsonl")]
    assert [r.range for r in gets] == [None, None] and size < 10 * 2**20
    assert json.loads(proc.stdout)["total"] == 60


def test_a_release_that_does_not_validate_names_the_file_and_line(served_release, places):
    files = release_files(served_release)
    lines = files["qa/full.jsonl"].decode().splitlines(keepends=True)
    lines[2] = lines[2].replace('"correct_index": ', '"correct_index": 7, "was": ', 1)
    files["qa/full.jsonl"] = "".join(lines).encode()
    commit = commit_id("broken")
    with HubServer({REPO: Repo({commit: files}, {"main": commit})}) as hub:
        proc = cli(places, hub, "run", "--data", SPEC, "--agent", "oracle")
    assert proc.returncode == 2
    line = error_line(proc)
    assert "qa/full.jsonl:3" in line and "correct_index" in line and "must be 0..3, got 7" in line
    assert not Path(places["AGENTHOP_DB"]).exists()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_on_a_terminal_the_download_is_a_bar_and_a_cached_release_draws_nothing():
    from workbench.cli.progress import FetchProgress
    from workbench.service.datasets import Fetching

    screen = Terminal()
    progress = FetchProgress(stream=screen)
    progress.update(Fetching(SPEC, 0, 4, 0, 0))  # every file cached: nothing is drawn
    assert progress.bar is None and screen.getvalue() == ""
    for done in range(1, 5):
        progress.update(Fetching(SPEC, done, 4, done * 1_000_000, 4_000_000))
    progress.close()
    drawn = screen.getvalue()
    assert SPEC in drawn and "4/4 files" in drawn and "4.0 MB" in drawn
    assert "files fetched" not in drawn  # the bar, not the lines written off a terminal
