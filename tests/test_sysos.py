"""base.sysos, the hooks' calls to the system without `os`: the same answers as `os` and `os.path`."""

from __future__ import annotations

import os
import posixpath
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from session_watcher.base import sysos

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
             "dir/up/dir/up/to-file", "missing", "missing/../dir", "to-dir/../to-file", "dir/./file/", "dir//file",
             "to-dir/../to-dir/file", "to-dir/up/to-dir/up/to-dir", "loop-a/../dir", "to-file/", "broken/x"]
    for name in names:
        for path in (str(tmp_path / name), f"{tmp_path}/{name}"):
            got = [sysos.exists(path), sysos.lexists(path), sysos.isfile(path), sysos.isdir(path),
                   sysos.islink(path), sysos.realpath(path)]
            assert got == [os.path.exists(path), os.path.lexists(path), os.path.isfile(path), os.path.isdir(path),
                           os.path.islink(path), os.path.realpath(path)], name
    assert sysos.exists("a\0b") is os.path.exists("a\0b") is False  # a NUL in the path: no, not an error


# a small tree: folders, files and links (relative, absolute, up, to themselves, dangling, through
# each other) under four names, then paths through it from the root and from a folder in it
NAMES = ["a", "b", "c", "d"]
NODE = st.tuples(st.lists(st.sampled_from(NAMES), min_size=1, max_size=2),
                 st.sampled_from(["dir", "file", "link", "link"]),
                 st.sampled_from(["a", "../a", "b/c", "/nowhere", "..", ".", "c/../d", "ROOT/d", "a/", "d//b/", "~",
                                  "a/b/../../c", "ROOT"]))
WALK = st.lists(st.sampled_from(["a", "b", "c", "d", "..", ".", "", "x"]), max_size=7)


@given(st.lists(NODE, max_size=10), st.lists(st.tuples(WALK, st.sampled_from(["", "/", "//"])), min_size=1, max_size=8),
       st.sampled_from(["", "a", "b"]))
def test_realpath_and_the_file_tests_agree_with_os_path_over_generated_trees(
        nodes: list[tuple[list[str], str, str]], walks: list[tuple[list[str], str]], start: str) -> None:
    """Links to links, loops, `..` through a link, trailing slashes, relative paths from a working
    folder in the tree: realpath, abspath and the file tests give os.path's answers."""
    import tempfile

    here = os.getcwd()
    with tempfile.TemporaryDirectory() as root:
        for names, kind, target in nodes:
            path = os.path.join(root, *names)
            try:
                os.makedirs(os.path.dirname(path), exist_ok=True)
                if kind == "dir":
                    os.makedirs(path, exist_ok=True)
                elif kind == "file":
                    with open(path, "x"):
                        pass
                else:
                    os.symlink(target.replace("ROOT", root), path)
            except OSError:
                pass  # a name taken already, or a parent that is a file or a link: the tree as it is
        try:
            os.chdir(os.path.join(root, start))
        except OSError:
            os.chdir(root)
        try:
            for walk, end in walks:
                rel = "/".join(walk) + end
                for path in (rel, f"{root}/{rel}"):
                    for name in ("realpath", "abspath", "exists", "lexists", "isfile", "isdir", "islink"):
                        assert getattr(sysos, name)(path) == getattr(os.path, name)(path), (name, path)
        finally:
            os.chdir(here)


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
    """Where nothing has loaded `os` (the launchers): the process's environment, its bytes decoded as
    os.environ decodes them (undecodable bytes kept as surrogates), a change made through either seen
    by the other."""
    monkeypatch.setenv("SESSION_WATCHER_SYSOS_TEST", "caf\udce9")  # a byte that is not UTF-8
    monkeypatch.delitem(sys.modules, "os")
    try:
        got = sysos._environ()
    finally:
        sys.modules["os"] = os
    assert got is not os.environ
    assert dict(got) == dict(os.environ) == got.copy()  # type: ignore[attr-defined]  # os.environ has it too
    assert (len(got), sorted(got)) == (len(os.environ), sorted(os.environ))
    assert sorted(got.items()) == sorted(os.environ.items())
    assert got["SESSION_WATCHER_SYSOS_TEST"] == "caf\udce9"
    assert "SESSION_WATCHER_SYSOS_TEST" in got
    assert got.get("SESSION_WATCHER_SYSOS_NONE") is None
    assert "SESSION_WATCHER_SYSOS_NONE" not in got
    monkeypatch.setenv("SESSION_WATCHER_SYSOS_TEST", "later")  # through os.environ
    assert got["SESSION_WATCHER_SYSOS_TEST"] == "later"
    got["SESSION_WATCHER_SYSOS_TEST"] = "back"  # through the view
    assert os.environ["SESSION_WATCHER_SYSOS_TEST"] == "back"
    del got["SESSION_WATCHER_SYSOS_TEST"]
    assert "SESSION_WATCHER_SYSOS_TEST" not in os.environ
    with pytest.raises(KeyError):
        del got["SESSION_WATCHER_SYSOS_TEST"]
    with pytest.raises(TypeError):
        got["SESSION_WATCHER_SYSOS_TEST"] = 1  # type: ignore[assignment]


