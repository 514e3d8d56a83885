"""Crashes: hooks SIGKILLed at random points never leave a torn state, a stale lock or lost tokens.

Most kills hit a forked copy of the test process running `hooks.run.run`: the child counts its own
instrumentation points (every os.open, write, fsync, replace, unlink and close, and every fold step)
and kills itself at the k-th, k drawn from the points a clean run passes, so the kills land inside
the fold, the JSON dump, the fsync or the rename whatever the machine's speed or load. Some kills
hit real hook processes (after a delay drawn within a clean run's span, adapted until enough of
them land mid-run); one hits a process while it holds the session lock. After every kill the state
file must be absent or a valid state document (never torn, never quarantined), and the runs that
follow must converge to the oracle's exact totals. `SW_RUN_SLOW=1` runs the long variants.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Any

import pytest

from tests import fuzz_synth as fs
from tests.statefile import load_state, sessions_dir, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

if TYPE_CHECKING:
    from pathlib import Path

SLOW = os.environ.get("SW_RUN_SLOW") == "1"
FORK_RUNS = 800 if SLOW else 200
SUBPROCESS_RUNS = 120 if SLOW else 20


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fs.isolate(tmp_path, monkeypatch)


def assert_valid_or_absent(root: Path, sid: str) -> bool:
    from session_watcher.state import store

    path = state_file(sid, fs.sw_home(root))
    if not path.exists():
        return False
    doc = json.loads(path.read_bytes())  # never torn: a JSON error fails the test here
    assert store._shape_ok(doc, sid)
    return True


def converged(root: Path, s: fs.SynthSession, tr: Path) -> None:
    got = load_state(s.session_id, fs.sw_home(root))
    want, _ = fs.oracle(s, tr)
    assert got["cursor"]["offset"] == tr.stat().st_size
    assert got["meter"]["main"] == s.token_usage()
    assert fs.reads_of(got) == dict(s.reads_per_path())
    assert got["paths"] == want["paths"]
    assert got["engine"] == want["engine"]
    assert got["alerts"] == want["alerts"]


KILL_POINTS = ("open", "write", "fsync", "replace", "unlink", "close")


def forked_run(event: str, raw: bytes, kill_at: int | None = None) -> tuple[int, int]:
    """(pid, read end of a pipe on which a clean child reports how many points it passed)."""
    from session_watcher.base import sysos
    from session_watcher.hooks.run import run
    from session_watcher.state import session

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        real = {name: getattr(os, name) for name in KILL_POINTS}
        real_fold = session.fold_events
        kill, passed = os.kill, [0]

        def point() -> None:
            passed[0] += 1
            if kill_at is not None and passed[0] >= kill_at:
                kill(os.getpid(), signal.SIGKILL)

        def wrap(fn: Any) -> Any:
            def wrapped(*args: Any, **kwargs: Any) -> Any:
                point()
                return fn(*args, **kwargs)
            return wrapped

        for name, fn in real.items():
            setattr(os, name, wrap(fn))
            setattr(sysos, name, getattr(os, name))  # the hooks' calls: base/sysos.py
        session.fold_events = wrap(real_fold)
        code = 0
        try:
            run(event, raw)
        except BaseException:
            code = 3
        for name, fn in real.items():
            setattr(os, name, fn)
            setattr(sysos, name, fn)
        os.write(w, str(passed[0]).encode())
        os._exit(code)
    os.close(w)
    return pid, r


def reap(pid: int, r: int) -> tuple[int, int]:
    """(wait status, points the child reported passing: 0 when it was killed)."""
    with os.fdopen(r, "rb") as fh:
        said = fh.read()
    _, status_ = os.waitpid(pid, 0)
    return status_, int(said or 0)


def test_sigkill_at_random_points_in_forked_hooks(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import session_watcher.hooks.run  # imported before forking, so the children start at once
    from session_watcher import notifier  # noqa: F401
    from session_watcher.core import engine, status  # noqa: F401
    from session_watcher.state import session, store  # noqa: F401

    # the synthetic turns end on tool results: Stop would poll its whole bound for a closing line,
    # and the kill points would mostly land in that poll (tests/test_tail.py covers the wait)
    monkeypatch.setattr(session_watcher.hooks.run, "STOP_WAIT", 0.0)
    rng = random.Random(7)
    proj = fs.make_project(root)
    s = fs.SynthSession("crash-fork", proj, seed=11)
    tr = root / "crash-fork.jsonl"
    tr.write_bytes(b"")
    kills = clean = 0
    valid_after_kill = 0
    points = [8]  # instrumentation points clean runs passed: kills are drawn among them
    i = 0
    while i < FORK_RUNS or (kills < FORK_RUNS // 3 and i < 3 * FORK_RUNS):  # enough kills, bounded
        if rng.random() < 0.7:
            for _ in range(rng.randint(1, 4)):
                with open(tr, "ab") as fh:
                    fh.write(s.lines_of(s.next_call()))
        event = rng.choice(["PostToolUse", "Stop"])
        raw = json.dumps(s.hook_payload(str(tr), event, bash_id=f"toolu_b{i}")).encode()
        kill_at = rng.randint(1, max(points[-5:])) if rng.random() < 0.85 else None
        status_, passed = reap(*forked_run(event, raw, kill_at))
        if os.WIFSIGNALED(status_):
            assert os.WTERMSIG(status_) == signal.SIGKILL
            kills += 1
            valid_after_kill += assert_valid_or_absent(root, s.session_id)
        else:
            assert os.WIFEXITED(status_)
            assert os.WEXITSTATUS(status_) == 0
            points.append(passed)
            clean += 1
            assert_valid_or_absent(root, s.session_id)
        if i % 50 == 49:  # the runs that follow a series of kills converge to exact totals
            raw = json.dumps(s.hook_payload(str(tr), "Stop")).encode()
            for _ in range(20):
                status_, _ = reap(*forked_run("Stop", raw))
                assert os.WEXITSTATUS(status_) == 0
                if load_state(s.session_id, fs.sw_home(root))["cursor"]["offset"] == tr.stat().st_size:
                    break
            converged(root, s, tr)
        i += 1
    sessions = sessions_dir(fs.sw_home(root))
    leftovers = sorted(p.name for p in sessions.iterdir() if p.name.endswith(".tmp"))
    assert not (root / "swhome" / "state" / "quarantine").exists(), "a killed writer left a torn file"
    print(f"\nfork kills: {i} runs, {kills} SIGKILLed at instrumentation points ({valid_after_kill} with a "
          f"state on disk), {clean} clean (median {sorted(points)[len(points) // 2]} points), {len(s.calls)} calls, "
          f"temp files left: {len(leftovers)}")
    assert kills >= FORK_RUNS // 3  # most runs die mid-way, or the test proves nothing
    assert len(leftovers) <= 1, leftovers  # stale temp files of killed writers are swept


def run_hook(env: dict[str, str], payload: dict[str, Any], event: str = "Stop",
             timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(fs.hook_argv(event), input=json.dumps(payload).encode(), capture_output=True,
                          env=env, timeout=timeout, check=False)


def test_sigkill_real_hook_processes(root: Path) -> None:
    env = fs.env_for(root)
    rng = random.Random(3)
    proj = fs.make_project(root)
    s = fs.SynthSession("crash-proc", proj, seed=12)
    tr = root / "crash-proc.jsonl"
    tr.write_bytes(b"")
    kills = runs = 0
    t0 = time.monotonic()
    run_hook(env, s.hook_payload(str(tr), "Stop"))
    span = time.monotonic() - t0  # a whole run: kills are drawn inside it
    # until enough kills landed mid-run (bounded): a run that finished before its kill shortens the
    # delays, so a loaded machine (slower runs, late sleeps) only costs more runs, never a failure
    while runs < SUBPROCESS_RUNS or (kills < SUBPROCESS_RUNS // 3 and runs < 10 * SUBPROCESS_RUNS):
        runs += 1
        for _ in range(rng.randint(0, 5)):
            with open(tr, "ab") as fh:
                fh.write(s.lines_of(s.next_call()))
        p = subprocess.Popen(fs.hook_argv("Stop"), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env)
        assert p.stdin is not None
        p.stdin.write(json.dumps(s.hook_payload(str(tr), "Stop")).encode())
        p.stdin.close()
        time.sleep(rng.random() * 1.2 * span)
        finished = p.poll() is not None
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=60)
        killed = p.returncode == -signal.SIGKILL and not finished
        kills += killed
        if not killed:
            span *= 0.7
        assert_valid_or_absent(root, s.session_id)
    done = run_hook(env, s.hook_payload(str(tr), "Stop"))
    assert done.returncode == 0
    assert done.stderr == b""
    converged(root, s, tr)
    print(f"\nprocess kills: {runs} runs, {kills} SIGKILLed mid-run (delays drawn within {span * 1000:.0f} ms)")
    assert kills >= SUBPROCESS_RUNS // 3


HOLDER = """
import sys, time
from session_watcher.state.lock import SessionLock
with SessionLock(sys.argv[1], 0):
    print("held", flush=True)
    time.sleep(600)
