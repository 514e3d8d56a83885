"""The session's tally (engine.new_tally, the status document's `advice`, `coldReturns`, `warmth`,
`firstTs`): counted once per thing from the first call on, whatever the fold's pace. Checked against
what the trace of the same fold shows call by call, on the real sessions."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.base import config
from session_watcher.core import engine, prices
from session_watcher.core.eoq import TTL_SECONDS
from session_watcher.sessions.replay import replay
from session_watcher.state import session
from tests.oracle import FIXTURES, TRANSCRIPTS

if TYPE_CHECKING:
    from pathlib import Path

CFG = config.merge()
COLD = FIXTURES / "cold-return" / "03a1382e-ecd5-42c4-b3d4-5c659e165904.jsonl"  # a 2.6-hour pause at call 77
SESSIONS = [*sorted(TRANSCRIPTS.glob("*.jsonl")), COLD]


def _from_trace(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The tally rebuilt from the trace: every alert each call fired; a cold return wherever a call
    follows its predecessor in the same segment by more than the TTL class's lifetime."""
    advice = {"gate": 0, "reminder": 0, "coldReturn": 0}
    name = {"gate": "gate", "backstop": "reminder", "guard": "coldReturn"}
    cold = {"n": 0, "tokens": 0, "usd": 0.0}
    read = write = 0
    for i, row in enumerate(rows):
        for alert in row["alerts"]:
            advice[name[alert["kind"]]] += 1
        if i == 0:
            continue
        read += row["usage"]["cr"]
        write += row["usage"]["cw"]
        prev = rows[i - 1]
        ttl = prev["cacheTtl"]
        same_segment = row["segment"] == prev["segment"]
        if ttl and same_segment and row["ts"] - prev["ts"] > TTL_SECONDS[ttl]:
            u = row["usage"]
            cold["n"] += 1
            cold["tokens"] += u["cw"]
            cold["usd"] += prices.write_usd(u["model"] or row["model"], u["cw5m"], u["cw1h"]) or 0.0
    return {"advice": advice, "cold": cold, "warmth": read / (read + write) if read + write else None,
            "firstTs": rows[0]["ts"] if rows else None}


@pytest.mark.parametrize("path", SESSIONS, ids=[p.stem[:8] for p in SESSIONS])
def test_the_tally_counts_what_the_trace_shows(path: Path) -> None:
    doc, rows = replay(str(path), cfg=CFG)
    want = _from_trace(rows)
    assert doc["advice"] == want["advice"]
    assert doc["coldReturns"]["n"] == want["cold"]["n"]
    assert doc["coldReturns"]["tokens"] == want["cold"]["tokens"]
    assert doc["coldReturns"]["usd"] == pytest.approx(want["cold"]["usd"], abs=1e-6)
    assert doc["warmth"] == (None if want["warmth"] is None else pytest.approx(want["warmth"], abs=1e-6))
    assert doc["firstTs"] == want["firstTs"]


def test_the_real_sessions_give_the_tally_something_to_count() -> None:
    """Not a vacuous check: across the sessions there are advice, cold returns and warmth."""
    docs = [replay(str(p), cfg=CFG, with_trace=False)[0] for p in SESSIONS]
    assert sum(sum(d["advice"].values()) for d in docs) > 0
    assert sum(d["coldReturns"]["n"] for d in docs) > 0
    assert all(0 < d["warmth"] < 1 for d in docs if d["calls"] > 1)


def test_the_tally_is_the_same_folded_in_small_steps(tmp_path: Path) -> None:
    """A session folded hook by hook (a few lines at a time, saved and loaded between) counts each
    alert, cold return and call once: the same tally as one fold of the whole transcript."""
    src = COLD
    whole, _, _ = session.sync(engine.new_state("t"), str(src), CFG, float("inf"))
    lines = src.read_bytes().splitlines(keepends=True)
    live = tmp_path / "t.jsonl"
    live.write_bytes(b"")
    state = engine.new_state("t")
    for k in range(0, len(lines), 211):
        with live.open("ab") as fh:
            fh.write(b"".join(lines[k:k + 211]))
        state, _, _ = session.sync(state, str(live), CFG, float("inf"))
        state = json.loads(json.dumps(state))  # through its JSON file, as between two hook runs
    assert state["engine"]["tally"] == whole["engine"]["tally"]
    assert whole["engine"]["tally"]["cold"] >= 1
