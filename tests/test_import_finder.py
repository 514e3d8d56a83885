"""The launchers' import finder (hooks/finder.py): a module of the package is taken from its current
`.pyc` as the interpreter's own loader takes it, with the same file attributes; anything else (no
such module, no `.pyc`, a stale or hash-checked one, another package's module) is left to the
ordinary finders. And the launchers do import the package through it."""

from __future__ import annotations

import compileall
import importlib.util
import json
import os
import py_compile
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from session_watcher.hooks import finder
from tests.oracle import launcher

if TYPE_CHECKING:
    from collections.abc import Iterator


@pytest.fixture
def root(tmp_path: Path) -> Iterator[Path]:
    """A package folder of our own in place of the installed one (the finder's root)."""
    kept = finder._ROOT[:]
    finder._ROOT[:] = [str(tmp_path)]
    try:
        yield tmp_path
    finally:
        finder._ROOT[:] = kept


def compiled(path: Path, text: str, mode: py_compile.PycInvalidationMode = py_compile.PycInvalidationMode.TIMESTAMP,
             ) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    cfile = py_compile.compile(str(path), doraise=True, invalidation_mode=mode)
    assert cfile is not None
    return cfile


def test_a_current_pyc_gives_the_module_the_ordinary_loader_gives(root: Path) -> None:
    cfile = compiled(root / "sub" / "mod.py", "X = 41 + 1\n")
    spec = finder.find_spec("session_watcher.sub.mod")
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    spec.loader.exec_module(module)
    ordinary = importlib.util.spec_from_file_location("session_watcher.sub.mod", root / "sub" / "mod.py")
    assert ordinary is not None
    assert module.X == 42
    assert (module.__file__, module.__cached__) == (ordinary.origin, ordinary.cached) == (str(root / "sub" / "mod.py"),
                                                                                           cfile)
    assert not spec.submodule_search_locations


def test_a_package_is_found_by_its_init(root: Path) -> None:
    compiled(root / "sub" / "__init__.py", "Y = 'package'\n")
    spec = finder.find_spec("session_watcher.sub")
    assert spec is not None
    assert spec.origin == str(root / "sub" / "__init__.py")
    assert spec.submodule_search_locations == [str(root / "sub")]
    assert spec.parent == "session_watcher.sub"


def test_what_the_ordinary_loader_would_not_take_as_it_is_is_left_to_it(root: Path) -> None:
    """A source changed since its .pyc (its size or mtime), a hash-checked .pyc, no .pyc, no such
    module, another package's module: None, the ordinary finders' turn (they compile, and write)."""
    source = root / "mod.py"
    compiled(source, "X = 1\n")
    assert finder.find_spec("session_watcher.mod") is not None
    source.write_text("X = 22\n")  # edited since: another size
    assert finder.find_spec("session_watcher.mod") is None
    compiled(source, "X = 3\n")
    st = source.stat()
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))  # the same size, touched since
    assert finder.find_spec("session_watcher.mod") is None
    compiled(source, "X = 4\n", py_compile.PycInvalidationMode.CHECKED_HASH)
    assert finder.find_spec("session_watcher.mod") is None
    cached = Path(importlib.util.cache_from_source(str(source)))
    compiled(source, "X = 5\n")
    cached.write_bytes(b"\0" * 4 + cached.read_bytes()[4:])  # another interpreter's magic number
    assert finder.find_spec("session_watcher.mod") is None
    cached.unlink()
    assert finder.find_spec("session_watcher.mod") is None
    assert finder.find_spec("session_watcher.nothing_here") is None
    compiled(root / "other.py", "X = 6\n")
    assert finder.find_spec("elsewhere.other") is None
    assert finder.find_spec("session_watcher.other") is not None


@pytest.mark.slow  # starts a process
def test_the_launchers_import_the_package_through_it(tmp_path: Path) -> None:
    """A hook run through the launcher (`-v`: the ordinary loader says each `.pyc` it reads) reads
    none of the package's modules the ordinary way but the three before the finder is installed, and
    does its work (a SessionStart of a fresh session: silent, exit 0)."""
    payload = {"session_id": "f1", "transcript_path": str(tmp_path / "f1.jsonl"), "cwd": str(tmp_path),
               "hook_event_name": "SessionStart", "source": "startup"}
    package = os.path.dirname(os.path.dirname(os.path.abspath(finder.__file__)))
    compileall.compile_dir(package, quiet=1)  # every .pyc current (an edited source's is not: left to the loader)
    argv = launcher("hook", "SessionStart", "inject")
    proc = subprocess.run([argv[0], "-v", *argv[1:]], input=json.dumps(payload).encode(), capture_output=True,
                          timeout=60, check=False)
    assert (proc.returncode, proc.stdout) == (0, b"")
    ordinary = {line.split("'")[1] for line in proc.stderr.decode().splitlines()
                if line.startswith(("# code object from", "# wrote")) and package in line}
    assert {os.path.relpath(p, package).split("__pycache__")[0] + os.path.basename(p).split(".")[0]
            for p in ordinary} == {"__init__", "hooks/__init__", "hooks/finder"}
    imported = [line for line in proc.stderr.decode().splitlines() if line.startswith("import 'session_watcher.")]
    assert any("session_watcher.state.handoffs" in line for line in imported)  # and more came through the finder
    assert sys.modules["session_watcher.hooks.finder"] is finder


def test_a_package_found_by_it_gives_its_files_as_the_ordinary_loader(root: Path) -> None:
    """`importlib.resources.files` of a package the finder found is its folder, `joinpath` of several
    names included (the report page reads `joinpath("assets", name)`; it failed through the finder)."""
    from importlib import resources

    compiled(root / "pkg" / "__init__.py", "")
    (root / "pkg" / "assets").mkdir()
    (root / "pkg" / "assets" / "x.css").write_text("a{}")
    spec = finder.find_spec("session_watcher.pkg")
    assert spec is not None
    assert spec.loader is finder
    module = importlib.util.module_from_spec(spec)
    sys.modules["session_watcher.pkg"] = module
    try:
        spec.loader.exec_module(module)
        assert resources.files("session_watcher.pkg").joinpath("assets", "x.css").read_text() == "a{}"
        assert Path(str(resources.files("session_watcher.pkg"))) == root / "pkg"
    finally:
        del sys.modules["session_watcher.pkg"]


@pytest.mark.slow  # starts a process
def test_the_launchers_raise_the_collectors_first_threshold_before_the_package_loads() -> None:
    """The launcher's own lines up to its entry point's import, run as the launcher runs
    (`python -I -S`), leave the collector's first generation at GC_THRESHOLD, not CPython's 700
    (docs/architecture.md, the trick audit), and the collector on."""
    from session_watcher.hooks.launchers import GC_THRESHOLD

    path = Path(launcher("hook")[-1])
    head = path.read_text().split("\nfrom session_watcher.hooks.entry")[0]
    probe = head + "\nimport gc\nprint(gc.get_threshold()[0], gc.isenabled())\n"
    out = subprocess.run([sys.executable, "-I", "-S", "-c", probe], capture_output=True, timeout=60, check=True)
    assert out.stdout.decode().split() == [str(GC_THRESHOLD), "True"]
    assert GC_THRESHOLD != 700  # the probe can tell the two apart
