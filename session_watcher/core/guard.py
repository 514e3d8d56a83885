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
from session_watcher.core.eoq import (
    EDGE_MARGIN,
    TTL_SECONDS,
    cache_class,
    cache_edge,
    cache_lifetime,
    cold_context,
    fresh_split,
    is_number,
    prepared,
    restart_cost,
    restart_saving,
)
from session_watcher.core.numbers import dollars, duration, over_calls, tokens

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

    from session_watcher.core.shapes import ModelParams

GUARD_X = 1.0  # the cold-return trigger when a config lacks `guard_x` (the same as config.DEFAULTS)
SLACK = 60.0  # seconds: a `prompt_cache` whose cache was written before the last call, minus this, is stale
MODES = ("ask", "warn", "off")  # config.GUARD_MODES; "block", the name "ask" had before, is read as "ask"
ASK_WINDOW = 60.0  # seconds after the guard asked within which a prompt sent again goes ahead
# held again: the held prompt stayed in the input line and /clear was typed after it
NOT_CLEARED = ("session-watcher: nothing was sent: the input line still held your prompt before /clear. Clear it "
               "first (Ctrl+U), then /clear: the handoff is still ready.")


def no_clear(clear: str) -> str:
    """Held again where the agent has no /clear (`codex exec` sends it to the model as a prompt, cold):
    `clear`, its own way to the fresh session (`Agent.held_words`')."""
    return (f"session-watcher: nothing was sent: there is no /clear here (it would go to the model as a prompt, "
            f"cold). {clear[:1].upper()}{clear[1:]}: the handoff is still ready.")


def _prompt_cache(pc: object, last: float) -> Mapping[str, Any] | None:
    """The status line's `prompt_cache` when it describes the last call (or a later one)."""
    if not isinstance(pc, dict) or pc.get("caching_observed") is False:
        return None
    ttl, expires = pc.get("ttl"), pc.get("expires_at")
    if ttl not in TTL_SECONDS or not is_number(expires):
        return None
    if expires - TTL_SECONDS[ttl] < last - SLACK:  # written before the last call: stale
        return None
    return pc


def edge(lifetime: float) -> float:
    """Seconds idle past which the cache is cold for sure: its lifetime plus EDGE_MARGIN (`eoq.cache_edge`,
    the engine's cold-return advice takes the same)."""
    return cache_edge(lifetime)


def verdict(idle: float, ttl: str | None, cliff: Mapping[str, Any] | None, model: str | None = None) -> str | None:
    """"warm" up to the cache's lifetime (the user's cliff for its class, else the TTL; `model`'s
    own classes for an OpenAI model), "maybe" up to the edge, "cold" past it; None without a class."""
    life = cache_lifetime(ttl, cliff, model)
    if life is None:
        return None
    return "warm" if idle <= life else "cold" if idle > edge(life) else "maybe"


def rewritten(context: float, shared: float) -> float:
    """What a call on an expired cache writes of a `context`: all of it but the shared prefix, which
    it still finds cached (`eoq.fresh_split`, the restart's own rule)."""
    return fresh_split(context, shared)[1]


def cold_cache(state: Mapping[str, Any], cfg: ModelParams, now: float | None) -> dict[str, Any] | None:
    """{source, ttl, lifetimeSeconds, edgeSeconds, lastCallTs, idleSeconds, expiresAt, cold, sure};
    None when it cannot tell (no call yet, no cache write seen). `cold`: past the lifetime (the cache
    may have expired); `sure`: past the edge (it has). `now` None: the figures that need a clock are
    None."""
    e, ctx = state["engine"], state["context"]
    last, ttl = e.get("lastTs"), e.get("ttl")
    if not is_number(last):
        return None
    idle = None if now is None else max(0.0, now - last)
    out: dict[str, Any] = {"source": None, "ttl": ttl, "lifetimeSeconds": None, "edgeSeconds": None,
                           "lastCallTs": last, "idleSeconds": idle, "expiresAt": None, "cold": None, "sure": None}
    pc = _prompt_cache(ctx.get("promptCache"), last)
    resume = ctx.get("resume")
    if pc is not None:
        life = TTL_SECONDS[pc["ttl"]]
        out.update(source="prompt_cache", ttl=pc["ttl"], lifetimeSeconds=life, edgeSeconds=edge(life),
                   expiresAt=float(pc["expires_at"]))
        if now is not None:
            out["cold"] = pc.get("warm") is False or now >= pc["expires_at"]
            out["sure"] = now >= pc["expires_at"] + EDGE_MARGIN
        return out
    if isinstance(resume, dict) and resume.get("expired") is True and resume.get("lastTs") == last:
        life = TTL_SECONDS.get(ttl or "5m", TTL_SECONDS["5m"])
        out.update(source="session_start", cold=True, lifetimeSeconds=life, edgeSeconds=edge(life), sure=False)
        if now is not None and is_number(resume.get("seconds")) and is_number(resume.get("at")):
            out["idleSeconds"] = max(0.0, resume["seconds"] + now - resume["at"])
            out["sure"] = out["idleSeconds"] > edge(life)
        return out
    lifetime = cache_lifetime(ttl, cfg.get("cliff"), ctx.get("model"))
    if lifetime is None:
        return None
    source = "ttl" if lifetime == cache_lifetime(ttl, None, ctx.get("model")) else "cliff"
    out.update(source=source, lifetimeSeconds=lifetime, edgeSeconds=edge(lifetime), expiresAt=last + lifetime)
    if source == "cliff":  # the returns the inference rests on, for its words
        cliff = cfg.get("cliff")
        evidence = cliff.get("evidence") if cliff else None
        out["evidence"] = evidence.get(cache_class(ttl, ctx.get("model")) or "") if evidence else None
    if idle is not None:
        said = verdict(idle, ttl, cfg.get("cliff"), ctx.get("model"))
        out["cold"], out["sure"] = said != "warm", said == "cold"
    return out


