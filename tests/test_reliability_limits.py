"""Resource limits, privacy and `doctor`: a lock held forever, a read-only or full disk, secrets, network.

Real hook processes under a private SESSION_WATCHER_HOME. The hook must return at once (the 2 s
bound is a hang guard only; the measured figure is printed), log the trouble once, and leave the
lines for a later run, which folds them exactly. The hook environment carries a canary API key that
must never be written anywhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import fuzz_synth as fs
from tests.statefile import load_state, sessions_dir, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

CANARY = "sk-secret-canary-7f3a"

HOLDER = """
import sys, time
from session_watcher.state.lock import SessionLock
with SessionLock(sys.argv[1], 0):
    print("held", flush=True)
    time.sleep(600)
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    fs.write_config(tmp_path)
    return tmp_path


# a hook that hangs is caught by the subprocess timeout (60 s); how long a run took is printed, never
# asserted: on a loaded machine a hook process takes seconds whatever its bounds. Speed is in bench/.


def env_of(root: Path) -> dict[str, str]:
    return fs.env_for(root, ANTHROPIC_API_KEY=CANARY, CLAUDE_CODE_OAUTH_TOKEN=CANARY + "-oauth")


def session(root: Path, sid: str, calls: int = 10) -> tuple[fs.SynthSession, Path]:
    return fs.write_session(root, sid, calls, seed=9)


def hook(root: Path, s: fs.SynthSession, tr: Path,
         event: str = "Stop") -> tuple[subprocess.CompletedProcess[bytes], float]:
    t0 = time.monotonic()
    proc = subprocess.run(fs.hook_argv(event), input=json.dumps(s.hook_payload(str(tr), event)).encode(),
                          capture_output=True, env=env_of(root), timeout=60, check=False)
    return proc, time.monotonic() - t0


def doctor(root: Path) -> tuple[int, str]:
    """doctor's report, its lines unwrapped (a temp folder's paths are longer than 80 columns)."""
    proc = subprocess.run(fs.cli_argv("doctor"), capture_output=True, env={**env_of(root), "COLUMNS": "1000"},
                          timeout=60, check=False, cwd=str(root))
    return proc.returncode, proc.stdout.decode()


def log_text(root: Path) -> str:
    log = root / "swhome" / "log" / "session-watcher.log"
    return log.read_text(errors="replace") if log.exists() else ""


def exact(root: Path, s: fs.SynthSession) -> None:
    got = load_state(s.session_id, fs.sw_home(root))
    assert got["meter"]["main"] == s.token_usage()
    assert fs.reads_of(got) == dict(s.reads_per_path())


def no_canary(root: Path) -> None:
    for dirpath, _, files in os.walk(root / "swhome"):
        for f in files:
            p = Path(dirpath) / f
            if p.is_file() and not p.is_symlink():
                assert CANARY.encode() not in p.read_bytes(), p


def test_a_lock_held_forever(root: Path) -> None:
    s, tr = session(root, "held")
    hook(root, s, tr)
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call()))
    lock = str(state_file(s.session_id, fs.sw_home(root))) + ".lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, lock], stdout=subprocess.PIPE, env=env_of(root),
                              cwd=str(fs.REPO))
    assert holder.stdout is not None  # a pipe: closed in the end below
    try:
        assert holder.stdout.readline() == b"held\n"
        times = []
        for _ in range(3):
            proc, took = hook(root, s, tr)
            assert proc.returncode == 0
            assert proc.stdout == b""
            assert proc.stderr == b""
            times.append(took)
        left_for_later = len(s.calls) - 1
        assert load_state(s.session_id, fs.sw_home(root))["meter"]["main"]["calls"] == left_for_later
        assert len(re.findall(r"lock", log_text(root))) == 1, log_text(root)  # logged once, not per run
        assert "session lock busy over 0.6 s" in log_text(root)  # each gave up at its bound, not later
        _code, out = doctor(root)
        assert f"locks      1 held now: {s.session_id}.json.lock" in out, out
        from session_watcher.hooks.run import run

        os.environ["SESSION_WATCHER_HOME"] = str(root / "swhome")
        try:
            t0 = time.monotonic()
            assert run("Stop", json.dumps(s.hook_payload(str(tr), "Stop")).encode()) is None
            inproc = time.monotonic() - t0
        finally:
            del os.environ["SESSION_WATCHER_HOME"]
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    print(f"\nlocked out: hook process {min(times) * 1000:.0f}-{max(times) * 1000:.0f} ms, "
          f"in-process run {inproc * 1000:.0f} ms")
    proc, _ = hook(root, s, tr)
    assert proc.returncode == 0
    exact(root, s)
    assert "locks      0 held now" in doctor(root)[1]
    no_canary(root)


def _try(argv: list[str]) -> bool:
    return subprocess.run(argv, capture_output=True, check=False).returncode == 0


