"""Every tool output against the reference harness's texts (docs/protocol.md#rules), character for character, on a hand-made release."""

import pytest

from sandbox.tools import Listed, available_sections, info_title, listed_papers, listed_sections, run_tool
from tests.conftest import B, G, M, N, R, S


@pytest.fixture
def view(mini_corpus):
    return mini_corpus.view(mini_corpus.item("st_0001"))


def out(view, name, **args):
    return run_tool(view, name, args).text


def test_get_paper_info(view):
    assert out(view, "get_paper_info", paper_id=S) == (
        "Title: Seed Paper Title\nAuthors: Ada Lovelace, Alan Turing, Grace Hopper\nYear: 2023\n"
        "Abstract: We study frequency decomposition.\nFull text available: Yes"
    )
    assert out(view, "get_paper_info", paper_id=M) == (
        "Title: A Non-arXiv Workshop Paper\nAuthors: Unknown\nYear: None\nAbstract: (not available)\n"
        "Full text available: No"
    )
    assert out(view, "get_paper_info", paper_id=N) == (
        "Title: Unknown\nAuthors: Unknown\nYear: Unknown\nAbstract: Frequency frequency analysis\nFull text available: No"
    )
    assert (
        out(view, "get_paper_info", paper_id="2104.05678")
        == "Paper '2104.05678' not found in the available paper pool."
    )


def test_get_references(view):
    assert out(view, "get_references", paper_id=S) == (
        f"References for paper '{S}' (3 papers):\n\n"
        f"  [1] {B}\n      Title: Bridge Paper\n      Authors: Ada Lovelace and Alan Turing (2022)\n      Full text: Available\n"
        f"  [2] {M}\n      Title: A Non-arXiv Workshop Paper\n      Authors: Unknown (None)\n      Full text: Not available\n"
        f"  [3] {R}\n      Title: Roman Paper\n      Authors: Unknown (2018)\n      Full text: Available"
    )
    assert (
        out(view, "get_references", paper_id=G)
        == "No references found for this paper (or references not available in pool)."
    )


def test_search_papers_overlap_ties_and_truncation(view):
    text = out(view, "search_papers", query="Frequency DECOMPOSITION frequency", top_k=2)
    # S and G both match 2 distinct tokens; ties keep graph order; N matches one
    assert text == (
        "Search results for 'Frequency DECOMPOSITION frequency' (2 matches):\n\n"
        f"  [1] {S}\n      Title: Seed Paper Title\n      Authors: Ada Lovelace et al. (2023)\n"
        "      Abstract: We study frequency decomposition.\n      Full text: Available\n"
        f"  [2] {G}\n      Title: Target Paper\n      Authors: Grace Hopper (2021)\n"
        "      Abstract: Frequency domain decomposition.\n      Full text: Available"
    )
    assert out(view, "search_papers", query="bridge", top_k=99).startswith("Search results for 'bridge' (1 matches):")
    assert ("x" * 300 + "...") in out(view, "search_papers", query="bridge")
    assert out(view, "search_papers", query="!!") == "Empty query. Please provide search keywords."
    assert out(view, "search_papers", query="zzzz") == "No papers found matching 'zzzz'."
    assert out(view, "search_papers", query="workshop", top_k=0).startswith("Search results for 'workshop' (1 matches)")


def test_list_sections(view):
    assert out(view, "list_sections", paper_id=G) == (
        f"Sections for paper '{G}' (5 sections):\n\n  (A) 1 Introduction (11 chars)\n"
        "  (B) 3 Method (85 chars)\n  (C) 3.1 Method Details (8 chars)\n  (D) Apdx_A: Proofs (6 chars)\n"
        "  (E) Section 5 (19 chars)"
    )
    assert out(view, "list_sections", paper_id=M) == (
        f"Full text not available for paper '{M}'. Only abstract is available via get_paper_info."
    )
    assert out(view, "list_sections", paper_id=N).startswith("Full text not available")