"""


def test_a_killed_lock_holder_never_blocks_later_hooks(root: Path) -> None:
    env = fs.env_for(root)
    proj = fs.make_project(root)
    s = fs.SynthSession("crash-lock", proj, seed=13)
    tr = root / "crash-lock.jsonl"
    for _ in range(8):
        with open(tr, "ab") as fh:
            fh.write(s.lines_of(s.next_call()))
    lock = str(state_file(s.session_id, fs.sw_home(root))) + ".lock"
    os.makedirs(os.path.dirname(lock), mode=0o700, exist_ok=True)
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock], stdout=subprocess.PIPE, env=env,
                              cwd=str(fs.REPO))
    assert holder.stdout is not None
    assert holder.stdout.readline() == b"held\n"
    blocked = run_hook(env, s.hook_payload(str(tr), "Stop"))
    assert blocked.returncode == 0
    assert blocked.stdout == b""
    assert not state_file(s.session_id, fs.sw_home(root)).exists()  # it gave up, and wrote nothing
    holder.kill()
    holder.wait()
    holder.stdout.close()
    assert os.path.exists(lock)  # the lock file stays behind: its flock died with the holder
    after = run_hook(env, s.hook_payload(str(tr), "Stop"))
    assert after.returncode == 0
    assert after.stderr == b""
    converged(root, s, tr)


def _drain(fd: int, proc: subprocess.Popen[bytes], timeout: float = 120) -> bytes:
    """Everything written to the FIFO read through `fd` (non-blocking) until `proc` has exited."""
    import select

    got, deadline = b"", time.monotonic() + timeout
    while time.monotonic() < deadline:
        gone = proc.poll() is not None
        if select.select([fd], [], [], 0.05)[0]:
            chunk = os.read(fd, 1 << 16)
            got += chunk
            if chunk:
                continue
        if gone:
            return got
    raise AssertionError("the hook did not exit")


def test_a_trace_fifo_whose_reader_stalls_never_holds_the_hook(root: Path) -> None:
    """A trace FIFO whose reader has it open and reads nothing (the pipe full): the hook wrote at the
    reader's pace, so it waited for good, holding the session's lock, and every later hook of the
    session skipped its update. It gives up once the reader has taken nothing for FIFO_STALL_S: the
    hook exits 0, its state saved with every call; the rows not written are counted in the log, and
    the reader, reading again, gets no part of a row; the next hook runs as usual."""
    from session_watcher.state.session import FIFO_STALL_S

    calls = 6
    s, tr = fs.write_session(root, "stalled-reader", calls, seed=17)
    fifo = root / "trace.fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the reader: open, and it reads nothing
    filler = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    for size in (4096, 1):  # the pipe full of blank lines, to its last byte
        try:
            while True:
                os.write(filler, b"\n" * size)
        except BlockingIOError:
            pass
    env = fs.env_for(root, SESSION_WATCHER_TRACE=str(fifo))
    try:
        for event, bash_id in (("PostToolUse", "toolu_s1"), ("Stop", "toolu_s2")):
            p = subprocess.run(fs.hook_argv(event), input=json.dumps(s.hook_payload(str(tr), event, bash_id=bash_id))
                               .encode(), capture_output=True, env=env, timeout=120 + 2 * FIFO_STALL_S, check=False)
            assert p.returncode == 0, p.stderr
        blank = b""
        while True:  # the reader reads again: the filler's blank lines, and no part of a row
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            if not chunk:
                break
            blank += chunk
    finally:
        os.close(fd)
        os.close(filler)
    assert blank.strip(b"\n") == b""
    assert load_state(s.session_id, fs.sw_home(root))["engine"]["calls"] == calls
    log = "".join(f.read_text() for f in fs.sw_home(root).rglob("session-watcher.log"))
    assert "trace rows not written: the FIFO's reader made no room in it for 5 s" in log, log


def test_the_clients_sigterm_waits_for_the_save_and_the_trace(root: Path) -> None:
    """Print mode SIGTERMs the async hooks at exit (SIGKILL ~1.5 s later): a hook caught after its save
    still writes the trace rows of what it saved, then dies of the held SIGTERM. The trace is a FIFO
    the test reads, kept full, so the hook's write of the rows is stopped inside that window until
    the test, after the SIGTERM, reads it (the hook never waits for a reader to come: the test's is
    there from the start)."""
    calls = 6
    s, tr = fs.write_session(root, "term-window", calls, seed=13)
    fifo = root / "trace.fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    filler = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    for size in (4096, 1):  # the pipe full of blank lines, to its last byte: the next write waits
        try:
            while True:
                os.write(filler, b"\n" * size)
        except BlockingIOError:
            pass
    env = fs.env_for(root, SESSION_WATCHER_TRACE=str(fifo))
    p = subprocess.Popen(fs.hook_argv("PostToolUse"), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    assert p.stdin is not None
    p.stdin.write(json.dumps(s.hook_payload(str(tr), "PostToolUse", bash_id="toolu_t1")).encode())
    p.stdin.close()
    saved = state_file(s.session_id, fs.sw_home(root))
    deadline = time.monotonic() + 120
    while not saved.exists():  # saved: next, the trace's open waits for a reader
        assert p.poll() is None, "the hook exited before saving"
        assert time.monotonic() < deadline, "the hook never saved"
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    try:
        rows = [json.loads(line) for line in _drain(fd, p).decode().splitlines() if line]
    finally:
        os.close(fd)
        os.close(filler)
    assert p.returncode == -signal.SIGTERM  # held, not lost: it ended the process after the trace
    folded = load_state(s.session_id, fs.sw_home(root))["engine"]["calls"]  # all 6 unless the budget ran out
    assert 1 <= folded <= calls
    assert [r["call"] for r in rows] == list(range(1, folded + 1))
