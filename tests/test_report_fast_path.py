"""The report's fast path gives what the plain one gave: same rows, same document.

`reference_chunk` is the parser the report used before it was made fast (every line cut out, every
line with a marker through the hooks' JSON reading); the fast one jumps from marker to marker, decodes a line's
few fields with msgspec (json's C scanner where msgspec's verdict could differ), remembers minutes of
timestamps, and runs in several processes. Same input, same rows, on every fixture transcript and on
lines made to trip it.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from session_watcher.agents.claude_code.discover import discover
from session_watcher.agents.claude_code.transcript import iso_to_epoch
from session_watcher.core import fastjson, markscan
from session_watcher.reports import parse, scan
from session_watcher.reports.collect import run_report
from session_watcher.reports.parse import KIND_DIR, MAX_LINE_BYTES, Row, parse_chunk, record_row, stamp_to_epoch
from session_watcher.state import pool
from tests.builders import build_report, build_sessions

FIXTURES = Path(__file__).parent / "fixtures"
TRANSCRIPTS = sorted(FIXTURES.rglob("*.jsonl"))


def reference_record(rec: dict[str, Any], offset: int, line: bytes = b'"usage" compact_boundary') -> list[Row]:
    row = record_row(rec, offset, b'"usage"' in line, b"compact_boundary" in line)
    if row is None:
        return []
    ts = iso_to_epoch(rec.get("timestamp"))  # the plain timestamp parser
    return [r._replace(ts=ts) for r in (row if isinstance(row, list) else [row])]


def reference_chunk(chunk: bytes, base: int = 0) -> tuple[list[Row], int]:
    """The report's parser as it was: every complete line, the hooks' JSON reading (`fastjson`, as
    `core.transcript.parse_lines` reads a line) where a marker is."""
    end = chunk.rfind(b"\n")
    if end < 0:
        return [], 0
    rows: list[Row] = []
    pos = 0
    while pos <= end:
        nl = chunk.find(b"\n", pos)
        line = chunk[pos:nl]
        if len(line) <= MAX_LINE_BYTES and (b'"usage"' in line or b"compact_boundary" in line):
            try:
                rec = fastjson.loads(line)
            except ValueError:
                rec = None
            if isinstance(rec, dict):
                rows += reference_record(rec, base + pos, line)
        pos = nl + 1
    return rows, end + 1


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
            return [Row(pos, KIND_DIR, None, rec["cwd"], None, False, 0, 0, 0, 0, 0, 0)]
        pos = nl + 1
    return []


def reference_file(data: bytes) -> list[Row]:
    """What scanning a whole file gives: its folder's row, then its lines' rows."""
    return [*reference_dir(data), *reference_chunk(data)[0]]


def call(mid: str, **kw: Any) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "type": "assistant",
        "timestamp": "2026-02-12T16:00:01.250Z",
        "requestId": f"req_{mid}",
        "message": {"id": mid, "model": "claude-opus-4-6", "usage": {"input_tokens": 3, "output_tokens": 5,
                    "cache_read_input_tokens": 700, "cache_creation_input_tokens": 40}},
    }
    rec.update(kw)
    return rec


def usage_call(mid: str, usage: object, **kw: Any) -> str:
    rec = call(mid, **kw)
    rec["message"]["usage"] = usage
    return json.dumps(rec, separators=(",", ":"))


def iteration_lines() -> list[str]:
    """Calls whose `usage.iterations` list several requests (an advisor of another model), and the
    shapes of that list a parser could read differently."""
    msg = {"type": "message", "input_tokens": 1, "cache_read_input_tokens": 700, "cache_creation_input_tokens": 40,
           "output_tokens": 9, "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 40}}
    adv = {"type": "advisor_message", "model": "claude-fable-5", "input_tokens": 900, "output_tokens": 77,
           "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0}
    last = {**msg, "cache_read_input_tokens": 740, "cache_creation_input_tokens": 30,
            "cache_creation": {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 0}}
    top = {"input_tokens": 2, "cache_read_input_tokens": 1440, "cache_creation_input_tokens": 70, "output_tokens": 18,
           "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 40}}
    return [
        usage_call("i1", {**top, "iterations": [msg, adv, last]}),
        usage_call("i2", {**top, "iterations": [msg]}),  # one iteration: the top level as it is
        usage_call("i3", {**top, "iterations": []}),
        usage_call("i4", {**top, "iterations": [adv, {**adv, "model": None}]}),  # no message iteration
        usage_call("i5", {**top, "iterations": [msg, {**adv, "model": 5}, last]}),  # a model that is no string
        usage_call("i6", {**top, "iterations": [msg, 3, last]}),  # an item that is no object
        usage_call("i7", {**top, "iterations": [msg, {**adv, "input_tokens": "9"}, last]}),
        usage_call("i8", {**top, "iterations": {"type": "message"}}),
        usage_call("i9", {**top, "iterations": [{**msg, "type": None}, adv, {**last, "type": 7}]}),
        usage_call("i10", {**top, "iterations": [msg, last, adv]}),  # the advisor after the last message
        usage_call("i11", {**top, "iterations": [{**msg, "input_tokens": -5}, {**last, "cache_creation": None}]}),
    ]


def decoder_lines() -> list[str]:
    """Lines where the fast decoder's verdict or reading could differ from json.loads + record_row."""
    c = {"type": "system", "subtype": "compact_boundary", "timestamp": "2026-02-12T16:05:00.000Z"}
    fine = json.dumps(call("fine"), separators=(",", ":"))
    return [
        usage_call("n1", {"input_tokens": None, "output_tokens": 5.0, "cache_read_input_tokens": True}),
        usage_call("n2", {"input_tokens": "7", "cache_creation_input_tokens": -4, "output_tokens": 2**70}),
        usage_call("n3", {"cache_creation_input_tokens": 0,
                          "cache_creation": {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 4}}),
        usage_call("n4", {"cache_creation_input_tokens": 9,
                          "cache_creation": {"ephemeral_5m_input_tokens": 1, "ephemeral_1h_input_tokens": 4}}),
        usage_call("n5", {"cache_creation_input_tokens": 9, "cache_creation": None}),
        usage_call("n6", {"cache_creation_input_tokens": 9, "cache_creation": [1]}),
        usage_call("n7", {"cache_creation_input_tokens": 9, "cache_creation": {"ephemeral_1h_input_tokens": 1.5}}),
        usage_call("n8", {"input_tokens": 2, "output_tokens": -0}).replace('"input', '"input_tokens":1,"input'),
        usage_call("n9", []),
        usage_call("n10", None),
        *iteration_lines(),
        json.dumps(call("s1", message="text")),
        json.dumps(call("s2", message=[{"usage": {}}])),
        json.dumps(call("s3", message=None)),
        json.dumps(call("s4", message={"id": 5, "usage": {}})),
        json.dumps(call("s5", requestId=7)),
        json.dumps(call("s6", isSidechain="true")),
        json.dumps(call("s7", type=["assistant"])),
        json.dumps(call("s8", type="system")),
        json.dumps({**c, "usage": {"input_tokens": 3}}),  # a compaction mark with a usage key
        json.dumps({**c, "type": "user", "message": {"usage": {}, "id": "c"}}),
        fine[:-1] + ',"nan":NaN}',  # json.loads takes NaN, msgspec does not
        fine[:-1] + ',"s":"\\ud800 \\udfff"}',  # lone surrogates as escapes: json takes them
        fine[:-1] + ',"big":' + "7" * 4301 + "}",  # too many digits for int(): json refuses
        fine[:-1] + ',"big":' + "7" * 4300 + "}",
        fine[:-1] + ',"big":' + "7" * 9000 + ".5}",  # a float may be that long
        fine[:-1] + ',"k":"' + "8" * 5000 + '"}',  # digits in a string: fine
        fine + "," + fine,  # two records on one line
        fine + "]",
        "[" + fine,
        fine[:-1] + ',"message":{"id":"late","usage":{"output_tokens":8}}}',  # the last key wins
        fine[:-1] + ',"message":{"model":"m"}}',  # the last message has no usage
        fine.replace('"usage"', '"us\\u0061ge"', 1)[:-1] + ',"x":"usage"}',  # an escaped key
        fine.replace('"id"', '"i\\u0064"', 1),
        # found by the compaction marker, its usage key escaped: no call (no parser sees "usage")
        fine.replace('"usage"', '"\\u0075sage"', 1)[:-1] + ',"x":"compact_boundary"}',
        usage_call("n11", {"input_tokens": 10**400, "output_tokens": 10**9 + 1, "cache_read_input_tokens": 10**9}),
        usage_call("n12", {"cache_creation_input_tokens": 5,
                           "cache_creation": {"ephemeral_5m_input_tokens": 2**63, "ephemeral_1h_input_tokens": 5}}),
        json.dumps(call("i" * 300)),  # an id no state keeps: a bad event
        json.dumps(call("r1", requestId="q" * 300)),
        json.dumps(call("m1", message={"id": "mm", "model": "x" * 300, "usage": {"output_tokens": 1}})),
        fine.replace('"type":"assistant"', '"type":"assistant","type":"user"', 1),
        fine[:-1] + ',"t":"\t"}',  # a raw tab in a string: json refuses
        fine[:-1] + ',"e":"\\x"}',  # an unknown escape
        fine[:-1] + ',"n":01}',
        fine[:-1] + ',"n":-0,"f":1E+2,"g":-0.0e-0}',
        fine + " \t",
        fine[:-1] + ',"deep":' + "[" * 300 + "]" * 300 + "}",
        fine.replace("fine", "fin\u00e9 \U0001f600"),
    ]


