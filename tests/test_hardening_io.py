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
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.synth import Transcript
from tests import fuzz_synth as fs
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

HANG = 60  # seconds: only a process blocked for good takes this long


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return fs.isolate(tmp_path, monkeypatch)


def run(argv: list[str], root: Path, stdin: bytes = b"", cwd: Path | str | None = None, **env: str,
        ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(argv, input=stdin, capture_output=True, env=fs.env_for(root, **env), cwd=cwd,
                          timeout=HANG, check=False)


def stop(root: Path, payload: dict[str, Any], silent: bool = False, **env: str) -> subprocess.CompletedProcess[bytes]:
    """Stop hooks until one has read the transcript to its last line and delivered (a run folds for
    FOLD_BUDGET and leaves the rest, and its alerts, to the next: on a busy machine one may not get there); the
    last run's process. Every run exits 0 (and, `silent`, prints nothing on either stream)."""
    data = Path(payload["transcript_path"]).read_bytes()
    end = data.rfind(b"\n") + 1
    for _ in range(20):
        proc = run(fs.hook_argv("Stop"), root, json.dumps(payload).encode(), **env)
        assert proc.returncode == 0
        assert not silent or (proc.stdout, proc.stderr) == (b"", b"")
        main = state_file(payload["session_id"], fs.sw_home(root))
        if not main.exists():
            return proc  # nothing saved where the tests look (a home given otherwise): the test says what
        state = load_state(payload["session_id"], fs.sw_home(root))
        cursor = state.get("cursor") or {}
        if cursor.get("offset", 0) >= end and not any(a.get("pending") for a in state.get("alerts") or []):
            return proc  # a run caught up: none of the fold's alerts waits for the next to deliver
    raise AssertionError("the Stop hooks never caught up with the transcript")


def hook(root: Path, s: fs.SynthSession, tr: Path, event: str = "Stop", **env: str,
         ) -> subprocess.CompletedProcess[bytes]:
    proc = run(fs.hook_argv(event), root, json.dumps(s.hook_payload(str(tr), event)).encode(), **env)
    assert proc.returncode == 0
    assert proc.stderr == b""
    return proc


def cli(root: Path, *args: str, cwd: Path | str | None = None, **env: str) -> subprocess.CompletedProcess[bytes]:
    return run(fs.cli_argv(*args), root, b"", cwd, **env)


def session(root: Path, sid: str, calls: int = 6) -> tuple[fs.SynthSession, Path]:
    return fs.write_session(root, sid, calls, 11, reads=2, folder=root)


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
    line = run(fs.statusline_argv(), root, json.dumps(status).encode())
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
def test_class1_a_fifo_or_socket_as_the_state_file_is_quarantined(root: Path, kind: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
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
            socks.append(sock)
            monkeypatch.chdir(path.parent)  # bound by its name: a socket's path has at most 107 bytes
            sock.bind(path.name)
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


# --------------------------------------------------------------- 2. every input bounded before it costs


def _read_lines(path: str, tid: str, ts: str, start: int = 1, content: str = "x = 1\n") -> list[dict[str, Any]]:
    """An assistant line asking for a Read of `path` and the user line with its result."""
    use = {"type": "assistant", "timestamp": ts, "isSidechain": False, "sessionId": "s", "uuid": f"a{tid}",
           "message": {"id": f"msg_{tid}", "model": "claude-opus-4-6", "role": "assistant",
                       "content": [{"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": path}}],
                       "usage": {"input_tokens": 1, "cache_read_input_tokens": 1000, "output_tokens": 1}},
           "requestId": f"req_{tid}"}
    result = {"type": "user", "timestamp": ts, "isSidechain": False, "sessionId": "s", "uuid": f"u{tid}",
              "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": tid, "content": "x"}]},
              "toolUseResult": {"type": "text", "file": {"filePath": path, "content": content, "startLine": start,
                                                         "numLines": 1, "totalLines": 40000}}}
    return [use, result]


