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

from tests.oracle import REAL_CLIENT, SW, hook, oracle, payload, run, sw
from tests.statefile import load_state, state_file

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
    proc = sw("statusline", stdin=raw, env={**os.environ, **env})
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
        start = time.monotonic()
        line = statusline(p, NO_COLOR="1")
        assert time.monotonic() - start < 5  # hang guard only
        assert line.strip()
        assert sfile.read_bytes() == before  # drawn from the saved state, nothing written
        # no wait happened: the waiting path (filelock's poll loop) was never even imported
        proc = run([str(SW.parent / "python"), "-X", "importtime", "-c",
                    "from session_watcher.statusline import main; main()"], stdin=json.dumps(p).encode())
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
    assert "(miss: likely_server_side)" in line
    evil = now_pc | {"last_miss_cause": {"causes": ["\x1b]0;owned\x07", "model_changed"]}}
    line = statusline(warm | {"transcript_path": str(t), "cwd": str(tmp_path), "prompt_cache": evil},
                      NO_COLOR="1", COLUMNS="200")
    assert "(miss: model_changed)" in line
    assert "\x1b" not in line
    # an older client's payload (no prompt_cache key): the state keeps what it knew, the line still draws
    old = {k: v for k, v in warm.items() if k != "prompt_cache"} | {"transcript_path": str(t), "cwd": str(tmp_path)}
    assert statusline(old, NO_COLOR="1").strip()
