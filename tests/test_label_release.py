"""A release parsed the ar5iv way, built by hand (not by synth): subsection titles inline in a parent's paragraph,
roman (`III-B`) and appendix (`Apdx_A.1:`) numbering, labels without an arXiv id, null years. Its labels resolve
as the authors' audit pipeline resolves them (docs/protocol.md "Section labels"), and a perfect oracle gets section recall 1.0."""

import asyncio

import pytest

from sandbox.corpus import open_release
from sandbox.runner import Runner, RunSpec
from storage import Store
from tests.conftest import write_release
from workbench.service.reports import run_report

SEED, G1, G2, G3, G4, META = ("1" * 40, "2" * 40, "3" * 40, "4" * 40, "5" * 40, "6" * 40)
ARX = {SEED: "2301.00001", G1: "2101.00001", G2: "2102.00002", G3: "2103.00003", G4: "2104.00004"}

PAPERS = [
    {"arxiv_id": ARX[SEED], "title": "Seed", "sections": [{"header": "1 Introduction", "text": "We build on all."}]},
    {
        "arxiv_id": ARX[G1],
        "title": "Decomposer",
        "sections": [
            {"header": "1 Introduction", "text": "We study signals. Our frequency-domain decomposition is new."},
            {
                "header": "3 Method",
                "text": "We first describe the pipeline. 3.1 Overview The model has two parts. "
                "3.2 Frequency-Domain Decomposition We split the signal into bands, which "
                "preserves phase. 3.3 Band Gating Each band is gated.",
            },
            {"header": "4 Experiments", "text": "Three seeds."},
        ],
    },
    {
        "arxiv_id": ARX[G2],
        "title": "Roman Gates",
        "sections": [
            {"header": "I Introduction", "text": "Gates matter."},
            {"header": "II Related Work", "text": "Prior gates."},
            {
                "header": "III Method",
                "text": "Overview of the approach. III-A Setup We use bands. III-B Spectral Gating "
                "Networks Gates are learnt per band, which keeps phase.",
            },
            {"header": "IV Results", "text": "Better."},
        ],
    },
    {
        "arxiv_id": ARX[G3],
        "title": "Bounds",
        "sections": [
            {"header": "1 Introduction", "text": "Bounds."},
            {
                "header": "Apdx_A: Proofs",
                "text": "We collect the proofs. Apdx_A.1: Proof of Lemma 2 The bound follows "
                "from phase preservation.\nApdx_A.2: Proof of Lemma 3 Similar.",
            },
        ],
    },
    {
        "arxiv_id": ARX[G4],
        "title": "Gating Method",
        "sections": [
            {"header": "1 Introduction", "text": "Intro."},
            {"header": "2 Spectral Gating Method", "text": "Gates keep phase."},
            {"header": "3 Results", "text": "Good."},
        ],
    },
]


def _node(title, arx, **extra):
    return {"title": title, "arxivId": arx, "abstract": f"{title} abstract", **extra}


NODES = {
    SEED: _node("Seed", ARX[SEED], year=2023),
    G1: _node("Decomposer", ARX[G1], year=None),
    G2: _node("Roman Gates", ARX[G2], year=2021),
    G3: _node("Bounds", ARX[G3]),  # no year key at all
    G4: _node("Gating Method", ARX[G4], year=None),
    META: _node("Workshop", "", year=None),
}


def _item(item_id, golds, qtype="single-target"):
    return {
        "id": item_id,
        "question_type": qtype,
        "depth": 1,
        "question": f"What does {item_id} ask?",
        "options": ["right", "wrong a", "wrong b", "wrong c"],
        "correct_index": 0,
        "seed_paper_id": SEED,
        "gold_paper_ids": golds,
    }


def _labels(item_id, rows):
    return {
        "sample_id": item_id,
        "analysis": {
            "section_recall_labels": [
                {"paper": "p", "arxiv_id": arx, "section": section, "relevance": rel} for arx, section, rel in rows
            ]
        },
    }


