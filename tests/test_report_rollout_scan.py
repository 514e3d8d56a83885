"""The report's reading of a Codex rollout (`reports.parse_events`): the lines holding one of the
decoder's markers are found over the whole chunk (`core.markscan`), and only those reach the
decoder; the rows are those of every line handed to it one by one, as the hooks' reader takes them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from session_watcher.agents import codex
from session_watcher.agents.claude_code.transcript import iso_to_epoch
from session_watcher.agents.codex import rollout
from session_watcher.agents.seam import HANDOFF
from session_watcher.core import markscan
from session_watcher.reports import parse_events, scan
from session_watcher.reports.parse import MAX_LINE_BYTES, Row
from session_watcher.state.reader import whole_record
from tests.codex_lines import FIXTURES, Thread, meta, turn

if TYPE_CHECKING:
    from pathlib import Path

ROLLOUTS = sorted(FIXTURES.glob("rollout-*.jsonl"))


def each_line(data: bytes, last: bool = False) -> list[Row]:
    """The rows of every line handed to the agent's reader one at a time, with its offset; `last`:
    a last line without its newline too where it is a whole record, as the hooks' reader takes it
    (`state.reader.last_whole_line`)."""
    cursor: dict[str, Any] = {}
    rows: list[Row] = []
    at = 0
    for line in data.splitlines(keepends=True):
        body = line.rstrip(b"\n")
        whole = line.endswith(b"\n") or (last and whole_record(line))
        if whole and len(body) <= MAX_LINE_BYTES:
            for ev in codex.AGENT.read(cursor, cursor, [body], False)[0]:
                row = parse_events._row(ev, at)
                if row is not None:
                    rows.append(row)
        at += len(line)
    return rows


@pytest.fixture(params=[True, False], ids=["stringzilla", "find"])
def search(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> bool:
    if not request.param:  # the search without the `fast` extra: bytes.find and re
        monkeypatch.setattr(markscan, "simd_find", None)
    return bool(request.param)


@pytest.mark.parametrize("path", ROLLOUTS, ids=lambda p: p.name[8:16])
def test_a_rollouts_rows_are_those_of_each_line(path: Path, search: bool) -> None:
    data = path.read_bytes()
    parse = parse_events.events_parser(data[:512])
    assert parse is not None
    rows, used = parse(data, 0, len(data))
    assert used == data.rfind(b"\n") + 1
    assert rows == each_line(data)
    assert sum(r[1] == "c" for r in rows) > 10
    # through the report's own read, in one pass, as a cold report reads it: a last line without its
    # newline taken as the hooks take it (019d7739, 019dc0d3 and 019e260b end in a call so)
    got = scan.scan_file(scan.Job(str(path), 0, None, os.path.getsize(path), True))
    whole = each_line(data, last=True)
    assert [r for r in got.rows or [] if r[1] != "d"] == whole
    assert whole[:len(rows)] == rows
    ends_in_a_call = path.name[8:16] in {"019d7739", "019dc0d3", "019e260b"}
    assert [r[1] for r in whole[len(rows):]] == (["c"] if ends_in_a_call else [])


def lines_handed(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """The lines the report's parse hands Codex's line reader from now on, in order."""
    handed: list[bytes] = []
    line_reader = codex.Codex.line_reader

    def counting(self: codex.Codex, cursor: Any) -> Any:
        take = line_reader(self, cursor)

        def counted(line: bytes, which: int) -> Any:
            handed.append(line)
            return take(line, which)

        return counted

    monkeypatch.setattr(codex.Codex, "line_reader", counting)
    return handed


def test_only_the_lines_with_a_marker_reach_the_decoder(monkeypatch: pytest.MonkeyPatch) -> None:
    path = ROLLOUTS[0]
    data = path.read_bytes()
    handed = lines_handed(monkeypatch)
    parse = parse_events.events_parser(data[:512])
    assert parse is not None
    parse(data, 0, len(data))
    lines = data[: data.rfind(b"\n") + 1].splitlines()  # a last line without its newline waits
    marked = [ln for ln in lines if any(m in ln for m in rollout.ROW_MARKERS)]  # the report's rows': no tools
    assert handed == marked
    assert len(marked) < len(lines) / 2  # most lines (messages, tool calls and output) never reach it


def test_an_agent_without_markers_is_handed_every_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Agent.line_markers` () (the seam's default): every complete line reaches its decoder."""
    data = ROLLOUTS[1].read_bytes()
    monkeypatch.setattr(codex.Codex, "line_markers", lambda _self: ())
    handed = lines_handed(monkeypatch)
    parse = parse_events.events_parser(data[:512])
    assert parse is not None
    rows, _used = parse(data, 0, len(data))
    assert handed == data[: data.rfind(b"\n") + 1].splitlines()
    assert rows == each_line(data)


