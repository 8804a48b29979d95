"""Campaigns: a panel as one TOML file, run as ordinary runs on their endpoints' lanes, resumed by the same command.

Real parts only: the CLI in this process, real HTTP servers on 127.0.0.1 (tests/openai_server.py) and a closed port
for an endpoint that refuses connections, real SQLite stores."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from storage import Store
from tests.cli_inprocess import batch
from tests.openai_server import FakeOpenAI, seed_of, tool_reply, turn_of
from tests.timing import TIMING, without_timing

CAMPAIGN_TIMING = TIMING | {"created_at", "elapsed_s"}  # a campaign's runs are created, and timed, apart
KEY = "CAMPAIGN_TEST_KEY"


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def brain(req, n):
    """Deterministic whatever the order of requests: the seed's references first, then an answer by the seed."""
    if turn_of(req) == 0:
        return tool_reply(("get_references", {"paper_id": seed_of(req)}), prompt_tokens=900, completion_tokens=30)
    letter = "ABCD"[len(seed_of(req)) % 4]
    return tool_reply(("submit_answer", {"answer": letter, "reasoning": "r"}), prompt_tokens=1500, completion_tokens=40)


def panel_file(path: Path, urls: dict[str, str], **top: str) -> Path:
    top = {"limit": "3", **top}
    lines = ['name = "p"', 'data = "builtin"', "workers = 2", *(f"{k} = {v}" for k, v in top.items())]
    lines += ["", "[runs]", 'ablations = ["full", "no-search"]', "replicates = 2", ""]
    for name, url in urls.items():
        lines += [
            "[[models]]",
            f'name = "{name}"',
            f'model = "openai/m-{name}"',
            f'base_url = "{url}"',
            f'api_key_env = "{KEY}"',
            "calls_in_flight = 2",
            "",
        ]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def report_json(capsys, db: Path, name: str) -> str:
    proc = batch(capsys, "report", name, "--db", str(db), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.dumps(without_timing(json.loads(proc.stdout), CAMPAIGN_TIMING), sort_keys=True)


def most_in_flight(server: FakeOpenAI) -> int:
    """The most requests the server was answering at once (its timings: arrival, reply)."""
    edges = sorted([(a, 1) for a, _ in server.timings] + [(b, -1) for _, b in server.timings])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def test_a_campaign_with_an_unreachable_endpoint_then_resumed(tmp_path, capsys, monkeypatch):
    """Three models, two ablations, two replicates: six runs. The third model's endpoint refuses connections: its
    runs stop (exit 3, named), the others finish, at once on their own endpoints and within their limit. Once the
    endpoint listens, the same command runs only what was missing; every run reports exactly as the same run made
    by `run` one by one."""
    monkeypatch.setenv(KEY, "x")
    db = tmp_path / "c.sqlite"
    port = closed_port()
    down = f"http://127.0.0.1:{port}/v1"
    with FakeOpenAI(brain, latency_s=0.02) as a, FakeOpenAI(brain, latency_s=0.02) as b:
        spec = panel_file(tmp_path / "panel.toml", {"a": a.url, "b": b.url, "c": down})
        proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))
        assert proc.returncode == 3, proc.stderr
        assert f"endpoint {down.rstrip('/')} is unreachable: not finished: p-c-full, p-c-no-search" in proc.stderr
        with Store(db, readonly=True) as store:
            status = {r["name"]: (r["status"], r["done"]) for r in store.runs()}
        assert status == {
            "p-a-full": ("done", 6),
            "p-a-no-search": ("done", 6),
            "p-b-full": ("done", 6),
            "p-b-no-search": ("done", 6),
            "p-c-full": ("interrupted", 0),  # the lane stopped at its first run: the second never started
        }
        # the two live endpoints at once, each within its two calls in flight
        (a0, a1), (b0, b1) = ((min(t for t, _ in s.timings), max(t for _, t in s.timings)) for s in (a, b))
        assert a0 < b1 and b0 < a1
        assert most_in_flight(a) <= 2 and most_in_flight(b) <= 2

        proc = batch(capsys, "campaign", "status", str(spec), "--db", str(db), "--format", "json")
        assert proc.returncode == 0
        left = {s["run"]: (s["done"], s["left"], s["status"]) for s in json.loads(proc.stdout)}
        assert left["p-a-full"] == (6, 0, "done") and left["p-c-full"] == (0, 6, "interrupted")
        assert left["p-c-no-search"] == (0, 6, "not started")

        seen = len(a.requests), len(b.requests)
        with FakeOpenAI(brain, port=port) as c:
            proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))
            assert proc.returncode == 0, proc.stderr
            assert (len(a.requests), len(b.requests)) == seen  # the finished runs were not touched
            assert "run 'p-a-" not in proc.stderr and "run 'p-b-" not in proc.stderr  # nor started again
            assert c.requests  # the missing ones ran
            assert "p-c-no-search" in proc.stdout  # the panel over the six runs
            # the same runs one by one, in another store
            alone = tmp_path / "alone.sqlite"
            for name, url in (("a", a.url), ("b", b.url), ("c", c.url)):
                for ablation in ("full", "no-search"):
                    proc = batch(
                        capsys,
                        "run",
                        "--agent",
                        "llm",
                        "--model",
                        f"openai/m-{name}",
                        "--base-url",
                        url,
                        "--api-key-env",
                        KEY,
                        "--concurrency",
                        "2",
                        "--ablation",
                        ablation,
                        "--replicates",
                        "2",
                        "--limit",
                        "3",
                        "--workers",
                        "2",
                        "--run",
                        f"p-{name}-{ablation}",
                        "--db",
                        str(alone),
                        "--quiet",
                        "--format",
                        "json",
                    )
                    assert proc.returncode == 0, proc.stderr
    for name in ("a", "b", "c"):
        for ablation in ("full", "no-search"):
            run = f"p-{name}-{ablation}"
            assert report_json(capsys, db, run) == report_json(capsys, alone, run), run


