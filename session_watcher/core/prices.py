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

The user's own prices (the config's `[prices."MODEL"]`, USD per million tokens: input, cache_read,
cache_write, cache_write_1h) win over both tables. The shell hands them in with `use` once the config
is settled; this module reads no config. A field left out keeps the built-in ratio to input.
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
FIELDS = ("input", "cache_read", "cache_write", "cache_write_1h")  # a price row of the config, USD/MTok

Entry = tuple[float, float, float, float]  # base input USD/MTok; read, 5-minute write, 1-hour write x base
_SEEN: dict[str, Entry | None] = {}  # model id -> entry: a report asks once per call
_RATIOS: dict[tuple[str | None, bool], float] = {}  # (model id, 1-hour class) -> cRatio: the fold asks thrice a call
_USER: dict[str, dict[str, float]] = {}  # the user's rows (`use`), by lower-case model id or prefix
_GENERATION = [0]  # how many times the user's rows changed: a cache of prices elsewhere keys on it


def use(rows: dict[str, dict[str, float]]) -> None:
    """Price with the user's own rows (the config's `prices`, checked by the config) from now on."""
    new = {name.lower(): dict(row) for name, row in rows.items()}
    if new != _USER:
        _USER.clear()
        _USER.update(new)
        _SEEN.clear()
        _RATIOS.clear()
        _GENERATION[0] += 1


def user_rows() -> list[tuple[str, list[tuple[str, float]]]]:
    """The user's rows in force, in a fixed order (what a cache of priced figures keys on)."""
    return sorted((name, sorted(row.items())) for name, row in _USER.items())


def generation() -> int:
    """Changes whenever `use` changed the prices."""
    return _GENERATION[0]


def _user_row(m: str) -> dict[str, float] | None:
    """The user's row for the lower-case id `m` (without a tier): the longest name that is `m` or
    starts it before a '-' or '.'."""
    name = user_row_name(m)
    return None if name is None else _USER[name]


def user_row_name(m: str) -> str | None:
    """The name of the user's row that prices the lower-case id `m` (without a tier), if one does: the
    longest that is `m` or starts it before a '-' or '.' (its fields left out keep the tables' own)."""
    names = [n for n in _USER if m == n or m.startswith((n + "-", n + "."))]
    return max(names, key=len) if names else None


def _overridden(m: str, found: Entry | None) -> Entry | None:
    """`found` (the tables' entry of the lower-case id `m`) with the user's row over it."""
    tier = 1.0
    if m.endswith("]") and "[" in m:  # a Codex service tier: the user's dollars are the standard tier's
        from session_watcher.core import prices_openai as codex

        m, tier = codex.split(m)
    row = _user_row(m)
    if row is None:
        return found
    if found is None and "input" not in row:
        return None  # the config refuses this; a row without a base prices nothing
    base = row["input"] * tier if "input" in row else found[0]  # type: ignore[index]  # found when no input
    ratios = (READ, WRITE_5M, WRITE_1H) if found is None else found[1:]
    return (base, *(row[f] * tier / base if f in row and base > 0 else r
                    for f, r in zip(FIELDS[1:], ratios, strict=True)))  # type: ignore[return-value]


def _entry(model: str | None) -> Entry | None:
    """(base input price, cache-read, 5-minute-class write and 1-hour write multipliers) of `model`."""
    if not model:
        return None
    if model in _SEEN:
        return _SEEN[model]
    found = _tables(model)
    if _USER:
        found = _overridden(model.lower().removesuffix("[1m]"), found)
    if len(_SEEN) < 1024:
        _SEEN[model] = found
    return found


def _tables(model: str) -> Entry | None:
    """The built-in tables' entry of `model`."""
    m = model.lower().removesuffix("[1m]")
    row = next((TABLE[p] for p in _BY_LENGTH if m == p or m.startswith(p + "-")), None)
    if row is None and m.startswith("gpt-"):  # OpenAI's models: their own table, by model id
        from session_watcher.core import prices_openai as codex

        got = codex.entry(model)
        return None if got is None else (*got, WRITE_1H)
    return None if row is None else (row[0], row[1], WRITE_5M, WRITE_1H)


def vendor(model: str | None) -> str | None:
    """Whose model this is by the built-in tables ("openai", "anthropic"), None for one they do not
    know: two vendors' token counts (their own tokenizers) and caches are not one measure."""
    if not model or _tables(model) is None:
        return None
    return "openai" if model.lower().startswith("gpt-") else "anthropic"


def in_tables(model: str) -> bool:
    """The built-in tables price `model` (whatever the user's rows say)."""
    return _tables(model) is not None


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


def write_1h_multiplier(model: str | None) -> float:
    """The 1-hour cache write price over the base input price: WRITE_1H but where the user says."""
    entry = _entry(model)
    return WRITE_1H if entry is None else entry[3]


def c_ratio(model: str | None, ttl: str | None) -> float:
    """Cache write price / cache read price for the TTL class ("1h" or else 5 minutes)."""
    key = (model, ttl == "1h")
    got = _RATIOS.get(key)
    if got is None:
        got = (write_1h_multiplier(model) if key[1] else write_multiplier(model)) / read_multiplier(model)
        if len(_RATIOS) < 1024:
            _RATIOS[key] = got
    return got


def read_usd(model: str | None, tokens: float) -> float | None:
    """What reading `tokens` from the cache costs, in USD (None for an unknown model)."""
    base = input_price(model)
    return None if base is None else tokens * base * read_multiplier(model) / 1e6


def write_usd(model: str | None, cw5m: float, cw1h: float) -> float | None:
    """What writing these cache tokens costs, in USD (None for an unknown model)."""
    base = input_price(model)
    if base is None:
        return None
    return (cw5m * write_multiplier(model) + cw1h * write_1h_multiplier(model)) * base / 1e6


def call_factor(model: str | None, prompt_tokens: float) -> float:
    """What every rate of a call of `prompt_tokens` input is multiplied by: 1, except past OpenAI's
    long-context step (core.prices_openai: 2 past 272K on the models that have it)."""
    if not model or not model.lower().startswith("gpt-"):
        return 1.0
    from session_watcher.core import prices_openai as codex

    return codex.call_factor(model, int(prompt_tokens))
