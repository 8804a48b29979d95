"""The commented campaign file `campaign init` writes: every key the file takes, what it means, a working
example (two models on two endpoints, three ablations, replicates, a sweep and a parallel study)."""

from __future__ import annotations

EXAMPLE = """\
# An AgentHop campaign: a panel (and its studies) as one file.
#   agenthop-tui --batch campaign run THIS.toml      runs what is missing (again: resumes it)
#   agenthop-tui --batch campaign status THIS.toml   what is done and what is left
# Every run is an ordinary run in the store, named NAME-MODEL-ABLATION (sweeps NAME-MODEL-AXIS@LEVEL, parallel
# studies NAME-MODEL-kK): the same file names the same runs every time. Changing a run's settings here after it
# started is refused as `run` refuses it (rename or delete the stored run, or give the model another name).

name = "panel"             # the first part of every run's name
data = "builtin"           # 'builtin', a release directory, or hf:OWNER/NAME[@REVISION]
seed = 0                   # the agents' seed (part of each run's identity)
workers = 8                # episodes in flight per run (an LLM run: at least its endpoint's calls_in_flight)
limit = 20                 # the first N items of the selection (leave out: every item)
# ids = ["st_0001", "mt_0002"]   # these items only
# question_type = "st"           # st (single-target) or mt (multi-target)
# depth = 2                      # gold papers 1 or 2 hops from the seed
# prompts = "prompts.toml"       # replace the texts sent to agents and judges (`prompts export` writes ours)

[caps]                     # per episode (leave out: the protocol's)
budget = 30                # points; the protocol: 30 points, 20 turns, 200K tokens
max_turns = 20
max_tokens_total = 200000

[runs]                     # what each model runs, unless its entry says otherwise
ablations = ["full", "no-search", "closed-book"]   # full, no-search, closed-book, gold-given: one run each
replicates = 2             # episodes per item in each run

[[models]]
name = "gpt41"             # the model's part of its runs' names
model = "openai/gpt-4.1"   # any litellm model string
api_key_env = "OPENAI_API_KEY"   # the variable holding the key (its name is recorded, never the key)
family = "GPT"             # the panel's groups (leave out: derived from the model string)
tier = "closed-frontier"   # closed-frontier, open-frontier or compute-efficient
calls_in_flight = 16       # at most this many calls at once on this model's endpoint
temperature = 0.0
# top_p, top_k, max_tokens, reasoning_effort, text_tools, timeout, rpm, client: as `run`'s flags

[[models]]
name = "qwen3-8b"
model = "hosted_vllm/Qwen/Qwen3-8B"
base_url = "http://127.0.0.1:8000/v1"   # an OpenAI-compatible server: its own endpoint, its own limit
calls_in_flight = 64
ablations = ["full"]       # this model's own runs
replicates = 1

[[models]]
name = "heuristic"
agent = "heuristic"        # a scripted agent (oracle, random, heuristic): no model, no endpoint

[[sweeps]]                 # a `scale sequential` grid per model named here, then its plateau
models = ["qwen3-8b"]
axis = "tokens"            # tokens, points or turns
grid = "8k,16k,32k"
# strategies = "continue,summarize"   # several: one group each, compared
# verifier = "evidence"

[[parallel]]               # a `scale parallel` study per model named here: K samples per item, judged
models = ["qwen3-8b"]
k = "1,2,4,8"
judge = "evidence"         # evidence (offline), none, same (the run's model) or a model string
judge_trials = 1
"""
