"""Hostile input: property-based fuzzing of the hook's stdin and of transcript lines.

In-process through `hooks.run.run` for the bulk of the cases, and through real hook processes for a
smaller number. Properties: no exception escapes, stdout is empty or one hook JSON object, every run
is bounded, no shell is ever started and nothing connects to the network (an audit hook watches),
and a transcript folded line by line gives exactly the state of one fold of the whole file.
`SW_RUN_SLOW=1` multiplies the case counts.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import fuzz_synth as fs
from tests.statefile import load_state

if TYPE_CHECKING:
    from collections.abc import Iterator

SLOW = os.environ.get("SW_RUN_SLOW") == "1"
STDIN_CASES = 3000 if SLOW else 300
LINE_CASES = 1000 if SLOW else 120
PROC_CASES = 150 if SLOW else 20
FUZZ = settings(deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])

# ----------------------------------------------------------------------------- audit

EVENTS: list[tuple[str, Any]] = []
_WATCH = {"on": False}


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _WATCH["on"]:
        return
    if event in ("os.system", "os.exec", "os.posix_spawn", "os.spawn", "subprocess.Popen", "os.fork",
                 "pty.spawn", "socket.connect", "socket.sendto", "socket.getaddrinfo", "os.startfile"):
        EVENTS.append((event, args))


sys.addaudithook(_audit)


def check_audit() -> None:
    for event, args in EVENTS:
        assert event not in ("os.system", "pty.spawn", "os.startfile", "socket.getaddrinfo", "socket.sendto"), event
        if event == "socket.connect":
            sock = args[0]
            assert sock.family == socket.AF_UNIX, args  # a local bus at most, never the network
        if event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
            argv = args[1]
            assert isinstance(argv, list | tuple), args  # an argument list, never a shell string
            prog = os.path.basename(str(argv[0]))
            assert prog in ("git", os.path.basename(sys.executable)), argv
            assert not re.fullmatch(r"(ba|da|z|k|c|tc)?sh", os.path.basename(str(args[0]))), args


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    fs.isolate(tmp_path, monkeypatch, '[notify]\nchannels = ["message", "terminal", "desktop"]\n')
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS", raising=False)
    EVENTS.clear()
    _WATCH["on"] = True
    yield tmp_path
    _WATCH["on"] = False
    check_audit()


def out_ok(out: object) -> None:
    if out is None:
        return
    assert isinstance(out, dict), out
    assert out, out
    assert set(out) <= {"systemMessage", "terminalSequence"}, out
    assert all(isinstance(v, str) for v in out.values())
    json.dumps(out)
    msg = out.get("systemMessage", "")
    assert not any((ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F for c in msg), msg


# ----------------------------------------------------------------------------- strategies

HOSTILE = st.sampled_from([
    "", "\x00", "a\x00b", "../../../../etc/passwd", "$(touch /tmp/sw-pwned)", "`touch /tmp/sw-pwned`",
    "; touch /tmp/sw-pwned #", "\x1b]0;title\x07\x1b[2J", "\ud800", "~", "~root/x", "-rf", "--help",
    "/dev/zero", "/dev/stdin", "/proc/self/mem", "/", ".", "C:\\Users\\x\\a.py", "a" * 5000, "é" * 300,
])
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=False) | st.text(max_size=20)
    | HOSTILE,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=10,
)
TOOL_INPUT = st.dictionaries(
    st.sampled_from(["file_path", "notebook_path", "path", "old_string", "new_string", "content", "edits",
                     "offset", "limit", "new_source", "command"]),
    JSON | HOSTILE | st.lists(st.dictionaries(st.sampled_from(["old_string", "new_string"]), JSON), max_size=3),
    max_size=5)


def payloads(sid: str, transcripts: list[str]) -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({}, optional={
        "session_id": st.just(sid) | st.just(sid) | HOSTILE | JSON,
        "transcript_path": st.sampled_from(transcripts) | HOSTILE | JSON,
        "agent_transcript_path": st.sampled_from(transcripts) | HOSTILE | JSON,
        "cwd": st.sampled_from([os.path.dirname(transcripts[0])]) | HOSTILE | JSON,
        "hook_event_name": st.sampled_from(["PostToolUse", "Stop", "SessionStart", "SubagentStop"]) | JSON,
        "tool_name": st.sampled_from(["Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"]) | JSON,
        "tool_input": TOOL_INPUT | JSON,
        "tool_response": st.fixed_dictionaries({"file": st.fixed_dictionaries({}, optional={
            "filePath": HOSTILE | JSON, "content": st.text() | JSON, "startLine": JSON})}) | JSON,
        "tool_use_id": st.text(max_size=12) | JSON,
        "agent_id": JSON, "source": st.sampled_from(["startup", "resume", "clear", "compact"]) | JSON,
        "model": JSON,
    })


EVENT_NAMES = st.sampled_from(["PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionStart",
                               "PreCompact", "", "\x00", "x" * 300])


def fixture_transcripts(root: Path, sid: str) -> list[str]:
    proj = fs.make_project(root)
    s = fs.SynthSession(sid, proj, seed=5)
    tr = Path(proj) / f"{sid}.jsonl"
    with open(tr, "wb") as fh:
        for _ in range(40):
            fh.write(s.lines_of(s.next_call()))
    folder = Path(proj) / "a-folder.jsonl"
    folder.mkdir(exist_ok=True)
    fifo = Path(proj) / "a-fifo.jsonl"
    if not fifo.exists():
        os.mkfifo(fifo)
    sub = Path(proj) / sid / "subagents"
    sub.mkdir(parents=True, exist_ok=True)
    (sub / "agent-1.jsonl").write_bytes(s.lines_of(s.calls[0]) + b"\xff\x00\n")
    return [str(tr), str(folder), str(fifo), "/dev/null", str(Path(proj) / "missing.jsonl")]


# ----------------------------------------------------------------------------- stdin

@pytest.mark.slow  # a payload that reads a file inside the project asks git (state.session.git_ignored)
def test_fuzz_stdin_in_process(root: Path) -> None:
    from session_watcher.hooks.run import run

    sid = "fuzz-stdin"
    transcripts = fixture_transcripts(root, sid)
    count = {"n": 0}

    @settings(FUZZ, max_examples=STDIN_CASES)
    @given(event=EVENT_NAMES, payload=payloads(sid, transcripts), junk=st.binary(max_size=64),
           mode=st.sampled_from(["json", "json", "json", "bytes", "cut"]))
    def case(event: str, payload: dict[str, Any], junk: bytes, mode: str) -> None:
        raw = json.dumps(payload).encode("utf-8", "surrogatepass")
        if mode == "bytes":
            raw = junk
        elif mode == "cut":
            raw = raw[: len(raw) // 2] + junk
        count["n"] += 1
        out_ok(run(event, raw))

    case()
    assert not os.path.exists("/tmp/sw-pwned")
    print(f"\nstdin fuzz: {count['n']} in-process cases")


# ----------------------------------------------------------------------------- transcript lines

def records(rng_seed: int) -> list[dict[str, Any]]:
    s = fs.SynthSession("tmpl", "/proj", seed=rng_seed)
    c = s.next_call(reads=2)
    return s.records(c)


LINE = st.one_of(
    st.binary(max_size=200).map(lambda b: b.replace(b"\n", b"")),
    st.builds(lambda r, k, v: json.dumps({**r, k: v}).encode("utf-8", "surrogatepass"),
              st.sampled_from(records(1) + records(2)), st.sampled_from(["message", "type", "toolUseResult",
                                                                        "requestId", "timestamp", "isSidechain"]),
              JSON),
    st.builds(lambda r, v: json.dumps({**r, "message": {**r["message"], "usage": v}}).encode("utf-8", "surrogatepass"),
              st.sampled_from(records(3)[:2]), st.dictionaries(
                  st.sampled_from(["input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens",
                                   "output_tokens", "cache_creation"]),
                  st.integers(-5, 10**7) | JSON, max_size=5)),
    st.builds(lambda r, v: json.dumps({**r, "message": {**r["message"], "content": v}}).encode(
        "utf-8", "surrogatepass"),
              st.sampled_from(records(4)), JSON),
    st.sampled_from(records(5) + records(6)).map(lambda r: json.dumps(r).encode()),
    st.just(b'{"type":"system","subtype":"compact_boundary","compactMetadata":{"trigger":"auto","preTokens":9}}'),
    st.just(b'{"usage":' + b"[" * 5000),
)


def test_fuzz_transcript_lines_incremental_equals_whole(root: Path) -> None:
    from session_watcher.hooks.run import run

    proj = fs.make_project(root)
    count = {"n": 0}

    @settings(FUZZ, max_examples=LINE_CASES)
    @given(lines=st.lists(LINE, min_size=1, max_size=12))
    def case(lines: list[bytes]) -> None:
        count["n"] += 1
        n = count["n"]
        whole, step = Path(proj) / f"w{n}.jsonl", Path(proj) / f"s{n}.jsonl"
        whole.write_bytes(b"".join(line + b"\n" for line in lines))
        step.write_bytes(b"")
        base = {"cwd": proj, "hook_event_name": "Stop"}
        for line in lines:
            with open(step, "ab") as fh:
                fh.write(line + b"\n")
            out_ok(run("Stop", json.dumps({**base, "session_id": f"s{n}", "transcript_path": str(step)}).encode()))
        out_ok(run("Stop", json.dumps({**base, "session_id": f"w{n}", "transcript_path": str(whole)}).encode()))
        a, b = load_state(f"w{n}", fs.sw_home(root)), load_state(f"s{n}", fs.sw_home(root))
        for state in (a, b):  # an alert names its own session (w1, s1): the rest must be equal
            state["alerts"] = [{**alert, "sessionId": None} for alert in state["alerts"]]
        for key in ("meter", "engine", "paths", "alerts", "bad", "tools", "readPaths"):
            assert a[key] == b[key], key
        assert a["meter"]["main"]["calls"] + a["meter"]["sub"]["calls"] <= len(lines)

    case()
    print(f"\ntranscript fuzz: {count['n']} cases of up to 12 hostile lines, each folded whole and line by line")


# ----------------------------------------------------------------------------- real processes

@pytest.mark.slow
def test_fuzz_stdin_real_processes(root: Path) -> None:
    sid = "fuzz-proc"
    transcripts = fixture_transcripts(root, sid)
    _WATCH["on"] = False  # the audit hook watches this process; these children are the test's own
    env = fs.env_for(root)
    count = {"n": 0}

    @settings(FUZZ, max_examples=PROC_CASES)
    @given(event=EVENT_NAMES.filter(lambda e: "\x00" not in e), payload=payloads(sid, transcripts))
    def case(event: str, payload: dict[str, Any]) -> None:
        count["n"] += 1
        raw = json.dumps(payload).encode("utf-8", "surrogatepass")
        proc = subprocess.run(fs.hook_argv(event), input=raw, capture_output=True, env=env, timeout=30,
                              check=False)
        assert proc.returncode == 0
        assert proc.stderr == b"", proc.stderr
        if proc.stdout.strip():
            assert proc.stdout.count(b"\n") == 1
            out_ok(json.loads(proc.stdout))

    case()
    log = root / "swhome" / "log" / "session-watcher.log"
    text = log.read_text(errors="replace") if log.exists() else ""
    assert "Traceback" not in text, text[-3000:]
    print(f"\nprocess fuzz: {count['n']} real hook processes")


def test_no_shell_in_the_code_paths() -> None:
    """Every subprocess call in the package takes an argument list; no shell, no os.system."""
    bad = re.compile(r"shell\s*=\s*True|os\.system\(|os\.popen\(|getoutput\(|getstatusoutput\(|"
                     r"create_subprocess_shell|os\.exec[lv]p?e?\(")
    found = []
    paths = list((fs.REPO / "session_watcher").rglob("*.py"))
    assert len(paths) > 50  # the subpackages' modules are in the walk
    for path in paths:
        for no, line in enumerate(path.read_text().splitlines(), 1):
            if bad.search(line):
                found.append(f"{path.relative_to(fs.REPO)}:{no}: {line.strip()}")
    assert not found, found


@pytest.mark.slow
def test_notification_text_from_the_session_is_escaped(root: Path) -> None:
    """A project folder named with terminal escapes reaches the user as inert text."""
    from session_watcher.hooks.run import run

    fs.write_config(root, 'guard = "off"\n[notify]\nchannels = ["terminal", "message"]\n')
    evil = root / "proj\x1b]0;owned\x07\x1b[2J\x9b31m;rm -rf ~"
    (evil / "src").mkdir(parents=True)
    s = fs.SynthSession("escape", str(evil), seed=3)
    tr = root / "escape.jsonl"
    outs = []
    for _ in range(60):
        call = s.next_call()
        # stamped now: a prompt's hook that folds calls past their cache's lifetime tells none of their alerts
        s.start = datetime.now(UTC) - timedelta(seconds=20 * call.index)
        with open(tr, "ab") as fh:
            fh.write(s.lines_of(call))
        # the synchronous hook: what it prints reaches the user (an async one's would reach the model)
        out = run("UserPromptSubmit", json.dumps(s.hook_payload(str(tr), "UserPromptSubmit")).encode())
        if out:
            outs.append(out)
    assert outs, "the session must fire an alert"
    for out in outs:
        out_ok(out)
        seq = out["terminalSequence"]
        assert seq.startswith(("\x1b]777;", "\x1b]9;"))
        assert seq.endswith("\x07")
        inner = seq[2:-1]
        assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F for c in inner), repr(seq)
        assert "owned" in out["systemMessage"] or "proj" in out["systemMessage"]
