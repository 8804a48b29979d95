"""Judging parallel samples: pointwise and pairwise verdicts over the k-subsets, cached in the store so a paid
judge is asked once, and the judge a run recorded."""

from __future__ import annotations

import random
from collections.abc import Callable
from difflib import get_close_matches
from typing import Any, TypedDict

from stats import parallel as par
from storage import Store
from storage.rows import JudgmentRow, LightTrajectoryRow, RunRow
from workbench.service.records.parallel import JudgeJson, JudgeRole
from workbench.service.scaling.sequential import ScalingInputError


def _sample_view(store: Store, traj: LightTrajectoryRow, index: int):
    from sandbox.judges import Sample, TranscriptStep

    steps = store.steps(traj["id"])
    reads = [s["text"] for s in steps if s["kind"] == "tool" and s["delivered"]]
    transcript: list[TranscriptStep] = [
        {"kind": s["kind"], "tool": s["tool_name"], "args": s["tool_args"], "text": s["text"]} for s in steps
    ]
    return Sample(index, traj["answer"], traj["predicted_index"], reads, transcript)


class Judged(TypedDict):
    """A judge's verdicts on a run's samples (`judge_run`): per item its pointwise verdicts, its pairwise verdicts by
    (leader, challenger) and the orders bump sort followed per (item, k, subset); how many verdicts the store lacked
    (asked for none) and how many pairwise verdicts were unparsed. A scores file holds pointwise verdicts only
    (`tables` None)."""

    pointwise: list[list[bool | None]]
    tables: list[dict[tuple[int, int], bool]] | None
    orders: dict[tuple[int, int, tuple[int, ...]], list[list[int]]]
    missing: int
    unparsed_pairwise: int


def subsets(big_k: int, k: int, seed: int = 0) -> list[tuple[int, ...]]:
    """The k-subsets of the K samples every strategy at k is averaged over: the subsets pass@k averages over
    (`stats.parallel.k_subsets`: all C(K, k) of them up to 256, else 256 drawn with the report's seed), so at
    k = 1 a strategy is judged on each sample alone and at k not dividing K no sample is dropped."""
    return par.k_subsets(big_k, k, seed=seed)


async def judge_run(
    store: Store,
    run_id: int,
    items: list[str],
    samples,
    corpus,
    judge,
    ks: list[int],
    n_orders: int = 8,
    seed: int = 0,
    ask: bool = True,
    progress: Callable[[str, int, int], None] | None = None,
) -> Judged:
    """Pointwise verdicts on every sample and pairwise verdicts along random orders, cached in the store.

    `progress(judge name, items judged, items)` is called after each item (judging a finished run can take long
    after its sampling said "already done": a front end shows how far it is).

    Pairwise orders are drawn within every k-subset of `subsets` (the subsets pass@k averages over), so
    an LLM judge may be asked up to K(K − 1) ordered pairs per item. The orders of (item, k, subset)
    come from their own seeded generator, so they do not depend on
    which other k are read (the TUI reading the recorded k, the CLI a new list, agree). With
    `ask=False` nothing is asked: a verdict not in the store is counted in `missing` (and an order
    that needs it is abandoned), so a paid judge is never called implicitly. `unparsed_pairwise` counts the pairwise
    verdicts bump sort read that were unparsed (the leader kept on each).
    """
    asker = _Asker(store, run_id, judge, ask)
    pointwise: list[list[bool | None]] = []
    tables: list[dict[tuple[int, int], bool]] = []
    orders: dict[tuple[int, int, tuple[int, ...]], list[list[int]]] = {}
    for i, (item_id, rows) in enumerate(zip(items, samples, strict=True)):
        item = corpus.item(item_id)
        views = _lazy(lambda rows=rows: [_sample_view(store, t, j) for j, t in enumerate(rows)])
        pointwise.append([await asker.verdict_or_none(item, views, "pointwise", j, None) for j in range(len(rows))])
        table: dict[tuple[int, int], bool] = {}
        for k in ks:
            for block in subsets(len(rows), k, seed):
                rng = random.Random(f"{seed}:{item_id}:{k}:{','.join(map(str, block))}")
                orders[(i, k, block)] = [
                    await _bump(asker, item, views, table, _order(block, n_orders, rng))
                    for _ in range(n_orders if k > 1 else 1)
                ]
        tables.append(table)
        if progress is not None:
            progress(judge.name, i + 1, len(items))
    return Judged(
        pointwise=pointwise, tables=tables, orders=orders, missing=asker.missing, unparsed_pairwise=asker.unparsed
    )


def _order(block: tuple[int, ...], n_orders: int, rng: random.Random) -> list[int]:
    """One order of a k-subset's samples for bump sort: drawn with `rng`, or the samples' own with one order (the
    study's fixed one, `--orders 1`)."""
    order = list(block)
    if n_orders > 1:
        rng.shuffle(order)
    return order


