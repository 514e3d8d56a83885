"""A year of sessions leaves no pile behind: the states of sessions whose transcript is gone (the
client deletes old ones) are swept by a Stop hook at most once a day (`state.tidy`), and only those.
Real hook processes on real files; the lock is the real one."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from session_watcher.base import paths
from session_watcher.hooks import run as hook_run
from session_watcher.state import tidy
from session_watcher.state.lock import SessionLock
from tests.oracle import TRANSCRIPTS, hook, payload
from tests.statefile import state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

DAY = 86400.0
QUIET = {"SESSION_WATCHER_STOP_WAIT": "0"}


def _fixture() -> Path:
    return TRANSCRIPTS / "tool_heavy.jsonl"  # a real session's, in the repository: the test always runs


def _session(tmp_path: Path, sid: str) -> Path:
    """A session folded by real Stop hooks from a copy of a real transcript; its transcript."""
    transcript = tmp_path / f"{sid}.jsonl"
    data = _fixture().read_bytes()
    transcript.write_bytes(data if data.endswith(b"\n") else data + b"\n")
    for _ in range(50):
        assert hook("Stop", payload(sid, transcript), env={**os.environ, **QUIET}).returncode == 0
        if state_file(sid).exists() and not _behind(sid, transcript):
            return transcript
    raise AssertionError(f"{sid}: not folded")


def _behind(sid: str, transcript: Path) -> bool:
    import json

    cursor = json.loads(state_file(sid).read_bytes()).get("cursor") or {}
    return bool(cursor.get("offset") != transcript.stat().st_size)


def _pieces(sid: str) -> list[Path]:
    base = state_file(sid)
    return [p for p in (base, Path(f"{base}.lock"), base.with_suffix(".paths"), base.with_suffix(".notify"))
            if p.exists()]


def _age(path: Path, days: float) -> None:
    when = time.time() - days * DAY
    for p in [path, *(path.iterdir() if path.is_dir() else [])]:
        os.utime(p, (when, when))


def _age_session(sid: str, days: float) -> None:
    for p in _pieces(sid):
        _age(p, days)


def test_a_stop_hook_sweeps_old_states_whose_transcript_is_gone_and_nothing_else(tmp_path: Path) -> None:
    gone = _session(tmp_path, "tidy-gone")
    kept = _session(tmp_path, "tidy-kept")  # old, its transcript still there: a cache worth keeping
    recent = _session(tmp_path, "tidy-recent")  # its transcript gone yesterday: kept a while
    assert state_file("tidy-gone").with_suffix(".paths").is_dir()  # a real state with its shards
    gone.unlink()
    recent.unlink()
    _age_session("tidy-gone", 40)
    _age_session("tidy-kept", 400)
    _age_session("tidy-recent", 1)
    folder = Path(paths.sessions_dir())
    stray = folder / "tidy-stray.paths"  # a shard folder whose state is gone
    stray.mkdir()
    (stray / "07-3.json").write_text("{}")
    (stray / "07-4.json.tmp").write_text("{")
    _age(stray, 40)
    lone_lock = folder / "tidy-lone.json.lock"
    lone_lock.write_text("")
    _age(lone_lock, 40)
    assert len(_pieces("tidy-gone")) >= 3
    Path(paths.tidy_marker()).unlink(missing_ok=True)  # the folds above swept once already: due again

    live = _session(tmp_path, "tidy-live")  # the Stop hook of a session in use sweeps

    assert _pieces("tidy-gone") == []
    assert state_file("tidy-kept").exists()
    assert state_file("tidy-recent").exists()
    assert state_file("tidy-live").exists()
    assert live.exists()
    assert not stray.exists()
    assert not lone_lock.exists()
    marker = Path(paths.tidy_marker())
    assert time.time() - marker.stat().st_mtime < DAY

    # swept once a day: an orphan made now waits for tomorrow's sweep
    kept.unlink()
    assert hook("Stop", payload("tidy-live", live), env={**os.environ, **QUIET}).returncode == 0
    assert state_file("tidy-kept").exists()
    _age(marker, 1.01)
    assert hook("Stop", payload("tidy-live", live), env={**os.environ, **QUIET}).returncode == 0
    assert _pieces("tidy-kept") == []
    assert state_file("tidy-recent").exists()


def test_a_state_in_use_stays_and_a_long_sweep_goes_on_later(tmp_path: Path) -> None:
    for n in range(3):
        _session(tmp_path, f"tidy-{n}").unlink()
        _age_session(f"tidy-{n}", 60)
    now = time.time()
    with SessionLock(f"{state_file('tidy-1')}.lock", 0):
        swept, finished = tidy.sweep(now)  # the lock is held here: tidy-1's state is in use
    assert sorted(swept) == ["tidy-0", "tidy-2"]
    assert finished
    assert state_file("tidy-1").exists()

    _age_session("tidy-1", 60)
    _session(tmp_path, "tidy-3").unlink()
    _age_session("tidy-3", 60)
    swept, finished = tidy.sweep(now, most=1)
    assert len(swept) == 1
    assert not finished
    Path(paths.tidy_marker()).unlink(missing_ok=True)
    assert len(tidy.maybe_tidy(now)) == 1  # the one left
    assert tidy.maybe_tidy(now) == []  # marked: not due again today
    assert not tidy.due(now + DAY - 60)
    assert tidy.due(now + DAY)


def test_a_cut_short_sweep_is_due_again_within_the_hour(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for n in range(2):
        _session(tmp_path, f"tidy-short-{n}").unlink()
        _age_session(f"tidy-short-{n}", 60)
    now = time.time()
    Path(paths.tidy_marker()).unlink(missing_ok=True)
    monkeypatch.setattr(tidy, "SWEEP_MAX", 1)
    assert len(tidy.maybe_tidy(now)) == 1
    assert not tidy.due(now + tidy.AGAIN_SOON - 60)
    assert tidy.due(now + tidy.AGAIN_SOON)


def test_the_hooks_copy_of_the_interval_is_the_sweeps() -> None:
    assert hook_run.TIDY_EVERY == tidy.TIDY_EVERY
    assert hook_run.EVENTS["Stop"]["tidy"]
    assert not hook_run.FOLD["tidy"]


def test_a_run_that_opened_the_lock_file_before_the_sweep_removed_it_takes_the_lock_at_the_path(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep unlinks a swept session's lock file while holding it. A run of that session that
    had opened the file just before (its `flock` not yet made) would then hold a lock on a file no
    one else opens, beside the next run's new one: two runs in the session at once."""
    from session_watcher.core.errors import LockTimeout
    from session_watcher.state import lock as lock_module

    _session(tmp_path, "tidy-race").unlink()
    _age_session("tidy-race", 60)
    lock_path = f"{state_file('tidy-race')}.lock"
    real_open = paths.open_file
    swept: list[str] = []

    def open_then_sweep(path: str, *args: int, **kw: bool) -> int:
        fd = real_open(path, *args, **kw)
        if not swept:  # between this run's open and its flock, the sweep
            swept.append("")
            swept.extend(tidy.sweep(time.time())[0])
        return fd

    monkeypatch.setattr(lock_module, "open_file", open_then_sweep)
    with SessionLock(lock_path, 0):
        assert swept == ["", "tidy-race"]
        assert os.path.exists(lock_path)
        with pytest.raises(LockTimeout), SessionLock(lock_path, 0):
            pass  # the next run finds the lock held