def test_a_line_past_the_cap_and_a_marker_inside_text_read_as_the_hooks_read_them(search: bool) -> None:
    """A marker quoted inside a message still hands its line to the decoder (which finds no event
    there); a line longer than the cap is skipped, marker or not; a last line without its newline
    waits."""
    noise = '{"timestamp":"2026-11-20T10:00:01.000Z","type":"response_item","payload":{"type":"message",' \
            '"role":"user","content":[{"type":"input_text","text":"say \\"token_count\\" and \\"compacted\\""}]}}'
    long_line = '{"type":"event_msg","payload":{"type":"token_count","pad":"' + "x" * (MAX_LINE_BYTES + 10) + '"}}'
    t = Thread(records=False)
    for n in range(4):
        t.call(1 + n, 1000 * (n + 1), 500 * n, 50)
    c1, c2, c3, c4 = t.lines
    text = "\n".join([meta(), turn(0.5, "gpt-5.5"), noise, c1, long_line, c2, "", c3]) + "\n" + c4
    data = text.encode()
    parse = parse_events.events_parser(data[:512])
    assert parse is not None
    rows, used = parse(data, 0, len(data))
    assert used == data.rfind(b"\n") + 1
    assert rows == each_line(data)
    assert [r[6] + r[8] + r[9] for r in rows] == [1000, 2000, 3000]  # input, cache read, cache write


_PART = st.one_of(st.integers(0, 99).map(lambda n: f"{n:02d}"), st.sampled_from([" 5", "+5", "5 ", "٣5", "-1", "x"]))
_FRAC = st.one_of(st.integers(0, 999).map(lambda n: f"{n:03d}"), st.sampled_from(["٣00", "1 2", "+12", "12"]))


@given(st.integers(0, 9999), _PART, _PART, _PART, _PART, _PART, _FRAC, st.sampled_from(["T", " ", "x"]),
       st.sampled_from([".", ","]), st.sampled_from(["Z", "+", "z", ""]))
@example(2026, "04", "11", "11", "22", "53", "687", "T", ".", "Z")
@example(2026, "02", "29", "23", "59", "99", "999", "T", ".", "Z")
@example(1969, "12", "31", "23", "59", "59", "999", "T", ".", "Z")
@example(2026, "01", "01", "00", "00", " 5", "000", "T", ".", "Z")
@example(2026, "01", "01", "00", "00", "05", "٣00", "T", ".", "Z")
def test_a_rollouts_timestamp_reads_as_the_hooks_read_it(year: int, mo: str, d: str, h: str, mi: str, s: str,
                                                         frac: str, sep: str, dot: str, zone: str) -> None:
    """`rollout.epoch` remembers each minute's start: the same float as `iso_to_epoch`, whatever the text."""
    text = f"{year:04d}-{mo}-{d}{sep}{h}:{mi}:{s}{dot}{frac}{zone}"
    got = [rollout.epoch(text), rollout.epoch(text)]  # the second from the minute remembered
    assert got == [iso_to_epoch(text)] * 2


def test_a_markers_bit_is_the_same_in_the_reports_search_and_the_decoders() -> None:
    """The report searches a rollout for ROW_MARKERS, a decoder's own reading tests MARKERS; `line_reader`
    reads the bits of either (the handoff note's alone, `token_count`'s), so ROW_MARKERS come first in
    MARKERS, in their order."""
    assert rollout.MARKERS[: len(rollout.ROW_MARKERS)] == rollout.ROW_MARKERS
    assert 1 << rollout.ROW_MARKERS.index(HANDOFF) == rollout.HANDOFF_ONLY
    assert 1 << rollout.ROW_MARKERS.index(b'"token_count"') == rollout.COUNT
