"""The session page from one decode: the records replay's parse decodes are the page's (no line is
decoded twice), its rows kept as their values (no dict a row while the transcript is read), and
its JSON written a block of rows at a time with the same text as row by row."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_watcher.agents.claude_code import bulkparse, records
from session_watcher.core.text import clean_data
from session_watcher.reports import session_page, session_page_data

if TYPE_CHECKING:
    import pytest

FIXTURES = Path(__file__).parent / "fixtures"
S258 = FIXTURES / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"


def test_no_line_is_decoded_twice_for_the_page(monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay's parse and the page's builder read the transcript's records through one msgspec
    decode each: the page takes the records replay decoded (before: every line with usage or a tool
    block was decoded by both)."""
    seen: dict[bytes, int] = {}
    real = records.decode  # the name bulkparse imported

    def counted(line: bytes | bytearray, int_digits: int) -> Any:
        seen[bytes(line)] = seen.get(bytes(line), 0) + 1
        return real(line, int_digits)

    monkeypatch.setattr(bulkparse, "decode", counted)
    monkeypatch.setattr(session_page_data, "decode", counted)
    model = session_page_data.load_model(str(S258))
    assert model["rows"]
    assert model["story"]
    assert model["turns"]
    assert len(seen) > 300  # the transcript's records were decoded, by msgspec
    assert max(seen.values()) == 1, [line[:80] for line, n in seen.items() if n > 1][:3]
    assert bulkparse.tap is None  # the page's read is over: a later replay is told nothing


def test_the_page_from_one_decode_is_the_page_from_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """The same model whether the page takes replay's records or decodes every line itself."""
    shared = session_page_data.load_model(str(S258), now=1.8e9)
    begin = session_page_data.PageRead._begin

    def own_begin(self: session_page_data.PageRead, chunk: bytes) -> None:
        begin(self, chunk)
        bulkparse.tap = None  # replay's parse tells the page nothing: it decodes each line itself

    monkeypatch.setattr(session_page_data.PageRead, "_begin", own_begin)
    own = session_page_data.load_model(str(S258), now=1.8e9)
    assert shared == own
    assert shared["rows"]
    assert shared["story"]


def test_a_long_session_keeps_no_dict_a_row(tmp_path: Path) -> None:
    """The builder keeps a call as its values in columns and a tool call as a list: what it holds
    after reading a generated session is under 700 bytes a row (445 here; a dict a row held 878)."""
    from bench.generate import write_transcript

    tr = tmp_path / "p" / "cd613e30-d8f1-4adf-a1b7-584a2265b1f5.jsonl"
    write_transcript(tr, 4 << 20, seed=3)
    session_page_data.load_model(str(tr), with_story=False, packed=True)  # what a first read imports and caches
    tracemalloc.start()
    try:
        model = session_page_data.load_model(str(tr), with_story=False, packed=True)
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    rows = model["rows"]
    assert len(rows) > 400
    assert not any(isinstance(r, dict) for r in rows)
    assert held / len(rows) < 700, held / len(rows)
    assert [rows.as_dict(r) for r in rows] == session_page_data.load_model(str(tr), with_story=False)["rows"]


ODD = ["plain", "tab\there", "new\nline", "cr\rhere", "bell\x07", "del\x7f", "caf\u00e9", "zw\u200bsp",
       "lone\udc80", "back\\slash", "\\u0041 spelled", "</script>"]


def test_rows_written_by_the_block_read_as_row_by_row() -> None:
    """A block of rows by one json.dumps gives the text `clean_data` row by row gives, whatever the
    strings hold (control characters, DEL, non-ASCII, a lone surrogate, a spelled escape)."""
    rows = [{"kind": "tool", "id": f"t{i}", "label": ODD[i % len(ODD)], "start": i * 1.5, "end": None}
            for i in range(2 * session_page.BLOCK + 7)]
    model = {"sessionId": "s", "rows": rows, "story": [{"call": 1, "alerts": []}], "turns": []}
    got = "".join(session_page.model_json(model))
    assert got == json.dumps(clean_data(model), separators=(",", ":"), allow_nan=False)
    assert json.loads(got)["rows"][len(ODD) * 3 + 4]["label"] == "bell\\x07"


def test_the_page_looks_between_replay_s_records_only_where_a_marker_is(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between two records replay's parse decodes, the page looks for the lines it decodes itself
    only where one of its markers is (each marker's next place in the chunk kept): the stretches of
    a generated session's hook and bash progress lines, most of them, cost no search (before: a
    search for each marker in every stretch), and the page's rows are the builder's of every line."""
    from bench.generate import write_transcript
    from session_watcher.core.markscan import marked_lines

    tr = tmp_path / "p" / "cd613e30-d8f1-4adf-a1b7-584a2265b1f5.jsonl"
    write_transcript(tr, 2 << 20, seed=5)
    counts = {"stretches": 0, "searches": 0, "decoded": 0}
    between, lines, decode = session_page_data.PageRead._between, marked_lines, session_page_data.decode_record

    def counted(name: str, real: Any) -> Any:
        def call(*args: Any) -> Any:
            counts[name] += 1
            return real(*args)
        return call

    monkeypatch.setattr(session_page_data.PageRead, "_between", counted("stretches", between))
    monkeypatch.setattr(session_page_data, "marked_lines", counted("searches", lines))
    monkeypatch.setattr(session_page_data, "decode_record", counted("decoded", decode))
    model = session_page_data.load_model(str(tr), now=1.8e9)
    assert counts["stretches"] > 100
    assert 0 < counts["searches"] <= counts["decoded"]  # a search finds a line to decode
    assert counts["searches"] * 4 < counts["stretches"], counts
    monkeypatch.undo()
    own = session_page_data.PageBuilder()
    own.feed(tr.read_bytes().splitlines())
    assert model["rows"] == own.rows()
    assert (model["turns"], model["compactions"]) == (own.turns, own.compactions)


def test_the_page_s_marker_places_start_again_in_each_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks of 128 kB read into the page's one buffer, again and again: each marker's next place
    (`PageRead._next`) is looked for afresh in each chunk, and the rows are the builder's of every
    line."""
    from bench.generate import write_transcript
    from session_watcher.state import reader

    tr = tmp_path / "p" / "cd613e30-d8f1-4adf-a1b7-584a2265b1f5.jsonl"
    write_transcript(tr, 2 << 20, seed=5)
    rest = (reader.read_new.__defaults__ or ())[1:]  # max_bytes first
    monkeypatch.setattr(reader.read_new, "__defaults__", (128 << 10, *rest))
    monkeypatch.setattr(reader, "CHUNK", 128 << 10)  # the page's buffer: a chunk's size
    reused: list[bool] = []
    buffer = session_page_data.PageRead._buffer

    def counted(self: session_page_data.PageRead, before: dict[str, Any] | None) -> bytearray | None:
        got = buffer(self, before)
        reused.append(got is not None)
        return got

    monkeypatch.setattr(session_page_data.PageRead, "_buffer", counted)
    model = session_page_data.load_model(str(tr), now=1.8e9)
    assert sum(reused) > 10
    own = session_page_data.PageBuilder()
    own.feed(tr.read_bytes().splitlines())
    assert model["rows"] == own.rows()
    assert (model["turns"], model["compactions"]) == (own.turns, own.compactions)
