"""The session page from one read of its transcript: one open, the same model as reading it three
times (its own reading, the replay's, the closed-loop backtest's), from the first chunk what the
fold and the marks need before it."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path
from typing import Any

import pytest

from session_watcher.base import sysos
from session_watcher.reports import session_page_data as spd
from session_watcher.reports.session_marks import add_marks
from session_watcher.sessions.replay import cwd_in_head, transcript_cwd

FIXTURES = Path(__file__).parent / "fixtures"
ALL = sorted(p for p in FIXTURES.rglob("*.jsonl") if "subagents" not in p.parts)
S258 = FIXTURES / "transcripts" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl"
NOW = 1_800_000_000.0  # the restart saving is priced at a time: the same for both models compared


def three_reads(path: str) -> dict[str, Any]:
    """The page's model as it was made before one read: the page's own reading of the transcript,
    the replay's (its own reader and parser), the backtest's (`run_one`: read and parsed again)."""
    feed = spd.TranscriptFeed(path)
    feed.read()
    final, trace, _cfg = spd.story_of(path, now=NOW)
    model = feed.builder.model(trace, final, spd.page_backtest(path))
    add_marks(model, path)
    return model


class Opens:
    """Counts the opens of one file by path (os.open, open) and the bytes read through them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.path = os.path.realpath(path)
        self.opens = 0
        self.fds: set[int] = set()
        self.read = 0
        real_open, real_os_open, real_pread, real_read = builtins.open, os.open, os.pread, os.read
        real_preadv = os.preadv

        def mine(p: object) -> bool:
            return isinstance(p, str | os.PathLike) and os.path.realpath(p) == self.path

        def os_open(p: Any, *a: Any, **k: Any) -> int:
            fd = real_os_open(p, *a, **k)
            if mine(p):
                self.opens += 1
                self.fds.add(fd)
            return fd

        def py_open(p: Any, *a: Any, **k: Any) -> Any:
            self.opens += mine(p)
            return real_open(p, *a, **k)

        def pread(fd: int, n: int, at: int) -> bytes:
            got = real_pread(fd, n, at)
            self.read += len(got) if fd in self.fds else 0
            return got

        def read(fd: int, n: int) -> bytes:
            got = real_read(fd, n)
            self.read += len(got) if fd in self.fds else 0
            return got

        def preadv(fd: int, bufs: list[Any], at: int) -> int:
            got = real_preadv(fd, bufs, at)
            self.read += got if fd in self.fds else 0
            return got

        monkeypatch.setattr(builtins, "open", py_open)
        for module in (os, sysos):  # the page's calls and the reader's
            monkeypatch.setattr(module, "open", os_open)
            monkeypatch.setattr(module, "pread", pread)
            monkeypatch.setattr(module, "read", read)
            monkeypatch.setattr(module, "preadv", preadv)


