"""The project's two transcript decoders give the same readings: the one msgspec schema
(`agents.claude_code.records`), through replay's parse (`bulkparse`), the report's (`reports.parse`)
and the session page's (`session_page_data.decode_record`), against the JSON reading each stands for
(the hooks' scanner `transcript.parse_lines`; the report's rows from `fastjson.loads` + `record_row`;
the page's model from `json.loads` records), on every line of every fixture transcript (the
calibration corpus included) and on lines made to trip them: not UTF-8, huge integers, NaN, wrong
types, lone surrogates, deep nesting, duplicate and escaped keys.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_watcher.agents.claude_code import bulkparse, records, transcript
from session_watcher.agents.claude_code.transcript import iso_to_epoch
from session_watcher.core import fastjson, markscan
from session_watcher.reports import parse
from session_watcher.reports.parse import MAX_LINE_BYTES, Row, parse_chunk, record_row
from session_watcher.reports.session_page_data import PageBuilder, decode_record
from tests.test_reliability_fuzz import JSON, TOOL_INPUT

FIXTURES = Path(__file__).parent / "fixtures"
TRANSCRIPTS = sorted([*FIXTURES.rglob("*.jsonl"), *FIXTURES.rglob("*.jsonl.gz")])


def read(path: Path) -> bytes:
    data = path.read_bytes()
    return gzip.decompress(data) if path.suffix == ".gz" else data


def lines_of(data: bytes) -> list[bytes]:
    return transcript.split_lines(data)[0]


def chunk_of(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


# ----------------------------------------------------------------------------- the references


def reference_record(rec: dict[str, Any], offset: int, line: bytes = b'"usage" compact_boundary') -> list[Row]:
    row = record_row(rec, offset, b'"usage"' in line, b"compact_boundary" in line)
    if row is None:
        return []
    ts = iso_to_epoch(rec.get("timestamp"))  # the plain timestamp parser
    return [(*r[:2], ts, *r[3:]) for r in (row if isinstance(row, list) else [row])]


def reference_chunk(chunk: bytes, base: int = 0) -> tuple[list[Row], int]:
    """The report's rows as they were read before the fast path: every complete line, the hooks' JSON
    reading (`fastjson`, as `transcript.parse_lines` reads a line) where a marker is."""
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


def page_models(lines: list[bytes]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The page's model of `lines` through `decode_record`, and through json.loads's records."""
    fast, plain = PageBuilder(), PageBuilder()
    fast.feed(lines)
    for line in lines:
        try:
            rec = json.loads(line.decode("utf-8", "replace"))
        except (ValueError, RecursionError):
            continue
        if isinstance(rec, dict):
            plain.add(rec)
    return fast.model(), plain.model()


def assert_all_equal(lines: list[bytes]) -> tuple[list[Any], int]:
    """Each reader through msgspec equals its JSON reading on these lines; replay's events."""
    chunk = chunk_of(lines)
    got = bulkparse.parse_chunk(chunk)
    assert got == transcript.parse_lines(lines)
    assert parse_chunk(chunk, 7) == reference_chunk(chunk, 7)
    assert parse_chunk(chunk, 7, plain=True) == reference_chunk(chunk, 7)  # a small read's: no schema
    fast, plain = page_models(lines)
    assert fast == plain
    return got


# ----------------------------------------------------------------------------- lines made to trip them


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
        usage_call("i12", {**top, "iterations": [msg, adv, last]}, isSidechain="true"),  # only `true` is a sidechain
        usage_call("i13", {**top, "iterations": [msg, adv, last]}, isSidechain=True, timestamp=5),
    ]


