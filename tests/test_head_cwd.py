"""sessions.replay.head_cwd: a transcript's first cwd, and whether more lines could still change
that answer (the live exporter remembers a decided one: otlp.exporter.transcript_folder)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from session_watcher.sessions.replay import CWD_SCAN_HEAD, CWD_SCAN_LINES, head_cwd

if TYPE_CHECKING:
    from pathlib import Path

SUMMARY = b'{"type":"summary","summary":"' + b"s" * 280 + b'","leafUuid":"u"}\n'
NAMED = b'{"type":"user","cwd":"/work/p","message":{"role":"user","content":"go"}}\n'


def test_a_short_transcript_naming_none_is_not_decided(tmp_path: Path) -> None:
    """Fewer lines than it looks at: none yet, and a line written next may name one."""
    t = tmp_path / "t.jsonl"
    t.write_bytes(SUMMARY * 10)
    assert head_cwd(str(t)) == (None, False)
    t.write_bytes(b"")
    assert head_cwd(str(t)) == (None, False)


def test_all_the_lines_looked_at_naming_none_is_decided(tmp_path: Path) -> None:
    """CWD_SCAN_LINES lines and the first CWD_SCAN_HEAD bytes' all there, none naming a folder:
    decided (a line naming one after them does not count, as report's search)."""
    n = max(CWD_SCAN_LINES, CWD_SCAN_HEAD // len(SUMMARY) + 1) + 1
    t = tmp_path / "t.jsonl"
    t.write_bytes(SUMMARY * n + NAMED)
    assert head_cwd(str(t)) == (None, True)


def test_a_line_naming_one_decides(tmp_path: Path) -> None:
    """A line naming a folder: that folder, decided, however short the file."""
    t = tmp_path / "t.jsonl"
    t.write_bytes(SUMMARY * 3 + NAMED)
    assert head_cwd(str(t)) == ("/work/p", True)


def test_the_last_line_looked_at_still_being_written_is_not_decided(tmp_path: Path) -> None:
    """The window's last line without its newline yet (being written), the window's bytes all read
    with it: not decided; whole, that line names the folder."""
    n = max(CWD_SCAN_LINES, CWD_SCAN_HEAD // len(SUMMARY) + 1)
    assert (n - 1) * len(SUMMARY) < CWD_SCAN_HEAD < (n - 1) * len(SUMMARY) + 200
    long = b'{"type":"user","cwd":"/work/p","pad":"' + b"x" * 300 + b'"}\n'
    t = tmp_path / "t.jsonl"
    t.write_bytes(SUMMARY * (n - 1) + long[:200])
    assert head_cwd(str(t)) == (None, False)
    t.write_bytes(SUMMARY * (n - 1) + long)
    assert head_cwd(str(t)) == ("/work/p", True)
