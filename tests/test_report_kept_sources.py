"""A warm report whose walk lists no folder again takes the last run's sources whole
(`Index.kept_sources`, `reports/kept.py`): no row of the files table loaded, no listing's sources
decoded, only the files in use `stat`ed. What it shows is a cold build's: a grown file, a file
added or removed (its folder's mtime moved), a file gone under a folder whose mtime did not move,
a run over other roots between, every agent's sources together."""

from __future__ import annotations

import json
import os
import shutil
from array import array
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.source import Source
from session_watcher.reports import index as index_module
from session_watcher.reports.collect import run_report_json
from session_watcher.reports.kept import KeptFacts, KeptLive, Order, Sources, decode, encode
from tests.test_report_index import call_line
from tests.test_report_warm import AE, FA, FIXTURES, NEW, age, copy_session

if TYPE_CHECKING:
    import sqlite3
    from pathlib import Path

DAY = 86400.0
ALL_FILES = "SELECT id, size, mtime_ns, offset, path FROM files"


class Traced:
    """Every SQL statement the report's index runs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sql: list[str] = []
        opened = index_module.Index._open_file

        def open_file(index: index_module.Index) -> sqlite3.Connection:
            conn = opened(index)
            conn.set_trace_callback(self.sql.append)
            return conn

        monkeypatch.setattr(index_module.Index, "_open_file", open_file)

    def run(self, roots: list[Path] | None, index: Path) -> dict[str, Any]:
        self.sql.clear()
        doc: dict[str, Any] = json.loads(run_report_json(None if roots is None else [str(r) for r in roots],
                                                         str(index), now=1.8e9, utc_offset=3600.0))
        return doc


def cold(roots: list[Path] | None, tmp_path: Path, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run_report_json(None if roots is None else [str(r) for r in roots],
                                                     str(tmp_path / f"cold-{name}.sqlite3"), now=1.8e9,
                                                     utc_offset=3600.0))
    doc.pop("index")
    return doc


def figures(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "index"}


def grow(path: Path, mid: str) -> None:
    with path.open("ab") as fh:
        fh.write(call_line(mid, 30_000, 700, ts="2026-02-14T12:00:00.000Z"))


@pytest.fixture
def quiet(tmp_path: Path) -> Path:
    """Two projects quiet for two days; AE's files changed an hour ago (the session in use)."""
    root = tmp_path / "projects"
    copy_session(AE, root / "-home-a")
    copy_session(FA, root / "-home-a")
    copy_session("short", root / "-home-b")
    age(root, 2 * DAY)
    for path in [root / "-home-a" / f"{AE}.jsonl", *(root / "-home-a" / AE).rglob("*.jsonl")]:
        age(path, 3600.0)
    return root


def test_a_grown_file_is_read_from_the_kept_sources_without_loading_every_file(
    quiet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    traced = Traced(monkeypatch)
    index = tmp_path / "i.sqlite3"
    traced.run([quiet], index)
    assert ALL_FILES in traced.sql  # the first run lists and loads everything
    traced.run([quiet], index)
    for k in range(3):
        grow(quiet / "-home-a" / f"{AE}.jsonl", f"msg_grown_{k}")
        doc = traced.run([quiet], index)
        assert doc["index"]["appended"] == 1
        assert ALL_FILES not in traced.sql  # the kept sources: the files table not loaded
        # of the listings' sources, only the root's (its project folders) asked for
        asked = [q for q in traced.sql if "FROM folders WHERE path IN" in q]
        assert len(asked) == 1
        assert str(quiet) + "/" not in asked[0]
        assert "-home-a" not in asked[0]
        assert figures(doc) == cold([quiet], tmp_path, f"grown{k}")
    again = traced.run([quiet], index)  # nothing changed since: the finished document as it was
    assert again["index"]["cached"] is True
    assert figures(again) == figures(doc)


def test_a_file_added_or_removed_is_listed_again(quiet: Path, tmp_path: Path) -> None:
    index = tmp_path / "i.sqlite3"
    traced_doc = run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0)
    assert NEW not in traced_doc
    copy_session("short", quiet / "-home-b", NEW)  # the project folder's mtime moves
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert NEW in {s["sessionId"] for s in doc["sessions"]}
    assert figures(doc) == cold([quiet], tmp_path, "added")
    grow(quiet / "-home-a" / f"{AE}.jsonl", "msg_after_add")
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert figures(doc) == cold([quiet], tmp_path, "added-grown")
    (quiet / "-home-a" / f"{FA}.jsonl").unlink()
    shutil.rmtree(quiet / "-home-a" / FA, ignore_errors=True)
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert FA not in {s["sessionId"] for s in doc["sessions"]}
    assert doc["index"]["dropped"] >= 1
    assert figures(doc) == cold([quiet], tmp_path, "removed")


