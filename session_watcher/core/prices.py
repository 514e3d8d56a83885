"""One price table for the cost model, the alerts' dollar figures and the reports. Pure.

Source: Anthropic's pricing and model pages (platform.claude.com, "Pricing" and each model's
overview), read late 2026 (the copy checked is dated 2026-09/2026-11). Every model writes the
5-minute cache at 1.25x its base input price and the 1-hour cache at 2x; it reads the cache at 0.1x,
except Opus 5.5 and Sonnet 5.5 (0.05x) and Fable 5.1 and Mythos 5.1 (0.025x). So cRatio, the cache
write price over the cache read price, is 12.5 / 20 (5 min / 1 h) on most models, 25 / 40 and
50 / 80 on those.

OpenAI's models (`gpt-*`, run by Codex) come from core.prices_openai: their own write multiplier
(1x before GPT-5.6, no premium), their tier in the id.

A model not in the table reads at 0.1x for the cost model (`known()` says it is a guess) and has no
dollar price: its dollar figures are None, never guessed.
"""

from __future__ import annotations

WRITE_5M = 1.25  # x base input
WRITE_1H = 2.0
READ = 0.10  # the usual cache-read multiplier

# model id prefix -> (base input price in USD per million tokens, cache-read multiplier);
# the longest matching prefix wins ("claude-opus-5-5" before "claude-opus-5")
TABLE: dict[str, tuple[float, float]] = {
    "claude-opus-4": (15.0, READ),  # Opus 4 (claude-opus-4-20250514)
    "claude-opus-4-1": (15.0, READ),
    "claude-opus-4-5": (5.0, READ),
    "claude-opus-4-6": (5.0, READ),
    "claude-opus-4-7": (5.0, READ),
    "claude-opus-4-8": (5.0, READ),
    "claude-sonnet-4": (3.0, READ),  # Sonnet 4, 4.5, 4.6
    "claude-haiku-4-5": (1.0, READ),
    "claude-3-5-haiku": (0.80, READ),
    "claude-opus-5": (5.0, READ),
    "claude-sonnet-5": (2.0, READ),
    "claude-fable-5": (10.0, READ),
    "claude-mythos-5": (10.0, READ),
    "claude-opus-5-5": (4.0, 0.05),
    "claude-sonnet-5-5": (2.0, 0.05),
    "claude-fable-5-1": (10.0, 0.025),
    "claude-mythos-5-1": (10.0, 0.025),
}
_BY_LENGTH = sorted(TABLE, key=len, reverse=True)


_SEEN: dict[str, tuple[float, float, float] | None] = {}  # model id -> entry: a report asks once per call


def _entry(model: str | None) -> tuple[float, float, float] | None:
    """(base input price, cache-read multiplier, 5-minute-class write multiplier) of `model`."""
    if not model:
        return None
    if model in _SEEN:
        return _SEEN[model]
    m = model.lower().removesuffix("[1m]")
    row = next((TABLE[p] for p in _BY_LENGTH if m == p or m.startswith(p + "-")), None)
    found = None if row is None else (row[0], row[1], WRITE_5M)
    if found is None and m.startswith("gpt-"):  # OpenAI's models: their own table, by model id
        from session_watcher.core import prices_openai as codex

        found = codex.entry(model)
    if len(_SEEN) < 1024:
        _SEEN[model] = found
    return found


def known(model: str | None) -> bool:
    return _entry(model) is not None


def input_price(model: str | None) -> float | None:
    """Base input price of `model` (USD/MTok), None when the model is not in the table."""
    entry = _entry(model)
    return None if entry is None else entry[0]


def read_multiplier(model: str | None) -> float:
    """The cache-read price over the base input price; 0.1 for a model not in the table."""
    entry = _entry(model)
    return READ if entry is None else entry[1]


def write_multiplier(model: str | None) -> float:
    """The cache-write price of the 5-minute class (the one a write without a class falls in) over
    the base input price: WRITE_5M on every Claude model, and for a model not in the table."""
    entry = _entry(model)
    return WRITE_5M if entry is None else entry[2]


def c_ratio(model: str | None, ttl: str | None) -> float:
    """Cache write price / cache read price for the TTL class ("1h" or else 5 minutes)."""
    return (WRITE_1H if ttl == "1h" else write_multiplier(model)) / read_multiplier(model)


def read_usd(model: str | None, tokens: float) -> float | None:
    """What reading `tokens` from the cache costs, in USD (None for an unknown model)."""
    base = input_price(model)
    return None if base is None else tokens * base * read_multiplier(model) / 1e6


def write_usd(model: str | None, cw5m: float, cw1h: float) -> float | None:
    """What writing these cache tokens costs, in USD (None for an unknown model)."""
    base = input_price(model)
    if base is None:
        return None
    return (cw5m * write_multiplier(model) + cw1h * WRITE_1H) * base / 1e6


def call_factor(model: str | None, prompt_tokens: float) -> float:
    """What every rate of a call of `prompt_tokens` input is multiplied by: 1, except past OpenAI's
    long-context step (core.prices_openai: 2 past 272K on the models that have it)."""
    if not model or not model.lower().startswith("gpt-"):
        return 1.0
    from session_watcher.core import prices_openai as codex

    return codex.call_factor(model, int(prompt_tokens))
