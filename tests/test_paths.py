"""The path map: canonical paths, line ranges, inclusion; gitignore against a real git repository."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from bench.synth import Transcript
from session_watcher.base import config
from session_watcher.core import engine
from session_watcher.core import paths as pathmap
from session_watcher.core.status import status_document
from session_watcher.state import session

if TYPE_CHECKING:
    from pathlib import Path

    from session_watcher.core.shapes import State

REAL_GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(REAL_GIT is None, reason="git is installed by .ci/setup.d/15-git.sh")


# --------------------------------------------------------------------------- pure line ranges

def merge_range(ranges: list[list[int]], start: int, end: int) -> list[list[int]]:
    """`ranges` with [start, end) joined in as the path map joins a Read (touching ranges join)."""
    out = [list(r) for r in ranges]
    pathmap._place(out, *pathmap._touching(out, start, end), start, end)
    return out


def test_merge_range() -> None:
    assert merge_range([], 1, 5) == [[1, 5]]
    assert merge_range([[1, 5]], 5, 9) == [[1, 9]]  # touching ranges join
    assert merge_range([[1, 5], [20, 30]], 10, 12) == [[1, 5], [10, 12], [20, 30]]
    assert merge_range([[1, 5], [20, 30]], 3, 25) == [[1, 30]]
    assert merge_range([[10, 20]], 1, 3) == [[1, 3], [10, 20]]


def test_add_lines_counts_only_new_lines() -> None:
    entry = pathmap.new_entry(None)
    body = "".join(f"{i:03d}4567890\n" for i in range(1, 21))  # 20 lines of 10 chars
    per_line = 10 + pathmap.LINE_PREFIX_CHARS + 1
    assert pathmap.add_lines(entry, 1, body) == 20 * per_line
    assert pathmap.add_lines(entry, 1, body) == 0
    assert pathmap.add_lines(entry, 5, "".join(body.splitlines(True)[4:10])) == 0
    more = "".join(f"{i:03d}4567890\n" for i in range(15, 31))  # lines 15-30: 21-30 are new
    assert pathmap.add_lines(entry, 15, more) == 10 * per_line
    assert entry["ranges"] == [[1, 31]]
    gap = pathmap.new_entry(None)
    pathmap.add_lines(gap, 1, "a\nb\n")
    pathmap.add_lines(gap, 10, "c\nd\n")
    # new: lines 3-9 and 12, one char each
    assert pathmap.add_lines(gap, 1, "a\nb\nx\ny\nz\nq\nr\ns\nt\nc\nd\ne\n") == 8 * (1 + 8)
    assert gap["ranges"] == [[1, 13]]


def counted_by_line(reads: list[tuple[int, str]]) -> list[int]:
    """What each Read adds, line by line: every line not read before, with its number prefix and newline."""
    seen: set[int] = set()
    out = []
    for start, content in reads:
        lines = content.split("\n")
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        fresh = [(start + k, line) for k, line in enumerate(lines) if start + k not in seen]
        seen.update(n for n, _ in fresh)
        out.append(sum(len(line) + pathmap.LINE_PREFIX_CHARS + 1 for _, line in fresh))
    return out


LINE = st.text(alphabet="ab\u00e9", max_size=4)
READ = st.tuples(st.integers(1, 30), st.lists(LINE, max_size=8), st.booleans())


@given(st.lists(READ, max_size=12))
@example([(1, ["", ""], False), (2, ["x"], True), (1, [], True)])
def test_add_lines_counts_each_line_once(raw: list[tuple[int, list[str], bool]]) -> None:
    """Reads that meet counted lines (split and counted line by line) and reads that do not (counted
    whole) add what a line-by-line count says: empty texts, trailing newlines, touching ranges."""
    reads = [(start, "\n".join(lines) + ("\n" if end and lines else "")) for start, lines, end in raw]
    entry = pathmap.new_entry(None)
    assert [pathmap.add_lines(entry, start, text) for start, text in reads] == counted_by_line(reads)


def test_total_is_floored_at_zero() -> None:
    entry = pathmap.new_entry(None)
    entry.update({"lines": 100, "overhead": 40, "pendingEdit": -30, "calibration": 500})
    assert pathmap.total(entry) == 0
    entry["calibration"] = 10
    assert pathmap.total(entry) == 100


def test_relative_and_included() -> None:
    assert pathmap.relative("/proj/a.py", "/proj") == "a.py"
    assert pathmap.relative("/proj", "/proj/") == ""
    assert pathmap.relative("/project2/a.py", "/proj") is None
    assert pathmap.relative("/a.py", None) is None
    assert pathmap.included("/proj/a.py", None, "/proj", [], []) is True
    assert pathmap.included("/proj/a.log", "gitignore", "/proj", [], []) is False
    assert pathmap.included("/proj/a.log", "gitignore", "/proj", ["*.log"], []) is True
    assert pathmap.included("/proj/a.py", None, "/proj", [], ["a.py"]) is False
    assert pathmap.included("/proj/a.py", None, "/proj", ["a.py"], ["a.py"]) is False  # exclude wins
    assert pathmap.included("/etc/hosts", "outside-project", "/proj", ["/etc/*"], []) is True


# --------------------------------------------------------------------------- a real repository

def git(repo: Path, *args: str) -> None:
    assert REAL_GIT is not None
    subprocess.run([REAL_GIT, "-C", str(repo), *args], check=True, capture_output=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    proj = tmp_path / "proj"
    (proj / "sub").mkdir(parents=True)
    (proj / "build").mkdir()
    git(proj, "init", "-q")
    (proj / ".gitignore").write_text("*.log\nbuild/\n")
    (proj / "a.py").write_text("print('a')\n")
    (proj / "debug.log").write_text("noise\n")
    (proj / "keep.log").write_text("tracked despite the pattern\n")
    (proj / "build" / "out.py").write_text("generated\n")
    (proj / "sub" / "b.py").write_text("b = 2\n")
    os.symlink(proj / "a.py", proj / "link.py")
    git(proj, "add", ".gitignore", "a.py", "sub/b.py")
    git(proj, "add", "-f", "keep.log")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.py").write_text("x = 1\n")
    return proj


@pytest.fixture
def git_log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on PATH that logs each call and runs the real one."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "git-calls.log"
    log.write_text("")
    wrapper = bindir / "git"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{REAL_GIT}" "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}")
    return log


def calls(log: Path) -> list[str]:
    return [line for line in log.read_text().splitlines() if line]


def new_state(repo: Path, cwd: Path | None = None) -> State:
    state = engine.new_state("paths")
    state["context"]["cwd"] = str(cwd or repo)
    state["context"]["project"] = os.path.realpath(repo)
    return state


def reads(raws: list[str], cwd: Path) -> list[tuple[Any, ...]]:
    t = Transcript(cwd=str(cwd))
    cr = 20_000
    t.call(cr)
    for raw in raws:
        cr += 50
        t.read(raw, "line one\nline two\n", cr=cr, cw=50)
    return t.events()


RAWS = ["./a.py", "a.py", "{repo}/a.py", "sub/../a.py", "link.py", "./sub/./b.py", "debug.log", "keep.log",
        "build/out.py", "{tmp}/elsewhere/x.py", "../elsewhere/x.py", "{repo}/../elsewhere/./x.py"]


@pytest.mark.slow
def test_one_entry_per_file_and_discard_reasons(repo: Path, git_log: Path) -> None:
    state = new_state(repo)
    raws = [r.format(repo=repo, tmp=repo.parent) for r in RAWS]
    session.fold_events(state, reads(raws, repo), config.merge())
    real = os.path.realpath
    want = {
        real(repo / "a.py"): (None, 5),
        real(repo / "sub" / "b.py"): (None, 1),
        real(repo / "debug.log"): ("gitignore", 1),
        real(repo / "keep.log"): (None, 1),  # tracked: git does not ignore it
        real(repo / "build" / "out.py"): ("gitignore", 1),
        real(repo.parent / "elsewhere" / "x.py"): ("outside-project", 3),
    }
    got = {p: (e["reason"], e["reads"]) for p, e in state["paths"].items()}
    assert got == want
    # git was asked once, for the whole batch, and only about paths inside the project
    log = calls(git_log)
    assert len(log) == 1
    assert "check-ignore" in log[0]
    doc = status_document(state, config.merge())
    files = {b["path"]: b for b in doc["buckets"] if b["type"] == "file"}
    assert {p: b["defaultDiscardReason"] for p, b in files.items()} == {p: w[0] for p, w in want.items()}
    assert {p for p, b in files.items() if b["included"]} == {
        real(repo / "a.py"), real(repo / "sub" / "b.py"), real(repo / "keep.log")}
    assert doc["bDefault"] == doc["floor"] + sum(b["tokens"] for b in files.values() if b["included"])
    assert doc["bFull"] == doc["floor"] + sum(b["tokens"] for b in files.values())
    # the same file read 5 ways counts its lines once
    a = state["paths"][real(repo / "a.py")]
    assert a["ranges"] == [[1, 3]]
    assert a["overhead"] == 5 * pathmap.TOOL_OVERHEAD


@pytest.mark.slow
def test_git_is_called_once_per_batch_and_cached(repo: Path, git_log: Path) -> None:
    state = new_state(repo)
    cfg = config.merge()
    session.fold_events(state, reads(["a.py", "debug.log", "sub/b.py", "build/out.py"], repo), cfg)
    assert len(calls(git_log)) == 1
    session.fold_events(state, reads(["./a.py", "debug.log", str(repo / "sub" / "b.py")], repo), cfg)
    assert len(calls(git_log)) == 1  # all known: no new process
    session.fold_events(state, reads([str(repo.parent / "elsewhere" / "x.py")], repo), cfg)
    assert len(calls(git_log)) == 1  # outside the project: git is not asked
    new = [f"new{i}.log" for i in range(30)] + [f"sub/n{i}.py" for i in range(30)]
    session.fold_events(state, reads(new, repo), cfg)
    assert len(calls(git_log)) == 2  # 60 new paths, one call
    reasons = {os.path.basename(p): e["reason"] for p, e in state["paths"].items()}
    assert reasons["new7.log"] == "gitignore"
    assert reasons["n7.py"] is None


@pytest.mark.slow
def test_relative_and_absolute_forms_share_the_entry(repo: Path, git_log: Path) -> None:
    state = new_state(repo, cwd=repo / "sub")
    cfg = config.merge()
    session.fold_events(state, reads(["../a.py"], repo / "sub"), cfg)
    session.fold_events(state, reads(["../link.py", str(repo / "a.py")], repo / "sub"), cfg)
    assert list(state["paths"]) == [os.path.realpath(repo / "a.py")]
    assert len(calls(git_log)) == 1


@pytest.mark.slow
def test_include_exclude_globs_override(repo: Path) -> None:
    state = new_state(repo)
    raws = ["a.py", "debug.log", "sub/b.py", "build/out.py", str(repo.parent / "elsewhere" / "x.py")]
    events = reads(raws, repo)
    real = os.path.realpath
    cfg = config.merge({"include": ["*.log", "build/*", str(repo.parent / "elsewhere") + "/*"],
                        "exclude": ["sub/*", "build/*"]})
    session.fold_events(state, events, cfg)
    inc = {os.path.relpath(p, real(repo)): e["include"] for p, e in state["paths"].items()}
    assert inc == {
        "a.py": True,  # no glob: its reason (null) decides
        "debug.log": True,  # gitignored, included by a glob
        "sub/b.py": False,  # excluded by a glob
        "build/out.py": False,  # both: exclude wins
        "../elsewhere/x.py": True,  # outside the project, included by an absolute glob
    }
    reasons = {os.path.relpath(p, real(repo)): e["reason"] for p, e in state["paths"].items()}
    assert reasons["debug.log"] == "gitignore"  # the reason stays what git said
    doc = status_document(state, cfg)
    files = [b for b in doc["buckets"] if b["type"] == "file"]
    assert doc["bDefault"] == doc["floor"] + sum(b["tokens"] for b in files if b["included"])
    # changing the config re-decides inclusion for paths already in the map
    cfg2 = config.merge()
    engine.apply_globs(state, cfg2)
    doc2 = status_document(state, cfg2)
    files2 = {os.path.relpath(b["path"], real(repo)): b["included"] for b in doc2["buckets"] if b["type"] == "file"}
    assert files2 == {"a.py": True, "debug.log": False, "sub/b.py": True, "build/out.py": False,
                      "../elsewhere/x.py": False}
    assert doc2["bDefault"] == doc2["floor"] + sum(b["tokens"] for b in doc2["buckets"]
                                                  if b["type"] == "file" and b["included"])


def test_canonical() -> None:
    assert session.canonical("a.py", "/proj") == os.path.realpath("/proj/a.py")
    assert session.canonical("./x/../a.py", "/proj") == os.path.realpath("/proj/a.py")
    assert session.canonical("/proj/a.py", "/elsewhere") == os.path.realpath("/proj/a.py")
    assert session.canonical("~/a.py", "/proj") == os.path.realpath(os.path.expanduser("~/a.py"))


@pytest.mark.slow
def test_not_a_git_repository(tmp_path: Path, git_log: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "a.log").write_text("x\n")
    state = new_state(plain)
    session.fold_events(state, reads(["a.log"], plain), config.merge())
    assert [e["reason"] for e in state["paths"].values()] == [None]  # git cannot say: not ignored


def test_canonical_of_a_relative_path_with_no_folder_is_as_named(tmp_path: Path, monkeypatch: Any) -> None:
    """No folder to resolve it from (a transcript naming none): the path as named, tidied, whatever
    folder the command runs in."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x\n")
    assert session.canonical("./x/../a.py", None) == "a.py"
    assert session.canonical("../a.py", None) == "../a.py"
    assert session.canonical("/proj/a.py", None) == os.path.realpath("/proj/a.py")