def advice(state: Mapping[str, Any], q: Mapping[str, Any], cold: Mapping[str, Any],
           cfg: ModelParams, now: float | None = None) -> dict[str, Any] | None:
    """The figures of the warning for a cold cache (`cold` from `cold_cache`); None without an L.

    What the next prompt re-writes is the last call's whole context (`eoq.cold_context`: what it
    read and what it wrote), less the shared prefix a call on an expired cache still reads
    (`rewriteTokens`). A fresh session is priced at the restart's K: what the handoff the guard
    prepared carries while it is pending (`eoq.prepared`, at `now`), else the model's (bDefault at
    the session's cRatio). `savingUsd` is what restarting now saves, `eoq.restart_saving` with the
    cache cold: the one figure the status line and `status` show, over the next optimal cycle
    (`cycle`, in calls)."""
    big_l = q.get("L")
    if not is_number(big_l) or big_l <= 0:
        return None
    e, ctx = state["engine"], state["context"]
    big_l = cold_context(state, int(big_l))
    model = ctx.get("model")
    ttl = cold.get("ttl") or e.get("ttl")
    c_ratio = q.get("cRatio") or prices.c_ratio(model, ttl)
    shared = q.get("shared") or 0
    rewrite_units = restart_cost(c_ratio, big_l, shared)
    fresh, k = q.get("bDefault"), q.get("K")
    if not is_number(k) and is_number(fresh) and fresh > 0:
        k = restart_cost(c_ratio, fresh, shared)  # `quantities`' K of a restart carrying bDefault
    fresh_usd = None if not is_number(k) else prices.read_usd(model, k)
    carry = prepared(state, now)
    if carry is not None:
        fresh, k, fresh_usd = carry["carryTokens"], carry["K"], carry.get("carryUsd")
    cheaper = is_number(fresh) and fresh > 0 and is_number(k) and k < rewrite_units
    saving = restart_saving(state, q, cold=True, now=now)[1] if cheaper else None
    x, guard_x = q.get("x"), cfg.get("guard_x") or GUARD_X
    compact = e.get("floor") if e.get("compactions") and e.get("segment") else None
    return {
        "source": cold.get("source"), "ttl": ttl, "idleSeconds": cold.get("idleSeconds"),
        "lifetimeSeconds": cold.get("lifetimeSeconds"), "edgeSeconds": cold.get("edgeSeconds"),
        "evidence": cold.get("evidence"), "sure": cold.get("sure") is not False,
        "tokens": big_l, "rewriteTokens": rewritten(big_l, shared), "usd": prices.read_usd(model, rewrite_units),
        "freshTokens": fresh if cheaper else None, "freshUsd": fresh_usd if cheaper else None,
        "freshShared": min(shared, fresh) if cheaper and is_number(fresh) else shared,
        "savingUsd": saving, "cycle": q.get("horizon") if saving is not None else None,
        "untilCompaction": saving is not None and q.get("untilCompaction") is True,
        "handoff": carry is not None,
        "compactTokens": compact if is_number(compact) and compact < big_l else None,
        "x": x, "restartFirst": bool(cheaper and is_number(x) and x >= guard_x), "model": model,
    }


def _priced(usd: object) -> str:
    """' ($1.13)' after a figure of tokens; '' when the model's price is unknown."""
    return f" ({dollars(usd)})" if is_number(usd) else ""


def _class(ttl: str | None, model: str | None = None) -> str:
    """The cache class in words: Claude Code's "5-minute" / "1-hour", an OpenAI model's own ("Codex
    10-minute", core.prices_openai.class_words), not the "5m" its usage is stored as."""
    cls = cache_class(ttl, model)
    if cls and cls[:6] == "codex-":  # a Codex thread's class (prices_openai is loaded for it already)
        from session_watcher.core.prices_openai import class_words

        return class_words(cls)
    return "1-hour" if ttl == "1h" else "5-minute"