def tricky_lines() -> bytes:
    """Lines that a marker search, a shortcut or a cache could get wrong."""
    dumps = json.dumps
    compact = {"type": "system", "subtype": "compact_boundary", "timestamp": "2026-02-12T16:05:00Z",
               "compactMetadata": {"trigger": "auto", "preTokens": 9}}
    lines = [
        dumps(call("m1")),  # ", " and ": " separators
        dumps(call("m1", timestamp="2026-02-12T16:00:09.900Z"), separators=(",", ":")),  # a later sample
        dumps(call("m2", isSidechain=True)),
        dumps(call("m3", timestamp="2026-02-12T16:00:01.25+02:00")),  # offset, two-digit fraction
        dumps(call("m4", timestamp="2026-02-12T16:00:61.000Z")),  # seconds past 59: as iso_to_epoch does
        dumps(call("m5", timestamp="2026-13-12T16:00:01.000Z")),  # no month 13
        dumps(call("m6", timestamp="2026-02-12T16:0x:01.000Z")),
        dumps(call("m7", timestamp=12345)),
        dumps(call("m8", message={"id": "m8", "model": "<synthetic>", "usage": {"input_tokens": 1}})),
        dumps(call("m9", message={"id": "m9", "usage": "none"})),
        dumps({"type": "user", "toolUseResult": {"usage": {"input_tokens": 99}}, "message": {"id": "u"}}),
        dumps({"type": "user", "message": {"content": "the word compact_boundary and \"usage\": 3"}}),
        dumps(compact),
        dumps({**compact, "isSidechain": True}),
        "\ufeff" + dumps(call("bom")),  # a byte-order mark: not JSON for the hooks, nor here (ccusage's JSON.parse)
        dumps(call("crlf")) + "\r",  # CRLF line ending: json.loads allows the trailing \r
        "  " + dumps(call("space")),
        dumps(call("broken"))[:-3],  # not JSON
        '{"usage": ' + "[" * 200_000 + "]" * 200_000 + "}",  # nested past the recursion limit
        dumps(call("dup")) [:-1] + ', "type": "user"}',  # a duplicate key: the last one wins
        dumps(call("uni", message={"id": "uni\u00e9\ud83d\ude00", "model": "m", "usage": {"output_tokens": 2}})),
        "[1, 2]",
        "",
        "not json \"usage\"",
        *decoder_lines(),
    ]
    out = ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")
    out += b'{"type":"assistant","message":{"id":"bad\xff","usage":{}}}\n'  # not UTF-8
    out += b'{"type":"assistant","message":{"id":"sur\xed\xa0\x80","usage":{}}}\n'  # a UTF-8 surrogate
    out += b'{"type":"assistant","message":{"id":"ok","usage":{},"x":"\xc0\xaf"}}\n'  # overlong: not UTF-8
    out += b'{"type":"assistant","message":{"id":"sur2","usage":{},"x":"\xed\xb0\x80"}}\n'
    long = call("long")
    long["pad"] = "x" * (MAX_LINE_BYTES + 10)
    out += dumps(long).encode() + b"\n"  # over 8 MiB: skipped unparsed
    out += dumps(call("tail")).encode()  # no newline yet: left for the next run
    return out


