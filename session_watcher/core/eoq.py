"""The cost model (SPEC "The cost model"), all of it: the formulas, and `quantities(state, cfg)`, every
figure of the model for a session state (what the fold gates on and the status document shows). Pure.

Restarting costs writing what the restart carries (B tokens) to the cache, except the shared prefix
it finds already cached; staying costs reading L each call; the context grows by g per call. In
units of B x read price, with d = x - 1, cEff = K / B and K = cRatio (B - shared) + shared:

    cost(d) = cRatio*g/B + 1 + cEff*(g/B)/d + d/2

whose minimum is at d = dhat = sqrt(2*cEff*g/B): the sweet spot xSweet = 1 + dhat. With
shared = 0, cEff = cRatio and this is the v1 model exactly.
"""

from __future__ import annotations

import math

from session_watcher.core import prices
from session_watcher.core.window import context_window

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import Context, Engine, Lamp, ModelParams, Quantities, State

# the API caches no prompt shorter than this, and every agent's system prompt is far longer: a call
# below it is no request of the conversation (real sessions log failed ones with all-zero usage)
MIN_PROMPT = 1024
G_MIN = 100.0  # tokens per call: floor of the growth rate
MF_MAX = math.sqrt(2) - 1  # the movable fraction's maximum (shared = 0), at dhat = sqrt(2)
CRATIO_5M = 1.25 / 0.10  # 12.5: 5-minute cache write / cache read, on most models
CRATIO_1H = 2.0 / 0.10  # 20: 1-hour cache write / cache read, on most models
BILL_EPS = 1e-9  # bill progress this close to a whole bill is that bill (float sums of rent rates)
HYSTERESIS = 0.8  # a lit lamp on the left arm goes out below 0.8 x the sweet spot's dhat

# Growth smoother (docs/model.md, "Choosing the growth estimate": chosen by backtest on real sessions)
HOLT_ALPHA = 0.05  # level: ~20 calls of memory once warm
HOLT_BETA = 0.0  # trend: off (any trend term re-introduced burst-following on real sessions)
WARM_CALLS = 20  # until then the level is the running mean of the residuals seen
CLIP = 4.0  # once warm, a residual above CLIP x the level counts as CLIP x the level
# the agent compacts on its own at its window less this, when neither the config nor the agent says
# (docs/model.md, "The horizon and the compaction")
COMPACT_RESERVE = 45_000


def real_request(prompt: int) -> bool:
    """A call whose prompt (input + cache read + cache write) could hold a system prompt: MIN_PROMPT
    tokens or more. Any other (a failed request logged with all-zero usage) counts in the token totals but
    shapes nothing of the model: no floor, no L, no growth, no bill, no alert (SPEC "Inputs")."""
    return prompt >= MIN_PROMPT


def fresh_split(carry: float, shared: float) -> tuple[float, float]:
    """(read, written): what a fresh session's first call does with the `carry` tokens it sends. It
    reads the shared prefix earlier sessions left cached (never more than it carries) and writes the
    rest. The one rule for a restart's price: K below, the cold-cache guard's fresh start, and the
    backtest's counterfactual first call all take it from here."""
    read = min(max(shared, 0.0), max(carry, 0.0))
    return read, max(carry, 0.0) - read


def restart_cost(c_ratio: float, b: float, shared: float) -> float:
    """K, in read-price tokens: a restart writes what it carries except the shared prefix it reads."""
    read, written = fresh_split(b, shared)
    return c_ratio * written + read


def c_eff(c_ratio: float, b: float, shared: float) -> float:
    """K / B: the restart's price per carried token, in read prices (cRatio when nothing is shared)."""
    return restart_cost(c_ratio, b, shared) / b if b > 0 else c_ratio


def dhat(c_effective: float, g: float, b: float) -> float:
    return math.sqrt(2 * c_effective * g / b)


def movable_fraction(dh: float, write_share: float | None = None) -> float:
    """mf = dhat / (1 + dhat + cRatio*g/B): the timing-sensitive share of cost at the optimum.

    `write_share` is cRatio*g/B; it defaults to dhat^2/2, its value when nothing is shared."""
    w = dh * dh / 2 if write_share is None else write_share
    return dh / (1 + dh + w)


def positional_penalty(x: float, dh: float) -> float | None:
    """P = (r - 1)^2 / (2r) with r = (x - 1)/dhat; None where r <= 0 (P is infinite there)."""
    r = (x - 1) / dh
    if r <= 0:
        return None
    return (r - 1) ** 2 / (2 * r)


