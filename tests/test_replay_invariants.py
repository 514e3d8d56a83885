"""`session-watcher replay FILE --json --trace OUT` over every real fixture: invariants on each line.

The expected calls and segments are read from the transcript here, independently of the engine:
one API call per (message.id, requestId) of the main chain, a new segment at each compact_boundary.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
TRANSCRIPTS = sorted(FIXTURES.glob("*.jsonl"))
API_FIELDS = ("L", "B", "bDefault", "x", "g", "dhat", "xSweet", "br", "mf", "cRatio", "burnRate", "rateLamp",
              "lamp", "billProgress", "bills", "backstop", "buckets", "tokenUsage", "contextPressure", "health")


def cli() -> list[str]:
    exe = Path(sys.executable).parent / "session-watcher"
    if exe.exists():
        return [str(exe)]
    found = shutil.which("session-watcher")
    assert found, "session-watcher is not installed (pip install -e .)"
    return [found]


def no_constants(name: str) -> Any:
    raise AssertionError(f"{name} in JSON output")


def expected_calls(path: Path) -> list[dict[str, Any]]:
    """Main-chain API calls in order: usage of the last sample, and compactions seen before."""
    calls: dict[str, dict[str, Any]] = {}
    compactions = 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        rec = json.loads(line)
        if rec.get("type") == "system" and rec.get("subtype") == "compact_boundary":
            compactions += 1
        if rec.get("type") != "assistant" or rec.get("isSidechain"):
            continue
        msg = rec.get("message") or {}
        usage = msg.get("usage")
        if not isinstance(usage, dict) or not msg.get("id") or msg.get("model") == "<synthetic>":
            continue
        key = f"{msg['id']}:{rec.get('requestId')}"
        if key not in calls:
            calls[key] = {"segment": compactions}
        calls[key]["cr"] = usage.get("cache_read_input_tokens") or 0
        calls[key]["cw"] = usage.get("cache_creation_input_tokens") or 0
        calls[key]["in"] = usage.get("input_tokens") or 0
    return list(calls.values())


@pytest.fixture(scope="module", params=TRANSCRIPTS, ids=lambda p: p.name[:12])
def replayed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    src: Path = request.param
    work = tmp_path_factory.mktemp("replay")
    copy = work / src.name
    shutil.copy(src, copy)
    subs = src.with_suffix("")
    if subs.is_dir():
        shutil.copytree(subs, work / subs.name)
    out = work / "trace.jsonl"
    proc = subprocess.run([*cli(), "replay", str(copy), "--json", "--trace", str(out)],
                          capture_output=True, text=True, timeout=120, check=False, env=os.environ.copy())
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout, parse_constant=no_constants)
    trace = [json.loads(line, parse_constant=no_constants) for line in out.read_text().splitlines()]
    return {"path": src, "doc": doc, "trace": trace, "calls": expected_calls(src)}


def walk(value: Any, where: str = "") -> list[str]:
    """Places holding a number that is not finite."""
    bad: list[str] = []
    if isinstance(value, float) and not math.isfinite(value):
        bad.append(where)
    elif isinstance(value, dict):
        for k, v in value.items():
            bad += walk(v, f"{where}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            bad += walk(v, f"{where}[{i}]")
    return bad


def test_one_trace_line_per_main_chain_call(replayed: dict[str, Any]) -> None:
    trace, calls = replayed["trace"], replayed["calls"]
    assert len(trace) == len(calls) > 0
    assert [row["call"] for row in trace] == list(range(1, len(calls) + 1))
    assert replayed["doc"]["calls"] == len(calls)
    assert replayed["doc"]["tokenUsage"]["calls"] == len(calls)


def test_every_number_is_finite_or_null(replayed: dict[str, Any]) -> None:
    for row in [*replayed["trace"], replayed["doc"]]:
        assert walk(row) == []
        for key in API_FIELDS:
            assert key in row
        assert "wallP" in row["rateLamp"]
        assert set(row["backstop"]) >= {"n", "N"}
        assert set(row["contextPressure"]) >= {"pressureTokens", "contextWindow"}
        for b in row["buckets"]:
            assert set(b) >= {"path", "tokens", "defaultDiscardReason"}


def test_a_new_segment_exactly_at_each_compaction(replayed: dict[str, Any]) -> None:
    trace, calls = replayed["trace"], replayed["calls"]
    assert [row["segment"] for row in trace] == [c["segment"] for c in calls]
    assert replayed["doc"]["compactions"] == calls[-1]["segment"]
    for prev, row in itertools.pairwise(trace):
        if row["segment"] != prev["segment"]:
            assert row["segment"] == prev["segment"] + 1
            assert row["floor"] is not None
            # the segment starts over: bills, dwell, ledger and path map
            assert row["billProgress"] == 0
            assert row["bills"] == 0
            assert row["dwell"]["calls"] == 0
            assert row["ledger"]["open"] == 0
            assert [b["type"] for b in row["buckets"]] == ["system"]


def test_l_is_continuous_across_cache_misses(replayed: dict[str, Any]) -> None:
    trace, calls = replayed["trace"], replayed["calls"]
    misses = partial = 0
    for i, (row, call) in enumerate(zip(trace, calls, strict=True)):
        if i == 0 or row["segment"] != trace[i - 1]["segment"]:
            assert row["L"] == call["cr"]
            assert row["floor"] == call["in"] + call["cr"] + call["cw"]  # the whole first prompt
            continue
        prev = trace[i - 1]["L"]
        assert row["L"] >= prev / 2, f"call {row['call']}: L fell from {prev} to {row['L']}"
        if call["cr"] < prev - max(1000, 0.02 * prev):
            misses += 1
            partial += call["cr"] >= prev / 2  # v1's half rule let these through as growth
            assert row["L"] == call["cr"] + call["cw"]
        else:
            assert row["L"] == call["cr"]
    assert trace[0]["shared"] == calls[0]["cr"] or replayed["calls"][0]["segment"] > 0
    if replayed["path"].name.startswith("258c7280"):
        assert misses >= 1  # the README: cold starts right after the compaction


def expected_lamp(x: float | None, xs: float | None, bp: float | None, prev: str | None,
                  amber: float = 0.001, red: float = 0.25) -> str:
    """SPEC's lamp, written out again: thresholds bp_amber / bp_red (the defaults: 0.001 / 0.25); a lit
    lamp keeps its colour on the right arm, and is left (to green) only when x falls back below
    1 + 0.8 (xSweet - 1)."""
    if x is None or xs is None:
        return "white"
    lit = prev in ("amber", "red")
    if x <= 1:
        return "white" if prev in (None, "white") else "green"
    if x < xs or bp is None:
        return "amber" if lit and x - 1 >= 0.8 * (xs - 1) else "green"
    if bp >= red or prev == "red":
        return "red"
    if bp >= amber or lit:
        return "amber"
    return "green"


def test_lamp_agrees_with_x_xsweet_and_bp(replayed: dict[str, Any]) -> None:
    prev: str | None = None
    segment = 0
    for row in replayed["trace"]:
        if row["segment"] != segment:
            prev, segment = None, row["segment"]
        x, xs, bp = row["x"], row["xSweet"], row["br"]
        assert row["lamp"] == expected_lamp(x, xs, bp, prev), row["call"]
        prev = row["lamp"]
        if x is not None and xs is not None and x > 1:
            b, g, c, s = row["bDefault"], row["g"], row["cRatio"], min(row["shared"] or 0, row["bDefault"])
            c_eff = (c * (b - s) + s) / b
            assert row["cEff"] == pytest.approx(c_eff, abs=1e-5)
            dh = math.sqrt(2 * c_eff * g / b)
            assert row["dhat"] == pytest.approx(dh, rel=1e-4)
            assert xs == pytest.approx(1 + dh, rel=1e-5)
            assert 0 < row["mf"] <= 0.41422
            assert row["mf"] == pytest.approx(dh / (1 + dh + c * g / b), rel=1e-4)
            r = (x - 1) / dh
            assert bp == pytest.approx(row["mf"] * (r - 1) ** 2 / (2 * r), rel=1e-3, abs=1e-6)
            assert bp >= 0


def test_figures_agree_with_each_other(replayed: dict[str, Any]) -> None:
    for row in replayed["trace"]:
        assert 0 <= row["bDefault"] <= row["bFull"]
        pressure = row["contextPressure"]["pressureTokens"]
        assert row["B"] == min(row["bFull"], pressure)
        assert row["x"] == pytest.approx(row["L"] / row["bDefault"], rel=1e-5)
        c, ce = row["cRatio"], row["cEff"]
        assert c in (12.5, 20.0)
        assert 1 <= ce <= c
        assert row["rateLamp"]["wallP"] == pytest.approx(1 + ce, abs=1e-5)
        assert row["burnRate"] == pytest.approx(max(0, row["L"] - row["bDefault"]) / (ce * row["bDefault"]),
                                                rel=1e-4, abs=1e-6)
        assert row["g"] >= 100
        assert 0 <= row["billProgress"] < 1
        base = row["backstop"]["base"]
        assert base == max(1, math.ceil(2 * 0.4142 / row["mf"]))
        assert row["backstop"]["N"] == base * 2 ** row["dwell"]["reminders"]  # each reminder doubles the next gap
        for alert in row["alerts"]:
            if alert["kind"] == "guard":
                assert alert["x"] >= 1.0  # the cold-return trigger's GUARD_X
                assert alert["gap"] > 300
            else:
                assert alert["x"] >= alert["xSweet"]
    ttl = {"258c7280": 20.0, "fa812bfe": 12.5, "ae4a77f8": 12.5, "short": 20.0, "tool_hea": 20.0, "subagent": 20.0}
    assert replayed["trace"][-1]["cRatio"] == ttl[replayed["path"].stem[:8]]


def test_replay_trace_equals_the_library_call(replayed: dict[str, Any]) -> None:
    from session_watcher.sessions.replay import replay

    doc, trace = replay(str(replayed["path"]))
    assert len(trace) == len(replayed["trace"])
    assert [r["L"] for r in trace] == [r["L"] for r in replayed["trace"]]
    assert doc["lamp"] == replayed["doc"]["lamp"]
    assert doc["x"] == replayed["doc"]["x"]
