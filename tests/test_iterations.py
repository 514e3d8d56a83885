"""Server-side iterations (SPEC v3, "Inputs"): when `usage.iterations` lists several requests, the
call's context is its last `message` iteration, its cost every iteration at its own model's price,
and another model's tokens (an advisor's) count under that model, in the hooks, replay, the report
and the backtest alike. Checked on a real session with advisor calls (da81b1d5, 2.1.232) against an
oracle written here from the raw JSON, and on small hand-made usages."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.claude_code.transcript import UNKNOWN_MODEL, usage_reading
from session_watcher.core import backtest as bt
from session_watcher.core import prices
from session_watcher.reports.collect import run_report
from session_watcher.sessions.replay import replay
from tests.calibration import ADVISOR_SESSION, unpack

if TYPE_CHECKING:
    from pathlib import Path

MSG = {"type": "message", "input_tokens": 1, "output_tokens": 1171, "cache_read_input_tokens": 109050,
       "cache_creation_input_tokens": 931, "cache_creation": {"ephemeral_5m_input_tokens": 0,
                                                              "ephemeral_1h_input_tokens": 931}}
ADVISOR = {"type": "advisor_message", "model": "claude-fable-5", "input_tokens": 149112, "output_tokens": 14153,
           "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
LAST = {"type": "message", "input_tokens": 1, "output_tokens": 397, "cache_read_input_tokens": 109981,
        "cache_creation_input_tokens": 3176, "cache_creation": {"ephemeral_5m_input_tokens": 3176,
                                                                "ephemeral_1h_input_tokens": 0}}
# the top level as the real line has it: the message iterations added up, the split missing 3,176
TOP = {"input_tokens": 2, "cache_creation_input_tokens": 4107, "cache_read_input_tokens": 219031, "output_tokens": 1568,
       "cache_creation": {"ephemeral_1h_input_tokens": 931, "ephemeral_5m_input_tokens": 0}}


def test_the_context_is_the_last_message_iteration() -> None:
    sample, detail = usage_reading({**TOP, "iterations": [MSG, ADVISOR, LAST]})
    # the call's own model: both message iterations, each split read on its own (the top's omits one)
    assert sample == (2, 219031, 4107, 1568, 3176, 931)
    assert detail is not None
    context, others = detail
    assert context == (1, 109981, 3176, 397, 3176, 0)
    assert others == ((None, (1, 109050, 931, 1171, 0, 931)), ("claude-fable-5", (149112, 0, 0, 14153, 0, 0)))


@pytest.mark.parametrize("items", [None, [], [LAST], [ADVISOR, ADVISOR], "x", {"type": "message"}])
def test_a_list_of_at_most_one_request_changes_nothing(items: object) -> None:
    assert usage_reading({**TOP, "iterations": items}) == (usage_reading(TOP)[0], None)


def test_an_iteration_without_a_model_is_priced_as_unknown() -> None:
    _sample, detail = usage_reading({**TOP, "iterations": [MSG, {**ADVISOR, "model": None}, LAST, 4]})
    assert detail is not None
    assert [m for m, _ in detail[1]] == [None, UNKNOWN_MODEL]
    assert not prices.known(UNKNOWN_MODEL)


# ----------------------------------------------------------------------------- a real session

def oracle(path: Path) -> dict[str, Any]:
    """From the raw JSON, independently: per main-chain call (last sample wins) the context (the last
    message iteration when several are listed, else the top level) and another model's tokens."""
    calls: dict[str, dict[str, Any]] = {}
    for line in path.read_bytes().splitlines():
        rec = json.loads(line)
        msg = rec.get("message") if isinstance(rec, dict) else None
        if rec.get("type") != "assistant" or not isinstance(msg, dict) or "usage" not in msg:
            continue
        key = f"{msg['id']}:{rec['requestId']}"
        u = msg["usage"]
        its = u.get("iterations") or []
        messages = [i for i in its if i.get("type") == "message"]
        ctx = messages[-1] if len(its) > 1 and messages else u
        calls.setdefault(key, {})
        calls[key] = {"cr": ctx["cache_read_input_tokens"], "top": u["cache_read_input_tokens"],
                      "others": [i for i in its if i.get("type") != "message"] if len(its) > 1 else []}
    return calls


@pytest.fixture(scope="module")
def advisor_session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return unpack(ADVISOR_SESSION, tmp_path_factory.mktemp("calibration"))