@pytest.fixture(params=["stringzilla", "bytes.find"])
def marker_search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The markers found by stringzilla (a dependency), and without it, by bytes.find and re."""
    if request.param == "bytes.find":
        without_stringzilla(monkeypatch)
    else:
        assert markscan.simd_find is not None, "stringzilla (the fast extra) is not installed"
    return str(request.param)


def without_stringzilla(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both parsers' marker search as without the `fast` extra: bytes.find and re (core.markscan)."""
    from session_watcher.agents.claude_code import bulkparse

    monkeypatch.setattr(markscan, "simd_find", None)
    monkeypatch.setattr(markscan, "simd_count", None)
    monkeypatch.setattr(parse, "_FINDERS", tuple(markscan.finder(m) for m in parse._MARKERS))
    monkeypatch.setattr(bulkparse, "_FINDERS", tuple(markscan.finder(m) for m in bulkparse.MARKERS))
    monkeypatch.setattr(bulkparse, "_COUNTERS", (None, None, None))


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


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_rows_equal_on_fixtures(path: Path, marker_search: str) -> None:
    data = path.read_bytes()
    assert parse_chunk(data, 7) == reference_chunk(data, 7)


def test_rows_equal_on_tricky_lines(marker_search: str) -> None:
    data = tricky_lines()
    got = parse_chunk(data, 0)
    assert got == reference_chunk(data, 0)
    keys = [r.key for r in got[0]]
    assert got[1] == data.rfind(b"\n") + 1
    assert {"m1:req_m1", "crlf:req_crlf", "space:req_space"} <= set(keys)
    assert not {"tail:req_tail", "long:req_long", "broken:req_broken", "dup:req_dup", "bom:req_bom"} & set(keys)


