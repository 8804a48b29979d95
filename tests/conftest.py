"""Shared fixtures: a generated benchmark, a hand-made release with the reference's edge cases, tmp locations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox import synth
from sandbox.corpus import open_release


@pytest.hookimpl(optionalhook=True)  # an xdist hook: without xdist (`-p no:xdist`) it is simply not called
def pytest_xdist_auto_num_workers(config) -> int:
    """`pytest -n auto` starts two workers per core, not one: many tests spend wall time waiting (Pilot timers, the
    HTTP and MCP servers, child processes), so one worker per core leaves cores idle. Measured on 2 cores: 5:07 with
    2 workers (1.4 cores busy), 4:23 with 4."""
    import os

    return 2 * (os.cpu_count() or 1)


def pytest_configure(config) -> None:
    """With workers, tests are handed out by work stealing rather than in fixed chunks, so both cores stay busy to
    the end (the longest tests no longer finish alone). Set here rather than in addopts, where `--dist` would break
    `pytest -p no:xdist`.

    And the garbage collector runs less often. A test process soon holds ~300,000 long-lived objects (Textual's and
    Rich's bounded caches of strips, segments and styles fill up over the first tests), and each app a test starts
    promotes enough objects that, at Python's default thresholds (700, 10, 10), a full collection over all of them ran
    every test or two: a fifth of the Pilot tests' CPU (tests/tui/test_pilot.py alone: 45 full collections, 8 of its
    33 CPU seconds). With a larger first threshold most of an app's objects die before they are ever promoted.
    Nothing is collected later than a test could notice: the suite does not depend on when cycles are freed."""
    if getattr(config.option, "dist", "no") == "load":
        config.option.dist = "worksteal"
    import gc

    gc.set_threshold(10_000, 10, 10)  # as the TUI's own process does (workbench.tui.app.GC_FIRST_THRESHOLD)


@pytest.fixture(scope="session", autouse=True)
def _css_parsed_once() -> None:
    """Each Textual stylesheet is parsed once per test process, not again by every app (see the helper)."""
    from tests.textual_private import share_parsed_css

    share_parsed_css()


@pytest.fixture(scope="session")
def shared_cache(tmp_path_factory) -> Path:
    """One corpus cache per test process: the built-in benchmark is generated and imported into it once (a quarter
    second per test that runs on it otherwise), as the TUI tests' `builtin_cache`. A test of what a first import
    does or says gives itself a fresh cache."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def _isolated_locations(tmp_path, monkeypatch, shared_cache):
    """No test ever writes to the user's real store, cache or config."""
    monkeypatch.setenv("AGENTHOP_DB", str(tmp_path / "store.sqlite"))
    monkeypatch.setenv("AGENTHOP_CACHE", str(shared_cache))
    monkeypatch.setenv("AGENTHOP_CONFIG", str(tmp_path / "config.toml"))
    monkeypatch.setenv("AGENTHOP_STATE", str(tmp_path / "state.toml"))


