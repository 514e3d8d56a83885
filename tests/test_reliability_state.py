"""Corrupt or foreign state files and hostile transcripts: quarantined, rebuilt, never double-counted.

Everything runs in-process through `hooks.run.run`, the hook's whole body, against real files.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests import fuzz_synth as fs
from tests.statefile import load_state, state_file

if TYPE_CHECKING:
    from collections.abc import Callable

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import session_watcher.hooks.run

    # the Stop hook's wait for the turn's last line: no writer runs meanwhile here, so it could only
    # end at its bound (1.2 s a Stop); the fold after it is the same (tests/test_tail.py has the wait)
    monkeypatch.setattr(session_watcher.hooks.run, "STOP_WAIT", 0.0)
    return fs.isolate(tmp_path, monkeypatch)


def session(root: Path, sid: str, calls: int = 12, seed: int = 1) -> tuple[fs.SynthSession, Path]:
    return fs.write_session(root, sid, calls, seed)


def hook(s: fs.SynthSession, tr: Path | str, event: str = "Stop", **over: Any) -> dict[str, Any] | None:
    from session_watcher.hooks.run import run

    payload = {**s.hook_payload(str(tr), event), **over}
    return run(event, json.dumps(payload).encode())


def quarantined(root: Path) -> list[str]:
    q = root / "swhome" / "state" / "quarantine"
    return sorted(p.name for p in q.iterdir()) if q.exists() else []


def exact(root: Path, s: fs.SynthSession, upto: int | None = None) -> dict[str, Any]:
    got = load_state(s.session_id, fs.sw_home(root))
    assert got["meter"]["main"] == s.token_usage(upto)
    assert fs.reads_of(got) == dict(s.reads_per_path(upto))
    return got


# ----------------------------------------------------------------------------- corrupt state

CORRUPT: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda good: good[: len(good) // 2],
    "garbage": lambda good: bytes(range(256)) * 7,
    "empty": lambda good: b"",
    "list": lambda good: b"[1, 2, 3]",
    "wrong-shape": lambda good: json.dumps({**json.loads(good), "meter": [1, 2]}).encode(),
    "alert-not-object": lambda good: json.dumps({**json.loads(good), "alerts": [1]}).encode(),
    "missing-key": lambda good: json.dumps({k: v for k, v in json.loads(good).items() if k != "engine"}).encode(),
    "other-session": lambda good: json.dumps({**json.loads(good), "sessionId": "someone-else"}).encode(),
    "newer-schema": lambda good: json.dumps({**json.loads(good), "schema": 99}).encode(),
    "nan": lambda good: good.replace(b'"bad":0', b'"bad":NaN'),
    "deep": lambda good: b"[" * 100_000 + b"]" * 100_000,
}


@pytest.mark.parametrize("kind", sorted(CORRUPT))
def test_corrupt_state_is_quarantined_and_rebuilt(root: Path, kind: str) -> None:
    s, tr = session(root, f"corrupt-{kind}")
    hook(s, tr)
    good = state_file(s.session_id, fs.sw_home(root)).read_bytes()
    bad = CORRUPT[kind](good)
    state_file(s.session_id, fs.sw_home(root)).write_bytes(bad)
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call()))
    assert hook(s, tr) is None or True
    exact(root, s)
    q = quarantined(root)
    assert len(q) == 1, q
    assert (root / "swhome" / "state" / "quarantine" / q[0]).read_bytes() == bad  # kept for a bug report
    tag = {"newer-schema": "schema99", "truncated": "corrupt", "garbage": "corrupt", "empty": "corrupt",
           "deep": "corrupt"}.get(kind, "shape")
    assert q[0].endswith("." + tag)
    log = (root / "swhome" / "log" / "session-watcher.log").read_text()
    assert "quarantined" in log


def test_symlinked_state_file_is_quarantined_and_its_target_untouched(root: Path) -> None:
    s, tr = session(root, "planted")
    outside = root / "outside.txt"
    outside.write_bytes(b"precious\n")
    os.chmod(outside, 0o644)
    before = outside.stat()
    sf = state_file(s.session_id, fs.sw_home(root))
    sf.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(sf.parent, 0o700)
    sf.symlink_to(outside)
    hook(s, tr)
    exact(root, s)
    assert outside.read_bytes() == b"precious\n"
    after = outside.stat()
    assert (after.st_mode, after.st_mtime_ns, after.st_ino) == (before.st_mode, before.st_mtime_ns, before.st_ino)
    assert not sf.is_symlink()
    q = quarantined(root)
    assert len(q) == 1
    assert q[0].endswith(".symlink")
    assert (root / "swhome" / "state" / "quarantine" / q[0]).is_symlink()


def test_symlinked_lock_file_does_not_wedge_the_session(root: Path) -> None:
    s, tr = session(root, "planted-lock")
    outside = root / "outside.lock"
    outside.write_bytes(b"precious\n")
    sf = state_file(s.session_id, fs.sw_home(root))
    sf.parent.mkdir(parents=True, exist_ok=True)
    Path(str(sf) + ".lock").symlink_to(outside)
    for _ in range(2):
        hook(s, tr)
    assert outside.read_bytes() == b"precious\n"
    exact(root, s)


# ----------------------------------------------------------------------------- transcripts

def test_missing_transcript_then_it_appears(root: Path) -> None:
    s, tr = session(root, "missing")
    moved = tr.with_suffix(".later")
    tr.rename(moved)
    assert hook(s, tr) is None
    assert load_state(s.session_id, fs.sw_home(root))["meter"]["main"]["calls"] == 0
    moved.rename(tr)
    hook(s, tr)
    exact(root, s)


def test_unreadable_transcript_a_directory_in_its_place(root: Path) -> None:
    s, tr = session(root, "dir-in-place")
    hook(s, tr)
    kept = tr.with_suffix(".kept")
    tr.rename(kept)
    tr.mkdir()
    (tr / "x").write_text("y")
    assert hook(s, tr) is None  # EISDIR on read: no exception escapes, the state stays
    exact(root, s)
    shutil.rmtree(tr)
    kept.rename(tr)
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call()))
    hook(s, tr)
    exact(root, s)


def test_unreadable_transcript_no_permission(root: Path) -> None:
    s, tr = session(root, "noperm")
    os.chmod(tr, 0)
    if os.access(tr, os.R_OK):  # root reads anything; the folder-in-its-place test covers this as root
        os.chmod(tr, 0o600)
        pytest.skip("running as root: file modes do not stop reads (the directory case covers it)")
    hook(s, tr)
    os.chmod(tr, 0o600)
    hook(s, tr)
    exact(root, s)


def test_transcript_truncated_mid_line_waits_for_the_rest(root: Path) -> None:
    s, tr = session(root, "midline", calls=3)
    c = s.next_call(reads=2)
    data = s.lines_of(c)
    first_nl = data.index(b"\n")
    for cut in (1, first_nl // 2, first_nl):  # the first line without its newline
        with open(tr, "ab") as fh:
            fh.write(data[:cut])
        hook(s, tr)
        exact(root, s, upto=3)
        with open(tr, "r+b") as fh:  # the writer died; the line is rewritten later
            fh.truncate(tr.stat().st_size - cut)
    with open(tr, "ab") as fh:
        fh.write(data[: first_nl + 40])  # the partial sample of the call, then half the next line
    hook(s, tr)
    partial = load_state(s.session_id, fs.sw_home(root))["meter"]["main"]
    assert partial["calls"] == 4
    assert partial["output"] == s.token_usage(3)["output"] + 1
    with open(tr, "ab") as fh:
        fh.write(data[first_nl + 40:])
    hook(s, tr)
    got = exact(root, s)  # the last sample replaced the partial one
    assert got["bad"] == 0


def test_rotated_transcript_is_folded_again_from_scratch(root: Path) -> None:
    s, tr = session(root, "rotated")
    hook(s, tr)
    copy = tr.with_suffix(".new")
    shutil.copyfile(tr, copy)
    with open(copy, "ab") as fh:
        fh.write(s.lines_of(s.next_call()))
    os.replace(copy, tr)  # a new inode with the old lines and one more
    hook(s, tr)
    exact(root, s)


def test_transcript_replaced_by_another_sessions_file(root: Path) -> None:
    s, tr = session(root, "replaced", calls=10, seed=1)
    hook(s, tr)
    other, other_tr = session(root, "someone", calls=7, seed=2)
    os.replace(other_tr, tr)
    hook(s, tr)
    got = load_state(s.session_id, fs.sw_home(root))
    assert got["meter"]["main"] == other.token_usage()  # the other file alone, never the sum
    assert fs.reads_of(got) == dict(other.reads_per_path())


def test_transcript_rewritten_in_place_same_size(root: Path) -> None:
    s, tr = session(root, "inplace", calls=6, seed=3)
    hook(s, tr)
    other = fs.SynthSession("inplace", s.project, seed=4)
    for _ in range(6):
        other.next_call()
    data = b"".join(other.lines_of(c) for c in other.calls)
    with open(tr, "r+b") as fh:  # same inode, different first line
        fh.write(data)
        fh.truncate(len(data))
    hook(s, tr)
    assert load_state(s.session_id, fs.sw_home(root))["meter"]["main"] == other.token_usage()


def test_a_50mb_single_line_is_skipped_cheaply(root: Path) -> None:
    s, tr = session(root, "huge", calls=4)
    hook(s, tr)
    filler = b'{"type":"assistant","message":{"usage":{"input_tokens":999999},"content":"' + b"x" * (50 << 20)
    with open(tr, "ab") as fh:
        fh.write(filler)  # still being written: no newline yet
    t0 = time.monotonic()
    hook(s, tr)
    partial = time.monotonic() - t0
    exact(root, s)
    with open(tr, "ab") as fh:
        fh.write(b'"}}\n')
        fh.write(s.lines_of(s.next_call()))
    t0 = time.monotonic()
    for _ in range(20):  # each run skips at most 8 MiB per fold step within its budget: a few runs
        hook(s, tr)
        if load_state(s.session_id, fs.sw_home(root))["cursor"]["offset"] == tr.stat().st_size:
            break
    whole = time.monotonic() - t0
    got = exact(root, s)
    assert got["bad"] == 1
    print(f"\n50 MB line: {partial * 1000:.0f} ms while open, {whole * 1000:.0f} ms once complete")


def test_invalid_utf8_and_nul_bytes(root: Path) -> None:
    s, tr = session(root, "bytes", calls=3)
    c = s.next_call()
    good = s.lines_of(c)
    with open(tr, "ab") as fh:
        fh.write(b'{"type":"assistant","message":{"usage":{"input_tokens":5},"id":"\xff\xfe"}}\n')
        fh.write(b"\x00" * 100 + b"\n")
        fh.write(b'{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"\x00"}]}}\n')
        fh.write(b"\x00" + good.split(b"\n")[0] + b"\n")  # a real record behind a NUL: bad, not counted
        fh.write(good)
    hook(s, tr)
    got = exact(root, s)
    assert got["bad"] >= 3


def test_deeply_nested_line_does_not_wedge_the_session(root: Path) -> None:
    s, tr = session(root, "nested", calls=3)
    with open(tr, "ab") as fh:
        fh.write(b'{"usage":' + b"[" * 200_000 + b"\n")  # holds a marker, so it is parsed
        fh.write(b'{"type":"assistant","message":{"usage":' + b'{"a":' * 100_000 + b"\n")
        fh.write(s.lines_of(s.next_call()))
    hook(s, tr)
    got = exact(root, s)
    assert got["bad"] == 2


def test_duplicate_lines_count_once(root: Path) -> None:
    s, tr = session(root, "dups", calls=3)
    c = s.next_call()
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(c) * 3)  # a resumed session repeats records
    hook(s, tr)
    exact(root, s)


# ----------------------------------------------------------------------------- privacy

def test_files_are_private(root: Path) -> None:
    s, tr = session(root, "private")
    (root / "swhome" / "state").mkdir(mode=0o700, parents=True)
    os.chmod(root / "swhome", 0o700)
    state_file(s.session_id, fs.sw_home(root)).parent.mkdir(mode=0o755)
    os.chmod(state_file(s.session_id, fs.sw_home(root)).parent, 0o755)  # a folder made too wide is tightened
    hook(s, tr)
    state_file(s.session_id, fs.sw_home(root)).write_bytes(b"garbage")
    hook(s, tr)  # quarantine + a log line
    base = root / "swhome"
    seen = 0
    for dirpath, dirnames, filenames in os.walk(base):
        for d in dirnames:
            p = Path(dirpath) / d
            if p == base / "config":
                continue  # the user's own folder
            assert stat.S_IMODE(p.stat().st_mode) == 0o700, p
        for f in filenames:
            p = Path(dirpath) / f
            if p.parent == base / "config" or p.parent.name == "quarantine":
                continue
            assert stat.S_IMODE(p.lstat().st_mode) == 0o600, p
            seen += 1
    assert seen >= 3  # state, lock, log (and the once-markers)
