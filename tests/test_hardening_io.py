"""Hardening, round three (issue 28, classes 1-5 and 8), each rule checked by replaying its attack.

Every attack is real: FIFOs, sockets and a pseudo-terminal where our files or the user's belong, a
transcript path of 200 KB, tens of thousands of Reads of one file, megabytes of empty lines, counts
of 10**400, lone surrogates and newlines in ids and model names, symlinked and read-only settings,
a malformed bus address, a read-only and a full disk (real mounts, where the test may make them).
Nothing asserts a time: a hang shows as a subprocess that outlives a bound only a hang exceeds.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import fuzz_synth as fs
from tests.statefile import load_state, state_file

HANG = 60  # seconds: only a process blocked for good takes this long


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fs.isolate(tmp_path, monkeypatch)


def run(argv: list[str], root: Path, stdin: bytes = b"", cwd: Path | None = None, **env: str,
        ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=stdin, capture_output=True, env=fs.env_for(root, **env), cwd=cwd,
                          timeout=HANG, check=False)


def hook(root: Path, s: fs.SynthSession, tr: Path, event: str = "Stop", **env: str,
         ) -> subprocess.CompletedProcess[bytes]:
    proc = run(fs.hook_argv(event), root, json.dumps(s.hook_payload(str(tr), event)).encode(), **env)
    assert proc.returncode == 0
    assert proc.stderr == b""
    return proc


def cli(root: Path, *args: str, cwd: Path | None = None, **env: str) -> subprocess.CompletedProcess[bytes]:
    return run(fs.cli_argv(*args), root, cwd=cwd, **env)


def session(root: Path, sid: str, calls: int = 6) -> tuple[fs.SynthSession, Path]:
    s = fs.SynthSession(sid, fs.make_project(root), seed=11)
    tr = root / f"{sid}.jsonl"
    with open(tr, "wb") as fh:
        for _ in range(calls):
            fh.write(s.lines_of(s.next_call(reads=2)))
    return s, tr


def exact(root: Path, s: fs.SynthSession) -> dict[str, Any]:
    got = load_state(s.session_id, fs.sw_home(root))
    assert got["meter"]["main"] == s.token_usage()
    assert fs.reads_of(got) == dict(s.reads_per_path())
    return got


def log_text(root: Path) -> str:
    log = fs.sw_home(root) / "log" / "session-watcher.log"
    return log.read_text(errors="replace") if log.is_file() else ""


def quarantined(root: Path) -> list[str]:
    q = fs.sw_home(root) / "state" / "quarantine"
    return sorted(p.name for p in q.iterdir()) if q.is_dir() else []


def _mount(*argv: str) -> bool:
    return os.geteuid() == 0 and subprocess.run(["mount", *argv], capture_output=True, check=False).returncode == 0


# --------------------------------------------------------------- 1. only regular files, never a block


@pytest.fixture
def pty_path() -> Any:
    """A terminal device nobody types into: reading it blocks (the `/dev/tty` of the attack)."""
    master, slave = os.openpty()
    try:
        yield os.ttyname(slave)
    finally:
        os.close(master)
        os.close(slave)


@pytest.mark.parametrize("where", ["user-fifo", "project-fifo", "project-link-fifo", "project-link-tty", "cliff"])
def test_class1_a_fifo_or_terminal_as_config_blocks_nothing(root: Path, where: str, pty_path: str) -> None:
    """A FIFO (or a repository's symlink to one, or to a terminal) where a config file or cliff.json
    belongs: the hook, the status line, `config show` and `doctor` all finish, the hook's state is
    exact, and the file is named as not a regular file. Before: each blocked for good."""
    s, tr = session(root, "fifocfg")
    user_cfg = fs.sw_home(root) / "config" / "config.toml"
    project_cfg = Path(s.project) / ".claude" / "session-watcher.toml"
    project_cfg.parent.mkdir(parents=True)
    fifo = root / "a-fifo"
    os.mkfifo(fifo)
    target = {"user-fifo": user_cfg, "cliff": fs.sw_home(root) / "state" / "cliff.json"}.get(where, project_cfg)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.unlink(missing_ok=True)
    if where == "project-link-tty":
        target.symlink_to(pty_path)
    elif where == "project-link-fifo":
        target.symlink_to(fifo)
    else:
        os.mkfifo(target)
    hook(root, s, tr)
    exact(root, s)
    status = {"session_id": s.session_id, "transcript_path": str(tr), "cwd": s.project}
    line = run([*fs.cli_argv("statusline")], root, json.dumps(status).encode())
    assert line.returncode == 0
    assert b"error" not in line.stdout
    shown = cli(root, "config", "show", "--project", s.project)
    doctor = cli(root, "doctor", cwd=Path(s.project))
    for proc in (shown, doctor):
        assert b"Traceback" not in proc.stderr + proc.stdout
    if where != "cliff":
        assert shown.returncode == 1
        assert b"not a regular file" in shown.stderr
        assert b"not a regular file" in doctor.stdout
        assert "not a regular file" in log_text(root)


@pytest.mark.parametrize("kind", ["fifo", "socket"])
def test_class1_a_fifo_or_socket_as_the_state_file_is_quarantined(root: Path, kind: str) -> None:
    """`<sid>.json` (and its lock) a FIFO or a socket: moved to the quarantine like a symlink, the
    state rebuilt from the transcript; the prompt hook's lock-free look at it does not block either.
    Before: a FIFO blocked the hook holding the session lock; a socket failed every run, saving nothing."""
    s, tr = session(root, f"{kind}state")
    sessions = fs.sw_home(root) / "state" / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    main = state_file(s.session_id, fs.sw_home(root))
    socks = []
    for path in (main, Path(str(main) + ".lock")):
        if kind == "fifo":
            os.mkfifo(path)
        else:
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(str(path))
            socks.append(sock)
    try:
        proc = run(fs.hook_argv("UserPromptSubmit"), root,
                   json.dumps(s.hook_payload(str(tr), "UserPromptSubmit") | {"prompt": "go on"}).encode())
        assert proc.returncode == 0
        hook(root, s, tr)
    finally:
        for sock in socks:
            sock.close()
    assert stat.S_ISREG(main.lstat().st_mode)
    exact(root, s)
    assert any(name.startswith(f"{s.session_id}.json.") and name.endswith(f".{kind}") for name in quarantined(root))


def test_class1_a_fifo_as_a_path_map_shard_is_quarantined(root: Path) -> None:
    s, tr = session(root, "fifoshard")
    hook(root, s, tr)
    state = load_state(s.session_id, fs.sw_home(root))
    folder = fs.sw_home(root) / "state" / "sessions" / "fifoshard.paths"
    n, rev = next(iter(state["shards"].items()))
    shard = folder / f"{int(n):02d}-{rev}.json"
    shard.unlink()
    os.mkfifo(shard)
    status = cli(root, "status", "--session", s.session_id)  # `status` loads every shard
    assert status.returncode == 0, status.stderr
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call(reads=2)))
    hook(root, s, tr)
    exact(root, s)
    assert any(name.startswith(shard.name + ".") and name.endswith(".fifo") for name in quarantined(root))


def test_class1_a_fifo_as_the_log_blocks_nothing(root: Path) -> None:
    """The log a FIFO: a hook with something to log (a broken config) finishes and saves; `doctor`
    says what the log is. Before: the log's open for writing waited for a reader for good."""
    s, tr = session(root, "fifolog")
    (fs.sw_home(root) / "config" / "config.toml").write_text("bp_amber = [\n")
    log = fs.sw_home(root) / "log" / "session-watcher.log"
    log.parent.mkdir(parents=True, mode=0o700)
    os.mkfifo(log)
    hook(root, s, tr)
    exact(root, s)
    doctor = cli(root, "doctor")
    assert b"log        ERROR" in doctor.stdout
    assert b"not a regular file (a FIFO)" in doctor.stdout
    assert stat.S_ISFIFO(log.lstat().st_mode)  # left as it is: it is refused, never written through
