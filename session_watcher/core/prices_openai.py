"""OpenAI's prices and cache classes for the models Codex runs. Pure.

Sources: OpenAI's pricing page and the gpt-6.2-sol and gpt-6-sol model pages, read 2026-12 (the
other rows: third-party price lists of the same month). Cache writes are free before the GPT-5.6
family (the uncached input is written at the input price) and cost 1.25x the input price from it
on; reads cost 0.1x the input price, 0.05x on gpt-6.1 / gpt-6.2. So cRatio (write / read) is 10 up to
gpt-5.5, 12.5 on gpt-5.6 and gpt-6.0, 25 on gpt-6.1 / gpt-6.2.

* The long-context step: a call of more than LONG_CONTEXT input tokens on a model that has it costs
  twice every rate, for the whole request (`call_factor`).
* `service_tier` scales every dollar, never cRatio: a model id `gpt-5.6-sol[priority]` (the rollout
  reader's form) is the model at that tier.
* The cache lifetime: 30 minutes is the promised minimum from gpt-5.6 on; older models keep the
  cache in memory, "typically" 5 to 10 minutes idle, never past an hour (`CLASSES`: each
  class's floor, the lifetime until the user's own returns show its cliff, core.eoq.cache_lifetime).

A row carries the date from which it holds; `entry(model, ts)` picks the latest row in force at
`ts` (seconds since the epoch), the earliest where none is (the older price is not known).
"""

from __future__ import annotations

LONG_CONTEXT = 272_000  # input tokens above which a call of a long-context model costs double
LONG_FACTOR = 2.0
FLOOR_NEW = 1800.0  # seconds: the promised minimum lifetime, gpt-5.6 and later
FLOOR_OLD = 600.0  # older models: "typically clears within 5 to 10 minutes of inactivity"
TIERS = {"priority": 2.0, "fast": 2.0, "flex": 0.5, "batch": 0.5, "ultrafast": 3.0}

# (in force from, as epoch seconds or 0, input USD per million tokens, cache read x input, cache
#  write x input, has the long-context step)
Row = tuple[float, float, float, float, bool]
JUL_30_2026 = 1785369600.0  # 2026-07-30T00:00:00Z
# model id prefix -> its rows, oldest first; the longest matching prefix wins
TABLE: dict[str, list[Row]] = {
    "gpt-6.2-sol": [(0, 2.00, 0.05, 1.25, True)],  # Codex's default model; model page
    "gpt-6.1-sol": [(0, 2.00, 0.05, 1.25, True)],
    "gpt-6-sol": [(0, 2.00, 0.10, 1.25, True)],  # model page
    "gpt-6-astra": [(0, 10.00, 0.10, 1.25, False)],
    "gpt-6-luna": [(0, 0.10, 0.10, 1.25, False)],
    "gpt-5.6-sol": [(JUL_30_2026, 4.00, 0.10, 1.25, False)],
    "gpt-5.6-terra": [(JUL_30_2026, 2.00, 0.10, 1.25, False)],
    "gpt-5.6-luna": [(JUL_30_2026, 0.20, 0.10, 1.25, False)],
    "gpt-5.5": [(0, 5.00, 0.10, 1.0, False)],  # and older: no write premium
    "gpt-5.4": [(0, 5.00, 0.10, 1.0, False)],
    "gpt-5.3-codex": [(0, 5.00, 0.10, 1.0, False)],
    "gpt-5": [(0, 5.00, 0.10, 1.0, False)],
}
_BY_LENGTH = sorted(TABLE, key=len, reverse=True)
# the context window Codex reports (`model_context_window`): 258,400 for every gpt-5.x thread of the
# fixtures, 475,000 for gpt-6.2-sol (reference/codex.md)
WINDOWS = {"gpt-6.2-sol": 475_000}
WINDOW = 258_400


def split(model: str) -> tuple[str, float]:
    """(the model id without its tier, the tier's factor on every dollar)."""
    m = model.lower()
    if m.endswith("]") and "[" in m:
        at = m.rindex("[")
        return m[:at], TIERS.get(m[at + 1:-1], 1.0)
    return m, 1.0


def _rows(model: str) -> list[Row] | None:
    if model in TABLE:  # the table's own name (no longer one can be a prefix of it): a fold asks on every call
        return TABLE[model]
    return next((TABLE[p] for p in _BY_LENGTH if model == p or model.startswith((p + "-", p + "."))), None)


def entry(model: str | None, ts: float | None = None) -> tuple[float, float, float] | None:
    """(input USD per million tokens at the model's tier, read x input, write x input), None for a
    model not in the table."""
    if not model:
        return None
    base, factor = split(model)
    rows = _rows(base)
    if not rows:
        return None
    row = rows[0]
    for r in rows:
        if ts is not None and r[0] <= ts:
            row = r
    return row[1] * factor, row[2], row[3]


def known(model: str | None) -> bool:
    return bool(model) and _rows(split(model or "")[0]) is not None


def c_ratio(model: str | None) -> float | None:
    """Cache write price / cache read price (10, 12.5 or 25), None for a model not in the table."""
    got = entry(model)
    return None if got is None else got[2] / got[1]


def call_factor(model: str | None, input_tokens: int) -> float:
    """What every rate of one call is multiplied by: 2 past LONG_CONTEXT on a long-context model."""
    rows = _rows(split(model)[0]) if model else None
    return LONG_FACTOR if rows and rows[-1][4] and input_tokens > LONG_CONTEXT else 1.0


def call_usd(model: str | None, uncached: int, cr: int, cw: int, out: int, out_price: float | None = None,
             ) -> float | None:
    """One call's input-side dollars (uncached, cache reads, cache writes; output at `out_price` USD per
    million where given), the long-context step and the tier included; None for an unknown model."""
    got = entry(model)
    if got is None:
        return None
    base, read, write = got
    usd = (uncached + cr * read + cw * write) * base + out * (out_price or 0.0)
    return usd * call_factor(model, uncached + cr + cw) / 1e6


# the cache classes of OpenAI's models, each with its floor: the key of the user's inferred cliff
# (cliff.json, `report`), as "5m" and "1h" are Claude Code's
CLASSES = {"codex-30m": FLOOR_NEW, "codex-10m": FLOOR_OLD}
# each class as text says it to a person (the ids stay the JSON's and the config's)
CLASS_WORDS = {"codex-30m": "Codex 30-minute", "codex-10m": "Codex 10-minute"}


def class_words(cls: str) -> str:
    """A cache class as text says it: an OpenAI class in words ("Codex 30-minute"), Claude Code's
    "5m" and "1h" as the client writes them."""
    return CLASS_WORDS.get(cls, cls)


def cache_class(model: str | None) -> str:
    """The cache class of `model`: codex-30m on the models that charge for a write (gpt-5.6 on, the
    promised 30 minutes), else codex-10m (the in-memory class, "typically 5 to 10 minutes")."""
    got = entry(model)
    return "codex-30m" if got is not None and got[2] > 1.0 else "codex-10m"



def context_window(model: str) -> int:
    """The context window Codex runs `model` in."""
    base = split(model)[0]
    return next((w for p, w in WINDOWS.items() if base == p or base.startswith(p + "-")), WINDOW)
