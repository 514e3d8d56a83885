"""The cold-cache guard's pure part (core.guard, core.eoq.cache_lifetime): literal values in and out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import pytest

from session_watcher.agents import claude_code
from session_watcher.core import engine, eoq, guard
from session_watcher.core.numbers import duration

if TYPE_CHECKING:
    from session_watcher.core.shapes import Context, ModelParams, State


def params(**keys: Any) -> ModelParams:
    """The model's parameters the guard reads (a fold's config carries them all)."""
    return cast("ModelParams", keys)


CFG = params(cliff={"5m": None, "1h": None})


def state(last: float | None = 1000.0, ttl: str | None = "5m", **ctx: Any) -> State:
    s = engine.new_state("g")
    s["engine"]["lastTs"], s["engine"]["ttl"] = last, ttl
    s["context"]["model"] = "claude-opus-4-6"
    s["context"].update(cast("Context", ctx))
    return s


# --------------------------------------------------------------------------- the cache's lifetime

@pytest.mark.parametrize(("ttl", "cliff", "want"), [
    ("5m", None, 300.0),
    ("1h", None, 3600.0),
    ("1h", {"1h": 5400}, 5400.0),
    ("5m", {"5m": None, "1h": 5400}, 300.0),  # a cliff for the other class does not count
    ("5m", {"5m": 0}, 300.0),
    ("5m", {"5m": True}, 300.0),
    (None, {"5m": 420}, None),
    ("2h", None, None),
])
def test_cache_lifetime_is_the_class_ttl_unless_its_cliff_is_known(ttl: str | None, cliff: Any,
                                                                   want: float | None) -> None:
    assert eoq.cache_lifetime(ttl, cliff) == want


# --------------------------------------------------------------------------- cold or warm, by which source

def test_five_minute_cache_two_minutes_warm_twenty_cold() -> None:
    warm = guard.cold_cache(state(), CFG, 1120.0)
    assert warm == {"source": "ttl", "ttl": "5m", "lifetimeSeconds": 300.0, "edgeSeconds": 480.0,
                    "lastCallTs": 1000.0, "idleSeconds": 120.0, "expiresAt": 1300.0, "cold": False, "sure": False}
    cold = guard.cold_cache(state(), CFG, 2200.0)
    assert cold is not None
    assert (cold["cold"], cold["sure"]) == (True, True)
    assert cold["idleSeconds"] == 1200.0


def test_one_hour_cache_twenty_minutes_warm_ninety_cold() -> None:
    assert guard.cold_cache(state(ttl="1h"), CFG, 1000.0 + 1200)["cold"] is False  # type: ignore[index]
    assert guard.cold_cache(state(ttl="1h"), CFG, 1000.0 + 5400)["cold"] is True  # type: ignore[index]


def test_cannot_tell_without_a_call_or_a_cache_class() -> None:
    assert guard.cold_cache(state(last=None), CFG, 5000.0) is None
    assert guard.cold_cache(state(ttl=None), CFG, 5000.0) is None


def test_the_inferred_cliff_replaces_the_ttl() -> None:
    cfg = params(cliff={"5m": 420.0, "1h": None})
    got = guard.cold_cache(state(), cfg, 1360.0)
    assert got is not None
    assert (got["source"], got["lifetimeSeconds"], got["cold"]) == ("cliff", 420.0, False)
    assert guard.cold_cache(state(), cfg, 1421.0)["cold"] is True  # type: ignore[index]
    # the returns the report's inference rests on travel with it (cliff.json's "evidence") into the words
    cfg = params(cliff={"5m": 420.0, "1h": None, "evidence": {"5m": [13, 1, 7, 7]}})
    got = guard.cold_cache(state(), cfg, 1800.0)  # past the edge, 420 + 180 s
    assert got is not None
    assert got["evidence"] == [13, 1, 7, 7]
    words = guard.compose(guard.advice(state(), {"L": 90_000, "bDefault": 30_000, "x": 3.0}, got, params()) or {})
    assert "goes cold after ~7 min: 7 of your 7 returns past that were cold" in words


def test_the_clients_prompt_cache_wins_when_it_describes_the_last_call() -> None:
    # the response ended 2 minutes after the call's line: the client's expiry is later than ours
    pc = {"warm": True, "caching_observed": True, "ttl": "5m", "expires_at": 1420}
    got = guard.cold_cache(state(promptCache=pc), CFG, 1360.0)
    assert got is not None
    assert (got["source"], got["expiresAt"], got["cold"]) == ("prompt_cache", 1420.0, False)
    assert guard.cold_cache(state(promptCache=pc), CFG, 1420.0)["cold"] is True  # type: ignore[index]
    told_cold = {**pc, "warm": False}
    assert guard.cold_cache(state(promptCache=told_cold), CFG, 1100.0)["cold"] is True  # type: ignore[index]


def test_a_stale_prompt_cache_is_ignored() -> None:
    # written at 600 (expires 900), before the last call at 1000: it says nothing about that call
    pc = {"warm": True, "caching_observed": True, "ttl": "5m", "expires_at": 900}
    got = guard.cold_cache(state(promptCache=pc), CFG, 1200.0)
    assert got is not None
    assert (got["source"], got["cold"]) == ("ttl", False)
    no_caching = {**pc, "expires_at": 1300, "caching_observed": False}
    assert guard.cold_cache(state(promptCache=no_caching), CFG, 1200.0)["source"] == "ttl"  # type: ignore[index]


def test_a_resume_that_says_expired_is_cold_until_the_next_call() -> None:
    resume = {"expired": True, "seconds": 601, "at": 5000.0, "lastTs": 1000.0}
    got = guard.cold_cache(state(ttl="1h", resume=resume), CFG, 5030.0)
    assert got is not None
    assert (got["source"], got["cold"], got["idleSeconds"]) == ("session_start", True, 631.0)
    later_call = state(last=5100.0, ttl="1h", resume=resume)
    assert guard.cold_cache(later_call, CFG, 5200.0)["source"] == "ttl"  # type: ignore[index]
    not_expired = state(ttl="1h", resume={**resume, "expired": False})
    assert guard.cold_cache(not_expired, CFG, 5030.0)["source"] == "ttl"  # type: ignore[index]


def test_no_clock_no_verdict() -> None:
    got = guard.cold_cache(state(), CFG, None)
    assert got is not None
    assert (got["cold"], got["idleSeconds"], got["expiresAt"]) == (None, None, 1300.0)


# --------------------------------------------------------------------------- the figures and the words

def figures(big_l: int, b: int, ttl: str = "5m", model: str = "claude-opus-4-6", guard_x: float | None = None,
            idle_min: float = 23, **q: Any) -> dict[str, Any]:
    s = state(ttl=ttl)
    s["context"]["model"] = model
    cold = guard.cold_cache(s, CFG, 1000.0 + idle_min * 60)
    assert cold is not None
    got = guard.advice(s, {"L": big_l, "bDefault": b, "x": big_l / b, **q}, cold,
                       params() if guard_x is None else params(guard_x=guard_x))
    assert got is not None
    return got


def test_past_guard_x_the_line_leads_with_the_restart() -> None:
    a = figures(180_000, 41_000)
    assert a["usd"] == pytest.approx(1.125)  # 180k x $5/MTok x 1.25
    assert a["freshUsd"] == pytest.approx(0.25625)
    assert a["restartFirst"] is True
    assert guard.compose(a) == (  # warn: the prompt goes ahead; nothing named sends it to the model
        "session-watcher: cold cache (last call 23 min ago; the 5-minute cache has expired): this prompt "
        "re-writes 180k tokens ($1.13); a fresh session would write ~41k tokens ($0.26).")


def test_the_shared_prefix_read_is_at_most_what_the_fresh_session_carries() -> None:
    a = figures(180_000, 41_000, shared=50_000)  # more shared than carried: it reads the 41k, writes none
    assert a["freshUsd"] == pytest.approx(41_000 * 5e-6 * 0.1)
    assert a["freshShared"] == 41_000
    assert a["restartFirst"] is True
    part = figures(180_000, 41_000, shared=10_000)  # 10k read, 31k written
    assert part["freshUsd"] == pytest.approx(10_000 * 5e-6 * 0.1 + 31_000 * 5e-6 * 1.25)


def test_below_guard_x_the_line_leads_with_what_the_prompt_rewrites() -> None:
    a = figures(45_000, 41_000, guard_x=1.2)  # x = 1.10
    assert a["restartFirst"] is False
    assert guard.compose(a) == (  # below guard_x it only says what the prompt re-writes
        "session-watcher: cold cache (last call 23 min ago; the 5-minute cache has expired): this prompt "
        "re-writes 45k tokens ($0.28).")
    assert guard.compose(a, ask=True) == guard.compose(a)


def test_a_held_prompts_reason_offers_compact_unless_the_agent_has_none() -> None:
    """`codex exec` sends `/compact` to the model as a prompt (cold): its hold offers no /compact, and
    names its own way to a fresh thread; the rest of the reason is the same."""
    a = {**figures(180_000, 41_000), "handoff": True}
    held = guard.compose(a, ask=True)
    assert "Or /compact: reads all 180k of the context cold once ($1.13)" in held
    assert "a handoff is ready; /clear, and the new session starts with it" in held
    exec_held = guard.compose({**a, "clear": "run `codex exec` without `resume`", "compact": False}, ask=True)
    assert "/compact" not in exec_held
    assert "a handoff is ready; run `codex exec` without `resume`, and the new session starts with it" in exec_held
    assert exec_held == held.replace(" Or /compact: reads all 180k of the context cold once ($1.13), then its summary.",
                                     "").replace("; /clear,", "; run `codex exec` without `resume`,")


def test_guard_x_comes_from_the_config() -> None:
    s = state()
    cold = guard.cold_cache(s, CFG, 3000.0)
    assert cold is not None
    q = {"L": 60_000, "bDefault": 40_000, "x": 1.5}
    assert guard.advice(s, q, cold, params())["restartFirst"] is True  # type: ignore[index]  # default 1.0
    assert guard.advice(s, q, cold, params(guard_x=1.4))["restartFirst"] is True  # type: ignore[index]
    assert guard.advice(s, q, cold, params(guard_x=1.6))["restartFirst"] is False  # type: ignore[index]
    assert guard.advice(s, q, cold, params(guard_x=2.0))["restartFirst"] is False  # type: ignore[index]


def test_one_hour_writes_at_twice_the_base_price() -> None:
    a = figures(180_000, 41_000, ttl="1h", idle_min=90)
    assert a["usd"] == pytest.approx(1.8)
    assert "the 1-hour cache has expired" in guard.compose(a)
    assert "($1.80)" in guard.compose(a)


def test_cheaper_read_models_and_the_shared_prefix() -> None:
    # Opus 5.5: $4/MTok base; a restart reads the 5k shared prefix (0.05x) and writes the rest
    a = figures(100_000, 30_000, model="claude-opus-5-5", shared=5_000)
    assert a["usd"] == pytest.approx(95_000 * 5e-6 + 5_000 * 0.2e-6)  # a cold call reads the prefix too
    assert a["freshUsd"] == pytest.approx(25_000 * 5e-6 + 5_000 * 0.2e-6)
    assert "re-writes 95k tokens ($0.48); a fresh session would carry ~30k tokens ($0.13)." in guard.compose(a)


def test_an_unknown_model_gets_tokens_and_no_dollars() -> None:
    a = figures(180_000, 41_000, model="some-other-model")
    assert a["usd"] is None
    text = guard.compose(a)
    assert "re-writes 180k tokens; a fresh session would write ~41k tokens." in text
    assert "$" not in text


def test_no_restart_advice_when_a_fresh_session_carries_as_much() -> None:
    a = figures(40_000, 41_000)
    assert a["freshTokens"] is None
    assert guard.compose(a).endswith("this prompt re-writes 40k tokens ($0.25).")


def test_what_compact_carried_last_time_is_said_after_a_compaction() -> None:
    s = state()
    s["engine"].update({"compactions": 1, "segment": 1, "floor": 23_000})
    cold = guard.cold_cache(s, CFG, 3000.0)
    assert cold is not None
    a = guard.advice(s, {"L": 90_000, "bDefault": 30_000, "x": 3.0}, cold, params())
    assert a is not None
    assert a["compactTokens"] == 23_000
    assert guard.compose(a, ask=True).endswith(  # no handoff prepared: no fresh session offered
        "Or /compact: reads all 90k of the context cold once ($0.56), then carries its summary (~23k last time).")


def model_q(big_l: int, b: int, g: float = 1_000.0, shared: int = 0, c_ratio: float = 12.5) -> dict[str, Any]:
    """The figures `eoq.quantities` gives a session of L `big_l` carrying `b` (its cycle and saving)."""
    k = eoq.restart_cost(c_ratio, b, shared)
    dh = eoq.dhat(k / b, g, b)
    m = dh * b / g  # the optimal cycle: no compaction ahead
    return {"L": big_l, "bDefault": b, "x": big_l / b, "K": k, "cRatio": c_ratio, "shared": shared, "g": g,
            "dhat": dh, "horizon": m, "saving": eoq.cycle_saving(big_l, b, m, k)}


def prepared_for(s: State, tokens: int, k: float, usd: float, until: float = 1e12) -> None:
    """The guard's record of the handoff it prepared for `s`'s fresh start (hooks.run)."""
    s["guard"] = {"carry": {"K": k, "carryTokens": tokens, "carryUsd": usd, "createdAt": 2000.0, "until": until,
                            "lastTs": s["engine"]["lastTs"], "segment": s["engine"]["segment"]}}


def test_the_ask_names_the_three_choices_with_dollars_and_nothing_that_reaches_the_model() -> None:
    """With the handoff the guard prepared, the fresh session is /clear alone at the handoff's own
    price, and what it saves is the one restart saving (eoq.restart_saving, cold, at that handoff's
    K) over the cycle it is counted on; no slash command or bash mode that would send the cold
    conversation is named."""
    s = state()
    now = 1000.0 + 23 * 60
    cold = guard.cold_cache(s, CFG, now)
    assert cold is not None
    q = model_q(180_000, 41_000)
    prepared_for(s, 43_000, 43_000 * 12.5, 0.26875)  # bDefault and a 2k note
    a = guard.advice(s, q, cold, params(), now)
    assert a is not None
    assert (a["freshTokens"], a["freshUsd"], a["handoff"]) == (43_000, 0.26875, True)
    # m (L - B) - K at the handoff's K, plus the re-write the restart spares: cRatio L - L
    m = q["dhat"] * 41_000 / 1_000
    assert a["cycle"] == pytest.approx(m)
    want = m * 139_000 - 43_000 * 12.5 + 11.5 * 180_000
    assert a["savingUsd"] == pytest.approx(want * 0.5e-6)
    assert a["savingUsd"] == eoq.restart_saving(s, q, cold=True, now=now)[1]
    text = guard.compose({**a, "clear": claude_code.AGENT.clear_words}, ask=True)  # the hook's words
    assert text == (
        "session-watcher: cold cache (last call 23 min ago; the 5-minute cache has expired). Nothing was sent. "
        "Continue: send this prompt again within a minute, re-writing 180k tokens ($1.13). Or /compact: reads "
        "all 180k of the context cold once ($1.13), then its summary. Or a fresh session, $2.99 less over the next ~30 "
        "calls: a handoff is ready; clear the input line (Ctrl+U), then /clear, and the new session starts with "
        "it: it writes ~43k tokens ($0.27).")
    assert "session-watcher:handoff" not in text
    assert "!" not in text
    assert "; /clear, and the new session" in guard.compose(a, ask=True)  # no agent's words: the command alone


def test_a_handoff_prices_the_restart_only_while_it_is_pending() -> None:
    """The record of the prepared handoff counts for the gap and segment it was made in and until it
    goes stale; without a clock (the fold's) the model's K, and then no handoff is said ready."""
    s = state()
    now = 1000.0 + 23 * 60
    cold = guard.cold_cache(s, CFG, now)
    assert cold is not None
    q = model_q(180_000, 41_000)
    model = eoq.restart_saving(s, q, cold=True, now=now)
    prepared_for(s, 43_000, 43_000 * 12.5, 0.26875, until=now)
    ready = eoq.restart_saving(s, q, cold=True, now=now)
    assert ready[0] == pytest.approx(model[0] - 2_000 * 12.5)  # type: ignore[operator]
    assert eoq.restart_saving(s, q, cold=True) == model  # no clock
    assert eoq.restart_saving(s, q, cold=True, now=now + 1) == model  # stale
    a = guard.advice(s, q, cold, params(), now + 1)
    assert a is not None
    assert (a["handoff"], a["freshTokens"], a["savingUsd"]) == (False, 41_000, model[1])
    for key, other in (("lastTs", 999.0), ("segment", 1)):  # a call since, a compaction since
        prepared_for(s, 43_000, 43_000 * 12.5, 0.26875)
        s["guard"]["carry"][key] = other
        assert eoq.restart_saving(s, q, cold=True, now=now) == model


def test_the_rewrite_is_the_last_calls_whole_context() -> None:
    """The last call read 475k and wrote 9k: the next prompt re-writes all 484k, not the 475k read."""
    s = state()
    s["engine"]["segCalls"] = 5
    s["context"].update({"model": "claude-opus-4-6", "pressure": 484_000})
    cold = guard.cold_cache(s, CFG, 3000.0)
    assert cold is not None
    a = guard.advice(s, {"L": 475_000, "bDefault": 71_000, "x": 475 / 71}, cold, params())
    assert a is not None
    assert a["tokens"] == 484_000
    assert a["usd"] == pytest.approx(484_000 * 5e-6 * 1.25)
    s["engine"]["segCalls"] = 0  # a segment with no call yet: the pressure is an older segment's
    a = guard.advice(s, {"L": 475_000, "bDefault": 71_000, "x": 475 / 71}, cold, params())
    assert a is not None
    assert a["tokens"] == 475_000


def test_the_sources_are_named_in_words() -> None:
    a = figures(180_000, 41_000)
    said = guard.compose({**a, "source": "cliff", "lifetimeSeconds": 420.0})
    assert "(last call 23 min ago; your 5-minute cache goes cold after ~7 min, inferred from your sessions)" in said
    # an inference says what it rests on: of the returns past the edge, how many ran cold
    said = guard.compose({**a, "source": "cliff", "lifetimeSeconds": 420.0, "evidence": [12, 1, 10, 9]})
    assert ("(last call 23 min ago; your 5-minute cache goes cold after ~7 min: 9 of your 10 returns past that were "
            "cold)") in said
    assert "Claude Code says the cache has expired" in guard.compose({**a, "source": "prompt_cache"})
    assert "Claude Code says the cache has likely expired" in guard.compose({**a, "source": "session_start"})


def test_no_advice_without_an_l() -> None:
    s = state()
    cold = guard.cold_cache(s, CFG, 3000.0)
    assert cold is not None
    assert guard.advice(s, {"L": None, "bDefault": None, "x": None}, cold, params()) is None
    assert guard.advice(s, {"L": 0, "bDefault": 10, "x": 0.0}, cold, params()) is None


@pytest.mark.parametrize(("seconds", "text"), [
    (45, "45 s"), (59.6, "1 min"), (1380, "23 min"), (5340, "89 min"), (5400, "1 h 30 min"),
    (7200, "2 h"), (200_000, "2 days"),
])
def test_duration(seconds: float, text: str) -> None:
    assert duration(seconds) == text


@pytest.mark.parametrize(("usd", "text"), [
    (None, ""), (0.004, " (<$0.01)"), (1.125, " ($1.13)"), (0.25625, " ($0.26)"), (150.4, " ($150.40)"),
])
def test_a_price_follows_its_tokens_in_parentheses(usd: float | None, text: str) -> None:
    """The guard's ' ($x)' after a figure of tokens, in core.numbers' dollars (cents below $1,000);
    nothing when the model has no price."""
    assert guard._priced(usd) == text


# --------------------------------------------------------------------------- sure before it holds

@pytest.mark.parametrize(("idle", "ttl", "cliff", "want"), [
    (300.0, "5m", None, "warm"), (300.5, "5m", None, "maybe"), (480.0, "5m", None, "maybe"),
    (480.5, "5m", None, "cold"), (3600.0, "1h", None, "warm"), (3780.0, "1h", None, "maybe"),
    (3781.0, "1h", None, "cold"), (420.0, "5m", {"5m": 420.0}, "warm"), (600.0, "5m", {"5m": 420.0}, "maybe"),
    (601.0, "5m", {"5m": 420.0}, "cold"), (5000.0, None, None, None),
])
def test_warm_to_the_lifetime_maybe_to_the_edge_cold_past_it(idle: float, ttl: str | None, cliff: Any,
                                                             want: str | None) -> None:
    assert guard.verdict(idle, ttl, cliff) == want


def test_the_clients_own_words_are_sure_only_past_the_edge() -> None:
    pc = {"warm": True, "caching_observed": True, "ttl": "5m", "expires_at": 1420}
    got = guard.cold_cache(state(promptCache=pc), CFG, 1500.0)
    assert got is not None
    assert (got["cold"], got["sure"], got["edgeSeconds"]) == (True, False, 480.0)
    assert guard.cold_cache(state(promptCache=pc), CFG, 1721.0)["sure"] is True  # type: ignore[index]
    resume = {"expired": True, "seconds": 601, "at": 5000.0, "lastTs": 1000.0}
    got = guard.cold_cache(state(resume=resume), CFG, 5000.0)  # 601 s after a 5-minute cache's call
    assert got is not None
    assert (got["source"], got["cold"], got["sure"]) == ("session_start", True, True)
    early = {**resume, "seconds": 400}
    assert guard.cold_cache(state(resume=early), CFG, 5000.0)["sure"] is False  # type: ignore[index]
    assert guard.cold_cache(state(ttl="1h", resume=resume), CFG, 5000.0)["sure"] is False  # type: ignore[index]


def test_between_the_lifetime_and_the_edge_the_line_says_may_have_expired() -> None:
    s = state()
    cold = guard.cold_cache(s, CFG, 1000.0 + 7 * 60)
    assert cold is not None
    assert (cold["cold"], cold["sure"]) == (True, False)
    a = guard.advice(s, {"L": 180_000, "bDefault": 41_000, "x": 180 / 41}, cold, params())
    assert a is not None
    assert a["sure"] is False
    assert guard.compose(a) == guard.compose(a, ask=True) == (
        "session-watcher: the cache may have expired (last call 7 min ago; the 5-minute cache lasts ~5 min, "
        "surely gone after 8 min): if so, this prompt re-writes 180k tokens ($1.13).")


def test_a_codex_thread_s_cache_is_said_in_its_own_class_s_words() -> None:
    """A Codex thread's usage is stored as "5m", and the line called its cache "the 5-minute cache
    lasts ~10 min" (and "your 5-minute cache goes cold after ~40 min" from the user's cliff): its
    class in words, as `report` and `doctor` say it, "Codex 10-minute" (gpt-5.5's)."""
    s = state()
    s["context"]["model"] = "gpt-5.5"
    cold = guard.cold_cache(s, CFG, 1000.0 + 11 * 60)  # past its 10 minutes, short of the edge
    assert cold is not None
    a = guard.advice(s, {"L": 180_000, "bDefault": 41_000, "x": 180 / 41}, cold, params())
    assert a is not None
    assert a["sure"] is False
    said = guard.compose(a, ask=True)
    assert "; the Codex 10-minute cache lasts ~10 min, surely gone after " in said, said
    assert "5-minute" not in said
    cliff = params(cliff={"5m": None, "1h": None, "codex-10m": 2400, "evidence": {"codex-10m": [12, 1, 10, 9]}})
    cold = guard.cold_cache(s, cliff, 1000.0 + 60 * 60)
    assert cold is not None
    assert cold["source"] == "cliff"
    a = guard.advice(s, {"L": 180_000, "bDefault": 41_000, "x": 180 / 41}, cold, cliff)
    assert a is not None
    said = guard.compose(a)
    assert "(last call 60 min ago; your Codex 10-minute cache goes cold after ~40 min: 9 of your 10 returns past " \
           "that were cold)" in said, said
    # a Claude model's cache: Claude Code's class, as before
    assert "your 5-minute cache goes cold" in guard.compose({**a, "model": "claude-opus-4-6"})


def test_the_rewrite_is_net_of_the_prefix_a_cold_call_still_reads() -> None:
    """A cold call reads the shared prefix (as a fresh session does: eoq.fresh_split) and writes the
    rest; the saving quoted counts that re-write net of the prefix too (eoq.restart_saving)."""
    a = figures(180_000, 41_000, **model_q(180_000, 41_000, shared=20_000))
    assert a["rewriteTokens"] == 160_000
    assert a["usd"] == pytest.approx(160_000 * 6.25e-6 + 20_000 * 0.5e-6)
    assert a["freshUsd"] == pytest.approx(21_000 * 6.25e-6 + 20_000 * 0.5e-6)
    q = model_q(180_000, 41_000, shared=20_000)
    spared = eoq.restart_cost(12.5, 180_000, 20_000) - 180_000  # the re-write, less the read it replaces
    assert a["savingUsd"] == pytest.approx((q["saving"] + spared) * 0.5e-6)
    assert "this prompt re-writes 160k tokens ($1.01)" in guard.compose(a)


def test_a_horizon_of_no_call_names_no_calls() -> None:
    """Past the automatic compaction point the advice's horizon is 0 calls: the saving is the
    re-write spared at once, said without "over the next ~1 calls"."""
    a = {"sure": True, "restartFirst": True, "freshTokens": 20_000, "freshUsd": 0.05, "freshShared": 0,
         "savingUsd": 0.6, "cycle": 0.0, "rewriteTokens": 150_000, "tokens": 150_000, "usd": 0.9,
         "handoff": True, "idleSeconds": 1200.0, "ttl": "5m", "source": None, "lifetimeSeconds": 300.0}
    text = guard.compose(a, ask=True)
    assert "Or a fresh session, $0.60 less: a handoff is ready" in text, text
    assert "over the next" not in text
    assert "over the next ~30 calls" in guard.compose({**a, "cycle": 30.0}, ask=True)


def test_a_compact_typed_into_codex_exec_is_held_as_words_to_the_model() -> None:
    """`/compact` typed into `codex exec` (0.171.0: the word sent to the model in an ordinary request,
    the whole thread re-written cold, nothing compacted): the hold says exactly that, and where a
    real compaction is (the TUI's /compact, priced); it said "send this prompt again", as if the
    prompt were a command that would compact."""
    a = {**figures(180_000, 41_000), "handoff": True}
    words = {"clear": "run `codex exec` without `resume` in this project", "compact": False}
    held = guard.compose({**a, **words, "typedCompact": True}, ask=True)
    assert held == (
        "session-watcher: cold cache (last call 23 min ago; the 5-minute cache has expired). Nothing was sent. "
        "`codex exec` has no /compact command: it sends the word to the model as a prompt, which re-writes 180k "
        "tokens ($1.13) and compacts nothing (sent again within a minute, it goes as that prompt). To compact, "
        "resume the thread in Codex's terminal UI (`codex resume`) and type /compact there: it reads all 180k of "
        "the context cold once ($1.13), then its summary. Or a fresh session: a handoff is ready; run `codex exec` "
        "without `resume` in this project, and the new session starts with it: it writes ~41k tokens ($0.26).")
    assert guard.compose({**a, **words, "typedCompact": False}, ask=True) == guard.compose({**a, **words}, ask=True)
