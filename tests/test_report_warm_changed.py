"""The warm report's cost follows what changed: a run compares the kept parts of the sessions whose
files it read (when nothing else changed the files since the last run's sums), and its text is a
file of its own beside the index, mapped and spliced, never a copy through the database; every
document equals a cold build's, byte for byte."""

from __future__ import annotations

import json
import marshal
import os
import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Any

from session_watcher.base.paths import guard_log_file
from session_watcher.reports import stored
from session_watcher.reports.collect import run_report_json
from session_watcher.reports.index import Index
from tests.test_report_index import call_line
from tests.test_report_warm import age
from tests.test_report_warm import projects as projects  # noqa: PLC0414 (the fixture)

if TYPE_CHECKING:
    import pytest


def text(projects: Path, index: Path, since: float | None = None) -> str:
    """The report's JSON text without its index figures (the only member a cold build differs in)."""
    got = run_report_json([str(projects)], str(index), now=1.8e9, utc_offset=3600.0, since=since)
    head, sep, _figures = got.rpartition(',"index":')
    assert sep
    return head


def spy_keys(monkeypatch: pytest.MonkeyPatch) -> list[set[str] | None]:
    """The sessions each `Index.part_keys` call asked for (None: every one)."""
    asked: list[set[str] | None] = []
    real = Index.part_keys

    def part_keys(self: Index, params: str, sessions: Any = None) -> dict[str, str]:
        asked.append(None if sessions is None else set(sessions))
        return real(self, params) if sessions is None else real(self, params, sessions)

    monkeypatch.setattr(Index, "part_keys", part_keys)
    return asked


def append(projects: Path, name: str, mid: str) -> None:
    with (projects / name).open("ab") as fh:  # in place: the folder's mtime stays
        fh.write(call_line(mid, 40_000, 1_200, ts="2026-02-14T09:30:00.000Z"))


