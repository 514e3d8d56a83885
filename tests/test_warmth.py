"""Warmth, gap cost, the inferred TTL and cold-start causes on hand-built transcripts with known answers."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import pytest

from bench import synth
from session_watcher.reports.collect import run_report

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC).timestamp()  # a Monday


class Transcript:
    """A session for the report, built call by call at given times with the one transcript writer.

    Message ids carry the session's name, so sessions never share one (ccusage dedupes across files);
    a response of `blocks` lines carries a partial output count on all but its last line."""

    def __init__(self, session: str = "s1") -> None:
        self.t = synth.Transcript(session)
        self.calls = 0

    def call(self, t: float, cr: int, cw: int, *, model: str = synth.MODEL, ttl: str = "5m", inp: int = 3,
             out: int = 50, blocks: int = 1, side: bool = False) -> Transcript:
        self.calls += 1
        self.t.call(cr, cw, inp, out, ttl=ttl, sidechain=side, samples=blocks, streamed=True, model=model,
                    mid=f"msg_{self.t.session_id}_{self.calls}", at=t)
        return self

    def user(self, t: float) -> Transcript:
        self.t.user(at=t)
        return self

    def compact(self, t: float) -> Transcript:
        self.t.compact(pre_tokens=1, at=t)
        return self

    def synthetic(self, t: float) -> Transcript:
        self.t.api_error(at=t)
        return self

    def write(self, project_dir: Path) -> Path:
        return self.t.save(project_dir / f"{self.t.session_id}.jsonl")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    return tmp_path


def report(root: Path, now: float = T0 + 86400, since: float | None = None) -> dict[str, Any]:
    doc, _ = run_report([str(root)], now=now, utc_offset=0.0, since=since)
    return doc


def by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["sessionId"]: s for s in doc["sessions"]}


WARM = (20_000, 200)  # cache read, cache write of a warm call
COLD = (1_000, 30_000)


def cliff_session(name: str, ttl: str, warm_gaps: Sequence[float], cold_gaps: Sequence[float]) -> Transcript:
    """A session whose calls after each warm gap read the cache and after each cold gap re-create it."""
    tr = Transcript(name)
    t = T0
    tr.call(t, *WARM, ttl=ttl)
    for g in warm_gaps:
        t += g
        tr.call(t, *WARM, ttl=ttl)
    for g in cold_gaps:
        t += g
        tr.call(t, *COLD, ttl=ttl)
    return tr


class TestCliff:
    def test_gap_just_under_and_just_over_a_5_minute_ttl(self, home: Path) -> None:
        """Five warm returns from 3 to 5 min and five cold from 5 to 20: the 5m edge is claimed at 300 s,
        with the returns on each side of it."""
        proj = home / "projects" / "p"
        cliff_session("a", "5m", [20, 45, 90, 190, 220, 250, 280, 299], [301, 420, 600, 900, 1150]).write(proj)
        doc = report(home / "projects")
        t5 = doc["ttl"]["5m"]
        assert t5 is not None
        assert t5["inferredSeconds"] == 300
        ev = t5["evidence"]
        assert (ev["below"]["n"], ev["below"]["cold"], ev["below"]["maxGapSeconds"]) == (5, 0, 299)
        assert (ev["above"]["n"], ev["above"]["cold"], ev["above"]["minGapSeconds"]) == (5, 5, 301)
        assert (ev["below"]["fromSeconds"], ev["above"]["toSeconds"]) == (120, 1200)  # the returns that test it
        assert ev["chance"] == {"below": 1 / 32, "above": 1 / 32}
        assert doc["ttl"]["1h"] is None  # no 1-hour writes at all
        # the cold starts past the inferred TTL are idle gaps
        assert doc["causes"] == {"firstCall": 0, "idleGap": 5, "modelSwitch": 0, "compaction": 0, "unexplained": 0}
        assert doc["idleGapRule"]["5m"] == {"seconds": 300.0, "from": "inferred"}
        b = {x["label"]: x for x in doc["gapBuckets"] if x["ttl"] == "5m"}
        assert (b["4m-5m"]["n"], b["4m-5m"]["coldShare"]) == (3, 0.0)
        assert (b["5m-6m"]["n"], b["5m-6m"]["coldShare"]) == (1, 1.0)
        assert b["5m-6m"]["medianWarmth"] == pytest.approx(1_000 / 31_000)

    def test_too_few_returns_near_the_edge_claim_nothing(self, home: Path) -> None:
        """Six warm calls (three of them from 2 to 5 min) and three cold ones: not enough to say where
        the cache expires (the old rule, pooling every short gap, claimed 300 s from this). The
        documented 5 minutes then counts for the causes, as it does for the guard."""
        proj = home / "projects" / "p"
        cliff_session("a", "5m", [20, 45, 90, 150, 200, 299], [301, 420, 900]).write(proj)
        doc = report(home / "projects")
        assert doc["ttl"]["5m"] is None
        tested = doc["documentedTtl"]["5m"]
        assert tested["seconds"] == 300
        assert (tested["below"]["n"], tested["below"]["cold"], tested["above"]["n"], tested["above"]["cold"]) == (
            3, 0, 3, 3)
        assert doc["idleGapRule"]["5m"] == {"seconds": 300.0, "from": "ttl"}
        assert doc["causes"]["idleGap"] == 3  # past the documented TTL: the break, not "unexplained"

    def test_six_cold_returns_do_not_make_a_15_minute_1_hour_cache(self, home: Path) -> None:
        """1-hour writes: many warm short gaps, five warm from 7.5 to 15 min, six cold from 15 to 50 min
        (two in the nearest bucket). An edge this far from the documented 60 minutes needs 10 returns a
        side; six cold ones say only "not enough data yet" (the old rule: "expires near 15 min")."""
        proj = home / "projects" / "p"
        cliff_session("h", "1h", [30] * 40 + [500, 600, 700, 800, 880], [960, 1100, 1500, 2100, 2700, 3000]).write(proj)
        doc = report(home / "projects")
        assert doc["ttl"]["1h"] is None
        assert doc["idleGapRule"]["1h"] == {"seconds": 3600.0, "from": "ttl"}
        assert doc["causes"]["idleGap"] == 0  # all six under the 1-hour lifetime: not blamed on the break
        assert doc["causes"]["unexplained"] == 6

    def test_gap_just_under_and_just_over_a_1_hour_ttl(self, home: Path) -> None:
        """1h writes: warm from 30 min to 59m50s, cold from 60m10s to 2 h; the 5m class stays empty."""
        proj = home / "projects" / "p"
        cliff_session("b", "1h", [30, 400, 900, 1900, 2500, 3000, 3300, 3590],
                      [3610, 4300, 5000, 6000, 7000]).write(proj)
        doc = report(home / "projects")
        assert doc["ttl"]["5m"] is None
        t1 = doc["ttl"]["1h"]
        assert t1["inferredSeconds"] == 3600
        assert t1["evidence"]["below"]["maxGapSeconds"] == 3590
        assert t1["evidence"]["above"]["minGapSeconds"] == 3610
        # a 5-minute cache would have gone cold at 400 s; these calls were warm: not blamed on idling
        assert doc["causes"]["idleGap"] == 5

    def test_no_ttl_when_nothing_goes_cold(self, home: Path) -> None:
        """All warm: the data cannot show a cliff, so there is none (never a hard-coded number)."""
        cliff_session("c", "5m", [10, 20, 30, 400, 900, 4000], []).write(home / "projects" / "p")
        doc = report(home / "projects")
        assert doc["ttl"] == {"5m": None, "1h": None}
        assert doc["idleGapRule"]["5m"] == {"seconds": 300.0, "from": "ttl"}

    def test_the_break_and_the_causes_agree(self, home: Path) -> None:
        """A cold call after 5.6 minutes of 5-minute writes: the break is its cause, and the session's
        sentence says it cost its re-read; a cold call after 2 minutes is not the break's doing."""
        tr = Transcript("k").call(T0, *WARM).call(T0 + 30, *WARM).call(T0 + 30 + 336, 1_000, 505_000)
        tr.call(T0 + 400, *WARM)
        tr.write(home / "projects" / "p")
        tr2 = Transcript("m").call(T0, *WARM).call(T0 + 30, *WARM).call(T0 + 150, *COLD)
        tr2.write(home / "projects" / "p")
        doc = report(home / "projects")
        k, m = by_id(doc)["k"], by_id(doc)["m"]
        assert k["sentence"].startswith("your 5 min 36 s break cost 505k tokens of re-reading")
        assert k["largestGapCause"] == "idleGap"
        assert m["largestGapCause"] == "unexplained"
        assert m["sentence"].startswith("the call after your longest break (2 min) re-wrote 30k tokens")
        assert [c["cause"] for c in doc["coldStartList"] if c["callIndex"]] == ["idleGap", "unexplained"]

    def test_a_small_gap_is_never_blamed(self, home: Path) -> None:
        """A cold call 12 s after a warm one, with no switch or compaction, is unexplained."""
        tr = Transcript("d").call(T0, *WARM).call(T0 + 30, *WARM).call(T0 + 42, *COLD)
        tr.write(home / "projects" / "p")
        doc = report(home / "projects")
        assert doc["causes"]["unexplained"] == 1
        assert doc["coldStartList"][0]["gapSeconds"] == pytest.approx(12)
        assert doc["coldStartList"][0]["cause"] == "unexplained"


