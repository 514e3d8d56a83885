"""The one marker search of the two fast parsers (core.markscan): the lines it lands in are exactly the
lines that hold a marker, with the markers each holds, with stringzilla and with the pure-Python
search (bytes.find, and re for a marker that starts with a quote)."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from typing import TYPE_CHECKING

import pytest

from session_watcher.agents.claude_code import transcript
from session_watcher.core import markscan
from session_watcher.reports import parse
from tests.oracle import TRANSCRIPTS

if TYPE_CHECKING:
    from pathlib import Path

# replay's markers, in its order (the four-marker loop's); the report's two are the second and third
MARKERS = transcript.MARKERS


def reference(chunk: bytes, markers: tuple[bytes, ...]) -> list[tuple[int, int, int]]:
    """Line by line: (start, stop, which) of each complete line holding a marker."""
    out, pos = [], 0
    end = chunk.rfind(b"\n") + 1
    for line in chunk[:end].split(b"\n")[:-1]:
        which = sum(1 << i for i, m in enumerate(markers) if m in line)
        if which:
            out.append((pos, pos + len(line), which))
        pos += len(line) + 1
    return out


@pytest.fixture(params=["stringzilla", "pure"])
def finders(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> tuple[markscan.Find, ...]:
    if request.param == "pure":
        monkeypatch.setattr(markscan, "simd_find", None)
    else:
        assert markscan.simd_find is not None, "stringzilla (the fast extra) is not installed"
    return tuple(markscan.finder(m) for m in MARKERS)


def test_marked_lines_are_the_lines_holding_a_marker(finders: tuple[markscan.Find, ...]) -> None:
    rng = random.Random(35)
    pieces = [b"x", b'"', b"\n", b"{", b"}", b"usage", b'"usage"', b'""usage"', b'"tool_', b"tool_", b"compact_",
              b"compact_boundary", b"<handoff>", b"<hand", b"off>", b'\\"usage\\"', *MARKERS]
    for _ in range(3000):
        chunk = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        end = chunk.rfind(b"\n") + 1
        assert list(markscan.marked_lines(chunk, finders, end)) == reference(chunk, MARKERS), chunk
        for i, j in ((0, 1), (1, 2), (2, 0), (3, 1)):  # two markers (the report's search has its own loop)
            pair = (MARKERS[i], MARKERS[j])
            got = list(markscan.marked_lines(chunk, (finders[i], finders[j]), end))
            assert got == reference(chunk, pair), (chunk, pair)


def test_the_parsers_search_the_hooks_markers_in_one_order() -> None:
    """Replay's parse and the report's search the markers of the hooks' scanner (`transcript.MARKERS`,
    one tuple), the report's in the order of replay's (each parser's bits come from its markers'
    places): none can drift from another. The order is the one the four-marker loop is written for: the two
    first markers mark more lines of the fixtures than the two last (those looked for again only once
    passed)."""
    from session_watcher.agents.claude_code import bulkparse

    assert bulkparse.MARKERS == MARKERS
    assert parse._MARKERS == MARKERS[1:3] == (transcript.USAGE, transcript.COMPACT)
    lines = [line for path in sorted(TRANSCRIPTS.glob("*.jsonl")) for line in path.read_bytes().split(b"\n")]
    often = sum(1 for line in lines if MARKERS[0] in line or MARKERS[1] in line)
    seldom = sum(1 for line in lines if MARKERS[2] in line or MARKERS[3] in line)
    assert often > 10 * seldom > 0, (often, seldom)


@pytest.mark.parametrize("marker", MARKERS)
def test_the_hooks_parser_and_replays_read_a_line_by_each_marker(marker: bytes) -> None:
    """The hooks' `parse_lines` spells the markers out (constants on the hooks' path): a line holding
    any one of `transcript.MARKERS` is parsed (braces around no JSON: bad), one holding none is not
    (its braces pass unread), and a bad line holding one is bad once: so replay's parse counts them
    (its line-by-line count of the lines it does not parse passes over the marked ones)."""
    from session_watcher.agents.claude_code import bulkparse

    # the marker in braces; the marker cut, in braces; the marker in no braces
    lines = [b"{" + marker + b"}", b"{" + marker[1:-1] + b"}", b"x" + marker]
    assert [transcript.parse_lines([line])[1] for line in lines] == [1, 0, 1]
    assert [bulkparse.parse_lines([line])[1] for line in lines] == [1, 0, 1]


def test_a_marker_after_the_last_newline_is_not_a_line(finders: tuple[markscan.Find, ...]) -> None:
    chunk = b'{"a":1}\n{"usage":2}\n{"usage":3'  # the last line is not complete yet
    assert list(markscan.marked_lines(chunk, finders, chunk.rfind(b"\n") + 1)) == [(8, 19, 2)]


def test_the_quoted_search_answers_as_bytes_find(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pure search of `"usage"` (re of `usage"`, then the quote before it) is bytes.find's."""
    monkeypatch.setattr(markscan, "simd_find", None)
    find = markscan.finder(b'"usage"')
    rng = random.Random(36)
    for _ in range(5000):
        hay = bytes(rng.choice(b'"usage\n') for _ in range(rng.randint(0, 40)))
        start, end = rng.randint(0, len(hay)), rng.randint(0, len(hay) + 2)
        assert find(hay, start, end) == hay.find(b'"usage"', start, end), (hay, start, end)


@pytest.mark.slow
def test_replay_and_the_report_without_stringzilla_print_what_they_print_with_it(tmp_path: Path) -> None:
    """Without the fast extra (stringzilla cannot be imported) the commands give the same JSON."""
    projects = tmp_path / "projects" / "-p"
    projects.mkdir(parents=True)
    for name in ("tool_heavy.jsonl", "short.jsonl", "subagent.jsonl"):
        shutil.copy(TRANSCRIPTS / name, projects / name)
    code = ("import sys\nif sys.argv[1] == 'pure':\n    sys.modules['stringzilla'] = None\n"
            "from session_watcher.core import markscan\n"
            "assert (markscan.simd_find is None) == (sys.argv[1] == 'pure')\n"
            "sys.argv[1:2] = []\nfrom session_watcher.cli import run\nrun()\n")

    def out(how: str, *args: str) -> object:
        env = dict(os.environ, SESSION_WATCHER_HOME=str(tmp_path / f"home-{how}"))
        proc = subprocess.run([sys.executable, "-c", code, how, *args], capture_output=True, env=env, timeout=120,
                              check=False)
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        if isinstance(doc, dict):
            doc.pop("generatedAt", None)  # the report's clock field
        return doc

    for args in (("replay", str(projects / "tool_heavy.jsonl"), "--json", "--cwd", str(tmp_path)),
                 ("report", "--json", "--projects", str(tmp_path / "projects"))):
        assert out("pure", *args) == out("fast", *args), args


def test_the_counter_answers_as_bytes_count() -> None:
    """stringzilla's count of the patterns parse_chunk counts, bounds included; none without it."""
    rng = random.Random(37)
    for pattern in (b"\n", b"}\n", b"\n{"):
        count = markscan.counter(pattern)
        assert count is not None, "stringzilla (the fast extra) is not installed"
        for _ in range(3000):
            hay = bytes(rng.choice(b"{}\nx") for _ in range(rng.randint(0, 30)))
            start, end = rng.randint(0, len(hay)), rng.randint(0, len(hay) + 2)
            assert count(hay, start, end) == hay.count(pattern, start, end), (hay, pattern, start, end)


def test_no_counter_without_stringzilla(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(markscan, "simd_count", None)
    assert markscan.counter(b"\n") is None
