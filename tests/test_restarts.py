"""Restarts taken, priced: the pure pricing by hand, idle compactions, and `backtest` on a real
parent session with the child that started from its handoff."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from session_watcher.core import backtest as bt
from session_watcher.core import handoff
from session_watcher.core import restarts as rs
from tests.oracle import TRANSCRIPTS, sw

PARENT = TRANSCRIPTS / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"  # 157 calls, 5-minute writes, opus-4-6


def call(n: int, ts: float, cr: int, cw: int, seg: int = 0, one_hour: bool = False, inp: int = 0) -> bt.Call:
    return bt.Call(call=n, segment=seg, total=inp + cr + cw, b_default=None, cr=cr, cw5m=0 if one_hour else cw,
                   cw1h=cw if one_hour else 0, model="claude-opus-4-6", ts=ts, inp=inp)


def test_a_handoff_restart_priced_by_hand() -> None:
    """Opus 4.6: reads $0.50/MTok, 5-minute writes $6.25/MTok. The parent's last prompt was 100k; the
    child came 20 minutes later (the parent's cache had expired), carrying 30k (10k found cached)."""
    parent = call(10, 0.0, 99_000, 1_000)
    child = [call(1, 1200.0, 10_000, 20_000), call(2, 1210.0, 30_000, 1_000)]
    got = rs.price(parent, child, (29_000, 0.13))
    assert got is not None
    assert got["carryTokens"] == 30_000
    assert got["carryUsd"] == pytest.approx(0.13)  # 10k read + 20k written
    assert got["pricedCarryTokens"] == 29_000  # the note's own figure; the other 1k was the new prompt
    assert got["continueExtraTokens"] == 71_000
    assert got["parentCold"] is True
    assert got["actualUsd"] == pytest.approx(0.13 + 0.02125)
    # continuing: the first call re-writes its 20k and the parent's 71k more; the next reads 71k more
    assert got["continueUsd"] == pytest.approx(0.005 + 91_000 * 6.25e-6 + 101_000 * 0.5e-6 + 1_000 * 6.25e-6)
    assert got["savingUsd"] == pytest.approx(got["continueUsd"] - got["actualUsd"])


def test_the_backtest_and_the_restarts_round_as_the_status_document_does() -> None:
    """One rounding of a figure, `core.status.rounded` (None kept): the backtest and the restarts
    each kept a private copy of it."""
    from session_watcher.core import status

    assert vars(bt)["rounded"] is status.rounded
    assert vars(rs)["rounded"] is status.rounded
    assert not hasattr(bt, "_round")
    assert not hasattr(rs, "_round")
    assert status.rounded(None) is None
    assert status.rounded(1 / 3) == 0.333333
    assert status.rounded(2 / 3, 3) == 0.667


def test_a_restart_onto_a_warm_parent_saves_only_the_reads() -> None:
    parent = call(10, 0.0, 99_000, 1_000)
    child = [call(1, 60.0, 10_000, 20_000), call(2, 70.0, 30_000, 1_000)]
    got = rs.price(parent, child)
    assert got is not None
    assert got["parentCold"] is False
    assert got["continueExtraTokens"] == 70_000  # no priced carry: the first call's whole prompt
    assert got["savingUsd"] == pytest.approx(2 * 70_000 * 0.5e-6)


def test_a_handoff_across_vendors_is_listed_not_priced() -> None:
    """A Codex thread's note taken by a Claude Code session: the parent's 100k are OpenAI's tokens,
    not the child's measure, and continuing the thread is not the child's calls carrying more; the
    restart is counted, its saving None (was priced as if the thread were Claude's). Within one
    vendor a change of model is still priced."""
    gpt = call(10, 0.0, 99_000, 1_000)._replace(model="gpt-5.5")
    child = [call(1, 60.0, 10_000, 20_000), call(2, 70.0, 30_000, 1_000)]
    got = rs.handoff("thread", [gpt], "child", child, (None, None))
    assert got is not None
    assert (got["savingUsd"], got["continueUsd"], got.get("acrossVendors")) == (None, None, True)
    assert got["carryUsd"] == pytest.approx(10_000 * 0.5e-6 + 20_000 * 6.25e-6)  # what the child paid stays
    assert rs.totals([got]) == {"restarts": 1, "pricedRestarts": 0, "savingUsd": 0}
    sonnet = call(10, 0.0, 99_000, 1_000)._replace(model="claude-sonnet-4-5")
    same = rs.handoff("parent", [sonnet], "child", child, (None, None))
    assert same is not None
    assert same["savingUsd"] == pytest.approx(2 * 70_000 * 0.5e-6)
    assert "acrossVendors" not in same
    from session_watcher.sessions.restarts import render_lines

    line = render_lines([got])[0]
    assert line.endswith("not priced: the parent ran on another vendor's model"), line


def test_idle_compactions_are_restarts_and_other_compactions_are_not() -> None:
    calls = [call(1, 0.0, 0, 250_000, one_hour=True), call(2, 10.0, 250_000, 2_000, one_hour=True),
             call(3, 10.0 + 55 * 60, 3_000, 12_000, seg=1, one_hour=True),  # compacted while idle
             call(4, 20.0 + 55 * 60, 15_000, 500, seg=1, one_hour=True),
             call(5, 30.0 + 55 * 60 + 60, 2_000, 9_000, seg=2, one_hour=True)]  # a /compact a minute on
    [found] = rs.idle_compactions("s", calls)
    assert (found["kind"], found["afterCall"], found["firstCall"], found["calls"]) == ("idleCompaction", 2, 3, 2)
    assert found["parentCold"] is False  # 55 minutes on a 1-hour cache
    assert found["savingUsd"] > 0
    # said in a user's words, not the model's ("s idle compaction after call 2")
    from session_watcher.sessions.restarts import render_lines

    assert render_lines([found])[0].startswith("restart taken: s compacted after a break, after call 2: carry ")


def _child(tmp_path: Path, parent_id: str, carry: int, usd: float) -> Path:
    note = handoff.header(parent_id, "2026-12-01 10:00 UTC", carry, usd) + "\nThe user's first request there:\nx"
    usage = [(9_000, carry - 9_000), (carry + 500, 800), (carry + 1_300, 700)]
    lines: list[dict[str, Any]] = [
        {"type": "attachment", "isSidechain": False, "timestamp": "2026-12-01T10:05:00.000Z",
         "attachment": {"type": "hook_additional_context", "content": [note], "hookName": "SessionStart",
                        "hookEvent": "SessionStart"}},
        {"type": "user", "isSidechain": False, "timestamp": "2026-12-01T10:05:01.000Z",
         "message": {"role": "user", "content": "carry on"}},
    ]
    for i, (cr, cw) in enumerate(usage):
        lines.append({"type": "assistant", "isSidechain": False, "timestamp": f"2026-12-01T10:05:{10 + i:02d}.000Z",
                      "requestId": f"req_{i}", "message": {
                          "id": f"msg_{i}", "model": "claude-opus-4-6", "role": "assistant",
                          "content": [{"type": "text", "text": "ok"}],
                          "usage": {"input_tokens": 2, "cache_read_input_tokens": cr,
                                    "cache_creation_input_tokens": cw, "output_tokens": 5}}})
    t = tmp_path / "child-1.jsonl"
    t.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return t


@pytest.mark.slow
def test_backtest_lists_the_restart_taken_with_its_priced_and_written_carry(tmp_path: Path) -> None:
    child = _child(tmp_path, PARENT.stem, 40_000, 0.2)
    proc = sw("backtest", "--json", str(PARENT), str(child))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    [taken] = doc["restartsTaken"]
    assert (taken["kind"], taken["parent"], taken["child"]) == ("handoff", PARENT.stem, "child-1")
    assert (taken["pricedCarryTokens"], taken["pricedCarryUsd"]) == (40_000, 0.2)
    assert taken["carryTokens"] == 2 + 40_000  # the child's first call, its whole prompt
    assert taken["parentCold"] is True  # months after the parent's last call
    assert taken["calls"] == 3
    assert taken["savingUsd"] > 0
    assert doc["restartsTotal"] == {"restarts": 1, "pricedRestarts": 1, "savingUsd": taken["savingUsd"]}
    # the child alone: its parent is found where Claude Code keeps transcripts, and replayed too
    alone = json.loads(sw("backtest", "--json", str(child)).stdout)
    assert alone["restartsTaken"] == [{"kind": "handoff", "parent": PARENT.stem, "child": "child-1",
                                       "parentFound": False}]
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-USER-proj"
    projects.mkdir(parents=True)
    shutil.copy(PARENT, projects / PARENT.name)
    alone = json.loads(sw("backtest", "--json", str(child)).stdout)
    assert alone["restartsTaken"][0]["savingUsd"] == pytest.approx(taken["savingUsd"])
    text = sw("backtest", str(PARENT), str(child)).stdout.decode()
    assert f"restart taken: {PARENT.stem[:8]} -> child-1: carry priced 40k ($0.20), written 40k" in text
    assert "restarts taken with a handoff: 1, saving $" in text  # handoffs alone: said so


@pytest.mark.slow
def test_report_lists_the_handoffs_received_on_this_machine(tmp_path: Path) -> None:
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-USER-proj"
    projects.mkdir(parents=True)
    shutil.copy(PARENT, projects / PARENT.name)
    shutil.copy(_child(tmp_path, PARENT.stem, 40_000, 0.2), projects / "child-1.jsonl")
    before = sw("report").stdout.decode()
    assert "restart taken" not in before  # a handoff is listed once a session of ours received it
    taken = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "handoffs" / "taken"
    taken.mkdir(parents=True)
    (taken / "child-1.json").write_text(json.dumps({"version": 1, "parentSession": PARENT.stem}))
    text = sw("report").stdout.decode()
    assert f"restart taken: {PARENT.stem[:8]} -> child-1: carry priced 40k ($0.20), written 40k" in text
    # a report narrowed to sessions the restart is not in (--since after the child's calls, --projects
    # elsewhere) lists no restart: it said "no session has calls since 2027-01-01", then this one
    elsewhere = tmp_path / "elsewhere" / "-home-USER-other"
    elsewhere.mkdir(parents=True)
    (tmp_path / "other").mkdir()
    shutil.copy(_child(tmp_path / "other", "0" * 36, 30_000, 0.1), elsewhere / "other-1.jsonl")
    for args in (("--since", "2027-01-01"), ("--projects", str(elsewhere.parent))):
        assert "restart" not in sw("report", *args).stdout.decode(), args
        assert json.loads(sw("report", "--json", *args).stdout)["restartsTaken"] == [], args  # piped
        assert "restart taken" not in sw("report", "--html", "-", *args).stdout.decode(), args
    # narrowed to sessions the child is in, it is listed
    since = sw("report", "--since", "2026-12-01T10:00Z").stdout.decode()
    assert f"restart taken: {PARENT.stem[:8]} -> child-1" in since, since
    assert [r["child"] for r in json.loads(sw("report", "--json", "--since", "2026-12-01T10:00Z").stdout)[
        "restartsTaken"]] == ["child-1"]


def _resumed_parent(path: Path) -> Path:
    """A parent of three calls on 2026-12-02, the day after its child (`_child`'s, 2026-12-01 10:05):
    its user went back to it after taking the restart."""
    lines = [{"type": "user", "isSidechain": False, "timestamp": "2026-12-02T09:00:00.000Z",
              "message": {"role": "user", "content": "back here"}}]
    for i, (cr, cw) in enumerate([(0, 60_000), (60_000, 900), (60_900, 800)]):
        lines.append({"type": "assistant", "isSidechain": False, "timestamp": f"2026-12-02T09:00:{10 + i:02d}.000Z",
                      "requestId": f"req_p{i}", "message": {
                          "id": f"msg_p{i}", "model": "claude-opus-4-6", "role": "assistant",
                          "content": [{"type": "text", "text": "ok"}],
                          "usage": {"input_tokens": 2, "cache_read_input_tokens": cr,
                                    "cache_creation_input_tokens": cw, "output_tokens": 5}}})
    path.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return path


@pytest.mark.slow
def test_a_narrowed_report_lists_a_restart_with_its_child_session(tmp_path: Path) -> None:
    """A restart is listed with the session it started, its child (docs/report.md): a report narrowed
    by --since or --projects lists it where the child is among its sessions, wherever the parent is,
    and not where only the parent is (the parent resumed after the child's last call; the two in
    other project folders). Text, piped JSON and the page alike; the page, listing none, said "None
    yet" though one was taken."""
    projects = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects"
    (projects / "-home-USER-a").mkdir(parents=True)
    (projects / "-home-USER-b").mkdir(parents=True)
    _resumed_parent(projects / "-home-USER-a" / "parent-2.jsonl")
    shutil.copy(_child(tmp_path, "parent-2", 40_000, 0.2), projects / "-home-USER-b" / "child-1.jsonl")
    taken = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "handoffs" / "taken"
    taken.mkdir(parents=True)
    (taken / "child-1.json").write_text(json.dumps({"version": 1, "parentSession": "parent-2"}))

    def listed(*args: str) -> list[str]:
        children = [r["child"] for r in json.loads(sw("report", "--json", *args).stdout)["restartsTaken"]]
        text = "restart taken: parent-2 -> child-1: carry" in sw("report", *args).stdout.decode()
        html = sw("report", "--html", "-", *args).stdout.decode()
        page = "restart taken: parent-2 -&gt; child-1: carry" in html
        assert [text, page] == [children == ["child-1"]] * 2, (args, children, text, page)
        # none listed in a narrowed report is none into its sessions, not "None yet" (one was taken)
        assert page or "None into this report's sessions: a restart shows here with the session" in html
        assert "None yet" not in html
        return children

    assert listed() == ["child-1"]
    assert listed("--since", "2026-12-01T10:00Z") == ["child-1"]  # both sides in
    assert listed("--since", "2026-12-01T12:00Z") == []  # the parent's later calls alone
    assert listed("--projects", str(projects / "-home-USER-b")) == ["child-1"]  # the parent's folder left out
    assert listed("--projects", str(projects / "-home-USER-a")) == []  # the child's folder left out


def _child_compacted_after_a_break(tmp_path: Path) -> Path:
    """`_child`'s session on a 1-hour cache, then 55 minutes idle and the client's compaction: a
    restart with a handoff and a compaction after a break in one child."""
    base = _child(tmp_path, PARENT.stem, 40_000, 0.2)
    lines = [json.loads(line) for line in base.read_text().splitlines()]
    for rec in lines:
        usage = (rec.get("message") or {}).get("usage")
        if usage:
            usage["cache_creation"] = {"ephemeral_5m_input_tokens": 0,
                                       "ephemeral_1h_input_tokens": usage["cache_creation_input_tokens"]}
    lines.append({"type": "system", "subtype": "compact_boundary", "isSidechain": False,
                  "content": "Conversation compacted", "timestamp": "2026-12-01T11:00:30.000Z",
                  "compactMetadata": {"trigger": "auto", "preTokens": 42_000}})
    for i, (cr, cw) in enumerate([(3_000, 9_000), (12_000, 600)]):
        lines.append({"type": "assistant", "isSidechain": False, "timestamp": f"2026-12-01T11:01:{10 + i:02d}.000Z",
                      "requestId": f"req_c{i}", "message": {
                          "id": f"msg_c{i}", "model": "claude-opus-4-6", "role": "assistant",
                          "content": [{"type": "text", "text": "ok"}],
                          "usage": {"input_tokens": 2, "cache_read_input_tokens": cr, "cache_creation_input_tokens": cw,
                                    "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": cw},
                                    "output_tokens": 5}}})
    base.write_text("".join(json.dumps(d) + "\n" for d in lines))
    return base


