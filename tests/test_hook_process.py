"""The hook as Claude Code runs it: `session-watcher hook EVENT`, JSON on stdin, a real transcript.

Every test drives real processes over real files in a temp dir and checks the state file the hooks
leave against the independent oracle (tests/oracle.py).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import filelock
import pytest

from session_watcher.core.engine import DONE_MAX, SCHEMA
from tests.oracle import TRANSCRIPTS, complete_lines, hook, launcher, oracle, payload, stop_until_read
from tests.statefile import load_state, state_file

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

SMALL = TRANSCRIPTS / "subagent.jsonl"  # 96 lines, 12 calls
BIG = TRANSCRIPTS / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"  # 157 calls, 197 tool results
OTHER = TRANSCRIPTS / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"

# a hang is caught by the run's own timeout (oracle.hook); how long a run takes is measured in bench/, not
# asserted here: on a busy machine a hook process takes seconds


def quiet_ok(proc: subprocess.CompletedProcess[bytes]) -> None:
    assert proc.returncode == 0
    assert proc.stdout == b""
    assert proc.stderr == b""


def ok(proc: subprocess.CompletedProcess[bytes]) -> None:
    """Exit 0, nothing on stderr; stdout empty or one alert object for Claude Code (a fold over a real
    session may cross the alert gate: that output belongs to the product)."""
    assert proc.returncode == 0
    assert proc.stderr == b""
    if proc.stdout:
        lines = proc.stdout.decode().splitlines()
        assert len(lines) == 1
        assert set(json.loads(lines[0])) <= {"systemMessage", "suppressOutput", "continue"}


def meter(session_id: str) -> dict[str, Any]:
    return load_state(session_id)["meter"]  # type: ignore[no-any-return]


def settle(session_id: str) -> None:
    """Stop hooks until the state has read its whole transcript and a further run changes nothing: a
    run folds for a bounded time (FOLD_BUDGET) and leaves the rest to the next one, so what one run got
    done depends on the machine's speed; what the runs add up to does not. An unfinished last line
    is never read, so the state is settled once only such a line is left past the cursor."""
    before = None
    for _ in range(50):
        state = load_state(session_id)
        cursor = state.get("cursor") or {}
        offset = cursor.get("offset")
        now = (meter(session_id), offset)
        path = cursor.get("path")
        if not path:
            return
        if now == before and b"\n" not in Path(path).read_bytes()[offset:]:
            return
        before = now
        hook("Stop", payload(session_id, path))
    raise AssertionError(f"{session_id}: not settled after 50 Stop hooks")


def assert_matches(session_id: str, data: bytes | Path) -> None:
    settle(session_id)
    expect = oracle(data)
    m = meter(session_id)
    assert m["main"] == expect["main"]
    assert m["sub"] == expect["sub"]
    assert load_state(session_id)["context"]["pressure"] == expect["pressure"]


def usage_line_indexes(lines: list[bytes]) -> list[int]:
    return [i for i, line in enumerate(lines) if b'"usage"' in line and b'"assistant"' in line]


def log_text() -> str:
    folder = Path(os.environ["SESSION_WATCHER_HOME"]) / "log"
    return "".join(p.read_text(errors="replace") for p in folder.glob("*.log*")) if folder.exists() else ""


# ----------------------------------------------------------------------------- incremental reading

def test_half_line_then_the_rest_counts_once(tmp_path: Path) -> None:
    data = SMALL.read_bytes()
    lines = complete_lines(data)
    cuts = usage_line_indexes(lines)
    assert len(cuts) >= 6
    t = tmp_path / "s1.jsonl"
    t.write_bytes(b"")
    written = 0
    # cut three times, each in the middle of an API call's line
    for idx in (cuts[1], cuts[len(cuts) // 2], cuts[-2]):
        start = sum(len(line) + 1 for line in lines[:idx])
        cut = start + len(lines[idx]) // 2
        with t.open("ab") as fh:
            fh.write(data[written:cut])
        written = cut
        ok(hook("PostToolUse", payload("s1", t, "PostToolUse")))
        assert_matches("s1", t.read_bytes())  # the oracle ignores the unfinished line
        assert meter("s1")["main"]["calls"] == oracle(t.read_bytes())["main"]["calls"] < 12
        # the cursor stopped at the start of the unfinished line
        assert load_state("s1")["cursor"]["offset"] == start
    with t.open("ab") as fh:
        fh.write(data[written:])
    ok(hook("Stop", payload("s1", t)))
    assert_matches("s1", data)
    assert meter("s1")["main"]["calls"] == 12
    ok(hook("Stop", payload("s1", t)))  # nothing new: nothing changes
    assert_matches("s1", data)


def test_truncate_then_grow_again(tmp_path: Path) -> None:
    data = BIG.read_bytes()
    lines = complete_lines(data)
    t = tmp_path / "s2.jsonl"
    t.write_bytes(data)
    ok(hook("Stop", payload("s2", t)))
    assert_matches("s2", data)
    keep = b"".join(line + b"\n" for line in lines[:700])
    ino = t.stat().st_ino
    with t.open("r+b") as fh:  # in place: same inode, shorter
        fh.truncate(len(keep))
    assert t.stat().st_ino == ino
    ok(hook("Stop", payload("s2", t)))
    assert_matches("s2", keep)
    assert meter("s2")["main"]["calls"] < oracle(data)["main"]["calls"]
    with t.open("ab") as fh:
        fh.write(data[len(keep):])
    ok(hook("Stop", payload("s2", t)))
    assert_matches("s2", data)


def test_rotate_rename_and_new_file(tmp_path: Path) -> None:
    t = tmp_path / "s3.jsonl"
    shutil.copy(BIG, t)
    ok(hook("Stop", payload("s3", t)))
    assert_matches("s3", BIG)
    t.rename(tmp_path / "s3.jsonl.1")
    fresh = b"".join(line + b"\n" for line in complete_lines(SMALL.read_bytes())[:60])
    t.write_bytes(fresh)
    ok(hook("PostToolUse", payload("s3", t, "PostToolUse")))
    assert_matches("s3", fresh)


def test_replaced_by_another_sessions_file(tmp_path: Path) -> None:
    t = tmp_path / "s4.jsonl"
    shutil.copy(SMALL, t)
    ok(hook("Stop", payload("s4", t)))
    assert_matches("s4", SMALL)
    other = tmp_path / "other.jsonl"
    shutil.copy(OTHER, other)
    os.replace(other, t)  # a new inode at the same path
    ok(hook("Stop", payload("s4", t)))
    assert_matches("s4", OTHER)


def test_rewritten_in_place_with_another_session(tmp_path: Path) -> None:
    """Same inode, longer content, a different first line: the head hash notices."""
    t = tmp_path / "s5.jsonl"
    shutil.copy(SMALL, t)
    ok(hook("Stop", payload("s5", t)))
    ino = t.stat().st_ino
    with t.open("r+b") as fh:
        fh.write(BIG.read_bytes())
        fh.truncate()
    assert t.stat().st_ino == ino
    ok(hook("Stop", payload("s5", t)))
    assert_matches("s5", BIG)


def test_subagent_transcripts_fold_at_stop(tmp_path: Path) -> None:
    sid = "258c7280-ae70-4798-800f-63464d01a85d"
    shutil.copytree(TRANSCRIPTS / sid, tmp_path / sid)
    t = tmp_path / f"{sid}.jsonl"
    shutil.copy(TRANSCRIPTS / f"{sid}.jsonl", t)
    subs = sorted((tmp_path / sid / "subagents").glob("*.jsonl"))
    ok(hook("PostToolUse", payload(sid, t, "PostToolUse")))
    assert meter(sid)["sub"] == oracle(t)["sub"]  # a tool hook does not scan for subagents
    assert not load_state(sid)["subCursors"]
    stop_until_read(sid, t, subs)
    expect = oracle(t, subs)
    assert meter(sid)["sub"] == expect["sub"]
    assert meter(sid)["sub"]["calls"] > 0
    assert meter(sid)["main"] == expect["main"]


def test_a_run_past_its_budget_still_reads_one_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Stop whose budget is spent before it has read a new line (a busy machine: the lock, the
    state's load) still reads a subagent file, so each run gets on with them. Before, once the main
    transcript had nothing new, such a run opened none: on a machine that busy, the subagents' calls
    were never counted and the run never caught up."""
    from session_watcher.hooks import run

    monkeypatch.setattr(run, "FOLD_BUDGET", -1.0)  # over before the fold starts
    monkeypatch.setenv("SESSION_WATCHER_STOP_WAIT", "0")
    sid = "258c7280-ae70-4798-800f-63464d01a85d"
    shutil.copytree(TRANSCRIPTS / sid, tmp_path / sid)
    t = tmp_path / f"{sid}.jsonl"
    shutil.copy(TRANSCRIPTS / f"{sid}.jsonl", t)
    subs = sorted((tmp_path / sid / "subagents").glob("*.jsonl"))
    assert subs
    raw = json.dumps(payload(sid, t)).encode()
    run.run("PostToolUse", raw)  # the main transcript, read to its end: nothing new for the Stops
    assert meter(sid)["main"] == oracle(t)["main"]
    for _ in subs:
        run.run("Stop", raw)
    assert sorted(load_state(sid)["subCursors"]) == [str(p) for p in subs]
    assert meter(sid)["sub"] == oracle(t, subs)["sub"]
    assert meter(sid)["sub"]["calls"] > 0


