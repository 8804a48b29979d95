"""Per-model sampling presets (docs/agents.md): only the knobs a model needs; the user's flags override them."""

from __future__ import annotations

from sandbox.pricing import bare_model

# (model-name prefixes, sampling settings by parameter name: an effort word or thinking tokens, a number)
PRESETS: list[tuple[tuple[str, ...], dict[str, str | int | float]]] = [
    (("claude-opus-4-6", "claude-sonnet-4-6"), {"reasoning_effort": "medium"}),
    (
        ("claude-opus-4-1", "claude-opus-4", "claude-opus-4-5", "claude-sonnet-4-5", "claude-sonnet-4"),
        {"reasoning_effort": "8192"},
    ),
    (("claude-haiku-4-5", "claude-haiku-4"), {}),
    (("gpt-5.4", "gpt-5.3-codex", "gpt-5"), {"reasoning_effort": "medium"}),
    (("deepseek-chat", "deepseek-reasoner"), {"max_tokens": 8192}),
    (
        ("gemini-3.1-pro", "gemini-3.1-flash", "gemini-3-flash-preview", "gemini-3-flash"),
        {"top_k": 64, "reasoning_effort": "medium"},
    ),
    (("gemini-2.5-pro", "gemini-2.5-flash"), {"top_k": 64}),
    (("zai-org/glm-5.1", "glm-5.1"), {}),
    (("minimaxai/minimax-m2.7", "minimax-m2.7"), {"top_k": 40}),
    (("moonshotai/kimi-k2.5", "kimi-k2.5"), {"temperature": 0.6}),
    (("qwen/qwen3.5-", "qwen3.5-"), {"top_k": 20}),
    (("qwen/qwen3-", "qwen3-"), {"temperature": 0.7, "top_p": 0.8, "top_k": 20}),
    (("google/gemma-4-", "gemma-4-", "google/gemma-3-", "gemma-3-"), {"top_k": 64}),
    (("meta-llama/llama-3.3-", "llama-3.3-"), {"temperature": 0.6, "top_p": 0.9}),
]
DEFAULT_MAX_TOKENS = 16_384


def preset_for(model: str) -> dict[str, str | int | float]:
    """The longest case-insensitive prefix match over the bare model name (provider prefix dropped)."""
    name = bare_model(model).lower()
    best: tuple[int, dict[str, str | int | float]] = (0, {})
    for prefixes, preset in PRESETS:
        for p in prefixes:
            if name.startswith(p) and len(p) > best[0]:
                best = (len(p), preset)
    return dict(best[1])