class TestCauses:
    def test_compaction(self, home: Path) -> None:
        """A cold call right after a compact boundary is blamed on the compaction."""
        tr = Transcript("e").call(T0, *WARM).call(T0 + 20, *WARM).compact(T0 + 30).user(T0 + 31)
        tr.call(T0 + 40, *COLD).call(T0 + 50, *WARM)
        tr.write(home / "projects" / "p")
        doc = report(home / "projects")
        assert doc["causes"] == {"firstCall": 0, "idleGap": 0, "modelSwitch": 0, "compaction": 1, "unexplained": 0}
        assert doc["coldStartList"][0]["callIndex"] == 2

    def test_model_switch(self, home: Path) -> None:
        """Switching model starts a cold cache; switching back after a while is a switch again."""
        tr = Transcript("f").call(T0, *WARM).call(T0 + 5, *WARM)
        tr.call(T0 + 10, 0, 40_000, model="claude-haiku-4-5-20251001").call(
            T0 + 15, 40_000, 100, model="claude-haiku-4-5-20251001"
        )
        tr.call(T0 + 20, *COLD)
        tr.write(home / "projects" / "p")
        doc = report(home / "projects")
        s = by_id(doc)["f"]
        assert s["causes"]["modelSwitch"] == 2
        assert [c["callIndex"] for c in doc["coldStartList"]] == [2, 4]
        assert s["models"] == ["claude-haiku-4-5-20251001", "claude-opus-4-6"]

    def test_first_call_and_one_call_session(self, home: Path) -> None:
        """A one-call session has undefined warmth (null, never 0) and no gap to price."""
        Transcript("g").call(T0, 0, 15_000).write(home / "projects" / "p")
        doc = report(home / "projects")
        s = by_id(doc)["g"]
        assert s["warmth"] is None
        assert s["largestGap"] is None
        assert s["coldStarts"] == 1
        assert doc["causes"]["firstCall"] == 1
        assert "one-call" in s["sentence"]