def test_read_section(view):
    assert out(view, "read_section", paper_id=G, section="(b)") == (
        "=== 3 Method ===\n\nOverview.\n3.2 Frequency-Domain Decomposition\nWe decompose because it preserves phase."
    )
    assert out(view, "read_section", paper_id=G, section="proofs").startswith("=== Apdx_A: Proofs ===")
    assert out(view, "read_section", paper_id=G, section="Method") == (
        "=== 3 Method ===\n\nOverview.\n3.2 Frequency-Domain Decomposition\nWe decompose because it preserves phase."
    )
    assert out(view, "read_section", paper_id=G, section="Meth") == (
        f"Section 'Meth' not found in paper '{G}'.\nAvailable sections: (A) 1 Introduction; (B) 3 Method; "
        "(C) 3.1 Method Details; (D) Apdx_A: Proofs; (E) Section 5"
    )
    assert out(view, "read_section", paper_id=M, section="A") == f"Full text not available for paper '{M}'."
    assert out(view, "read_section", paper_id=R, section="I").startswith("=== IV Method ===")  # alias quirk


def test_errors_and_free_tools(view):
    assert (
        out(view, "read_section", paper_id=G) == "Error calling read_section: Missing or invalid parameter — 'section'"
    )
    assert out(view, "get_paper_info") == "Error calling get_paper_info: Missing or invalid parameter — 'paper_id'"
    assert out(view, "search_papers", query=5).startswith(
        "Error calling search_papers: Missing or invalid parameter — "
    )
    assert out(view, "search_papers", query="x", top_k=None).startswith("Error calling search_papers:")
    assert out(view, "get_paper_info", paper_id=["x"]).startswith("Error calling get_paper_info:")
    assert out(view, "think", reasoning="hmm") == "Noted."
    assert out(view, "submit_answer", answer="B", reasoning="r") == "Answer submitted: B"
    assert (
        out(view, "submit_answer", reasoning="r")
        == "Error calling submit_answer: Missing or invalid parameter — 'answer'"
    )
    assert run_tool(view, "keyword_search", {"query": "x"}).text == "Unknown tool: keyword_search"
    assert run_tool(view, "get_paper_info", {"_raw": "{bad json"}).text == (
        "Error calling get_paper_info: Missing or invalid parameter — 'paper_id'"
    )


def test_reads_report_their_resolved_section(view):
    outcome = run_tool(view, "read_section", {"paper_id": G, "section": "B"})
    assert (outcome.arxiv_id, outcome.section_index, outcome.delivered) == ("2104.05678", 1, True)
    assert not run_tool(view, "read_section", {"paper_id": G, "section": "Meth"}).delivered


def test_labels_resolved_at_import(mini_corpus):
    item = mini_corpus.item("st_0001")
    direct = [lab for lab in item.labels if lab.relevance == "direct" and lab.arxiv_id == "2104.05678"]
    assert [(lab.section_index, lab.method) for lab in direct] == [(1, "body_heading")]
    report = mini_corpus.report
    assert report.label_warnings == {"empty_arxiv_id": 1, "unknown_arxiv_id": 1}


def test_parsers_read_back_what_the_tools_print(view):
    """Agents and the play screen learn ids, titles and aliases from these texts: the parsers beside the formatters."""
    assert listed_papers(out(view, "get_references", paper_id=S)) == [
        Listed(B, "Bridge Paper", "", True),
        Listed(M, "A Non-arXiv Workshop Paper", "", False),
        Listed(R, "Roman Paper", "", True),
    ]
    assert listed_papers(out(view, "search_papers", query="Frequency DECOMPOSITION frequency", top_k=2)) == [
        Listed(S, "Seed Paper Title", "We study frequency decomposition.", True),
        Listed(G, "Target Paper", "Frequency domain decomposition.", True),
    ]
    several_lines = "  [1] p1\n      Title: Two\nlines\n      Full text: Available\n  [2] p2\n      Title: One\n      Full text: Not available"
    assert listed_papers(several_lines) == [Listed("p1", "Two", "", None), Listed("p2", "One", "", False)]
    assert listed_sections(out(view, "list_sections", paper_id=G)) == [
        ("A", "1 Introduction"),
        ("B", "3 Method"),
        ("C", "3.1 Method Details"),
        ("D", "Apdx_A: Proofs"),
        ("E", "Section 5"),
    ]
    assert available_sections(out(view, "read_section", paper_id=G, section="Meth")) == [
        ("A", "1 Introduction"),
        ("B", "3 Method"),
        ("C", "3.1 Method Details"),
        ("D", "Apdx_A: Proofs"),
        ("E", "Section 5"),
    ]
    assert available_sections(out(view, "read_section", paper_id=M, section="A")) is None
    assert info_title(out(view, "get_paper_info", paper_id=S)) == "Seed Paper Title"
    assert info_title(out(view, "get_paper_info", paper_id="2104.05678")) == ""


