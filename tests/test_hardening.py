"""The hardening rules (issue 15), each checked by replaying the attack that broke it.

Every attack is real: symlinks planted where our files and folders belong, a second folder standing
in for another user's files (chowned to another uid when the test runs as root), a git repository
whose config runs a command, bytes that drive a terminal, sockets on 127.0.0.1. Each test asserts
that nothing outside our own folders was touched and that the watcher went on working.
"""

from __future__ import annotations

import http.client
import json
import os
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from bench.synth import Transcript
from session_watcher.base import config, sysos
from tests import fuzz_synth as fs
from tests import statefile
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

OTHER_UID = 54321  # stands in for another user's files when the test runs as root


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fs.isolate(tmp_path, monkeypatch)


def victim(root: Path) -> tuple[Path, dict[str, bytes]]:
    """A folder of someone else's files: what must survive every attack untouched."""
    folder = root / "victim"
    folder.mkdir(mode=0o755)
    files = {"keep.txt": b"precious\n", "01-5.json": b"not ours\n", "notes.md": b"# mine\n"}
    for name, data in files.items():
        (folder / name).write_bytes(data)
    if os.geteuid() == 0:
        for p in (folder, *folder.iterdir()):
            os.chown(p, OTHER_UID, OTHER_UID)
    return folder, files


def untouched(folder: Path, files: dict[str, bytes], mode: int = 0o755) -> None:
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)
    for name, data in files.items():
        assert (folder / name).read_bytes() == data
    assert stat.S_IMODE(folder.stat().st_mode) == mode


def hook(root: Path, s: fs.SynthSession, tr: Path, event: str = "Stop", **extra: Any
         ) -> subprocess.CompletedProcess[bytes]:
    payload = s.hook_payload(str(tr), event, **extra)
    proc = subprocess.run(fs.hook_argv(event), input=json.dumps(payload).encode(), capture_output=True,
                          env=fs.env_for(root), timeout=120, check=False)
    assert proc.returncode == 0
    assert proc.stdout in (b"",) or proc.stdout.startswith(b"{")
    assert proc.stderr == b""
    return proc