class TestSessionFigures:
    def test_warmth_and_largest_gap_sentence(self, home: Path) -> None:
        """Session warmth is token-weighted over calls 2..n; the largest gap is priced in dollars."""
        tr = Transcript("h").call(T0, 0, 50_000, ttl="1h")
        tr.call(T0 + 60, 50_000, 1_000, ttl="1h")
        tr.call(T0 + 60 + 3 * 3600, 20_000, 340_000, ttl="1h")  # a 3-hour break
        tr.call(T0 + 60 + 3 * 3600 + 30, 360_000, 500, ttl="1h")
        tr.write(home / "projects" / "p")
        s = by_id(report(home / "projects"))["h"]
        assert s["warmth"] == pytest.approx((50_000 + 20_000 + 360_000) / (50_000 + 20_000 + 360_000 + 341_500))
        g = s["largestGap"]
        assert g["seconds"] == pytest.approx(3 * 3600)
        assert g["tokensRecreated"] == 340_000
        # Opus 4.6 input $5/MTok; a 1-hour write costs 2x: 340k * 10 / 1e6
        assert g["usd"] == pytest.approx(3.40)
        assert s["sentence"] == "your 3 h break cost 340k tokens of re-reading ($3.40)"

    def test_money_date_and_project(self, home: Path) -> None:
        """Cache cost per call at its model's prices (Opus 4.6: read $0.50, 5-minute write $6.25, 1-hour
        write $10 per MTok), sidechain calls included; by day, by week (from Monday) and by project,
        the project being the last folder of the transcript's cwd (a Windows one too)."""
        tr = Transcript("money")
        tr.t.cwd = "D:\\work\\oh-my-posh"
        tr.call(T0, 0, 50_000, ttl="1h")  # $0.50
        tr.call(T0 + 60, 50_000, 1_000, ttl="1h")  # $0.025 + $0.01
        tr.call(T0 + 70, 1_000, 2_000, side=True)  # a sidechain call: $0.0005 + $0.0125
        tr.call(T0 + 86400, 51_000, 100, ttl="1h")  # the next day: $0.0255 + $0.001
        tr.write(home / "projects" / "-D--work-oh-my-posh")
        doc = report(home / "projects", now=T0 + 2 * 86400)
        s = by_id(doc)["money"]
        assert s["cacheUsd"] == pytest.approx(0.5615)  # the main conversation (what backtest prices)
        assert s["subagentUsd"] == pytest.approx(0.013)  # the sidechain call, apart
        assert (s["unpricedCalls"], s["calls"], s["apiCalls"], s["subagentCalls"]) == (0, 3, 4, 1)
        assert (s["firstActivity"], s["projectName"], s["cwd"]) == (T0, "oh-my-posh", "D:\\work\\oh-my-posh")
        assert s["model"] == synth.MODEL
        t = doc["totals"]
        assert [(d["date"], d["sessions"], d["calls"], d["subagentCalls"]) for d in t["days"]] == [
            ("2026-03-02", 1, 2, 1), ("2026-03-03", 1, 1, 0)]
        assert [d["cacheUsd"] for d in t["days"]] == pytest.approx([0.535, 0.0265])
        assert [(w["week"], w["sessions"], w["calls"]) for w in t["weeks"]] == [("2026-03-02", 1, 3)]
        assert t["projects"] == [{"project": "oh-my-posh", "cwd": "D:\\work\\oh-my-posh", "sessions": 1, "calls": 3,
                                  "cacheUsd": pytest.approx(0.5615), "lastActivity": T0 + 86400, "subagentCalls": 1,
                                  "subagentUsd": pytest.approx(0.013)}]
        since = report(home / "projects", now=T0 + 2 * 86400, since=T0 + 3600)  # the window's calls only
        assert [d["calls"] for d in since["totals"]["days"]] == [1]
        assert by_id(since)["money"]["cacheUsd"] == pytest.approx(0.5615)  # a session's own figure is whole

    def test_last_sample_wins_sidechain_and_synthetic(self, home: Path) -> None:
        """Lines of one response count once with the last sample; sidechain counts only in totals."""
        tr = Transcript("i").call(T0, 100, 1000, blocks=3, out=77)
        tr.call(T0 + 10, 1100, 10, side=True, out=5)
        tr.synthetic(T0 + 11)
        tr.call(T0 + 20, 1100, 20, out=9)
        tr.write(home / "projects" / "p")
        s = by_id(report(home / "projects"))["i"]
        assert s["calls"] == 2
        assert s["apiCalls"] == 3
        assert s["tokens"] == {
            "input": 9,
            "output": 77 + 5 + 9,
            "cacheRead": 2300,
            "cacheWrite": 1030,
            "total": 9 + 91 + 2300 + 1030,
        }

    def test_subagent_files_count_toward_totals_only(self, home: Path) -> None:
        """Calls in <session>/subagents/*.jsonl add tokens but no main-chain calls or gaps."""
        proj = home / "projects" / "p"
        Transcript("j").call(T0, *WARM).call(T0 + 60, *WARM).write(proj)
        sub = Transcript("agent-x").call(T0 + 10, 0, 9_000, side=True).call(T0 + 20, 9_000, 10, side=True)
        sub.write(proj / "j" / "subagents")
        s = by_id(report(home / "projects"))["j"]
        assert s["calls"] == 2
        assert s["apiCalls"] == 4
        assert s["tokens"]["cacheWrite"] == 200 + 200 + 9_000 + 10
        assert s["coldStarts"] == 0

    def test_today_and_this_week(self, home: Path) -> None:
        """'68 % of today ran warm': today from local midnight, the week as today and the 6 days before."""
        proj = home / "projects" / "p"
        day = 86400
        Transcript("k").call(T0 - 3 * day, *WARM).call(T0 - 3 * day + 60, 3_000, 1_000).write(proj)
        Transcript("l").call(T0, *WARM).call(T0 + 60, 6_800, 3_200).write(proj)
        Transcript("m").call(T0 - 9 * day, *WARM).call(T0 - 9 * day + 60, 0, 5_000).write(proj)
        doc = report(home / "projects", now=T0 + 3600)
        assert doc["warmthToday"] == pytest.approx(0.68)
        assert doc["warmthWeek"] == pytest.approx((6_800 + 3_000) / (10_000 + 4_000))
        empty = report(home / "projects", now=T0 + 30 * day)
        assert empty["warmthToday"] is None
        assert empty["warmthWeek"] is None

    def test_since_keeps_recent_sessions(self, home: Path) -> None:
        proj = home / "projects" / "p"
        Transcript("old").call(T0 - 10 * 86400, *WARM).call(T0 - 10 * 86400 + 5, *COLD).write(proj)
        Transcript("new").call(T0, *WARM).call(T0 + 5, *WARM).write(proj)
        doc = report(home / "projects", since=T0 - 86400)
        assert [s["sessionId"] for s in doc["sessions"]] == ["new"]
        assert doc["coldStarts"] == 0


