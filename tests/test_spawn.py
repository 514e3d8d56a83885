"""The hook's subprocess-free runner: pipes never deadlock, deadlines hold, nothing is left running."""

from __future__ import annotations

import os

import pytest

from session_watcher.state.spawn import run

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)


def test_large_input_and_output_do_not_deadlock() -> None:
    """4 MiB through `cat` fills both pipe buffers many times over."""
    data = os.urandom(4 << 20)
    got = run(["cat"], data, timeout=30)
    assert got is not None
    assert got[0] == 0
    assert got[1] == data


def test_exit_status_and_empty_input() -> None:
    assert run(["sh", "-c", "exit 3"], b"", timeout=10) == (3, b"")
    assert run(["sh", "-c", "printf ok"], b"", timeout=10) == (0, b"ok")


def test_deadline_kills_and_reaps_the_child() -> None:
    """Past its deadline the child is killed and reaped, and the caller told so (TimeoutError: no
    answer, told from a program that cannot run, None)."""
    with pytest.raises(TimeoutError):
        run(["sh", "-c", "echo $$; exec sleep 30"], b"", timeout=0.5)
    # the child was killed and reaped: no zombie of ours is left
    try:
        pid, _ = os.waitpid(-1, os.WNOHANG)
    except ChildProcessError:
        pid = 0
    assert pid == 0


def test_a_missing_program_is_none() -> None:
    assert run(["no-such-program-session-watcher"], b"x", timeout=5) is None


def test_no_shell_interprets_the_arguments(tmp_path: object) -> None:
    got = run(["printf", "%s", "$(touch /tmp/sw-spawn-pwned);`id`"], b"", timeout=10)
    assert got == (0, b"$(touch /tmp/sw-spawn-pwned);`id`")
    assert not os.path.exists("/tmp/sw-spawn-pwned")