def cli(root: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(fs.cli_argv(*args), capture_output=True, text=True, env=fs.env_for(root),
                          timeout=120, check=False, cwd=cwd)


def sessions_dir(root: Path) -> Path:
    return statefile.sessions_dir(fs.sw_home(root))


def log_text(root: Path) -> str:
    log = root / "swhome" / "log" / "session-watcher.log"
    return log.read_text() if log.exists() else ""


def session(root: Path, sid: str, calls: int = 6) -> tuple[fs.SynthSession, Path]:
    return fs.write_session(root, sid, calls, 5, reads=2, folder=root)


def exact(root: Path, s: fs.SynthSession) -> None:
    got = load_state(s.session_id, fs.sw_home(root))
    assert got["meter"]["main"] == s.token_usage()
    assert fs.reads_of(got) == dict(s.reads_per_path())


# --------------------------------------------------------------- 1. links and foreign folders


def test_attack1_symlinked_shard_folder_deletes_nothing(root: Path) -> None:
    """`sessions/<sid>.paths` planted as a link to someone's folder: the sweep never lists or
    deletes through it; the link is moved to quarantine and the session goes on, exact."""
    folder, files = victim(root)
    s, tr = session(root, "shardlink")
    sessions_dir(root).mkdir(parents=True, mode=0o700)
    (sessions_dir(root) / "shardlink.paths").symlink_to(folder)
    for _ in range(3):
        hook(root, s, tr)
    untouched(folder, files)
    exact(root, s)
    shard_dir = sessions_dir(root) / "shardlink.paths"
    assert shard_dir.is_dir()
    assert not shard_dir.is_symlink()
    assert any(p.name.startswith("shardlink.paths.") for p in (root / "swhome" / "state" / "quarantine").iterdir())


def test_attack1_sweep_through_a_link_planted_after_the_save(root: Path) -> None:
    """The sweep itself, when the shard folder turns into a link between save and sweep."""
    from session_watcher.core import engine
    from session_watcher.state.pathstore import PathShards

    folder, files = victim(root)
    sessions_dir(root).mkdir(parents=True, mode=0o700)
    state = engine.new_state("sweeplink")
    shards = PathShards(str(sessions_dir(root) / "sweeplink.json"))
    (sessions_dir(root) / "sweeplink.paths").symlink_to(folder)
    shards.sweep(state)  # the state references no shard: everything in the folder would go
    untouched(folder, files)


@pytest.mark.parametrize("which", ["state/sessions", "state/quarantine", "log"])
def test_attack1_symlinked_folders_are_refused(root: Path, which: str) -> None:
    """`sessions/`, `quarantine/` or `log/` planted as a link: never written through, never
    chmod-ed; the hook stays silent and says why in the log (or, for the log itself, nowhere)."""
    folder, files = victim(root)
    s, tr = session(root, "dirlink")
    link = root / "swhome" / which
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(folder)
    if which == "state/quarantine":  # something to quarantine: a corrupt state file
        sessions_dir(root).mkdir(parents=True, mode=0o700)
        state_file(s.session_id, fs.sw_home(root)).write_bytes(b"{torn")
    for _ in range(2):
        hook(root, s, tr)
    untouched(folder, files)
    assert link.is_symlink()
    if which == "state/sessions":
        assert "refusing to use this folder: it is a symbolic link" in log_text(root)
        status = cli(root, "status", "--session", s.session_id)
        assert status.returncode == 1
        assert "refusing to use this folder" in status.stderr
        doctor = cli(root, "doctor")
        assert doctor.returncode == 1
        assert "sessions   ERROR" in doctor.stdout
        assert "it is a symbolic link" in doctor.stdout
        assert "locks      0 held now" in doctor.stdout
    if which == "log":
        exact(root, s)  # the log is refused, the session is not
    if which == "state/quarantine":
        assert "refusing to use this folder" in log_text(root)


def test_attack1_symlinked_cache_folder_is_refused_by_report(root: Path) -> None:
    folder, files = victim(root)
    (root / "swhome" / "cache").symlink_to(folder)
    t = Transcript(session_id="cachelink")
    t.call(cr=1000, cw=200)
    (root / "projects" / "p").mkdir(parents=True)
    t.save(root / "projects" / "p" / "cachelink.jsonl")
    got = cli(root, "report", "--projects", str(root / "projects"))
    assert got.returncode == 1
    assert "refusing to use this folder: it is a symbolic link" in got.stderr
    untouched(folder, files)


def test_attack1_another_users_sessions_folder_is_refused(root: Path) -> None:
    """A world-writable `sessions/` of another user in a shared SESSION_WATCHER_HOME: not used."""
    if os.geteuid() != 0:
        pytest.skip("needs root to make a folder owned by another uid")
    s, tr = session(root, "foreign")
    shared = sessions_dir(root)
    shared.mkdir(parents=True)
    os.chmod(shared, 0o777)
    os.chown(shared, OTHER_UID, OTHER_UID)
    hook(root, s, tr)
    assert list(shared.iterdir()) == []
    assert stat.S_IMODE(shared.stat().st_mode) == 0o777  # not chmod-ed either
    assert f"belongs to uid {OTHER_UID}, not to you" in log_text(root)


def test_attack9_symlinked_state_temp_file_does_not_jam(root: Path) -> None:
    """A link planted at `<sid>.json.tmp` (and at a shard's temp name) is replaced, never followed:
    the state saves, and the link's target keeps its bytes."""
    folder, files = victim(root)
    s, tr = session(root, "tmplink")
    sessions_dir(root).mkdir(parents=True, mode=0o700)
    (sessions_dir(root) / "tmplink.json.tmp").symlink_to(folder / "keep.txt")
    shard_dir = sessions_dir(root) / "tmplink.paths"
    shard_dir.mkdir(mode=0o700)
    from session_watcher.state.pathstore import shard_of

    for n in {shard_of(p) for p in s.paths}:
        (shard_dir / f"{n:02d}-1.json.tmp").symlink_to(folder / "notes.md")
    hook(root, s, tr)
    untouched(folder, files)
    exact(root, s)
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call(reads=1)))
    hook(root, s, tr)
    exact(root, s)