# ---------------------------------------------------------------- null vs absent year and title (docs/protocol.md#rules)


def _nulls_release(root):
    """Three cited papers: a null year and title, no year or title key at all, a real year."""
    from tests.conftest import write_release

    seed, null, absent, dated = "1" * 40, "2" * 40, "3" * 40, "4" * 40
    qa = [
        {
            "id": "st_0001",
            "question_type": "single-target",
            "depth": 1,
            "question": "Which one?",
            "options": ["a", "b", "c", "d"],
            "correct_index": 0,
            "seed_paper_id": seed,
            "gold_paper_ids": [dated],
        }
    ]
    graphs = [
        {
            "sample_id": "st_0001",
            "nodes": {
                seed: {"title": "Seed", "arxivId": "2301.00001", "year": 2023, "abstract": "seed"},
                null: {"title": None, "arxivId": "", "year": None, "abstract": "nullish words"},
                absent: {"arxivId": "", "abstract": "absent words"},
                dated: {"title": "Dated", "arxivId": "2201.00001", "year": 2022, "abstract": "dated words"},
            },
            "edges": {seed: [null, absent, dated]},
        }
    ]
    papers = [
        {"arxiv_id": "2301.00001", "title": "Seed", "sections": [{"header": "1 Intro", "text": "x"}]},
        {"arxiv_id": "2201.00001", "title": "Dated", "sections": [{"header": "1 Intro", "text": "y"}]},
    ]
    labels = [
        {
            "sample_id": "st_0001",
            "analysis": {
                "section_recall_labels": [{"arxiv_id": "2201.00001", "section": "1 Intro", "relevance": "direct"}]
            },
        }
    ]
    return write_release(root, qa, graphs, papers, labels), (seed, null, absent, dated)


def test_null_and_absent_year_and_title_print_as_the_reference(tmp_path):
    from sandbox.corpus import open_release

    root, (seed, null, absent, dated) = _nulls_release(tmp_path / "nulls")
    corpus, _ = open_release(root, tmp_path / "cache")
    try:
        view = corpus.view(corpus.item("st_0001"))
        assert view.nodes[null].data["year"] is None and "year" not in view.nodes[absent].data  # kept apart
        assert out(view, "get_references", paper_id=seed) == (
            f"References for paper '{seed}' (3 papers):\n\n"
            f"  [1] {null}\n      Title: None\n      Authors: Unknown (None)\n      Full text: Not available\n"
            f"  [2] {absent}\n      Title: Unknown\n      Authors: Unknown (?)\n      Full text: Not available\n"
            f"  [3] {dated}\n      Title: Dated\n      Authors: Unknown (2022)\n      Full text: Available"
        )
        assert out(view, "get_paper_info", paper_id=null) == (
            "Title: None\nAuthors: Unknown\nYear: None\nAbstract: nullish words\nFull text available: No"
        )
        assert out(view, "get_paper_info", paper_id=absent) == (
            "Title: Unknown\nAuthors: Unknown\nYear: Unknown\nAbstract: absent words\nFull text available: No"
        )
        assert out(view, "search_papers", query="nullish absent") == (
            "Search results for 'nullish absent' (2 matches):\n\n"
            f"  [1] {null}\n      Title: None\n      Authors: Unknown (None)\n      Abstract: nullish words\n"
            "      Full text: Not available\n"
            f"  [2] {absent}\n      Title: \n      Authors: Unknown (None)\n      Abstract: absent words\n"
            "      Full text: Not available"
        )
    finally:
        corpus.close()