@pytest.mark.slow  # git and the hooks, real
def test_a_hooks_git_that_does_not_answer_in_time_leaves_it_silent_and_files_not_ignored(tmp_path: Path) -> None:
    """Real git kept from answering (its `.gitignore` a FIFO nobody writes: `git check-ignore` waits
    on it until its 2 s are up, `spawn.run` raises TimeoutError): the hooks exit 0 and print nothing,
    and their fold takes the project's files as not ignored and keeps that (asking git again at
    every hook naming them would stall each one as long; `export` keeps no such replay instead)."""
    from tests.oracle import TRANSCRIPTS, stop_until_read
    from tests.statefile import load_state

    proj = tmp_path / "proj"
    proj.mkdir()
    subprocess.run([REAL_GIT or "git", "init", "-q", str(proj)], check=True)
    for name in ("mix.exs", "plan.md"):
        (proj / name).write_text("x\n")
    os.mkfifo(proj / ".gitignore")
    transcript = proj / "s.jsonl"  # the hooks' payload names its folder as the session's
    transcript.write_bytes((TRANSCRIPTS / "subagent.jsonl").read_bytes()
                           .replace(b"/home/marco/projects/spotter", str(proj).encode()))
    stop_until_read("s", transcript)  # each run exits 0, printing nothing
    reasons = load_state("s")["reasons"]
    mine = {p: r for p, r in reasons.items() if p.startswith(f"{proj}{os.sep}")}
    assert str(proj / "mix.exs") in mine, reasons
    assert set(mine.values()) == {None}, mine