def bill_premium(x: float, dh: float, mf: float | None = None) -> float | None:
    """bp = mf * P: the relative excess cost of a cycle ending at x over the optimal one."""
    p = positional_penalty(x, dh)
    if p is None:
        return None
    return (movable_fraction(dh) if mf is None else mf) * p


def rent_rate(l_tokens: float, b_default: float, c_effective: float) -> float:
    """rentRate = max(0, L - B_default) / (cEff * B_default): 1.0 at the rate wall (one restart)."""
    return max(0.0, l_tokens - b_default) / (c_effective * b_default)


def backstop_interval(mf: float, base: float) -> int | None:
    """N = ceil(base * 0.4142 / mf) bill cycles; None (infinite) when mf is 0."""
    if mf <= 0:
        return None
    return max(1, math.ceil(base * 0.4142 / mf))


def cycle_saving(l_tokens: float, b: float, calls: float, k: float) -> float:
    """What restarting now saves over the next `calls` calls, in read-price tokens: calls (L - B) - K
    (each of them reads L - B fewer tokens). Over the optimal cycle, calls = m = dhat B / g; up to an
    automatic compaction that comes first, fewer (`advice_horizon`)."""
    return calls * (l_tokens - b) - k


def compaction_point(learned: float | None, window: int | None, reserve: float) -> float | None:
    """The prompt size (tokens) at which the agent compacts the context on its own: the session's own
    last automatic compaction's (`learned`, its tokens before) when it had one, else the window less
    `reserve` (config `compact_reserve`); None when the window is not known."""
    if learned is not None and learned > 0:
        return float(learned)
    return None if window is None else float(window) - reserve


def advice_horizon(m: float, pressure: float, point: float | None, g: float) -> float:
    """The calls a restart now is priced over: the optimal cycle's `m`, or fewer when the automatic
    compaction (at `point` tokens, the context growing by `g` a call from `pressure`) comes first: it
    resets the context, roughly a free restart, so a restart's lighter reads end there (none when the
    point is passed already). The one horizon of the gate, the reminders and the alert's promise."""
    if point is None:
        return m
    return min(m, max(0.0, (point - pressure) / g))


def holt(level: float | None, trend: float, value: float, n: int | None = None) -> tuple[float, float]:
    """One step of the growth smoother: Holt's double exponential smoothing of the residual growth
    per call, with a running-mean start (the first WARM_CALLS residuals weigh equally) and, once warm,
    a residual above CLIP x the level counted as CLIP x the level. `n` = residuals seen before this
    one (None: warm)."""
    if level is None:
        return value, 0.0
    seen = WARM_CALLS if n is None else n
    if seen >= WARM_CALLS:
        value = min(value, CLIP * max(level, G_MIN))
    a = max(HOLT_ALPHA, 1.0 / (seen + 1))
    new_level = a * value + (1 - a) * (level + trend)
    new_trend = HOLT_BETA * (new_level - level) + (1 - HOLT_BETA) * trend
    return new_level, new_trend


def growth(level: float | None, trend: float) -> float:
    """g = max(G_MIN, level + trend)."""
    return G_MIN if level is None else max(G_MIN, level + trend)


def lamp(x: float | None, x_sweet: float | None, bp: float | None, amber: float, red: float, *,
         prev: str | None = None) -> Lamp:
    """white before a valid baseline or at x <= 1; green on the left arm; on the right arm amber from
    bp = `amber` (config `bp_amber`, the one definition of where amber starts) and red from `red`.
    Hysteresis: a lit lamp keeps its colour for as long as the session is past its sweet spot, amber
    and red alike (a prompt that shrinks without a compaction, as a Codex thread's after an
    interrupted turn, took red back to amber and, a dozen calls later, to red again); on the left arm
    it is amber down to x - 1 = 0.8 (xSweet - 1) (xSweet moves with g, x dips when a read joins B):
    only a restart, a compaction or a real fall of x puts it out. A lit lamp does not go back to white
    when x dips to 1 (a file read joins B a call or two before it reaches L)."""
    if x is None or x_sweet is None:
        return "white"
    lit = prev in ("amber", "red")
    if x <= 1:
        return "white" if prev in (None, "white") else "green"
    if x < x_sweet or bp is None:
        return "amber" if lit and x - 1 >= HYSTERESIS * (x_sweet - 1) else "green"
    if bp >= red or prev == "red":
        return "red"
    if bp >= amber or lit:
        return "amber"
    return "green"


