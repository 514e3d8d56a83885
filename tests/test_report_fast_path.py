"""The report's fast path gives what the plain one gave: the same document, read in one process or
several, from the index or from the files. Its rows line by line: `tests/test_decoders.py`.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from session_watcher.agents.claude_code import records
from session_watcher.agents.claude_code.discover import discover
from session_watcher.reports import scan
from session_watcher.reports.collect import run_report
from session_watcher.reports.kinds import KIND_DIR
from session_watcher.state import pool
from tests.builders import build_report, build_sessions
from tests.test_decoders import reference_chunk, tricky_lines, usage_call

if TYPE_CHECKING:
    from session_watcher.reports.parse import Row
    from session_watcher.reports.warmth import Session

FIXTURES = Path(__file__).parent / "fixtures"
# Claude Code transcripts: a rollout among them is a Codex thread (`agents.claimed`), read by its own decoder
TRANSCRIPTS = sorted(p for p in FIXTURES.rglob("*.jsonl") if not p.name.startswith("rollout-"))


def reference_dir(data: bytes) -> list[Row]:
    """The working folder's row a file's scan starts with: the first record of its first 64 KiB with a
    top-level `cwd`, by json.loads of each line (independent of `parse.head_dir`'s substring search)."""
    pos = 0
    head = data[: 64 << 10]
    while (nl := head.find(b"\n", pos)) >= 0:
        try:
            rec = json.loads(head[pos:nl])
        except ValueError:
            rec = None
        if isinstance(rec, dict) and isinstance(rec.get("cwd"), str) and rec["cwd"]:
            return [(pos, KIND_DIR, None, rec["cwd"], None, False, 0, 0, 0, 0, 0, 0)]
        pos = nl + 1
    return []


def reference_file(data: bytes) -> list[Row]:
    """What scanning a whole file gives: its folder's row, then its lines' rows."""
    return [*reference_dir(data), *reference_chunk(data)[0]]


def test_stringzilla_finds_what_bytes_find_finds() -> None:
    """The search the markers go through answers as bytes.find does, bounds included (a bytearray,
    as the scan's read buffer is)."""
    from stringzilla import find

    rng = random.Random(16)
    for _ in range(20_000):
        hay = bytearray(rng.choice(b'"usage_compt\n') for _ in range(rng.randint(0, 60)))
        needle = rng.choice([b'"usage"', b"compact_boundary", b"usage", b"\n", b'"', bytes(hay[3:9])])
        start, end = rng.randint(0, len(hay) + 3), rng.randint(0, len(hay) + 3)
        assert find(hay, needle, start, end) == hay.find(needle, start, end), (hay, needle, start, end)
    hay = bytearray(b"x" * 70_000 + b'"usage"' + b"y" * 9 + b"compact_boundary\n")
    assert (find(hay, b'"usage"', 0, len(hay)), find(hay, b"compact_boundary", 0, len(hay))) == (70_000, 70_016)
    assert find(hay, b"compact_boundary", 0, 70_031) == -1  # must end inside the bounds


def corpus(tmp: Path) -> Path:
    proj = tmp / "projects" / "proj"
    for path in TRANSCRIPTS:
        rel = path.relative_to(FIXTURES / path.relative_to(FIXTURES).parts[0])
        dest = proj / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, dest)
    (proj / "tricky.jsonl").write_bytes(tricky_lines())
    return tmp / "projects"


