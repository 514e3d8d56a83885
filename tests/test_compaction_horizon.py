"""The advice's horizon ends at the automatic compaction (docs/model.md, "The horizon and the
compaction"): a restart's lighter reads last only until the agent compacts the context on its own."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from bench import advice
from bench import calibrate as cal
from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine, eoq

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import ModelParams

POINT = 167_500  # where Claude Code 2.1.x compacts a 200k-window Opus 4.6 session (real sessions: 167-168k)


def two_segments(pre: int = POINT) -> Transcript:
    """A 200k-window session as real ones run: its first segment grows from 40k by 2k a call to an
    automatic compaction at `pre` tokens; the second starts at 100k (the summary and the files read
    again) and grows by 1k a call to the next one at the same point."""
    t = Transcript(model="claude-opus-4-6")
    ctx = 40_000
    t.call(0, ctx)
    while ctx + 2000 < pre:
        t.call(ctx, 2000)
        ctx += 2000
    t.compact("auto", pre)
    ctx = 100_000
    t.call(20_000, 80_000)
    while ctx + 1000 < pre:
        t.call(ctx, 1000)
        ctx += 1000
    t.compact("auto", pre)
    t.call(20_000, 30_000)
    return t


def fold(t: Transcript, cfg: ModelParams) -> list[dict[str, Any]]:
    """The advice (gates and reminders) with the session's segment, prompt and growth when it came."""
    out: list[dict[str, Any]] = []

    def hook(st: Any, alerts: list[Any], _usage: Any) -> None:
        if not alerts:
            return
        q = eoq.quantities(st, cfg)
        assert q["dhat"] is not None  # no advice without a growth estimate
        out.extend({**a, "segment": st["engine"]["segment"], "prompt": st["context"]["pressure"], "g": q["g"],
                    "m": q["dhat"] * (q["bDefault"] or 0) / q["g"]} for a in alerts)

    engine.fold(engine.new_state("s"), t.events(), cfg, call_hook=hook)
    return out


class TestHorizon:
    def test_the_horizon_is_the_cycle_until_the_compaction_comes_first(self) -> None:
        """min(m, calls to the compaction point at g a call), none once the point is passed."""
        assert eoq.advice_horizon(40.0, 100_000, 167_000, 1000) == 40.0
        assert eoq.advice_horizon(40.0, 157_000, 167_000, 1000) == 10.0
        assert eoq.advice_horizon(40.0, 170_000, 167_000, 1000) == 0.0
        assert eoq.advice_horizon(40.0, 157_000, None, 1000) == 40.0

    def test_the_point_is_the_sessions_own_then_the_window_less_the_reserve(self) -> None:
        assert eoq.compaction_point(155_472, 200_000, 33_000) == 155_472
        assert eoq.compaction_point(None, 200_000, 33_000) == 167_000
        assert eoq.compaction_point(0, 1_000_000, 33_000) == 967_000
        assert eoq.compaction_point(None, None, 33_000) is None

    def test_a_saving_is_counted_over_the_horizon(self) -> None:
        """calls (L - B) - K: 10 calls of 57k fewer reads, less a restart of 500k."""
        assert eoq.cycle_saving(157_000, 100_000, 10.0, 500_000) == 70_000


