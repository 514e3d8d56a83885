"""`replay`'s two-process parse (state.prefetch): the same state, trace and bad-line count as the
one-process fold, with the child's chunks really used; a child that is gone changes nothing."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from session_watcher.base import config
from session_watcher.core import engine
from session_watcher.core.status import status_document
from session_watcher.state import session
from session_watcher.state.prefetch import ForkedParser
from session_watcher.state.reader import CHUNK, read_new

pytestmark = pytest.mark.usefixtures("alone")  # no fork while another thread runs

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
CFG = config.merge()


def big_session(path: Path) -> None:
    """Real sessions' lines, copied with distinct message, request and tool ids to three and a half
    chunks, with a broken line and a line longer than a chunk on the way."""
    src = [p.read_bytes() for p in sorted(FIXTURES.glob("*.jsonl")) if p.stat().st_size > 1_000_000]
    out: list[bytes] = []
    size, k = 0, 0
    while size < 3.5 * CHUNK:
        for data in src:
            copy = data.replace(b'"msg_', b'"msg_%d' % k).replace(b'"req_', b'"req_%d' % k)
            copy = copy.replace(b'toolu_', b'toolu_%d' % k)
            out.append(copy)
            size += len(copy)
            k += 1
            if k == 2:
                out.append(b'{"type":"assistant","message":{"usage":\n')  # broken
            if k == 5:  # longer than a chunk: skipped, its usage kept from both ends
                out.append(b'{"type":"progress","data":"' + b"x" * (CHUNK + 10) + b'"}\n')
    path.write_bytes(b"".join(out))


def fold(path: Path, parse: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    state = engine.new_state(path.stem)
    trace: list[dict[str, Any]] = []
    state, _, done = session.sync(state, str(path), CFG, float("inf"), trace=trace, parse=parse)
    assert done
    return status_document(state, CFG), trace, state["bad"]


def test_two_processes_fold_to_the_same_document(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big_session(path)
    one = fold(path)
    with ForkedParser(str(path)) as parse:
        assert parse.pid  # a second process is parsing
        two = fold(path, parse)
        taken = parse.taken
    assert taken >= 2  # the child's events were used, not just parsed again here
    assert two == one
    doc, trace, bad = one
    assert bad == 2  # the broken line and the over-long one
    assert len(trace) == doc["calls"] > 1000


def test_a_child_that_is_gone_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    big_session(path)
    one = fold(path)
    with ForkedParser(str(path)) as parse:
        os.kill(parse.pid, signal.SIGKILL)
        two = fold(path, parse)
        assert parse.taken == 0
        assert parse.pid == 0  # waited for
    assert two == one


def test_a_fold_that_fails_leaves_no_child(tmp_path: Path) -> None:
    """The fold raising (the user's ^C mid-replay, say) stops the second parser: killed, waited for."""
    path = tmp_path / "big.jsonl"
    big_session(path)
    parse = ForkedParser(str(path))
    pid = parse.pid
    assert pid

    def fold_interrupted() -> None:
        with parse:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fold_interrupted()
    with pytest.raises(ChildProcessError):  # neither running nor a zombie
        os.waitpid(pid, os.WNOHANG)


def test_a_small_file_is_parsed_in_one_process(tmp_path: Path) -> None:
    path = FIXTURES / "short.jsonl"
    with ForkedParser(str(path)) as parse:
        assert parse.pid == 0
        assert fold(path, parse) == fold(path)


def test_the_childs_cursor_only_reads_walk_as_the_parents(tmp_path: Path) -> None:
    """read_new(split=False), which reads a chunk's tail only, moves the cursor exactly as a full read
    does: lines of every length, a line longer than the chunk, a last line without its newline."""
    path = tmp_path / "t.jsonl"
    lengths = [10, 70_000, 5, 300_000, 0, 64 << 10, (64 << 10) - 1, 1 << 20, 3, 200_000]
    path.write_bytes(b"".join(b"x" * n + b"\n" for n in lengths) + b"tail without newline")
    for max_bytes in (100_000, 300_000, 1 << 20):
        full: dict[str, Any] | None = None
        cursor: dict[str, Any] | None = None
        steps = 0
        while True:
            lines, after_full, skipped = read_new(str(path), full, max_bytes)
            some, after, skipped_too = read_new(str(path), cursor, max_bytes, split=False)
            assert (after, skipped_too, bool(some)) == (after_full, skipped, bool(lines))
            if after_full == full:
                break
            full, cursor, steps = after_full, after, steps + 1
        assert full is not None
        assert full["offset"] == path.stat().st_size - len(b"tail without newline")
        assert steps >= 3
