"""The warm report: after a change, only the sessions whose files changed are folded again, and
every figure equals a cold build's over the same files."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from session_watcher.agents.claude_code.discover import discover, project_sources
from session_watcher.reports import walk, warmth
from session_watcher.reports.collect import run_report_json
from session_watcher.reports.index import Index
from tests.test_report_index import call_line

FIXTURES = Path(__file__).parent / "fixtures" / "transcripts"
AE = "ae4a77f8-aedd-4bc1-888f-c94edc91af04"
FA = "fa812bfe-b295-4cca-9c2f-fdf01028cb46"
C258 = "258c7280-ae70-4798-800f-63464d01a85d"
NEW = "11111111-2222-4333-8444-555555555555"


def copy_session(sid: str, into: Path, name: str | None = None) -> None:
    into.mkdir(parents=True, exist_ok=True)
    shutil.copy2(FIXTURES / f"{sid}.jsonl", into / f"{name or sid}.jsonl")
    if (FIXTURES / sid).is_dir():
        shutil.copytree(FIXTURES / sid, into / (name or sid))


def report(projects: Path, index: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run_report_json([str(projects)], str(index), now=1.8e9, utc_offset=3600.0))
    return doc


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    root = tmp_path / "projects"
    copy_session(AE, root / "-home-a")
    copy_session(FA, root / "-home-a")
    shutil.copy2(FIXTURES / "tool_heavy.jsonl", root / "-home-a" / "tool_heavy.jsonl")
    copy_session("short", root / "-home-b")
    shutil.copy2(FIXTURES / "subagent.jsonl", root / "-home-b" / "subagent.jsonl")
    age(root)
    return root


def age(root: Path, seconds: float = 3600.0) -> None:
    """Every folder and file under `root` (and it) as last changed `seconds` ago: a folder old enough
    to be trusted (`walk.RACY_NS`), so a warm run takes its listing from the index."""
    when = time.time() - seconds
    for d in [root, *root.rglob("*")]:
        os.utime(d, (when, when))


def test_warm_after_changes_equals_cold_and_folds_only_what_changed(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file appended in place (in a folder otherwise unchanged), a file added, a file removed and
    a folder added: the warm report folds the appended, added and new folder's sessions only, and
    equals a cold build."""
    warm_index = tmp_path / "warm.sqlite3"
    first = report(projects, warm_index)
    assert {s["sessionId"] for s in first["sessions"]} >= {AE, FA, "tool_heavy", "short"}
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:  # in place: the folder's mtime stays
        fh.write(call_line("msg_warm_1", 40_000, 1_200, ts="2026-02-14T09:30:00.000Z"))
    shutil.copy2(FIXTURES / "short.jsonl", projects / "-home-a" / f"{NEW}.jsonl")
    (projects / "-home-a" / "tool_heavy.jsonl").unlink()
    copy_session(C258, projects / "-home-c")
    folded: list[str] = []
    real = warmth.session_part

    def counting(s: warmth.Session, *args: Any, **kwargs: Any) -> warmth.Part | None:
        folded.append(s.session_id)
        return real(s, *args, **kwargs)

    monkeypatch.setattr(warmth, "session_part", counting)
    warm = report(projects, warm_index)
    assert sorted(folded) == sorted(["short", NEW, C258])
    monkeypatch.setattr(warmth, "session_part", real)
    cold = report(projects, tmp_path / "cold.sqlite3")
    assert warm.pop("index")["cached"] is False
    cold.pop("index")
    assert warm == cold
    ids = {s["sessionId"] for s in warm["sessions"]}
    assert "tool_heavy" not in ids
    assert {AE, NEW, C258, FA} <= ids
    assert api_calls(warm, "short") == api_calls(first, "short") + 1


def api_calls(doc: dict[str, Any], sid: str) -> int:
    return int(next(s["apiCalls"] for s in doc["sessions"] if s["sessionId"] == sid))


