"""`replay`'s line parser (core.bulkparse: msgspec for the few fields an event needs) gives what the
hooks' parser (core.transcript.parse_lines: every line with a marker through json's C scanner) gives:
the same events and the same bad-line count, on every fixture transcript and on lines made to trip it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from session_watcher.agents.claude_code import bulkparse, transcript
from tests.test_reliability_fuzz import JSON, TOOL_INPUT
from tests.test_report_fast_path import call, tricky_lines, without_stringzilla

FIXTURES = Path(__file__).parent / "fixtures"
TRANSCRIPTS = sorted(FIXTURES.rglob("*.jsonl"))


def lines_of(data: bytes) -> list[bytes]:
    return transcript.split_lines(data)[0]


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_events_equal_on_fixtures(path: Path) -> None:
    lines = lines_of(path.read_bytes())
    assert bulkparse.parse_lines(lines) == transcript.parse_lines(lines)


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
    """Tool uses and results whose fields have the shapes `core.transcript` reads loosely."""
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


def test_events_equal_on_tricky_lines() -> None:
    lines = lines_of(tricky_lines() + b"\n" + tool_lines())
    got = bulkparse.parse_lines(lines)
    assert got == transcript.parse_lines(lines)
    kinds = {ev[0] for ev in got[0]}
    assert kinds == {"call", "use", "result", "compact"}
    assert got[1] > 5  # the broken lines counted


def test_events_equal_at_the_recursion_limit() -> None:
    """A line nested past the recursion limit: the scanner gives up on it, so msgspec must too, at the
    very same depth (found here for this Python, at this test's stack depth)."""
    fine = json.dumps(call("deep"), separators=(",", ":"))

    def line(n: int) -> bytes:
        return (fine[:-1] + ',"d":' + "[" * n + "]" * n + "}").encode()

    def events(n: int, parse: Any) -> tuple[list[Any], int]:
        return parse([line(n)])  # type: ignore[no-any-return]

    step = 256
    first = next(n for n in range(step, 1 << 16, step) if events(n, transcript.parse_lines)[1])
    first = next(n for n in range(first - step, first + 1) if events(n, transcript.parse_lines)[1])
    assert not events(first - 1, transcript.parse_lines)[1]
    for n in range(first - 3, first + 3):  # replay's parse, at the depth the hooks' parse runs
        assert bulkparse.parse_chunk(line(n) + b"\n") == transcript.parse_lines([line(n)]), n


@pytest.mark.parametrize("text", ["2026-02-12T16:00:01.250Z", "2026-02-12T16:00:61.999Z", "2026-02-30T16:00:01.250Z",
                                  "2026-13-12T16:00:01.250Z", "2026-02-12T16:0x:01.250Z", "2026-02-12T16:00:01.2x0Z",
                                  "0000-01-01T00:00:00.000Z", "2026-02-12T16:00:01.25+01:00", "2026-02-12T16:00:01Z"])
def test_stamp_is_iso_to_epoch(text: str) -> None:
    assert bulkparse.stamp_to_epoch(text) == transcript.iso_to_epoch(text)
    assert bulkparse.stamp_to_epoch(text) == transcript.iso_to_epoch(text)  # the remembered minute, too


def _records() -> st.SearchStrategy[dict[str, Any]]:
    """Records of every kind the parse reads: each field of its expected type seven times in eight,
    else a value of another type (the tricky lines above cover other shapes of the objects)."""
    odd = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-1, 1) | st.text(max_size=3) | JSON
    plain = st.recursive(  # JSON that msgspec takes too (no lone surrogates, no integers past 64 bits)
        st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=8),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=6)
    tool_input = st.dictionaries(
        st.sampled_from(["file_path", "notebook_path", "path", "old_string", "new_string", "content", "edits",
                         "offset", "limit", "new_source", "command"]),
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
    }, optional={"input": mostly(tool_input) | TOOL_INPUT, "content": plain})
    count = mostly(st.integers(-5, 10**6))
    usage = st.fixed_dictionaries({"input_tokens": count, "cache_read_input_tokens": count}, optional={
        "cache_creation_input_tokens": count, "output_tokens": count, "cache_creation": st.none()
        | st.fixed_dictionaries({}, optional={"ephemeral_5m_input_tokens": count, "ephemeral_1h_input_tokens": count})})
    message = st.fixed_dictionaries({
        "id": mostly(st.sampled_from(["m1", "m2"])),
        "model": mostly(st.sampled_from(["claude-opus-4-6", "<synthetic>"])),
        "usage": usage, "content": st.lists(block, max_size=3)})
    result = st.fixed_dictionaries({"file": st.fixed_dictionaries({
        "filePath": mostly(st.sampled_from(["/p/a.py", "b.py"])), "content": mostly(st.text(max_size=30)),
        "startLine": mostly(st.integers(-2, 9))})})
    return st.fixed_dictionaries({
        "type": mostly(st.sampled_from(["assistant", "user", "system", "progress"])),
        "timestamp": mostly(st.sampled_from(["2026-02-12T16:00:01.250Z", "2026-02-12T16:00:61.000Z"])),
        "isSidechain": mostly(st.booleans()), "requestId": mostly(st.sampled_from(["r1", "r2"])), "message": message,
    }, optional={"toolUseResult": result, "subtype": st.just("compact_boundary"), "compactMetadata": plain})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records(), min_size=1, max_size=6))
