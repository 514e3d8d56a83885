"""Per-model prices for pricing cache writes (USD per million tokens), and the cache multipliers.

Base input prices from Anthropic's pricing page (see docs/report-schema.json's description of
`usd`); cache writes cost 1.25x base input for 5-minute writes and 2x for 1-hour writes, cache reads
0.1x. An unknown model has no price: its dollar figures are null, never guessed.
"""

from __future__ import annotations

WRITE_5M = 1.25
WRITE_1H = 2.0
READ = 0.10

# model id prefix -> base input price, USD per million tokens; the longest matching prefix wins
INPUT_PRICE: dict[str, float] = {
    "claude-opus-4": 15.0,  # Opus 4 (claude-opus-4-20250514)
    "claude-opus-4-1": 15.0,
    "claude-opus-4-5": 5.0,
    "claude-opus-4-6": 5.0,
    "claude-opus-4-7": 5.0,
    "claude-opus-4-8": 5.0,
    "claude-sonnet-4": 3.0,  # Sonnet 4, 4.5, 4.6
    "claude-haiku-4-5": 1.0,
    "claude-3-5-haiku": 0.80,
    "claude-opus-5": 5.0,
    "claude-sonnet-5": 2.0,
    "claude-fable-5": 10.0,
    "claude-mythos-5": 10.0,
}
_BY_LENGTH = sorted(INPUT_PRICE, key=len, reverse=True)


def input_price(model: str | None) -> float | None:
    """Base input price of `model` (USD/MTok), None when the model is not in the table."""
    if not model:
        return None
    m = model.lower().removesuffix("[1m]")
    for prefix in _BY_LENGTH:
        if m == prefix or m.startswith(prefix + "-"):
            return INPUT_PRICE[prefix]
    return None


def write_usd(model: str | None, cw5m: int, cw1h: int) -> float | None:
    """What writing these cache tokens cost, in USD (None for an unknown model)."""
    base = input_price(model)
    if base is None:
        return None
    return (cw5m * WRITE_5M + cw1h * WRITE_1H) * base / 1e6
