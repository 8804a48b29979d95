"""The offline baselines on generated benchmarks: oracle 100%, random about 25%, heuristic clearly between."""

import asyncio

import pytest

from sandbox import synth
from sandbox.corpus import open_release
from sandbox.runner import Runner, RunSpec
from storage import Store
from workbench.service.reports import run_report


def run(corpus, store, agent, name, replicates=1, seed=0):
    spec = RunSpec(name=name, dataset="test", agent=agent, seed=seed, replicates=replicates, workers=4)
    asyncio.run(Runner(spec, corpus, store).run())
    return run_report(store, name)


@pytest.fixture(scope="module")
def other_corpus(tmp_path_factory):
    root = synth.generate(tmp_path_factory.mktemp("seed7") / "release", seed=7, preset="demo")
    corpus, _ = open_release(root, tmp_path_factory.mktemp("cache7"))
    return corpus


def test_oracle_refuses_gold_papers_without_their_arxiv_ids(demo_corpus):
    """Each gold paper is read by its arXiv id's labels: a list of arXiv ids that does not pair with the gold papers
    is a broken item, refused rather than planned without the unpaired papers."""
    from dataclasses import replace

    from sandbox.agents.oracle import OracleAgent

    item = next(i for i in demo_corpus.items if i.gold_arxiv_ids)
    with pytest.raises(ValueError, match="zip"):
        OracleAgent(replace(item, gold_arxiv_ids=item.gold_arxiv_ids[:-1]))


@pytest.mark.parametrize("which", ["demo_corpus", "other_corpus"])
def test_oracle_is_perfect(request, tmp_path, which):
    corpus = request.getfixturevalue(which)
    report = run(corpus, Store(tmp_path / "s.sqlite"), "oracle", "o")
    assert report["accuracy"] == 1.0 and report["n"] == 60
    assert report["axes"]["search"]["paper_recall"]["all"] == 1.0
    assert report["axes"]["search"]["section_recall"]["all"] == 1.0
    assert report["terminations"]["answer"] == 60


@pytest.mark.parametrize("which", ["demo_corpus", "other_corpus"])
def test_random_and_heuristic(request, tmp_path, which):
    corpus = request.getfixturevalue(which)
    store = Store(tmp_path / "s.sqlite")
    rand = run(corpus, store, "random", "r", replicates=5)
    assert 0.17 <= rand["accuracy"] <= 0.33  # 300 draws around 1/4
    heur = run(corpus, store, "heuristic", "h", replicates=2)
    assert rand["accuracy"] + 0.15 < heur["accuracy"] < 0.95
    assert 0 < heur["axes"]["search"]["paper_recall"]["all"] < 1


def test_heuristic_replicates_differ_but_are_reproducible(demo_corpus, tmp_path):
    store = Store(tmp_path / "s.sqlite")
    run(demo_corpus, store, "heuristic", "a", replicates=2)
    run(demo_corpus, store, "heuristic", "b", replicates=2)
    ta = store.trajectories(store.run("a")["id"])
    tb = store.trajectories(store.run("b")["id"])
    key = lambda t: (t["item_id"], t["replicate"])  # noqa: E731
    a = {key(t): t["tool_sequence"] for t in ta}
    b = {key(t): t["tool_sequence"] for t in tb}
    assert a == b  # same seed, same trajectories
    assert any(a[(i, 0)] != a[(i, 1)] for i, _ in a)  # replicates differ somewhere
