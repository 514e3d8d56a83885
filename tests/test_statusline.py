"""`session-watcher statusline` with the real client's status-line payloads."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from typing import TYPE_CHECKING, Any

import filelock
import pytest

from session_watcher.core import eoq, prices
from tests.oracle import REAL_CLIENT, SW, TRANSCRIPTS, hook, oracle, payload, run, sw
from tests.oracle import statusline as run_statusline
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path

SID = "3b070a8d-9b92-4baf-b16a-f45fe703ead7"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def payloads() -> list[dict[str, Any]]:
    return [json.loads(line)["payload"] for line in (REAL_CLIENT / "statusline.jsonl").read_text().splitlines()]


@pytest.fixture
def session(tmp_path: Path) -> Path:
    """The interactive session's transcript in a temp dir, folded once by a hook."""
    t = tmp_path / f"{SID}.jsonl"
    shutil.copy(REAL_CLIENT / "transcript_interactive.jsonl", t)
    proc = hook("SessionStart", payload(SID, t, "SessionStart", source="startup"))
    assert proc.returncode == 0
    return t


def statusline(p: dict[str, Any] | bytes, **env: str) -> str:
    raw = p if isinstance(p, bytes) else json.dumps(p).encode()
    proc = run_statusline(raw, env={**os.environ, **env})
    assert proc.returncode == 0
    assert proc.stderr == b""
    out = proc.stdout.decode()
    assert out.endswith("\n")
    assert out.count("\n") == 1
    return out[:-1]


@pytest.mark.parametrize("columns", [20, 40, 80, 200])
def test_real_payloads_one_line_within_columns(session: Path, columns: int) -> None:
    for p in payloads():
        p["transcript_path"] = str(session)
        for no_color in ("1", ""):
            env = {"COLUMNS": str(columns), "NO_COLOR": no_color}
            line = statusline(p, **env)
            plain = ANSI.sub("", line)
            assert plain.strip()
            assert len(plain) <= columns
            if no_color:
                assert "\x1b" not in line
    # with colour allowed the lamp is painted
    assert "\x1b[" in statusline(payloads()[-1] | {"transcript_path": str(session)}, NO_COLOR="")


def test_window_is_recorded_in_the_state(session: Path) -> None:
    p = payloads()[3] | {"transcript_path": str(session)}
    statusline(p, NO_COLOR="1")
    state = load_state(SID)
    assert state["context"]["window"] == 1_000_000
    # a size the model name could not give: only the status line can have told it
    p["context_window"]["context_window_size"] = 640_000
    p["model"] = {"id": "claude-sonnet-4-5", "display_name": "Sonnet 4.5"}
    statusline(p, NO_COLOR="1")
    assert load_state(SID)["context"]["window"] == 640_000
    doc = json.loads(sw("status", "--session", SID, "--json").stdout)
    assert doc["contextPressure"]["contextWindow"] == 640_000
    # and the status line folded the transcript: the meter is the oracle's
    assert doc["tokenUsage"] == oracle(session)["main"]


