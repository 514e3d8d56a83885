"""Launchers an earlier release wrote still run every hook, exit 0 and silent, and the status line,
while an install replaces the package under them and until the install writes new ones: one written
before `hooks.entry` (it imports `main` from `hooks.run`), and one written before the package by
layers (`session_watcher.bundle`'s `install(PATH)` first, then `hooks.run` or
`session_watcher.statusline`); writing the launchers removes that release's module bundle."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import oracle
from tests.statefile import load_state

pytestmark = pytest.mark.slow  # starts hook processes

SHORT = oracle.REPO / "tests" / "fixtures" / "transcripts" / "short.jsonl"


def test_a_launcher_of_the_previous_release_still_folds(tmp_path: Path) -> None:
    new = (oracle.launchers() / "session-watcher-hook").read_text()
    old = new.replace("from session_watcher.hooks.entry import main", "from session_watcher.hooks.run import main")
    assert old != new
    launcher = tmp_path / "session-watcher-hook"
    launcher.write_text(old)
    transcript = tmp_path / "old.jsonl"
    shutil.copyfile(SHORT, transcript)
    for event in ("PostToolUse", "SessionStart"):
        proc = subprocess.run([sys.executable, "-I", "-S", str(launcher), event],
                              input=json.dumps(oracle.payload("old", transcript, event)).encode(),
                              capture_output=True, timeout=60, check=False)
        assert (proc.returncode, proc.stderr, proc.stdout) == (0, b"", b"")
    assert load_state("old")["engine"]["calls"] > 0


def _layerless(kind: str, entry: str, bundle: Path) -> str:
    """A launcher of `kind` as an install before the package by layers (2026-12-04) wrote it: the
    module bundle's `install(PATH)` first, then its entry point by the names of that time."""
    new = (oracle.launchers() / f"session-watcher-{kind}").read_text()
    finder = "from session_watcher.hooks.finder import install\ninstall()\n"
    old = new.replace(finder, f"from session_watcher.bundle import install\ninstall({str(bundle)!r})\n")
    old = old.replace(f"from session_watcher.hooks.{'entry' if kind == 'hook' else 'statusline'} import main",
                      f"from {entry} import main")
    assert finder not in old
    assert entry in old
    return old


def test_a_launcher_from_before_the_layers_still_runs_the_hooks_and_the_status_line(tmp_path: Path) -> None:
    # that build's bundle of compiled modules, left beside the venv: never loaded over this build's
    bundle = tmp_path / "session-watcher-modules.marshal"
    bundle.write_bytes(b"not this build's modules")
    hook = tmp_path / "session-watcher-hook"
    hook.write_text(_layerless("hook", "session_watcher.hooks.run", bundle))
    status = tmp_path / "session-watcher-statusline"
    status.write_text(_layerless("statusline", "session_watcher.statusline", bundle))
    transcript = tmp_path / "old.jsonl"
    shutil.copyfile(SHORT, transcript)
    for event in ("SessionStart", "PostToolUse", "Stop"):
        proc = subprocess.run([sys.executable, "-I", "-S", str(hook), event],
                              input=json.dumps(oracle.payload("layerless", transcript, event)).encode(),
                              capture_output=True, timeout=60, check=False)
        assert (proc.returncode, proc.stderr, proc.stdout) == (0, b"", b"")
    assert load_state("layerless")["engine"]["calls"] > 0
    line = subprocess.run([sys.executable, "-I", "-S", str(status)],
                          input=json.dumps(oracle.payload("layerless", transcript, "Status")).encode(),
                          capture_output=True, timeout=60, check=False)
    assert (line.returncode, line.stderr) == (0, b"")
    assert line.stdout.count(b"\n") == 1
    assert line.stdout.endswith(b"\n")
    assert line.stdout.strip()
    # the same line a launcher of this build draws from the same state
    new = subprocess.run(oracle.launcher("statusline"),
                         input=json.dumps(oracle.payload("layerless", transcript, "Status")).encode(),
                         capture_output=True, timeout=60, check=False)
    assert (new.returncode, new.stderr, new.stdout) == (0, b"", line.stdout)


def test_writing_the_launchers_removes_an_older_builds_module_bundle(tmp_path: Path) -> None:
    from session_watcher.hooks.launchers import command_text, write

    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "session-watcher").write_text("#!/bin/sh\n")  # pip's command: written over (its `re`)
    bundle = venv / "session-watcher-modules.marshal"  # as that build named it
    bundle.write_bytes(b"the compiled modules of a build from before the layers")
    other = venv / "session-watcher-modules.marshal.yours"
    other.write_bytes(b"not ours")
    written = write(str(venv / "bin"))
    assert sorted(Path(p).name for p in written) == ["session-watcher", "session-watcher-hook",
                                                     "session-watcher-statusline"]
    assert not bundle.exists()
    assert other.read_bytes() == b"not ours"
    assert (venv / "bin" / "session-watcher").read_text() == command_text()
    assert write(str(venv / "bin")) == written  # again, with no bundle there: the same launchers


@pytest.mark.parametrize("folder", ["a venv", "v" * 200])
def test_the_command_written_runs_where_no_shebang_line_holds_the_interpreter(tmp_path: Path, folder: str) -> None:
    """The command written over pip's wrapper, for an interpreter whose path a `#!` line cannot name
    (a space in it, a home folder's; longer than the kernel reads, 255 bytes on Linux): it runs, its
    exit codes and messages the CLI's, as pip's wrapper runs there (sh execs the interpreter on it)."""
    bin_dir = tmp_path / folder / "bin"
    bin_dir.mkdir(parents=True)
    python = bin_dir / "python"
    python.symlink_to(sys.executable)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "PYTHONPATH": str(oracle.REPO)}
    subprocess.run([str(python), "-I", "-c", "import sys; sys.path.insert(0, sys.argv[1])\n"
                    "from session_watcher.hooks.launchers import write; write(sys.argv[2])", str(oracle.REPO),
                    str(bin_dir)], env=env, check=True, timeout=60)
    command = bin_dir / "session-watcher"
    r = subprocess.run([str(command), "--version"], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    assert r.stdout.startswith("session-watcher ")
    r = subprocess.run([str(command), "report", "--bogus"], capture_output=True, text=True, env=env, timeout=60,
                       check=False)
    assert r.returncode == 2
    assert r.stderr.startswith("session-watcher report: error: unrecognized arguments: --bogus")
