"""The reference's `summary.json` for any run in the store: the queries behind `stats.reference_summary`.

A stored run (native or imported by replay) is turned back into what the reference evaluator
reads — per-sample trajectory records with the reference's turn records and its 500-character
logged outputs — and handed with the item metadata (raw recall labels, graph arXiv ids) to the
pure formulas. So a user can hold our run against a published `summary.json`, number for number.

How our steps map to the reference's `turns` (so `total_turns`, `trajectory_profile` agree):
assistant steps, the summarize strategy's summary turn (without calls: they are not run) and the token-limit
`harness` step are assistant records, `error` steps (but a failed verifier's, which is no turn of the agent's) are
error records, tool steps are the `tool_results` of the turn before them; nudges and transient
`retry` notes are not records. As the reference adds failed sample-level attempts into a
trajectory's totals, tokens and API/transient error counts of the run's earlier (non-final)
attempts of the same item are added in (for an imported run, the failed attempts' tokens its
import kept apart), and `retry_count` is the final attempt's number.

`fingerprint.backend` is the reference's provider routing (§3.2) applied to the run's model (`none` for a run
that called no model), and
`strategy` follows the run (a closed-book run is the reference's `noretrieval`; an imported run
keeps the strategy its directory name carries).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, TypedDict

from sandbox import pricing
from sandbox.corpus import Corpus
from sandbox.records import CapsRecord, Item, Usage, recorded_limits
from sandbox.reference_log import truncate
from sandbox.release import QA_FILE, file_sha256
from sandbox.sections import norm
from sandbox.strategies import VERIFIER_ERROR
from stats import reference_summary
from storage import Store
from storage.json_types import JsonValue

DEFAULT_BACKEND = "openai"  # the reference's default, kept for names its routing table does not know
NO_BACKEND = "none"  # a run that called no model (scripted or human agent)
DEFAULT_STRATEGY = "direct"
STRATEGIES = ("react", "plan", "noretrieval")  # non-default strategies: the reference appends _{strategy} to the dir
# the reference harness's routing: the first matching model-name prefix (case-insensitive) decides the backend
ROUTING: tuple[tuple[tuple[str, ...], str], ...] = (
    (("codex-", "gpt-5.3-codex", "gpt-5.1-codex", "gpt-5-codex"), "responses"),
    (("gpt-5.4", "gpt-5.3", "gpt-5.2", "gpt-5.1", "gpt-5-"), "responses"),
    (("gpt-", "o1-", "o3-", "o4-"), "openai"),
    (("deepseek-",), "openai"),
    (("claude-",), "anthropic"),
    (("gemini-3", "gemini-2.5"), "google"),
    (("gemini-",), "openai"),
    (("zai-org/", "moonshotai/", "minimaxai/"), "openai"),
    (("grok-",), "openai"),
)
DEFAULT_MAX_TOKENS = 16384
CARRIED = (
    "prompt_tokens",
    "completion_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "api_errors",
    "transient_retries",
)


class ToolCall(TypedDict):
    """A call of a reference turn, as the model made it."""

    id: JsonValue
    name: JsonValue
    args: JsonValue


class ToolResult(TypedDict):
    """A tool's result within a reference turn, its output truncated as the reference logs it."""

    name: str | None
    args: JsonValue
    output: str
    cost: int


class Turn(TypedDict):
    """One record of the reference's `turns`: a model turn (or an error) with the tool results that followed."""

    turn: int
    role: Literal["assistant", "error"]
    content: str | None
    tool_calls: list[ToolCall]
    tool_results: list[ToolResult]
    prompt_tokens: int
    completion_tokens: int


