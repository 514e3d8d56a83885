"""Only real requests shape the model (core.eoq.real_request): a call logged with an empty prompt (a
failed request: 0 input, 0 cache read, 0 cache write, not `<synthetic>`) counts in the token totals
and nothing else; a segment's floor comes from its first real request. The same rule in the fold,
replay, the hooks (live equals replay) and the backtest."""

from __future__ import annotations

import copy
import gzip
import json
from typing import TYPE_CHECKING, Any

import pytest

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import backtest as bt
from session_watcher.core import engine, eoq, status
from session_watcher.sessions.replay import replay
from tests.calibration import CALIBRATION
from tests.live_driver import Live, synthetic_schedule

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import State

CFG = config.merge()
SID = "1e0816ef-6f89-4f05-b331-dab09bb14485"  # a real session with a compaction at line 310
FIRST_REAL = 3 + 16_496 + 35_166  # the prompt of its first call after the compaction
ZERO_OUT = 7  # output tokens of each failed request: counted in the totals


def _zeroed(line: bytes, n: int) -> bytes:
    """The assistant line `line` as a failed request: its own message id and uuid, all-zero usage."""
    rec = json.loads(line)
    rec["uuid"] = f"00000000-0000-4000-8000-00000000000{n}"
    msg = rec["message"]
    msg["id"] = f"msg_failed{n}"
    msg["content"] = [{"type": "text", "text": ""}]
    msg["usage"] = {"input_tokens": 0, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0,
                    "output_tokens": ZERO_OUT, "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                                                  "ephemeral_1h_input_tokens": 0}}
    return json.dumps(rec).encode()


def session_with_failed_requests(into: Path) -> tuple[Path, Path]:
    """(the real session, the same with two failed requests between its compaction and its first
    real call after it): the shape real sessions show after a compaction."""
    lines = gzip.decompress((CALIBRATION / f"{SID}.jsonl.gz").read_bytes()).splitlines()
    at = next(i for i, ln in enumerate(lines) if b"compact_boundary" in ln)
    first = next(i for i in range(at, len(lines)) if json.loads(lines[i]).get("type") == "assistant")
    usage = json.loads(lines[first])["message"]["usage"]
    assert usage["input_tokens"] + usage["cache_read_input_tokens"] + usage["cache_creation_input_tokens"] == FIRST_REAL
    shaped = [*lines[:first], _zeroed(lines[first], 1), _zeroed(lines[first], 2), *lines[first:]]
    into.mkdir(parents=True, exist_ok=True)
    (into / "real").mkdir(exist_ok=True)
    (into / "shaped").mkdir(exist_ok=True)
    real, failed = into / "real" / f"{SID}.jsonl", into / "shaped" / f"{SID}.jsonl"
    real.write_bytes(b"\n".join(lines) + b"\n")
    failed.write_bytes(b"\n".join(shaped) + b"\n")
    return real, failed


MODEL_KEYS = ("segment", "L", "floor", "bFull", "bDefault", "x", "g", "xSweet", "br", "lamp", "billProgress",
              "bills", "dwell", "backstop", "restartCost", "saving", "cacheTtl", "shared")


def test_failed_requests_after_a_compaction_shape_nothing(tmp_path: Path) -> None:
    """The segment after the compaction takes its floor from its first real request (51,665 tokens),
    and every figure of the model, call for call, is the real session's; the totals count the
    failed requests' tokens."""
    real, shaped = session_with_failed_requests(tmp_path)
    doc_real, rows_real = replay(str(real), cwd=str(tmp_path))
    doc, rows = replay(str(shaped), cwd=str(tmp_path))
    assert len(rows) == len(rows_real) + 2
    failed = [r for r in rows if r["usage"]["in"] + r["usage"]["cr"] + r["usage"]["cw"] == 0]
    assert len(failed) == 2
    for r in failed:
        assert r["floor"] is None
        assert r["L"] is None
        assert r["lamp"] == "white"
        assert not r["alerts"]
    after = next(r for r in rows if r["segment"] == 1 and r["floor"] is not None)
    assert after["floor"] == FIRST_REAL
    kept = [r for r in rows if r not in failed]
    for got, want in zip(kept, rows_real, strict=True):
        assert {k: got[k] for k in MODEL_KEYS} == {k: want[k] for k in MODEL_KEYS}, want["call"]
        assert [a["kind"] for a in got["alerts"]] == [a["kind"] for a in want["alerts"]], want["call"]
    assert doc["calls"] == doc_real["calls"] + 2
    assert doc["tokenUsage"]["output"] == doc_real["tokenUsage"]["output"] + 2 * ZERO_OUT
    assert doc["advice"] == doc_real["advice"]


@pytest.mark.slow
def test_the_hooks_fold_failed_requests_as_replay_does(tmp_path: Path) -> None:
    """Live equals replay on the shaped session: the hooks, run as the client runs them."""
    _real, shaped = session_with_failed_requests(tmp_path / "src")
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    live = Live(tmp_path, shaped, SID, cwd)
    live.run(synthetic_schedule(live.data, SID))
    _doc, trace = replay(str(live.transcript), cwd=str(cwd))
    rows = live.rows()
    assert [r["call"] for r in rows] == [r["call"] for r in trace]
    for got, want in zip(rows, trace, strict=True):
        assert {k: got[k] for k in MODEL_KEYS} == {k: want[k] for k in MODEL_KEYS}, want["call"]
    assert next(r for r in rows if r["segment"] == 1 and r["floor"] is not None)["floor"] == FIRST_REAL


def _run(t: Transcript) -> tuple[State, list[dict[str, Any]]]:
    state = engine.new_state("t")
    trace: list[dict[str, Any]] = []
    engine.fold(state, t.events(), CFG, call_hook=status.tracer(trace, CFG))
    return state, trace


def test_a_hand_made_segment_starts_at_its_first_real_request() -> None:
    """Compaction, an empty call, one under MIN_PROMPT tokens, then the real first prompt of 40,000:
    the floor is 40,000 (not 0), the growth has seen nothing of the small calls, no bill was run."""
    t = Transcript()
    for i in range(12):
        t.call(30_000 + 2_000 * i, 2_000)
    t.compact()
    t.call(0, 0, inp=0)
    t.call(0, eoq.MIN_PROMPT - 2)
    t.call(0, 40_000, inp=0)
    t.call(40_000, 900)
    state, trace = _run(t)
    e = state["engine"]
    assert [r["floor"] for r in trace[12:]] == [None, None, 40_000, 40_000]
    assert e["floor"] == 40_000
    assert e["L"] == 40_000
    assert e["segCalls"] == 2
    assert e["calls"] == 16
    assert trace[13]["billProgress"] == 0
    assert trace[13]["g"] == trace[11]["g"]
    assert state["context"]["pressure"] == 40_901  # the last call: 1 input, 40,000 read, 900 written
    assert state["meter"]["main"]["cacheWrite"] >= eoq.MIN_PROMPT - 1 + 40_000 + 900


def test_a_failed_request_after_an_idle_gap_is_no_cold_return() -> None:
    """A failed request after the cache expired re-wrote nothing: the tally has no cold return, and
    the real call after it is the one judged (against the last real call's time)."""
    t = Transcript()
    for i in range(5):
        t.call(30_000 + 1_000 * i, 1_000)
    t.call(0, 0, inp=0, out=3, at=t.ts + 900)
    state, _ = _run(t)
    assert state["engine"]["tally"]["cold"] == 0
    t.call(0, 35_000, at=t.ts + 10)
    state, _ = _run(t)
    assert state["engine"]["tally"]["cold"] == 1


def test_the_backtest_skips_failed_requests_in_its_miss_rule() -> None:
    """A failed request between two real calls is no cache miss and resets no L: the real call
    after it reads what the one before it had, and re-writes nothing."""
    def call(n: int, cr: int, cw: int) -> bt.Call:
        return bt.Call(call=n, segment=0, total=cr + cw, b_default=20_000, cr=cr, cw5m=cw, cw1h=0,
                       model="claude-opus-4-6", x=None, x_sweet=None, g=None, lamp=None, gate=False, guard=False,
                       extra=())
    calls = [call(1, 0, 30_000), call(2, 30_000, 1_000), call(3, 0, 0), call(4, 31_000, 500)]
    seg = bt.Segment(calls, 0)
    assert seg.rewrite == [0, 0, 0, 0]
    assert bt.shared_prefix(None, [call(1, 0, 0), call(2, 25_000, 5_000)]) == 25_000
    cut = copy.deepcopy(calls)
    cut[3] = call(4, 10_000, 21_500)  # a real miss after the failed request: its re-write is seen
    assert bt.Segment(cut, 0).rewrite[3] == 20_000  # L is the last real call's read