def test_a_file_in_use_gone_under_a_folder_whose_mtime_did_not_move(quiet: Path, tmp_path: Path) -> None:
    """The folder's mtime set back (one tick of a coarse clock): the walk trusts the listing, the
    file's `stat` fails, it leaves, and the kept sources are dropped with it (the next run lists)."""
    index = tmp_path / "i.sqlite3"
    run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0)
    grow(quiet / "-home-a" / f"{AE}.jsonl", "msg_before_gone")
    run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0)
    folder = quiet / "-home-a"
    st = folder.stat()
    (folder / f"{AE}.jsonl").unlink()
    os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert doc["index"]["dropped"] == 1
    assert figures(doc) == cold([quiet], tmp_path, "gone")
    again = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert figures(again) == figures(doc)
    grow(sorted((folder / AE).rglob("*.jsonl"))[0], "msg_after_gone")  # its sub-agent file, in use
    later = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert figures(later) == cold([quiet], tmp_path, "gone-later")


def test_a_run_over_other_roots_between_is_no_kept_run(quiet: Path, tmp_path: Path) -> None:
    index = tmp_path / "i.sqlite3"
    run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0)
    inner = quiet / "-home-a"
    grow(inner / f"{AE}.jsonl", "msg_inner")
    run_report_json([str(inner)], str(index), now=1.8e9, utc_offset=3600.0)  # reads the grown file
    grow(inner / f"{AE}.jsonl", "msg_outer")
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert figures(doc) == cold([quiet], tmp_path, "other-roots")