class TrajectoryRecord(TypedDict):
    """A stored trajectory as the reference's trajectory file has it (what its evaluator reads)."""

    sample_id: str
    question_type: str | None
    depth: int | None
    reasoning_type: str | None
    correct_index: int | None
    predicted_answer: str
    predicted_index: int | None
    is_correct: bool
    budget_used: int | None
    total_turns: int
    total_prompt_tokens: int
    total_completion_tokens: int
    cache_read_tokens: int
    cache_creation_tokens: int
    wall_time_s: float
    turns: list[Turn]
    tool_errors: int
    api_error_count: int
    transient_retry_count: int
    retry_count: int
    terminated_by: str | None


class SampleLabel(TypedDict):
    """A raw section-recall label of an item."""

    arxiv_id: str
    section: str
    relevance: str


class SampleRecord(TypedDict):
    """An item as the reference's merged sample dict, reduced to what its evaluator reads."""

    venue: str
    consensus_tier: str
    filter_agreement: JsonValue  # as the release row has it (a count of filters, or absent)
    distractor_types: list[str] | None
    gold_arxiv_ids: list[str]
    bridge_arxiv_ids: list[str]
    nodes: dict[str, str | None]
    labels: list[SampleLabel]


class Fingerprint(TypedDict):
    """The summary's `fingerprint` block (§5.2)."""

    schema_version: str
    model: str
    backend: str
    strategy: str
    started_at: str
    completed_at: str
    benchmark_sha256: str


class HarnessConfig(TypedDict):
    """The reference's HarnessConfig (minus api_key/base_url): the summary's `config` block."""

    budget: int | None
    max_turns: int | None
    model: str
    backend: str
    temperature: float | None
    top_p: float | None
    top_k: int | None
    max_tokens: int
    workers: int
    max_total_tokens: int | None
    max_run_tokens: int
    strategy: str
    text_tools: bool
    reasoning_effort: str | None
    disabled_tools: list[str]


class SummaryError(ValueError):
    """The summary cannot be computed faithfully: the corpus is not the dataset the run was made on."""

    exit_code = 2  # a user's mistake: the CLI says it in one line and exits 2 (ExitCode.USAGE)


def agenthop_summary(
    store: Store,
    run_name: str,
    corpus: Corpus,
    release_dir: Path | str | None = None,
    *,
    prices: list[pricing.Price] | None = None,
) -> dict[str, Any]:
    """`summary.json` (schema `agenthop-eval-v1`) of run `run_name`, computed as the reference evaluator would.

    `release_dir` (default: the directory the corpus was imported from) gives `benchmark_sha256`.
    Raises storage.StoreError for an unknown run and SummaryError (a ValueError) when `corpus` is not
    the run's dataset.
    """
    run = store.run(run_name)
    if run["dataset_fingerprint"] != corpus.fingerprint:
        raise SummaryError(
            f"run '{run_name}' was made on dataset {run['dataset_fingerprint'][:12]}…, "
            f"not on the given one ({corpus.fingerprint[:12]}…): pass the run's --data"
        )
    records = trajectory_records(store, run)
    samples = sample_records(corpus, {r["sample_id"] for r in records})
    model = run["model"] or run["agent"]
    price = pricing.find_price(model, prices)
    out = reference_summary.summary(
        records,
        samples,
        norm=norm,
        fingerprint=fingerprint(run, model, _release_dir(release_dir, corpus)),
        config=harness_config(run, model),
        pricing=_price_info(price),
        cost_fn=lambda tokens: _cost(price, tokens),
    )
    warnings = export_warnings(run)
    if warnings:
        out["workbench_warnings"] = warnings  # only then: a clean run's summary has exactly the reference's keys
    return out


def export_warnings(run: Mapping[str, Any]) -> list[str]:
    """Why this summary may not be the reference's own: an imported run whose replay did not reproduce its log
    is summarised from our replayed outputs and outcomes, not the logged ones."""
    from workbench.service.reference_import import replay_mismatches

    bad = replay_mismatches(run)
    if not bad:
        return []
    listed = ", ".join(bad[:5]) + (f" … (+{len(bad) - 5})" if len(bad) > 5 else "")
    return [
        f"{len(bad)} imported trajectories did not replay as logged ({listed}); this summary is computed from "
        "the replayed outputs and outcomes, not the logged ones (see the import's mismatch report)"
    ]