# ----------------------------------------------------------------------------- concurrency

def tool_payloads(session_id: str, transcript: Path, data: bytes) -> tuple[list[tuple[str, dict[str, Any]]],
                                                                           Counter[str]]:
    """PostToolUse(Failure) payloads built from the transcript's tool results, and the per-call marks
    (health's one character per tool result) the fold must end with: each id counted once."""
    uses: dict[str, tuple[str, Any]] = {}
    out: list[tuple[str, dict[str, Any]]] = []
    marks: Counter[str] = Counter()
    seen: set[str] = set()
    cwd = None
    for line in complete_lines(data):
        rec = json.loads(line)
        cwd = cwd or rec.get("cwd")
        msg = rec.get("message") if isinstance(rec.get("message"), dict) else {}
        content = msg.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                uses[block["id"]] = (block["name"], block.get("input"))
            elif block.get("type") == "tool_result" and block["tool_use_id"] not in seen:
                tid = block["tool_use_id"]
                seen.add(tid)
                name, inp = uses.get(tid, ("unknown", None))
                err = block.get("is_error") is True
                productive = name in ("Write", "Edit", "MultiEdit", "NotebookEdit")
                marks[("E" if productive else "e") if err else ("p" if productive else ".")] += 1
                event = "PostToolUseFailure" if err else "PostToolUse"
                p = payload(session_id, transcript, event, tool_name=name, tool_input=inp, tool_use_id=tid,
                            tool_response=rec.get("toolUseResult"))
                p["cwd"] = cwd
                out.append((event, p))
    return out, marks