def test_every_agents_sources_after_the_walks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without --projects: Claude Code's projects taken whole, Codex's rollouts listed after them."""
    from tests.codex_lines import FIXTURES as ROLLOUTS

    claude = tmp_path / "claude"
    codex = tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(claude))
    monkeypatch.setenv("CODEX_HOME", str(codex))
    copy_session(AE, claude / "projects" / "-home-a")
    copy_session("short", claude / "projects" / "-home-b")
    day = codex / "sessions" / "2026" / "07" / "01"
    day.mkdir(parents=True)
    rollout = sorted(ROLLOUTS.glob("rollout-*.jsonl"))[0]
    shutil.copy(rollout, day / rollout.name)
    age(claude, 2 * DAY)
    age(codex, 2 * DAY)
    age(claude / "projects" / "-home-a" / f"{AE}.jsonl", 3600.0)  # the session in use
    traced = Traced(monkeypatch)
    index = tmp_path / "i.sqlite3"
    first = traced.run(None, index)
    assert {s["agent"] for s in first["sessions"]} == {"claude-code", "codex"}
    traced.run(None, index)
    for k in range(2):
        grow(claude / "projects" / "-home-a" / f"{AE}.jsonl", f"msg_both_{k}")
        doc = traced.run(None, index)
        assert ALL_FILES not in traced.sql
        assert figures(doc) == cold(None, tmp_path, f"both{k}")


def sources_of(rows: list[tuple[str, str, str, bool, str | None]]) -> list[Source]:
    return [Source(*r) for r in rows]


def test_the_kept_columns_give_the_sources_back() -> None:
    srcs = sources_of([("/p/a/s1.jsonl", "s1", "a", False, None), ("/p/a/s1/subagents/x.jsonl", "s1", "a", True, None),
                       ("/p/b/r.jsonl", "t1", "b", False, "codex"), ("/p/a/s2.jsonl", "s2", "a", False, None)])
    facts = [(10, 1_700_000_000_000_000_000, 10), (0, 0, 0), (5, 2, 3), (7, 8, 9)]
    got, ids, sizes, mtimes, offsets = decode(encode(srcs, [4, 5, 6, 7], facts))
    assert list(got) == srcs
    assert [got[k] for k in range(4)] == srcs
    assert got[1:3] == srcs[1:3]
    assert list(ids) == [4, 5, 6, 7]
    assert list(zip(sizes, mtimes, offsets, strict=True)) == facts
    assert got.counts()["s1"] == 2
    assert got.counts()["nobody"] == 0
    assert got.by_agent() == {"t1": "codex"}
    assert list(got.head(2).plus(srcs[2:])) == srcs
    empty, *rest = decode(encode([], [], []))
    assert list(empty) == []
    assert [list(column) for column in rest] == [[], [], [], []]


def test_the_kept_facts_asked_one_by_one_or_all_at_once() -> None:
    n = 100
    ids, sizes, mtimes, offsets = (array("q", [k * m + 1 for k in range(n)]) for m in (3, 5, 7, 11))
    facts = KeptFacts(ids, sizes, mtimes, offsets)
    facts[ids[5]] = (1, 2, 3)  # a file read this run: its new facts kept
    for k in range(n):  # past the first 16 asked, every one at once
        want = (1, 2, 3) if k == 5 else (sizes[k], mtimes[k], offsets[k])
        assert facts[ids[k]] == want
    assert len(facts) == n
    with pytest.raises(KeyError):
        KeptFacts(ids, sizes, mtimes, offsets)[-1]


def test_a_sessions_sources_asked_one_by_one_or_all_at_once() -> None:
    rows: list[tuple[str, str, str, bool, str | None]] = [
        (f"/p/{k % 7}/{k}.jsonl", f"s{k % 40}", str(k % 7), bool(k % 3), None) for k in range(200)]
    srcs = sources_of(rows)
    want: dict[str, list[Source]] = {}
    for s in srcs:
        want.setdefault(s.session, []).append(s)
    cols, *_ = decode(encode(srcs, range(200), [(0, 0, 0)] * 200))
    assert isinstance(cols, Sources)
    order = Order(cols)
    assert list(order) == list(want)
    for sid, sources in want.items():  # past the first 32 asked, every list is made at once
        assert order[sid] == sources
    assert dict(order.items()) == want
    with pytest.raises(KeyError):
        order["nobody"]


def test_the_fixtures_sessions_folded_once_more_show_the_same(tmp_path: Path) -> None:
    """A fixture session copied in under a new name into a quiet folder (its mtime moved) shows once."""
    root = tmp_path / "projects"
    copy_session(FA, root / "-home-a")
    age(root, 2 * DAY)
    index = tmp_path / "i.sqlite3"
    run_report_json([str(root)], str(index), now=1.8e9, utc_offset=3600.0)
    shutil.copy2(FIXTURES / f"{AE}.jsonl", root / "-home-a" / f"{AE}.jsonl")
    doc = json.loads(run_report_json([str(root)], str(index), now=1.8e9, utc_offset=3600.0))
    assert {s["sessionId"] for s in doc["sessions"]} == {FA, AE}
    assert figures(doc) == cold([root], tmp_path, "copied")


def test_a_kept_path_is_found_whole_in_the_kept_text() -> None:
    """`Sources.find` and `path` over the kept text: a path inside another (a prefix, a suffix, a
    middle) is not it; each one found at its own place, without a list of every path made."""
    rows: list[tuple[str, str, str, bool, str | None]] = [
        ("/p/a/s1.jsonl.bak", "s0", "a", False, None), ("/x/p/a/s1.jsonl", "s1", "a", False, None),
        ("/p/a/s1.jsonl", "s2", "a", False, None), ("/p/a/s1", "s3", "a", True, None),
        ("p/a/s1.jsonl", "s4", "a", False, None)]
    srcs = sources_of(rows)
    got, *_ = decode(encode(srcs, range(5), [(0, 0, 0)] * 5))
    for k, src in enumerate(srcs):
        assert got.find(src.path) == k
        assert got.path(k) == src.path
        assert got[k] == src
    assert got.path(-1) == srcs[-1].path
    assert got.find("/p/a/s") is None
    assert got.find("a/s1.jsonl") is None
    assert got.find("") is None
    assert got._paths is None
    assert got.paths == [s.path for s in srcs]
    assert got.find("/p/a/s1.jsonl") == 2  # the list's once made
    with pytest.raises(IndexError):
        got.path(5)


def test_the_kept_ids_by_path_as_a_table_would_hold_them() -> None:
    """`KeptLive` (a warm run's `live` over the kept record) answers as the whole table would: set,
    taken out, set again, asked for, counted, walked in the sources' order."""
    rows: list[tuple[str, str, str, bool, str | None]] = [(f"/p/{k}.jsonl", f"s{k}", "a", False, None)
                                                          for k in range(6)]
    srcs = sources_of(rows)
    got, ids, *_ = decode(encode(srcs, [10 + k for k in range(6)], [(0, 0, 0)] * 6))
    live = KeptLive(got, ids)
    want = {s.path: 10 + k for k, s in enumerate(srcs)}
    assert len(live) == 6
    assert live["/p/3.jsonl"] == 13
    assert "/p/4.jsonl" in live
    assert "/p/9.jsonl" not in live
    assert live.get("/p/9.jsonl", -5) == -5
    with pytest.raises(KeyError):
        live["/p/9.jsonl"]
    live["/p/2.jsonl"] = 99  # read again: a new id
    want["/p/2.jsonl"] = 99
    assert live.pop("/p/4.jsonl") == 14  # could not be stat'ed
    del want["/p/4.jsonl"]
    assert live.pop("/p/4.jsonl", None) is None
    assert "/p/4.jsonl" not in live
    assert len(live) == 5
    live["/p/5.jsonl"] = 15
    assert live.whole() == want
    assert list(live.whole()) == list(want)  # the sources' order
    assert list(live.items()) == list(want.items())
    assert len(live) == 5
    live["/p/4.jsonl"] = 40  # set again, after the whole table was made
    assert live["/p/4.jsonl"] == 40
    assert len(live) == 6


def test_the_kept_ids_asked_for_every_path_are_one_table_not_a_search_each(monkeypatch: pytest.MonkeyPatch) -> None:
    """A run that keys every session (a new `--since`, zone or guarded set) asks `KeptLive` for every
    path: past `_ASKED` searches it makes the whole table once (a search per path is a pass over the
    kept text each: 2.5 s of CPU, not 0.7, at 10,000 files), and answers as the table would."""
    n = 200
    rows: list[tuple[str, str, str, bool, str | None]] = [(f"/p/{k}.jsonl", f"s{k}", "a", False, None)
                                                          for k in range(n)]
    srcs = sources_of(rows)
    got, ids, *_ = decode(encode(srcs, [10 + k for k in range(n)], [(0, 0, 0)] * n))
    searched: list[str] = []
    find = Sources.find

    def counted(self: Sources, path: str) -> int | None:
        searched.append(path)
        return find(self, path)

    monkeypatch.setattr(Sources, "find", counted)
    live = KeptLive(got, ids)
    live["/p/7.jsonl"] = 700  # read again this run
    assert live.pop("/p/9.jsonl") == 19  # could not be stat'ed
    answers = [(live.get(s.path), s.path in live) for s in srcs]
    assert answers == [(None, False) if k == 9 else (700 if k == 7 else 10 + k, True) for k in range(n)]
    assert len(searched) <= KeptLive._ASKED + 1
    assert live["/p/150.jsonl"] == 160
    assert "/p/none.jsonl" not in live
    assert len(live) == n - 1
    assert live.whole() == {s.path: 700 if k == 7 else 10 + k for k, s in enumerate(srcs) if k != 9}


def _schema13_reader_before(base: bytes, delta: bytes) -> str:
    """What `kept_sources` of schema 13 before the paths' starts did with the kept record (another
    install sharing the index, or the version a user goes back to): its entry read in its guard,
    the columns (eight) outside it."""
    import marshal

    try:
        rec, (_digest, _files, _changed) = marshal.loads(base), marshal.loads(delta)
    except (ValueError, EOFError, TypeError):
        return "listed again"
    _paths, _sessions, _projects, _subs, _agents, _which, _ids, _flat = rec[5]
    return "taken"


def test_the_kept_record_of_either_form_is_listed_again_by_the_other(quiet: Path, tmp_path: Path) -> None:
    """The record's columns gained the paths' starts without a new schema: the code before reads
    this form's entry as damage (it ended with an internal error on the nine columns), and this
    code lists again over a record of the form before (eight columns, its 3-tuple entry), its
    figures a cold build's, and keeps its own form."""
    import marshal
    import sqlite3

    index = tmp_path / "i.sqlite3"
    for _ in range(2):
        run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0)
    record = tmp_path / "i-sources"
    with sqlite3.connect(index) as conn:
        (delta,) = conn.execute("SELECT value FROM meta WHERE key = 'sources'").fetchone()
    assert _schema13_reader_before(record.read_bytes(), delta) == "listed again"
    rec = marshal.loads(record.read_bytes())
    digest, files, changed, *_ = marshal.loads(delta)
    record.write_bytes(marshal.dumps((*rec[:5], rec[5][:8])))  # as the code before wrote it
    with sqlite3.connect(index) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'sources'", (marshal.dumps((digest, files, changed)),))
    assert _schema13_reader_before(record.read_bytes(), marshal.dumps((digest, files, changed))) == "taken"
    grow(quiet / "-home-a" / f"{AE}.jsonl", "msg_after_the_old_form")
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert figures(doc) == cold([quiet], tmp_path, "old-form")
    with sqlite3.connect(index) as conn:
        (delta,) = conn.execute("SELECT value FROM meta WHERE key = 'sources'").fetchone()
    assert _schema13_reader_before(record.read_bytes(), delta) == "listed again"
    assert len(marshal.loads(record.read_bytes())[5]) == 9