def test_attack4_html_out_through_a_planted_temp_link(root: Path) -> None:
    """`--html OUT` with `OUT.tmp` planted as a link: the link's target is untouched; OUT is 0600."""
    folder, files = victim(root)
    t = Transcript(session_id="htmlsess")
    t.call(cr=1000, cw=200)
    tr = t.save(root / "htmlsess.jsonl")
    out = root / "out"
    out.mkdir()
    (out / "page.html.tmp").symlink_to(folder / "keep.txt")
    (out / "report.html.tmp").symlink_to(folder / "notes.md")
    got = cli(root, "report", "session", str(tr), "--html", str(out / "page.html"))
    assert got.returncode == 0, got.stderr
    got = cli(root, "report", "--projects", str(root), "--html", str(out / "report.html"))
    assert got.returncode == 0, got.stderr
    (out / "trace.jsonl").symlink_to(folder / "01-5.json")  # a link at the output itself
    got = cli(root, "replay", str(tr), "--trace", str(out / "trace.jsonl"))
    assert got.returncode == 0, got.stderr
    untouched(folder, files)
    for name in ("page.html", "report.html"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o600
        assert "<html" in (out / name).read_text()
    assert not (out / "trace.jsonl").is_symlink()
    assert stat.S_IMODE((out / "trace.jsonl").stat().st_mode) == 0o600


def test_config_set_creates_private_folders(root: Path) -> None:
    (root / "swhome" / "config" / "config.toml").unlink()  # a new file is 0600 (an existing one keeps its mode)
    got = cli(root, "config", "set", "bp_amber", "0.12")
    assert got.returncode == 0, got.stderr
    assert stat.S_IMODE((root / "swhome" / "config").stat().st_mode) == 0o700
    assert stat.S_IMODE((root / "swhome" / "config" / "config.toml").stat().st_mode) == 0o600


# --------------------------------------------------------------- 2. git runs no repository command


def test_attack2_git_fsmonitor_never_runs(root: Path) -> None:
    """A repository whose config sets `core.fsmonitor` to a script: the hook's and `replay`'s
    `git check-ignore` never run it, and still classify ignored files."""
    proj = Path(fs.make_project(root))
    subprocess.run(["git", "init", "-q", str(proj)], check=True)
    marker = root / "fsmonitor-ran"
    script = root / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\n")
    script.chmod(0o755)
    subprocess.run(["git", "-C", str(proj), "config", "core.fsmonitor", str(script)], check=True)
    (proj / ".gitignore").write_text("src/mod1.py\n")
    # the attack works on a plain git call: the script runs
    subprocess.run(["git", "-C", str(proj), "check-ignore", "-q", "src/mod1.py"], check=False)
    assert marker.exists(), "git of this version does not run core.fsmonitor here: the test proves nothing"
    marker.unlink()
    s = fs.SynthSession("fsmon", str(proj), seed=3, files=3)
    tr = root / "fsmon.jsonl"
    with open(tr, "wb") as fh:
        for _ in range(6):
            fh.write(s.lines_of(s.next_call(reads=2)))
    hook(root, s, tr)
    got = cli(root, "replay", str(tr), "--json")
    assert got.returncode == 0, got.stderr
    assert not marker.exists()
    state = load_state(s.session_id, fs.sw_home(root))
    assert state["reasons"][str(proj / "src" / "mod1.py")] == "gitignore"  # git did answer
    assert state["reasons"][str(proj / "src" / "mod0.py")] is None


# --------------------------------------------------------------- 5. no control character reaches the terminal

EVIL = "\x1b]2;owned\x07\x1b[2J\x9b31m\u202e"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


def evil_transcript(root: Path) -> tuple[Transcript, Path]:
    proj = Path(fs.make_project(root))
    t = Transcript(session_id="evil", cwd=str(proj), model=f"claude-{EVIL}")
    t.read(str(proj / f"a{EVIL}.py"), "x = 1\n", cr=20_000, cw=500)
    t.call(cr=20_500, cw=300)
    (root / "projects" / "p").mkdir(parents=True, exist_ok=True)
    return t, t.save(root / "projects" / "p" / "evil.jsonl")


def no_raw_controls(text: str) -> None:
    for ch in RAW:
        assert ch not in text, repr(text[:400])


def test_attack5_terminal_escapes_are_escaped(root: Path) -> None:
    t, tr = evil_transcript(root)
    got = cli(root, "replay", str(tr))
    assert got.returncode == 0, got.stderr
    no_raw_controls(got.stdout)
    assert "\\x1b]2;owned\\x07" in got.stdout  # shown, not hidden
    # status: a hook records the session first
    payload = {"session_id": "evil", "transcript_path": str(tr), "cwd": t.cwd, "hook_event_name": "Stop"}
    subprocess.run(fs.hook_argv("Stop"), input=json.dumps(payload).encode(), env=fs.env_for(root),
                   capture_output=True, timeout=120, check=True)
    got = cli(root, "status", "--session", "evil")
    assert got.returncode == 0, got.stderr
    no_raw_controls(got.stdout)
    assert "\\x9b31m" in got.stdout
    # report session: the transcript's sessionId
    t2 = Transcript(session_id=f"sid{EVIL}", cwd=t.cwd)
    t2.call(cr=1000, cw=10)
    tr2 = t2.save(root / "sid.jsonl")
    got = cli(root, "report", "session", str(tr2), "--html", str(root / "sid.html"))
    assert got.returncode == 0, got.stderr
    no_raw_controls(got.stdout + got.stderr)
    # report: file and folder names
    evil_dir = root / "projects" / f"proj{EVIL}"
    evil_dir.mkdir(parents=True)
    (evil_dir / f"x{EVIL}.jsonl").write_bytes(tr.read_bytes())
    got = cli(root, "report", "--projects", str(root / "projects"))
    assert got.returncode == 0, got.stderr
    no_raw_controls(got.stdout + got.stderr)
    got = cli(root, "backtest", str(evil_dir / f"x{EVIL}.jsonl"))  # the session named after its file
    assert got.returncode == 0, got.stderr
    no_raw_controls(got.stdout)
    assert "\\x1b]" in got.stdout  # its short id (the report's) shown escaped, not obeyed
    no_raw_controls(got.stdout + got.stderr)
    # an error message naming a file
    got = cli(root, "replay", str(root / f"missing{EVIL}.jsonl"))
    assert got.returncode == 1
    no_raw_controls(got.stderr)


def test_clean_escapes_every_control_character() -> None:
    from session_watcher.core.text import clean

    for o in [*range(0x20), 0x7F, *range(0x80, 0xA0), 0x202E, 0x2066]:
        out = clean(f"a{chr(o)}b")
        if o == 0x0A:
            assert out == "a\nb"
        else:
            assert chr(o) not in out
            assert out.startswith("a\\")
            assert out.endswith("b")
    assert clean("plain ünïcode ✓") == "plain ünïcode ✓"


# --------------------------------------------------------------- 6. --serve


def _get(port: int, host: str, path: str = "/", timeout: float = 30) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Host": host})
        resp = conn.getresponse()
        return resp.status, resp.read() if not path.startswith("/events") or resp.status != 200 else b""
    finally:
        conn.close()


def small_transcript(root: Path, name: str = "serve") -> Path:
    t = Transcript(session_id=name)
    t.call(cr=1000, cw=200)
    t.read("/proj/a.py", "x = 1\n", cr=1200, cw=100)
    return t.save(root / f"{name}.jsonl")


def test_attack6_serve_refuses_foreign_hosts(root: Path) -> None:
    from session_watcher.reports.live_view import LiveView

    view = LiveView(str(small_transcript(root)))
    view.start()
    try:
        key = f"?token={view.token}"
        for host in (f"127.0.0.1:{view.port}", f"localhost:{view.port}", f"[::1]:{view.port}"):
            code, body = _get(view.port, host, "/" + key)
            assert code == 200
            assert b"<html" in body
        for host in (f"evil.example:{view.port}", "127.0.0.1", f"127.0.0.1:{view.port + 1}", ""):
            code, body = _get(view.port, host, "/" + key)
            assert code == 421, host
            assert b"a.py" not in body
            assert _get(view.port, host, "/events" + key)[0] == 421
    finally:
        view.close()


def test_attack6_serve_survives_50_idle_connections(root: Path) -> None:
    """50 connections that never send a request: threads stay bounded, the idle sockets are closed
    by the server, and a real page load gets through."""
    from session_watcher.reports.live_view import Limits, LiveView

    view = LiveView(str(small_transcript(root)), limits=Limits(connections=4, timeout=1.0, header_seconds=1.0))
    view.start()
    before = threading.active_count()
    idle = []
    try:
        for _ in range(50):
            idle.append(socket.create_connection(("127.0.0.1", view.port), timeout=30))
        peak = 0
        for _ in range(20):  # bounded: the server drops idle sockets after its 1 s timeout
            peak = max(peak, threading.active_count() - before)
            time.sleep(0.05)
        assert peak <= 4 + 1
        code, body = _get(view.port, f"127.0.0.1:{view.port}", f"/?token={view.token}")  # waits in the backlog
        assert code == 200
        assert b"<html" in body
        closed = 0
        for sock in idle:  # every idle socket was closed by the server (EOF), none left hanging
            try:
                closed += sock.recv(1) == b""
            except ConnectionResetError:
                closed += 1
        assert closed == 50
        assert threading.active_count() - before <= 4 + 1
    finally:
        for sock in idle:
            sock.close()
        view.close()


def test_attack6_serve_stops_when_idle_and_a_leaving_client_prints_nothing(root: Path) -> None:
    tr = small_transcript(root)
    code = "import sys; from session_watcher.cli import main; sys.exit(main(['report', 'session', *sys.argv[1:]]))"
    proc = subprocess.Popen([sys.executable, "-c", code, str(tr), "--serve", "--idle-minutes", "0.02"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(fs.REPO),
                            env=fs.env_for(root))
    assert proc.stdout is not None
    line = proc.stdout.readline()
    port = int(line.split("127.0.0.1:")[1].split("/")[0])
    for path in ("/events", "/"):  # connect, ask, and leave without reading the answer
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        sock.close()  # RST
    out, err = proc.communicate(timeout=120)  # it stops by itself: no page open for 1.2 s
    assert proc.returncode == 0
    assert "Traceback" not in err, err
    assert err == ""
    assert "stopped: no page open" in out


# --------------------------------------------------------------- 7. one bad usage value


@pytest.mark.parametrize("bad", ['"abc"', "NaN", "1e400", "[1]", "-5", "Infinity", "true"])
def test_attack7_bad_usage_value_page_still_renders(root: Path, bad: str) -> None:
    t = Transcript(session_id="badusage")
    t.call(cr=1000, cw=200)
    t.call(cr=1200, cw=100)
    text = t.text().replace('"input_tokens":1,', f'"input_tokens":{bad},', 1)
    text = text.replace('"preTokens":0', f'"preTokens":{bad}')
    tr = root / "badusage.jsonl"
    tr.write_text(text)
    out = root / "bad.html"
    got = cli(root, "report", "session", str(tr), "--html", str(out))
    assert got.returncode == 0, got.stderr
    page = out.read_text()
    assert "badusage" in page
    from session_watcher.reports.live_view import LiveView

    view = LiveView(str(tr))
    view.start()
    try:
        code, body = _get(view.port, f"127.0.0.1:{view.port}", f"/?token={view.token}")
        assert code == 200
        assert b"badusage" in body
    finally:
        view.close()


# --------------------------------------------------------------- 3. config files


def user_config(root: Path) -> Path:
    return root / "swhome" / "config" / "config.toml"


@pytest.mark.parametrize(("text", "key"), [
    ("cRatio = inf\n", "cRatio"),
    ("cRatio = 1e-320\n", "cRatio"),
    ("cRatio = nan\n", "cRatio"),
    ("bp_amber = inf\n", "bp_amber"),
    ("backstop_base = inf\n", "backstop_base"),
    ("notify_dwell = 99999999999999999\n", "notify_dwell"),
])
def test_attack3_config_values_that_killed_every_hook(root: Path, text: str, key: str) -> None:
    """Out-of-range values: `config set` refuses them naming the key and the range; written into
    the file by hand, the hooks leave the file out (one log line) and keep saving exact state."""
    value = text.split("= ", 1)[1].strip()
    got = cli(root, "config", "set", key, value)
    assert got.returncode == 2  # the command line's value (exit 2, as every command's)
    assert f"key '{key}'" in got.stderr
    assert "from " in got.stderr  # the allowed range
    user_config(root).write_text(text)
    s, tr = session(root, "badvalue")
    for _ in range(2):
        hook(root, s, tr)
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call(reads=1)))
    hook(root, s, tr)
    exact(root, s)
    entries = [ln for ln in log_text(root).splitlines() if " pid " in ln]
    assert len(entries) == 1, log_text(root)
    assert f"'{key}'" in entries[0]


