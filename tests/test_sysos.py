"""base.sysos, the hooks' calls to the system without `os`: the same answers as `os` and `os.path`."""

from __future__ import annotations

import os
import posixpath
import sys
from typing import TYPE_CHECKING

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_watcher.base import sysos

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX: elsewhere sysos is os itself")

# path-like text: slashes, dots and tildes in every arrangement, and ordinary names
PARTS = st.lists(st.sampled_from(["", "/", "//", "///", ".", "..", "~", "~root", "~nobody-here", "a", "b.c", " x ",
                                  "é", "a/", "/b"]), max_size=8)


@given(PARTS)
def test_the_pure_path_helpers_agree_with_posixpath(parts: list[str]) -> None:
    """join, split, dirname, basename, isabs, normpath and abspath: posixpath's results."""
    path = "".join(parts)
    assert sysos.join(path, *parts) == posixpath.join(path, *parts)
    assert sysos.split(path) == posixpath.split(path)
    assert sysos.dirname(path) == posixpath.dirname(path)
    assert sysos.basename(path) == posixpath.basename(path)
    assert sysos.isabs(path) == posixpath.isabs(path)
    assert sysos.normpath(path) == posixpath.normpath(path)
    assert sysos.abspath(path) == posixpath.abspath(path)


@given(PARTS)
def test_expanduser_agrees_with_posixpath(parts: list[str]) -> None:
    """`~` from HOME, `~user` from the password database, an unknown user left alone."""
    path = "".join(parts)
    assert sysos.expanduser(path) == posixpath.expanduser(path)


def test_expanduser_without_home_asks_the_password_database(monkeypatch: pytest.MonkeyPatch) -> None:
    """No HOME: the user's entry, as os.path does it."""
    monkeypatch.delenv("HOME", raising=False)
    for path in ("~", "~/x", "~root/y"):
        assert sysos.expanduser(path) == posixpath.expanduser(path)


def test_the_file_tests_and_realpath_agree_with_os_path(tmp_path: Path) -> None:
    """exists, lexists, isfile, isdir, islink and realpath over files, folders, links, a broken link
    and a loop of links."""
    (tmp_path / "dir").mkdir()
    (tmp_path / "dir" / "file").write_text("x")
    (tmp_path / "to-dir").symlink_to("dir")
    (tmp_path / "to-file").symlink_to(tmp_path / "dir" / "file")
    (tmp_path / "broken").symlink_to("nowhere")
    (tmp_path / "loop-a").symlink_to("loop-b")
    (tmp_path / "loop-b").symlink_to("loop-a")
    (tmp_path / "dir" / "up").symlink_to("..")
    names = ["dir", "dir/file", "to-dir", "to-dir/file", "to-file", "broken", "loop-a", "loop-a/x", "dir/up/to-dir",
             "dir/up/dir/up/to-file", "missing", "missing/../dir", "to-dir/../to-file", "dir/./file/", "dir//file"]
    for name in names:
        for path in (str(tmp_path / name), f"{tmp_path}/{name}"):
            got = [sysos.exists(path), sysos.lexists(path), sysos.isfile(path), sysos.isdir(path),
                   sysos.islink(path), sysos.realpath(path)]
            assert got == [os.path.exists(path), os.path.lexists(path), os.path.isfile(path), os.path.isdir(path),
                           os.path.islink(path), os.path.realpath(path)], name
    assert sysos.exists("a\0b") is os.path.exists("a\0b") is False  # a NUL in the path: no, not an error


def test_a_relative_realpath_starts_from_the_working_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A relative path and `..` resolved from the process's folder, as os.path does it."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "link").symlink_to("sub")
    monkeypatch.chdir(tmp_path / "sub")
    for path in ("", ".", "..", "../link", "../link/../sub", "x/../../link"):
        assert sysos.realpath(path) == os.path.realpath(path)


def test_the_calls_are_posix_own() -> None:
    """What sysos takes from posix is what os has under the same names (os re-exports posix)."""
    for name in ("stat", "lstat", "open", "close", "read", "pread", "write", "replace", "scandir", "getpid",
                 "O_RDONLY", "O_CREAT", "POSIX_SPAWN_DUP2", "stat_result"):
        assert getattr(sysos, name) is getattr(os, name), name
    assert getattr(sysos, "O_NOFOLLOW", 0) == getattr(os, "O_NOFOLLOW", 0)  # any other name: posix's
    assert (sysos.sep, sysos.pathsep, sysos.defpath, sysos.devnull) == (os.sep, os.pathsep, os.defpath, os.devnull)


def test_environ_is_os_environ_once_os_is_loaded(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a process that has `os` (the CLI, the tests), a change made through os.environ is seen."""
    assert sysos.environ is os.environ
    monkeypatch.setenv("SESSION_WATCHER_SYSOS_TEST", "seen")
    assert sysos.environ.get("SESSION_WATCHER_SYSOS_TEST") == "seen"


def test_environ_without_os_is_the_process_environment_decoded_as_os_decodes_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Where nothing has loaded `os` (the launchers): the environment the process started with, its
    bytes decoded as os.environ decodes them (undecodable bytes kept as surrogates)."""
    monkeypatch.setenv("SESSION_WATCHER_SYSOS_TEST", "caf\udce9")  # a byte that is not UTF-8
    monkeypatch.delitem(sys.modules, "os")
    try:
        got = sysos._environ()
    finally:
        sys.modules["os"] = os
    assert got is not os.environ
    assert got == dict(os.environ)
    assert got["SESSION_WATCHER_SYSOS_TEST"] == "caf\udce9"
