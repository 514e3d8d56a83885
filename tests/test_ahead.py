"""`replay`'s two-core parse (state.ahead): the same state, trace and bad-line count as the
one-process fold, with the child's chunks really used and this process parsing while it waits; a
child that is gone changes nothing; only where a core is idle and the file is large."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import Any

import pytest

from session_watcher.agents import agent_for_head
from session_watcher.base import config, sysos
from session_watcher.core import engine
from session_watcher.core.status import status_document
from session_watcher.state import ahead as ahead_mod
from session_watcher.state import pool, session
from session_watcher.state import reader as reader_mod
from session_watcher.state.ahead import Ahead, Planned, plan, worth_forking
from session_watcher.state.reader import CHUNK, WHOLE_READ, read_new

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
ROLLOUT = Path(__file__).parent / "fixtures" / "codex" / "rollout-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl"
CFG = config.merge()


def big_session(path: Path, chunks: float = 4.5) -> None:
    """Real sessions' lines, copied with distinct message, request and tool ids to `chunks` chunks,
    with a broken line early on and a line longer than a chunk near the end."""
    src = [p.read_bytes() for p in sorted(FIXTURES.glob("*.jsonl")) if p.stat().st_size > 1_000_000]
    out: list[bytes] = []
    size, k = 0, 0
    while size < chunks * CHUNK:
        for data in src:
            copy = data.replace(b'"msg_', b'"msg_%d' % k).replace(b'"req_', b'"req_%d' % k)
            copy = copy.replace(b"toolu_", b"toolu_%d" % k)
            out.append(copy)
            size += len(copy)
            k += 1
            if k == 2:
                out.append(b'{"type":"assistant","message":{"usage":\n')  # broken
            if size > (chunks - 1) * CHUNK and size - len(copy) <= (chunks - 1) * CHUNK:  # skipped, usage kept
                out.append(b'{"type":"progress","data":"' + b"x" * (CHUNK + 10) + b'"}\n')
    path.write_bytes(b"".join(out))


def fold(path: Path, reader: Any = None) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    state = engine.new_state(path.stem)
    trace: list[dict[str, Any]] = []
    state, _, done = session.sync(state, str(path), CFG, float("inf"), trace=trace, whole=True, reader=reader)
    assert done
    return status_document(state, CFG), trace, state["bad"]


def planned(path: Path, most: int | None = None) -> list[Planned] | None:
    """`plan` of `path` through an open of its own (`most`: the queue's size, default the pool's)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return plan(str(path), fd) if most is None else plan(str(path), fd, most=most)
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """big_session's 4.5 chunks, written once a module: the tests only read it."""
    path = tmp_path_factory.mktemp("ahead") / "big.jsonl"
    big_session(path)
    return path


@pytest.fixture(scope="module")
def big_one(big: Path) -> tuple[dict[str, Any], list[dict[str, Any]], int]:
    """The one-process fold of `big`, once a module (compared, never changed)."""
    return fold(big)


def two_cores(path: Path) -> Ahead:
    fd = os.open(path, os.O_RDONLY)
    chunks = plan(str(path), fd)
    assert chunks is not None
    return Ahead(str(path), agent_for_head(b"{}"), chunks, fd)


@pytest.mark.slow
def test_two_processes_fold_to_the_same_document(big: Path, big_one: Any, alone: None) -> None:
    path, one = big, big_one
    with two_cores(path) as reader:
        assert reader.pid  # a second process is parsing
        planned = len(reader.chunks)
        two = fold(path, reader)
        taken = reader.taken
    assert planned >= 3  # up to the over-long line; the fold reads on from there alone
    assert taken >= 1  # the child's events were used, not parsed again here
    assert two == one
    doc, trace, bad = one
    assert bad == 2  # the broken line and the over-long one
    assert len(trace) == doc["calls"] > 1000