def bill_step(progress: float, prev_rent: float, rent: float) -> tuple[float, int]:
    """One call's bills: the progress grows by the rent rate (trapezoid between the previous call's
    rate and this one's); each whole unit is a bill cycle. Returns (progress left, bills completed)."""
    progress += (prev_rent + rent) / 2
    # a bill that completes to within rounding is complete (25.999...96 is 26 bills, not 25 and 0.99...)
    done = math.floor(progress + BILL_EPS) if progress + BILL_EPS >= 1 else 0
    return max(0.0, progress - done), done


# ----------------------------------------------------------------------------- the session's figures

TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}
# seconds idle past a cache's lifetime before it is cold for sure: the guard holds a prompt and the
# advice says restart only past it; in between the cache only may have expired (docs/model.md, "The
# cold-cache guard, measured")
EDGE_MARGIN = 180.0


def cache_edge(lifetime: float) -> float:
    """Seconds idle past which a cache of this lifetime is cold for sure: lifetime + EDGE_MARGIN."""
    return lifetime + EDGE_MARGIN


def cache_class(ttl: str | None, model: str | None = None) -> str | None:
    """The class of the user's cliff a cache falls in: `ttl` ("5m" / "1h") for Claude's, an OpenAI
    model's own (codex-30m / codex-10m) for `model`'s; a class name is its own; None for no class."""
    if ttl in TTL_SECONDS:
        if model and model[:4].lower() == "gpt-":  # an OpenAI model's cache: Claude's cliff is not its
            from session_watcher.core.prices_openai import cache_class as openai_class

            return openai_class(model)
        return ttl
    if ttl and ttl[:6] == "codex-":
        from session_watcher.core.prices_openai import CLASSES

        return ttl if ttl in CLASSES else None
    return None


def cache_lifetime(ttl: str | None, cliff: Mapping[str, Any] | None, model: str | None = None) -> float | None:
    """Seconds a cache written at `ttl` ("5m" / "1h", or a class name) stays warm: the user's
    inferred cliff for its class (`cache_class`) when the warmth report found one (`cfg["cliff"]`),
    else the class's TTL (an OpenAI class: its floor); None for no class. `model`: the model that
    wrote it (an OpenAI model's cache has its own classes)."""
    cls = cache_class(ttl, model)
    if cls is None:
        return None
    known = (cliff or {}).get(cls)
    if isinstance(known, int | float) and not isinstance(known, bool) and known > 0:
        return float(known)
    if cls in TTL_SECONDS:
        return TTL_SECONDS[cls]
    from session_watcher.core.prices_openai import CLASSES

    return CLASSES[cls]


def session_c_ratio(state: State, cfg: ModelParams) -> float:
    """The config's cRatio, else the model's cache-write / cache-read price for the TTL class seen."""
    override = cfg.get("cRatio")
    if override:
        return float(override)
    return prices.c_ratio(state["context"].get("model"), state["engine"]["ttl"])


def compact_reserve(ctx: Context, cfg: ModelParams) -> float:
    """Where the agent compacts on its own, as its window less this many tokens: the config's
    `compact_reserve` when set, else what the agent says of its client (`compactReserve`: Claude Code
    by its version), else COMPACT_RESERVE."""
    set_ = cfg.get("compact_reserve")
    if set_ is not None:
        return float(set_)
    said = ctx.get("compactReserve")  # a state file's: trusted only as a whole number
    return float(said) if isinstance(said, int) and not isinstance(said, bool) and said >= 0 else COMPACT_RESERVE


def session_point(state: State, cfg: ModelParams) -> tuple[float | None, int | None]:
    """The session's compaction point (its own last automatic compaction, else its window less
    `compact_reserve`) and its window, as `compaction_point` and `context_window` take them."""
    ctx = state["context"]
    window = context_window(ctx.get("window"), [ctx.get("model")], ctx.get("peak"))
    return compaction_point(state["engine"].get("compactAt"), window, compact_reserve(ctx, cfg)), window


def session_horizon(state: State, cfg: ModelParams, m: float, g: float) -> float:
    """`advice_horizon` for the session as it stands: its compaction point and its last prompt."""
    point, _window = session_point(state, cfg)
    return advice_horizon(m, float(state["context"].get("pressure") or 0), point, g)