def test_malformed_lines_are_skipped(home: Path) -> None:
    """Broken JSON, invalid UTF-8 and odd shapes next to real calls: the real calls still count."""
    proj = home / "projects" / "p"
    path = Transcript("n").call(T0, *WARM).call(T0 + 5, *WARM).write(proj)
    good = path.read_bytes()
    junk = (
        b'{"type":"assistant","message":{"usage":{"input_tokens":5\n'
        b'\xff\xfe "usage" \n'
        b'["usage"]\n'
        b'{"type":"assistant","message":{"id":7,"usage":{"input_tokens":5}}}\n'
        b'{"type":"assistant","message":{"id":"x","usage":"none"}}\n'
    )
    path.write_bytes(junk + good)
    s = by_id(report(home / "projects"))["n"]
    assert s["calls"] == 2
    assert s["tokens"]["cacheRead"] == 40_000


def test_a_worktrees_project_is_named_with_its_repository(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A session in a git worktree (`repo/.worktrees/1`, `~/.claude-worktrees/repo/2`,
    `repo/.claude/worktrees/feat`) was the project "1" in report's tables: named by its last folder
    alone. It is `repo/1`; a folder deeper in a worktree, or any other, by its last folder as before."""
    from session_watcher import cli

    cwds = {"wt1": "/home/u/cli/.worktrees/1", "wt2": "/home/u/.claude-worktrees/cli/2",
            "wt3": "/home/u/cli/.claude/worktrees/feat", "deep": "/home/u/cli/.worktrees/1/cmd/tool",
            "plain": "/home/u/worktrees/x"}
    for k, (sid, cwd) in enumerate(cwds.items()):
        tr = Transcript(sid)
        tr.t.cwd = cwd
        tr.call(T0 + 60 * k, *WARM).write(home / "projects" / f"p{k}")
    names = {s["sessionId"]: s["projectName"] for s in report(home / "projects")["sessions"]}
    assert names == {"wt1": "cli/1", "wt2": "cli/2", "wt3": "cli/feat", "deep": "tool", "plain": "x"}
    assert cli.main(["report", "--projects", str(home / "projects")]) == 0
    table = capsys.readouterr().out.split("by project\n", 1)[1].split("\n\n", 1)[0]
    assert sorted(row.split()[0] for row in table.splitlines()[2:]) == ["cli/1", "cli/2", "cli/feat", "tool", "x"]


@pytest.mark.parametrize("width", [40, 60, 80, 120])
def test_a_long_repositorys_worktrees_are_told_apart_in_a_narrow_table(
        home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, width: int) -> None:
    """Two worktrees of a repository of a long name (`session-watcher-plugin/1`, `/2`): the tables
    cut a project's name at its end, so both read `session-watch…`, in the sessions table at every
    width and in the by-project one at 40 and 60. The name keeps its last part and cuts the
    first (`session-wat…/1`); every line within COLUMNS."""
    from session_watcher import cli

    repo = "/home/u/session-watcher-plugin"
    for k in (1, 2):
        tr = Transcript(f"wt{k}")
        tr.t.cwd = f"{repo}/.worktrees/{k}"
        for n in range(3):
            tr.call(T0 + 600 * k + 10 * n, 40_000_000, 2_000_000)  # wide numbers: a cache $ of four figures
        tr.write(home / "projects" / f"p{k}")
    monkeypatch.setenv("COLUMNS", str(width))
    assert cli.main(["report", "--projects", str(home / "projects")]) == 0
    out = capsys.readouterr().out
    assert [line for line in out.splitlines() if len(line) > width] == []
    for title in ("sessions, newest first\n", "by project\n"):
        table = out.split(title, 1)[1].split("\n\n", 1)[0].splitlines()
        at = table[0].index("project")
        cells = sorted(row[at:].split("  ")[0] for row in table[2:4])
        assert [cell[-2:] for cell in cells] == ["/1", "/2"], (title, cells)
        assert all(cell.startswith("s") for cell in cells), cells


def test_an_entrys_text_cut_from_one_encoding_is_the_three_texts() -> None:
    """`_entry_text` cuts an entry's JSON at its two nulls (causes, sentence) where its keys are the
    usual ones in order: the same three texts as encoding the three parts apart, whatever its strings
    hold (a project named like the cut), and a fork's entry (its keys after `agent`)."""
    from session_watcher.reports import warmth
    from session_watcher.reports.jsontext import dumps

    def apart(entry: dict[str, object]) -> tuple[str, str, str]:
        head = dumps({k: entry[k] for k in warmth._BEFORE_CAUSES})[:-1] + ',"causes":'
        mid = "," + dumps({k: entry[k] for k in warmth._BEFORE_SENTENCE})[1:-1] + ',"sentence":'
        keys = (*warmth._AFTER_SENTENCE, *warmth._FORK_KEYS)
        return head, mid, "," + dumps({k: entry[k] for k in keys if k in entry})[1:]

    tricky = 'p,"causes":null,"largestGap":{},"sentence":null,"tokens":\\"'
    base: dict[str, object] = {
        "sessionId": tricky, "project": tricky, "calls": 3, "apiCalls": 4, "warmth": 0.5, "coldStarts": 1,
        "causes": None, "largestGap": {"seconds": 1.5, "tokensRecreated": 9, "usd": 0.1, "cold": True, "callIndex": 2},
        "sentence": None, "tokens": {"input": 1, "total": 1}, "models": ["m"], "lastActivity": 2.0,
        "firstActivity": 1.0, "cwd": tricky, "model": "m", "projectName": tricky, "cacheUsd": 0.25,
        "unpricedCalls": 0, "subagentCalls": 1, "subagentUsd": 0.0, "agent": "claude-code"}
    fork = {k: v for k, v in base.items() if k != "agent"} | {"inheritedCalls": 2, "forkedFrom": "x", "agent": "a"}
    for entry in (base, {**base, "largestGap": None}, fork):
        assert warmth._entry_text(entry) == apart(entry)
    assert tuple(base) == warmth._ENTRY_KEYS  # the usual entry takes the one encoding