def test_sixteen_hooks_at_once_lose_nothing(tmp_path: Path) -> None:
    sid = "conc"
    data = BIG.read_bytes()
    t = tmp_path / f"{sid}.jsonl"
    t.write_bytes(b"")
    payloads, marks = tool_payloads(sid, t, data)
    assert len(payloads) > 150
    rng = random.Random(7)
    rounds = 4
    bounds = [len(data) * (i + 1) // rounds for i in range(rounds)]
    written = 0
    procs_done = 0
    for end in bounds:
        # payloads of the results in the part already written (a hook fires after its line exists)
        avail = [p for p in payloads if p[1]["tool_use_id"].encode() in data[:written]] or payloads[:1]
        batch = [rng.choice(avail) for _ in range(14)] + [("Stop", payload(sid, t)), ("SubagentStop", payload(sid, t))]
        procs = [subprocess.Popen(launcher("hook", ev), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for ev, _ in batch]
        for proc, (_, p) in zip(procs, batch, strict=True):
            assert proc.stdin is not None
            proc.stdin.write(json.dumps(p).encode())
            proc.stdin.close()
        # the transcript grows while they run, in pieces that end mid-line
        pieces, pos = 5, written
        for k in range(1, pieces + 1):
            upto = written + (end - written) * k // pieces
            with t.open("ab") as fh:
                fh.write(data[pos:upto])
            pos = upto
            time.sleep(0.02)
        written = end
        for proc in procs:
            assert proc.stdout is not None
            assert proc.stderr is not None
            with proc.stdout, proc.stderr:
                out, err = proc.stdout.read(), proc.stderr.read()
            proc.wait(timeout=60)
            ok(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
            procs_done += 1
    assert procs_done == 16 * rounds
    assert t.read_bytes() == data
    # and every tool result once more, one process each, a few at a time, racing the last Stop
    last = [subprocess.Popen(launcher("hook", ev), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE) for ev, _ in payloads[:15]]
    for proc, (_, p) in zip(last, payloads[:15], strict=True):
        proc.communicate(json.dumps(p).encode(), timeout=60)
        assert proc.returncode == 0
    ok(hook("Stop", payload(sid, t)))
    state = load_state(sid)
    expect = oracle(data)
    assert state["meter"]["main"] == expect["main"]
    assert state["meter"]["sub"] == expect["sub"]
    assert state["context"]["pressure"] == expect["pressure"]
    assert state["engine"]["calls"] == expect["main"]["calls"]
    # every tool_use_id's effect applied once (the health counts below); the newest DONE_MAX ids kept
    done = state["tools"]["done"]
    ids = [p["tool_use_id"] for _, p in payloads]
    assert len(ids) > DONE_MAX
    assert list(done) == ids[-DONE_MAX:]
    h = state["health"]
    n, errors, productive = h["head"][0] + len(h["tail"]), h["head"][1], h["head"][2]
    errors += h["tail"].count("e") + h["tail"].count("E")
    productive += h["tail"].count("p") + h["tail"].count("E")
    assert n == sum(marks.values())
    assert errors == marks["e"] + marks["E"]
    assert productive == marks["p"] + marks["E"]
    reads = sum(1 for _, p in payloads if p["tool_name"] == "Read" and p["hook_event_name"] == "PostToolUse")
    assert state["health"]["reads"] >= reads > 0
    assert "Traceback" not in log_text()


# ----------------------------------------------------------------------------- never break the agent

GARBAGE: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("binary", bytes(range(256)) * 64),
    ("random", random.Random(1).randbytes(200_000)),
    ("huge", b'{"session_id": "g", "x": "' + b"a" * (12 << 20) + b'"}'),
    ("nul-json", b'{"session_id": "g\x00"}'),
    ("list", b"[1, 2, 3]"),
    ("string", b'"Stop"'),
    ("number", b"42"),
    ("null", b"null"),
    ("truncated", b'{"session_id": "g", "transcript_path": "/tm'),
    ("no-fields", b"{}"),
    ("id-not-string", b'{"session_id": 17, "transcript_path": "/tmp/x.jsonl"}'),
    ("id-traversal", b'{"session_id": "../../escape", "transcript_path": "/tmp/x.jsonl"}'),
    ("id-huge", json.dumps({"session_id": "a" * 5000}).encode()),
    ("path-not-string", b'{"session_id": "g", "transcript_path": ["a"], "cwd": 5}'),
    ("tool-fields-wrong", json.dumps({"session_id": "g", "transcript_path": None, "tool_name": 3,
                                      "tool_use_id": {"a": 1}, "tool_input": "x", "tool_response": [1],
                                      "agent_transcript_path": 9, "source": None}).encode()),
    ("tool-read-wrong", json.dumps({"session_id": "g", "tool_name": "Read", "tool_use_id": "t1",
                                    "tool_input": {"file_path": 5, "offset": "x"},
                                    "tool_response": {"file": {"filePath": None, "content": 3}}}).encode()),
    ("latin1", '{"session_id": "g", "cwd": "caf\u00e9"}'.encode("latin-1")),
]


@pytest.mark.parametrize(("name", "raw"), GARBAGE, ids=[g[0] for g in GARBAGE])
@pytest.mark.parametrize("event", ["PostToolUse", "Stop", "SessionStart", "Bogus"])
def test_garbage_on_stdin(name: str, raw: bytes, event: str, tmp_path: Path) -> None:
    proc = hook(event, raw)
    quiet_ok(proc)
    assert "Traceback" not in log_text()
    sw_home = Path(os.environ["SESSION_WATCHER_HOME"])
    assert not (sw_home.parent / "escape.json").exists()
    for p in sw_home.rglob("*.json"):
        assert p.parent.name == "sessions"


def test_missing_transcript(tmp_path: Path) -> None:
    for event in ("PostToolUse", "Stop", "SubagentStop", "SessionStart", "PreCompact"):
        p = payload("gone", tmp_path / "nope.jsonl", event, agent_transcript_path=str(tmp_path / "nope2.jsonl"))
        proc = hook(event, p)
        quiet_ok(proc)
    assert meter("gone")["main"]["calls"] == 0
    # once the transcript appears, the next run folds it all
    shutil.copy(SMALL, tmp_path / "nope.jsonl")
    ok(hook("Stop", payload("gone", tmp_path / "nope.jsonl")))
    assert_matches("gone", SMALL)


def test_held_lock_leaves_at_once_and_the_next_run_catches_up(tmp_path: Path) -> None:
    t = tmp_path / "held.jsonl"
    shutil.copy(SMALL, t)
    sfile = state_file("held")
    sfile.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    lock = filelock.FileLock(str(sfile) + ".lock")
    with lock.acquire(timeout=1):
        proc = hook("PostToolUse", payload("held", t, "PostToolUse"))
        quiet_ok(proc)
        assert not sfile.exists()  # it gave up rather than write without the lock
        assert "session lock busy over" in log_text()  # gave up at its bound: said so
        quiet_ok(hook("Stop", payload("held", t)))
        assert not sfile.exists()
    ok(hook("Stop", payload("held", t)))
    assert_matches("held", SMALL)


@pytest.mark.parametrize("content", [
    b"{not json", b"", b"\x00\x01\x02", b"[]", b'{"schema": 1}', b'{"schema": 99, "sessionId": "bad"}',
])
def test_corrupt_state_is_quarantined_and_rebuilt(content: bytes, tmp_path: Path) -> None:
    t = tmp_path / "bad.jsonl"
    shutil.copy(SMALL, t)
    ok(hook("Stop", payload("bad", t)))
    sfile = state_file("bad")
    sfile.write_bytes(content)
    proc = hook("Stop", payload("bad", t))
    quiet_ok(proc)
    assert_matches("bad", SMALL)
    qdir = Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "quarantine"
    moved = list(qdir.iterdir())
    assert len(moved) == 1
    assert moved[0].read_bytes() == content
    assert "quarantined" in log_text()


def test_state_files_are_private(tmp_path: Path) -> None:
    t = tmp_path / "priv.jsonl"
    shutil.copy(SMALL, t)
    ok(hook("Stop", payload("priv", t)))
    sfile = state_file("priv")
    assert sfile.stat().st_mode & 0o777 == 0o600
    assert sfile.parent.stat().st_mode & 0o777 == 0o700
    assert load_state("priv")["schema"] == SCHEMA


def test_python_m_hooks_entry_point(tmp_path: Path) -> None:
    """hooks.json runs `python -m session_watcher.hooks EVENT`: same fold, same silence."""
    import sys

    t = tmp_path / "pm.jsonl"
    shutil.copy(SMALL, t)
    proc = subprocess.run([sys.executable, "-m", "session_watcher.hooks", "Stop"],
                          input=json.dumps(payload("pm", t)).encode(),
                          capture_output=True, timeout=30, check=False)
    ok(proc)
    assert_matches("pm", SMALL)


def test_bad_transcript_lines_are_skipped_not_fatal(tmp_path: Path) -> None:
    """Malformed lines that look like usage (the hook parses them without the json module), a
    non-UTF-8 line, a 9 MB line and an unknown record type: skipped and counted, the rest folded."""
    lines = complete_lines(SMALL.read_bytes())
    bad = [b'{"type":"assistant","message":{"usage" 1}}', b'{"type":"assistant","usage":"\x01"}',
           b'{"type":"user","message":{"content":[{"type":"tool_result",}]}}', b'\xff\xfe{"usage":1}',
           b'{"type":"assistant","pad":"' + b"x" * (9 << 20) + b'","usage":{}}',
           b'{"type":"brand-new-record","usage":{"input_tokens":5}}']
    t = tmp_path / "badl.jsonl"
    t.write_bytes(b"".join(line + b"\n" for line in lines[:40] + bad + lines[40:]))
    proc = hook("Stop", payload("badl", t))
    quiet_ok(proc)
    assert_matches("badl", SMALL)
    assert load_state("badl")["bad"] == 5
    assert "Traceback" not in log_text()


def test_a_payload_past_the_stdin_cap_is_not_read(tmp_path: Path) -> None:
    """A valid payload of 38 MB (3 million keys) took 33 s to parse on a loaded machine, past the
    hook's 10 s timeout. The hook parses at most 8 MiB (80 times the largest payload seen, a Read's
    PostToolUse; a Read of a large PDF holds its base64): one byte past it is read to its end, as
    the client writes it (a hook that exits first breaks the client's pipe: a hook error), not
    parsed, and logged; the hook exits 0 silently and folds nothing; the same payload within the cap
    is folded."""
    cap = 8 << 20  # docs/architecture.md
    t = tmp_path / "capped.jsonl"
    shutil.copy(SMALL, t)

    def padded(sid: str, size: int) -> bytes:
        head = json.dumps(payload(sid, t, "PostToolUse", tool_name="Read"))[:-1].encode() + b', "tool_response": {'
        keys = b"".join(b'"%07x":0,' % i for i in range((size - len(head)) // 12 - 1))
        raw = head + keys + b'"e":"' + b"a" * (size - len(head) - len(keys) - 8) + b'"}}'
        assert len(raw) == size
        json.loads(raw)  # valid JSON: only its size is refused
        return raw

    quiet_ok(hook("PostToolUse", padded("capped", cap + 1), timeout=120))
    raw = padded("capped", cap + (4 << 20))
    p = subprocess.Popen(launcher("hook", "PostToolUse"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    assert p.stdin is not None
    written = 0
    try:  # as the client writes it: os.write, which says a broken pipe (communicate() would hide it)
        while written < len(raw):
            written += os.write(p.stdin.fileno(), raw[written:written + 65536])
    except BrokenPipeError:
        pass
    p.stdin.close()
    p.stdin = None
    out, err = p.communicate(timeout=120)
    assert (written, p.returncode, out, err) == (len(raw), 0, b"", b"")
    assert not state_file("capped").exists()
    assert f"hook PostToolUse: a payload of {len(raw)} bytes, past the 8 MiB a hook parses, dropped" in log_text()
    quiet_ok(hook("PostToolUse", padded("within", cap), timeout=120))
    assert meter("within")["main"]["calls"] > 0


def test_an_input_that_never_ends_is_drained_no_further_than_its_bound(tmp_path: Path) -> None:
    """An endless stdin (a device, a client that never stops writing) is read to DRAIN_MAX and no
    further: the hook exits 0 silently instead of reading until the client's timeout kills it."""
    from session_watcher.hooks.entry import DRAIN_MAX

    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(launcher("hook", "PostToolUse"), stdin=zero, capture_output=True, timeout=300,
                              check=False)
    quiet_ok(proc)
    assert f"a payload of over {DRAIN_MAX >> 20} MiB (read no further), past the 8 MiB" in log_text()