def scripted_file(path: Path, budget: int = 30, **extra: str) -> Path:
    lines = ['name = "s"', "limit = 4", "workers = 2", *(f"{k} = {v}" for k, v in extra.items())]
    lines += ["", "[caps]", f"budget = {budget}", "", "[runs]", 'ablations = ["full", "closed-book"]', ""]
    lines += ["[[models]]", 'name = "h"', 'agent = "heuristic"', "", "[[models]]", 'name = "o"', 'agent = "oracle"']
    lines += ["replicates = 2", ""]
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


def test_status_then_run_then_a_changed_run_refused(tmp_path, capsys):
    db = tmp_path / "s.sqlite"
    spec = scripted_file(tmp_path / "s.toml")
    proc = batch(capsys, "campaign", "status", str(spec), "--db", str(db), "--format", "json")
    assert proc.returncode == 0 and not db.exists()
    assert [(s["run"], s["planned"], s["status"]) for s in json.loads(proc.stdout)] == [
        ("s-h-full", 4, "not started"),
        ("s-h-closed-book", 4, "not started"),
        ("s-o-full", 8, "not started"),
        ("s-o-closed-book", 8, "not started"),
    ]
    proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    assert "campaign 's': runs 4/4 · episodes 24/24" in proc.stderr
    proc = batch(capsys, "campaign", "status", str(spec), "--db", str(db))
    assert "all 4 runs done" in proc.stdout
    with Store(db, readonly=True) as store:
        rows = store.runs()
    proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))  # again: nothing is left, nothing is touched
    assert proc.returncode == 0 and "s-o-closed-book" in proc.stdout  # the panel again
    assert "run 's-" not in proc.stderr  # no run was started again
    with Store(db, readonly=True) as store:
        assert store.runs() == rows
    before = db.read_bytes()
    changed = scripted_file(tmp_path / "changed.toml", budget=12)
    proc = batch(capsys, "campaign", "run", str(changed), "--db", str(db))
    assert proc.returncode == 2
    assert (
        "error: run 's-h-full' exists with a different configuration (caps differs): keep the run's settings in the "
        "campaign file to resume it"
    ) in proc.stderr
    assert db.read_bytes() == before


@pytest.mark.parametrize(
    "text, where",
    [
        ('name = "x"\nlimit = \n', ":2: not TOML"),
        ('name = "x"\nlimt = 3\n[[models]]\nname = "h"\nagent = "heuristic"\n', ":2: limt: unknown key"),
        (
            'name = "x"\n[[models]]\nname = "m"\nmodel = "openai/x"\ntemperature = "hot"\n',
            ":5: models[1].temperature: must be a number",
        ),
        (
            'name = "x"\n[runs]\nablations = ["full", "open-book"]\n[[models]]\nname = "h"\nagent = "heuristic"\n',
            ":3: runs.ablations: unknown 'open-book'",
        ),
        (
            'name = "x"\n[[models]]\nname = "m"\nmodel = "openai/x"\ntemperature = 5.0\n',
            ":5: models[1].temperature (run 'x-m-full'):",
        ),
        (
            'name = "x"\n[[models]]\nname = "a"\nmodel = "openai/a"\nbase_url = "http://h/v1"\ncalls_in_flight = 4\n'
            '[[models]]\nname = "b"\nmodel = "openai/b"\nbase_url = "http://h/v1"\ncalls_in_flight = 8\n',
            ":11: models[2].calls_in_flight: 8, but models[1] gives its endpoint http://h/v1 4",
        ),
        ('name = "x"\n[[models]]\nagent = "heuristic"\n', ":2: models[1]: 'name' is needed"),
        (
            'name = "x"\n[[models]]\nname = "h"\nagent = "heuristic"\n[[sweeps]]\nmodels = ["q"]\ngrid = "2k,4k"\n',
            ":6: sweeps[1].models: no model named 'q'",
        ),
    ],
)
def test_a_bad_campaign_file_names_its_line_and_key_and_runs_nothing(tmp_path, capsys, text, where):
    spec = tmp_path / "bad.toml"
    spec.write_text(text, encoding="utf-8")
    db = tmp_path / "never.sqlite"
    proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))
    assert proc.returncode == 2, proc.stderr
    assert f"error: {spec}{where}" in proc.stderr
    assert not db.exists()