def decoder_lines() -> list[str]:
    """Lines where msgspec's verdict or reading could differ from json.loads's."""
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
        json.dumps({**c, "compactMetadata": {"trigger": "auto", "preTokens": 2**70}}),  # a big int kept whole
        json.dumps({**c, "compactMetadata": {"trigger": 5, "preTokens": 1e300}}),
        fine[:-1] + ',"nan":NaN}',  # json.loads takes NaN, msgspec does not
        fine[:-1] + ',"inf":-Infinity,"big":1e400}',  # and a float past the largest
        fine[:-1] + ',"s":"\\ud800 \\udfff"}',  # lone surrogates as escapes: json takes them
        fine.replace('"fine"', '"fi\\ud800ne"', 1),  # in a field read
        fine[:-1] + ',"big":' + "7" * 4301 + "}",  # too many digits for int(): json refuses
        fine[:-1] + ',"big":' + "7" * 4300 + "}",
        fine[:-1] + ',"big":' + "7" * 9000 + ".5}",  # a float may be that long
        fine[:-1] + ',"k":"' + "8" * 5000 + '"}',  # digits in a string: fine
        fine[:-1] + ',"k":"' + "8" * 4299 + 'x","big":' + "9" * 4301 + "}",  # one run short, the next too long
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
        dumps(call("dup"))[:-1] + ', "type": "user"}',  # a duplicate key: the last one wins
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


def use(name: str, inp: Any, **kw: Any) -> dict[str, Any]:
    block = {"type": "tool_use", "id": f"toolu_{name}", "name": name, "input": inp}
    return call(f"u_{name}", message={"id": f"u_{name}", "model": "m", "usage": {"output_tokens": 1},
                                       "content": [{"type": "text", "text": "x"}, block]}, **kw)


def result(tid: Any, tur: Any = None, blocks: Any = None, **kw: Any) -> dict[str, Any]:
    content = blocks if blocks is not None else [{"type": "tool_result", "tool_use_id": tid,
                                                   "content": [{"type": "text", "text": "out"}], "is_error": False}]
    rec: dict[str, Any] = {"type": "user", "timestamp": "2026-02-12T16:00:02.000Z",
                           "message": {"role": "user", "content": content}, **kw}
    if tur is not None:
        rec["toolUseResult"] = tur
    return rec


