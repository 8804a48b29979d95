"""What a run is: `RunSpec`, everything that defines a run (its identity, which a resume must match) and how to
execute it (workers, slice, limits, servers)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from sandbox.episode import RetryPolicy
from sandbox.extra_tools.registry import SettingRecord, setting_identity
from sandbox.prompts import DEFAULT_PROMPTS, Prompts, caps_for_ablation
from sandbox.records import DEFAULT_WORKERS, Caps, VerifierOptions
from sandbox.shard import Shard

PROFILE = "agenthop-v1"
READING_OPTIONS = ("ks", "judge", "orders", "tie_rule", "judge_trials", "cost_mode")  # how a parallel run is read,
# not how it was sampled
# May change between resumes: how to reach the model, not what it is asked. The base URLs used are kept in the config.
# The client (native or litellm) is one of them: both send the same request and read the reply the same way
# (tests/test_client_parity.py), so a run may be resumed through either; the clients used are kept in the config.
EXECUTION_OPTIONS = (
    "api_key",
    "base_url",
    "concurrency",
    "rpm",
    "timeout_s",
    "pricing",
    "client",
    "local_threads",
    "extra_tools_timeout_s",
)


@dataclass
class RunSpec:
    """Everything that defines a run (identity) and how to execute it (workers, slice)."""

    name: str
    dataset: str
    agent: str
    model: str | None = None
    seed: int = 0
    caps: Caps = field(default_factory=Caps)
    ablation: str = "full"
    replicates: int = 1
    workers: int = DEFAULT_WORKERS
    item_ids: tuple[str, ...] = ()
    question_type: str | None = None  # "single-target" | "multi-target" (or st/mt)
    depth: int | None = None
    limit: int | None = None
    agent_options: dict[str, Any] = field(default_factory=dict)
    max_attempts: int = 3
    attempt_backoff_s: float = 5.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    kind: str = "eval"
    group: str | None = None
    context_budget: int | None = None  # sequential scaling on the token axis: EXTEND below it, STOP above
    estimate_tokens: bool = False  # scripted agents report estimated usage (characters / 4)
    scaling: dict[str, Any] | None = None  # axis, budget label, protocol: recorded with the run
    max_run_tokens: int = 0  # 0 = no run-wide limit; counted like the per-episode cap
    max_run_cost: float = 0.0  # USD; 0 = no limit
    shard: Shard | None = None  # this host's part of the selection (a slice, like --limit: not the identity)
    # how to reach a model verifier (base_url, api_key_env, client, timeout_s): execution, not identity; which
    # verifier it is (`scaling["verifier"]`) is the identity
    verifier_options: VerifierOptions = field(default_factory=VerifierOptions)
    extra_tools: SettingRecord | None = None  # the general-agent setting's record (sandbox.extra_tools.setting)
    prompts: Prompts | None = None  # every text sent to the agent and the judges (--prompts FILE); None: ours

    def prompt_set(self) -> Prompts:
        return self.prompts or DEFAULT_PROMPTS

    family: str | None = None  # the model family and capability tier recorded at creation (tags, not the identity)
    tier: str | None = None
    tagged: tuple[str, ...] = ()  # which of family/tier the person chose: a resume re-tags only those

    def identity(self, fingerprint: str) -> dict[str, Any]:
        """What must match to resume into an existing run."""
        return {
            "profile": PROFILE,
            "dataset_fingerprint": fingerprint,
            "agent": self.agent,
            "model": self.model,
            "seed": self.seed,
            "caps": self.effective_caps().as_dict(),
            "ablation": self.ablation,
            "context_budget": self.context_budget,
            "estimate_tokens": self.estimate_tokens,
            "scaling": {k: v for k, v in (self.scaling or {}).items() if k not in READING_OPTIONS} or None,
            "agent_options": {k: v for k, v in sorted(self.agent_options.items()) if k not in EXECUTION_OPTIONS},
            **({"extra_tools": setting_identity(self.extra_tools)} if self.extra_tools else {}),
            # the prompts' digest, only when they are not ours: a run made before prompts could be replaced resumes
            **({} if self.prompt_set().is_default else {"prompts": self.prompt_set().digest}),
        }

    def effective_caps(self) -> Caps:
        """The ablation's caps; in the general-agent setting each extra tool costs the setting's points."""
        caps = caps_for_ablation(self.caps, self.ablation)
        if self.extra_tools:
            cost = int(self.extra_tools["cost"])
            caps = replace(caps, costs=caps.costs + tuple((name, cost) for name in self.extra_tools["tools"]))
        return caps