@pytest.fixture
def fresh_cache(tmp_path, monkeypatch) -> Path:
    """An empty corpus cache of this test's own: for what a first import does or says."""
    monkeypatch.setenv("AGENTHOP_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture(scope="session")
def demo_dir(tmp_path_factory) -> Path:
    return synth.generate(tmp_path_factory.mktemp("demo") / "release", seed=0, preset="demo")


@pytest.fixture(scope="session")
def demo_corpus(demo_dir, tmp_path_factory):
    corpus, _ = open_release(demo_dir, tmp_path_factory.mktemp("democache"))
    yield corpus
    corpus.close()


def write_release(root: Path, qa: list[dict], graphs: list[dict], papers: list[dict], labels: list[dict]) -> Path:
    files = {
        "qa/full.jsonl": qa,
        "graphs/full.jsonl": graphs,
        "paper_pool/papers.jsonl": papers,
        "audit/recall_labels.jsonl": labels,
    }
    for rel, rows in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return root


S = "a" * 40  # seed
B = "b" * 40  # bridge
G = "c" * 40  # gold
M = "d" * 40  # metadata-only, empty abstract, null year
N = "e" * 40  # node without title/year/authors keys, arXiv id not in the pool
R = "f" * 40  # roman-numbered paper


def mini_rows() -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    """One depth-2 single-target item over six papers that exercise every formatting edge case."""
    qa = [
        {
            "id": "st_0001",
            "question_type": "single-target",
            "depth": 2,
            "reasoning_type": "METHOD",
            "cognitive_skill": "reason",
            "venue": "ICLR",
            "consensus_tier": "silver",
            "question": "Why does the decomposition [work] in the frequency domain?",
            "options": ["Because of speed", "Because it preserves phase", "Because of memory", "Because of data"],
            "correct_index": 1,
            "distractor_types": ["no_context", "correct", "seed_only", "wrong_paper"],
            "seed_paper_id": S,
            "seed_arxiv_id": "2305.01234",
            "seed_title": "Seed Paper Title",
            "gold_paper_ids": [G],
            "gold_arxiv_ids": ["2104.05678"],
            "bridge_paper_ids": [B],
            "bridge_arxiv_ids": ["2202.00001"],
            "filter_agreement": 3,
        }
    ]
    graphs = [
        {
            "sample_id": "st_0001",
            "nodes": {
                S: {
                    "title": "Seed Paper Title",
                    "arxivId": "2305.01234",
                    "year": 2023,
                    "abstract": "We study frequency decomposition.",
                    "authors": [{"name": "Ada Lovelace"}, {"name": "Alan Turing"}, {"name": "Grace Hopper"}],
                },
                B: {
                    "title": "Bridge Paper",
                    "arxivId": "2202.00001",
                    "year": 2022,
                    "abstract": "x" * 350,
                    "authors": [{"name": "Ada Lovelace"}, {"name": "Alan Turing"}],
                },
                G: {
                    "title": "Target Paper",
                    "arxivId": "2104.05678",
                    "year": 2021,
                    "abstract": "Frequency domain decomposition.",
                    "authors": [{"name": "Grace Hopper"}, {}],
                },
                M: {"title": "A Non-arXiv Workshop Paper", "arxivId": "", "year": None, "abstract": ""},
                N: {"arxivId": "1901.99999", "abstract": "Frequency frequency analysis"},
                R: {"title": "Roman Paper", "arxivId": "1811.00042", "year": 2018, "abstract": "roman numerals"},
            },
            "edges": {S: [B, M, R], B: [G, N]},
        }
    ]
    papers = [
        {
            "arxiv_id": "2305.01234",
            "title": "Seed Paper Title",
            "sections": [
                {"header": "1 Introduction", "text": "We adopt a decomposition."},
                {"header": "2 Related Work", "text": "Prior work."},
            ],
        },
        {"arxiv_id": "2202.00001", "title": "Bridge Paper", "sections": [{"header": "Abstract", "text": "Bridge."}]},
        {
            "arxiv_id": "2104.05678",
            "title": "Target Paper",
            "sections": [
                {"header": "1 Introduction", "text": "Intro text."},
                {
                    "header": "3 Method",
                    "text": "Overview.\n3.2 Frequency-Domain Decomposition\nWe decompose because it preserves phase.",
                },
                {"header": "3.1 Method Details", "text": "Details."},
                {"header": "Apdx_A: Proofs", "text": "Proof."},
                {"text": "Headerless section."},
            ],
        },
        {
            "arxiv_id": "1811.00042",
            "title": "Roman Paper",
            "sections": [{"header": f"Section Header {i}", "text": f"body {i}"} for i in range(8)]
            + [{"header": "IV Method", "text": "roman method"}, {"header": "IV-B Details", "text": "roman details"}],
        },
    ]
    labels = [
        {
            "sample_id": "st_0001",
            "analysis": {
                "section_recall_labels": [
                    {
                        "paper": "Target Paper",
                        "arxiv_id": "2104.05678",
                        "section": "3.2 Frequency-Domain Decomposition",
                        "relevance": "direct",
                        "what_it_contains": "rationale",
                    },
                    {
                        "paper": "Seed Paper Title",
                        "arxiv_id": "2305.01234",
                        "section": "2 Related Work",
                        "relevance": "supporting",
                    },
                    {"paper": "Seed", "arxiv_id": "", "section": "1 Introduction", "relevance": "supporting"},
                    {
                        "paper": "Garbled",
                        "arxiv_id": "We decompose because it preserves phase.",
                        "section": "x",
                        "relevance": "direct",
                    },
                ]
            },
        }
    ]
    return qa, graphs, papers, labels


@pytest.fixture
def mini_dir(tmp_path) -> Path:
    return write_release(tmp_path / "mini", *mini_rows())


@pytest.fixture
def mini_corpus(mini_dir, tmp_path):
    corpus, _report = open_release(mini_dir, tmp_path / "minicache")
    yield corpus
    corpus.close()