def test_kept_paths_whose_starts_do_not_fit_the_text_are_damage_not_an_error() -> None:
    """A record (a file of the cache) whose paths' text was cut short, or whose last start is past
    it, is no record (ValueError: `kept_sources` lists again); a start that is another path's
    answers no path there (not an index past the ids)."""
    rows: list[tuple[str, str, str, bool, str | None]] = [(f"/p/{k}.jsonl", f"s{k}", "a", False, None)
                                                          for k in range(4)]
    srcs = sources_of(rows)
    cols = encode(srcs, range(4), [(0, 0, 0)] * 4)
    text, starts = cols[0], array("q", cols[8])
    for bad in [(text[:-12], cols[8]), (text, array("q", [*starts[:-1], len(text) + 5]).tobytes()),
                (text, array("q", [3, *starts[1:]]).tobytes()), (text, array("q", [*starts[:-1], 2]).tobytes())]:
        with pytest.raises(ValueError, match="kept"):
            decode((bad[0], *cols[1:8], bad[1]))
    got, ids, *_ = decode((text, *cols[1:8], array("q", [*starts[:-1], starts[-2]]).tobytes()))
    assert got.find(srcs[3].path) is None  # its start is the one before's
    live = KeptLive(got, ids)
    assert srcs[3].path not in live
    with pytest.raises(KeyError):
        live[srcs[3].path]
    assert live[srcs[1].path] == 1