QA = [_item("st_0001", [G1]), _item("st_0002", [G2]), _item("mt_0001", [G3, G4], "multi-target")]
LABELS = [
    _labels(
        "st_0001",
        [
            (ARX[G1], "3.2 Frequency-Domain Decomposition", "direct"),
            (ARX[G1], "Experiments", "supporting"),
            ("", "Related Work", "supporting"),
        ],
    ),  # no arXiv id: reported, not dropped
    _labels(
        "st_0002",
        [
            (ARX[G2], "III-B Spectral Gating Networks", "direct"),
            (ARX[G2], "Nonexistent Appendix Section", "supporting"),
        ],
    ),
    _labels(
        "mt_0001", [(ARX[G3], "Apdx_A.1: Proof of Lemma 2", "direct"), (ARX[G4], "Gating Method Analysis", "direct")]
    ),
]

EXPECTED = {  # (item, label) → (section index, method)
    ("st_0001", "3.2 Frequency-Domain Decomposition"): (1, "body_heading"),
    ("st_0001", "Experiments"): (2, "normalised"),
    ("st_0001", "Related Work"): (None, "unknown_paper"),
    ("st_0002", "III-B Spectral Gating Networks"): (2, "body_heading"),
    ("st_0002", "Nonexistent Appendix Section"): (None, "unresolved"),
    ("mt_0001", "Apdx_A.1: Proof of Lemma 2"): (1, "body_heading"),
    ("mt_0001", "Gating Method Analysis"): (1, "word_overlap"),
}


@pytest.fixture
def ar5iv_corpus(tmp_path):
    graphs = [{"sample_id": q["id"], "nodes": NODES, "edges": {SEED: [G1, G2, G3, G4, META]}} for q in QA]
    root = write_release(tmp_path / "ar5iv", QA, graphs, PAPERS, LABELS)
    corpus, report = open_release(root, tmp_path / "cache")
    yield corpus, report
    corpus.close()


def test_every_label_records_its_section_and_method(ar5iv_corpus):
    corpus, report = ar5iv_corpus
    got = {(item.id, lab.section): (lab.section_index, lab.method) for item in corpus.items for lab in item.labels}
    assert got == EXPECTED
    assert (report.labels, report.labels_resolved) == (7, 5)
    assert report.label_warnings == {"empty_arxiv_id": 1, "unresolved_section": 1}
    assert corpus.label_resolution == "2"


def test_the_oracle_gets_section_recall_one(ar5iv_corpus, tmp_path):
    corpus, _ = ar5iv_corpus
    store = Store(tmp_path / "s.sqlite")
    asyncio.run(Runner(RunSpec(name="o", dataset="test", agent="oracle"), corpus, store).run())
    report = run_report(store, "o")
    assert report["axes"]["search"]["section_recall"]["all"] == 1.0
    assert report["axes"]["search"]["paper_recall"]["all"] == 1.0 and report["accuracy"] == 1.0


def test_null_years_stay_null_through_the_import(ar5iv_corpus):
    corpus, _ = ar5iv_corpus
    nodes = corpus.view(corpus.item("st_0001")).nodes
    assert nodes[G1].data["year"] is None and "year" not in nodes[G3].data and nodes[SEED].data["year"] == 2023


def test_audit_show_and_items_show_each_labels_section_and_rule(tmp_path, capsys):
    import json

    from workbench.cli import main

    graphs = [{"sample_id": q["id"], "nodes": NODES, "edges": {SEED: [G1, G2, G3, G4, META]}} for q in QA]
    root = write_release(tmp_path / "ar5iv", QA, graphs, PAPERS, LABELS)
    assert main(["--batch", "audit", "show", "st_0001", "--data", str(root)]) == 0
    sheet = json.loads(capsys.readouterr().out)
    assert [(lab["label"], lab["resolved"], lab["method"]) for lab in sheet["labels"]] == [
        ("3.2 Frequency-Domain Decomposition", "(B) 3 Method", "body_heading"),
        ("Experiments", "(C) 4 Experiments", "normalised"),
        ("Related Work", None, "unknown_paper"),
    ]
    assert main(["--batch", "items", "--data", str(root), "--show", "mt_0001", "--format", "json"]) == 0
    detail = json.loads(capsys.readouterr().out)
    assert [(lab["resolved"], lab["method"]) for lab in detail["labels"]] == [
        ("(B) Apdx_A: Proofs", "body_heading"),
        ("(B) 2 Spectral Gating Method", "word_overlap"),
    ]
    assert main(["--batch", "items", "--data", str(root), "--show", "st_0002"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "direct · 2102.00002 · 'III-B Spectral Gating Networks' → (C) III Method (body_heading)" in text
    assert "supporting · 2102.00002 · 'Nonexistent Appendix Section' → no section (unresolved)" in text