def reference_block(store: Store, run_name: str, corpus: Corpus) -> dict[str, Any]:
    """The reference evaluator's own numbers for a run (docs/protocol.md#parity: shown beside the paper's metrics under
    `reference`, so a user can reconcile with a summary.json): its accuracy, its retrieval figures (any-gold
    recall counting failed reads, header-matched section recall, conversion), turn stats and attribution."""
    try:
        s = agenthop_summary(store, run_name, corpus)
    except SummaryError as exc:
        return {"unavailable": str(exc)}
    if s.get("empty"):
        return {"unavailable": "no trajectories"}
    r = s["retrieval"]
    return {
        "schema_version": reference_summary.SCHEMA_VERSION,
        "total": s["total"],
        "correct": s["correct"],
        "accuracy": s["accuracy"]["overall"],
        "paper_recall": r["paper_recall"],
        "section_recall_soft": r["section_recall_soft"],
        "section_recall_hard": r["section_recall_hard"],
        "conversion_rate": r["conversion_rate"],
        "conversion_denominator": r["conversion_denominator"],
        "min_navigation_rate": r["min_navigation_rate"],
        "wasted_read_rate": r["wasted_read_rate"],
        "total_read_calls": r["total_read_calls"],
        "mean_total_turns": s["tools"]["turn_stats"]["mean"],
        "rejection_rate": s["tools"]["rejection_rate"],
        "failure_attribution": s["failure_attribution"]["rates"],
        "per_sample_mean_tokens": s["cost"]["per_sample_mean_tokens"],
        **({"warnings": s["workbench_warnings"]} if s.get("workbench_warnings") else {}),
    }


# ---------------------------------------------------------------- trajectories


def trajectory_records(store: Store, run: Mapping[str, Any] | int) -> list[TrajectoryRecord]:
    """The run's final trajectories as reference-shaped records (docs/protocol.md#parity), in store order."""
    from workbench.service.reference_import import failed_attempt_tokens

    run = store.run_by_id(run) if isinstance(run, int) else run
    earlier: dict[tuple[str, int], list[Mapping[str, Any]]] = {}
    for t in store.trajectories(run["id"], final_only=False):
        if not t["final"]:
            earlier.setdefault((t["item_id"], t["replicate"]), []).append(t)
    kept_apart = failed_attempt_tokens(run)  # an imported run's failed attempts (no rows of their own)
    return [
        reference_record(
            t,
            store.steps(t["id"]),
            earlier.get((t["item_id"], t["replicate"]), [])
            + ([kept_apart[t["item_id"]]] if t["item_id"] in kept_apart else []),
        )
        for t in store.trajectories(run["id"])
    ]


def reference_record(
    t: Mapping[str, Any], steps: Sequence[Mapping[str, Any]], earlier: Sequence[Mapping[str, Any]] = ()
) -> TrajectoryRecord:
    """One stored trajectory as the reference's trajectory file would have it (what its evaluator reads)."""
    carried = {k: (t.get(k) or 0) + sum(e.get(k) or 0 for e in earlier) for k in CARRIED}
    turns = turn_records(steps)
    return {
        "sample_id": t["item_id"],
        "question_type": t.get("question_type"),
        "depth": t.get("depth"),
        "reasoning_type": t.get("reasoning_type"),
        "correct_index": t.get("correct_index"),
        "predicted_answer": t["answer"] if t.get("answer") is not None else "",
        "predicted_index": t.get("predicted_index"),
        "is_correct": bool(t.get("correct")),
        "budget_used": t.get("points_used"),
        "total_turns": len(turns),
        "total_prompt_tokens": carried["prompt_tokens"],
        "total_completion_tokens": carried["completion_tokens"],
        "cache_read_tokens": carried["cache_read_tokens"],
        "cache_creation_tokens": carried["cache_creation_tokens"],
        "wall_time_s": t.get("wall_time_s") or 0.0,
        "turns": turns,
        "tool_errors": t.get("tool_errors") or 0,
        "api_error_count": carried["api_errors"],
        "transient_retry_count": carried["transient_retries"],
        "retry_count": t.get("attempt") or 0,
        "terminated_by": t.get("termination"),
    }