def compaction_hold(point: float | None, pressure: float, g: float, mean: float, need: float) -> int | None:
    """Whether the automatic compaction's nearness holds a restart's advice back (docs/model.md, "The
    compaction within a restart's payback"): None when, from the prompt `pressure`, the compaction
    `point` is at least `need` calls away at the larger of the growth `g` and the segment's mean
    growth since its first prompt `mean` (bursts included), or no point is known: the advice may
    speak; 0 when it is nearer at g itself, or `pressure` is at the point or past it: held; else held
    by the segment's burst alone (a g of 0 or less never reaches the point), and the calls (at least
    1) that burst says the compaction is away: a hold that ends if it has not come."""
    if point is None or need <= 0:
        return None
    away = point - pressure
    if away <= 0:
        return 0
    rate = max(g, mean)
    if rate <= 0 or away >= need * rate:
        return None
    if g > 0 and away < need * g:
        return 0
    return max(1, math.ceil(away / rate))


def quantities(state: State, cfg: ModelParams) -> Quantities:
    """Every figure of the cost model for the state as it stands (None where not valid yet)."""
    return with_horizon(state, cfg, figures(state, cfg))


def figures(state: State, cfg: ModelParams) -> Quantities:
    """`quantities` but the advice's horizon (`horizon`, `saving`: None, `untilCompaction`: False
    until `with_horizon`): what the fold's lamp and bills read on every call; the horizon only when
    the gate or a reminder weighs the saving (`core.engine.worth_saying`)."""
    e = state["engine"]
    floor = e["floor"]
    cr = session_c_ratio(state, cfg)
    g = growth(e["level"], e["trend"])
    shared = e["shared"] or 0
    if floor is None:
        return _unpriced(e, cr, g, None)
    b_full = floor + e["bFull"]
    b_default = floor + e["bIncl"]
    base = b_default if b_default > 0 else b_full
    if base <= 0:
        return _unpriced(e, cr, g, (b_full, b_default))
    big_l = e["L"] or 0
    x = big_l / base
    k = restart_cost(cr, base, shared)
    ce = k / base
    dh = dhat(ce, g, base)
    mf = movable_fraction(dh, cr * g / base)
    bp = bill_premium(x, dh, mf)
    return {
        "L": e["L"], "cRatio": cr, "cEff": ce, "K": k, "shared": shared, "g": g, "bFull": b_full,
        "bDefault": b_default, "x": x, "dhat": dh, "xSweet": 1 + dh, "mf": mf, "br": bp,
        # past a long-context step every rate of a call doubles: the rent is what the call costs
        "burnRate": rent_rate(big_l * prices.call_factor(state["context"].get("model"), big_l), base, ce),
        "wallP": 1 + ce,
        "lamp": lamp(x, 1 + dh, bp, cfg["bp_amber"], cfg["bp_red"], prev=e["lamp"]),
        "backstopN": backstop_interval(mf, cfg["backstop_base"]),
        "saving": None, "horizon": None, "untilCompaction": False,
    }


def _unpriced(e: Engine, cr: float, g: float, b: tuple[int, int] | None) -> Quantities:
    """The figures of a state with no valid baseline yet: no floor (`b` None), or a baseline of 0
    tokens (`b`: the full and default ones; x is 1)."""
    b_full, b_default = (None, None) if b is None else b
    return {"L": e["L"], "cRatio": cr, "cEff": None, "K": None, "shared": e["shared"] or 0, "g": g,
            "bFull": b_full, "bDefault": b_default, "x": None if b is None else 1.0, "dhat": None,
            "xSweet": None, "mf": None, "br": None, "burnRate": None, "wallP": None, "lamp": "white",
            "backstopN": None, "saving": None, "horizon": None, "untilCompaction": False}


def with_horizon(state: State, cfg: ModelParams, q: Quantities) -> Quantities:
    """`q` (`figures` of the state as it stands) with the advice's horizon and what a restart saves
    over it, filled in place: over the optimal cycle, or up to the automatic compaction when it
    comes first (`advice_horizon`)."""
    dh, b_default, b_full = q["dhat"], q["bDefault"], q["bFull"]
    if dh is None or b_default is None or b_full is None or q["horizon"] is not None:
        return q
    base = b_default if b_default > 0 else b_full
    m = dh * base / q["g"]
    q["horizon"] = h = session_horizon(state, cfg, m, q["g"])
    q["untilCompaction"] = h < m
    q["saving"] = cycle_saving(q["L"] or 0, base, h, q["K"] or 0.0)
    return q