@pytest.fixture(scope="module")
def replayed(advisor_session: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    return replay(str(advisor_session))


def test_replay_reads_the_context_of_advisor_calls(advisor_session: Path,
                                                   replayed: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    status, trace = replayed
    calls = list(oracle(advisor_session).values())
    assert len(trace) == len(calls) == status["tokenUsage"]["calls"]
    doubled = [n for n, c in enumerate(calls) if c["top"] > 1.5 * c["cr"]]
    assert doubled  # the session has calls whose top level adds two reads of the context
    for n in doubled:
        row = trace[n]
        assert row["usage"]["cr"] == calls[n]["cr"]  # the context, not the sum
        assert row["L"] == calls[n]["cr"]  # and L follows it: no phantom growth, no phantom miss after
        assert trace[n + 1]["L"] < 1.1 * row["L"]
        assert row["lamp"] == trace[n - 1]["lamp"] == trace[n + 1]["lamp"]  # no one-call flicker
    # call 36 of the transcript: the advisor's call the issue names, at ~110k, not 219k
    assert trace[35]["call"] == 36
    assert 105_000 < trace[35]["L"] < 115_000


def test_advisor_tokens_count_under_the_advisor(advisor_session: Path,
                                                replayed: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    status, _trace = replayed
    want: dict[str, dict[str, int]] = {}
    for c in oracle(advisor_session).values():
        for o in c["others"]:
            w = want.setdefault(o["model"], {"uncachedInput": 0, "output": 0, "calls": 0})
            w["uncachedInput"] += o["input_tokens"]
            w["output"] += o["output_tokens"]
            w["calls"] += 1
    assert set(want) == {"claude-fable-5"}
    got = status["otherModelUsage"]
    assert {m: {k: b[k] for k in ("uncachedInput", "output", "calls")} for m, b in got.items()} == want
    # the main model's totals hold none of the advisor's input
    assert status["tokenUsage"]["uncachedInput"] < want["claude-fable-5"]["uncachedInput"]


def test_the_report_counts_the_advisor_under_its_model(advisor_session: Path, tmp_path: Path) -> None:
    projects = tmp_path / "projects" / "-proj"
    projects.mkdir(parents=True)
    (projects / advisor_session.name).write_bytes(advisor_session.read_bytes())
    doc, _stats = run_report([str(tmp_path / "projects")], str(tmp_path / "index.sqlite3"), now=2e9)
    (entry,) = doc["sessions"]
    status, _ = replay(str(advisor_session))
    fable = status["otherModelUsage"]["claude-fable-5"]
    other = entry["tokens"]["otherModels"]["claude-fable-5"]
    assert (other["input"], other["output"]) == (fable["uncachedInput"], fable["output"])
    main = status["tokenUsage"]
    assert entry["tokens"]["input"] == main["uncachedInput"] + fable["uncachedInput"]
    assert entry["tokens"]["cacheRead"] == main["cacheRead"]
    assert entry["apiCalls"] == main["calls"]  # an advisor's iteration is no call of its own
    assert "claude-fable-5" in entry["models"]


# ----------------------------------------------------------------------------- the backtest's prices

def test_the_backtest_prices_each_iteration_and_sheds_both_reads() -> None:
    """A call with two message iterations reads the context twice: a restart before it spares both
    reads; an advisor's cache tokens are priced at the advisor's model and never shift."""
    def row(n: int, cr: int, it: list[list[Any]] | None = None) -> dict[str, Any]:
        usage: dict[str, Any] = {"in": 1, "cr": cr, "cw": 1000, "cw5m": 1000, "cw1h": 0, "model": "claude-opus-4-6"}
        if it is not None:
            usage["iter"] = it
        return {"call": n, "segment": 0, "bDefault": 20_000, "usage": usage}

    plain = [row(1, 0), row(2, 50_000), row(3, 60_000), row(4, 70_000)]
    extra: list[list[Any]] = [[None, 65_000, 0, 0], ["claude-fable-5", 4000, 100, 0]]
    iterated = [*plain[:3], row(4, 70_000, extra)]
    seg_plain = bt.Segment(bt.calls_from_trace(plain), shared=0)
    seg_iter = bt.Segment(bt.calls_from_trace(iterated), shared=0)
    opus, fable = bt._price("claude-opus-4-6"), bt._price("claude-fable-5")
    assert opus.usd is not None
    assert fable.usd is not None
    advisor_units = (4000 + 100 * fable.w5m) * fable.usd / opus.usd
    assert seg_iter.actual[3] == pytest.approx(seg_plain.actual[3] + 65_000 + advisor_units)
    drop = 51_001 - 20_000  # a restart after call 2: D = T(2) - bDefault
    after = seg_iter.costs(1)
    assert after[3] == pytest.approx(seg_plain.costs(1)[3] + (65_000 - drop) + advisor_units)
    # the one-pass values agree with pricing each restart point one by one
    assert seg_iter.values() == pytest.approx([seg_iter.value(k) for k in range(len(seg_iter.calls) - 1)])
