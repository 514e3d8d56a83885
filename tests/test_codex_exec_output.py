"""`codex exec` shows no hook's output (agents.codex.execout): the guard's reason and the queued
alerts go to the stderr of the `codex exec` process that runs the hook, and nowhere else: not into a
TUI's terminal (a `codex` that is not `exec`, or a terminal held raw), not into a file written at an
offset. Real processes: a stand-in named `codex` runs the hook's step with its stderr where a test
puts it (the real binary: tests/e2e/test_e2e_codex.py)."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import termios
import tty
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher.agents.codex import execout

if TYPE_CHECKING:
    from pathlib import Path

HELD = {"decision": "block", "reason": "session-watcher: cold cache. Nothing was sent.",
        "systemMessage": "session-watcher: an alert queued for you"}


@pytest.mark.parametrize(("argv", "exec_"), [
    (["codex", "exec", "--json", "say hi"], True),
    (["codex", "e", "hi"], True),
    (["codex", "-c", "model=x", "--enable", "y", "exec", "resume", "--last", "go on"], True),
    (["/bin/sh", "/opt/bin/codex", "exec", "hi"], True),  # a script named codex: its shell first
    (["codex"], False),  # the TUI
    (["codex", "fix the exec tests"], False),  # the TUI with a prompt
    (["codex", "resume", "--last"], False),
    (["codex", "resume", "exec"], False),  # a session named exec, resumed in the TUI
    (["codex", "app-server", "--listen", "x"], False),  # the TUI's daemon
    (["codex", "--", "exec"], False),
    # an option's value is never the subcommand (`codex --help` of 0.171.0: these are the TUI)
    (["codex", "-m", "exec", "hi"], False),
    (["codex", "-C", "e"], False),
    (["codex", "--profile", "exec", "resume", "--last"], False),
    (["codex", "-i", "a.png", "exec"], False),  # `-i` takes every word up to the next option
    (["codex", "-i", "a.png", "b.png", "-m", "m", "exec", "hi"], True),
    (["codex", "--model=exec", "e", "hi"], True),
])
def test_exec_is_the_first_subcommand_on_codexs_command_line(argv: list[str], exec_: bool) -> None:
    assert execout.is_exec(argv) is exec_


def test_what_is_shown_is_a_blocks_reason_then_the_message() -> None:
    assert execout.texts(HELD) == [HELD["reason"], HELD["systemMessage"]]
    assert execout.texts({"systemMessage": "x"}) == ["x"]
    assert execout.texts({"reason": "not held", "systemMessage": " "}) == []


def _fake_codex(tmp_path: Path, *args: str) -> list[str]:
    """A process named `codex` (a shell script) running `execout.show` in a child, as Codex runs a
    hook; the child prints what the hook would print."""
    script = tmp_path / "codex"
    script.write_text("#!/bin/sh\n"
                      f'"{sys.executable}" -c "$SHOW" "$HOOK_OUT"\n'
                      "status=$?\nexit $status\n")  # not the shell's last command: it stays the parent
    script.chmod(0o755)
    return [str(script), *args]


SHOW = ("import json, sys\nfrom session_watcher.agents.codex.execout import show\n"
        "print(json.dumps(show(json.loads(sys.argv[1]))))")


def _run(cmd: list[str], stderr: Any) -> dict[str, Any]:
    got = subprocess.run(cmd, env={**os.environ, "SHOW": SHOW, "HOOK_OUT": json.dumps(HELD)}, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=stderr, timeout=60, check=True)
    return dict(json.loads(got.stdout))


@pytest.mark.slow
def test_under_exec_the_texts_reach_its_stderr_pipe_and_the_message_leaves_the_json(tmp_path: Path) -> None:
    got = subprocess.run(_fake_codex(tmp_path, "exec", "--json", "go on"),
                         env={**os.environ, "SHOW": SHOW, "HOOK_OUT": json.dumps(HELD)}, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60, check=True)
    assert got.stderr == f"{HELD['reason']}\n{HELD['systemMessage']}\n"
    assert json.loads(got.stdout) == {"decision": "block", "reason": HELD["reason"]}  # the hold stays


@pytest.mark.slow
def test_not_under_exec_nothing_is_written_and_the_json_is_whole(tmp_path: Path) -> None:
    got = subprocess.run(_fake_codex(tmp_path, "resume", "--last"),
                         env={**os.environ, "SHOW": SHOW, "HOOK_OUT": json.dumps(HELD)}, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=60, check=True)
    assert got.stderr == ""
    assert json.loads(got.stdout) == HELD


@pytest.mark.slow
def test_a_file_is_written_only_when_exec_appends_to_it(tmp_path: Path) -> None:
    """`codex exec ... 2>log` writes at its own offset, over anything added behind it: left alone;
    `2>>log` appends, as the hook does."""
    log = tmp_path / "log"
    log.write_text("before\n")
    with log.open("r+") as fh:  # at an offset, as `2>` opens it
        fh.seek(0, os.SEEK_END)
        out = _run(_fake_codex(tmp_path, "exec", "hi"), fh)
    assert log.read_text() == "before\n"
    assert out == HELD
    with log.open("a") as fh:
        out = _run(_fake_codex(tmp_path, "exec", "hi"), fh)
    assert log.read_text() == f"before\n{HELD['reason']}\n{HELD['systemMessage']}\n"
    assert "systemMessage" not in out


def _on_terminal(tmp_path: Path, raw: bool) -> tuple[bytes, dict[str, Any]]:
    master, slave = pty.openpty()
    try:
        if raw:
            tty.setraw(slave)  # as a full-screen program holds it
        else:
            attrs = termios.tcgetattr(slave)
            attrs[1] &= ~termios.ONLCR  # the bytes as written
            termios.tcsetattr(slave, termios.TCSANOW, attrs)
        out = _run(_fake_codex(tmp_path, "exec", "hi"), slave)
        os.set_blocking(master, False)
        try:
            shown = os.read(master, 65536)
        except BlockingIOError:
            shown = b""
    finally:
        os.close(slave)
        os.close(master)
    return shown, out


@pytest.mark.slow
def test_a_terminal_in_line_mode_gets_the_texts_a_raw_one_nothing(tmp_path: Path) -> None:
    shown, out = _on_terminal(tmp_path, raw=False)
    assert shown == f"{HELD['reason']}\n{HELD['systemMessage']}\n".encode()
    assert "systemMessage" not in out
    shown, out = _on_terminal(tmp_path, raw=True)
    assert shown == b""
    assert out == HELD


@pytest.mark.slow
def test_under_exec_json_a_stderr_that_is_its_stdout_is_left_alone(tmp_path: Path) -> None:
    """`codex exec --json ... 2>&1 | program`: one stream of events a program reads line by line,
    nothing of ours in it; without `--json` the same stream is a person's, and gets the texts."""
    env = {**os.environ, "SHOW": SHOW, "HOOK_OUT": json.dumps(HELD)}
    got = subprocess.run(_fake_codex(tmp_path, "exec", "--json", "go on"), env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, check=True)
    assert [json.loads(x) for x in got.stdout.splitlines()] == [HELD]
    got = subprocess.run(_fake_codex(tmp_path, "exec", "go on"), env=env, stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60, check=True)
    assert got.stdout.splitlines()[:2] == [HELD["reason"], HELD["systemMessage"]]


