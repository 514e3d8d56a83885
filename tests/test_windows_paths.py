"""Windows paths read right on every system (issue 29, item 5): drive letters, either separator, UNC
shares, in the canonical form, the project filter and what is shown; on the real `D:\\` sessions of
the calibration set (oh-my-posh, recorded on Windows)."""

from __future__ import annotations

import json
import os
import subprocess
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.core import paths as pathmap
from session_watcher.state.session import canonical
from session_watcher.state.shell import project_root, real_folder
from tests.calibration import unpack
from tests.oracle import SW

if TYPE_CHECKING:
    from pathlib import Path


def sw(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    """The console script, run from the folder `cwd`."""
    return subprocess.run([str(SW), *args], capture_output=True, timeout=120, check=False, cwd=cwd)

POSH = "6878eb98-fd0b-43e6-82a0-ab8b38b612dc"  # cwd D:\oh-my-posh; reads C:\Users\jande\.posh.omp.jsonc too


@pytest.mark.parametrize(("path", "windows"), [
    ("D:\\oh-my-posh\\src\\a.go", True), ("d:/oh-my-posh", True), ("D:", True), ("\\\\server\\share\\x", True),
    ("/home/u/a.py", False), ("a.py", False), ("./D:x", False), ("1:\\x", False), ("é:\\x", False),
])
def test_what_a_windows_path_is(path: str, windows: bool) -> None:
    assert pathmap.windows_form(path) is windows


@pytest.mark.parametrize(("raw", "cwd", "want"), [
    ("D:\\oh-my-posh\\src\\a.go", None, "D:\\oh-my-posh\\src\\a.go"),
    ("d:/oh-my-posh/src/../b.go", None, "D:\\oh-my-posh\\b.go"),  # either separator, `..` folded
    ("src\\color\\c.go", "D:\\oh-my-posh", "D:\\oh-my-posh\\src\\color\\c.go"),  # relative to a Windows cwd
    ("src/./c.go", "D:\\oh-my-posh\\", "D:\\oh-my-posh\\src\\c.go"),
    ("\\\\fs\\share\\proj\\x.py", "D:\\elsewhere", "\\\\fs\\share\\proj\\x.py"),  # UNC
])
def test_canonical_keeps_a_windows_path_one(raw: str, cwd: str | None, want: str) -> None:
    assert pathmap.windows_canonical(raw, cwd) == want
    if os.sep == "/":  # the shell's canonical form on this system: never glued to a folder of it
        got = canonical(raw, cwd)
        assert got == want
        assert not got.startswith(os.getcwd())


@pytest.mark.parametrize(("path", "root", "rel"), [
    ("D:\\oh-my-posh\\src\\a.go", "D:\\oh-my-posh", "src/a.go"),
    ("d:\\OH-MY-POSH\\src\\a.go", "D:\\oh-my-posh\\", "src/a.go"),  # Windows compares without case
    ("D:\\oh-my-posh", "D:/oh-my-posh", ""),
    ("C:\\Users\\jande\\.posh.omp.jsonc", "D:\\oh-my-posh", None),  # another drive: outside
    ("D:\\oh-my-posh-old\\a.go", "D:\\oh-my-posh", None),  # a folder that only starts the same
    ("D:\\x\\a.go", "D:\\", "x/a.go"),
    ("\\\\fs\\share\\p\\a.py", "\\\\fs\\share\\p", "a.py"),
    ("C:\\Users\\x", "/home/u/proj", None),  # a Windows path is outside any POSIX root, and back
    ("/home/u/proj/a.py", "D:\\proj", None),
    ("/home/u/proj/a.py", "/home/u/proj", "a.py"),
])
def test_inside_the_project_as_windows_says(path: str, root: str, rel: str | None) -> None:
    assert pathmap.relative(path, root) == rel


def test_a_windows_project_root_is_never_glued_to_this_folder() -> None:
    if os.sep != "/":
        pytest.skip("on Windows the folder is the system's own")
    assert project_root(None, "D:\\oh-my-posh\\", env={}) == "D:\\oh-my-posh"
    assert real_folder("d:/oh-my-posh") == "D:\\oh-my-posh"
    assert project_root("/tmp", "D:\\x", env={}) == os.path.realpath("/tmp")
    # a UNC share and a bare drive too (the rules are imported only for what a Windows path begins
    # with); a POSIX folder with a colon further on is resolved here
    assert real_folder("\\\\server\\share\\x\\..\\y") == "\\\\server\\share\\y"
    assert real_folder("d:") == "D:"
    assert real_folder("/tmp/a:b") == os.path.realpath("/tmp/a:b")


def _first_advice(doc_trace: list[dict[str, object]]) -> int | None:
    return next((int(r["call"]) for r in doc_trace if r.get("alerts")), None)  # type: ignore[call-overload]


@pytest.mark.slow
def test_a_real_d_drive_session_reads_the_same_from_anywhere(tmp_path: Path) -> None:
    """Replayed from two folders of this system, with or without --cwd naming its own folder in another
    spelling: the same files, the same baseline, the same first advice; its D:\\ files are inside the
    project and shown as the Windows paths they are; the C:\\Users file is outside."""
    transcript = unpack(POSH, tmp_path / "t")
    runs: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for where, extra in ((tmp_path, ()), (tmp_path / "t", ()), (tmp_path, ("--cwd", "d:/oh-my-posh/"))):
        trace = tmp_path / f"trace-{len(runs)}.jsonl"
        proc = sw("replay", str(transcript), "--json", "--trace", str(trace), *extra, cwd=where)
        assert proc.returncode == 0, proc.stderr
        rows = [json.loads(line) for line in trace.read_text().splitlines()]
        runs.append((json.loads(proc.stdout), rows))
    (doc, rows), *others = runs
    buckets = {b["path"]: b for b in doc["buckets"] if b["path"]}
    assert buckets, "the session read files"
    assert all(p.startswith(("D:\\", "C:\\")) for p in buckets), sorted(buckets)[:3]
    assert not any(str(tmp_path) in p or "/" in p for p in buckets)
    outside = {p: b["defaultDiscardReason"] for p, b in buckets.items() if p.startswith("C:\\")}
    assert "C:\\Users\\jande\\.posh.omp.jsonc" in outside
    assert set(outside.values()) == {"outside-project"}
    assert all(b["defaultDiscardReason"] is None for p, b in buckets.items() if p.startswith("D:\\oh-my-posh\\"))
    assert doc["bDefault"] < doc["B"]  # the C:\ file is carried by B only
    first = _first_advice(rows)
    assert first is not None
    for other_doc, other_rows in others:
        assert other_doc["bDefault"] == doc["bDefault"]
        assert [b["path"] for b in other_doc["buckets"]] == [b["path"] for b in doc["buckets"]]
        assert _first_advice(other_rows) == first
    text = sw("replay", str(transcript), cwd=tmp_path).stdout.decode()
    assert "D:\\oh-my-posh\\src\\" in text
    assert f"{tmp_path}" not in text