def test_init_writes_an_example_that_plans(tmp_path, capsys):
    from workbench.service.campaign import load_campaign, plan_campaign

    out = tmp_path / "panel.toml"
    assert batch(capsys, "campaign", "init", str(out)).returncode == 0
    plan = plan_campaign(load_campaign(out))
    assert "panel-gpt41-no-search" in plan.panel_runs() and "panel-qwen3-8b-tokens@16k" in [r.name for r in plan.runs]
    assert {r.endpoint for r in plan.runs} == {"openai", "http://127.0.0.1:8000/v1", "scripted"}
    proc = batch(capsys, "campaign", "init", str(out))
    assert proc.returncode == 2 and "exists" in proc.stderr


def test_shards_of_a_campaign_merge_into_the_whole(tmp_path, capsys):
    spec = scripted_file(tmp_path / "s.toml")
    for i in (1, 2):
        proc = batch(capsys, "campaign", "run", str(spec), "--db", str(tmp_path / f"h{i}.sqlite"), "--shard", f"{i}/2")
        assert proc.returncode == 0, proc.stderr
    whole = tmp_path / "all.sqlite"
    assert (
        batch(capsys, "merge", str(tmp_path / "h1.sqlite"), str(tmp_path / "h2.sqlite"), "--db", str(whole)).returncode
        == 0
    )
    proc = batch(capsys, "campaign", "status", str(spec), "--db", str(whole), "--format", "json")
    assert all(s["status"] == "done" and s["left"] == 0 for s in json.loads(proc.stdout))


def test_a_shards_store_refuses_the_whole_campaign_and_another_shard(tmp_path, capsys):
    """A store made as shard 1/2 holds that shard's episodes: running the whole campaign (or shard 2/2) in it would
    mix the parts (the shard is not part of a run's identity), so it is refused before anything runs."""
    spec = scripted_file(tmp_path / "s.toml")
    store = tmp_path / "h1.sqlite"
    assert batch(capsys, "campaign", "run", str(spec), "--db", str(store), "--shard", "1/2").returncode == 0
    before = store.read_bytes()
    for shard in ((), ("--shard", "2/2")):
        proc = batch(capsys, "campaign", "run", str(spec), "--db", str(store), *shard)
        assert proc.returncode == 2 and "as shard 1/2" in proc.stderr, proc.stderr
    assert store.read_bytes() == before
    assert batch(capsys, "campaign", "run", str(spec), "--db", str(store), "--shard", "1/2").returncode == 0


def test_the_docs_panel_is_reproduced_from_its_file(tmp_path, capsys):
    """docs/campaigns.md's panel is what its campaign file makes, row for row."""
    section = (Path(__file__).resolve().parents[1] / "docs" / "campaigns.md").read_text(encoding="utf-8")
    section = section.split("## A panel from one file", 1)[1]
    spec = tmp_path / "baselines.toml"
    spec.write_text(section.split("```toml\n", 1)[1].split("```", 1)[0], encoding="utf-8")
    documented = [line for line in section.splitlines() if line.startswith("| baselines-")]
    proc = batch(capsys, "campaign", "run", str(spec), "--db", str(tmp_path / "d.sqlite"), "--format", "markdown")
    assert proc.returncode == 0, proc.stderr
    assert len(documented) == 6
    made = [line for line in proc.stdout.splitlines() if line.startswith("| baselines-")]
    assert made[: len(documented)] == documented  # the first table's rows (the further tables' follow)