@pytest.mark.slow
def test_report_and_backtest_never_give_one_name_two_numbers(tmp_path: Path) -> None:
    """`report` said "restarts taken: 1" where `backtest`, on the same sessions, said 3: `report`
    lists the handoffs received here (and priced the compactions after a break of those sessions
    alone), `backtest` every session's restarts, handoffs and compactions after a break. `report`'s
    total is of the handoffs, and says so; `backtest`'s is of both, with each kind's part, the
    handoffs' the same as `report`'s."""
    import re

    projects = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-USER-proj"
    projects.mkdir(parents=True)
    shutil.copy(PARENT, projects / PARENT.name)
    child = projects / "child-1.jsonl"
    shutil.copy(_child_compacted_after_a_break(tmp_path), child)
    taken = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "handoffs" / "taken"
    taken.mkdir(parents=True)
    (taken / "child-1.json").write_text(json.dumps({"version": 1, "parentSession": PARENT.stem}))
    wide = {**os.environ, "COLUMNS": "1000"}
    back = sw("backtest", str(PARENT), str(child), env=wide).stdout.decode()
    assert "compacted after a break, after call 3" in back
    m = re.search(r"restarts taken: 2, saving \$([0-9.]+) in all: 1 with a handoff \(\$([0-9.]+)\), "
                  r"1 compaction after a break \(\$([0-9.]+)\)", back)
    assert m is not None, back
    report = sw("report", env=wide).stdout.decode()
    assert "compacted after a break" not in report
    assert f"restarts taken with a handoff: 1, saving ${m.group(2)} in all" in report
    assert "restarts taken:" not in report
    doc = json.loads(sw("report", "--json").stdout)
    assert [r["kind"] for r in doc["restartsTaken"]] == ["handoff"]


def test_two_codex_threads_of_one_minute_are_told_apart() -> None:
    """A Codex thread's id is a UUIDv7 (its first 8 characters the minute it started): a `/clear` soon
    after the start gives the child the parent's first 8, and the line read "restart taken: 01a24980
    -> 01a24980"; the ids are as long as tells them apart, as `report`'s and `backtest`'s tables."""
    from session_watcher.sessions.restarts import render_lines

    parent, child = "01a24980-c3f1-70aa-9d5e-1c2b3a4d5e6f", "01a24980-fb32-71d3-a4b7-22d307a66f65"
    got = rs.handoff(parent, [call(10, 0.0, 99_000, 1_000)], child,
                     [call(1, 60.0, 10_000, 20_000), call(2, 70.0, 30_000, 1_000)], (None, None))
    assert got is not None
    assert render_lines([got])[0].startswith("restart taken: 01a24980-c -> 01a24980-f: carry ")