def bill_counted(e: Engine, cfg: ModelParams) -> bool:
    """The gate's bill condition: a bill cycle of this segment completed during the deep-water dwell
    or in the `bill_lookback` calls before it began (0: during the dwell, the v2 rule; a lookback as
    long as the segment: any since the segment, or the restart, began)."""
    last = e.get("lastBill", 0)
    return bool(last) and last > e["segCalls"] - e["dwell"] - int(cfg.get("bill_lookback", 0))


def cache_cold(state: State, cfg: ModelParams, now: float | None) -> bool:
    """The session's cache has expired by `now` (seconds): its last real request is older than the
    cache's lifetime (`cache_lifetime`: the TTL class it wrote at, or the user's inferred cliff)."""
    e = state["engine"]
    life = cache_lifetime(e["ttl"], cfg.get("cliff"), state["context"].get("model"))
    return now is not None and life is not None and e["lastTs"] is not None and now - e["lastTs"] > life


def cold_context(state: Mapping[str, Any], l_tokens: int) -> int:
    """What a call on an expired cache re-sends: the last call's whole context (its prompt,
    `context.pressure`: what it read and what it wrote) when larger than `l_tokens` (L, its read),
    in a segment with a call (after a compaction the cache it had is already dealt with)."""
    pressure = state["context"].get("pressure")
    if state["engine"].get("segCalls") and isinstance(pressure, int) and pressure > l_tokens:
        return pressure
    return l_tokens


def prepared(state: Mapping[str, Any], now: float | None) -> Mapping[str, Any] | None:
    """The handoff the cold-cache guard prepared for this session's fresh start, while it is pending:
    the state's `guard.carry` record (the hook that prepared it writes it: what the note carries and
    its K, `core.handoff.price`), made in this gap and segment (no call since), not stale at `now`;
    taking or dropping the handoff clears it. None without a clock: the fold's alerts and trace rows
    are the transcript's alone, as replay's."""
    mark = state.get("guard")
    carry = mark.get("carry") if isinstance(mark, dict) else None
    if now is None or not isinstance(carry, dict):
        return None
    e = state["engine"]
    k, until = carry.get("K"), carry.get("until")
    if carry.get("lastTs") != e.get("lastTs") or carry.get("segment") != e.get("segment"):
        return None
    ok = is_number(k) and k > 0 and is_number(carry.get("carryTokens")) and is_number(until) and now <= until
    return carry if ok else None


def is_number(v: object) -> TypeGuard[float]:
    """A finite int or float, not a bool: a figure read from a state or a payload that may be anything."""
    return isinstance(v, int | float) and not isinstance(v, bool) and v - v == 0  # NaN, infinity: v - v is NaN


def restart_saving(state: Mapping[str, Any], q: Mapping[str, Any], *, cold: bool = False,
                   now: float | None = None, k: float | None = None) -> tuple[float | None, float | None]:
    """What restarting now saves, (read-price tokens, dollars; None where not valid or not priced):
    the one figure the status line, the alerts and their notification, `status`, the session page,
    `handoff` and the cold-cache guard show. Warm: over the advice's horizon (the next optimal cycle,
    or the calls before an automatic compaction), h (L - B) - K (`cycle_saving`, `quantities`'
    `saving`), K the restart's: `k` when given (a handoff just written: its note's), else the
    handoff the guard prepared while it is pending (`prepared`, judged at `now`), else the model's.
    With the cache `cold` (expired: `cache_cold`, or the client says so), the session's next call
    would also re-write its context, all but the prefix a cold call still reads (the shared one, as
    K does): a restart spares that re-write too, restart_cost(cRatio, L, shared) - L on top (L:
    `cold_context`, the last call's whole context). `q`: the state's `quantities`."""
    saving, model_k = q.get("saving"), q.get("K")
    if saving is None:
        return None, None
    if k is None:
        carry = prepared(state, now)
        k = None if carry is None else carry["K"]
    if k is not None and model_k is not None:
        saving += model_k - k
    if cold:
        big_l = cold_context(state, q.get("L") or 0)
        saving += restart_cost(q["cRatio"], big_l, q.get("shared") or 0) - big_l
    return saving, prices.read_usd(state["context"].get("model"), saving)


def reminder_interval(e: Engine, n_back: int | None, cfg: ModelParams) -> int | None:
    """Bill cycles in deep water from the last advice to the next reminder: the backstop interval
    times `remind_backoff` once per reminder already given in the segment (None: never)."""
    return None if n_back is None else math.ceil(n_back * cfg["remind_backoff"] ** e["reminders"] - 1e-9)