def test_a_file_quiet_for_a_day_is_stat_ed_on_the_full_pass(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The rule (index.LIVE_NS, FULL_EVERY_NS): a file of an unchanged folder that the index saw
    quiet for more than a day is not stat'ed between full passes, so an append to it in place shows
    on the first run after the full pass is due; one that changed within the day shows at once."""
    age(projects, 2 * 86400.0)
    age(projects / "-home-a", 3600.0)  # its files live: changed within the day
    index = tmp_path / "i.sqlite3"
    first = report(projects, index)  # the first run is a full pass
    for name, mid in (("-home-b/short.jsonl", "msg_quiet"), ("-home-a/tool_heavy.jsonl", "msg_live")):
        with (projects / name).open("ab") as fh:
            fh.write(call_line(mid, 30_000, 900, ts="2026-02-14T09:30:00.000Z"))
    between = report(projects, index)
    assert api_calls(between, "tool_heavy") == api_calls(first, "tool_heavy") + 1
    assert api_calls(between, "short") == api_calls(first, "short")  # not stat'ed yet
    monkeypatch.setattr("session_watcher.reports.index.FULL_EVERY_NS", 0)
    full = report(projects, index)
    assert api_calls(full, "short") == api_calls(first, "short") + 1
    full.pop("index")
    cold = report(projects, tmp_path / "cold.sqlite3")
    cold.pop("index")
    assert full == cold


def test_a_report_over_another_window_keeps_its_own_parts(projects: Path, tmp_path: Path) -> None:
    """Parts are kept per report window (`since`): a run over a window, then the whole history again
    after a change, each equal to its cold build."""
    index = tmp_path / "i.sqlite3"

    def both(since: float | None, path: Path) -> dict[str, Any]:
        doc: dict[str, Any] = json.loads(run_report_json([str(projects)], str(path), now=1.8e9, utc_offset=0.0,
                                                         since=since))
        doc.pop("index")
        return doc

    both(None, index)
    windowed = both(1.77e9, index)
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_warm_2", 10_000, 500, ts="2026-02-15T10:00:00.000Z"))
    assert both(None, index) == both(None, tmp_path / "cold1.sqlite3")
    assert both(1.77e9, index) == both(1.77e9, tmp_path / "cold2.sqlite3")
    assert windowed != both(None, tmp_path / "cold3.sqlite3")


def test_the_walk_lists_again_only_the_folders_whose_mtime_moved(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Unchanged folders come from the index without a listing; a file added to a project, a
    sub-agent file added to a session's `subagents/`, and a folder too fresh to trust are listed
    again; the sources always equal a full discovery's."""
    listed: list[str] = []
    real = project_sources

    def counting(project: str, dirs: list[str] | None = None) -> list[Any]:
        listed.append(os.path.basename(project))
        return real(project, dirs)

    monkeypatch.setattr("session_watcher.reports.walk.project_sources", counting)
    index = Index(str(tmp_path / "i.sqlite3"))

    def check(expect: list[str]) -> None:
        listed.clear()
        assert walk.discover([str(projects)], index) == discover([str(projects)])
        assert sorted(listed) == expect

    check(["-home-a", "-home-b"])  # first run: everything
    check([])  # nothing moved: no listing
    shutil.copy2(FIXTURES / "short.jsonl", projects / "-home-b" / f"{NEW}.jsonl")
    age(projects / "-home-b")
    check(["-home-b"])
    subs = projects / "-home-a" / AE / "subagents"
    shutil.copy2(next(subs.glob("*.jsonl")), subs / "agent-new.jsonl")
    age(subs)
    check(["-home-a"])
    check([])
    (projects / "-home-b" / "short.jsonl").unlink()  # changed now: too fresh to trust its mtime
    check(["-home-b"])
    check(["-home-b"])
    age(projects / "-home-b")
    check(["-home-b"])  # listed once more with a trusted mtime
    check([])
    index.close()


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times the document was built from every part (`merge.build`), not updated."""
    from session_watcher.reports import merge

    count: list[int] = []
    real = merge.build

    def counting(*args: Any, **kwargs: Any) -> Any:
        count.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(merge, "build", counting)
    return count


def windowed(projects: Path, index: Path, since: float | None) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run_report_json([str(projects)], str(index), now=1.8e9, utc_offset=3600.0,
                                                     since=since))
    doc.pop("index")
    return doc


def rewrite(path: Path, old: bytes, new: bytes) -> None:
    """`path` with `old` replaced by `new`, in place (its folder's mtime stays)."""
    data = path.read_bytes()
    assert old in data
    path.write_bytes(data.replace(old, new))


def test_a_session_moved_to_another_day_week_and_project_is_taken_out_and_put_in(
        projects: Path, tmp_path: Path, builds: list[int]) -> None:
    """A call a month later (the session's days, week, place among the sessions and the project's
    last activity move), then its working folder renamed (it leaves its project for a new one), then
    the file as it was: each warm run updates the kept sums (no build from every part) and equals a cold build,
    the USD sums of the days, weeks, projects and agents to the bit."""
    index = tmp_path / "i.sqlite3"
    first = windowed(projects, index, None)
    assert builds == [1]
    short = projects / "-home-b" / "short.jsonl"
    with short.open("ab") as fh:
        fh.write(call_line("msg_later", 12_000, 30_000, ts="2026-03-20T08:00:00.000Z"))
    later = windowed(projects, index, None)
    assert builds == [1]
    assert later == windowed(projects, tmp_path / "cold1.sqlite3", None)
    assert later["sessions"][0]["sessionId"] == "short" != first["sessions"][0]["sessionId"]
    assert len(later["totals"]["days"]) == len(first["totals"]["days"]) + 1
    assert len(later["totals"]["weeks"]) == len(first["totals"]["weeks"]) + 1
    del builds[:]
    rewrite(short, b"/home/marco/projects/spotter", b"/home/marco/projects/sp")  # shorter: read again
    moved = windowed(projects, index, None)
    assert builds == []
    assert moved == windowed(projects, tmp_path / "cold2.sqlite3", None)
    names = {p["project"]: p for p in moved["totals"]["projects"]}
    assert names["sp"]["sessions"] == 1
    assert names["spotter"]["sessions"] == {p["project"]: p for p in later["totals"]["projects"]}["spotter"][
        "sessions"] - 1
    del builds[:]
    shutil.copy2(FIXTURES / "short.jsonl", short)  # as it was (shorter again)
    back = windowed(projects, index, None)
    assert builds == []
    assert back == first == windowed(projects, tmp_path / "cold3.sqlite3", None)


def test_a_session_entering_and_leaving_the_window_is_taken_out_and_put_in(
        projects: Path, tmp_path: Path, builds: list[int]) -> None:
    """With `since` past a session's last call it is left out; a call inside the window brings it
    in, and the file cut back to what it was leaves it out again: each warm run equals a cold build,
    without a build from every part."""
    since = 1770854400.0  # 2026-02-12: the sessions of the 10th and 11th are out
    index = tmp_path / "i.sqlite3"
    short = projects / "-home-b" / "short.jsonl"
    original = short.read_bytes()
    first = windowed(projects, index, since)
    assert "short" not in {s["sessionId"] for s in first["sessions"]}
    with short.open("ab") as fh:
        fh.write(call_line("msg_in", 20_000, 40_000, ts="2026-02-14T09:30:00.000Z"))
    inside = windowed(projects, index, since)
    assert "short" in {s["sessionId"] for s in inside["sessions"]}
    assert inside == windowed(projects, tmp_path / "cold1.sqlite3", since)
    short.write_bytes(original)
    out = windowed(projects, index, since)
    assert out == first == windowed(projects, tmp_path / "cold2.sqlite3", since)
    assert builds == [1, 1, 1]  # the first run and the two cold ones


def test_a_run_that_moves_a_cache_lifetime_builds_from_every_part(
        projects: Path, tmp_path: Path, builds: list[int]) -> None:
    """When the kept lifetimes differ from the updated ones (every session's causes move with them),
    the document is built from every part, and equals a cold build."""
    import marshal
    import sqlite3

    index = tmp_path / "i.sqlite3"
    windowed(projects, index, None)
    with sqlite3.connect(index) as conn:
        name = conn.execute("SELECT file FROM merged").fetchone()[0]  # the sums in a file of their own
    kept = tmp_path / "i-reports" / name
    state = marshal.loads(kept.read_bytes())
    state["lifetime"] = {"5m": 1.0}
    kept.write_bytes(marshal.dumps(state))
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_life", 12_000, 30_000, ts="2026-02-14T09:30:00.000Z"))
    del builds[:]
    warm = windowed(projects, index, None)
    assert builds == [1]
    assert warm == windowed(projects, tmp_path / "cold.sqlite3", None)


def test_a_run_stopped_after_keeping_its_parts_builds_from_every_part(
        projects: Path, tmp_path: Path, builds: list[int]) -> None:
    """The parts kept with a change drop the merged sums made from the parts as they were: a run
    stopped before keeping its new sums leaves none, and the next builds from every part (never
    takes an old part's share out of sums that no longer hold it)."""
    import sqlite3

    index = tmp_path / "i.sqlite3"
    windowed(projects, index, None)
    with sqlite3.connect(index) as conn:
        params = conn.execute("SELECT params FROM merged").fetchone()[0]
    kept = Index(str(index))
    kept.store_parts(params, [("short", "another key", b"")], [], time.time())
    kept.close()
    with sqlite3.connect(index) as conn:
        assert conn.execute("SELECT COUNT(*) FROM merged").fetchone()[0] == 0
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_stop", 12_000, 30_000, ts="2026-02-14T09:30:00.000Z"))
    del builds[:]
    assert windowed(projects, index, None) == windowed(projects, tmp_path / "cold.sqlite3", None)
    assert builds == [1, 1]


def test_a_run_beside_this_one_never_leaves_sums_of_other_parts(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second report run on the same index changes the parts while this one is between reading the
    merged sums and keeping its own parts: this run then builds from every part (the sums it read
    no longer match the parts), so whichever run keeps its sums last, the next run still equals a
    cold build."""
    index = tmp_path / "i.sqlite3"
    first = windowed(projects, index, None)
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_outer", 12_000, 30_000, ts="2026-02-14T09:30:00.000Z"))
    real = Index.rows
    beside: list[int] = []

    def rows_then_another_run(self: Index, live: dict[str, int]) -> Any:
        if not beside:
            beside.append(1)
            with (projects / "-home-a" / "tool_heavy.jsonl").open("ab") as fh:
                fh.write(call_line("msg_beside", 9_000, 40_000, ts="2026-02-15T10:00:00.000Z"))
            windowed(projects, index, None)
        return real(self, live)

    monkeypatch.setattr(Index, "rows", rows_then_another_run)
    windowed(projects, index, None)
    monkeypatch.setattr(Index, "rows", real)
    assert beside == [1]
    with (projects / "-home-b" / "subagent.jsonl").open("ab") as fh:  # a run after both, with a change
        fh.write(call_line("msg_after", 11_000, 20_000, ts="2026-02-16T10:00:00.000Z"))
    after = windowed(projects, index, None)
    assert after == windowed(projects, tmp_path / "cold.sqlite3", None)
    assert api_calls(after, "tool_heavy") == api_calls(first, "tool_heavy") + 1
    assert api_calls(after, "short") == api_calls(first, "short") + 1


def test_a_window_whose_parts_were_dropped_is_built_again_not_summed_twice(projects: Path, tmp_path: Path) -> None:
    """The index keeps the parts of the last KEEP_REPORTS windows: a window run again after its parts
    were dropped (while its summed state stayed, its last run having changed no part) is built from
    every part, never the parts added again onto sums that hold them."""
    from session_watcher.base.paths import guard_log_file
    from session_watcher.reports.index import KEEP_REPORTS

    index = tmp_path / "index.sqlite3"
    cold = windowed(projects, index, None)
    windowed(projects, index, 1.6e9)  # another window: its parts are newer than the first's
    log = Path(guard_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("a") as fh:  # a new guard record: the first window's report and sums made again, no part
        fh.write("{}\n")
    assert windowed(projects, index, None) == cold
    for n in range(1, KEEP_REPORTS):  # more windows: the first's parts are dropped, its sums are not
        windowed(projects, index, 1.6e9 + n * 86_400)
    with log.open("a") as fh:
        fh.write("{}\n")
    again = windowed(projects, index, None)
    assert again["coldStarts"] == cold["coldStarts"]
    assert again == cold


def test_the_counts_of_windows_no_longer_kept_go_with_their_parts(projects: Path, tmp_path: Path) -> None:
    """A span's window is new each minute: each window's count of changed parts (`parts_made`) goes
    when its parts are no longer kept, so an index read with a new `--since` every minute stays its
    size; the windows still kept keep theirs, and a report after equals a cold one."""
    import sqlite3

    from session_watcher.reports.index import KEEP_REPORTS

    index = tmp_path / "i.sqlite3"
    sinces = [1.7e9 + 60 * k for k in range(KEEP_REPORTS + 2)]
    for since in sinces:
        windowed(projects, index, since)
    with sqlite3.connect(index) as conn:
        counts = [k for (k,) in conn.execute("SELECT key FROM meta WHERE key > 'parts' AND key < ?", ("parts\1",))]
        windows = {p for (p,) in conn.execute("SELECT DISTINCT params FROM parts")}
    assert len(windows) == KEEP_REPORTS
    assert sorted(counts) == sorted(f"parts\0{p}" for p in windows)
    assert windowed(projects, index, sinces[-1]) == windowed(projects, tmp_path / "cold.sqlite3", sinces[-1])


def test_a_window_dropped_and_made_again_beside_a_run_is_not_taken_for_the_one_it_read(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A run of a window reads its sums (made at count 1); beside it, other windows' first runs drop
    the window's parts, sums and count, and a run of the window makes it again (its count 1 again)
    from files changed since: the first run's count of the parts then matches the one it read, yet
    its sums are of the old parts. It builds from every part, and the next run equals a cold build."""
    from session_watcher.base.paths import guard_log_file
    from session_watcher.reports.index import KEEP_REPORTS

    index = tmp_path / "i.sqlite3"
    windowed(projects, index, None)
    for n in range(KEEP_REPORTS - 1):  # newer windows, one short of dropping the first's parts
        windowed(projects, index, 1.6e9 + n * 86_400)
    log = Path(guard_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("{}\n")  # the first window's report made again (newer than those windows'), no part
    windowed(projects, index, None)
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_outer", 12_000, 30_000, ts="2026-02-14T09:30:00.000Z"))
    real = Index.rows
    beside: list[int] = []

    def rows_then_other_runs(self: Index, live: dict[str, int]) -> Any:
        if not beside:
            beside.append(1)
            windowed(projects, index, 1.7e9)  # one more: the first window's parts, sums and count dropped
            with (projects / "-home-a" / "tool_heavy.jsonl").open("ab") as fh:
                fh.write(call_line("msg_beside", 9_000, 40_000, ts="2026-02-15T10:00:00.000Z"))
            windowed(projects, index, None)  # the window made again
        return real(self, live)

    monkeypatch.setattr(Index, "rows", rows_then_other_runs)
    windowed(projects, index, None)
    monkeypatch.setattr(Index, "rows", real)
    assert beside == [1]
    with (projects / "-home-b" / "subagent.jsonl").open("ab") as fh:  # a run after them, with a change
        fh.write(call_line("msg_after", 11_000, 20_000, ts="2026-02-16T10:00:00.000Z"))
    after = windowed(projects, index, None)
    assert after == windowed(projects, tmp_path / "cold.sqlite3", None)


def test_a_window_dropped_beside_a_run_of_it_leaves_that_run_every_session(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another window's first run drops this window's parts while a run of it is between reading its
    sums and keeping its parts: that run's report still holds every session (not only those it
    folded), and the next run equals a cold build."""
    from session_watcher.base.paths import guard_log_file
    from session_watcher.reports.index import KEEP_REPORTS

    index = tmp_path / "i.sqlite3"
    windowed(projects, index, None)
    for n in range(KEEP_REPORTS - 1):
        windowed(projects, index, 1.6e9 + n * 86_400)
    log = Path(guard_log_file())
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("{}\n")
    windowed(projects, index, None)
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_outer", 12_000, 30_000, ts="2026-02-14T09:30:00.000Z"))
    real = Index.rows
    beside: list[int] = []

    def rows_then_another_window(self: Index, live: dict[str, int]) -> Any:
        if not beside:
            beside.append(1)
            windowed(projects, index, 1.7e9)
        return real(self, live)

    monkeypatch.setattr(Index, "rows", rows_then_another_window)
    during = windowed(projects, index, None)
    monkeypatch.setattr(Index, "rows", real)
    assert beside == [1]
    assert during == windowed(projects, tmp_path / "cold1.sqlite3", None)
    with (projects / "-home-b" / "subagent.jsonl").open("ab") as fh:
        fh.write(call_line("msg_after", 11_000, 20_000, ts="2026-02-16T10:00:00.000Z"))
    assert windowed(projects, index, None) == windowed(projects, tmp_path / "cold2.sqlite3", None)


def test_a_text_written_again_for_a_figure_json_cannot_hold_is_not_cut_from(
        projects: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, builds: list[int]) -> None:
    """A session's text written `NaN` as a figure by a writer other than the report's encoders: the
    document is written again with it null before the index keeps it (`jsontext.finite_pieces`), a
    text of another length than the one the kept sums' places were taken in. The next warm run
    builds from every part, and equals a cold build; it cut the unchanged sessions' texts from the
    new text at the old places (a text JSON could not read)."""
    from session_watcher.reports import merge

    real = merge.session_texts

    def writes_nan(sid: str, p: Any, lifetime: dict[str, float]) -> Any:
        (entry, colds, scatter), counts = real(sid, p, lifetime)
        if sid == AE:
            entry = entry.replace(b'{"sessionId"', b'{"other":NaN,"sessionId"', 1)
        return (entry, colds, scatter), counts

    index = tmp_path / "i.sqlite3"
    monkeypatch.setattr(merge, "session_texts", writes_nan)
    text = run_report_json([str(projects)], str(index), now=1.8e9, utc_offset=3600.0)
    assert '"other":null' in text
    assert "NaN" not in text
    monkeypatch.setattr(merge, "session_texts", real)
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_after_nan", 11_000, 20_000, ts="2026-02-16T10:00:00.000Z"))
    builds.clear()
    assert windowed(projects, index, None) == windowed(projects, tmp_path / "cold.sqlite3", None)
    assert len(builds) == 2  # the warm run too
    with (projects / "-home-b" / "short.jsonl").open("ab") as fh:
        fh.write(call_line("msg_after_nan_2", 12_000, 20_000, ts="2026-02-17T10:00:00.000Z"))
    builds.clear()
    assert windowed(projects, index, None) == windowed(projects, tmp_path / "cold2.sqlite3", None)
    assert len(builds) == 1  # updated from the text kept after it: the cold one's build alone