@pytest.mark.slow
def test_report_equal_in_one_process_and_several(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The whole document: from the reference rows, and through the index with 1 and 3 processes."""
    projects = corpus(tmp_path)
    sources = discover([str(projects)])
    rows = {s.path: reference_file(Path(s.path).read_bytes()) for s in sources}
    expected = build_report(build_sessions(sources, rows), 1.8e9, 0.0, None)
    monkeypatch.setattr(scan, "FORK_FROM", 1)
    docs = []
    for workers in (1, 3, 3):  # the third run: an unchanged corpus, the cached document
        monkeypatch.setattr(pool, "cores", lambda w=workers: w)
        doc, _stats = run_report([str(projects)], str(tmp_path / f"index-{workers}.sqlite3"), now=1.8e9,
                                 utc_offset=0.0)
        doc.pop("index")
        docs.append(doc)
    assert docs[0] == docs[1] == docs[2] == json.loads(json.dumps(expected))
    assert sum(s["apiCalls"] for s in expected["sessions"]) > 100


@pytest.mark.slow
def test_msgspec_loads_without_typing_extensions_and_leaves_it_importable() -> None:
    """The schema's module keeps msgspec from importing typing_extensions (and inspect, ast) for its
    moment; afterwards the real module imports as usual, and msgspec still decodes."""
    code = (
        "import sys\n"
        "from session_watcher.reports import parse\n"
        "assert 'typing_extensions' not in sys.modules and 'inspect' not in sys.modules, sorted(sys.modules)\n"
        "import typing_extensions\n"
        "assert typing_extensions.__file__\n"
        "print(parse.parse_chunk(sys.stdin.buffer.read())[0][0][8])\n"  # the first row's cache read
    )
    line = usage_call("x", {"input_tokens": 1, "cache_read_input_tokens": 1234}) + "\n"
    out = subprocess.run([sys.executable, "-c", code], input=line.encode(), capture_output=True, check=True)
    assert out.stdout.decode().strip() == "1234"
    assert records.msgspec is not None


@pytest.mark.slow
def test_report_equal_when_some_sessions_come_from_the_index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sessions whose files were all read whole this run are summarized by the process that read
    them; the others (a file grown since the last run, a session with one file unchanged) from the
    index's rows. Either way, and with the guard's warnings about some of them: the reference."""
    monkeypatch.setenv("SESSION_WATCHER_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(scan, "FORK_FROM", 1)
    monkeypatch.setattr(pool, "cores", lambda: 3)
    projects = corpus(tmp_path)
    db = str(tmp_path / "index.sqlite3")
    run_report([str(projects)], db, now=1.8e9, utc_offset=0.0)  # the index, as of now
    # then: one main file grows (read from where it stopped), one subagent file is rewritten (read
    # again, while its session's main file is unchanged), and a new session appears
    before = discover([str(projects)])
    sub = Path(next(s.path for s in before if s.sub))
    grown = next(Path(s.path) for s in before if not s.sub and Path(s.path).stat().st_size > 50_000
                 and s.session != sub.parent.parent.name)
    with grown.open("ab") as fh:
        fh.write((usage_call("grew", {"input_tokens": 5, "cache_read_input_tokens": 90_000,
                                      "cache_creation_input_tokens": 1_000},
                             timestamp="2026-02-13T09:00:00.000Z") + "\n").encode())
    sub.write_bytes((usage_call("sub", {"input_tokens": 7}) + "\n").encode() + sub.read_bytes())
    new = projects / "proj" / "new-session.jsonl"
    new.write_bytes((grown.read_bytes().splitlines(keepends=True)[-1]) * 2)
    sources = discover([str(projects)])
    rows = {s.path: reference_file(Path(s.path).read_bytes()) for s in sources}
    sessions = build_sessions(sources, rows)

    def pause(s: Session) -> float:
        """Seconds between the session's second and third calls."""
        before, after = s.calls[1].ts, s.calls[2].ts
        assert before is not None
        assert after is not None
        return after - before

    named = [s for s in sessions if len(s.calls) > 2 and pause(s) > 1 and s.calls[2].cw][:2]
    assert len(named) == 2
    warnings = [{"sessionId": s.session_id, "ts": s.calls[2].ts, "afterTs": s.calls[1].ts, "usd": 0.5} for s in named]
    warnings.append({"sessionId": "not-in-this-report", "ts": 1.7e9, "afterTs": 1.7e9 - 900, "usd": 0.25})
    log = tmp_path / "home" / "state" / "guard-warnings.jsonl"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("".join(json.dumps(w) + "\n" for w in warnings))
    expected = json.loads(json.dumps(build_report(sessions, 1.8e9, 0.0, None, warnings)))
    doc, stats = run_report([str(projects)], db, now=1.8e9, utc_offset=0.0)
    assert (stats.appended, stats.reread) == (1, 2)  # the grown file; the rewritten one and the new one
    doc.pop("index")
    assert doc == expected
    # each named session's warning went ahead: its third call paid the re-write
    assert (doc["guard"]["warned"], doc["guard"]["wentAhead"]) == (3, 2)
    assert doc["guard"]["wentAheadTokens"] == sum(s.calls[2].cw for s in named) > 0


def _nested(rng: random.Random, depth: int) -> object:
    """A JSON value holding `cwd` keys at any depth, and the text "cwd" in strings and as a value."""
    pick = rng.randrange(6 if depth < 4 else 3)
    if pick == 0:
        return rng.choice(["cwd", '"cwd":"/in/text"', "a \\ b", "{[", "]}", "x"])
    if pick == 1:
        return rng.choice([None, 3, True])
    if pick == 2:
        return f"/deep/{rng.randrange(100)}"
    if pick == 3:
        return [_nested(rng, depth + 1) for _ in range(rng.randrange(3))]
    keys = rng.sample(["cwd", "payload", "toolUseResult", "a", "b"], rng.randrange(1, 4))
    return {k: _nested(rng, depth + 1) for k in keys}


@pytest.mark.parametrize("schema", [False, True])
def test_the_folder_is_a_records_own_cwd_as_replay_takes_it(schema: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """`head_dir` over generated lines whose `cwd` keys sit at any depth (a tool's result holding
    `{"cwd": ...}`, Codex's `payload`, arrays, strings with "cwd" and brackets in them, compact and
    spaced JSON): the folder and the line are those of replay's rule (`replay.line_cwd`: a record's
    own `cwd`, or its `payload`'s) on the first line that has one; a nested `cwd` was taken before.
    A line read whole is read as JSON (`schema`: by msgspec's struct, bound once a read was large),
    one cut short by the read (its line's end not read yet) by the brackets before its key."""
    from session_watcher.reports import parse
    from session_watcher.reports.parse import head_dir
    from session_watcher.sessions.replay import line_cwd

    if schema:
        parse._schema()
    else:
        monkeypatch.delitem(parse.__dict__, "decode_dir", raising=False)
    rng = random.Random(23)
    nested_seen = 0
    for _ in range(3000):
        lines = []
        for _ in range(rng.randrange(1, 6)):
            rec: dict[str, object] = {"type": "x"}
            for key in rng.sample(["cwd", "payload", "toolUseResult", "message"], rng.randrange(0, 4)):
                rec[key] = _nested(rng, 1)
            if rng.randrange(4) == 0:  # a record's own folder
                rec["cwd"] = f"/own/{rng.randrange(100)}"
            payload = rec.get("payload")
            if isinstance(payload, dict) and "cwd" in payload and "cwd" in rec:
                del rec["cwd"]  # both: replay takes the record's own, report the first written (not here)
            if rng.randrange(2):
                lines.append(json.dumps(rec).encode() + b"\n")
            else:
                lines.append(json.dumps(rec, separators=(",", ":")).encode() + b"\n")
        data = b"".join(lines)
        want: tuple[int, str] | None = None
        pos = 0
        for line in lines:
            got = line_cwd(line)
            if isinstance(got, str) and got:
                want = (pos, got)
                break
            if b'"cwd"' in line:
                nested_seen += 1
            pos += len(line)
        row = head_dir(data)
        assert (None if row is None else (row[0], row[3])) == want, data
        assert head_dir(bytearray(data) + b"\0" * 10, len(data)) == row
        if want is not None:  # its line's closing brace and newline not read yet
            cut = data.index(b"\n", want[0]) - 1
            short = head_dir(bytearray(data), cut)
            assert (None if short is None else (short[0], short[3])) == want, data
    assert nested_seen > 500  # the lines this is about: a "cwd" that is not a record's own