@pytest.mark.parametrize("kind", ["binary", "deep-arrays", "deep-tables"])
def test_attack3_broken_config_file_falls_back_and_the_cli_repairs_it(root: Path, kind: str) -> None:
    data = {"binary": bytes(range(256)) * 8,
            "deep-arrays": b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n",
            "deep-tables": b"x = " + b"{a = " * 5000 + b"1" + b"}" * 5000 + b"\n"}[kind]
    user_config(root).write_bytes(data)
    s, tr = session(root, "brokencfg")
    for _ in range(2):
        hook(root, s, tr)
    exact(root, s)
    entries = [ln for ln in log_text(root).splitlines() if " pid " in ln]
    assert len(entries) == 1, log_text(root)
    assert str(user_config(root)) in entries[0]
    doctor = cli(root, "doctor")
    assert "config     ERROR" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "internal error" not in doctor.stderr
    shown = cli(root, "config", "show", "--json")
    assert shown.returncode == 1
    assert json.loads(shown.stdout)["effective"]["bp_amber"] == config.DEFAULTS["bp_amber"]  # the defaults, shown
    assert "internal error" not in shown.stderr
    refused = cli(root, "config", "set", "bp_amber", "0.5")  # above the default bp_red: not set
    assert refused.returncode == 2, refused.stderr
    assert user_config(root).read_bytes() == data  # left where it is (it was moved aside, nothing written)
    assert not list(user_config(root).parent.glob("config.toml.broken-*"))
    fixed = cli(root, "config", "set", "bp_amber", "0.12")
    assert fixed.returncode == 0, fixed.stderr
    assert "moved to" in fixed.stderr
    kept = list(user_config(root).parent.glob("config.toml.broken-*"))
    assert len(kept) == 1
    assert kept[0].read_bytes() == data  # the user's bytes are kept, not lost
    shown = cli(root, "config", "show", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["effective"]["bp_amber"] == 0.12


def test_attack3_merged_values_are_checked_together(root: Path) -> None:
    user_config(root).write_text("bp_amber = 0.3\nbp_red = 0.5\n")
    proj = Path(fs.make_project(root))
    (proj / ".claude").mkdir()
    pf = proj / ".claude" / "session-watcher.toml"
    pf.write_text("bp_red = 0.1\n")  # fine alone, below the user's amber together
    shown = cli(root, "config", "show", "--json", "--project", str(proj))
    assert shown.returncode == 1
    assert str(pf) in shown.stderr
    assert "bp_red" in shown.stderr
    eff = json.loads(shown.stdout)["effective"]
    assert (eff["bp_amber"], eff["bp_red"]) == (0.3, 0.5)


@pytest.mark.parametrize("folder", [".claude", ".codex"])
def test_attack3_hostile_project_file_cannot_silence_the_watcher(root: Path, folder: str) -> None:
    """A repository's `.claude/session-watcher.toml` (or `.codex/`'s, read the same way for either
    agent) may not change how the user is alerted."""
    s, tr = session(root, "hostileproj")
    proj = Path(s.project)
    (proj / folder).mkdir()
    pf = proj / folder / "session-watcher.toml"
    pf.write_text('bp_amber = 0.2\nguard = "off"\n[notify]\nchannels = []\nfallback = "none"\n')
    hook(root, s, tr)
    state = load_state(s.session_id, fs.sw_home(root))
    notify = state["config"]["values"]["notify"]
    assert (notify["channels"], notify["fallback"]) == (["message"], "none")  # the user's
    assert state["config"]["values"]["guard"] == "ask"
    assert state["config"]["values"]["bp_amber"] == 0.2  # the project's own key still applies
    assert "'guard', 'notify' may only be set in your own config" in log_text(root)
    got = cli(root, "config", "set", "--project", str(proj), "notify.channels", "[]")
    assert got.returncode == 2
    assert "may only be set in your own config" in got.stderr
    pf.unlink()
    got = cli(root, "config", "set", "--project", str(proj), "exclude", '["docs/*"]')  # the project's own
    assert got.returncode == 0, got.stderr


# --------------------------------------------------------------- 8. every budget checked in every loop


def test_attack8_huge_newline_free_transcript_costs_one_bounded_read(root: Path, monkeypatch: pytest.MonkeyPatch
                                                                     ) -> None:
    """A sparse 4 GiB transcript without a newline: the fold's deadline is honoured inside the skip
    (an instrumented clock that ticks 0.1 s per look, an instrumented pread that counts bytes)."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import reader
    from session_watcher.state import session as sessmod

    big = root / "big.jsonl"
    with open(big, "wb") as fh:
        fh.truncate(4 << 30)
    got = [0]
    real_pread = os.pread

    class CountingOs:
        def __getattr__(self, name: str) -> Any:
            return getattr(sysos, name)

        def pread(self, fd: int, n: int, offset: int) -> bytes:
            data = real_pread(fd, n, offset)
            got[0] += len(data)
            return data

    class Clock:
        now = 0.0

        def monotonic(self) -> float:
            self.now += 0.1
            return self.now

    monkeypatch.setattr(reader, "sysos", CountingOs())  # the hooks' calls: base/sysos.py
    monkeypatch.setattr(sessmod, "time", Clock())
    state = engine.new_state("big")
    state, _, done = sessmod.sync(state, str(big), config.merge(), deadline=0.45)
    assert not done
    looks = 5  # the clock passes 0.45 s on its fifth look
    assert got[0] <= looks * 2 * reader.CHUNK + looks * 4 * reader.TAIL_BYTES
    assert state["cursor"] is not None
    first = state["cursor"]["skip"]
    assert reader.CHUNK < first <= looks * 2 * reader.CHUNK
    state, _, done = sessmod.sync(state, str(big), config.merge(), deadline=Clock.now + 0.45)
    assert state["cursor"] is not None
    assert state["cursor"]["skip"] > first  # the next run goes on from there, never from the start
    assert state["cursor"]["offset"] == 0


def test_attack8_hook_on_a_huge_transcript_saves_and_moves_on(root: Path) -> None:
    """The real hook on a 4 GiB sparse transcript exits and saves how far it skipped; past a 40 MiB
    line the lines after it are folded exactly and the long line is counted as bad."""
    s = fs.SynthSession("hugeline", fs.make_project(root), seed=8)
    big = root / "hugeline.jsonl"
    with open(big, "wb") as fh:
        fh.truncate(4 << 30)
    hook(root, s, big)
    cur = load_state(s.session_id, fs.sw_home(root))["cursor"]
    assert cur["offset"] == 0
    assert cur["skip"] > 0
    tr = root / "long.jsonl"
    with open(tr, "wb") as fh:
        fh.truncate(40 << 20)
        fh.seek(0, 2)
        fh.write(b"\n")
        for _ in range(4):
            fh.write(s.lines_of(s.next_call(reads=1)))
    for _ in range(40):  # each run skips a bounded stretch; a few runs reach the lines after it
        hook(root, s, tr)
        state = load_state(s.session_id, fs.sw_home(root))
        if state["cursor"]["offset"] == tr.stat().st_size:
            break
    assert state["meter"]["main"] == s.token_usage()
    assert state["bad"] == 1


# --------------------------------------------------------------- 10. an in-place rewrite that keeps line 1


def test_attack10_in_place_rewrite_keeping_the_first_line_is_noticed(root: Path) -> None:
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session as sessmod

    s, tr = session(root, "rewrite", calls=10)
    hook(root, s, tr)
    first_line = tr.read_bytes().split(b"\n", 1)[0] + b"\n"
    other = fs.SynthSession("rewrite", s.project, seed=99)
    other.next_call()
    body = b"".join(other.lines_of(other.next_call(reads=1)) for _ in range(20))
    ino = tr.stat().st_ino
    with open(tr, "r+b") as fh:  # same inode, same first line, other calls after it
        fh.write(first_line + body)
    assert tr.stat().st_ino == ino
    hook(root, s, tr)
    got = load_state(s.session_id, fs.sw_home(root))
    fresh = engine.new_state("rewrite")
    fresh["context"]["cwd"] = fresh["context"]["project"] = s.project
    fresh, _, done = sessmod.sync(fresh, str(tr), config.merge(), time.monotonic() + 600)
    assert done
    assert got["meter"]["main"] == fresh["meter"]["main"]
    assert got["meter"]["main"]["calls"] == 21


# --------------------------------------------------------------- 11. a killed first plugin install


def _plugin_root(root: Path) -> Path:
    """A plugin folder with the real hooks/run.sh and a hooks/venv.sh that records each run."""
    plugin = root / "plugin"
    (plugin / "hooks").mkdir(parents=True)
    (plugin / "hooks" / "run.sh").write_bytes((fs.REPO / "session_watcher" / "hooks" / "run.sh").read_bytes())
    (plugin / "hooks" / "venv.sh").write_text('#!/bin/sh\necho "$1 $2" >> "$2/install-runs"\n')
    return plugin


def _run_sh(root: Path, plugin: Path, data: Path) -> None:
    env = {**fs.env_for(root), "CLAUDE_PLUGIN_ROOT": str(plugin), "CLAUDE_PLUGIN_DATA": str(data)}
    proc = subprocess.run(["sh", str(plugin / "hooks" / "run.sh"), "Stop"], input=b"{}", env=env,
                          capture_output=True, timeout=60, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, b"", b"")


def _installed(data: Path) -> bool:
    for _ in range(600):  # bounded: the stub install takes a moment in the background
        if (data / "install-runs").exists() and not (data / ".installing").exists():
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", ["pid-gone", "old-without-pid"])
def test_attack11_killed_first_plugin_install_is_retried(root: Path, how: str) -> None:
    plugin = _plugin_root(root)
    data = root / "plugin-data"
    marker = data / ".installing"
    marker.mkdir(parents=True)
    if how == "pid-gone":
        gone = subprocess.Popen(["true"])
        gone.wait()
        (marker / "pid").write_text(f"{gone.pid}\n")
    else:  # killed before it could even write its pid
        old = time.time() - 20 * 60
        os.utime(marker, (old, old))
    _run_sh(root, plugin, data)
    assert _installed(data)
    assert (data / "install-runs").read_text() == f"{plugin} {data}\n"


def test_attack11_a_running_install_is_left_alone(root: Path) -> None:
    plugin = _plugin_root(root)
    data = root / "plugin-data"
    marker = data / ".installing"
    marker.mkdir(parents=True)
    (marker / "pid").write_text(f"{os.getpid()}\n")  # alive
    _run_sh(root, plugin, data)
    assert (marker / "pid").read_text() == f"{os.getpid()}\n"  # not removed, not started again
    assert not (data / "install-runs").exists()
    marker.joinpath("pid").unlink()
    marker.rmdir()
    _run_sh(root, plugin, data)  # a first run installs
    assert _installed(data)


# --------------------------------------------------------------- smaller items


def _mount(*argv: str) -> bool:
    return os.geteuid() == 0 and subprocess.run(["mount", *argv], capture_output=True, check=False).returncode == 0


def test_status_on_a_read_only_disk_shows_the_saved_state(root: Path) -> None:
    s, tr = session(root, "rostatus")
    hook(root, s, tr)
    state_dir = root / "swhome" / "state"
    if not _mount("--bind", str(state_dir), str(state_dir)):
        pytest.skip("no bind mount here")
    try:
        assert _mount("-o", "remount,ro,bind", str(state_dir))
        got = cli(root, "status", "--session", s.session_id)
        assert got.returncode == 0, got.stderr
        assert f"session  {s.session_id}" in got.stdout
        assert f"calls {len(s.calls)}" in got.stdout
        assert "showing the state as last saved" in got.stderr
    finally:
        subprocess.run(["umount", str(state_dir)], check=True)


def test_a_full_disk_error_names_no_empty_file(root: Path) -> None:
    folder = root / "swhome" / "config"
    folder.mkdir(parents=True, mode=0o700, exist_ok=True)
    (folder / "config.toml").unlink()
    if not _mount("-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", str(folder)):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        fs.fill_up(folder / "filler")
        got = cli(root, "config", "set", "exclude", json.dumps(["x" * 100] * 80))  # 8,000 characters: allowed
        assert got.returncode == 1
        assert got.stderr == "session-watcher: No space left on device\n"
        assert not list(folder.glob("*.tmp"))
    finally:
        subprocess.run(["umount", str(folder)], check=True)


def test_lock_error_that_is_not_contention_is_not_taken_for_it(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """flock failing with ENOLCK (a file system without locks) is an error, not a busy lock to wait
    for; EWOULDBLOCK is contention."""
    import errno

    from session_watcher.core.errors import LockTimeout
    from session_watcher.state import lock

    def flock(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr("session_watcher.state.lock.fcntl.flock", flock)
    with pytest.raises(OSError, match="No locks available"), lock.SessionLock(str(tmp_path / "a.lock"), 0):
        pass
    held = lock.SessionLock(str(tmp_path / "b.lock"), 0)
    monkeypatch.undo()
    import fcntl

    fd = os.open(tmp_path / "b.lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(LockTimeout), held:
            pass
    finally:
        os.close(fd)


def test_attack8_the_budget_holds_across_many_subagent_files(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the deadline no further transcript is opened, however many subagent files are new."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session as sessmod

    s = fs.SynthSession("manysubs", fs.make_project(root), seed=4)
    subs = []
    for k in range(50):
        sub = root / f"agent-{k}.jsonl"
        sub.write_bytes(s.lines_of(s.next_call(reads=1)))
        subs.append(str(sub))

    class Clock:
        now = 0.0

        def monotonic(self) -> float:
            self.now += 0.1
            return self.now

    monkeypatch.setattr(sessmod, "time", Clock())
    state = engine.new_state("manysubs")
    state, _, done = sessmod.sync(state, None, config.merge(), deadline=0.45, subagents=subs)
    assert not done
    assert 0 < len(state["subCursors"]) < 10  # a few files within the budget, then it stopped


@pytest.mark.parametrize("order", ["2.1.39", "2.1.332"])
def test_a_line_over_8_mib_keeps_its_usage(root: Path, order: str) -> None:
    """An API call whose line is over 8 MiB (a huge text block) still counts its usage, as ccusage
    counts it; the line is reported in `bad`. Key order as each client writes its records."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import reader
    from session_watcher.state import session as sessmod

    def build(big: bool) -> Path:
        t = Transcript(session_id="bigline")
        t.call(cr=20_000, cw=1_000)
        t.call(cr=21_000, cw=700, out=55, tools=[{"type": "text", "text": "x" * ((9 << 20) if big else 10)}])
        t.call(cr=21_700, cw=300)
        if order == "2.1.332":  # the message first, the record's own keys after it
            for rec in t.records:
                msg = rec.pop("message")
                rest = dict(rec)
                rec.clear()
                rec.update({"parentUuid": None, "isSidechain": False, "message": msg, **rest})
        return t.save(root / f"bigline-{big}.jsonl")

    got = {}
    for big in (False, True):
        state = engine.new_state("bigline")
        state, _, done = sessmod.sync(state, str(build(big)), config.merge(), time.monotonic() + 600)
        assert done
        got[big] = state
    assert (root / "bigline-True.jsonl").stat().st_size > reader.CHUNK
    assert got[True]["meter"]["main"] == got[False]["meter"]["main"]
    assert got[True]["meter"]["main"]["calls"] == 3
    assert (got[False]["bad"], got[True]["bad"]) == (0, 1)
