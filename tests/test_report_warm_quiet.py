"""The warm report's walk `stat`s a quiet session's folders only on the full pass (`reports.walk`): a
session in use (the index saw one of its files change within the day), a project's own folder and a
folder changed within the day are looked at every run, so what changes there shows at once; a file
added to or removed from a session quiet for a day shows on the full pass, as an append to a quiet
file does (`index.LIVE_NS`). Every report that shows a change equals a cold build's."""

from __future__ import annotations

import os
import shutil
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.claude_code.discover import discover
from session_watcher.reports import walk
from session_watcher.reports.index import Index
from tests.test_report_index import call_line
from tests.test_report_warm import AE, C258, FA, FIXTURES, NEW, age, copy_session, report

if TYPE_CHECKING:
    from pathlib import Path

DAY = 86400.0


def sub_agent(folder: Path, name: str, mid: str) -> None:
    """A sub-agent transcript of two calls written into `folder`."""
    with (folder / name).open("wb") as fh:
        fh.write(call_line(f"{mid}_1", 20_000, 800, ts="2026-02-14T09:30:00.000Z"))
        fh.write(call_line(f"{mid}_2", 21_000, 300, ts="2026-02-14T09:31:00.000Z"))


def same_as_cold(doc: dict[str, Any], projects: Path, tmp_path: Path, name: str) -> None:
    cold = report(projects, tmp_path / f"cold-{name}.sqlite3")
    cold.pop("index")
    doc = dict(doc)
    doc.pop("index")
    assert doc == cold


def figures(doc: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in doc.items() if k != "index"}


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


def test_a_sub_agent_file_of_a_session_in_use_shows_at_once(quiet: Path, tmp_path: Path) -> None:
    index = tmp_path / "i.sqlite3"
    first = report(quiet, index)
    subs = quiet / "-home-a" / AE / "subagents"
    sub_agent(subs, "agent-new.jsonl", "msg_live_sub")
    age(subs, 2 * DAY)  # the folder two days old again: only its session's use says look at it
    warm = report(quiet, index)
    assert figures(warm) != figures(first)
    same_as_cold(warm, quiet, tmp_path, "added")
    (subs / "agent-new.jsonl").unlink()
    age(subs, 2 * DAY)
    gone = report(quiet, index)
    assert figures(gone) == figures(first)
    same_as_cold(gone, quiet, tmp_path, "removed")


def test_a_quiet_sessions_sub_agent_file_shows_on_the_full_pass(
        quiet: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = tmp_path / "i.sqlite3"
    first = report(quiet, index)  # the first run is a full pass
    subs = quiet / "-home-a" / FA / "subagents"
    subs.mkdir(parents=True, exist_ok=True)
    sub_agent(subs, "agent-late.jsonl", "msg_quiet_sub")
    age(subs, 2 * DAY)
    age(subs.parent, 2 * DAY)
    between = report(quiet, index)
    assert figures(between) == figures(first)  # FA's folders are not stat'ed between full passes
    monkeypatch.setattr("session_watcher.reports.index.FULL_EVERY_NS", 0)
    full = report(quiet, index)
    assert figures(full) != figures(first)
    same_as_cold(full, quiet, tmp_path, "full")


def test_a_new_session_or_folder_in_a_quiet_project_shows_at_once(quiet: Path, tmp_path: Path) -> None:
    """A project's own folder is stat'ed every run: a session's file or folder added moves its mtime."""
    index = tmp_path / "i.sqlite3"
    first = report(quiet, index)
    shutil.copy2(FIXTURES / "short.jsonl", quiet / "-home-b" / f"{NEW}.jsonl")
    age(quiet / "-home-b" / f"{NEW}.jsonl", 2 * DAY)
    warm = report(quiet, index)
    assert NEW in {s["sessionId"] for s in warm["sessions"]}
    same_as_cold(warm, quiet, tmp_path, "file")
    copy_session(C258, quiet / "-home-b")
    age(quiet / "-home-b" / C258, 2 * DAY)
    age(quiet / "-home-b" / f"{C258}.jsonl", 2 * DAY)
    again = report(quiet, index)
    assert C258 in {s["sessionId"] for s in again["sessions"]}
    assert figures(again) != figures(first)
    same_as_cold(again, quiet, tmp_path, "folder")


def test_a_symlinked_projects_folder_sees_its_session_in_use(quiet: Path, tmp_path: Path) -> None:
    """The root given as a link: the walk and the index keep the real paths, the session in use is
    found by them."""
    link = tmp_path / "link"
    os.symlink(quiet, link)
    index = tmp_path / "i.sqlite3"
    first = report(link, index)
    subs = quiet / "-home-a" / AE / "subagents"
    sub_agent(subs, "agent-linked.jsonl", "msg_link_sub")
    age(subs, 2 * DAY)
    warm = report(link, index)
    assert figures(warm) != figures(first)
    cold = report(link, tmp_path / "cold.sqlite3")
    assert figures(warm) == figures(cold)


@pytest.mark.parametrize("inner_first", [False, True])
def test_roots_one_inside_another_give_each_file_once(quiet: Path, tmp_path: Path, inner_first: bool) -> None:
    """The walk takes a file once however many roots reach it (a root inside another, one given as a
    link): as the full discovery does, listed or from the index."""
    link = tmp_path / "inner-link"
    os.symlink(quiet / "-home-a", link)
    roots = [str(quiet), str(link)]
    if inner_first:
        roots.reverse()
    index = Index(str(tmp_path / "i.sqlite3"))
    want = discover(roots)
    assert len({s.path for s in want}) == len(want)
    assert walk.discover(roots, index) == want  # listed
    assert walk.discover(roots, index) == want  # from the index
    index.close()


def test_a_file_that_grew_while_read_is_read_again_at_the_next_run(quiet: Path, tmp_path: Path) -> None:
    """The index keeps mtime 0 for a file that grew while it was read ("look again next run"): the next
    warm run reads it again, though its folder's listing is unchanged and a zero is older than any day."""
    import sqlite3

    index = tmp_path / "i.sqlite3"
    first = report(quiet, index)
    path = quiet / "-home-a" / f"{AE}.jsonl"
    with path.open("ab") as fh:  # an append changes no folder: the listing stays the index's
        fh.write(call_line("msg_grew_1", 30_000, 500, ts="2026-02-14T10:00:00.000Z"))
    # what a read that raced the append leaves: the size it read to, and mtime 0
    with sqlite3.connect(index) as conn:
        rows = [raw for (raw,) in conn.execute("SELECT path FROM files")
                if bytes(raw).endswith(f"/{AE}.jsonl".encode())]
        assert len(rows) == 1
        conn.execute("UPDATE files SET mtime_ns = 0 WHERE path = ?", rows)
    warm = report(quiet, index)
    assert figures(warm) != figures(first)
    same_as_cold(warm, quiet, tmp_path, "grew")
