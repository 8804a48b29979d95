"""Model prices (docs/configuration.md) as data, USD per 1M tokens, overridable from the config file.

Lookup is the reference's: the first entry, in list order, whose prefix the model name
starts with (case-sensitive), after dropping a litellm provider prefix such as `openai/` (`bare_model`).
Unknown models are unpriced (cost None), never guessed.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.records import Usage


@dataclass(frozen=True)
class Price:
    prefixes: tuple[str, ...]
    provider: str
    input_per_m: float
    output_per_m: float
    cache_read_mult: float = 1.0
    cache_write_mult: float = 1.0


PRICES: list[Price] = [
    Price(("claude-opus-4-6",), "Anthropic", 5.00, 25.00, 0.10, 1.25),
    Price(("claude-opus-4-5",), "Anthropic", 15.00, 75.00, 0.10, 1.25),
    Price(("claude-opus-4-1", "claude-opus-4"), "Anthropic", 15.00, 75.00, 0.10, 1.25),
    Price(("claude-sonnet-4-6",), "Anthropic", 3.00, 15.00, 0.10, 1.25),
    Price(("claude-sonnet-4-5", "claude-sonnet-4"), "Anthropic", 3.00, 15.00, 0.10, 1.25),
    Price(("claude-haiku-4-5", "claude-haiku-4"), "Anthropic", 1.00, 5.00, 1.00, 1.00),
    Price(("gpt-5.4",), "OpenAI", 1.25, 10.00, 0.50, 1.00),
    Price(("gpt-5.3-codex", "gpt-5.3"), "OpenAI", 1.25, 10.00, 0.50, 1.00),
    Price(("gpt-5",), "OpenAI", 1.25, 10.00, 0.50, 1.00),
    Price(("gpt-4.1-mini",), "OpenAI", 0.40, 1.60, 0.50, 1.00),
    Price(("gpt-4.1",), "OpenAI", 2.00, 8.00, 0.50, 1.00),
    Price(("gpt-4o-mini",), "OpenAI", 0.15, 0.60, 0.50, 1.00),
    Price(("deepseek-chat",), "DeepSeek", 0.27, 1.10, 0.10, 1.00),
    Price(("deepseek-reasoner",), "DeepSeek", 0.55, 2.19, 0.10, 1.00),
    Price(("gemini-3-pro-preview", "gemini-3-pro"), "Google", 2.00, 9.00, 0.20, 1.00),
    Price(("gemini-3.1-pro",), "Google", 4.00, 18.00, 0.25, 1.00),
    Price(("gemini-3.1-flash",), "Google", 0.50, 3.00, 0.25, 1.00),
    Price(("gemini-3-flash-preview", "gemini-3-flash"), "Google", 0.50, 3.00, 0.25, 1.00),
    Price(("gemini-2.5-pro",), "Google", 1.25, 10.00, 0.25, 1.00),
    Price(("gemini-2.5-flash",), "Google", 0.30, 2.50, 0.25, 1.00),
    Price(("zai-org/GLM-5.1", "GLM-5.1"), "Together.ai", 1.40, 4.40),
    Price(("MiniMaxAI/MiniMax-M2.7", "MiniMax-M2.7"), "Together.ai", 0.30, 1.20),
    Price(("moonshotai/Kimi-K2.5", "Kimi-K2.5"), "Together.ai", 0.50, 2.80),
]

# litellm's provider prefixes on our model strings (`anthropic/claude-sonnet-4-5`): not part of the name
PROVIDERS = (
    "openai",
    "anthropic",
    "gemini",
    "deepseek",
    "together_ai",
    "hosted_vllm",
    "vertex_ai",
    "azure",
    "openrouter",
    "xai",
    "bedrock",
    "mistral",
    "groq",
)


def bare_model(model: str) -> str:
    """The model name without a litellm provider prefix (`together_ai/zai-org/GLM-5.1` → `zai-org/GLM-5.1`).

    The prefix is recognised in any case (`Anthropic/…`), as the reference's backend routing does."""
    head, sep, rest = model.partition("/")
    return rest if sep and head.lower() in PROVIDERS else model


def find_price(model: str, table: list[Price] | None = None) -> Price | None:
    name = bare_model(model)
    for price in table if table is not None else PRICES:
        if any(name.startswith(p) for p in price.prefixes):
            return price
    return None


def price_for(model: str, rows: list[dict] | None = None) -> Price | None:
    """The price of a run's model: the config file's `[[pricing]]` rows first, then the table."""
    return find_price(model, prices_from_config(rows) if rows else None)


def cost(price: Price | None, usage: Usage) -> dict[str, float] | None:
    """The reference's cost breakdown, each part rounded to 6 dp; None when unpriced."""
    if price is None:
        return None
    parts = {
        "regular_input_usd": round(usage.prompt * price.input_per_m / 1e6, 6),
        "cache_read_usd": round(usage.cache_read * price.input_per_m * price.cache_read_mult / 1e6, 6),
        "cache_creation_usd": round(usage.cache_creation * price.input_per_m * price.cache_write_mult / 1e6, 6),
        "output_usd": round(usage.completion * price.output_per_m / 1e6, 6),
    }
    parts["total_usd"] = round(sum(parts.values()), 6)
    return parts


def prices_from_config(rows: list[dict]) -> list[Price]:
    """Entries from the config file's `[[pricing]]` tables, placed before the defaults so they win."""
    out = []
    for row in rows:
        prefixes = row.get("prefixes") or [row["prefix"]]
        out.append(
            Price(
                tuple(prefixes),
                row.get("provider", "custom"),
                float(row["input_per_m"]),
                float(row["output_per_m"]),
                float(row.get("cache_read_mult", 1.0)),
                float(row.get("cache_write_mult", 1.0)),
            )
        )
    return out + PRICES


def study_cost(price: Price | None, usage: Usage) -> float | None:
    """The scaling study's cost rule (App. C.1): every input token at the input price, cached or not (its authors
    could not rely on providers' caching), output at the output price; None when unpriced."""
    if price is None:
        return None
    tokens_in = usage.prompt + usage.cache_read + usage.cache_creation
    return round((tokens_in * price.input_per_m + usage.completion * price.output_per_m) / 1e6, 6)