def tool_lines() -> bytes:
    """Tool uses and results whose fields have the shapes the readers read loosely, and prompts."""
    read = {"type": "text", "file": {"filePath": "/p/a.py", "content": "a\nb\n", "numLines": 2, "startLine": 3}}
    recs: list[Any] = [
        use("Read", {"file_path": "/p/a.py", "offset": 10, "limit": 5}),
        use("Read", {"file_path": "/p/a.py", "offset": True, "limit": 2.5}),
        use("Edit", {"file_path": "/p/a.py", "old_string": "a", "new_string": "bcd"}),
        use("Edit", {"file_path": "", "path": "/p/b.py", "old_string": 3, "new_string": None}),
        use("MultiEdit", {"file_path": "/p/a.py", "edits": [{"old_string": "a", "new_string": "xy"}, 5, {}]}),
        use("MultiEdit", {"file_path": "/p/a.py", "edits": "none"}),
        use("Write", {"file_path": "/p/c.py", "content": "hello"}),
        use("NotebookEdit", {"notebook_path": "/p/n.ipynb", "new_source": "x = 1"}),
        use("Write", {"file_path": "/p/\\u0000.py", "content": "z"}),
        use("Write", "not an object"),
        use("Write", None),
        use("Bash", {"command": "ls", "path": ["a"], "content": {"deep": [1, 2]}}),
        use("Grep", {"pattern": "a.*b", "description": 7}),
        use("Task", {"description": None, "prompt": "look\n  around", "skill": "x"}),
        use("Read", {"file_path": 7}),
        use("Read", {"file_path": "/p/side.py"}, isSidechain=True),
        call("blk", message={"id": "blk", "usage": {}, "content": [{"type": "tool_use", "id": 5, "name": "Read"},
                                                                   {"type": "tool_use", "id": "t", "name": None},
                                                                   "a string block", 3]}),
        call("blk2", message={"id": "blk2", "usage": {}, "content": "text"}),
        call("blk3", message={"id": "blk3", "usage": {}, "content": {"type": "tool_use"}}),
        result("toolu_Read", read),
        result("toolu_Read", {"type": "text", "file": {"filePath": "/p/a.py", "content": "a", "startLine": 0}}),
        result("toolu_Read", {"file": {"filePath": "/p/a.py", "content": "a", "startLine": True}}),
        result("toolu_Read", {"file": {"filePath": "/p/a.py", "content": 5}}),
        result("toolu_Read", {"file": "a.py"}),
        result("toolu_Read", {"file": None}),
        result("toolu_Read", "Error: no such file"),
        result("toolu_Read", [{"type": "text", "text": "mcp"}]),
        result("toolu_Read", 3.5),
        result("toolu_Read", True),
        result("toolu_Read", read, isSidechain=True),
        result(None, read, blocks=[{"type": "tool_result", "tool_use_id": "a"},
                                   {"type": "tool_result", "tool_use_id": "b", "is_error": True}]),
        result(None, read, blocks=[{"type": "tool_result", "tool_use_id": 5}, {"type": "text", "text": "t"}]),
        result(None, read, blocks=[{"type": "tool_result", "tool_use_id": "c", "is_error": "yes"}, "s"]),
        result(None, read, blocks="plain prompt with \"tool_"),
        *(result(None, read, blocks=[{"type": "tool_result", "tool_use_id": f"e{i}", "is_error": v}])
          for i, v in enumerate([1, "yes", [0], None, 0.5])),  # only `true` is an error
        *(call(f"cc{i}", message={"id": f"cc{i}", "usage": {"cache_creation_input_tokens": cw, "cache_creation": {
            "ephemeral_5m_input_tokens": w5, "ephemeral_1h_input_tokens": w1}}})
          for i, (cw, w5, w1) in enumerate([(9, -3, 4), (9, 5, -2), (0, -1, 7), (-4, 2, 2), (6, 0, 0)])),
        call("neg", message={"id": "neg", "usage": {"input_tokens": -3, "cache_read_input_tokens": -2,
                                                    "output_tokens": -1}}),
        {"type": "user", "message": "tool_result as text", "toolUseResult": read},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "d"}]}, "timestamp": 5},
        result(None, blocks=[{"type": "text", "text": "<command-name>/x</command-name> tool_"},
                             {"type": "text", "text": 5}, {"type": "text", "text": None}]),
        result(None, blocks=[{"type": "text", "text": "meta \"tool_"}], isMeta=True, sessionId="s-1", cwd="/p"),
        {"type": "system", "subtype": "compact_boundary", "timestamp": "2026-02-12T16:05:00.000Z",
         "compactMetadata": {"trigger": "manual", "preTokens": 12345}},
        {"type": "system", "subtype": "compact_boundary", "compactMetadata": None},
        {"type": "progress", "data": {"message": {"type": "assistant", "message": {"usage": {}, "id": "p"}}}},
    ]
    out = [json.dumps(r).replace("\\\\u0000", "\\u0000") for r in recs]
    dup = json.dumps(use("Edit", {"file_path": "/p/a.py", "new_string": "ab"}))
    out.append(dup[:-1] + ', "message": {"id": "late", "usage": {"output_tokens": 9}}}')  # the last key wins
    out.append(dup.replace('"file_path"', '"file_p\\u0061th"'))  # an escaped key
    out.append(dup.replace('"new_string": "ab"', '"new_string": "ab", "new_string": 5'))
    return ("\n".join(out) + "\n").encode()