@pytest.mark.slow
def test_off_linux_nothing_is_looked_for_and_the_json_is_whole(tmp_path: Path) -> None:
    """No /proc to tell exec by (macOS, Windows, where os has no O_CLOEXEC nor O_NOCTTY): the
    output is printed as it was, nothing written, nothing raised."""
    elsewhere = "import os, sys\nsys.platform = 'win32'\ndel os.O_CLOEXEC, os.O_NOCTTY\n" + SHOW
    got = subprocess.run(_fake_codex(tmp_path, "exec", "go on"),
                         env={**os.environ, "SHOW": elsewhere, "HOOK_OUT": json.dumps(HELD)},
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60, check=False)
    assert (got.returncode, got.stderr) == (0, "")
    assert json.loads(got.stdout) == HELD


@pytest.mark.slow
def test_a_full_pipe_or_one_nobody_reads_neither_blocks_nor_breaks_the_hook(tmp_path: Path) -> None:
    """exec's stderr a pipe whose reader is gone (open says ENXIO: no SIGPIPE, no wait) or whose
    reader has stopped reading, the pipe full (the write says EAGAIN): nothing written, the output
    as it was, the hook done at once (a blocking open or write would hang it till the timeout)."""
    r, w = os.pipe()
    os.close(r)
    try:
        assert _run(_fake_codex(tmp_path, "exec", "hi"), w) == HELD
    finally:
        os.close(w)
    r, w = os.pipe()
    try:
        os.set_blocking(w, False)
        filled = 0
        try:
            while True:
                filled += os.write(w, b"x" * 4096)
        except BlockingIOError:
            pass
        os.set_blocking(w, True)
        assert _run(_fake_codex(tmp_path, "exec", "hi"), w) == HELD
        assert len(os.read(r, 1 << 20)) <= filled  # nothing of ours behind what was there
    finally:
        os.close(r)
        os.close(w)