def test_statusline_folds_new_lines(tmp_path: Path) -> None:
    t = tmp_path / f"{SID}.jsonl"
    data = (REAL_CLIENT / "transcript_interactive.jsonl").read_bytes()
    half = data[: data.index(b"\n", len(data) // 2) + 1]
    t.write_bytes(half)
    hook("Stop", payload(SID, t))
    assert load_state(SID)["meter"]["main"] == oracle(half)["main"]
    t.write_bytes(data)
    statusline(payloads()[0] | {"transcript_path": str(t)}, NO_COLOR="1")
    assert load_state(SID)["meter"]["main"] == oracle(data)["main"]


def test_held_lock_never_waits(session: Path) -> None:
    sfile = state_file(SID)
    before = sfile.read_bytes()
    p = payloads()[3] | {"transcript_path": str(session)}
    p["context_window"]["context_window_size"] = 640_000
    with filelock.FileLock(str(sfile) + ".lock").acquire(timeout=1):
        line = statusline(p, NO_COLOR="1")  # a wait for good: its own timeout
        assert line.strip()
        assert sfile.read_bytes() == before  # drawn from the saved state, nothing written
        # no wait happened: the waiting path (filelock's poll loop) was never even imported
        proc = run([str(SW.parent / "python"), "-X", "importtime", "-c",
                    "from session_watcher.hooks.statusline import main; main()"], stdin=json.dumps(p).encode())
        assert proc.returncode == 0
        assert " filelock" not in proc.stderr.decode()
    assert load_state(SID)["context"]["window"] is None  # the held-lock runs recorded nothing
    statusline(p, NO_COLOR="1")  # the lock is free again: recorded
    assert load_state(SID)["context"]["window"] == 640_000


@pytest.mark.parametrize("raw", [b"", b"garbage\xff", b"[]", b'{"session_id": 5}', b'{"session_id": "../x"}',
                                 b'{"session_id": "unknown-session"}', b'{"session_id": "s", "context_window": 7}'])
def test_garbage_still_one_line(raw: bytes) -> None:
    line = statusline(raw, NO_COLOR="1", COLUMNS="80")
    assert line.strip()
    assert len(line) <= 80


# ----------------------------------------------------------------------------- the client's prompt_cache

CLIENT_332 = REAL_CLIENT.parent / "real-client-2.1.332" / "tui"


def test_prompt_cache_countdown_and_miss_cause_from_the_current_client(tmp_path: Path) -> None:
    """2.1.332's status-line payloads: the countdown to `expires_at`, the cause after a miss, nothing
    when the client has not said (before the first response)."""
    recs = [json.loads(line) for line in (CLIENT_332 / "statusline.jsonl").read_text().splitlines()]
    sid = recs[0]["payload"]["session_id"]
    t = tmp_path / f"{sid}.jsonl"
    shutil.copy(CLIENT_332 / "projects" / "-home-dev-proj" / f"{sid}.jsonl", t)
    assert hook("SessionStart", payload(sid, t, "SessionStart", source="startup")).returncode == 0
    first = recs[0]["payload"] | {"transcript_path": str(t), "cwd": str(tmp_path)}
    assert first.get("prompt_cache") is None  # absent until the first response
    assert not re.search(r"cache (\d|cold|warm)", statusline(first, NO_COLOR="1", COLUMNS="200"))
    warm = next(r["payload"] for r in recs if (r["payload"].get("prompt_cache") or {}).get("warm"))
    pc = warm["prompt_cache"]
    # the line is drawn now: put the expiry 272 s ahead of the clock
    line = statusline(warm | {"transcript_path": str(t), "cwd": str(tmp_path),
                              "prompt_cache": pc | {"expires_at": int(time.time()) + 272}},
                      NO_COLOR="1", COLUMNS="200")
    m = re.search(r"cache (\d):(\d\d)", line)
    assert m is not None, line
    assert 250 <= int(m.group(1)) * 60 + int(m.group(2)) <= 272
    assert load_state(sid)["context"]["promptCache"]["ttl"] == "5m"
    # an expiry past now + 5 min (the client's, just written, is a fraction past it): never more than the
    # cache lives (+ 330 s: however long the status line takes to start, uncapped it would read over 5:00)
    line = statusline(warm | {"transcript_path": str(t), "cwd": str(tmp_path),
                              "prompt_cache": pc | {"expires_at": time.time() + 330.6}}, NO_COLOR="1", COLUMNS="200")
    assert "cache 5:00" in line, line
    # expired: cold
    line = statusline(warm | {"transcript_path": str(t), "cwd": str(tmp_path),
                              "prompt_cache": pc | {"expires_at": int(time.time()) - 5}}, NO_COLOR="1")
    assert "cache cold" in line
    # the last response was a miss: its cause, as the client names it
    missed = next(r["payload"]["prompt_cache"] for r in recs if (r["payload"].get("prompt_cache") or {}).get("misses"))
    assert missed["last_miss_cause"] == {"causes": ["likely_server_side"]}
    shift = int(time.time()) + 200 - missed["expires_at"]
    now_pc = missed | {"expires_at": missed["expires_at"] + shift, "last_miss_at": missed["last_miss_at"] + shift}
    line = statusline(warm | {"transcript_path": str(t), "cwd": str(tmp_path), "prompt_cache": now_pc},
                      NO_COLOR="1", COLUMNS="200")
    assert "(miss: likely server side)" in line  # the client's identifier in words
    evil = now_pc | {"last_miss_cause": {"causes": ["\x1b]0;owned\x07", "model_changed"]}}
    line = statusline(warm | {"transcript_path": str(t), "cwd": str(tmp_path), "prompt_cache": evil},
                      NO_COLOR="1", COLUMNS="200")
    assert "(miss: model changed)" in line
    assert "\x1b" not in line
    # an older client's payload (no prompt_cache key): the state keeps what it knew, the line still draws
    old = {k: v for k, v in warm.items() if k != "prompt_cache"} | {"transcript_path": str(t), "cwd": str(tmp_path)}
    assert statusline(old, NO_COLOR="1").strip()


def test_after_resume_no_miss_of_the_previous_process(tmp_path: Path) -> None:
    """2.1.332's payloads around `--resume`: the resumed process sends no `prompt_cache` until its
    first response, so the miss its predecessor saw is not shown; the cache's countdown stays."""
    recs = [json.loads(line) for line in (CLIENT_332 / "statusline.jsonl").read_text().splitlines()]
    sid = recs[0]["payload"]["session_id"]
    t = tmp_path / f"{sid}.jsonl"
    shutil.copy(CLIENT_332 / "projects" / "-home-dev-proj" / f"{sid}.jsonl", t)
    assert hook("SessionStart", payload(sid, t, "SessionStart", source="startup")).returncode == 0
    resumed = next(i for i, r in enumerate(recs) if i and r["payload"].get("prompt_cache") is None
                   and recs[i - 1]["payload"].get("prompt_cache"))
    # the previous process's last response a miss (its first miss, as if the session ended there)
    before = next(r["payload"] for r in recs if (r["payload"].get("prompt_cache") or {}).get("misses"))
    assert before["prompt_cache"]["last_miss_cause"] == {"causes": ["likely_server_side"]}
    pc = before["prompt_cache"]
    shift = int(time.time()) + 200 - pc["expires_at"]
    pc = pc | {"expires_at": pc["expires_at"] + shift, "last_miss_at": pc["last_miss_at"] + shift}
    where = {"transcript_path": str(t), "cwd": str(tmp_path)}
    assert "(miss: likely server side)" in statusline(before | where | {"prompt_cache": pc}, NO_COLOR="1",
                                                      COLUMNS="200")
    after = recs[resumed]["payload"] | where
    assert "prompt_cache" not in after
    line = statusline(after, NO_COLOR="1", COLUMNS="200")
    assert "miss" not in line
    assert re.search(r"cache \d:\d\d", line), line  # the cache the new process will read is still warm
    # the new process's first response: no miss of its own
    fresh = next(r["payload"] for r in recs[resumed:] if r["payload"].get("prompt_cache"))
    assert fresh["prompt_cache"]["misses"] == 0
    assert "miss" not in statusline(fresh | where, NO_COLOR="1", COLUMNS="200")


# ----------------------------------------------------------------------------- a subscriber's plan

PLAN_SID = "258c7280-ae70-4798-800f-63464d01a85d"
PLAN_CWD = "/home/USER/projects/spotter-worktrees/spotter-4te"


def subscriber_payload(t: Path, cost: float | None, five: float | None, seven: float | None,
                       resets: tuple[int, int]) -> dict[str, Any]:
    """2.1.332's status-line payload for this session, with the `rate_limits` object a subscriber's
    client adds (its shape as documented: the mock cannot produce one)."""
    recs = [json.loads(line) for line in (CLIENT_332 / "statusline.jsonl").read_text().splitlines()]
    p = {k: v for k, v in recs[-1]["payload"].items() if k != "prompt_cache"}
    p |= {"session_id": PLAN_SID, "transcript_path": str(t), "cwd": PLAN_CWD,
          "workspace": {"current_dir": PLAN_CWD, "project_dir": PLAN_CWD, "added_dirs": []},
          "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"},
          "context_window": p["context_window"] | {"context_window_size": 200_000}}
    p["cost"] = p["cost"] | {"total_cost_usd": cost}
    if five is not None:
        p["rate_limits"] = {"five_hour": {"used_percentage": five, "resets_at": resets[0]},
                            "seven_day": {"used_percentage": seven, "resets_at": resets[1]}}
    return p


def settled(p: dict[str, Any]) -> str:
    """The line once the status line has folded the whole transcript (each run stops at its budget)."""
    lines = [statusline(p, NO_COLOR="1", COLUMNS="200")]
    for _ in range(40):
        lines.append(statusline(p, NO_COLOR="1", COLUMNS="200"))
        if lines[-1] == lines[-2]:
            break
    return lines[-1]


def test_a_subscribers_plan_through_the_real_status_line(tmp_path: Path) -> None:
    """`rate_limits` in the payload: the 5-hour and 7-day use in the line; once this session's
    own samples moved the 5-hour use 2 points or more while the client's cost grew, the restart's
    saving in that window, as an estimate (points per API-priced dollar over that span); dollars for
    an API user's payload."""
    from session_watcher.core.render import quota
    from session_watcher.sessions.replay import replay

    src = TRANSCRIPTS / f"{PLAN_SID}.jsonl"
    _final, trace = replay(str(src), cwd=PLAN_CWD)
    red = next(r for r in trace if r["lamp"] == "red" and r["savingUsd"])
    lines = src.read_text().splitlines(keepends=True)
    from session_watcher.agents.claude_code.transcript import iso_to_epoch

    cut = next(i for i, ln in enumerate(lines) if (iso_to_epoch(json.loads(ln).get("timestamp")) or 0) > red["ts"])
    t = tmp_path / src.name
    t.write_text("".join(lines[:cut]))
    assert hook("SessionStart", payload(PLAN_SID, t, "SessionStart", source="startup", cwd=PLAN_CWD)).returncode == 0
    now = int(time.time())
    resets = (now + 3 * 3600, now + 4 * 86400)
    # a first sample: the use is shown; nothing to estimate from yet, so dollars at API prices
    line = settled(subscriber_payload(t, 1.00, 20.0, 40.0, resets))
    assert line.startswith("● red: restart saves $"), line
    assert " at API prices · " in line
    assert " · 5h 20% · 7d 40% · " in line
    # half a point over 50 cents: still too little
    line = statusline(subscriber_payload(t, 1.50, 20.5, 40.2, resets), NO_COLOR="1", COLUMNS="200")
    assert " at API prices · " in line
    assert " · 5h 20% · " in line
    # 3 points over $1.50 since the first sample: 2 points a dollar in the 5-hour window
    line = statusline(subscriber_payload(t, 2.50, 23.0, 41.0, resets), NO_COLOR="1", COLUMNS="200")
    # the transcript's last call is long past: the cache is cold now, and a restart spares its re-write
    big_l = max(red["L"], red["contextPressure"]["pressureTokens"])
    cold = red["saving"] + eoq.restart_cost(red["cRatio"], big_l, red["shared"]) - big_l
    cold_usd = prices.read_usd(red["model"], cold)
    assert cold_usd is not None
    assert cold_usd > red["savingUsd"]
    assert line.startswith(f"● red: restart saves {quota(cold_usd * 2)} of 5h · "), (line, cold_usd)
    assert " · 5h 23% · 7d 41% · " in line
    doc = json.loads(sw("status", "--session", PLAN_SID, "--json").stdout)
    five, seven = doc["plan"]["fiveHour"], doc["plan"]["sevenDay"]
    assert five["usedPercent"] == 23.0
    assert five["resetsAt"] == resets[0]
    assert five["estimate"]["points"] == 3.0
    assert five["estimate"]["usd"] == pytest.approx(1.5)
    assert five["estimate"]["percentPerUsd"] == pytest.approx(2.0)
    assert five["restartSaves"] == pytest.approx(cold_usd * 2, abs=1e-3)  # `status` prices it as the line does
    assert seven["estimate"] is None  # 1 point: too little
    text = sw("status", "--session", PLAN_SID, env={**os.environ, "COLUMNS": "1000"}).stdout.decode()
    assert "plan     5-hour window 23 % used, resets in 2 h 59 min" in text or \
        "plan     5-hour window 23 % used, resets in 3 h" in text, text
    assert "estimate (5-hour): your use moved 3 points while this session's API-priced cost grew $1.50" in text
    assert "of your plan's 5-hour window (an estimate, below)" in text
    # a new 5-hour window: the estimate stays until a new span gives one; the span starts again
    nxt = (resets[0] + 5 * 3600, resets[1])
    statusline(subscriber_payload(t, 2.60, 1.0, 41.2, nxt), NO_COLOR="1")
    line = statusline(subscriber_payload(t, 3.00, 1.5, 41.3, nxt), NO_COLOR="1", COLUMNS="200")
    assert line.startswith(f"● red: restart saves {quota(cold_usd * 2)} of 5h · "), line
    assert " · 5h 1% · " in line
    # while a hook holds the lock: this payload's use is shown, nothing written
    sfile = state_file(PLAN_SID)
    kept = sfile.read_bytes()
    with filelock.FileLock(str(sfile) + ".lock").acquire(timeout=1):
        line = statusline(subscriber_payload(t, 3.10, 4.0, 41.5, nxt), NO_COLOR="1", COLUMNS="200")
    assert " · 5h 4% · 7d 41% · " in line
    assert sfile.read_bytes() == kept
    # an API user's payload (no rate_limits): dollars, no plan
    line = statusline(subscriber_payload(t, 3.20, None, None, nxt), NO_COLOR="1", COLUMNS="200")
    assert re.match(r"● red: restart saves \$\d+\.\d\d · ", line), line
    assert "5h" not in line
    assert "API prices" not in line


@pytest.mark.parametrize("limits", [
    {"five_hour": {"used_percentage": "23", "resets_at": 1}},
    {"five_hour": {"used_percentage": True}},
    {"five_hour": {"used_percentage": -4}},
    {"five_hour": 7, "seven_day": None},
    [1, 2],
    "full",
])
def test_odd_rate_limits_are_not_shown(tmp_path: Path, limits: object) -> None:
    t = tmp_path / f"{PLAN_SID}.jsonl"
    shutil.copy(TRANSCRIPTS / f"{PLAN_SID}.jsonl", t)
    assert hook("SessionStart", payload(PLAN_SID, t, "SessionStart", source="startup", cwd=PLAN_CWD)).returncode == 0
    p = subscriber_payload(t, 1.0, None, None, (0, 0)) | {"rate_limits": limits}
    line = statusline(p, NO_COLOR="1", COLUMNS="200")
    assert line.strip()
    assert "5h" not in line
    assert "7d" not in line


def test_with_the_users_own_line_above(session: Path, tmp_path: Path) -> None:
    """`--with CMD`: the user's command gets the same input and its line comes first; one that fails
    or hangs leaves ours alone (bounded: WITH_TIMEOUT)."""
    p = payloads()[-1] | {"transcript_path": str(session)}
    raw = json.dumps(p).encode()
    env = {**os.environ, "NO_COLOR": "1"}
    ours = statusline(p, NO_COLOR="1")
    seen = tmp_path / "seen.json"
    proc = run_statusline(raw, "--with", f"cat > {seen}; printf 'my line\\n'", env=env)
    assert proc.returncode == 0
    assert proc.stdout.decode().splitlines() == ["my line", ours]
    assert json.loads(seen.read_text()) == p  # the same input
    for broken in ("exit 3", "printf ''"):
        got = run_statusline(raw, "--with", broken, env=env)
        assert got.stdout.decode().splitlines() == [ours]
    # its exit code is not read (docs/statusline.md): a line printed before a failing exit shows
    got = run_statusline(raw, "--with", "printf 'mine\\n'; exit 3", env=env)
    assert got.stdout.decode().splitlines() == ["mine", ours]


def test_the_installer_prints_the_combined_command() -> None:
    """The installer, finding a status line of the user's, prints one copyable command for both."""
    from session_watcher.cli.install import both

    assert both("/v/bin/python -I -S /v/bin/session-watcher-statusline", {"command": "~/bin/my line.sh"}) == (
        "/v/bin/python -I -S /v/bin/session-watcher-statusline --with '~/bin/my line.sh'")


def test_right_after_a_compaction_the_line_says_no_call_since_it(tmp_path: Path) -> None:
    """2.1.332's `/compact` (its transcript up to the summary and the attachments after it, no call
    since) and the status-line payload the client sent then: the line said "waiting for the first
    API call" of a session of 7 calls; it says, as `status` does, that none came since the
    compaction, shortened on a narrow line. A session with no call at all still waits for the first."""
    recs = [json.loads(line) for line in (CLIENT_332 / "statusline.jsonl").read_text().splitlines()]
    sid = recs[0]["payload"]["session_id"]
    lines = (CLIENT_332 / "projects" / "-home-dev-proj" / f"{sid}.jsonl").read_bytes().splitlines(keepends=True)
    boundary = next(i for i, line in enumerate(lines) if b'"compact_boundary"' in line)
    after = next(i for i in range(boundary, len(lines)) if b'"type":"assistant"' in lines[i])
    t = tmp_path / f"{sid}.jsonl"
    t.write_bytes(b"".join(lines[:after]))
    assert hook("SessionStart", payload(sid, t, "SessionStart", source="compact")).returncode == 0
    compacted = next(r["payload"] for r in recs if r["payload"]["context_window"]["total_input_tokens"] == 0
                     and r["payload"]["context_window"]["current_usage"] is not None)
    now = compacted | {"transcript_path": str(t), "cwd": str(tmp_path)}
    assert statusline(now, NO_COLOR="1", COLUMNS="200") == "○ no API call since the compaction yet"
    assert statusline(now, NO_COLOR="1", COLUMNS="30") == "○ no call since compaction"
    words = " ".join(sw("status", "--session", sid).stdout.decode().split())
    assert "white: no API call since the compaction yet" in words
    fresh = tmp_path / "fresh.jsonl"
    fresh.write_bytes(b"".join(lines[:1]))
    line = statusline(recs[0]["payload"] | {"session_id": "fresh", "transcript_path": str(fresh), "cwd": str(tmp_path)},
                      NO_COLOR="1", COLUMNS="200")
    assert line == "○ waiting for the first API call"


def test_a_reader_gone_before_the_line_still_exits_0(tmp_path: Path) -> None:
    """stdout a pipe whose reader is gone (the client stopped waiting): the line is for no one, and
    the status line exits 0 silently, through install.sh's launcher and `session-watcher statusline`
    alike (it raised BrokenPipeError: a traceback, then exit 120 from the exit's flush)."""
    import subprocess

    from tests.oracle import launcher

    shutil.copy(TRANSCRIPTS / "short.jsonl", tmp_path / "t.jsonl")
    raw = json.dumps(payload("gone", tmp_path / "t.jsonl")).encode()
    for command in (launcher("statusline"), [str(SW), "statusline"]):
        read, write = os.pipe()
        os.close(read)
        try:
            proc = subprocess.run(command, input=raw, stdout=write, stderr=subprocess.PIPE, timeout=60, check=False)
        finally:
            os.close(write)
        assert (proc.returncode, proc.stderr) == (0, b""), (command, proc.stderr)