def test_events_equal_on_generated_records(recs: list[dict[str, Any]]) -> None:
    lines = [json.dumps(r, separators=(",", ":")).encode("utf-8", "surrogatepass") for r in recs]
    assert bulkparse.parse_lines(lines) == transcript.parse_lines(lines)


# ----------------------------------------------------------------------------- the chunk at once

def chunk_of(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


@pytest.fixture(params=["stringzilla", "pure"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """replay's marker search with stringzilla (the fast extra) and without it."""
    if request.param == "pure":
        without_stringzilla(monkeypatch)
    return str(request.param)


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_the_chunk_parse_equals_the_line_parse_on_fixtures(path: Path, search: str) -> None:
    data = path.read_bytes()
    assert bulkparse.parse_chunk(data) == transcript.parse_lines(lines_of(data))


def test_the_chunk_parse_equals_the_line_parse_on_tricky_lines(search: str) -> None:
    data = tricky_lines() + b"\n" + tool_lines()
    got = bulkparse.parse_chunk(data)
    assert got == transcript.parse_lines(lines_of(data))
    assert got[1] > 5


@pytest.mark.parametrize("odd", [b"", b"  ", b"\r", b"[1]", b"{", b"x}", b' {"a": 1} ', b"\xff", b"{}\r"])
def test_the_chunk_parse_counts_bad_lines_without_markers_as_the_line_parse(odd: bytes, search: str) -> None:
    """A chunk with a line that is no object's braces (or empty, or with spaces around) anywhere:
    the count over the chunk gives way to the line by line count."""
    base = tool_lines().split(b"\n")[:-1]
    for at in (0, 3, len(base)):
        lines = [*base[:at], odd, *base[at:]]
        assert bulkparse.parse_chunk(chunk_of(lines)) == transcript.parse_lines(lines), (odd, at)


def test_the_chunk_parse_counts_an_over_long_line(search: str) -> None:
    """A line over MAX_LINE_BYTES is bad, with a marker or without (a chunk larger than the reader's)."""
    fine = json.dumps(call("x")).encode()
    for long in (b"{" + b"a" * transcript.MAX_LINE_BYTES + b"}", b'{"usage"' + b"a" * transcript.MAX_LINE_BYTES + b"}"):
        lines = [fine, long, fine]
        got = bulkparse.parse_chunk(chunk_of(lines))
        assert got == transcript.parse_lines(lines)
        assert got[1] == 1


def test_the_chunk_parse_leaves_the_line_after_the_last_newline(search: str) -> None:
    lines = [json.dumps(call(f"c{i}")).encode() for i in range(3)]
    assert bulkparse.parse_chunk(chunk_of(lines[:2]) + lines[2]) == transcript.parse_lines(lines[:2])
    assert bulkparse.parse_chunk(b"") == ([], 0)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_records(), min_size=1, max_size=6))
def test_the_chunk_parse_equals_the_line_parse_on_generated_records(recs: list[dict[str, Any]]) -> None:
    lines = [json.dumps(r, separators=(",", ":")).encode("utf-8", "surrogatepass") for r in recs]
    assert bulkparse.parse_chunk(chunk_of(lines)) == transcript.parse_lines(lines)
