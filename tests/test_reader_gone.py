"""A reader that goes away (`session-watcher report | head -2`): every command that writes ends as
coreutils and git end, killed by SIGPIPE (a shell's 141), nothing on stderr, through either
launcher: pip's console-script wrapper (a plugin's venv, a `pip install` by hand) and the command
install.sh writes over it (session_watcher.hooks.launchers)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.oracle import TRANSCRIPTS, launchers

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

PIP_WRAPPER = Path(sys.executable).parent / "session-watcher"
SESSION = "258c7280-ae70-4798-800f-63464d01a85d"


def launchers_of_the_command() -> list[Path]:
    ours = launchers() / "session-watcher"
    assert "import re" in PIP_WRAPPER.read_text()  # the two forms
    assert "import re" not in ours.read_text()
    return [PIP_WRAPPER, ours]


def closed_reader(command: list[str]) -> subprocess.CompletedProcess[bytes]:
    """`command` with stdout a pipe whose reader is gone before it starts: every write fails."""
    read, write = os.pipe()
    os.close(read)
    try:
        return subprocess.run(command, stdout=write, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                              timeout=120, check=False)
    finally:
        os.close(write)


@pytest.fixture
def sessions() -> Path:
    """A session of a project in Claude Code's folder, for every command to read."""
    folder = Path(os.environ["CLAUDE_CONFIG_DIR"]) / "projects" / "-p"
    folder.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / f"{SESSION}.jsonl", folder)
    return folder / f"{SESSION}.jsonl"


COMMANDS = (("report", "--since", "3000d"), ("report", "--json", "--since", "3000d"), ("replay", SESSION),
            ("replay", SESSION, "--json"), ("backtest",), ("backtest", "--json"), ("status", SESSION),
            ("health", SESSION), ("export", "--otlp", "--dry-run"), ("doctor",), ("config", "show"),
            ("report", "session", SESSION, "--html", "-"), ("hook", "--help"), ("--version",),
            ("status", "--help"), ("--help",))


@pytest.mark.usefixtures("sessions")
def test_every_command_ends_as_coreutils_when_its_reader_leaves() -> None:
    """Killed by SIGPIPE, stderr empty: no traceback, no "Exception ignored" (exit 120), no message."""
    for command in launchers_of_the_command():
        for args in COMMANDS:
            proc = closed_reader([str(command), *args])
            assert (proc.returncode, proc.stderr) == (-signal.SIGPIPE, b""), (command.name, args)


def test_a_closed_stdout_is_still_said() -> None:
    """Standard output closed from the start (`>&-`) is no reader gone: one message, exit 1 (argparse's
    `--help` too, whose own write passed over the error)."""
    for args in (("replay", str(TRANSCRIPTS / "short.jsonl"), "--json"), ("status", "--help")):
        proc = subprocess.run([str(PIP_WRAPPER), *args], stdout=None, stderr=subprocess.PIPE, timeout=60,
                              check=False, preexec_fn=lambda: os.close(1))
        assert proc.returncode == 1, (args, proc)
        assert proc.stderr.startswith(b"session-watcher: "), (args, proc)