def test_a_kept_record_damaged_inside_is_listed_again_not_an_error(quiet: Path, tmp_path: Path) -> None:
    """Damage inside the kept record's file that its own checks cannot see (a start moved within the
    text: the paths cut there are none, one holding the separator) is caught by the record's check
    (`_seal`): the run lists again and shows a cold build's figures. Before, every report ended with
    an internal error (`stat`: embedded null byte) until a folder changed."""
    import marshal

    index = tmp_path / "i.sqlite3"
    for _ in range(2):
        run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0)
    record = tmp_path / "i-sources"
    data = record.read_bytes()
    rec = marshal.loads(data)
    starts = array("q", rec[5][8])
    assert len(starts) > 2
    starts[1] -= 1  # still within the text, after the first: no check of `decode` sees it
    damaged = marshal.dumps((*rec[:5], (*rec[5][:8], starts.tobytes())))
    assert len(damaged) == len(data) - 4
    record.write_bytes(damaged + data[-4:])  # the file's own check left as it was
    grow(quiet / "-home-a" / f"{AE}.jsonl", "msg_after_the_damage")
    doc = json.loads(run_report_json([str(quiet)], str(index), now=1.8e9, utc_offset=3600.0))
    assert figures(doc) == cold([quiet], tmp_path, "damaged")
    assert marshal.loads(record.read_bytes())[5][8] != starts.tobytes()  # written again whole