UNDER = ("import sys\nfrom session_watcher.agents.codex import execout\n"
         "execout.PROC = sys.argv[1] + '/no-proc'\n{platform}"  # no /proc to read, as on macOS
         "print(execout.under_exec(), execout.under_exec())")


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["", "sys.platform = 'darwin'\n"])
def test_without_proc_exec_is_told_by_ps(tmp_path: Path, platform: str) -> None:
    """Where /proc cannot be read (macOS), whether the hook runs under `codex exec` is asked of `ps`:
    the nearest process named `codex` and its command line; it said "not exec" for every Codex,
    and a held `codex exec` prompt named the TUI's /compact and /clear, which exec sends to the model."""
    script = tmp_path / ("x" * 100) / "codex"  # a long path: ps cuts a line at 80 columns unless told not to
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n"
                      f'"{sys.executable}" -c "$UNDER" "$HOOK_OUT"\n'
                      "status=$?\nexit $status\n")  # not the shell's last command: it stays the parent
    script.chmod(0o755)
    env = {**os.environ, "UNDER": UNDER.format(platform=platform), "HOOK_OUT": str(tmp_path), "COLUMNS": "80"}
    for args, said in ((["exec", "--json", "go on"], "True True"), (["resume", "--last"], "False False"),
                       (["-m", "exec"], "False False")):
        got = subprocess.run([str(script), *args], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                             text=True, timeout=60, check=False)
        assert (got.returncode, got.stdout.strip(), got.stderr) == (0, said, ""), (args, got.stderr)


@pytest.mark.slow
def test_without_proc_a_ps_first_on_the_path_is_never_run(tmp_path: Path) -> None:
    """The hook runs with the user's PATH, whose first `ps` may be the project's own file (a relative
    entry, `.` or `node_modules/.bin`): the system's ps answers (`execout.PS`), that one never runs.
    It was run, on every slash prompt of a Codex thread and every hook with a message to show."""
    script = tmp_path / "bin" / "codex"
    script.parent.mkdir()
    script.write_text("#!/bin/sh\n"
                      f'"{sys.executable}" -c "$UNDER" "$HOOK_OUT"\n'
                      "status=$?\nexit $status\n")
    script.chmod(0o755)
    planted = tmp_path / "project-bin" / "ps"
    planted.parent.mkdir()
    ran = tmp_path / "planted-ps-ran"
    planted.write_text(f"#!/bin/sh\ntouch '{ran}'\necho 1 codex\n")
    planted.chmod(0o755)
    env = {**os.environ, "UNDER": UNDER.format(platform=""), "HOOK_OUT": str(tmp_path),
           "PATH": f"{planted.parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    got = subprocess.run([str(script), "exec", "go on"], env=env, stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=60, check=False)
    assert (got.returncode, got.stdout.strip(), got.stderr) == (0, "True True", "")
    assert not ran.exists()


def test_without_proc_a_message_to_show_asks_ps_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where there is no /proc (macOS) nothing can be written to exec's stderr (it is opened through
    /proc), so a hook's message to show asks `ps` nothing: it ran ps up to five times for a write
    that could not be made (a guard's warning, an alert)."""
    asked: list[int] = []

    def ps(pid: int, fields: tuple[str, ...], deadline: float) -> str:
        asked.append(pid)
        raise FileNotFoundError("ps")

    monkeypatch.setattr(execout, "PROC", str(tmp_path / "no-proc"))
    monkeypatch.setattr(execout, "_ps", ps)
    monkeypatch.setattr(execout, "_BY_PS", [])
    out = {"systemMessage": "session-watcher: cold cache"}
    assert execout.show(out) == out
    assert asked == []
    assert execout.under_exec() is False  # the guard's words do ask it
    assert asked == [os.getppid()]


def test_without_proc_doctor_says_what_an_exec_user_does_not_see(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex's hooks installed where exec's stderr cannot be written (no /proc: macOS): `doctor` says
    that a held `codex exec` prompt shows only Codex's "Blocked" line and where to look instead; it
    said nothing, and the limit was written only in the module's docstring. Not where /proc is, nor
    without Codex's hooks."""
    from session_watcher.cli import install_codex

    home = tmp_path / "codex"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    monkeypatch.setenv("SESSION_WATCHER_CODEX", str(tmp_path / "no-codex"))  # no app-server to trust through
    said = "codex      under `codex exec` (not the TUI) the guard's reasons and the alerts are not shown"
    monkeypatch.setattr(execout, "PROC", str(tmp_path / "no-proc"))
    assert not any(ln.startswith(said) for ln in install_codex.doctor_lines())  # no hooks of ours yet
    assert install_codex.add(str(tmp_path / "bin")) == 0
    [hooks, limit] = install_codex.doctor_lines()
    assert hooks.startswith(f"codex      {home / 'hooks.json'}: installed")
    assert limit.startswith(said)
    assert "a held prompt says only `hook: UserPromptSubmit Blocked`" in limit
    monkeypatch.setattr(execout, "PROC", "/proc")
    assert [ln for ln in install_codex.doctor_lines() if ln.startswith(said)] == ([] if os.path.isdir("/proc") else
                                                                                  [limit])