class TestTheGateBeforeACompaction:
    def test_no_gate_a_few_calls_before_the_compaction(self) -> None:
        """The second segment reaches its sweet spot at 157k, ten calls before it compacts at the
        point the first one showed: before this rule a gate promised $0.74 over 49 calls there, of which
        the segment had 10 left. Now its saving over those 10 is under the floor: nothing is said."""
        advice = fold(two_segments(), config.merge({}))
        assert [(a["segment"], a["kind"]) for a in advice] == [(0, "gate"), (0, "backstop")]

    def test_the_promise_is_counted_up_to_the_compaction(self) -> None:
        """The reminder at 132k in the first segment: no compaction seen yet, so the point is the 200k
        window less the reserve of the transcript's client (2.1.39: 33k, 167k); its promise counts the
        calls up to it, fewer than m."""
        advice = fold(two_segments(), config.merge({}))
        late = advice[1]
        assert late["cycle"] == pytest.approx((200_000 - 33_000 - late["prompt"]) / late["g"])
        assert late["cycle"] < late["m"]
        assert advice[0]["cycle"] == pytest.approx(advice[0]["m"])  # the gate at 90k: the whole cycle

    @pytest.mark.parametrize(("version", "reserve"), [("2.1.17", 45_000), ("2.1.20", 45_000),
                                                      ("2.1.22", 33_000), ("2.1.49", 33_000),
                                                      ("2.1.332", 33_000), (None, 45_000), ("beta", 45_000),
                                                      ("2.1.\u00b2", 45_000), ("\u0662.1.49", 45_000)])
    def test_the_point_follows_the_client_version(self, version: str | None, reserve: int) -> None:
        """Claude Code up to 2.1.20 compacted a 200k window at 155-158k, from 2.1.22 at 167-168k: the
        transcript's `version` says which; a line without one (or not a version) keeps the fallback."""
        t = two_segments()
        for rec in t.records:
            if version is None:
                rec.pop("version", None)
            else:
                rec["version"] = version
        late = fold(t, config.merge({}))[1]
        assert late["cycle"] == pytest.approx((200_000 - reserve - late["prompt"]) / late["g"])

    def test_the_config_wins_over_the_client(self) -> None:
        """A reserve the user sets (their client tuned by CLAUDE_AUTOCOMPACT_PCT_OVERRIDE, say) is
        the point for every client."""
        late = fold(two_segments(), config.merge({"compact_reserve": 50_000}))[1]
        assert late["cycle"] == pytest.approx((200_000 - 50_000 - late["prompt"]) / late["g"])

    def test_the_sessions_own_compaction_moves_the_point(self) -> None:
        """With no reserve the window's edge (200k) is far, but the session's own compaction at 167.5k
        is learned from its boundary: the second segment's gate stays unsaid all the same."""
        advice = fold(two_segments(), config.merge({"compact_reserve": 0}))
        assert [(a["segment"], a["kind"]) for a in advice if a["segment"] == 1] == []

    def test_a_compaction_far_ahead_changes_nothing(self) -> None:
        """The same session on a window that compacts late (a learned point of 400k: a 1M-style run)
        gates in its second segment as before."""
        t = two_segments()
        for rec in t.records:
            meta = rec.get("compactMetadata")
            if meta:
                meta["preTokens"] = 400_000
        advice = fold(t, config.merge({}))
        assert (1, "gate") in [(a["segment"], a["kind"]) for a in advice]


def test_no_promise_the_backtest_shows_lost(tmp_path: Path) -> None:
    """The backtest's own check (bench.advice: restarting after the alert's call, the real segment's
    calls over its `cycle` cost more than they did?) finds no advice lost on this session: before
    the rule the second segment's gate, 10 calls before its compaction, promised $0.74 and lost."""
    path = two_segments().save(tmp_path / "s.jsonl")
    s = cal.prepare(path)
    seen = advice.shown(s, config.merge(s.cfg, {}))
    assert (seen.alerts, seen.lost) == (2, 0)
    assert seen.realized > 0


@pytest.mark.parametrize(("session", "reserve"), [("08940314-9e93-46b1-a598-06bada65ed55", 45_000),  # 2.1.17
                                                  ("03a1382e-ecd5-42c4-b3d4-5c659e165904", 33_000)])  # 2.1.33
def test_real_transcripts_say_their_clients_reserve(tmp_path: Path, session: str, reserve: int) -> None:
    """Both decoders read the client's `version` off every call's line (a real session each side of
    2.1.22), and the fold keeps what it says."""
    from session_watcher.agents.claude_code import bulkparse, transcript
    from tests.calibration import unpack

    lines = unpack(session, tmp_path).read_bytes().splitlines()
    for parse in (transcript.parse_lines, bulkparse.parse_lines):
        evs, _bad = parse(lines)
        calls = sum(1 for ev in evs if ev[0] == "call")
        said = [ev[2] for ev in evs if ev[0] == "autocompact"]
        assert len(said) == calls > 100
        assert set(said) == {reserve}
    state = engine.new_state("s")
    engine.fold(state, evs, config.merge({}))
    assert state["context"]["compactReserve"] == reserve


