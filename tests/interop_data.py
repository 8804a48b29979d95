"""A small hand-made release and reference-format trajectory files for it, written by hand after the reference's format (docs/protocol.md#parity).

Five items over one neighbourhood: st_0001 (ST d1), st_0002 (ST d2), st_0003 (ST d1),
mt_0001 (MT d1), mt_0002 (MT d2). The logged tool outputs below are typed out from the
reference's output formats (§2.4), not produced by our tools, so the replay check tests them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import write_release

S = "1" * 40  # seed, 2301.00001
BR = "2" * 40  # bridge, 2302.00002
G1 = "3" * 40  # gold one, 2101.00001
G2 = "4" * 40  # gold two, 2102.00002
SIB = "5" * 40  # sibling, 2001.00009
M = "6" * 40  # metadata-only (no arXiv id)
ARX = {S: "2301.00001", BR: "2302.00002", G1: "2101.00001", G2: "2102.00002", SIB: "2001.00009"}

LONG = "The method decomposes signals into bands. " * 20  # 840 characters: its read is logged truncated
assert len(LONG) > 500

PAPERS = [
    {
        "arxiv_id": ARX[S],
        "title": "Seed Study",
        "sections": [
            {"header": "1 Introduction", "text": "We build on prior decomposition work."},
            {"header": "2 Related Work", "text": "Prior work."},
        ],
    },
    {
        "arxiv_id": ARX[BR],
        "title": "Bridge Study",
        "sections": [
            {"header": "Abstract", "text": "Bridge abstract."},
            {"header": "2 Background", "text": "Background text."},
        ],
    },
    {
        "arxiv_id": ARX[G1],
        "title": "Gold One",
        "sections": [
            {"header": "1 Introduction", "text": "Intro one."},
            {"header": "3 Method", "text": LONG},
            {"header": "3.2 Frequency-Domain Decomposition", "text": "We decompose because it preserves phase."},
            {"header": "4 Experiments", "text": "Experiments one."},
        ],
    },
    {
        "arxiv_id": ARX[G2],
        "title": "Gold Two",
        "sections": [
            {"header": "1 Introduction", "text": "Intro two."},
            {"header": "2 Approach", "text": "Approach two."},
            {"header": "5 Results", "text": "Results two."},
        ],
    },
    {
        "arxiv_id": ARX[SIB],
        "title": "Sibling Study",
        "sections": [{"header": "1 Introduction", "text": "Sibling intro."}],
    },
]

NODES = {
    S: {"title": "Seed Study", "arxivId": ARX[S], "year": 2023, "abstract": "Seed abstract."},
    BR: {"title": "Bridge Study", "arxivId": ARX[BR], "year": 2022, "abstract": "Bridge abstract."},
    G1: {"title": "Gold One", "arxivId": ARX[G1], "year": 2021, "abstract": "Gold one abstract."},
    G2: {"title": "Gold Two", "arxivId": ARX[G2], "year": 2020, "abstract": "Gold two abstract."},
    SIB: {"title": "Sibling Study", "arxivId": ARX[SIB], "year": 2019, "abstract": "Sibling abstract."},
    M: {"title": "Workshop Note", "arxivId": "", "year": None, "abstract": ""},
}

# id: (type, depth, reasoning, venue, tier, filter_agreement, correct_index, distractor_types, gold, bridge, edges)
ITEMS = {
    "st_0001": (
        "single-target",
        1,
        "METHOD",
        "ICLR",
        "gold",
        3,
        0,
        ["correct", "seed_only", "wrong_paper", "no_context"],
        [G1],
        [],
        {S: [G1, SIB, M]},
    ),
    "st_0002": (
        "single-target",
        2,
        "GROUND",
        "ACL",
        "silver",
        2,
        1,
        ["seed_only", "correct", "wrong_paper", "no_context"],
        [G2],
        [BR],
        {S: [BR, SIB], BR: [G2]},
    ),
    "st_0003": (
        "single-target",
        1,
        "RESULT",
        "EMNLP",
        "silver",
        2,
        0,
        ["correct", "seed_only", "wrong_paper", "no_context"],
        [G1],
        [],
        {S: [G1, SIB]},
    ),
    "mt_0001": (
        "multi-target",
        1,
        "METHOD",
        "ICLR",
        "bronze",
        None,
        2,
        ["wrong_paper", "seed_only", "correct", "no_context"],
        [G1, G2],
        [],
        {S: [G1, G2, SIB, M]},
    ),
    "mt_0002": (
        "multi-target",
        2,
        "RESULT",
        "NeurIPS",
        "gold",
        3,
        3,
        ["seed_only", "wrong_paper", "no_context", "correct"],
        [G1, G2],
        [BR],
        {S: [BR, SIB], BR: [G1, G2]},
    ),
}

LABELS = {
    # a supporting label listed before a direct one that both match "3 Method": the reference counts soft only
    "st_0001": [(G1, "Method", "supporting"), (G1, "3 Method", "direct")],
    "st_0002": [(G2, "2 Approach", "direct")],
    "st_0003": [(G1, "3.2 Frequency-Domain Decomposition", "direct"), ("", "Intro", "supporting")],
    "mt_0001": [(G1, "4 Experiments", "direct"), (G2, "5 Results", "direct")],
    "mt_0002": [(G1, "1 Introduction", "supporting"), (G2, "2 Approach", "direct")],
}


def release_rows() -> tuple[list[dict], list[dict], list[dict], list[dict]]:
    qa, graphs, labels = [], [], []
    for sid, (qtype, depth, reasoning, venue, tier, agree, correct, dtypes, gold, bridge, edges) in ITEMS.items():
        qa.append(
            {
                "id": sid,
                "question_type": qtype,
                "depth": depth,
                "reasoning_type": reasoning,
                "cognitive_skill": "reason",
                "venue": venue,
                "consensus_tier": tier,
                "question": f"Question {sid}?",
                "options": ["one", "two", "three", "four"],
                "correct_index": correct,
                "distractor_types": dtypes,
                "seed_paper_id": S,
                "seed_arxiv_id": ARX[S],
                "seed_title": "Seed Study",
                "gold_paper_ids": gold,
                "gold_arxiv_ids": [ARX[g] for g in gold],
                "bridge_paper_ids": bridge,
                "bridge_arxiv_ids": [ARX[b] for b in bridge],
                "filter_agreement": agree,
            }
        )
        graphs.append({"sample_id": sid, "nodes": NODES, "edges": edges})
        labels.append(
            {
                "sample_id": sid,
                "analysis": {
                    "section_recall_labels": [
                        {
                            "paper": "?",
                            "arxiv_id": ARX.get(p, p),
                            "section": sec,
                            "relevance": rel,
                            "what_it_contains": "x",
                        }
                        for p, sec, rel in LABELS[sid]
                    ]
                },
            }
        )
    return qa, graphs, PAPERS, labels


def write_interop_release(root: Path) -> Path:
    return write_release(root, *release_rows())


# ---------------------------------------------------------------- reference trajectory files


def result(name: str, args: dict, output: str, cost: int) -> dict:
    """A `tool_results` entry as the reference logs it: the output cut to 500 characters plus '...'."""
    logged = output if len(output) <= 500 else output[:500] + "..."
    return {"name": name, "args": args, "output": logged, "cost": cost}


def turn(
    i: int,
    calls: list[tuple[str, dict]],
    results: list[dict],
    prompt: int,
    completion: int,
    content: str | None = None,
    role: str = "assistant",
    before: int = 0,
    after: int = 0,
) -> dict:
    return {
        "turn": i,
        "role": role,
        "content": content,
        "tool_calls": [{"id": f"call_{i}_{k}", "name": n, "args": a} for k, (n, a) in enumerate(calls)],
        "tool_results": results,
        "budget_before": before,
        "budget_after": after,
        "timestamp": float(i),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    }


def trajectory(
    sid: str,
    turns: list[dict],
    *,
    terminated_by: str,
    answer: str,
    predicted: int,
    budget_used: int,
    wall: float,
    cache_read: int = 0,
    cache_creation: int = 0,
    extra_prompt: int = 0,
    extra_completion: int = 0,
    tool_errors: int = 0,
    api_errors: int = 0,
    transient: int = 0,
    retry_count: int = 0,
    model: str = "gpt-4.1",
) -> dict:
    """Every top-level key of §4, totals summed from the turns (plus failed attempts' `extra_*`)."""
    qtype, depth, reasoning, *_ = ITEMS.get(sid, ("single-target", 1, "METHOD"))
    correct_index = ITEMS[sid][6] if sid in ITEMS else 0
    return {
        "sample_id": sid,
        "model": model,
        "question_type": qtype,
        "depth": depth,
        "reasoning_type": reasoning,
        "correct_index": correct_index,
        "predicted_answer": answer,
        "predicted_index": predicted,
        "is_correct": predicted == correct_index,
        "reasoning": "because",
        "budget_total": 30,
        "budget_used": budget_used,
        "total_turns": len(turns),
        "total_prompt_tokens": sum(t["prompt_tokens"] for t in turns) + extra_prompt,
        "total_completion_tokens": sum(t["completion_tokens"] for t in turns) + extra_completion,
        "cache_read_tokens": cache_read,
        "cache_creation_tokens": cache_creation,
        "wall_time_s": wall,
        "turns": turns,
        "messages": [],
        "tool_errors": tool_errors,
        "api_error_count": api_errors,
        "transient_retry_count": transient,
        "retry_count": retry_count,
        "terminated_by": terminated_by,
    }


def read(pid: str, section: str, header: str, text: str) -> dict:
    return result("read_section", {"paper_id": pid, "section": section}, f"=== {header} ===\n\n{text}", 5)


REJECT = (
    "REJECTED: Insufficient budget (0 remaining, {name} costs {cost}). You cannot use this tool. "
    "Call submit_answer immediately with your best guess based on evidence gathered so far."
)


def logs() -> dict[str, dict]:
    """The five trajectories (see tests/test_interop_summary.py for the figures they imply)."""
    a = trajectory(
        "st_0001",
        [
            turn(
                0,
                [("get_paper_info", {"paper_id": G1}), ("read_section", {"paper_id": G1, "section": "3 Method"})],
                [
                    result(
                        "get_paper_info",
                        {"paper_id": G1},
                        "Title: Gold One\nAuthors: Unknown\nYear: 2021\n"
                        "Abstract: Gold one abstract.\nFull text available: Yes",
                        1,
                    ),
                    read(G1, "3 Method", "3 Method", LONG),
                ],
                1000,
                50,
                content="Let me read the method.",
                before=30,
                after=24,
            ),
            turn(
                1,
                [("submit_answer", {"answer": "A", "reasoning": "it says so"})],
                [result("submit_answer", {"answer": "A", "reasoning": "it says so"}, "Answer submitted: A", 0)],
                1500,
                20,
                before=24,
                after=24,
            ),
        ],
        terminated_by="answer",
        answer="A",
        predicted=0,
        budget_used=6,
        wall=12.5,
        cache_read=300,
    )

    b = trajectory(
        "st_0002",
        [
            turn(0, [], [], 0, 0, content="Error code: 400 - {'error': 'bad request'}", role="error"),
            turn(
                1,
                [("get_references", {"paper_id": G2}), ("read_section", {"paper_id": S, "section": "1 Introduction"})],
                [
                    result(
                        "get_references",
                        {"paper_id": G2},
                        "No references found for this paper (or references not available in pool).",
                        1,
                    ),
                    read(S, "1 Introduction", "1 Introduction", "We build on prior decomposition work."),
                ],
                1200,
                30,
                before=30,
                after=24,
            ),
            turn(
                2,
                [("read_section", {"paper_id": G2, "section": "Nonexistent"})],
                [
                    result(
                        "read_section",
                        {"paper_id": G2, "section": "Nonexistent"},
                        f"Section 'Nonexistent' not found in paper '{G2}'.\n"
                        "Available sections: (A) 1 Introduction; (B) 2 Approach; (C) 5 Results",
                        5,
                    )
                ],
                1300,
                30,
                before=24,
                after=19,
            ),
            turn(3, [], [], 1400, 40, content="I am not sure yet.", before=19, after=19),
            turn(
                4,
                [("submit_answer", {"answer": "maybe", "reasoning": "guess"})],
                [result("submit_answer", {"answer": "maybe", "reasoning": "guess"}, "Answer submitted: maybe", 0)],
                1500,
                20,
                before=19,
                after=19,
            ),
        ],
        terminated_by="answer",
        answer="maybe",
        predicted=-1,
        budget_used=11,
        wall=30.0,
        api_errors=1,
    )

    c = trajectory(
        "mt_0001",
        [
            turn(
                0,
                [
                    ("read_section", {"paper_id": G1, "section": "4 Experiments"}),
                    ("read_section", {"paper_id": G1, "section": "A"}),
                    ("read_section", {"paper_id": G1, "section": "B"}),
                ],
                [
                    read(G1, "4 Experiments", "4 Experiments", "Experiments one."),
                    read(G1, "A", "1 Introduction", "Intro one."),
                    read(G1, "B", "3 Method", LONG),
                ],
                800,
                40,
                before=30,
                after=15,
            ),
            turn(
                1,
                [
                    ("read_section", {"paper_id": G1, "section": "4 Experiments"}),
                    ("read_section", {"paper_id": SIB, "section": "1 Introduction"}),
                    ("read_section", {"paper_id": M, "section": "Intro"}),
                ],
                [
                    read(G1, "4 Experiments", "4 Experiments", "Experiments one."),
                    read(SIB, "1 Introduction", "1 Introduction", "Sibling intro."),
                    result(
                        "read_section",
                        {"paper_id": M, "section": "Intro"},
                        f"Full text not available for paper '{M}'.",
                        5,
                    ),
                ],
                900,
                40,
                before=15,
                after=0,
            ),
            turn(
                2,
                [("read_section", {"paper_id": G2, "section": "5 Results"}), ("get_paper_info", {"paper_id": G2})],
                [
                    result(
                        "read_section",
                        {"paper_id": G2, "section": "5 Results"},
                        REJECT.format(name="read_section", cost=5),
                        0,
                    ),
                    result("get_paper_info", {"paper_id": G2}, REJECT.format(name="get_paper_info", cost=1), 0),
                ],
                1000,
                40,
                before=0,
                after=0,
            ),
        ],
        terminated_by="budget",
        answer="",
        predicted=-1,
        budget_used=30,
        wall=20.0,
    )

    refs = (
        f"References for paper '{BR}' (2 papers):\n\n"
        f"  [1] {G1}\n      Title: Gold One\n      Authors: Unknown (2021)\n      Full text: Available\n"
        f"  [2] {G2}\n      Title: Gold Two\n      Authors: Unknown (2020)\n      Full text: Available"
    )
    d = trajectory(
        "mt_0002",
        [
            turn(
                0,
                [("get_references", {"paper_id": BR}), ("read_section", {"paper_id": BR, "section": "Abstract"})],
                [
                    result("get_references", {"paper_id": BR}, refs, 1),
                    read(BR, "Abstract", "Abstract", "Bridge abstract."),
                ],
                90000,
                100,
                before=30,
                after=24,
            ),
            turn(
                1,
                [("read_section", {"paper_id": G2, "section": "2 Approach"})],
                [read(G2, "2 Approach", "2 Approach", "Approach two.")],
                100000,
                100,
                before=24,
                after=19,
            ),
            turn(
                2,
                [],
                [],
                9900,
                50,
                content="[HARNESS] Token limit reached (200,150 > 200,000). Forcing termination.",
                before=19,
                after=19,
            ),
        ],
        terminated_by="token_limit",
        answer="",
        predicted=-1,
        budget_used=11,
        wall=40.0,
        extra_prompt=1000,
        extra_completion=10,
        transient=2,
        retry_count=1,
    )

    e = trajectory(
        "st_0003",
        [
            turn(
                0,
                [("think", {"reasoning": "hmm"}), ("frobnicate", {})],
                [
                    result("think", {"reasoning": "hmm"}, "Noted.", 0),
                    result("frobnicate", {}, "Unknown tool: frobnicate", 0),
                ],
                500,
                10,
            ),
            turn(
                1,
                [("submit_answer", {"answer": "(b)", "reasoning": "seed says"})],
                [result("submit_answer", {"answer": "(b)", "reasoning": "seed says"}, "Answer submitted: (b)", 0)],
                600,
                10,
                before=30,
                after=30,
            ),
        ],
        terminated_by="answer",
        answer="(b)",
        predicted=1,
        budget_used=0,
        wall=5.0,
        cache_read=100,
        cache_creation=50,
        tool_errors=1,
    )
    return {t["sample_id"]: t for t in (a, b, c, d, e)}


def write_experiment(root: Path, trajectories: dict[str, dict], extras: bool = True) -> Path:
    """`experiments/gpt-4.1/` with one file per sample, plus what an import must ignore or report."""
    root.mkdir(parents=True, exist_ok=True)
    for sid, traj in trajectories.items():
        (root / f"{sid}.json").write_text(json.dumps(traj, indent=2, ensure_ascii=False), encoding="utf-8")
    if extras:
        (root / "summary.json").write_text(json.dumps({"schema_version": "agenthop-eval-v1"}))
        (root / "broken.json").write_text("{not json")
        unknown = trajectory(
            "st_9999",
            [turn(0, [], [], 1, 1, content="hi")],
            terminated_by="max_turns",
            answer="",
            predicted=-1,
            budget_used=0,
            wall=1.0,
        )
        (root / "st_9999.json").write_text(json.dumps(unknown))
        failed = root / "_failed_attempts"
        failed.mkdir(exist_ok=True)
        (failed / "mt_0002.attempt_0.json").write_text(json.dumps(trajectories.get("mt_0002", {})))
    return root


def as_json(obj: Any) -> Any:
    """A round trip through JSON, as a file on disk would give it."""
    return json.loads(json.dumps(obj))
