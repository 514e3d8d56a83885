"""A year of sessions leaves no pile behind: the states of sessions whose transcript is gone (the
client deletes old ones) are swept by a Stop hook at most once a day (`state.tidy`), and only those.
Real hook processes on real files; the lock is the real one."""

from __future__ import annotations

import json
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
        swept, rest = tidy.sweep(now)  # the lock is held here: tidy-1's state is in use
    assert sorted(swept) == ["tidy-0", "tidy-2"]
    assert rest is None
    assert state_file("tidy-1").exists()

    _age_session("tidy-1", 60)
    _session(tmp_path, "tidy-3").unlink()
    _age_session("tidy-3", 60)
    swept, rest = tidy.sweep(now, most=1)
    assert len(swept) == 1
    assert rest is not None
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


def test_only_the_packages_own_names_are_swept(tmp_path: Path) -> None:
    """A file or folder of someone else's in the sessions folder (a note, a backup of states, a
    shard folder's foreign file), however old, stays: only a session's own pieces go."""
    _session(tmp_path, "tidy-own").unlink()
    _age_session("tidy-own", 60)
    folder = Path(paths.sessions_dir())
    note = folder / "notes.txt"
    note.write_text("mine")
    backup = folder / "backup"
    backup.mkdir()
    (backup / "tidy-x.json").write_text("{}")
    named = folder / "my states.json"  # no session id: not a state of ours
    named.write_text("{}")
    odd = folder / "tidy-odd.paths"  # a shard folder whose state is gone, with a file not a shard's
    odd.mkdir()
    (odd / "07-3.json").write_text("{}")
    (odd / "keep.json").write_text("{}")
    for p in (note, backup, named, odd):
        _age(p, 60)

    swept, rest = tidy.sweep(time.time())

    assert swept == ["tidy-own"]
    assert rest is None
    assert _pieces("tidy-own") == []
    assert note.read_text() == "mine"
    assert (backup / "tidy-x.json").exists()
    assert named.exists()
    assert sorted(p.name for p in odd.iterdir()) == ["keep.json"]


