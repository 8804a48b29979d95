"""Benchmark audit (the paper's Stage 7 review): verdicts and label edits on a dataset, and the corrected release.

Verdicts (pass / flag / remove, a note, the three quality checks) and section-label edits
(add / remove / re-classify) live in the results store, keyed by the dataset's fingerprint,
with reviewer and time. `write_corrected` writes the dataset back in the release format with
the edits applied and removed items dropped, plus `audit/verdicts.jsonl`.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from sandbox import release
from sandbox.corpus import Corpus
from sandbox.sections import alias
from storage import Store

CHECKS = ("question_ok", "gold_supported", "labels_accurate")


class AuditError(ValueError):
    """An audit request a user must fix (unknown item, output directory in the way)."""


def evidence(corpus: Corpus, item_id: str) -> dict[str, Any]:
    """What a reviewer looks at: the question, options, gold answer and the text of each labelled section."""
    try:
        item = corpus.item(item_id)
    except KeyError:
        raise AuditError(f"no item '{item_id}' in the dataset") from None
    sections = []
    for lab in item.labels:
        text = corpus.section_text(lab.arxiv_id, lab.section_index) if lab.section_index is not None else None
        headers = corpus.headers(lab.arxiv_id) if lab.section_index is not None else []
        header = headers[lab.section_index][0] if headers else None
        sections.append({"arxiv_id": lab.arxiv_id, "label": lab.section, "relevance": lab.relevance,
                         "resolved": None if lab.section_index is None else
                         f"({alias(lab.section_index)}) {header or ''}".strip(),
                         "method": lab.method, "gold_paper": lab.arxiv_id in item.gold_arxiv_ids, "text": text})
    return {"id": item.id, "question": item.question, "options": list(item.options),
            "gold": "ABCD"[item.correct_index], "distractor_types": list(item.distractor_types or ()),
            "gold_arxiv_ids": list(item.gold_arxiv_ids), "labels": sections}


def apply_edits(labels: list[dict[str, Any]], edits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One item's raw label rows with its edits applied in order (each edit leaves a trace in `_audit`)."""
    out = [dict(lab) for lab in labels]
    for e in edits:
        stamp = {"action": e["action"], "reviewer": e["reviewer"], "time": e["created_at"]}
        same = [lab for lab in out if lab.get("arxiv_id") == e["arxiv_id"] and lab.get("section") == e["section"]]
        if e["action"] == "add":
            out.append({"paper": "", "arxiv_id": e["arxiv_id"], "section": e["section"], "relevance": e["relevance"],
                        "what_it_contains": "added in audit", "_audit": stamp})
        elif e["action"] == "remove":
            out = [lab for lab in out if lab not in same]
        else:
            for lab in same:
                lab["_reclassified_from"] = lab.get("relevance")
                lab["relevance"] = e["relevance"]
                lab["_audit"] = stamp
    return out


def write_corrected(corpus: Corpus, store: Store, out: Path) -> dict[str, int]:
    """The dataset in the release format with label edits applied and removed items dropped; counts."""
    source = Path(corpus.source)
    if out.exists() and any(out.iterdir()):
        raise AuditError(f"{out} exists and is not empty")
    if out.resolve() == source.resolve():
        raise AuditError("write the corrected dataset to a new directory, not over its source")
    verdicts = store.verdicts(corpus.fingerprint)
    removed = {i for i, v in verdicts.items() if v["verdict"] == "remove"}
    edits: dict[str, list[dict[str, Any]]] = {}
    for e in store.label_edits(corpus.fingerprint):
        edits.setdefault(e["item_id"], []).append(e)
    for rel in release.RELEASE_FILES:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
    kept = _filter_lines(source / release.QA_FILE, out / release.QA_FILE, "id", removed)
    _filter_lines(source / release.GRAPHS_FILE, out / release.GRAPHS_FILE, "sample_id", removed)
    shutil.copyfile(source / release.PAPERS_FILE, out / release.PAPERS_FILE)
    n_labels = _write_labels(source / release.LABELS_FILE, out / release.LABELS_FILE, removed, edits)
    with open(out / "audit" / "verdicts.jsonl", "w", encoding="utf-8") as fh:
        for item_id, v in sorted(verdicts.items()):
            row = {"sample_id": item_id, "verdict": v["verdict"], "note": v["note"] or "", "reviewer": v["reviewer"],
                   "time": v["created_at"], "checks": {k: None if v[k] is None else bool(v[k]) for k in CHECKS}}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    return {"items": kept, "removed": len(removed), "verdicts": len(verdicts), "label_rows": n_labels,
            "label_edits": sum(len(v) for v in edits.values())}


def _filter_lines(src: Path, dst: Path, key: str, removed: set[str]) -> int:
    kept = 0
    with open(src, encoding="utf-8") as fin, open(dst, "w", encoding="utf-8") as fout:
        for line in fin:
            if line.strip() and json.loads(line).get(key) not in removed:
                fout.write(line if line.endswith("\n") else line + "\n")
                kept += 1
    return kept


def _write_labels(src: Path, dst: Path, removed: set[str], edits: dict[str, list[dict[str, Any]]]) -> int:
    text = src.read_text(encoding="utf-8") if src.is_file() else ""
    rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    seen = set()
    with open(dst, "w", encoding="utf-8") as fh:
        for row in rows:
            sid = row.get("sample_id")
            if sid in removed:
                continue
            seen.add(sid)
            if sid in edits:
                analysis = dict(row.get("analysis") or {})
                analysis["section_recall_labels"] = apply_edits(release.label_rows(row), edits[sid])
                row = {**row, "analysis": analysis}
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")
        for sid, item_edits in sorted(edits.items()):  # items that had no label row at all
            if sid not in seen and sid not in removed:
                fh.write(json.dumps({"sample_id": sid, "analysis": {"section_recall_labels": apply_edits([], item_edits)}},
                                    ensure_ascii=False) + "\n")
                rows.append({})
    return len(rows)
