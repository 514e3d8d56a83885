"""One restart price, said one way (issue 37): the session page, the notification (a cold return's
too), `status`, the guard and `handoff --json` show the same `eoq.restart_saving` for the same call,
and each says when its horizon stops at the automatic compaction (`numbers.over_calls`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine, eoq, guard
from session_watcher.core.numbers import dollars, over_calls
from session_watcher.core.render import lamp_words
from session_watcher.core.status import cold_now, status_document
from session_watcher.core.statustext import status_text
from session_watcher.core.text import keep_units
from session_watcher.notifier import message
from session_watcher.reports import session_page_data as spd
from session_watcher.reports.session_page import page_parts
from session_watcher.sessions import handoff
from session_watcher.sessions.replay import fold

if TYPE_CHECKING:
    from session_watcher.core.shapes import Alert, Config, State

FIXTURES = Path(__file__).parent / "fixtures"
S258 = FIXTURES / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"  # ends amber, 2025
COLD = FIXTURES / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"  # two cold returns


def near_compaction(calls: int = 56) -> Transcript:
    """A 200k-window session growing from 40k by 2k a call, with no compaction yet: past its sweet
    spot at 150k, its compaction point (the window less compact_reserve, 155k) is a few calls off, so
    the horizon of a restart's saving stops there, short of the optimal cycle."""
    t = Transcript(model="claude-opus-4-6")
    t.call(0, 40_000)
    ctx = 40_000
    for _ in range(calls - 1):
        t.call(ctx, 2000)
        ctx += 2000
    return t


NB = "\u00a0"


def folded(path: Path) -> tuple[State, Config]:
    state, cfg, _ = fold(str(path), with_trace=False)
    return state, cfg


def last_call(state: State) -> float:
    """When the folded session's last call was."""
    ts = state["engine"]["lastTs"]
    assert ts is not None
    return ts


# ----------------------------------------------------------------------------- the words


def test_the_horizon_words_name_the_compaction_where_it_ends_them() -> None:
    assert over_calls(30.2) == "over the next ~30 calls"
    assert over_calls(9.6, True) == "over the next ~10 calls, until the automatic compaction"
    assert over_calls(0.4, True) == ""  # no call left: nothing to count over
    # one call left (a session a call from its compaction): one call, as status said "~1 calls"
    assert over_calls(1.2, True) == "over the next ~1 call, until the automatic compaction"
    assert over_calls(1.5) == "over the next ~2 calls"
    assert over_calls(None) == over_calls(math.nan) == over_calls(True) == ""


def test_a_horizon_cut_by_the_compaction_is_said_by_the_guard_status_and_the_alert(tmp_path: Path) -> None:
    """The session's own figures: its horizon (`quantities`) stops at the compaction; the guard's held
    prompt, `status`'s lamp line and the gate's notification all say so, with the same calls."""
    path = near_compaction().save(tmp_path / "s.jsonl")
    state, cfg = folded(path)
    q = eoq.quantities(state, cfg)
    assert q["dhat"] is not None
    assert q["bDefault"] is not None
    assert q["horizon"] is not None
    m = q["dhat"] * q["bDefault"] / q["g"]
    assert q["untilCompaction"]
    assert 1 <= q["horizon"] < m
    words = over_calls(q["horizon"], True)
    assert words.endswith(", until the automatic compaction")

    now = last_call(state) + 3600  # back after an hour: cold for sure
    doc = status_document(state, cfg, cold=cold_now(state, cfg, now), now=now)
    assert doc["untilCompaction"] is True
    assert doc["horizon"] == pytest.approx(q["horizon"], abs=1e-3)
    assert f"a fresh session now saves about {dollars(doc['savingUsd'])} (" in lamp_words(doc)
    assert words in lamp_words(doc)
    assert words in status_text(doc).replace("\n", " ")

    cold = guard.cold_cache(state, cfg, now)
    assert cold is not None
    a = guard.advice(state, q, cold, cfg, now)
    assert a is not None
    assert a["untilCompaction"] is True
    assert f"Or a fresh session, {dollars(doc['savingUsd'])} less {words}:" in guard.compose({**a, "handoff": True},
                                                                                          ask=True)


def test_the_alerts_carry_whether_the_compaction_ends_their_horizon(tmp_path: Path) -> None:
    """The fold's gate at the sweet spot counts a whole cycle; an alert closer to the compaction
    point than a cycle says so in its notification."""
    cfg = config.merge({})
    alerts: list[Alert] = engine.fold(engine.new_state("s"), near_compaction(70).events(), cfg)
    assert alerts
    for alert in alerts:
        words = over_calls(alert["cycle"], alert["untilCompaction"])
        body = message.compose(alert, "/clear")[1]
        if words:
            assert f"Restarting now saves {dollars(alert['savingUsd'])} {words}" in body
        assert ("until the automatic compaction" in body) == (alert["untilCompaction"] and bool(words))
    assert any(a["untilCompaction"] for a in alerts)