# a launcher's process: no `os` when sysos is imported; a rare branch imports it later and changes the
# environment, a change through sysos too; the children spawn.run, posix_spawn with sysos.environ and
# subprocess (the C environment, which putenv sets) start see both
LATE_OS = r"""
import sys
sys.path.insert(0, sys.argv[1])
from session_watcher.base import sysos
assert "os" not in sys.modules, "os loaded before sysos"
assert sysos.environ["SW_SYSOS_START"] == "caf\udce9"
import os
os.environ["SW_SYSOS_BY_OS"] = "os"
sysos.environ["SW_SYSOS_BY_SYSOS"] = "sysos"
del sysos.environ["SW_SYSOS_START"]
assert (sysos.environ["SW_SYSOS_BY_OS"], os.environ["SW_SYSOS_BY_SYSOS"]) == ("os", "sysos")
assert "SW_SYSOS_START" not in os.environ and dict(sysos.environ) == dict(os.environ)
from session_watcher.state import spawn
got = spawn.run(["env"], b"", 30)
assert got is not None and got[0] == 0, got
children = [got[1]]
r, w = os.pipe()
actions = [(sysos.POSIX_SPAWN_DUP2, w, 3)]
pid = sysos.posix_spawn("/bin/sh", ["sh", "-c", "env >&3"], sysos.environ, file_actions=actions)
os.close(w)
sysos.waitpid(pid, 0)
children.append(os.read(r, 1 << 20))
import subprocess
children.append(subprocess.run(["env"], capture_output=True, check=True).stdout)  # the C environment: putenv's
for out in children:
    lines = out.split(b"\n")
    assert b"SW_SYSOS_BY_OS=os" in lines and b"SW_SYSOS_BY_SYSOS=sysos" in lines, out
    assert not any(line.startswith(b"SW_SYSOS_START=") for line in lines), out
print("ok")
"""


@pytest.mark.slow  # starts processes
def test_environ_is_one_environment_when_os_comes_after_sysos(tmp_path: Path) -> None:
    """A launcher's process (`-I -S`: no `os` at the start) imports sysos, then `os`: a change made
    through either mapping is in the other, and the children `spawn.run` and `posix_spawn` start have
    it (a copy taken at sysos's import would have been a second environment)."""
    import subprocess

    root = str(Path(__file__).resolve().parent.parent)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    env_b = {k.encode(): v.encode() for k, v in env.items()} | {b"SW_SYSOS_START": b"caf\xe9"}
    proc = subprocess.run([sys.executable, "-I", "-S", "-c", LATE_OS, root], env=env_b, capture_output=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    assert proc.stdout.endswith(b"ok\n")