@pytest.mark.slow
def test_this_process_parses_what_the_child_has_not_reached(tmp_path: Path, alone: None,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A child that does not get on (held here before it parses) keeps only the chunk it took, and
    this process parses every other one meanwhile; once the child goes on, its chunk comes back."""
    path = tmp_path / "big.jsonl"
    big_session(path, 5.5)
    one = fold(path)
    parent = os.getpid()
    held, let_go = os.pipe()
    real = Ahead._parse

    def gated(self: Ahead, k: int) -> tuple[list[Any], int]:
        if os.getpid() != parent:
            os.read(held, 1)  # the child waits to be let go
        return real(self, k)

    monkeypatch.setattr(Ahead, "_parse", gated)
    try:
        with two_cores(path) as reader:
            last = len(reader.chunks) - 1
            got = reader._events(last)
            assert len(reader.mine) >= last - 1  # every chunk but the last and the child's, parsed here
            reader.mine[last] = got
            os.write(let_go, b"x" * len(reader.chunks))
            two = fold(path, reader)
            assert reader.taken <= 1
    finally:
        os.close(held)
        os.close(let_go)
    assert last >= 3
    assert two == one


@pytest.mark.slow
def test_a_child_that_is_gone_changes_nothing(big: Path, big_one: Any, alone: None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A child killed before it handed on any chunk (held before its first parse, so that however
    fast it runs, none is in): every chunk is parsed here, the document the same."""
    path, one = big, big_one
    parent = os.getpid()
    held, never = os.pipe()
    real = Ahead._parse

    def gated(self: Ahead, k: int) -> tuple[list[Any], int]:
        if os.getpid() != parent:
            os.read(held, 1)  # nothing is ever written: the child waits here until it is killed
        return real(self, k)

    monkeypatch.setattr(Ahead, "_parse", gated)
    try:
        with two_cores(path) as reader:
            os.kill(reader.pid, signal.SIGKILL)
            os.waitpid(reader.pid, 0)
            reader.pid = 0
            two = fold(path, reader)
            assert reader.taken == 0
    finally:
        os.close(held)
        os.close(never)
    assert two == one


@pytest.mark.slow
def test_a_result_cut_short_is_parsed_here(big: Path, big_one: Any, alone: None) -> None:
    """A child that ended in the middle of writing a result (its header or its events cut short):
    the chunk is parsed here, nothing half-read is decoded."""
    path, one = big, big_one
    for cut in (b"\x00" * 4, b"\x00" * 5, b"\x00" * 4 + (100).to_bytes(8, "little") + b"\x80" * 10):
        with two_cores(path) as reader:
            os.kill(reader.pid, signal.SIGKILL)
            os.waitpid(reader.pid, 0)
            reader.pid = 0
            os.close(reader.pipe)
            reader.pipe, w = os.pipe()
            os.write(w, cut)  # chunk 0's header, then the child is gone
            os.close(w)
            os.read(reader.queue, 4)  # chunk 0 was the child's
            assert fold(path, reader) == one
            assert reader.taken == 0


@pytest.mark.slow
def test_no_child_from_a_process_running_a_thread(big: Path, big_one: Any, alone: None) -> None:
    """With another thread running (the live page's server, say) nothing forks: this process takes
    every chunk from the queue itself, with the same result."""
    import threading

    path, one = big, big_one
    release = threading.Event()
    other = threading.Thread(target=release.wait, daemon=True)
    other.start()
    try:
        with two_cores(path) as reader:
            assert reader.pid == 0
            assert fold(path, reader) == one
            assert reader.taken == 0
    finally:
        release.set()
        other.join()


@pytest.mark.slow
def test_a_fold_that_fails_leaves_no_child(big: Path, alone: None) -> None:
    """The fold raising (the user's ^C mid-replay, say) stops the child: killed, waited for."""
    reader = two_cores(big)
    pid = reader.pid
    assert pid

    def fold_interrupted() -> None:
        with reader:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        fold_interrupted()
    with pytest.raises(ChildProcessError):  # neither running nor a zombie
        os.waitpid(pid, os.WNOHANG)


@pytest.mark.slow
def test_replay_forks_where_a_core_is_idle_and_not_for_a_rollout(big: Path, alone: None,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """replay of a large Claude Code transcript goes through the child (the same document and trace
    as one process); a Codex rollout, read by its own stateful decoder, gets none."""
    from session_watcher.sessions import replay as rp

    path = big
    alone_doc = rp.replay(str(path))
    plain = rp.fold(str(ROLLOUT))[0]["engine"]["calls"]
    made: list[Ahead | None] = []
    real = ahead_mod.ahead

    def counted(*args: Any) -> Ahead | None:
        got = real(*args)
        made.append(got)
        return got

    monkeypatch.setattr(ahead_mod, "worth_forking", lambda: True)
    monkeypatch.setattr(rp, "TWO_CORES_BYTES", 0)  # the rollout is small: asked all the same
    monkeypatch.setattr(ahead_mod, "ahead", counted)
    assert rp.replay(str(path)) == alone_doc
    assert made[0] is not None
    assert made[0].taken >= 1
    assert rp.fold(str(ROLLOUT))[0]["engine"]["calls"] == plain > 50
    assert made[1] is None


def test_the_plan_walks_as_whole_reads_do(big: Path) -> None:
    """The plan's cursors and chunks are read_new(whole=True)'s, read after read, up to an over-long
    line (the fold reads on from there)."""
    path = big
    chunks = planned(path)
    assert chunks is not None
    before: dict[str, Any] | None = None
    for c in chunks:
        lines, after, skipped = read_new(str(path), before, whole=True)
        assert (c.before, c.after, skipped) == (before, after, 0)
        with path.open("rb") as fh:
            fh.seek(c.start)
            assert fh.read(c.size) == lines[0][:lines[0].rfind(b"\n") + 1]  # the chunk's complete lines
        before = after
    assert read_new(str(path), before, whole=True)[2] == 1  # the over-long line is where the plan stopped
    short = FIXTURES / "short.jsonl"
    assert planned(short) is None  # one chunk: nothing to share


def test_the_plan_reads_back_past_a_long_line_not_the_chunk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk that ends inside a line longer than the plan's probe (but shorter than a chunk): the
    last newline is found by reading back a block at a time, never by reading the whole chunk, and
    the cursors are still those of whole reads."""
    path = tmp_path / "long.jsonl"
    lines = b"".join(b'{"type":"user","n":%9d}\n' % k for k in range(WHOLE_READ // 30))  # 30 bytes each
    before_long = WHOLE_READ - 2 * reader_mod.SALVAGE_BYTES  # the first chunk ends in the long line's middle
    long = b'{"type":"progress","data":"' + b"x" * (3 * reader_mod.SALVAGE_BYTES) + b'"}\n'
    path.write_bytes(lines[:before_long - 30] + b"{}" + b" " * 27 + b"\n" + long + lines * 2)
    read: list[int] = []
    pread = os.pread

    def counted(fd: int, n: int, at: int) -> bytes:
        read.append(n)
        return pread(fd, n, at)

    monkeypatch.setattr(os, "pread", counted)
    monkeypatch.setattr(sysos, "pread", counted)  # the reader's
    chunks = planned(path)
    assert chunks is not None
    assert max(read) <= reader_mod.SALVAGE_BYTES  # no chunk read whole
    assert WHOLE_READ - chunks[1].start > reader_mod.SALVAGE_BYTES  # the cut: far back
    before: dict[str, Any] | None = None
    for c in chunks:
        assert read_new(str(path), before, whole=True)[1] == c.after
        before = c.after


def copies(path: Path, size: int) -> None:
    """Real sessions' lines, copied with distinct message, request and tool ids to `size` bytes."""
    src = [p.read_bytes() for p in sorted(FIXTURES.glob("*.jsonl")) if p.stat().st_size > 1_000_000]
    out: list[bytes] = []
    k = 0
    while sum(map(len, out)) < size:
        copy = src[k % len(src)].replace(b'"msg_', b'"msg_%d' % k).replace(b'"req_', b'"req_%d' % k)
        out.append(copy.replace(b"toolu_", b"toolu_%d" % k))
        k += 1
    path.write_bytes(b"".join(out))


def test_the_plan_covers_a_file_of_more_reads_than_the_queue_holds(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of the plan is a whole fold's read (cache-sized, smaller than a hook's most); a file
    of more of them than the queue holds (`most`) is cut in `most` larger chunks, to its end, and
    folds to the same document, trace and bad lines as without the plan."""
    path = tmp_path / "s.jsonl"
    copies(path, 6 * WHOLE_READ)
    size = path.stat().st_size
    small, large = planned(path), planned(path, most=3)
    assert small is not None
    assert large is not None
    assert WHOLE_READ < CHUNK
    assert len(small) >= 6
    assert max(c.size for c in small) <= WHOLE_READ
    assert len(large) == 3
    assert max(c.size for c in large) < size // 2
    for chunks in (small, large):
        assert [c.start for c in chunks[1:]] == [c.start + c.size for c in chunks[:-1]]
        assert chunks[-1].after["offset"] == chunks[-1].start + chunks[-1].size == size  # the whole file
    monkeypatch.setattr(pool, "fork", lambda _name: None)  # no child: this process parses each
    fd = os.open(path, os.O_RDONLY)
    with Ahead(str(path), agent_for_head(b"{}"), large, fd) as reader:
        two = fold(path, reader)
    assert two == fold(path)
    assert two[0]["calls"] > 100


def test_a_line_longer_than_the_plans_unit_stays_in_the_plan(tmp_path: Path) -> None:
    """A line longer than a whole fold's read but within a hook's most is a chunk's line (the fold
    keeps it, as it did with whole reads of a hook's most), not where the plan stops."""
    path = tmp_path / "l.jsonl"
    copies(path, 2 * WHOLE_READ)
    data = path.read_bytes()
    at = data.index(b"\n", WHOLE_READ // 2) + 1
    long = b'{"type":"progress","data":"' + b"x" * (2 * WHOLE_READ) + b'"}\n'
    path.write_bytes(data[:at] + long + data[at:])
    chunks = planned(path)
    assert chunks is not None
    assert chunks[-1].after["offset"] == path.stat().st_size
    assert any(c.start <= at and at + len(long) <= c.start + c.size for c in chunks)
    assert fold(path)[2] == 0  # nothing skipped


def test_two_cores_only_where_one_is_idle() -> None:
    assert worth_forking((3.0, 0.4, 1), 2)
    assert not worth_forking((3.0, 0.4, 1), 1)  # one core
    assert not worth_forking((3.0, 0.4, 2), 2)  # another process running now
    assert not worth_forking((60.0, 0.4, 1), 2)  # processes waited for a core of late
    assert worth_forking((3.0, 1.8, 1), 2)  # a minute's average of this replay's own runs: the pressure decides
    assert worth_forking((None, 1.4, 1), 2)  # no pressure kept: the average decides
    assert not worth_forking((None, 1.6, 1), 2)
    assert worth_forking((10.0, 3.0, 3), 4)
    pressure, average, running = ahead_mod.machine_load()
    assert pressure is None or 0 <= pressure <= 100
    assert average >= 0
    assert running >= 1  # this process runs


def test_a_small_transcript_is_read_without_the_two_core_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                ) -> None:
    """Below TWO_CORES_BYTES replay neither imports state.ahead nor asks it (its import is a cost a
    short replay's start would pay for nothing)."""
    from session_watcher.sessions import replay as rp

    asked: list[str] = []
    monkeypatch.setattr(ahead_mod, "ahead", lambda path, _agent_of: asked.append(path))
    small = FIXTURES / "short.jsonl"
    assert small.stat().st_size < rp.TWO_CORES_BYTES
    rp.fold(str(small))
    assert asked == []
    big = tmp_path / "big.jsonl"
    filler = b'{"type":"progress","data":"' + b"x" * (1 << 20) + b'"}\n'
    big.write_bytes(small.read_bytes() + filler * (rp.TWO_CORES_BYTES // len(filler) + 1))
    assert rp.fold(str(big))[0]["engine"] == rp.fold(str(small))[0]["engine"]
    assert asked == [str(big)]