# ----------------------------------------------------------------------------- a cold return's notification


def test_a_cold_returns_notification_quotes_the_one_restart_saving() -> None:
    """The cold return the fold records (the engine's `guard` alert: eoq.restart_saving priced cold,
    the status line's and the guard's figure) is quoted in its notification, with its horizon."""
    state, _cfg, _ = fold(str(COLD))
    cold = [a for a in state["alerts"] if a["kind"] == "guard"]
    assert len(cold) == 2
    for alert in cold:
        assert alert["savingUsd"] is not None
        assert alert["savingUsd"] > 0.005
        body = message.compose(alert, "/clear")[1].splitlines()
        words = over_calls(alert["cycle"], alert["untilCompaction"])
        assert f"Restarting now saves {dollars(alert['savingUsd'])} {words}, the re-write included." in body


# ----------------------------------------------------------------------------- the session page


@pytest.mark.parametrize("after", [30.0, 7200.0])
def test_the_page_shows_the_restart_saving_status_shows(after: float) -> None:
    """The page's line is `status`'s at the same time (the same document, cold-aware, and the same
    words): warm 30 s after the last call, cold two hours after; not the fold's warm model-K figure."""
    state, cfg = folded(S258)
    now = last_call(state) + after
    want = status_document(state, cfg, cold=cold_now(state, cfg, now), now=now)
    model = spd.load_model(str(S258), now=now)
    shown = model["restartNow"]
    assert shown["savingUsd"] == want["savingUsd"]
    assert shown["saving"] == want["saving"]
    assert shown["text"] == keep_units(lamp_words(want))  # status's words, a number held with its unit
    assert f"lamp     {shown['text'].replace(NB, ' ')}" in status_text(want)
    assert shown["asOf"] == now
    warm = status_document(state, cfg)["savingUsd"]
    assert (shown["savingUsd"] == warm) == (after < 300)  # a cold cache adds the re-write a restart spares
    assert '<p id="restart-now" hidden></p>' in "".join(page_parts(model))


def test_the_page_says_how_long_after_the_last_call_its_now_is() -> None:
    """A page drawn months after its session ended said "now (17:37:01): red: restart; a fresh session
    now saves about $18.47 ... over the next ~60 calls", as of a session running now: an hour or more
    after the last call, its line says how long after."""
    state, _cfg = folded(S258)
    last = last_call(state)
    assert spd.load_model(str(S258), now=last + 30)["restartNow"]["since"] is None
    later = spd.load_model(str(S258), now=last + 10 * 86_400)
    assert later["restartNow"]["since"] == f"10{NB}days after its last call"  # never "10" / "days" at a wrap
    assert "r.since" in "".join(page_parts(later))  # the page's script writes it into the line


def test_the_pages_idle_line_counts_from_the_last_call_as_status_does(tmp_path: Path) -> None:
    """A prompt that got no answer, two hours after the last call: the page counted the idle time
    from that record, `status` from the last call, so 25.5 h after the call `status` said the session
    was idle (core.render.IDLE_ENDED) and the page advised a restart as of a session running now,
    "23 h after its last call". Both count from the last call: the same words, the same age."""
    import json
    from datetime import UTC, datetime

    from session_watcher.core.numbers import duration
    from session_watcher.core.render import IDLE_ENDED

    lines = [json.loads(line) for line in S258.read_text().splitlines() if line.strip()]
    prompt = next(d for d in lines if d.get("type") == "user" and isinstance(d["message"].get("content"), str))
    state, _cfg = folded(S258)
    last = last_call(state)
    late = datetime.fromtimestamp(last + 7200, UTC).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    copy = tmp_path / S258.name
    copy.write_text(S258.read_text() + json.dumps({**prompt, "uuid": "0" * 36, "timestamp": late}) + "\n")
    state, cfg = folded(copy)
    assert last_call(state) == last  # a prompt is no call
    now = last + IDLE_ENDED + 1800
    want = status_document(state, cfg, cold=cold_now(state, cfg, now), now=now)
    said = status_text(want, now=now, last_ts=last)
    shown = spd.load_model(str(copy), now=now)["restartNow"]
    assert shown["text"].startswith("idle ")
    assert f"lamp     {shown['text'].replace(NB, ' ')}" in said
    assert shown["since"] == keep_units(f"{duration(now - last)} after its last call")


def test_a_page_of_a_session_without_timestamps_says_no_age(tmp_path: Path) -> None:
    """A transcript whose lines carry no time: the page has no last call to count from (its `t1` is
    0.0 then), so its line says no age (it said "20793 days after its last call", counted from 1970)."""
    import json

    bare = tmp_path / S258.name
    lines = [json.loads(line) for line in S258.read_text().splitlines() if line.strip()]
    bare.write_text("".join(json.dumps({k: v for k, v in d.items() if k != "timestamp"}) + "\n" for d in lines))
    model = spd.load_model(str(bare), now=1.8e9)
    assert model["t1"] == 0.0  # no time to count from
    assert model["restartNow"] is not None  # yet priced
    assert model["restartNow"]["since"] is None