def test_class2_an_enormous_path_names_no_file(root: Path) -> None:
    """A 200 KB `file_path` in a transcript, and as the payload's `cwd`: no path (a path has at most
    4096 characters and 256 components), so `realpath`, quadratic in it, never sees it; the session's
    other files are counted. Before: it entered the path map (800 KB took 24-37 s a run)."""
    s, tr = session(root, "longpath")
    huge = "/" + "a/" * 100_000 + "x.py"
    with open(tr, "ab") as fh:
        for rec in _read_lines(huge, "toolu_huge", "2026-02-02T03:00:00.000Z"):
            fh.write(json.dumps(rec).encode() + b"\n")
    payload = s.hook_payload(str(tr), "Stop") | {"cwd": "/" + "b/" * 100_000}
    stop(root, payload)
    state = load_state(s.session_id, fs.sw_home(root))
    assert not [p for p in state["paths"] if len(p) > 4096]
    assert fs.reads_of(state) == dict(s.reads_per_path())
    assert state["context"]["cwd"] is None or len(state["context"]["cwd"]) < 4096
    got = cli(root, "replay", str(tr), "--json")
    assert got.returncode == 0, got.stderr


def test_class2_twenty_thousand_one_line_reads_of_one_file(root: Path) -> None:
    """Reads of one file a line at a time, every other line (a range each before): 5,000 through a
    real transcript's fold, 20,000 through the range merge itself. Each new line is counted once, the
    file's ranges stay bounded (the nearest join past MAX_RANGES), and a Read of lines already seen
    adds nothing. Before: the range merge was quadratic (20,000: 28 s in the probe, 52.8 s here)."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.core import paths as pathmap
    from session_watcher.state import session as sessmod

    tr = root / "ranges.jsonl"
    path = os.path.join(fs.make_project(root), "big.py")
    with open(tr, "wb") as fh:
        for k in range(5_000):
            for rec in _read_lines(path, f"toolu_{k:05d}", "2026-02-02T03:00:00.000Z", 2 * k + 1, f"l{k}\n"):
                fh.write(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
    state = engine.new_state("ranges")
    state["context"]["cwd"] = state["context"]["project"] = fs.make_project(root)
    state, _, done = sessmod.sync(state, str(tr), config.merge(), float("inf"))
    assert done
    entry = state["paths"][os.path.realpath(path)]
    assert entry["reads"] == 5_000
    assert len(entry["ranges"]) <= pathmap.MAX_RANGES
    ranges = entry["ranges"]
    assert all(a < b for a, b in ranges)
    assert all(ranges[i][1] < ranges[i + 1][0] for i in range(len(ranges) - 1))
    assert ranges[0][0] == 1
    assert ranges[-1][1] == 10_000  # every line read is inside a range
    # the brute-force count of distinct lines: every Read read a new one
    fresh = pathmap.new_entry(None)
    per_line = [pathmap.add_lines(fresh, 2 * k + 1, f"l{k}\n") for k in range(20_000)]
    assert per_line == [len(f"l{k}") + pathmap.LINE_PREFIX_CHARS + 1 for k in range(20_000)]
    assert pathmap.add_lines(fresh, 39_999, "again\n") == 0  # seen: nothing new


def test_class2_megabytes_of_empty_lines_are_folded_in_bounded_steps(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     ) -> None:
    """4 MiB of empty lines before the calls: a read hands the fold a bounded number of lines, so
    the deadline is looked at long before a chunk's 8M lines are parsed (a clock that passes the
    deadline at its first look: one read only); without a deadline the calls after them are exact.
    Before: one read took a whole 8 MiB chunk, seconds of parsing, whatever the budget."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import session as sessmod

    s = fs.SynthSession("blank", fs.make_project(root), seed=3)
    tr = root / "blank.jsonl"
    with open(tr, "wb") as fh:
        fh.write(b"\n" * (4 << 20))
        for _ in range(3):
            fh.write(s.lines_of(s.next_call(reads=1)))

    class Clock:
        now = 0.0

        def monotonic(self) -> float:
            self.now += 1.0
            return self.now

    with monkeypatch.context() as m:
        m.setattr(sessmod, "time", Clock())
        state = engine.new_state("blank")
        state, _, done = sessmod.sync(state, str(tr), config.merge(), deadline=0.5)
    assert not done
    assert state["cursor"] is not None
    assert 0 < state["cursor"]["offset"] <= 1 << 20
    state["context"]["cwd"] = state["context"]["project"] = s.project
    state, _, done = sessmod.sync(state, str(tr), config.merge(), float("inf"))
    assert done
    assert state["meter"]["main"] == s.token_usage()
    assert state["bad"] == 0