def test_the_page_of_a_real_session_opens_its_transcript_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """A real session with a story and a closed-loop backtest: one open, each byte read once (the
    reader's 4 kB checks of the head and before each cursor, a few a whole read, and the 512 bytes
    that tell a Codex rollout, aside: before, three reads of it)."""
    from session_watcher.state.reader import WHOLE_READ

    counted = Opens(monkeypatch, S258)
    model = spd.load_model(str(S258), now=NOW)
    assert model["storyError"] is None
    assert model["backtest"] is not None
    assert model["story"]
    assert counted.opens == 1
    size = S258.stat().st_size
    assert size <= counted.read <= size + 512 + 4 * 4096 * (size // WHOLE_READ + 2)


def test_a_transcript_of_many_chunks_is_still_one_open(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Chunks past the first come through the same open (here six of 128 kB; none of its lines is
    longer), and the model is the three reads' own."""
    from session_watcher.state import reader

    rest = (reader.read_new.__defaults__ or ())[1:]  # max_bytes first
    monkeypatch.setattr(reader.read_new, "__defaults__", (128 << 10, *rest))
    monkeypatch.setattr(spd, "PAGE_BACKTEST_MAX", 1 << 30)
    tr = tmp_path / "projects" / "p" / S258.name
    tr.parent.mkdir(parents=True)
    lines = S258.read_bytes().splitlines(keepends=True)
    tr.write_bytes(b"".join(lines[:400]))
    assert tr.stat().st_size > 2 * (128 << 10)
    want = three_reads(str(tr))
    counted = Opens(monkeypatch, tr)
    got = spd.load_model(str(tr), now=NOW)
    assert counted.opens == 1
    assert counted.read > 3 * (128 << 10)
    assert got == want


def test_a_rollout_page_is_the_three_reads_page() -> None:
    """A Codex rollout: its own decoder folds it; the backtest reads it again (its events are not
    the Claude Code parser's); the model as before."""
    path = str(next(p for p in ALL if p.parent.name == "codex"))
    assert spd.load_model(path, now=NOW) == three_reads(path)


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name[:12]}")
def test_the_page_model_is_the_three_reads_model(path: Path) -> None:
    """Every fixture transcript: the model from one read equals the one from three, figure for
    figure (rows, health, story, backtest, marks)."""
    want = three_reads(str(path))
    got = spd.load_model(str(path), now=NOW)
    assert json.dumps(got, sort_keys=True) == json.dumps(want, sort_keys=True)
    assert spd.load_model(str(path), with_story=False)["rows"] == want["rows"]


def test_an_escaped_record_type_still_reaches_the_builder(tmp_path: Path) -> None:
    """The page reads only lines that can hold a record of its kinds: a type written with escapes
    (`\\u0075ser`) is one; a line with neither a kind's name nor an escape is not."""
    tr = tmp_path / "t.jsonl"
    recs = [
        '{"type":"\\u0075ser","timestamp":"2026-01-01T00:00:00Z","sessionId":"s","message":{"content":"hello"}}',
        '{"type":"progress","timestamp":"2026-01-01T00:00:05Z","data":{}}',
        '{"type":"assistant","timestamp":"2026-01-01T00:00:09Z","requestId":"r","message":{"id":"m","model":"x",'
        '"usage":{"input_tokens":5,"output_tokens":1},"content":[]}}',
    ]
    tr.write_text("\n".join(recs) + "\n")
    model = spd.load_model(str(tr), with_story=False)
    assert model["turns"] == [{"n": 1, "ts": model["t0"], "text": "hello"}]
    assert model["sessionId"] == "s"
    assert model["t1"] - model["t0"] == 9
    feed = spd.TranscriptFeed(str(tr))
    feed.read()
    assert {k: v for k, v in model.items() if k not in ("holds", "restarts")} == feed.builder.model()


def cwd_line(cwd: str) -> str:
    return json.dumps({"type": "user", "cwd": cwd})


@pytest.mark.parametrize(("lines", "tail", "decided"), [
    (["{}"] * 150 + [cwd_line("/a")] + ["{}"] * 10, "", True),  # found
    (["{}"] * 250 + [cwd_line("/late")], "", True),  # past 201 lines, in the first 64 kB: found
    (["{" + " " * 400 + "}"] * 250 + [cwd_line("/late")], "", True),  # past 201 lines and 64 kB: None
    (["{" + " " * 400 + "}"] * 200 + [cwd_line("/in")], "", True),  # past 64 kB, in 201 lines: found
    (["{}"] * 250, cwd_line("/tail"), False),  # all lines in 64 kB read: undecided before the last
    (["{}"] * 10, "", True),  # the whole file, none
    (["{}"] * 10, cwd_line("/tail"), False),  # a last line without its newline: transcript_cwd reads it
    (['{"payload":{"cwd":"/codex"}}'], "", True),  # a rollout's session_meta
])
def test_the_folder_from_the_first_chunk_is_transcript_cwds(tmp_path: Path, lines: list[str], tail: str,
                                                              decided: bool) -> None:
    """Where the first chunk's lines decide it, the same folder `transcript_cwd` finds; else undecided."""
    tr = tmp_path / "t.jsonl"
    tr.write_text("".join(line + "\n" for line in lines) + tail)
    whole = not tail
    known, cwd = cwd_in_head([line.encode() for line in lines], whole)
    assert known is decided
    if known:
        assert cwd == transcript_cwd(str(tr))
    with spd.PageRead(str(tr)) as read:
        assert read.cwd == transcript_cwd(str(tr))


def test_a_story_that_fails_midway_leaves_the_whole_transcripts_rows(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    """The fold read part of the transcript and failed: the page reads it again into its builder and
    shows every row, with the story's error."""
    from session_watcher.sessions import replay
    from session_watcher.state import reader

    rest = (reader.read_new.__defaults__ or ())[1:]  # max_bytes first
    monkeypatch.setattr(reader.read_new, "__defaults__", (128 << 10, *rest))
    tr = tmp_path / S258.name
    tr.write_bytes(b"".join(S258.read_bytes().splitlines(keepends=True)[:400]))

    def failing(path: str, _cwd: str | None, _trace: Any, read: spd.PageRead) -> Any:
        read.read(path, None)  # the first chunk only
        raise RuntimeError("midway")

    want = spd.load_model(str(tr), with_story=False)["rows"]
    monkeypatch.setattr(replay, "fold_read", failing)
    model = spd.load_model(str(tr), now=NOW)
    assert model["storyError"] == "RuntimeError: midway"
    assert len(model["rows"]) > 0
    assert model["rows"] == want


@pytest.mark.parametrize("before", [0, 450])
def test_a_handoff_note_among_the_first_lines_marks_the_restart_in(monkeypatch: pytest.MonkeyPatch,
                                                                     tmp_path: Path, before: int) -> None:
    """A session that started from another's handoff note: the page's "in" restart, found in the
    lines as they were read (one open); a note past the first NOTE_LINES lines is none."""
    from session_watcher.core import handoff

    note = handoff.header("parent-1", "2026-12-01 10:00 UTC", 50_000, 1.5) + "\nx"
    filler = {"type": "progress", "timestamp": "2026-12-01T10:04:00.000Z", "data": {}}
    recs = [filler] * before + [
        {"type": "attachment", "timestamp": "2026-12-01T10:05:00.000Z",
         "attachment": {"type": "hook_additional_context", "content": [note], "hookName": "SessionStart"}},
        {"type": "user", "sessionId": "child", "timestamp": "2026-12-01T10:05:01.000Z",
         "message": {"role": "user", "content": "carry on"}},
    ]
    tr = tmp_path / "child.jsonl"
    tr.write_text("".join(json.dumps(r) + "\n" for r in recs))
    want = three_reads(str(tr))
    assert want["restarts"] == ([{"ts": want["t0"], "kind": "in", "other": "parent-1"}] if before == 0 else [])
    counted = Opens(monkeypatch, tr)
    assert spd.load_model(str(tr), now=NOW) == want
    assert counted.opens == 1


CODEX = [p for p in ALL if p.parent.name == "codex"]


@pytest.mark.parametrize("path", CODEX, ids=lambda p: p.name[8:20])
def test_a_rollout_page_draws_its_calls_and_grades_as_status_does(path: Path) -> None:
    """A Codex rollout's page: a row per call of the replay, its compactions, the session's id and
    the health `status` gives (the page read none of a rollout's lines: no row, `Session session`,
    health A 100 where `status` said 89)."""
    from session_watcher.sessions.replay import replay

    final = replay(str(path))[0]
    for model in (spd.load_model(str(path), now=NOW), spd.load_model(str(path), with_story=False),
                  three_reads(str(path))):
        calls = [r for r in model["rows"] if r["kind"] == "call"]
        assert len(calls) == final["calls"]
        assert model["sessionId"] == final["sessionId"]
        assert len(model["compactions"]) == final["health"]["compactionCount"]
        assert model["t1"] > model["t0"]
        if model["storyAvailable"]:  # the window the replay knows (without it, guessed from the model)
            assert model["health"] == {**final["health"], "why": spd.health_why(final["health"])}
