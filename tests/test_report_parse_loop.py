"""The report's parse loop (`reports.parse._call_rows`) gives the rows `line_row` gives line by line:
where it takes a later sample's key and counts from the line before (the same ids, an equal usage),
where those differ in type or value, and where it leaves a line to `line_row` (a compaction mark, a
line that is not UTF-8, a call of several iterations, a number too long for int()) between the
lines it reads itself: every row in its line's place."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_watcher.core.markscan import marked_lines
from session_watcher.reports import parse
from session_watcher.reports.parse import Row, line_row, parse_chunk

SID = "5e0c5e7a-0000-4000-8000-000000000001"


def call(mid: Any = "msg_1", rid: Any = "req_1", ts: Any = "2026-02-13T00:37:10.294Z", *, out: int = 1,
         cw: int = 300, split: tuple[int, int] | None = (0, 300), model: Any = "claude-opus-4-6",
         text: str = "x", **extra: Any) -> dict[str, Any]:
    usage: dict[str, Any] = {"input_tokens": 7, "cache_creation_input_tokens": cw, "cache_read_input_tokens": 50,
                             "output_tokens": out}
    if split is not None:
        usage["cache_creation"] = {"ephemeral_5m_input_tokens": split[0], "ephemeral_1h_input_tokens": split[1]}
    rec: dict[str, Any] = {"type": "assistant", "sessionId": SID, "timestamp": ts, "isSidechain": False,
                           "message": {"model": model, "id": mid, "usage": usage,
                                       "content": [{"type": "text", "text": text}]}, **extra}
    if rid is not None:
        rec["requestId"] = rid
    return rec


def encode(rec: dict[str, Any]) -> bytes:
    return json.dumps(rec, separators=(",", ":")).encode()


def spaced(rec: dict[str, Any]) -> bytes:
    """As the 2.1.332 client writes some lines: a blank after each colon and comma, text as UTF-8."""
    return json.dumps(rec, ensure_ascii=False).encode()


COMPACT = encode({"type": "system", "subtype": "compact_boundary", "timestamp": "2026-02-13T00:40:00.000Z",
                  "sessionId": SID, "isSidechain": False})
ITERATED = encode(call("msg_it", "req_it", usage_note=1) | {"message": {
    "model": "claude-opus-4-6", "id": "msg_it",
    "usage": {"input_tokens": 3, "output_tokens": 9, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 0,
              "iterations": [{"type": "message", "model": "claude-opus-4-6", "input_tokens": 2, "output_tokens": 4},
                             {"type": "advisor_message", "model": "claude-haiku-4-5", "input_tokens": 1,
                              "output_tokens": 5}]}}})
NOT_UTF8 = encode(call("msg_u", "req_u")).replace(b'"text":"x"', b'"text":"\xff"')
LONG_INT = encode(call("msg_l", "req_l", big=int("9" * 40))).replace(
    b"9" * 40, b"9" * (sys.get_int_max_str_digits() + 1))
SYNTHETIC = encode(call("msg_s", "req_s", model="<synthetic>"))
USER_WITH_USAGE = encode({"type": "user", "sessionId": SID, "toolUseResult": {"usage": {"input_tokens": 5}}})
TORN = encode(call("msg_t", "req_t"))[:-9]


def by_line(chunk: bytes) -> list[Row]:
    """Each marked line through `line_row`, one at a time (the report's reading before the loop)."""
    rows: list[Row] = []
    decoded = parse._schema()
    digits = sys.get_int_max_str_digits()
    for start, stop, which in marked_lines(chunk, parse._FINDERS, chunk.rfind(b"\n") + 1):
        if stop - start > parse.MAX_LINE_BYTES:
            continue
        row = line_row(chunk[start:stop], start, digits, bool(which & 1), bool(which & 2), decoded)
        if isinstance(row, list):
            rows += row
        elif row is not None:
            rows.append(row)
    return rows


def chunk_of(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


CASES = {
    "samples of one call, the same usage": [encode(call()), encode(call(ts="2026-02-13T00:37:11.000Z")),
                                            encode(call(ts="2026-02-13T00:37:12.500Z"))],
    "samples of one call, the usage grown": [encode(call()), encode(call(out=40)), encode(call(out=41, cw=0))],
    "the same message id, another request": [encode(call()), encode(call(rid="req_2")), encode(call(rid=None))],
    "ids that are no strings": [encode(call(mid=1, rid=1)), encode(call(mid=1, rid=1.0)), encode(call(mid=1, rid=True)),
                                encode(call(mid="msg_1", rid=None)), encode(call(mid="msg_1", rid=None)),
                                encode(call(mid="msg_1", rid=["req_1"])), encode(call(mid="msg_1", rid=["req_1"]))],
    "an id too long": [encode(call(mid="m" * 300)), encode(call(mid="m" * 300)), encode(call(rid="r" * 300))],
    "a split and none": [encode(call(split=None)), encode(call(split=None)), encode(call(split=(100, 200))),
                         encode(call(split=(0, 0), cw=0)), encode(call(split=(5, 7), cw=0))],
    "models": [encode(call(model=None)), encode(call(model="m" * 300)), SYNTHETIC, encode(call(model=7))],
    "stamps": [encode(call(ts=t)) for t in (
        "2026-02-13T00:37:10Z", "2026-02-13T00:37:10.5Z", "2026-02-13 00:37:10.123Z", "2026-02-13T00:37:10.123+01:00",
        17, None, "garbage", "2026-13-01T00:00:00.000Z", "2026-02-13T00:37:10.123Z")],
    "a fork's copies": [encode(call(requestSessionId="parent-1")), encode(call(requestSessionId=SID)),
                        encode(call(forkedFrom={"sessionId": "parent-2", "messageUuid": "u"})),
                        encode(call(forkedFrom="x")), encode(call())],
    "side calls": [encode(call(isSidechain=True)), encode(call(isSidechain=1)), encode(call(isSidechain=True))],
    "lines left to line_row between the loop's": [encode(call()), COMPACT, encode(call(out=2)), NOT_UTF8,
                                                  encode(call(out=3)), ITERATED, ITERATED, encode(call(out=4)),
                                                  LONG_INT, USER_WITH_USAGE, SYNTHETIC, TORN, encode(call(out=5)),
                                                  COMPACT, COMPACT + b' "usage"', encode(call(out=6))],
    "spaced lines and compact ones, one call": [spaced(call()), encode(call()), spaced(call(out=9)),
                                                spaced(call(out=9, rid="req_2")), encode(call(out=9, rid="req_2"))],
    "text past ASCII": [spaced(call(text="日本語 😀")), encode(call(text="é")), spaced(call(text="\u2028", out=3)),
                        encode(call(text="\ud83d", out=3))],
    "two calls' samples interleaved, one a side call": [
        encode(call()), encode(call("msg_2", "req_2", out=5, isSidechain=True)), encode(call(out=2)),
        encode(call("msg_2", "req_2", out=5, isSidechain=True)), encode(call("msg_2", "req_1", out=2)),
        encode(call("msg_1", "req_2", out=2)), encode(call(out=2))],
    "the same usage, other ids": [encode(call()), encode(call("msg_2")), encode(call("msg_2", "req_2")),
                                  encode(call(rid=None)), encode(call("msg_3", rid=None))],
    "zero usage": [encode(call(out=0, cw=0, split=(0, 0))), encode(call(out=0, cw=0, split=(0, 0))),
                   encode({"type": "assistant", "message": {"id": "msg_1", "usage": {}}, "requestId": "req_1"}),
                   encode({"type": "assistant", "message": {"id": "msg_1", "usage": {}}, "requestId": "req_1"}),
                   encode(call(out=0, cw=0, split=None))],
    "no usage struct": [encode({"type": "assistant", "message": {"id": "m", "usage": None}, "requestId": "r"}),
                        encode({"type": "assistant", "message": None, "x": "usage"}),
                        encode({"type": "assistant", "message": {"id": "m", "usage": {"input_tokens": "1"}}})],
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_loop_gives_line_rows_rows(name: str) -> None:
    chunk = chunk_of([b'{"type":"user","message":"hello"}', *CASES[name], b'{"type":"progress"}',
                      encode(call("msg_end", "req_end"))])
    rows, used = parse_chunk(chunk)
    assert used == len(chunk)
    assert rows == by_line(chunk)
    assert rows == parse_chunk(chunk, plain=True)[0]  # and the JSON way's, every line through the scanner
    assert rows[-1][3] == "msg_end:req_end"  # the line after the case's is read, in its place


def test_a_later_sample_takes_its_own_counts_and_time() -> None:
    """The counts of a sample whose usage differs are its own, its time its own, its key the call's."""
    chunk = chunk_of([encode(call()), encode(call(ts="2026-02-13T00:37:12.250Z", out=40)),
                      encode(call(ts="2026-02-13T00:37:13.000Z", out=40))])
    rows, _used = parse_chunk(chunk)
    assert [r[7] for r in rows] == [1, 40, 40]  # output tokens
    assert [r[3] for r in rows] == ["msg_1:req_1"] * 3
    first, second, third = (r[2] for r in rows)
    assert first is not None
    assert second is not None
    assert third is not None
    assert abs(second - first - 1.956) < 1e-6
    assert third != second


def test_the_loop_keeps_the_file_offsets_across_chunks() -> None:
    lines = [line for case in CASES.values() for line in case] * 3
    data = chunk_of(lines)
    whole = parse_chunk(data)[0]
    for step in (1_000, 4_096):
        rows: list[Row] = []
        pos, buf = 0, b""
        for i in range(0, len(data), step):
            buf += data[i : i + step]
            got, used = parse_chunk(buf, pos)
            rows += got
            pos += used
            buf = buf[used:]
        assert rows == whole
        assert pos == len(data)


def _lines() -> st.SearchStrategy[bytes]:
    """Lines of the shapes the loop decides on: samples of a few calls (ids and usage from small sets,
    so the line before often has the same ones), side calls, forks, `<synthetic>`, compaction marks,
    spaced and compact JSON, text past ASCII, and lines damaged (not UTF-8, torn, a long digit run)."""
    ids = st.sampled_from(["msg_1", "msg_1", "msg_2", "msg_2", None, 1])
    rids = st.sampled_from(["req_1", "req_1", "req_2", "req_2", None, 1, True])
    counts = st.sampled_from([0, 1, 40])
    split = st.sampled_from([None, (0, 300), (0, 0)])
    extra = st.sampled_from([{}, {}, {}, {}, {"isSidechain": True}, {"requestSessionId": "parent-1"},
                             {"forkedFrom": {"sessionId": "parent-2", "messageUuid": "u"}}])
    model = st.sampled_from(["claude-opus-4-6", "claude-opus-4-6", "claude-haiku-4-5", "<synthetic>"])
    calls = st.builds(lambda mid, rid, out, cw, sp, name, text, more: call(
        mid, rid, out=out, cw=cw, split=sp, model=name, text=text, **more),
        ids, rids, counts, counts, split, model, st.sampled_from(["x", "é 日本 😀"]), extra)
    others = st.sampled_from([json.loads(COMPACT), json.loads(USER_WITH_USAGE)])
    lines = st.builds(lambda rec, way: (encode if way else spaced)(rec), st.one_of(calls, calls, calls, calls, others),
                      st.booleans())
    damaged = st.sampled_from([NOT_UTF8, TORN, LONG_INT, ITERATED])
    return st.one_of(*[lines] * 9, damaged)


@given(st.lists(_lines(), min_size=2, max_size=30), st.integers(1, 400))
def test_the_loop_gives_line_rows_rows_on_generated_lines(lines: list[bytes], step: int) -> None:
    """Any run of such lines: the rows `line_row` gives line by line, and the JSON way's; read in
    pieces of `step` bytes (a line cut at the chunk's end waits for the next), the same rows."""
    chunk = chunk_of(lines)
    rows, used = parse_chunk(chunk)
    assert used == len(chunk)
    assert rows == by_line(chunk)
    assert rows == parse_chunk(chunk, plain=True)[0]
    got: list[Row] = []
    pos = 0
    while pos < len(chunk):
        more, used = parse_chunk(chunk[pos:], pos, min(step, len(chunk) - pos))
        if not used:  # no whole line in the piece: a longer one
            step *= 2
            continue
        got += more
        pos += used
    assert got == rows