def _why(a: Mapping[str, Any]) -> str:
    source, life = a.get("source"), a.get("lifetimeSeconds")
    if source == "prompt_cache":
        return "Claude Code says the cache has expired"
    if source == "session_start":
        return "Claude Code says the cache has likely expired"
    if source == "cliff" and is_number(life):  # an inference: said with what it rests on
        ev = a.get("evidence")
        why = f"your {_class(a.get('ttl'), a.get('model'))} cache goes cold after ~{duration(life)}"
        return why + (f": {ev[3]} of your {ev[2]} returns past that were cold" if isinstance(ev, list) and len(ev) == 4
                      else ", inferred from your sessions")
    if is_number(life) and life != TTL_SECONDS.get(a.get("ttl") or "5m"):  # a class of its own (OpenAI's floor)
        return f"the cache, kept ~{duration(life)} on this model, has expired"
    return f"the {_class(a.get('ttl'), a.get('model'))} cache has expired"


def compose(a: Mapping[str, Any], ask: bool = False) -> str:
    """The line shown to the user: a `systemMessage`, or with `ask` the reason the prompt was held
    back, naming the choices with their prices. Short of the edge (`sure` false) it only says the
    cache may have expired; below guard_x (no `restartFirst`) it only says what the prompt re-writes.
    A held prompt names nothing that sends the cold conversation to the model for a fresh session:
    the handoff is prepared (`handoff`), so `/clear` alone starts it, once the input line is empty
    (`clear`: the agent's words for that); `compact` False: no /compact offered (`codex exec`), and
    `typedCompact` (the held prompt is `/compact`, typed there): said to be words to the model, not a
    command, with the way to a real compaction (the TUI's)."""
    idle = a.get("idleSeconds")
    ago = f"last call {duration(idle)} ago" if is_number(idle) else "the last call is old"
    rewrite, usd = tokens(a["rewriteTokens"]), _priced(a.get("usd"))
    if not a.get("sure"):
        life, edge_s = a.get("lifetimeSeconds"), a.get("edgeSeconds")
        words = [ago]
        if a.get("source") in ("prompt_cache", "session_start"):
            words.append(_why(a))
        if is_number(life) and is_number(edge_s):
            words.append(f"the {_class(a.get('ttl'), a.get('model'))} cache lasts ~{duration(life)}, surely gone after "
                         f"{duration(edge_s)}")
        return (f"session-watcher: the cache may have expired ({'; '.join(words)}): if so, this prompt re-writes "
                f"{rewrite} tokens{usd}.")
    head = f"session-watcher: cold cache ({ago}; {_why(a)})"
    fresh = a.get("freshTokens")
    if not (a.get("restartFirst") and is_number(fresh)):
        return f"{head}: this prompt re-writes {rewrite} tokens{usd}."
    # a fresh session writes what it carries, except the shared prefix, which it reads
    verb, verbs = ("carry", "carries") if a.get("freshShared") else ("write", "writes")
    fresh_text = f"~{tokens(fresh)} tokens{_priced(a.get('freshUsd'))}"
    # the one figure of what a restart now saves (the status line's): over the advice's horizon (the
    # next optimal cycle, or the calls before an automatic compaction, said so; none left: the re-write alone)
    saving, over = a.get("savingUsd"), over_calls(a.get("cycle"), a.get("untilCompaction"))
    less = f", {dollars(saving)} less{' ' + over if over else ''}" if is_number(saving) and saving >= 0.005 else ""
    compact = a.get("compactTokens")
    then = f", then carries its summary (~{tokens(compact)} last time)" if is_number(compact) else ", then its summary"
    whole = tokens(a["tokens"])
    if not ask:
        return f"{head}: this prompt re-writes {rewrite} tokens{usd}; a fresh session would {verb} {fresh_text}."
    if a.get("typedCompact"):
        # `/compact` typed into `codex exec`: no command there (0.171.0 sends the words to the model in
        # an ordinary request, the whole thread re-written cold, nothing compacted)
        out = (f"{head}. Nothing was sent. `codex exec` has no /compact command: it sends the word to the model "
               f"as a prompt, which re-writes {rewrite} tokens{usd} and compacts nothing (sent again within a "
               f"minute, it goes as that prompt). To compact, resume the thread in Codex's terminal UI "
               f"(`codex resume`) and type /compact there: it reads all {whole} of the context cold once{usd}{then}.")
    else:
        out = (f"{head}. Nothing was sent. Continue: send this prompt again within a minute, re-writing {rewrite} "
               f"tokens{usd}.")
    if a.get("compact", True):  # `codex exec` has no /compact: it sends the words to the model, cold
        out += f" Or /compact: reads all {whole} of the context cold once{usd}{then}."
    if a.get("handoff"):
        # how the user clears a held prompt is the agent's (`clear`, set by the hook from the registry:
        # one puts the prompt back in the input line, another does not)
        clear = a.get("clear") or "/clear"
        out += (f" Or a fresh session{less}: a handoff is ready; {clear}, and "
                f"the new session starts with it: it {verbs} {fresh_text}.")
    return out