@pytest.mark.parametrize("how", ["mount", "file"])
def test_read_only_state_dir(root: Path, how: str) -> None:
    s, tr = session(root, "rofs")
    hook(root, s, tr)
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call()))
    state_dir = root / "swhome" / "state"
    mounted = how == "mount" and os.geteuid() == 0 and shutil.which("mount") is not None and _try(
        ["mount", "--bind", str(state_dir), str(state_dir)])
    if mounted and not _try(["mount", "-o", "remount,ro,bind", str(state_dir)]):
        _try(["umount", str(state_dir)])
        mounted = False
    if how == "mount" and not mounted:
        pytest.skip("no bind mount here (the 'file' variant covers it)")
    moved = root / "state-aside"
    if not mounted:  # no mount here: a regular file where the state folder belongs
        state_dir.rename(moved)
        state_dir.write_bytes(b"not a folder")
    try:
        times = []
        for _ in range(3):
            proc, took = hook(root, s, tr)
            assert proc.returncode == 0
            assert proc.stdout == b""
            assert proc.stderr == b""
            times.append(took)
        entries = [ln for ln in log_text(root).splitlines() if " pid " in ln]
        assert len(entries) == 1, log_text(root)  # once, not per run
        code, out = doctor(root)
        assert "log        1 entry" in out, out
        if not mounted:
            assert code == 1, out
            assert "sessions   ERROR" in out, out
            assert "Not a directory" in out, out
    finally:
        if mounted:
            assert _try(["umount", str(state_dir)])
        else:
            state_dir.unlink()
            moved.rename(state_dir)
    print(f"\nread-only state ({'ro bind mount' if mounted else 'file in place of the folder'}): "
          f"hook {max(times) * 1000:.0f} ms")
    proc, _ = hook(root, s, tr)
    assert proc.returncode == 0
    exact(root, s)  # the lines left behind are folded now
    no_canary(root)


def test_full_disk(root: Path) -> None:
    s, tr = session(root, "fulldisk", calls=30)
    sessions = sessions_dir(fs.sw_home(root))
    sessions.mkdir(parents=True, mode=0o700)
    if os.geteuid() != 0 or not _try(["mount", "-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(sessions)]):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        hook(root, s, tr)
        before = load_state(s.session_id, fs.sw_home(root))
        with open(tr, "ab") as fh:
            fh.write(s.lines_of(s.next_call()))
        filler = sessions / "filler"
        fs.fill_up(filler)
        for _ in range(3):
            proc, _ = hook(root, s, tr)
            assert proc.returncode == 0
            assert proc.stdout == b""
            assert proc.stderr == b""
            assert load_state(s.session_id, fs.sw_home(root)) == before  # the old state, whole
        assert not (sessions / f"{s.session_id}.json.tmp").exists()  # the failed write cleaned up
        entries = [ln for ln in log_text(root).splitlines() if " pid " in ln]
        assert len(entries) == 1, log_text(root)
        assert "No space left" in log_text(root), log_text(root)
        filler.unlink()
        proc, _ = hook(root, s, tr)
        exact(root, s)
    finally:
        _try(["umount", str(sessions)])
    no_canary(root)


def test_no_network_and_no_secret_written(root: Path) -> None:
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed (.ci/setup.d installs it)")
    fs.write_config(root, '[notify]\nchannels = ["desktop", "terminal", "message"]\n')
    s, tr = session(root, "net", calls=60)  # long enough to fire alerts
    trace = root / "strace.out"
    argv = [strace, "-f", "-qq", "-e", "trace=connect,sendto,sendmsg,bind", "-o", str(trace),
            *fs.hook_argv("Stop")]
    outs = []
    # the async events queue the printed channels for the next prompt's hook, which prints them
    for event in ("SessionStart", "PostToolUse", "Stop", "UserPromptSubmit"):
        proc = subprocess.run([*argv[:-1], event], input=json.dumps(s.hook_payload(str(tr), event)).encode(),
                              capture_output=True, env=env_of(root), timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        outs.append(proc.stdout)
        text = trace.read_text()
        inet = [ln for ln in text.splitlines() if "AF_INET" in ln]
        assert not inet, inet
    assert any(outs), "the session must have fired an alert, so the notifier ran"
    no_canary(root)


def test_doctor_reports_quarantine_permissions_and_log_errors(root: Path) -> None:
    s, tr = session(root, "doc")
    hook(root, s, tr)
    code, out = doctor(root)
    assert "quarantine 0 files" in out, out
    assert "log        empty" in out, out
    assert "perms" not in out, out
    sf = state_file(s.session_id, fs.sw_home(root))
    sf.write_bytes(b"\x00garbage")
    hook(root, s, tr)
    exact(root, s)
    os.chmod(sf, 0o644)
    code, out = doctor(root)
    assert code == 1, out
    assert re.search(r"quarantine 1 file in .*quarantine", out), out
    assert "perms      1 state file readable by others" in out, out
    assert re.search(r"log        1 entry; last, [^:]* ago: .*quarantined", out), out
    no_canary(root)