def without_stringzilla(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both parsers' marker search as without the `fast` extra: bytes.find and re (core.markscan)."""
    monkeypatch.setattr(markscan, "simd_find", None)
    monkeypatch.setattr(markscan, "simd_count", None)
    monkeypatch.setattr(parse, "_FINDERS", tuple(markscan.finder(m) for m in parse._MARKERS))
    monkeypatch.setattr(bulkparse, "_FINDERS", tuple(markscan.finder(m) for m in bulkparse.MARKERS))
    monkeypatch.setattr(bulkparse, "_COUNTERS", (None, None))


@pytest.fixture(params=["stringzilla", "bytes.find"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The markers found by stringzilla (the fast extra), and without it, by bytes.find and re."""
    if request.param == "bytes.find":
        without_stringzilla(monkeypatch)
    else:
        assert markscan.simd_find is not None, "stringzilla (the fast extra) is not installed"
    return str(request.param)


# ----------------------------------------------------------------------------- the equalities


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_equal_on_fixtures(path: Path, search: str) -> None:
    data = read(path)
    lines = lines_of(data)
    assert bulkparse.parse_chunk(data) == transcript.parse_lines(lines)
    assert parse_chunk(data, 7) == reference_chunk(data, 7)
    if search == "stringzilla":  # the searches below are the same either way
        assert bulkparse.parse_lines(lines) == transcript.parse_lines(lines)
        fast, plain = page_models(lines)
        assert fast == plain


def test_the_fixtures_hold_the_corpus() -> None:
    """Every kind of transcript is read above: the calibration corpus (gzipped) among them."""
    names = {p.relative_to(FIXTURES).parts[0] for p in TRANSCRIPTS}
    assert {"calibration", "transcripts", "real-client", "real-client-2.1.332"} <= names
    assert sum(p.suffix == ".gz" for p in TRANSCRIPTS) >= 10


def test_equal_on_tricky_lines(search: str) -> None:
    data = tricky_lines() + b"\n" + tool_lines()
    lines = lines_of(data)
    got = bulkparse.parse_chunk(data)
    assert got == transcript.parse_lines(lines)
    assert bulkparse.parse_lines(lines) == got
    assert {ev[0] for ev in got[0]} == {"call", "use", "result", "compact"}
    assert got[1] > 5  # the broken lines counted
    rows = parse_chunk(tricky_lines(), 0)
    assert rows == reference_chunk(tricky_lines(), 0)
    keys = [r[3] for r in rows[0]]  # the row's key
    assert rows[1] == tricky_lines().rfind(b"\n") + 1
    assert {"m1:req_m1", "crlf:req_crlf", "space:req_space"} <= set(keys)
    assert not {"tail:req_tail", "long:req_long", "broken:req_broken", "dup:req_dup", "bom:req_bom"} & set(keys)


def test_the_page_reads_each_tricky_line_as_json_loads() -> None:
    """Line by line, after a call and a tool use that the line may complete: the same page."""
    head = [json.dumps(call("h")).encode(), json.dumps(use("Read", {"file_path": "/p/a.py"})).encode()]
    lines = [ln for ln in lines_of(tricky_lines() + b"\n" + tool_lines()) if len(ln) <= MAX_LINE_BYTES]
    for line in lines:
        fast, plain = page_models([*head, line])
        assert fast == plain, line[:200]
    fast, plain = page_models(lines)
    assert fast == plain
    assert fast["turns"]
    assert fast["compactions"]
    assert [r for r in fast["rows"] if r["kind"] == "tool"]


def test_the_page_reads_a_str_line_with_a_lone_surrogate() -> None:
    """The live view may feed text: a lone surrogate cannot be encoded, json.loads reads it."""
    line = json.dumps(call("sur", message={"id": "s\ud800", "model": "m", "usage": {"output_tokens": 2}}),
                      ensure_ascii=False)
    rec = decode_record(line)
    assert rec is not None
    assert rec.message is not None
    assert rec.message.mid == "s\ud800"  # json.loads's reading
    ok = decode_record(json.dumps(call("ok"), ensure_ascii=False))
    assert ok is not None
    assert ok.message is not None
    assert ok.message.mid == "ok"


def test_the_rule_sends_a_line_to_json_only_where_msgspec_could_differ() -> None:
    """`records.decode` says None for what json.loads reads otherwise (or refuses), and decodes the rest."""
    n = 4300
    fine = json.dumps(call("fine"), separators=(",", ":"))
    others = [fine.replace("fine", "f\\ud800"), fine[:-1] + ',"n":NaN}', fine[:-1] + ',"b":' + "7" * (n + 1) + "}",
              fine.encode().replace(b"fine", b"f\xff").decode("latin-1"), fine[:-1] + ',"message":{"usage":5}}',
              usage_call("x", {"input_tokens": "3"})]
    for line in others:
        assert records.decode(line.encode("latin-1"), n) is None, line[:80]
    same = [fine, fine[:-1] + ',"b":' + "7" * n + "}", fine[:-1] + ',"s":"' + ("7" * (n - 1) + "x") * 3 + '"}',
            fine.replace("fine", "fin\u00e9")]
    for line in same:
        rec = records.decode(line.encode(), n)
        usage = rec.message.usage if rec is not None and rec.message is not None else None
        assert usage is not None, line[:80]
        assert usage.cache_read_input_tokens == 700
    assert records.decode((fine[:-1] + ',"b":' + "7" * (n + 1) + "}").encode(), 0) is not None  # no limit set


def test_the_schema_takes_the_lines_of_a_real_session() -> None:
    """Every line with a marker of a real session (text, thinking and tool blocks, results) decodes,
    whole or as the report's view of a call: none of them needs the JSON path, which would be slower, not wrong."""
    data = read(FIXTURES / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl")
    marked = [ln for ln in lines_of(data) if b'"usage"' in ln or b'"tool_' in ln]
    texts = [ln for ln in marked if b'"type":"text"' in ln.replace(b" ", b"")]
    assert len(marked) > 50
    assert texts
    for line in marked:
        whole, call_view = records.decode(line, 4300), records.decode_call(line, 4300)
        assert whole is not None, line[:200]
        assert call_view is not None, line[:200]
    for line in texts:  # a text block's text kept encoded, as written
        rec = records.decode(line, 4300)
        content = rec.message.content if rec is not None and rec.message is not None else None
        assert isinstance(content, list)
        want = [b.get("text") for b in json.loads(line)["message"]["content"]]
        assert [records.msgspec.json.decode(b.text) for b in content] == want


def test_the_report_view_is_the_schema_narrowed() -> None:
    """The report's view of a call (`CallRecord`, `CallMessage`) is `Record`'s and `Message`'s fields,
    fewer of them: each with the same key, type and default, so it reads a line as `Record` does."""
    def fields(cls: Any) -> dict[str, tuple[str, Any, Any]]:
        return {f.name: (f.encode_name, f.type, f.default) for f in records.msgspec.structs.fields(cls)}

    view, whole = fields(records.CallRecord), fields(records.Record)
    msg_view, msg_whole = fields(records.CallMessage), fields(records.Message)
    assert set(view) == {"type", "timestamp", "isSidechain", "requestId", "sessionId", "requestSessionId",
                         "forkedFrom", "message"}
    assert {k: v for k, v in view.items() if k != "message"} == {k: whole[k] for k in view if k != "message"}
    assert view["message"][0] == whole["message"][0] == "message"
    assert set(msg_view) == {"mid", "model", "usage"}
    assert msg_view == {k: msg_whole[k] for k in msg_view}
    assert msg_view["mid"][0] == "id"
    line = usage_call("v", {"input_tokens": 3, "output_tokens": 5}, isSidechain=True,
                      toolUseResult={"file": 5}, cwd=["any"])  # fields the view skips, one of a type Record refuses
    rec = records.decode_call(line.encode(), 4300)
    assert rec is not None
    assert rec.message is not None
    assert rec.message.usage is not None
    assert (rec.type, rec.requestId, rec.isSidechain, rec.message.mid) == ("assistant", "req_v", True, "v")
    assert rec.message.usage.output_tokens == 5
    assert records.decode(line.encode(), 4300) is None  # Record refuses it: the report's rows are the same either way
    assert parse_chunk(line.encode() + b"\n") == reference_chunk(line.encode() + b"\n")


def test_equal_at_the_recursion_limit() -> None:
    """A line nested past the recursion limit: the scanner gives up on it, so msgspec must too, at the
    very same depth (found here for this Python, at this test's stack depth), in replay's parse and
    in the report's."""
    fine = json.dumps(call("deep"), separators=(",", ":"))

    def line(n: int) -> bytes:
        return (fine[:-1] + ',"d":' + "[" * n + "]" * n + "}").encode()

    def bad(n: int) -> int:
        return transcript.parse_lines([line(n)])[1]

    step = 256
    first = next(n for n in range(step, 1 << 16, step) if bad(n))
    first = next(n for n in range(first - step, first + 1) if bad(n))
    assert not bad(first - 1)
    for n in range(first - 3, first + 3):  # replay's parse, at the depth the hooks' parse runs
        assert bulkparse.parse_chunk(line(n) + b"\n") == transcript.parse_lines([line(n)]), n

    def rows(data: bytes, fast: bool) -> tuple[list[Row], int]:  # both ways from the same stack depth
        # (`plain`: every line the JSON way; the fast way reads a call line in `_call_rows`' loop, and
        # a line it leaves through `line_row`, whose `_decoded` is held to the scanner's depth too)
        return parse_chunk(data, plain=not fast)

    first = next(n for n in range(step, 1 << 16, step) if not rows(line(n) + b"\n", False)[0])  # json refuses it
    first = next(n for n in range(first - step, first + 1) if not rows(line(n) + b"\n", False)[0])
    assert rows(line(first - 1) + b"\n", False)[0]
    for n in range(first - 3, first + 3):
        assert rows(line(n) + b"\n", True) == rows(line(n) + b"\n", False), n


def test_report_rows_equal_at_every_split(search: str) -> None:
    """Blocks end anywhere: parsing block by block gives the rows of the whole."""
    data = b"".join(read(p) for p in TRANSCRIPTS[:3])[:400_000] + tricky_lines()[:5000]
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


@pytest.mark.parametrize("odd", [b"", b"  ", b"\r", b"[1]", b"{", b"x}", b' {"a": 1} ', b"\xff", b"{}\r"])
def test_replay_counts_bad_lines_without_markers_as_the_scanner(odd: bytes, search: str) -> None:
    """A chunk with a line that is no object's braces (or empty, or with spaces around) anywhere:
    the count over the chunk gives way to the line by line count."""
    base = tool_lines().split(b"\n")[:-1]
    for at in (0, 3, len(base)):
        lines = [*base[:at], odd, *base[at:]]
        assert bulkparse.parse_chunk(chunk_of(lines)) == transcript.parse_lines(lines), (odd, at)


def test_replay_counts_an_over_long_line(search: str) -> None:
    """A line over MAX_LINE_BYTES is bad, with a marker or without (a chunk larger than the reader's)."""
    fine = json.dumps(call("x")).encode()
    for long in (b"{" + b"a" * transcript.MAX_LINE_BYTES + b"}", b'{"usage"' + b"a" * transcript.MAX_LINE_BYTES + b"}"):
        lines = [fine, long, fine]
        got = bulkparse.parse_chunk(chunk_of(lines))
        assert got == transcript.parse_lines(lines)
        assert got[1] == 1


def test_replay_leaves_the_line_after_the_last_newline(search: str) -> None:
    lines = [json.dumps(call(f"c{i}")).encode() for i in range(3)]
    assert bulkparse.parse_chunk(chunk_of(lines[:2]) + lines[2]) == transcript.parse_lines(lines[:2])
    assert bulkparse.parse_chunk(b"") == ([], 0)


@pytest.mark.parametrize("text", [
    "2026-02-12T16:00:01.250Z", "2026-02-12T16:00:01.999Z", "1999-12-31T23:59:59.000Z", "2026-02-12T23:59:59.999Z",
    "2026-02-12T16:00:01Z", "2026-02-12 16:00:01.250Z", "2026-02-12T16:00:61.999Z", "2026-02-30T16:00:01.250Z",
    "2026-13-12T16:00:01.250Z", "0000-01-01T00:00:00.000Z", "2026-02-12T16:00:01.250+01:00",
    "2026-02-12T16:00:01.25+01:00", "2026-02-12T16:+5:01.250Z",  # int() takes a sign: iso_to_epoch reads minute 5
    "2026-02-12T16:0x:01.250Z", "2026-02-12T1x:05:01.250Z", "2026-02-12T16:00:01.2x0Z"])
def test_stamp_is_iso_to_epoch(text: str) -> None:
    assert records.stamp_to_epoch(text) == iso_to_epoch(text)
    assert records.stamp_to_epoch(text) == iso_to_epoch(text)  # the remembered minute, too


# ----------------------------------------------------------------------------- generated records


def _records() -> st.SearchStrategy[dict[str, Any]]:
    """Records of every kind the readers read: each field of its expected type seven times in eight,
    else a value of another type (the tricky lines above cover other shapes of the objects)."""
    odd = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-1, 1) | st.text(max_size=3) | JSON
    plain = st.recursive(  # JSON that msgspec takes too (no lone surrogates, no integers past 64 bits)
        st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6)
    tool_input = st.dictionaries(
        st.sampled_from(["file_path", "notebook_path", "path", "old_string", "new_string", "content", "edits",
                         "offset", "limit", "new_source", "command", "pattern", "prompt"]),
        st.sampled_from(["/p/a.py", "b.py", ""]) | plain
        | st.lists(st.dictionaries(st.sampled_from(["old_string", "new_string"]), plain), max_size=3),
        max_size=5)

    def mostly(valid: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        return st.one_of(*(valid.map(lambda v: v) for _ in range(7)), odd.map(lambda v: v))

    ids = st.sampled_from(["t1", "t2"])
    block = st.fixed_dictionaries({
        "type": mostly(st.sampled_from(["tool_use", "tool_result", "text"])), "id": mostly(ids),
        "name": mostly(st.sampled_from(["Read", "Edit", "MultiEdit", "Write", "NotebookEdit", "Bash"])),
        "tool_use_id": mostly(ids), "is_error": mostly(st.booleans()),
    }, optional={"input": mostly(tool_input) | TOOL_INPUT, "content": plain, "text": mostly(st.text(max_size=8))})
    count = mostly(st.integers(-5, 10**6))
    usage = st.fixed_dictionaries({"input_tokens": count, "cache_read_input_tokens": count}, optional={
        "cache_creation_input_tokens": count, "output_tokens": count, "cache_creation": st.none()
        | st.fixed_dictionaries({}, optional={"ephemeral_5m_input_tokens": count, "ephemeral_1h_input_tokens": count})})
    message = st.fixed_dictionaries({
        "id": mostly(st.sampled_from(["m1", "m2"])),
        "model": mostly(st.sampled_from(["claude-opus-4-6", "<synthetic>"])),
        "usage": usage, "content": mostly(st.lists(block, max_size=3))})
    result = st.fixed_dictionaries({"file": st.fixed_dictionaries({
        "filePath": mostly(st.sampled_from(["/p/a.py", "b.py"])), "content": mostly(st.text(max_size=30)),
        "startLine": mostly(st.integers(-2, 9))})})
    return st.fixed_dictionaries({
        "type": mostly(st.sampled_from(["assistant", "user", "system", "progress"])),
        "timestamp": mostly(st.sampled_from(["2026-02-12T16:00:01.250Z", "2026-02-12T16:00:61.000Z"])),
        "isSidechain": mostly(st.booleans()), "requestId": mostly(st.sampled_from(["r1", "r2"])), "message": message,
    }, optional={"toolUseResult": result, "subtype": st.just("compact_boundary"), "compactMetadata": plain,
                 "isMeta": mostly(st.booleans()), "sessionId": mostly(st.just("s-1")), "cwd": mostly(st.just("/p"))})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records(), min_size=1, max_size=6))
def test_equal_on_generated_records(recs: list[dict[str, Any]]) -> None:
    lines = [json.dumps(r, separators=(",", ":")).encode("utf-8", "surrogatepass") for r in recs]
    assert_all_equal(lines)
    assert bulkparse.parse_lines(lines) == transcript.parse_lines(lines)


@given(st.lists(st.sampled_from(["1", "12", "123", "x", "\n", '"', "1234"]), max_size=40), st.integers(1, 6))
@settings(max_examples=400)
def test_the_digit_run_search_finds_every_run_longer_than_n(pieces: list[str], n: int) -> None:
    """`records.long_digit_run` (a probe every n bytes, then the run around a probed digit) says
    what a search for n + 1 digits in a row says, at any place of the run and of the line."""
    line = "".join(pieces).encode()
    assert records.long_digit_run(line, n) == (re.search(rb"[0-9]{%d}" % (n + 1), line) is not None), (line, n)


@given(st.lists(st.sampled_from(["{", "}", "\n", "x", "{x}", "{}\n", "}\n{"]), max_size=30))
@settings(max_examples=400)
def test_a_chunk_is_plain_when_every_line_is_braced(pieces: list[str]) -> None:
    """The chunk's count (each newline but the last between `}` and `{`, the last after `}`) says
    "every line is `{...}`" exactly when each line of the chunk, looked at alone, is one."""
    chunk = "".join(pieces).encode()
    end = chunk.rfind(b"\n") + 1
    lines = chunk[:end].split(b"\n")[:-1]
    assert bulkparse._plain(chunk, end) == all(ln.startswith(b"{") and ln.endswith(b"}") for ln in lines), chunk