def test_rows_equal_at_every_split(marker_search: str) -> None:
    """Blocks end anywhere: parsing block by block gives the rows of the whole."""
    data = b"".join(p.read_bytes() for p in TRANSCRIPTS[:3])[:400_000] + tricky_lines()[:5000]
    whole = reference_chunk(data)
    for step in (997, 65_536):
        rows: list[Row] = []
        pos, buf = 0, b""
        for i in range(0, len(data), step):
            buf += data[i : i + step]
            got, used = parse_chunk(buf, pos)
            rows += got
            pos += used
            buf = buf[used:]
        assert (rows, pos) == whole


@pytest.mark.parametrize(
    "text",
    [
        "2026-02-12T16:00:01.250Z",
        "2026-02-12T16:00:01.999Z",
        "1999-12-31T23:59:59.000Z",
        "2026-02-12T16:00:01Z",
        "2026-02-12 16:00:01.250Z",
        "2026-02-30T16:00:01.250Z",
        "0000-01-01T00:00:00.000Z",
        "2026-02-12T16:00:01.250+01:00",
        "2026-02-12T16:+5:01.250Z",  # int() takes a sign: iso_to_epoch reads minute 5
        "2026-02-12T16:0x:01.250Z",
        "2026-02-12T1x:05:01.250Z",
        "2026-02-12T23:59:59.999Z",
    ],
)
def test_stamp_is_iso_to_epoch(text: str) -> None:
    assert stamp_to_epoch(text) == iso_to_epoch(text)
    assert stamp_to_epoch(text) == iso_to_epoch(text)  # the remembered minute, too


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


def test_rows_equal_at_the_recursion_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """A line nested past the recursion limit: json gives up on it, so the fast decoder must too, at
    the very same depth (found here for this Python, at this test's stack depth)."""
    fine = json.dumps(call("deep"), separators=(",", ":"))

    def line(n: int) -> bytes:
        return (fine[:-1] + ',"d":' + "[" * n + "]" * n + "}\n").encode()

    def rows(data: bytes, fast: bool) -> tuple[list[Row], int]:  # both ways from the same stack depth
        with monkeypatch.context() as m:
            if not fast:
                m.setattr(parse, "_decode_record", None)
            return parse_chunk(data)

    step = 256
    first = next(n for n in range(step, 1 << 16, step) if not rows(line(n), False)[0])  # json refuses it
    first = next(n for n in range(first - step, first + 1) if not rows(line(n), False)[0])
    assert rows(line(first - 1), False)[0]
    for n in range(first - 3, first + 3):
        assert rows(line(n), True) == rows(line(n), False), n


@pytest.mark.slow
def test_msgspec_loads_without_typing_extensions_and_leaves_it_importable() -> None:
    """The parse module keeps msgspec from importing typing_extensions (and inspect, ast) for its
    moment; afterwards the real module imports as usual, and msgspec still decodes."""
    code = (
        "import sys\n"
        "from session_watcher.reports import parse\n"
        "assert 'typing_extensions' not in sys.modules and 'inspect' not in sys.modules, sorted(sys.modules)\n"
        "import typing_extensions\n"
        "assert typing_extensions.__file__\n"
        "print(parse.parse_chunk(sys.stdin.buffer.read())[0][0].cr)\n"
    )
    line = usage_call("x", {"input_tokens": 1, "cache_read_input_tokens": 1234}) + "\n"
    out = subprocess.run([sys.executable, "-c", code], input=line.encode(), capture_output=True, check=True)
    assert out.stdout.decode().strip() == "1234"
    assert parse.msgspec is not None


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
    named = [s for s in sessions if len(s.calls) > 2 and s.calls[2].ts - s.calls[1].ts > 1 and s.calls[2].cw][:2]
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