def test_class2_an_absurd_count_is_a_bad_value_not_a_dead_session(root: Path) -> None:
    """A usage count of 10**400 (and one just past the bound): read as 0, like a negative one, in
    the hooks, `replay`, `status`, `backtest`, `report` and the page, which all agree. Before:
    OverflowError in every hook and in eight commands, for good."""
    t = Transcript(session_id="bigcount", cwd=fs.make_project(root))
    t.call(cr=1000, cw=100)
    t.call(cr=10**400, cw=50)
    t.call(cr=1200, cw=60, out=10**9 + 1)
    t.read(os.path.join(t.cwd, "a.py"), "x = 1\n", cr=1300, cw=70)
    tr = t.save(root / "projects" / "p" / "bigcount.jsonl")
    payload = {"session_id": "bigcount", "transcript_path": str(tr), "cwd": t.cwd, "hook_event_name": "Stop"}
    assert stop(root, payload).returncode == 0
    meter = load_state("bigcount", fs.sw_home(root))["meter"]["main"]
    assert (meter["calls"], meter["cacheRead"], meter["output"]) == (4, 1000 + 1200 + 1300, 10 + 10 + 10)
    replay = cli(root, "replay", str(tr), "--json")
    report = cli(root, "report", "--json", "--projects", str(root / "projects"))
    for proc in (replay, report, cli(root, "status", "--session", "bigcount"), cli(root, "backtest", str(tr)),
                 cli(root, "report", "session", str(tr), "--html", str(root / "p.html"))):
        assert proc.returncode == 0, proc.stderr
    assert json.loads(replay.stdout)["tokenUsage"] == meter
    row = json.loads(report.stdout)["sessions"][0]
    assert (row["apiCalls"], row["tokens"]["cacheRead"], row["tokens"]["output"]) == (4, 3500, 30)


def test_class2_long_globs_are_refused_and_never_copied_into_states(root: Path) -> None:
    """250 globs of 4 KB in a project's file: refused as a whole (named in the log), the state stays
    small, and the inclusion the state remembers is a digest, not the text. Before: accepted, copied
    into every state twice, and 3.4-4.8 s of glob compiling a hook run."""
    s, tr = session(root, "globs")
    pf = Path(s.project) / ".claude" / "session-watcher.toml"
    pf.parent.mkdir(parents=True)
    pf.write_text("exclude = [" + ",".join(json.dumps("*" + "a*" * 2000 + str(k)) for k in range(250)) + "]\n")
    hook(root, s, tr)
    exact(root, s)
    assert "key 'exclude': expected a list of glob strings" in log_text(root)
    main = state_file(s.session_id, fs.sw_home(root))
    assert main.stat().st_size < 64 << 10
    state = load_state(s.session_id, fs.sw_home(root))
    assert isinstance(state["engine"]["globs"], str)
    assert len(state["engine"]["globs"]) <= 16
    pf.write_text('exclude = ["src/mod0.py", "*.md"]\ninclude = ["docs/**"]\n')  # a real one still works
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call(reads=1)))
    hook(root, s, tr)
    state = load_state(s.session_id, fs.sw_home(root))
    assert state["paths"]
    assert all(e["include"] == (not p.endswith("/src/mod0.py")) for p, e in state["paths"].items())


def test_class2_globs_match_as_fnmatchcase_does() -> None:
    """The joined, compiled-once pattern of a list decides as fnmatchcase over the list does."""
    import random
    from fnmatch import fnmatchcase

    from session_watcher.core import paths as pathmap

    rng = random.Random(28)
    alphabet = "ab/*?[]!.-"
    for _ in range(400):
        globs = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(1, 4))]
        subject = "".join(rng.choice("ab/.-") for _ in range(rng.randint(0, 8)))
        matcher = pathmap._matcher(globs)
        assert matcher is not None
        assert bool(matcher(subject)) == any(fnmatchcase(subject, g) for g in globs), (globs, subject)
        assert pathmap._matcher(list(globs)) is matcher  # compiled once