def test_a_warm_run_compares_only_the_sessions_whose_files_it_read(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "warm.sqlite3"
    text(projects, index)
    append(projects, "-home-b/short.jsonl", "msg_c1")
    asked = spy_keys(monkeypatch)
    warm = text(projects, index)
    assert asked == [{"short"}]
    assert warm == text(projects, tmp_path / "cold.sqlite3")
    append(projects, "-home-a/tool_heavy.jsonl", "msg_c2")
    asked.clear()
    warm = text(projects, index)
    assert asked == [{"tool_heavy"}]
    assert warm == text(projects, tmp_path / "cold2.sqlite3")


def test_files_changed_by_a_run_over_another_window_are_compared_again(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run over another window (`since`) reads the changed file into the index: the next run over
    the first window reads nothing, yet its sums were made before the change; it compares every
    session, and equals its cold build."""
    index = tmp_path / "i.sqlite3"
    text(projects, index)
    text(projects, index, since=1.77e9)
    append(projects, "-home-b/short.jsonl", "msg_w1")
    text(projects, index, since=1.77e9)
    asked = spy_keys(monkeypatch)
    warm = text(projects, index)
    assert asked == [None]
    assert warm == text(projects, tmp_path / "cold.sqlite3")


def test_a_dropped_file_and_a_session_guarded_since_are_compared_again(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "i.sqlite3"
    text(projects, index)
    (projects / "-home-a" / "tool_heavy.jsonl").unlink()
    age(projects)
    asked = spy_keys(monkeypatch)
    assert text(projects, index) == text(projects, tmp_path / "cold1.sqlite3")
    assert asked[0] is None
    log = Path(guard_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(json.dumps({"sessionId": "short", "ts": 1.77e9, "gapSeconds": 900}) + "\n")
    asked.clear()
    assert text(projects, index) == text(projects, tmp_path / "cold2.sqlite3")
    assert asked[0] is None


def kept_texts(index: Path) -> list[tuple[str, object, int, list[tuple[str, int, int]]]]:
    conn = sqlite3.connect(index)
    try:
        return [(k, d, n, marshal.loads(p)) for k, d, n, p in conn.execute("SELECT key, doc, size, parts FROM reports")]
    finally:
        conn.close()


def test_the_report_text_is_a_file_beside_the_index(projects: Path, tmp_path: Path) -> None:
    """The text is not in the database: a file of its own, named after its key; one missing or cut
    short is no report (the next run builds it again, the same)."""
    index = tmp_path / "i.sqlite3"
    first = text(projects, index)
    [(key, doc, size, [(name, at, n)])] = kept_texts(index)
    folder = tmp_path / "i-reports"
    assert doc is None
    assert (at, n) == (0, size)
    assert name.startswith(key)
    assert texts(folder) == [name]
    assert (folder / name).stat().st_size == size
    assert (folder / name).read_bytes().decode() == first.removesuffix(
        first[first.index(',"generatedAt":'):])  # its clock fields added on the way out
    (folder / name).unlink()
    assert text(projects, index) == first
    [(_key, _doc, _size, [(name, _at, _n)])] = kept_texts(index)
    with (folder / name).open("r+b") as fh:
        fh.truncate(size - 1)
    assert text(projects, index) == first
    append(projects, "-home-b/short.jsonl", "msg_f1")
    changed = text(projects, index)
    assert changed != first
    assert changed == text(projects, tmp_path / "cold.sqlite3")
    kept = kept_texts(index)
    assert len(kept) == 2  # the newest texts kept (index.KEEP_REPORTS)
    assert texts(folder) == sorted({s[0] for _k, _d, _n, parts in kept for s in parts})
    with sqlite3.connect(index) as conn:  # and the merged sums' file, of the one window kept
        assert sorted(set(os.listdir(folder)) - set(texts(folder))) == [f for (f,) in conn.execute(
            "SELECT file FROM merged")]


def texts(folder: Path) -> list[str]:
    """The reports' texts' files (not the merged sums')."""
    return sorted(name for name in os.listdir(folder) if not name.startswith("merged-"))


def test_a_warm_run_writes_what_it_changed_and_takes_the_rest_where_it_is(
        projects: Path, tmp_path: Path) -> None:
    """One session changed: its texts and the sums are written, the other sessions' texts are
    stretches of the files that hold them already (`reports.stored`), in at most `MAX_FILES` files;
    every text the same as a cold build's."""
    index = tmp_path / "i.sqlite3"
    text(projects, index)
    for k in range(stored.MAX_FILES + 2):
        append(projects, "-home-b/short.jsonl", f"msg_st{k}")
        assert text(projects, index) == text(projects, tmp_path / f"cold{k}.sqlite3")
        newest = next(row for row in kept_texts(index) if row[0] == text_key(index))
        files = {s[0] for s in newest[3]}
        written = sum(s[2] for s in newest[3] if s[0].startswith(newest[0]))
        assert 2 <= len(files) <= stored.MAX_FILES  # stretches of the first whole text, and this run's bytes
        assert written < newest[2] / 2
    assert text(projects, index) == text(projects, tmp_path / "cold-last.sqlite3")


def text_key(index: Path) -> str:
    conn = sqlite3.connect(index)
    try:
        return str(conn.execute("SELECT key FROM reports ORDER BY at DESC LIMIT 1").fetchone()[0])
    finally:
        conn.close()


def test_a_report_folder_that_cannot_be_written_keeps_the_text_in_the_database(
        projects: Path, tmp_path: Path) -> None:
    index = tmp_path / "i.sqlite3"
    (tmp_path / "i-reports").write_text("not a folder")
    first = text(projects, index)
    [(_key, doc, size, _parts)] = kept_texts(index)
    assert isinstance(doc, bytes)
    assert len(doc) == size
    assert text(projects, index) == first
    append(projects, "-home-b/short.jsonl", "msg_d1")
    assert text(projects, index) == text(projects, tmp_path / "cold.sqlite3")


def test_a_source_that_cannot_be_stat_ed_is_not_live(projects: Path, tmp_path: Path) -> None:
    """`live` keeps the sources' order by holding each place to check (-1) until it is known: a source
    gone before its `stat` leaves no place behind, and two runs that find the same files give one key."""
    from session_watcher.agents.claude_code.discover import discover

    sources = discover([str(projects)])
    gone = sources[0]._replace(path=str(projects / "-home-a" / "gone.jsonl"), session="gone")
    index = Index(str(tmp_path / "i.sqlite3"))
    try:
        stats, live = index.refresh([gone, *sources], [str(projects)])
        assert stats.files == len(sources) == len(live)
        assert gone.path not in live
        assert min(live.values()) > 0
        assert list(live) == [s.path for s in sources]
        key = index.fingerprint("")
        _stats, again = index.refresh(sources, [str(projects)])
        assert again == live
        assert index.fingerprint("") == key
    finally:
        index.close()


def test_a_rollout_deleted_under_a_symlinked_codex_home_leaves_the_warm_report(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CODEX_HOME reached through a symlink (as a symlinked home is): a rollout deleted there leaves
    the warm report's sums as it leaves a cold build's (the index kept its file by the path it was
    found at, so a drop looked for under the symlink's target never matched, and the sums kept its
    part: cold starts 18 against 8)."""
    real = tmp_path / "real"
    day = real / "sessions" / "2026" / "05" / "01"
    day.mkdir(parents=True)
    rollouts = sorted((Path(__file__).parent / "fixtures" / "codex").glob("rollout-*.jsonl"))[:3]
    assert len(rollouts) == 3
    for src in rollouts:
        (day / src.name).write_bytes(src.read_bytes())
    home = tmp_path / "codex-home"
    home.symlink_to(real, target_is_directory=True)
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))  # no Claude Code sessions

    def report(index: Path) -> str:
        got = run_report_json(None, str(index), now=1.8e9, utc_offset=3600.0)
        return got.rpartition(',"index":')[0]

    index = tmp_path / "warm.sqlite3"
    before = report(index)
    (day / rollouts[1].name).unlink()
    warm = report(index)
    assert warm != before
    assert warm == report(tmp_path / "cold.sqlite3")