@pytest.mark.parametrize("said", ["33000", -1, True, 1.5e300, None])
def test_a_reserve_that_is_not_a_count_is_the_fallback(said: object) -> None:
    """A state file whose `compactReserve` is not a whole number of tokens prices with the fallback."""
    state = engine.new_state("s")
    state["context"]["compactReserve"] = said  # type: ignore[typeddict-item]
    assert eoq.compact_reserve(state["context"], config.merge({})) == eoq.COMPACT_RESERVE
    state["context"]["compactReserve"] = 20_000
    assert eoq.compact_reserve(state["context"], config.merge({})) == 20_000
    assert eoq.compact_reserve(state["context"], config.merge({"compact_reserve": 0})) == 0


def test_the_advice_tool_measures_a_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m bench.advice --with KEY=VALUE` folds every setting with that key set (a reserve of
    60k: the first segment's gates fall past its point and are not sent, as the --compact grid's 60k
    row says), and a grid of several settings prints each session's capture and alerts lost under
    each."""
    files = [str(two_segments().save(tmp_path / "a.jsonl")), str(two_segments(160_000).save(tmp_path / "b.jsonl"))]

    def head(argv: list[str]) -> str:
        advice.main([*argv, *files])
        return capsys.readouterr().out.splitlines()[2]

    assert "| 0 of 4 |" in head(["--before"])
    assert "| 0 of 2 |" in head(["--before", "--with", "compact_reserve=60000"])
    advice.main(["--compact", *files])
    out = capsys.readouterr().out.splitlines()
    rows = [line for line in out if line.startswith(("| a |", "| b |"))]
    assert rows == ["| a |" + " 0.52 (0) |" * 5, "| b |" + " 0.58 (0) |" * 5]
    settings = {line.split(" |")[0]: line for line in out if line.startswith("| (")}
    assert list(settings) == [f"| ({r},)" for r in advice.COMPACT["compact_reserve"]]  # each setting folded
    assert [("| 0 of 2 |" in line) for line in settings.values()] == [False] * 4 + [True]  # as --with's 60k
    assert "In sample: (60000,)" in out  # equal capture: the fewest alerts, then interruptions
    assert "a: (60000,) capture 0.52 lost 0" in out


def test_the_advice_tool_sets_a_variant_under_every_setting(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--with` is set under each setting of --client's grid (the reserve by client version; the
    variant was left out of it) and under the back-off rows of --quick's (a reserve of 60k: 0 of 2
    gates sent, as the grid's rows say, not the 0 of 4 of the reserve as shipped); a key that grid
    chooses, a value without KEY= and one that is not JSON are refused."""
    files = [str(two_segments().save(tmp_path / "a.jsonl")), str(two_segments(160_000).save(tmp_path / "b.jsonl"))]
    advice.main(["--client", "--with", "advice_min_usd=1000", *files])  # a floor no restart saves
    rows = [line.split("|") for line in capsys.readouterr().out.splitlines() if line.startswith("| (")]
    assert len(rows) == 15
    assert {r[2].strip() for r in rows} == {"0.000"}  # no advice given: no dollar captured
    advice.main(["--quick", "--with", "compact_reserve=60000", *files])
    out = capsys.readouterr().out.splitlines()
    backoff = [line for line in out if line.startswith("| backoff")]
    assert len(backoff) == len(advice.BACKOFF)
    assert all("| 0 of 2 |" in line for line in backoff)
    for bad in (["--client", "--with", "compact_reserve=60000"], ["--compact", "--with", "compact_reserve=1"],
                ["--before", "--with", "compact_reserve"], ["--before", "--with", "compact_reserve=6O"]):
        with pytest.raises(SystemExit) as exc:
            advice.main([*bad, *files])
        assert exc.value.code == 2
        assert "--with compact_reserve" in capsys.readouterr().err
    for bad, said in ((["--before", "--with", "=5"], "--with : not a top-level config key"),
                      (["--before", "--with", "compact_reserv=5"], "--with compact_reserv: not a top-level"),
                      (["--before", "--with", "notify.remind_min=5"], "--with notify.remind_min: not a top-level")):
        with pytest.raises(SystemExit) as exc:
            advice.main([*bad, *files])
        assert exc.value.code == 2
        assert said in capsys.readouterr().err