def test_ctrl_c_exits_130_and_the_same_command_resumes(tmp_path, monkeypatch):
    """A campaign in a child process, interrupted by SIGINT once episodes are stored: exit 130, its runs
    interrupted; the same command finishes them."""
    import os
    import signal
    import subprocess
    import sys
    import time

    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, KEY: "x", "PYTHONPATH": str(root)}
    db = tmp_path / "c.sqlite"
    with FakeOpenAI(brain, latency_s=0.05) as a:
        spec = panel_file(tmp_path / "panel.toml", {"a": a.url}, limit="8")
        command = [sys.executable, "-m", "workbench.cli", "--batch", "campaign", "run", str(spec), "--db", str(db)]
        child = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while len(a.timings) < 4 and time.monotonic() < deadline and child.poll() is None:
            time.sleep(0.01)  # polling a condition with a deadline, not a timing
        child.send_signal(signal.SIGINT)
        _, err = child.communicate(timeout=60)
        assert child.returncode == 130, err
        assert "interrupted" in err
        with Store(db, readonly=True) as store:
            assert {r["status"] for r in store.runs()} == {"interrupted"}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        with Store(db, readonly=True) as store:
            assert [(r["status"], r["done"]) for r in store.runs()] == [("done", 16), ("done", 16)]


def test_a_campaigns_sweep_and_parallel_study_are_scales_runs_and_tables(tmp_path, capsys):
    """A sweep and a parallel study in the file: their runs are the ones `scale sequential` / `scale parallel`
    make (same names, same groups), and the campaign ends with their tables after the panel."""
    spec = tmp_path / "study.toml"
    spec.write_text(
        'name = "t"\nlimit = 4\n\n[[models]]\nname = "h"\nagent = "heuristic"\n\n[[models]]\nname = "r"\n'
        'agent = "random"\n\n[[sweeps]]\nmodels = ["h"]\naxis = "points"\ngrid = "10,20"\n\n'
        '[[parallel]]\nmodels = ["h"]\nk = "1,2"\n',
        encoding="utf-8",
    )
    db = tmp_path / "c.sqlite"
    proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))
    assert proc.returncode == 0, proc.stderr
    with Store(db, readonly=True) as store:
        runs = {r["name"]: (r["kind"], r["group_name"], r["replicates"]) for r in store.runs()}
    assert runs == {
        "t-h-full": ("eval", None, 1),
        "t-r-full": ("eval", None, 1),
        "t-h-points@10": ("sequential", "t-h-points", 1),
        "t-h-points@20": ("sequential", "t-h-points", 1),
        "t-h-k2": ("parallel", None, 2),
    }
    assert (
        "panel · 2 runs" in proc.stdout and "plateau: k* =" in proc.stdout and "t-h-k2 · 4 items · K = 2" in proc.stdout
    )
    # the sweep is the one `scale sequential` makes: the same command on the same store finds nothing to do
    scale = batch(
        capsys,
        "scale",
        "sequential",
        "--axis",
        "points",
        "--grid",
        "10,20",
        "--run",
        "t-h-points",
        "--limit",
        "4",
        "--workers",
        "8",
        "--db",
        str(db),
        "--quiet",
        "--boot",
        "200",
    )
    assert scale.returncode == 0, scale.stderr
    with Store(db, readonly=True) as store:
        assert len(store.runs()) == 5
    report = batch(capsys, "campaign", "report", str(spec), "--db", str(db), "--quiet")  # the tables again
    assert report.returncode == 0 and "panel · 2 runs" in report.stdout and "plateau: k* =" in report.stdout


def test_a_run_in_progress_elsewhere_is_refused_before_anything_runs(tmp_path, capsys):
    from workbench.service.stores import run_lock

    db = tmp_path / "s.sqlite"
    spec = scripted_file(tmp_path / "s.toml")
    assert batch(capsys, "campaign", "status", str(spec), "--db", str(db)).returncode == 0
    Store(db).close()
    with run_lock(db, "s-o-full"):  # as another process executing that run holds it
        proc = batch(capsys, "campaign", "run", str(spec), "--db", str(db))
    assert proc.returncode == 2
    assert f"run 's-o-full' is in progress in another process (pid {os.getpid()})" in proc.stderr
    with Store(db, readonly=True) as store:
        assert store.runs() == []


def test_the_progress_line_is_rewritten_in_place_on_a_terminal():
    """On a terminal the campaign's totals are one line rewritten in place, a run's end said above it."""
    import io

    from sandbox.runner import RunEvent
    from workbench.cli.progress import CampaignProgress
    from workbench.service.campaign import RunState

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Terminal()
    states = [RunState("c-h-full", "h", "scripted", "run", 2, 0, "not started")]
    progress = CampaignProgress("c", states, stream=stream)
    progress.update("c-h-full", RunEvent("started", planned=2))
    result = {"status": "done", "done": 2, "planned": 2, "stop_reason": None}
    progress.update("c-h-full", RunEvent("finished", done=2, planned=2))
    progress.ended("c-h-full", result)
    progress.close()
    text = stream.getvalue()
    assert text.startswith("campaign 'c': 1 runs, 2 episodes, 0 already done\n")
    assert "\r\x1b[Krun 'c-h-full': done, 2/2\n" in text
    assert text.endswith("\r\x1b[Kcampaign 'c': runs 1/1 · episodes 2/2 · tokens 0 · cost — · done\n")