# --------------------------------------------------------------- 3. one size limit for saving and loading


def test_class3_ids_no_state_keeps_are_bad_events(root: Path) -> None:
    """Calls whose message ids are 1 MB: skipped as bad events, so the state the meter makes stays
    small; the other calls count. Before: the meter kept them (2 MB ids made a state over the load
    limit, saved, then quarantined and rebuilt on every run)."""
    s, tr = session(root, "longids", calls=3)
    t = Transcript(session_id="longids", cwd=s.project)
    for k in range(5):
        t.call(cr=1000 + k, cw=10, mid="m" * (1 << 20) + str(k))
    with open(tr, "ab") as fh:
        fh.write(t.text().encode())
    hook(root, s, tr)
    exact(root, s)
    assert state_file(s.session_id, fs.sw_home(root)).stat().st_size < 256 << 10


def test_class3_a_state_over_the_load_limit_is_never_saved(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`save` refuses what `load` would refuse (the same limit): nothing is written, the last good
    state stays; a file over it is quarantined once. Before: saved, then quarantined on every run."""
    from session_watcher.core import engine
    from session_watcher.core.errors import StateRejected, StateTooLarge
    from session_watcher.state import store

    monkeypatch.setattr(store, "MAX_STATE_BYTES", 16 << 10)
    sessions = fs.sw_home(root) / "state" / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    path = str(sessions / "big.json")
    state = engine.new_state("big")
    store.save(path, state)
    before = Path(path).read_bytes()
    # padding past the limit, not alerts
    state["alerts"] = [{"kind": "gate", "pad": "x" * 1000} for _ in range(20)]  # type: ignore[typeddict-item, typeddict-unknown-key]
    with pytest.raises(StateTooLarge):
        store.save(path, state)
    assert Path(path).read_bytes() == before
    Path(path).write_bytes(b" " * (17 << 10) + before)  # over the limit, written by something else
    with pytest.raises(StateRejected):
        store.load(path, "big")
    assert not Path(path).exists()
    assert [n for n in quarantined(root) if n.endswith(".too-large")]


def test_class3_the_quarantine_is_pruned(root: Path) -> None:
    """Every quarantine keeps the newest 16 entries (and 256 MiB at most). Before: never pruned."""
    from session_watcher.base import paths

    q = fs.sw_home(root) / "state" / "quarantine"
    q.mkdir(parents=True, mode=0o700)
    for k in range(40):
        (q / f"old-{k:02d}.json.x.corrupt").write_bytes(b"old")
    s, tr = session(root, "prune")
    sessions = fs.sw_home(root) / "state" / "sessions"
    sessions.mkdir(parents=True, mode=0o700)
    state_file(s.session_id, fs.sw_home(root)).write_bytes(b"{torn")
    hook(root, s, tr)
    exact(root, s)
    names = quarantined(root)
    assert len(names) == paths.QUARANTINE_KEEP
    assert any(n.startswith("prune.json.") for n in names)  # the newest is kept


# --------------------------------------------------------------- 4. text is text

SURROGATE = "\udc9b"  # a lone surrogate: under the C locale Python writes it as the byte 0x9b (CSI)


def _evil_transcript(root: Path, name: str, model: str) -> Path:
    proj = Path(fs.make_project(root))
    t = Transcript(session_id="evil", cwd=str(proj), model=model)
    t.read(str(proj / "a.py"), "x = 1\n", cr=20_000, cw=500)
    t.call(cr=20_500, cw=300)
    folder = root / "projects" / "p"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    # the records as JSON text with the surrogate escaped, as a JSON writer may leave one
    path.write_bytes(b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in t.records))
    return path


@pytest.mark.parametrize("locale", ["strict-utf8", "C"])
def test_class4_lone_surrogates_and_newlines_leave_as_escapes(root: Path, locale: str) -> None:
    """A model name with a lone surrogate and a newline, a transcript file name with an undecodable
    byte: `replay`, `status`, `report` and `backtest` exit 0 under a strict UTF-8 terminal and under
    the C locale, print no raw 0x9b byte and forge no line; the pages are written. Before: crashes,
    the raw byte, and forged lines."""
    env = {"PYTHONIOENCODING": "utf-8:strict"} if locale == "strict-utf8" else {"LC_ALL": "C", "LANG": "C"}
    model = f"claude-{SURROGATE}\nlamp     red (forged)"
    tr = _evil_transcript(root, os.fsdecode(b"ev\x9bil.jsonl"), model)
    replay = cli(root, "replay", str(tr), **env)
    named = root / "evil.jsonl"  # a name a payload's JSON can carry, for the hook
    named.write_bytes(tr.read_bytes())
    payload = {"session_id": "evil", "transcript_path": str(named), "cwd": fs.make_project(root),
               "hook_event_name": "Stop"}
    assert stop(root, payload).returncode == 0
    status = cli(root, "status", "--session", "evil", **env)
    report = cli(root, "report", "--projects", str(root / "projects"), **env)
    backtest = cli(root, "backtest", str(tr), **env)
    pages = cli(root, "report", "--projects", str(root / "projects"), "--html", str(root / "r.html"), "--pages", **env)
    page = cli(root, "report", "session", str(tr), "--html", str(root / "s.html"), **env)
    for proc in (replay, status, report, backtest, pages, page):
        assert proc.returncode == 0, proc.stderr
        assert b"\x9b" not in proc.stdout + proc.stderr
        assert b"Traceback" not in proc.stderr
    for proc in (replay, status):
        assert b"\\udc9b" in proc.stdout
        assert not [ln for ln in proc.stdout.splitlines() if ln.startswith(b"lamp     red (forged)")]
    assert b"\\udc9b" in backtest.stdout  # the session, named after its file
    assert "<html" in (root / "s.html").read_text()
    assert "<html" in (root / "r.html").read_text()


def test_class4_every_parser_reads_the_same_json_the_same_way(root: Path) -> None:
    """A byte-order mark, a `\\u0075sage`-escaped key (next to a tool block, and next to the word
    compact_boundary), NaN and Infinity, a count past the bound, ids past the cap: the hooks, `replay`
    and `report` count the same calls and tokens. Before: the BOM line and the escaped key split them."""
    t = Transcript(session_id="same", cwd=fs.make_project(root))
    t.call(cr=1000, cw=100)
    t.read(os.path.join(t.cwd, "a.py"), "x = 1\n", cr=1100, cw=50)
    t.read(os.path.join(t.cwd, "b.py"), "y = 2\n", cr=1200, cw=60)
    for cr in (1300, 1400, 1500, 1600, 1700):
        t.call(cr=cr, cw=70)
    lines = [json.dumps(r, separators=(",", ":")).encode() for r in t.records]
    calls = [i for i, ln in enumerate(lines) if b'"usage"' in ln]
    tool = next(i for i in calls if b'"tool_use"' in lines[i])
    lines[calls[0]] = b"\xef\xbb\xbf" + lines[calls[0]]
    lines[tool] = lines[tool].replace(b'"usage"', b'"\\u0075sage"')
    plain = [i for i in calls if i not in (calls[0], tool)]
    lines[plain[1]] = lines[plain[1]].replace(b'"usage"', b'"\\u0075sage"')[:-1] + b',"x":"compact_boundary"}'
    lines[plain[2]] = lines[plain[2]].replace(b'"cache_read_input_tokens":1', b'"cache_read_input_tokens":NaN,"z":1')
    lines[plain[3]] = lines[plain[3]].replace(b'"output_tokens":10', b'"output_tokens":Infinity')
    lines[plain[4]] = lines[plain[4]].replace(b'"input_tokens":1', b'"input_tokens":1' + b"0" * 30)
    folder = root / "projects" / "p"
    folder.mkdir(parents=True)
    tr = folder / "same.jsonl"
    tr.write_bytes(b"\n".join(lines) + b"\n")
    payload = {"session_id": "same", "transcript_path": str(tr), "cwd": t.cwd, "hook_event_name": "Stop"}
    assert stop(root, payload).returncode == 0
    hooks = load_state("same", fs.sw_home(root))["meter"]["main"]
    replay = json.loads(cli(root, "replay", str(tr), "--json").stdout)["tokenUsage"]
    report = json.loads(cli(root, "report", "--json", "--projects", str(root / "projects")).stdout)
    row = report["sessions"][0]
    assert hooks["calls"] == replay["calls"] == row["apiCalls"] == len(calls) - 3
    assert hooks["cacheRead"] == replay["cacheRead"] == row["tokens"]["cacheRead"]
    assert hooks["output"] == replay["output"] == row["tokens"]["output"]
    assert hooks["uncachedInput"] == replay["uncachedInput"] == row["tokens"]["input"]


def test_class4_the_page_templates_markers_in_a_session_id_stay_text(root: Path) -> None:
    """A session id spelling the page's own slots (`__JS__`, `__CSS__`, `__MODEL__`): the heading
    shows them as text and the script is on the page once. Before: 27 KB of script in the heading."""
    from session_watcher.reports.session_page_template import JS

    sid = "__JS____CSS____MODEL__"
    t = Transcript(session_id=sid, cwd=fs.make_project(root))
    t.call(cr=1000, cw=100)
    tr = t.save(root / f"{sid}.jsonl")
    out = root / "page.html"
    got = cli(root, "report", "session", str(tr), "--html", str(out))
    assert got.returncode == 0, got.stderr
    page = out.read_text()
    marker = JS.strip().splitlines()[0]
    assert page.count(marker) == 1
    assert f"<h1>Session {sid}</h1>" in page


# --------------------------------------------------------------- 5. the user's files stay the user's


def _install(root: Path, claude: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {"CLAUDE_CONFIG_DIR": str(claude), "COLUMNS": "1000"}  # what it says unwrapped, read by its words
    return run([sys.executable, "-m", "session_watcher.cli.install", *args], root, b"", **env)


def test_class5_config_set_writes_through_a_link_and_keeps_the_mode(root: Path) -> None:
    """`config set` on a config that is a link into a dotfiles folder: the link stays, its target
    changes, keeping its mode; a read-only config is refused, unchanged; a project's link (it comes
    with the repository) is refused, never followed. Before: the link was replaced by a copy, the
    mode set to 0600, a read-only file rewritten."""
    dotfiles = root / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "session-watcher.toml"
    real.write_text("# mine\nbp_amber = 0.1\n")
    real.chmod(0o644)
    cfg = fs.sw_home(root) / "config" / "config.toml"
    cfg.unlink()
    cfg.symlink_to(real)
    got = cli(root, "config", "set", "bp_amber", "0.2")
    assert got.returncode == 0, got.stderr
    assert cfg.is_symlink()
    assert "# mine" in real.read_text()
    assert "bp_amber = 0.2" in real.read_text()
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    real.chmod(0o444)
    before = real.read_bytes()
    got = cli(root, "config", "set", "bp_amber", "0.3")
    assert got.returncode == 1
    assert b"read-only" in got.stderr
    assert b"Traceback" not in got.stderr
    assert real.read_bytes() == before
    proj = Path(fs.make_project(root))
    (proj / ".claude").mkdir()
    bashrc = root / "home" / ".bashrc"
    bashrc.parent.mkdir(parents=True, exist_ok=True)
    bashrc.write_text("export PATH\n")
    (proj / ".claude" / "session-watcher.toml").symlink_to(bashrc)
    got = cli(root, "config", "set", "--project", str(proj), "bp_amber", "0.2")
    assert got.returncode == 1
    assert b"symbolic link" in got.stderr
    assert bashrc.read_text() == "export PATH\n"


def test_class5_the_installer_keeps_the_users_settings_json(root: Path) -> None:
    """settings.json a link (written through), of mode 0644 (kept), read-only (refused), with `//`
    comments or an odd entry (named, nothing changed, no traceback). Before: the link replaced, the
    mode 0600, a read-only file rewritten, a traceback for the rest."""
    claude = root / "claude"
    claude.mkdir()
    dotfiles = root / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text(json.dumps({"model": "opus"}))
    real.chmod(0o644)
    settings = claude / "settings.json"
    settings.symlink_to(real)
    got = _install(root, claude, "add", "/opt/venv/bin")
    assert got.returncode == 0, got.stderr
    assert settings.is_symlink()
    doc = json.loads(real.read_text())
    assert doc["model"] == "opus"
    assert "PostToolUse" in doc["hooks"]
    assert stat.S_IMODE(real.stat().st_mode) == 0o644
    settings.unlink()
    backups = len(list(claude.glob("settings.json.bak-*")))
    for text, says in (
        ('{\n  // my model\n  "model": "opus"\n}\n', b"comments"),
        ('{"hooks": [1, 2]}', b'"hooks" is list'),
        ('{"hooks": {"Stop": {"matcher": ""}}}', b'"hooks"."Stop" is dict'),
        ('{"hooks": {"Stop": ["echo"]}}', b'"hooks"."Stop"[0] is str'),
    ):
        settings.write_text(text)
        got = _install(root, claude, "add", "/opt/venv/bin")
        assert got.returncode != 0
        assert says in got.stderr, got.stderr
        assert b"Traceback" not in got.stderr
        assert settings.read_text() == text
        assert len(list(claude.glob("settings.json.bak-*"))) == backups  # not even a backup
    settings.write_text('{"model": "opus"}')
    settings.chmod(0o444)
    got = _install(root, claude, "add", "/opt/venv/bin")
    assert got.returncode != 0
    assert b"read-only" in got.stderr
    assert settings.read_text() == '{"model": "opus"}'
    assert stat.S_IMODE(settings.stat().st_mode) == 0o444


# --------------------------------------------------------------- 8. faults degrade, never lose


def test_class8_a_malformed_bus_address_falls_back_and_saves(root: Path) -> None:
    """`DBUS_SESSION_BUS_ADDRESS` with a malformed escape: the alert goes through the fallback (a
    message queued for the next prompt), the run saves; `doctor` and `notify --test` finish and say
    why. Before: ValueError past the probe, the alert lost, nothing saved, both commands crashed."""
    from tests.test_gate import overstaying

    (fs.sw_home(root) / "config" / "config.toml").write_text(
        'guard = "off"\nremind_backoff = 1\nremind_cap = 1000\n'
        '[notify]\nchannels = ["desktop"]\nfallback = "message"\n')
    tr = overstaying(root)
    bus = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=/tmp/sw-bus%zz"}
    payload = {"session_id": "overstay", "transcript_path": str(tr), "cwd": str(root), "hook_event_name": "Stop"}
    stop(root, payload, silent=True, **bus)  # the run that catches up delivers
    state = load_state("overstay", fs.sw_home(root))
    assert state["alerts"]
    assert state["outbox"]
    assert state["outbox"][0]["alert"]["kind"] in ("gate", "backstop")  # worded when a prompt shows it
    assert "message" in state["outbox"][0]["channels"]
    for args in (("doctor",), ("notify", "--test")):
        got = cli(root, *args, **bus)
        assert b"Traceback" not in got.stderr + got.stdout
        assert "malformed escape" in " ".join(got.stdout.decode().split()), got.stdout  # wrapped at 80
    assert cli(root, "notify", "--test", **bus).returncode == 0  # the fallback delivered


def test_class8_a_read_only_data_folder_still_reports(root: Path) -> None:
    """`report` with the whole SESSION_WATCHER_HOME on a read-only mount: the index lives in memory
    (a copy of the last one when there is one) and the report is the one a writable folder gives.
    Before: every report failed on its cache index."""
    t = Transcript(session_id="ro", cwd=fs.make_project(root))
    for cr in (1000, 1200, 1400):
        t.call(cr=cr, cw=100)
    t.save(root / "projects" / "p" / "ro.jsonl")
    args = ("report", "--json", "--projects", str(root / "projects"))
    home = fs.sw_home(root)
    (home / "cache").mkdir(parents=True, exist_ok=True)
    if not _mount("--bind", str(home), str(home)):
        pytest.skip("no bind mount here")
    try:
        assert _mount("-o", "remount,ro,bind", str(home))
        cold = cli(root, *args)
        assert cold.returncode == 0, cold.stderr
    finally:
        subprocess.run(["umount", str(home)], check=True)
    writable = cli(root, *args)  # the same report, writable, which leaves an index
    assert writable.returncode == 0, writable.stderr
    assert json.loads(cold.stdout)["sessions"] == json.loads(writable.stdout)["sessions"]
    assert _mount("--bind", str(home), str(home))
    try:
        assert _mount("-o", "remount,ro,bind", str(home))
        warm = cli(root, *args)  # the index is there but read-only: its copy in memory
        assert warm.returncode == 0, warm.stderr
    finally:
        subprocess.run(["umount", str(home)], check=True)
    assert json.loads(warm.stdout)["sessions"] == json.loads(writable.stdout)["sessions"]
    assert json.loads(warm.stdout)["index"]["skipped"] == 1  # the last run's index, read


def test_class8_a_full_disk_shows_the_last_state(root: Path) -> None:
    """The state folder on a full disk: the status line draws the session (folded in memory), not
    "session-watcher: error". Before: the failed save turned the line into the error."""
    state_dir = fs.sw_home(root) / "state"
    state_dir.mkdir(parents=True, mode=0o700)
    if not _mount("-t", "tmpfs", "-o", "size=256k,mode=0700", "tmpfs", str(state_dir)):
        pytest.skip("cannot mount a small tmpfs here")
    try:
        s, tr = session(root, "fulldisk")
        hook(root, s, tr)
        with open(tr, "ab") as fh:
            fh.write(s.lines_of(s.next_call(reads=1)))
        fs.fill_up(state_dir / "filler")
        status = {"session_id": s.session_id, "transcript_path": str(tr), "cwd": s.project}
        line = run(fs.statusline_argv(), root, json.dumps(status).encode(), NO_COLOR="1")
        assert line.returncode == 0
        assert b"session-watcher" not in line.stdout, line.stdout  # not the error, not "waiting"
        assert line.stdout.split()[1].rstrip(b":") in (b"white", b"green", b"amber", b"red")
    finally:
        subprocess.run(["umount", str(state_dir)], check=True)


def test_class8_nan_and_infinity_in_a_payload_still_save(root: Path) -> None:
    """NaN, Infinity and 1e400 in the hook's and the status line's payload numbers: read as null, so
    the run saves. Before: the save refused the NaN and nothing was saved, every run."""
    s, tr = session(root, "nanpay")
    start = s.hook_payload(str(tr), "SessionStart") | {"source": "resume", "prompt_cache_likely_expired": True}
    raw = json.dumps(start | {"seconds_since_last_response": float("nan")}).encode()
    assert b"NaN" in raw
    proc = run(fs.hook_argv("SessionStart"), root, raw)
    assert proc.returncode == 0
    exact(root, s)
    status = {"session_id": s.session_id, "transcript_path": str(tr), "cwd": s.project,
              "context_window": {"context_window_size": float("inf")},
              "prompt_cache": {"warm": True, "ttl": "5m", "expires_at": float("nan"), "hit_ratio": 1e400}}
    with open(tr, "ab") as fh:
        fh.write(s.lines_of(s.next_call(reads=1)))
    line = run(fs.statusline_argv(), root, json.dumps(status).encode())
    assert line.returncode == 0
    assert b"error" not in line.stdout
    state = exact(root, s)
    assert state["context"]["promptCache"]["expires_at"] is None


def test_class8_a_relative_home_never_writes_into_the_project(root: Path) -> None:
    """SESSION_WATCHER_HOME=rel, run from the project: ignored (the XDG folders under HOME are
    used), `doctor` says so; nothing appears in the project. Before: `rel/state/...` inside the
    project's working tree."""
    s, tr = session(root, "relhome")
    proj = Path(s.project)
    env = {"SESSION_WATCHER_HOME": "rel", "XDG_STATE_HOME": str(root / "xdg-state")}
    proc = run(fs.hook_argv("Stop"), root, json.dumps(s.hook_payload(str(tr), "Stop")).encode(), cwd=proj, **env)
    assert proc.returncode == 0
    assert not (proj / "rel").exists()
    assert (root / "xdg-state" / "session-watcher" / "sessions" / "relhome.json").is_file()
    doctor = cli(root, "doctor", cwd=proj, **env)
    assert b"SESSION_WATCHER_HOME='rel' is relative: ignored" in doctor.stdout