async def _bump(asker: _Asker, item, views, table: dict[tuple[int, int], bool], order: list[int]) -> list[int]:
    """Bump sort along `order`: the leader kept or replaced by each challenger by the judge's pairwise verdict, each
    pair asked once per item (`table`); an unparsed verdict keeps the leader, counted. A verdict the store lacks in
    stored-only mode abandons the order. Returns the order."""
    leader = order[0]
    try:
        for challenger in order[1:]:
            if (leader, challenger) not in table:  # unparsed keeps the leader, counted
                said = await asker.verdict(item, views, "pairwise", leader, challenger)
                asker.unparsed += said is None
                table[(leader, challenger)] = bool(said)
            if table[(leader, challenger)]:
                leader = challenger
    except _Missing:
        pass
    return order


class _Asker:
    """A judge's verdicts on one run: read from the store's cache, else asked and stored (`ask`), else counted
    missing (stored-only mode, `_Missing`)."""

    def __init__(self, store: Store, run_id: int, judge, ask: bool):
        self.store, self.run_id, self.judge, self.ask = store, run_id, judge, ask
        self.cache = store.judgments(run_id, judge.name)
        self.asked: dict[tuple[str, str, int, int | None], bool | None] = {}  # verdicts asked in this reading
        self.missing = self.unparsed = 0

    async def verdict_or_none(self, item, views, kind: str, a: int, b: int | None) -> bool | None:
        """`verdict`, None where the store lacks it in stored-only mode."""
        try:
            return await self.verdict(item, views, kind, a, b)
        except _Missing:
            return None

    async def verdict(self, item, views, kind: str, a: int, b: int | None) -> bool | None:
        """The verdict on sample a (pointwise), or on a against b (pairwise); `_Missing` when not stored and not
        to be asked."""
        key = (item.id, kind, a, b)
        if key in self.cache:
            return stored_verdict(self.cache[key])
        if key not in self.asked:
            if not self.ask:
                self.missing += 1
                raise _Missing
            self.asked[key] = await self._asked(item, views, kind, a, b)
        return self.asked[key]

    async def _asked(self, item, views, kind: str, a: int, b: int | None) -> bool | None:
        """The judge asked, its verdict stored with its prompt, reply, tokens, cost and token buckets."""
        judge = self.judge
        v = await (judge.pointwise(item, views()[a]) if b is None else judge.pairwise(item, views()[a], views()[b]))
        u = v.usage
        self.store.add_judgment(
            self.run_id,
            item.id,
            kind,
            judge.name,
            a,
            b,
            v.value,
            v.prompt,
            v.reply,
            v.tokens,
            v.cost_usd,
            None if u is None else (u.prompt, u.completion, u.cache_read, u.cache_creation),
        )
        return None if v.value is None else bool(int(v.value))


def stored_verdict(row: JudgmentRow) -> bool | None:
    """A stored verdict; one stored unparsed is read again from its stored reply (`sandbox.judges` parses the
    study's `<ranking>` tag as well as ours), so verdicts a judge gave in the study's words count once read."""
    if row["verdict"] is not None:
        return bool(row["verdict"])
    if not row["reply"]:
        return None
    from sandbox.judges import parse_choice, parse_judgment

    return (parse_choice if row["kind"] == "pairwise" else parse_judgment)(row["reply"])


class _Missing(Exception):
    """A verdict the store does not hold, in stored-verdicts-only mode."""


def _lazy(make):
    """A zero-argument function computing `make()` once, on first call (sample views read every step)."""
    box: list[Any] = []

    def get():
        if not box:
            box.append(make())
        return box[0]

    return get


def recorded_judge(run: RunRow):
    """The judge a parallel run was last read with (`--judge`, recorded), as the TUI must use it.

    `evidence` (offline, free) is the judge itself; `none` is None; `same` or a model string is a
    `StoredJudge` of that name: its stored verdicts are read, never asked for (no implicit spend).
    Runs recorded before the judge was stored read with the default, `evidence`.
    """
    from sandbox.judges import EvidenceJudge, StoredJudge

    scaling = run["config"].get("scaling")
    name = (scaling.get("judge") if isinstance(scaling, dict) else None) or "evidence"
    if name == "none":
        return None
    if name == "evidence":
        return EvidenceJudge()
    return StoredJudge(f"llm:{run['model'] if name == 'same' else name}")


JUDGE_WORDS = ("evidence", "none", "same")


def check_judge_name(kind: str) -> None:
    """A judge is one of `JUDGE_WORDS` or a provider/model string (`openai/gpt-4.1`); anything else is a slip, refused
    with the nearest word (`evidnce` → did you mean 'evidence'?) rather than sent to a provider as a model."""
    provider, _, model = kind.partition("/")
    if kind in JUDGE_WORDS or (provider.strip() and model.strip()):
        return
    near = get_close_matches(kind.lower(), JUDGE_WORDS, n=1, cutoff=0.6)
    hint = f": did you mean '{near[0]}'?" if near else ""
    raise ScalingInputError(
        f"judge '{kind}' is neither {', '.join(JUDGE_WORDS)} nor a provider/model string (e.g. openai/gpt-4.1){hint}"
    )