TURN_KINDS = ("assistant", "summary", "harness", "error")  # a summary is a model turn (its calls not run)


def turn_records(steps: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """Our steps as the reference's `turns` list (see the module docstring), outputs truncated as it logs them."""
    turns: list[Turn] = []
    for s in steps:
        kind = s.get("kind")
        if kind == "error" and (s.get("text") or "").startswith(VERIFIER_ERROR):
            continue  # the verifier's failure, not a turn of the agent's (its submit's result stays with its turn)
        if kind in TURN_KINDS:
            turns.append(_turn(s))
        elif kind == "tool" and turns:
            turns[-1]["tool_results"].append(_tool_result(s))
    return turns


def _turn(step: Mapping[str, Any]) -> Turn:
    """A model (or error) step as a reference turn, its tool results still to come."""
    kind = step.get("kind")
    usage = step.get("usage") or {}
    args = step.get("tool_args")
    calls = args if kind == "assistant" and isinstance(args, list) else []
    return {
        "turn": (step.get("turn") or 1) - 1,
        "role": "error" if kind == "error" else "assistant",
        "content": step.get("text"),
        "tool_calls": [
            {"id": c.get("id"), "name": c.get("name"), "args": c.get("args")} for c in calls if isinstance(c, Mapping)
        ],
        "tool_results": [],
        "prompt_tokens": usage.get("prompt") or 0,
        "completion_tokens": usage.get("completion") or 0,
    }


def _tool_result(step: Mapping[str, Any]) -> ToolResult:
    """A tool step as the result the reference logs with the turn before it."""
    return {
        "name": step.get("tool_name"),
        "args": step.get("tool_args"),
        "output": truncate(step.get("text") or ""),
        "cost": step.get("cost") or 0,
    }


# ---------------------------------------------------------------- items


def sample_records(corpus: Corpus, ids: set[str]) -> dict[str, SampleRecord]:
    """Metadata the evaluator reads per sample, for the ids the corpus knows (others stay absent, i.e. "?")."""
    known = {item.id: item for item in corpus.items if item.id in ids}
    return {sid: sample_record(corpus, item) for sid, item in known.items()}


def sample_record(corpus: Corpus, item: Item) -> SampleRecord:
    """An item as the reference's merged sample dict, reduced to what the evaluator uses; labels are the raw rows."""
    view = corpus.view(item)
    return {
        "venue": item.venue,
        "consensus_tier": item.consensus_tier,
        "filter_agreement": item.filter_agreement,
        "distractor_types": list(item.distractor_types) if item.distractor_types else None,
        "gold_arxiv_ids": list(item.gold_arxiv_ids),
        "bridge_arxiv_ids": list(item.bridge_arxiv_ids),
        "nodes": {s2id: node.arxiv_id for s2id, node in view.nodes.items()},
        "labels": [
            {"arxiv_id": lab.arxiv_id, "section": lab.section, "relevance": lab.relevance} for lab in item.labels
        ],
    }


# ---------------------------------------------------------------- run-level blocks


def fingerprint(run: Mapping[str, Any], model: str, release_dir: Path | None) -> Fingerprint:
    """§5.2: `started_at` is always "" in the reference; `benchmark_sha256` is 16 hex of qa/full.jsonl's SHA-256."""
    qa = release_dir / QA_FILE if release_dir is not None else None
    return {
        "schema_version": reference_summary.SCHEMA_VERSION,
        "model": model,
        "backend": backend_of(run, model),
        "strategy": strategy_of(run),
        "started_at": "",
        "completed_at": run.get("finished_at") or datetime.now(UTC).isoformat(timespec="seconds"),
        "benchmark_sha256": file_sha256(qa)[:16] if qa is not None and qa.is_file() else "",
    }


def harness_config(run: Mapping[str, Any], model: str) -> HarnessConfig:
    """The reference's HarnessConfig (minus api_key/base_url) as this run's caps and agent options fill it."""
    caps: CapsRecord = run.get("caps") or CapsRecord()
    budget, max_turns, max_tokens = recorded_limits(caps)
    config = run.get("config") or {}
    opts = config.get("agent_options") or {}
    return {
        "budget": budget,
        "max_turns": max_turns,
        "model": model,
        "backend": backend_of(run, model),
        "temperature": opts.get("temperature"),
        "top_p": opts.get("top_p"),
        "top_k": opts.get("top_k"),
        "max_tokens": opts.get("max_tokens", DEFAULT_MAX_TOKENS),
        "workers": config.get("workers", 1),
        "max_total_tokens": max_tokens,
        "max_run_tokens": 0,
        "strategy": strategy_of(run),
        "text_tools": bool(opts.get("text_tools", False)),
        "reasoning_effort": opts.get("reasoning_effort"),
        "disabled_tools": list(caps.get("disabled_tools") or []),
    }


def routed_backend(model: str) -> str:
    """The backend the reference picks for a model name (§3.2 routing, first matching prefix, case-insensitive);
    a litellm provider prefix (`anthropic/…`) is not part of the name; unknown names keep the default."""
    lowered = pricing.bare_model(model).lower()
    for prefixes, backend in ROUTING:
        if lowered.startswith(prefixes):
            return backend
    return DEFAULT_BACKEND


def backend_of(run: Mapping[str, Any], model: str) -> str:
    """A run that talked to an OpenAI-compatible server by URL is `openai` (the reference skips routing when
    given a base URL and key); otherwise the routed backend of its model. A run that called no model (a
    scripted or human agent: no model recorded; `model` is then the agent's name) has no backend: `none`,
    not the routing default `openai`, which would claim a provider it never used."""
    if not run.get("model"):
        return NO_BACKEND
    opts = (run.get("config") or {}).get("agent_options") or {}
    return DEFAULT_BACKEND if opts.get("base_url") else routed_backend(model)


def strategy_of(run: Mapping[str, Any]) -> str:
    """The reference strategy a run corresponds to: an imported run's directory suffix (`gpt-4.1_react`), a
    closed-book run's `noretrieval` (the reference's closed-book prompt; its results go to `…_noretrieval/`),
    else `direct`."""
    opts = (run.get("config") or {}).get("agent_options") or {}
    if run.get("agent") == "replay" and opts.get("source"):
        name = Path(opts["source"]).name
        for strategy in STRATEGIES:
            if name.endswith(f"_{strategy}"):
                return strategy
        return DEFAULT_STRATEGY
    return "noretrieval" if run.get("ablation") == "closed-book" else DEFAULT_STRATEGY


def _release_dir(release_dir: Path | str | None, corpus: Corpus) -> Path | None:
    if release_dir is not None:
        return Path(release_dir)
    return Path(corpus.source) if corpus.source else None


def _price_info(price: pricing.Price | None) -> reference_summary.Pricing | None:
    if price is None:
        return None
    return {
        "provider": price.provider,
        "input_per_m": price.input_per_m,
        "output_per_m": price.output_per_m,
        "cache_read_mult": price.cache_read_mult,
        "cache_write_mult": price.cache_write_mult,
    }


def _cost(price: pricing.Price | None, tokens: Mapping[str, int]) -> dict[str, float] | None:
    return pricing.cost(
        price,
        Usage(
            prompt=tokens["regular_input"],
            completion=tokens["completion"],
            cache_read=tokens["cache_read"],
            cache_creation=tokens["cache_creation"],
        ),
    )
