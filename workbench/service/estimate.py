"""`--dry-run` and the launch form's cost line: what a run would do and cost, before it spends anything, as data.

Tokens per episode come from earlier runs of the same model in the store when there
are any, else from a stated assumption; prices from the pricing table; unknown models
are shown as unpriced rather than guessed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandbox.extra_tools.registry import SettingRecord
from sandbox.pricing import cost, price_for
from sandbox.records import Item, Usage
from sandbox.runner import RunSpec
from workbench.service.records.estimate import EpisodeEstimate, Estimate, PriceJson

ASSUMED_TOKENS = 90_000  # per episode, when the store has no history for this model
ASSUMED_OUTPUT_SHARE = 0.05
ASSUMED_CALLS = 10  # model calls per episode, when counting the extra tools' prompt per call (at most the turn cap)


def history(store_path: Path, model: str | None) -> tuple[float, float] | None:
    """(mean prompt tokens, mean completion tokens) per trajectory of earlier runs of this model."""
    if not model or not store_path.exists():
        return None
    from storage import Store, StoreError

    try:
        store = Store(store_path, readonly=True)
    except StoreError:
        return None
    try:
        past = store.model_token_history(model)
    finally:
        store.close()
    return (past[0], past[1]) if past else None


def remaining(spec: RunSpec, items: list[Item], store_path: Path) -> int:
    """Episodes the run would still play: a run of this name already in the store skips its finished ones."""
    pairs = {(i.id, r) for i in items for r in range(spec.replicates)}
    if not store_path.exists():
        return len(pairs)
    from storage import Store, StoreError

    try:
        store = Store(store_path, readonly=True)
    except StoreError:
        return len(pairs)
    try:
        run = store.run(spec.name)
        return len(pairs - store.finished(run["id"]))
    except StoreError:  # no run of that name yet
        return len(pairs)
    finally:
        store.close()


def per_episode(spec: RunSpec, store_path: Path) -> EpisodeEstimate:
    """Expected tokens and cost of one episode of this run, and what the expectation rests on."""
    if spec.agent != "llm":  # scripted agents call no model
        return EpisodeEstimate(tokens=0, basis=f"'{spec.agent}' is scripted: it calls no model", price=None, usd=0.0)
    past = history(store_path, spec.model)
    if past:
        prompt, completion, basis = past[0], past[1], "mean of earlier runs of this model in the store"
    else:
        completion = ASSUMED_TOKENS * ASSUMED_OUTPUT_SHARE
        prompt, basis = ASSUMED_TOKENS - completion, "an assumption: no earlier run of this model in the store"
    per_call = extra_tools_tokens(spec.extra_tools)
    calls = min(ASSUMED_CALLS, spec.effective_caps().max_turns)
    prompt += per_call * calls  # the general-agent setting: its tool block and schemas ride in every call's prompt
    price = price_for(spec.model, spec.agent_options.get("pricing")) if spec.model else None
    usd = cost(price, Usage(prompt=int(prompt), completion=int(completion)))
    return EpisodeEstimate(
        tokens=round(prompt + completion),
        basis=basis,
        extra_tools_tokens_per_call=per_call,
        price=price,
        usd=None if usd is None else usd["total_usd"],
    )


def extra_tools_tokens(extra_tools: SettingRecord | None) -> int:
    """Tokens the general-agent setting adds to each call's prompt: its tool block and schemas, as recorded."""
    if not extra_tools:
        return 0
    recorded = (extra_tools.get("tool_block_tokens"), extra_tools.get("schema_tokens"))
    return sum(tokens.get("extra", 0) for tokens in recorded if tokens)


def prompt_overhead(caps: Any, ablation: str, extra_tools: dict[str, Any] | None = None, texts: Any = None) -> int:
    """Estimated tokens (characters / 4, as scripted agents' usage) of what every first model call sends before the
    item's own text: the system prompt, the first message and the tool schemas, built by `build_prompt` around an
    empty item (with the run's own prompts, `texts`, if it has them). A token cap at or below it stops every episode
    at its first call: the budgets the scaling report flags as `degenerate` (measured there as the median first-call
    context), caught here before a run."""
    from sandbox.agents.estimated import estimate
    from sandbox.prompts import build_prompt
    from sandbox.records import Item

    blank = Item(
        id="",
        question_type="",
        depth=0,
        reasoning_type="",
        cognitive_skill="",
        venue="",
        consensus_tier="",
        question="",
        options=("", "", "", ""),
        correct_index=0,
        distractor_types=None,
        seed_paper_id="",
        seed_arxiv_id="",
        seed_title="",
        gold_paper_ids=(),
        gold_arxiv_ids=(),
        bridge_paper_ids=(),
        bridge_arxiv_ids=(),
    )
    prompt = build_prompt(blank, caps, ablation, texts=texts)
    extra = 0
    if extra_tools:  # the general-agent setting: its extras' tool block and schemas, as recorded (characters / 4)
        extra = sum((extra_tools.get(k) or {}).get("extra", 0) for k in ("tool_block_tokens", "schema_tokens"))
    return estimate(prompt.system + prompt.first_message + json.dumps(list(prompt.tools))) + extra


def estimate(spec: RunSpec, items: list[Item], store_path: Path) -> Estimate:
    """What `spec` would play of `items` (a stored run of its name skips its finished episodes) and spend."""
    planned = len(items) * spec.replicates
    episodes = remaining(spec, items, store_path)
    ep = per_episode(spec, store_path)
    price = ep.price
    return Estimate(
        run=spec.name,
        agent=spec.agent,
        model=spec.model,
        episodes=episodes,
        already_done=planned - episodes,
        items=len(items),
        replicates=spec.replicates,
        item_ids=[i.id for i in items][:20] + (["…"] if len(items) > 20 else []),
        caps=spec.effective_caps().as_dict(),
        ablation=spec.ablation,
        tokens_per_episode=ep.tokens,
        basis=ep.basis,
        extra_tools_tokens_per_call=ep.extra_tools_tokens_per_call,
        price=None
        if price is None
        else PriceJson(provider=price.provider, input_per_m=price.input_per_m, output_per_m=price.output_per_m),
        cost_usd=None if ep.usd is None else round(ep.usd * episodes, 4),
    )