def stored_only(name: str):
    """The judge `name` (`--judge` as recorded) read from the store only, never asked: what a screen reads a study
    with while it still samples (its verdicts come after)."""
    from sandbox.judges import StoredJudge

    return StoredJudge(name)


def make_judge(kind: str, spec: Any, base_url: str | None = None):
    """The judge `--judge` names for a parallel run of `spec`: None for `none`, the evidence judge (offline), or an
    LLM judge of the run's own model (`same`, with its base URL, key and client) or of another model string.
    ScalingInputError for a name that is none of these (`check_judge_name`); ValueError for `same` without a model;
    ConfigError when the model cannot be reached as configured."""
    from sandbox import judges

    check_judge_name(kind)
    if kind == "none":
        return None
    if kind == "evidence":
        return judges.EvidenceJudge()
    model = spec.model if kind == "same" else kind
    if not model:
        raise ValueError("--judge same needs an LLM run (--agent llm --model …)")
    same = kind == "same"
    return judges.LLMJudge(
        model,
        base_url=base_url or (spec.agent_options.get("base_url") if same else None),
        api_key_env=spec.agent_options.get("api_key_env") if same else None,
        client=(spec.agent_options.get("client") or "auto") if same else "auto",
        prompts=spec.prompts,
        pricing=spec.agent_options.get("pricing"),  # every priced call of the run by its recorded prices
    )


def is_stored_judge(judge: Any) -> bool:
    """Whether the judge only reads stored verdicts (the TUI never asks a model on its own)."""
    from sandbox.judges import StoredJudge

    return isinstance(judge, StoredJudge)


def judge_role(name: str, model: str | None) -> JudgeRole:
    """Which judge a stored verdict's judge name is: the offline `evidence` judge, the run's own model (`self`, the
    study's self-choice) or another model (`external`)."""
    if name == "evidence":
        return "evidence"
    return "self" if model and name == f"llm:{model}" else "external"


def judges_measured(store: Store, run: RunRow, items: list[str], samples) -> list[JudgeJson]:
    """Every judge with stored pointwise verdicts on this run (trials beyond the first aside), measured against the
    truth over the samples it judged: TPR, FPR, precision, accuracy, the study's self-choice (`stats.judges`), and its
    stored pairwise verdicts with how many of them were unparsed (bump sort keeps the leader on those: counted,
    so a judge whose replies were not read is seen)."""
    from stats.judges import judge_quality

    out: list[JudgeJson] = []
    wanted = set(items)
    for name in store.judge_names(run["id"]):
        if TRIAL_MARK in name:
            continue
        cache = store.judgments(run["id"], name)
        truths, verdicts = _judged_samples(cache, items, samples)
        if truths:
            pairwise = [stored_verdict(row) for key, row in cache.items() if key[1] == "pairwise" and key[0] in wanted]
            quality = judge_quality(truths, verdicts)
            role = judge_role(name, run.get("model"))
            unparsed = sum(v is None for v in pairwise)
            out.append(
                {"judge": name, "role": role, **quality, "pairwise": len(pairwise), "pairwise_unparsed": unparsed}
            )
    return out


def _judged_samples(cache, items: list[str], samples) -> tuple[list[bool], list[bool | None]]:
    """The samples a judge gave a stored pointwise verdict on: their truth and its verdict, side by side."""
    truths: list[bool] = []
    verdicts: list[bool | None] = []
    for item_id, rows in zip(items, samples, strict=True):
        for j, t in enumerate(rows):
            row = cache.get((item_id, "pointwise", j, None))
            if row is not None:
                truths.append(bool(t["correct"]))
                verdicts.append(stored_verdict(row))
    return truths, verdicts


TRIAL_MARK = "#trial"


def stored_trials(store: Store, run_id: int, judge_name: str) -> int:
    """How many trials of `judge_name` the store holds verdicts of on `run` (1 + the largest `#trialT`; 1 with none
    beyond the judge's own), so a report asked with fewer trials still finds the ones recorded."""
    prefix = judge_name + TRIAL_MARK
    names = store.judge_names(run_id)
    trials = [int(n[len(prefix) :]) for n in names if n.startswith(prefix) and n[len(prefix) :].isdigit()]
    return 1 + max(trials, default=0)


class TrialJudge:
    """Trial t (≥ 1) of a judge asked again (`--judge-trials N`): its verdicts are stored under `NAME#trialT`, so the
    trial is part of the verdict cache key and trial 0 is the judge's own verdicts."""

    def __init__(self, judge, trial: int):
        self.judge = judge
        self.name = f"{judge.name}{TRIAL_MARK}{trial}"

    async def pointwise(self, item, sample):
        return await self.judge.pointwise(item, sample)

    async def pairwise(self, item, leader, challenger):
        return await self.judge.pairwise(item, leader, challenger)
