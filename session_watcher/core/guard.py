"""The cold-cache guard: is the session's cache cold now, and the one line that says what the next
prompt will cost. Pure: plain state and numbers in, a dict or a string out (the clock is an argument).

When the time since the last main-chain API call exceeds the cache's lifetime, the next prompt
re-writes the whole context L at the cache-write price of the session's TTL class. The lifetime
comes, in order of preference, from what Claude Code said (the status line's `prompt_cache`, a
resume's `prompt_cache_likely_expired`), else from the user's inferred cliff (the warmth report),
else from the TTL class (5 min / 1 h). Leading with a restart is advised from x >= GUARD_X (SPEC v2,
"a cold return").
"""

from __future__ import annotations

from session_watcher.core import prices
from session_watcher.core.eoq import TTL_SECONDS, cache_lifetime, fresh_split, restart_cost
from session_watcher.core.render import duration, human

TYPE_CHECKING = False  # typing costs ~3 ms to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import Config

GUARD_X = 1.0  # the cold-return trigger when a config lacks `guard_x` (the same as config.DEFAULTS)
SLACK = 60.0  # seconds: a `prompt_cache` whose cache was written before the last call, minus this, is stale
MODES = ("ask", "warn", "off")  # config.GUARD_MODES; "block", the name "ask" had before, is read as "ask"
ASK_WINDOW = 60.0  # seconds after the guard asked within which a prompt sent again goes ahead
HANDOFF_PLUGIN = "/session-watcher:handoff"  # the plugin's command
HANDOFF_CLI = "! session-watcher handoff"  # the same from Claude Code's bash mode (the install.sh route)


def _num(v: object) -> TypeGuard[float]:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _prompt_cache(pc: object, last: float) -> Mapping[str, Any] | None:
    """The status line's `prompt_cache` when it describes the last call (or a later one)."""
    if not isinstance(pc, dict) or pc.get("caching_observed") is False:
        return None
    ttl, expires = pc.get("ttl"), pc.get("expires_at")
    if ttl not in TTL_SECONDS or not _num(expires):
        return None
    if expires - TTL_SECONDS[ttl] < last - SLACK:  # written before the last call: stale
        return None
    return pc


def cold_cache(state: Mapping[str, Any], cfg: Config, now: float | None) -> dict[str, Any] | None:
    """{source, ttl, lifetimeSeconds, lastCallTs, idleSeconds, expiresAt, cold}; None when it cannot
    tell (no call yet, no cache write seen). `now` None: the figures that need a clock are None."""
    e, ctx = state["engine"], state["context"]
    last, ttl = e.get("lastTs"), e.get("ttl")
    if not _num(last):
        return None
    idle = None if now is None else max(0.0, now - last)
    out: dict[str, Any] = {"source": None, "ttl": ttl, "lifetimeSeconds": None, "lastCallTs": last,
                           "idleSeconds": idle, "expiresAt": None, "cold": None}
    pc = _prompt_cache(ctx.get("promptCache"), last)
    resume = ctx.get("resume")
    if pc is not None:
        out.update(source="prompt_cache", ttl=pc["ttl"], lifetimeSeconds=TTL_SECONDS[pc["ttl"]],
                   expiresAt=float(pc["expires_at"]))
        if now is not None:
            out["cold"] = pc.get("warm") is False or now >= pc["expires_at"]
        return out
    if isinstance(resume, dict) and resume.get("expired") is True and resume.get("lastTs") == last:
        out.update(source="session_start", cold=True)
        if now is not None and _num(resume.get("seconds")) and _num(resume.get("at")):
            out["idleSeconds"] = max(0.0, resume["seconds"] + now - resume["at"])
        return out
    lifetime = cache_lifetime(ttl, cfg.get("cliff"), ctx.get("model"))
    if lifetime is None:
        return None
    source = "ttl" if lifetime == cache_lifetime(ttl, None, ctx.get("model")) else "cliff"
    out.update(source=source, lifetimeSeconds=lifetime, expiresAt=last + lifetime)
    if source == "cliff":  # the returns the inference rests on, for its words
        cliff = cfg.get("cliff")
        evidence = cliff.get("evidence") if cliff else None
        out["evidence"] = evidence.get(ttl) if evidence else None
    if idle is not None:
        out["cold"] = idle > lifetime
    return out