def test_a_state_written_again_after_the_sweep_looked_at_it_stays(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep reads an old state without its lock; a hook of the session may write it before the
    sweep takes the lock (its transcript back in place: a Codex thread unarchived). Looked at again
    under the lock, it is no longer old and stays."""
    transcript = _session(tmp_path, "tidy-back")
    moved = tmp_path / "archived.jsonl"
    transcript.rename(moved)
    _age_session("tidy-back", 60)
    looked = tidy._transcript_gone

    def then_a_hook_writes(state_path: str, *found: list[str]) -> bool:
        gone = looked(state_path, *found)
        moved.rename(transcript)  # back, and a hook of the session folds it meanwhile
        assert hook("Stop", payload("tidy-back", transcript), env={**os.environ, **QUIET}).returncode == 0
        return gone

    monkeypatch.setattr(tidy, "_transcript_gone", then_a_hook_writes)
    swept, _ = tidy.sweep(time.time() + 60)
    assert swept == []
    assert state_file("tidy-back").exists()
    assert Path(f"{state_file('tidy-back')}.lock").exists()


def test_a_transcript_that_cannot_be_looked_at_now_is_not_gone(tmp_path: Path) -> None:
    """Only "no such file" says a transcript is gone: one on a path that fails otherwise (here a link
    loop; a network disk's ESTALE, a folder not searchable) keeps its state."""
    transcript = _session(tmp_path, "tidy-loop")
    _session(tmp_path, "tidy-gone2").unlink()
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    state = state_file("tidy-loop")
    state.write_text(state.read_text().replace(str(transcript), str(loop / "t.jsonl")))
    _age_session("tidy-loop", 60)
    _age_session("tidy-gone2", 60)
    swept, _ = tidy.sweep(time.time())
    assert swept == ["tidy-gone2"]
    assert state.exists()


def test_where_the_marker_cannot_be_written_no_stop_sweeps(tmp_path: Path) -> None:
    """A marker that cannot be written (here a folder in its place; a read-only state folder alike)
    would leave every sweep due: each Stop hook would read up to SWEEP_MAX old states again. The
    sweep is marked first, and not made when the mark cannot be."""
    _session(tmp_path, "tidy-unmarked").unlink()
    _age_session("tidy-unmarked", 60)
    marker = Path(paths.tidy_marker())
    marker.unlink(missing_ok=True)
    marker.mkdir()
    _age(marker, 2)
    assert tidy.due(time.time())
    assert tidy.maybe_tidy() == []
    assert state_file("tidy-unmarked").exists()


def test_a_marker_from_the_future_does_not_hold_the_sweep_off(tmp_path: Path) -> None:
    """A clock set back after a sweep leaves the marker's time ahead: the sweep is due, not put off
    until the clock catches up (a clock a year ahead once: a year without sweeps)."""
    live = _session(tmp_path, "tidy-now")
    _session(tmp_path, "tidy-later").unlink()
    _age_session("tidy-later", 60)
    marker = Path(paths.tidy_marker())
    _age(marker, -300)
    assert tidy.due(time.time())
    assert hook("Stop", payload("tidy-now", live), env={**os.environ, **QUIET}).returncode == 0
    assert _pieces("tidy-later") == []
    assert 0 <= time.time() - marker.stat().st_mtime < DAY


@pytest.mark.parametrize("limit", ["SWEEP_MAX", "SWEEP_BYTES"])
def test_a_sweep_cut_short_goes_on_where_it_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    limit: str) -> None:
    """Old states whose transcript is still there (a client keeping transcripts longer) are read and
    kept. A sweep cut short by the number of sessions or the bytes read goes on after the last it
    looked at, not from the start again: else the first ones were read at every run (hourly, as it
    never finished) and an orphan past them never swept."""
    for n in range(5):
        _session(tmp_path, f"tidy-k{n}")
        _age_session(f"tidy-k{n}", 60)
    _session(tmp_path, "tidy-z-gone").unlink()
    _age_session("tidy-z-gone", 60)
    monkeypatch.setattr(tidy, limit, 1)
    read: list[str] = []
    looked = tidy._transcript_gone

    def counted(state_path: str, *found: list[str]) -> bool:
        read.append(Path(state_path).stem)
        return looked(state_path, *found)

    monkeypatch.setattr(tidy, "_transcript_gone", counted)
    Path(paths.tidy_marker()).unlink(missing_ok=True)
    now = time.time()
    swept: list[str] = []
    for run in range(8):  # hourly
        swept += tidy.maybe_tidy(now + run * tidy.AGAIN_SOON)
        assert len(read) == min(run + 1, 6)  # one state read a run
    assert swept == ["tidy-z-gone"]
    assert sorted(read) == [*(f"tidy-k{n}" for n in range(5)), "tidy-z-gone"]  # each once, one a run
    assert not tidy.due(now + 8 * tidy.AGAIN_SOON)  # done: due again tomorrow
    after, kept = tidy._resume()  # round: from the start tomorrow, the kept states read once
    assert after == ""
    assert sorted(kept) == [f"tidy-k{n}" for n in range(5)]


def test_a_transcript_named_from_the_sessions_folder_is_looked_for_there(tmp_path: Path) -> None:
    """A hook given a relative transcript path reads it from the session's folder (its cwd); the
    sweep runs in another session's hook, elsewhere, and must look for it there too, not find it
    "gone" from its own folder."""
    transcript = _session(tmp_path, "tidy-rel")
    state = state_file("tidy-rel")
    doc = json.loads(state.read_text())
    assert doc["context"]["cwd"] == str(tmp_path)
    doc["cursor"]["path"] = transcript.name
    state.write_text(json.dumps(doc))
    _age_session("tidy-rel", 60)
    assert tidy.sweep(time.time())[0] == []
    assert state.exists()
    transcript.unlink()
    assert tidy.sweep(time.time())[0] == ["tidy-rel"]


def test_what_was_written_lately_is_neither_read_nor_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only what is ORPHAN_DAYS old is looked at: a recent state is not read (its transcript gone or
    not), and a recent piece without a state (a new session's lock, taken before its first state is
    written) stays."""
    _session(tmp_path, "tidy-fresh").unlink()  # its transcript gone, but written today
    folder = Path(paths.sessions_dir())
    lock = folder / "tidy-new.json.lock"
    lock.write_text("")
    read: list[str] = []
    looked = tidy._transcript_gone

    def counted(state_path: str, *found: list[str]) -> bool:
        read.append(state_path)
        return looked(state_path, *found)

    monkeypatch.setattr(tidy, "_transcript_gone", counted)
    assert tidy.sweep(time.time()) == ([], None)
    assert read == []
    assert state_file("tidy-fresh").exists()
    assert lock.exists()


def test_a_kept_state_is_read_once_not_every_day(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An old state whose transcript is still there (a client keeping transcripts longer) was read
    at every daily sweep for its transcript's path (up to SWEEP_BYTES an hour until round). The sweep
    remembers, in its marker, each kept state it read (its mtime, size and transcript): the next days
    it only looks the transcript up, and reads a state again only once it changed. A transcript gone
    since is still found, and its state swept; the marker stays within MARKER_MAX."""
    transcripts = {}
    for n in range(4):
        transcripts[n] = _session(tmp_path, f"tidy-m{n}")
        _age_session(f"tidy-m{n}", 60)
    read: list[str] = []
    looked = tidy._transcript_gone

    def counted(state_path: str, *rest: list[str]) -> bool:
        read.append(Path(state_path).stem)
        return looked(state_path, *rest)

    monkeypatch.setattr(tidy, "_transcript_gone", counted)
    Path(paths.tidy_marker()).unlink(missing_ok=True)
    now = time.time()
    assert tidy.maybe_tidy(now) == []
    assert sorted(read) == [f"tidy-m{n}" for n in range(4)]
    read.clear()
    assert tidy.maybe_tidy(now + DAY) == []  # the next day: nothing read again
    assert read == []
    transcripts[1].unlink()  # a transcript gone since: found without reading its state
    assert tidy.maybe_tidy(now + 2 * DAY) == ["tidy-m1"]
    assert read == []
    assert _pieces("tidy-m1") == []
    state = state_file("tidy-m2")  # a state changed (written, then left): read again
    state.write_bytes(state.read_bytes() + b" ")
    _age_session("tidy-m2", 60)
    assert tidy.maybe_tidy(now + 3 * DAY) == []
    assert read == ["tidy-m2"]
    read.clear()
    assert tidy.maybe_tidy(now + 4 * DAY) == []
    assert read == []
    monkeypatch.setattr(tidy, "MARKER_MAX", 300)  # room for one or two states' entries: the rest read daily
    tidy.maybe_tidy(now + 5 * DAY)
    held = len(tidy._resume()[1])
    assert 0 < held < 3
    assert Path(paths.tidy_marker()).stat().st_size <= 300
    read.clear()
    tidy.maybe_tidy(now + 6 * DAY)
    assert len(read) == 3 - held