# ----------------------------------------------------------------------------- handoff --json


def test_handoff_json_saving_is_the_restart_saving_at_the_notes_k() -> None:
    """`handoff --json`'s `savingUsd` is eoq.restart_saving at the note's K, the cache cold or warm as
    `status` judges it; once the guard's record of that handoff is pending, `status` (and the status
    line, and the guard) quote exactly that figure."""
    state, cfg = folded(S258)
    for after in (30.0, 7200.0):
        now = last_call(state) + after
        doc = handoff.build(state, cfg, now)
        q = eoq.quantities(state, cfg)
        cold = cold_now(state, cfg, now)
        assert cold == (after > 300)
        assert doc["savingUsd"] == round(eoq.restart_saving(state, q, cold=cold, k=doc["K"])[1] or 0, 6)
        assert doc["cycle"] == q["horizon"]
        assert doc["untilCompaction"] is q["untilCompaction"]
        e = state["engine"]
        state["guard"] = {"carry": {"K": doc["K"], "carryTokens": doc["carryTokens"], "carryUsd": doc["carryUsd"],
                                    "createdAt": now, "until": now + 3600, "lastTs": e["lastTs"],
                                    "segment": e["segment"]}}
        shown = status_document(state, cfg, cold=cold, now=now)["savingUsd"]
        assert shown == pytest.approx(doc["savingUsd"], abs=1e-6)
        del state["guard"]
    # the warm figure is the one the note's K changes: the model's K less the note's extra write
    warm = handoff.build(state, cfg, last_call(state) + 30)
    model_k = status_document(state, cfg)
    assert warm["savingUsd"] < model_k["savingUsd"]


# ----------------------------------------------------------------------------- one helper


def test_one_number_check_for_the_guard_and_the_model() -> None:
    """`eoq.is_number`, the guard's too: a finite number, never a bool, NaN or infinity (a state's
    NaN time is no last call: the guard cannot tell, rather than judge from it)."""
    assert not hasattr(guard, "_num")
    assert not hasattr(eoq, "_number")
    assert [eoq.is_number(v) for v in (1, 2.5, True, math.nan, math.inf, None, "1")] == [
        True, True, False, False, False, False, False]
    state = engine.new_state("s")
    state["engine"]["lastTs"] = math.nan
    state["engine"]["ttl"] = "5m"
    assert guard.cold_cache(state, config.merge({}), 1_800_000_000.0) is None


def test_the_page_prices_a_handoff_the_guard_prepared_as_status_does() -> None:
    """A session the hooks follow, whose guard prepared a handoff at this call: the page's line
    quotes the restart at that handoff's K, as `status` (the hooks' state) does; a record of another
    call is not this one's."""
    from session_watcher.base.paths import ensure_private_dir, sessions_dir
    from session_watcher.state import store

    state, cfg = folded(S258)
    now = last_call(state) + 7200
    doc = handoff.build(state, cfg, now)
    e = state["engine"]
    carry = {"K": doc["K"], "carryTokens": doc["carryTokens"], "carryUsd": doc["carryUsd"], "createdAt": now,
             "until": now + 3600, "lastTs": e["lastTs"], "segment": e["segment"]}
    model_k = spd.load_model(str(S258), now=now)["restartNow"]["savingUsd"]
    ensure_private_dir(sessions_dir())
    store.save(store.session_file(state["sessionId"]), {**state, "guard": {"carry": carry}})
    want = status_document({**state, "guard": {"carry": carry}}, cfg, cold=True, now=now)["savingUsd"]
    shown = spd.load_model(str(S258), now=now)["restartNow"]["savingUsd"]
    assert shown == want
    assert shown == pytest.approx(doc["savingUsd"], abs=1e-6)
    assert shown < model_k  # the note's K: the model's and the note's own tokens
    store.save(store.session_file(state["sessionId"]), {**state, "guard": {"carry": {**carry, "lastTs": 1.0}},
                                                         "engine": {**e, "calls": e["calls"] - 1}})
    assert spd.load_model(str(S258), now=now)["restartNow"]["savingUsd"] == model_k


def test_a_live_page_prices_again_when_the_cache_goes_cold() -> None:
    """The live page's story knows when its restart saving was priced warm or cold: a clock past the
    cache's lifetime (no new line in the transcript) asks for the page again, a clock on the same
    side does not."""
    from session_watcher.reports.live_view import _Story

    story = _Story(str(S258))
    final, trace, error = story.advance()
    assert error is None
    assert final is not None
    assert trace is not None
    last = story.state["engine"]["lastTs"] if story.state else None
    assert last is not None
    assert final["asOf"] > last + 300  # the fixture's session ended long ago: priced cold
    assert not story.turned(final["asOf"] + 60)
    assert story.turned(last + 30)  # a clock back within the lifetime: warm again, priced again