def advice(state: Mapping[str, Any], q: Mapping[str, Any], cold: Mapping[str, Any],
           cfg: Config) -> dict[str, Any] | None:
    """The figures of the warning for a cold cache (`cold` from `cold_cache`); None without an L.

    What the next prompt re-writes is the last call's whole context, what it read and what it wrote
    (its prompt, `context.pressure`), not its read alone; none in a segment with no call yet (after
    a compaction, idle ones included, the cache it had is already dealt with)."""
    big_l = q.get("L")
    if not _num(big_l) or big_l <= 0:
        return None
    e, ctx = state["engine"], state["context"]
    pressure = ctx.get("pressure")
    if e.get("segCalls") and _num(pressure) and pressure > big_l:
        big_l = pressure
    model = ctx.get("model")
    ttl = cold.get("ttl") or e.get("ttl")
    one_hour = ttl == "1h"

    def write(tokens: float) -> float | None:
        return prices.write_usd(model, 0, tokens) if one_hour else prices.write_usd(model, tokens, 0)

    b = q.get("bDefault")
    shared = q.get("shared") or 0
    fresh = fresh_usd = None
    c_ratio = prices.c_ratio(model, ttl)
    cheaper = False
    if _num(b) and b > 0:
        fresh = b
        shared, written = fresh_split(b, shared)  # reads the shared prefix, writes the rest
        w, r = write(written), prices.read_usd(model, shared)
        fresh_usd = None if w is None or r is None else w + r
        cheaper = restart_cost(c_ratio, b, shared) < c_ratio * big_l
    x, guard_x = q.get("x"), cfg.get("guard_x") or GUARD_X
    compact = e.get("floor") if e.get("compactions") and e.get("segment") else None
    return {
        "source": cold.get("source"), "ttl": ttl, "idleSeconds": cold.get("idleSeconds"),
        "lifetimeSeconds": cold.get("lifetimeSeconds"), "evidence": cold.get("evidence"),
        "tokens": big_l, "usd": write(big_l),
        "freshTokens": fresh if cheaper else None, "freshUsd": fresh_usd if cheaper else None,
        "freshShared": shared,
        "compactTokens": compact if _num(compact) and compact < big_l else None,
        "x": x, "restartFirst": bool(cheaper and _num(x) and x >= guard_x), "model": model,
    }


def dollars(usd: float | None) -> str:
    """' ($1.13)', ' (<$0.01)', ' ($120)'; '' when the model's price is unknown."""
    if usd is None:
        return ""
    if usd < 0.005:
        return " (<$0.01)"
    if usd >= 100:
        return f" (${int(usd + 0.5)})"
    return f" (${int(usd * 100 + 0.5) / 100:.2f})"  # half up: $1.125 -> $1.13


def _class(ttl: str | None) -> str:
    return "1-hour" if ttl == "1h" else "5-minute"


def compose(a: Mapping[str, Any], ask: bool = False, handoff: str = HANDOFF_PLUGIN) -> str:
    """The line shown to the user: a `systemMessage`, or with `ask` the reason the prompt was held
    back, naming the three choices with their prices. Below guard_x (no `restartFirst`) it only says
    what the prompt re-writes. `handoff`: how the user writes a handoff on their install route."""
    idle = a.get("idleSeconds")
    ago = f"last call {duration(idle)} ago" if _num(idle) else "the last call is old"
    source, life = a.get("source"), a.get("lifetimeSeconds")
    if source == "prompt_cache":
        why = "Claude Code says the cache has expired"
    elif source == "session_start":
        why = "Claude Code says the cache has likely expired"
    elif source == "cliff" and _num(life):  # an inference: said with what it rests on
        ev = a.get("evidence")
        why = f"your {_class(a.get('ttl'))} cache goes cold after ~{duration(life)}"
        why += (f": {ev[3]} of your {ev[2]} returns past that were cold" if isinstance(ev, list) and len(ev) == 4
                else ", inferred from your sessions")
    else:
        why = f"the {_class(a.get('ttl'))} cache has expired"
    tokens, usd = human(a["tokens"]), dollars(a.get("usd"))
    compact = a.get("compactTokens")
    fresh = a.get("freshTokens")
    head = f"session-watcher: cold cache ({ago}; {why})"
    if not (a.get("restartFirst") and _num(fresh)):
        return f"{head}: this prompt re-writes {tokens} tokens{usd}."
    # a fresh session writes what it carries, except the shared prefix, which it reads
    verb = "carry" if a.get("freshShared") else "write"
    fresh_text = f"~{human(fresh)} tokens{dollars(a.get('freshUsd'))}"
    then = f", then carries its summary (~{human(compact)} last time)" if _num(compact) else ", then its summary"
    if ask:
        return (f"{head}. Nothing was sent. Continue: send this prompt again within a minute, re-writing "
                f"{tokens} tokens{usd}. Or /compact: reads the same {tokens} cold once{usd}{then}. Or a fresh "
                f"session: {handoff}, then /clear, would {verb} {fresh_text}.")
    return (f"{head}: a fresh session would {verb} {fresh_text} instead of re-writing {tokens}{usd} "
            f"({handoff}, then /clear); or /compact.")
