"""A config file left out for an error (not TOML, a wrong-typed value) is said once on stderr by every
command that reads the config (`status`, `health`, `report`, `handoff`, `notify`; `replay`,
`backtest` and `export` of a session whose folder is gone: tests/test_replay_config.py), in the
words `doctor` uses; the hooks and the status line stay silent (they log it)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.oracle import TRANSCRIPTS, hook, one_message, payload, statusline, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)


def _doctor_config(env: dict[str, str], cwd: Path) -> list[str]:
    """doctor's `config     ERROR` lines (COLUMNS wide enough for each to be one line)."""
    import subprocess

    from tests.oracle import SW

    out = subprocess.run([str(SW), "doctor"], capture_output=True, text=True, env=env, cwd=cwd, timeout=120,
                         check=False).stdout
    return [ln.removeprefix("config     ERROR ") for ln in out.splitlines() if ln.startswith("config     ERROR ")]


@pytest.mark.parametrize(("where", "text", "why"), [
    ("user", "bp_amber = [\n", "not valid TOML"),
    ("project", 'bp_amber = "0.2"\n', "a number is written without quotes"),
])
def test_daily_commands_say_a_file_left_out_once(tmp_path: Path, where: str, text: str, why: str) -> None:
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    transcript = project / "t.jsonl"
    shutil.copy(TRANSCRIPTS / "short.jsonl", transcript)
    p = payload("leftout", transcript, "Stop")
    p["cwd"] = str(project)
    env = {**os.environ, "COLUMNS": "500"}
    assert hook("Stop", p, env=env).returncode == 0  # the session recorded, its config cached with no error
    from session_watcher.base import paths

    bad = Path(paths.user_config_file()) if where == "user" else project / ".claude" / "session-watcher.toml"
    bad.parent.mkdir(parents=True, exist_ok=True)
    bad.write_text(text)

    for quiet in (hook("Stop", p, env=env), statusline(p, env=env)):  # they read it again: silent
        assert quiet.returncode == 0
        assert quiet.stderr == b"", quiet.stderr
    said = _doctor_config(env, project)
    assert len(said) == 1, said
    for words in (str(bad), why, "the file is left out (none of its settings apply)",
                  "`session-watcher config show` says more"):
        assert words in said[0], (words, said)

    commands = [("status",), ("status", "--json"), ("health",), ("handoff",)] + (
        [("report",), ("notify", "--test", "--channel", "message")] if where == "user" else [])
    for args in commands:
        got = sw(*args, "leftout", env=env) if args[0] not in ("report", "notify") else sw(*args, env=env)
        assert got.returncode == 0, (args, got.stderr)
        assert got.stdout, args
        assert one_message(got.stderr.decode()) == f"session-watcher: {said[0]}", (args, got.stderr)
    if where == "user":
        json.loads(sw("status", "leftout", "--json", env=env).stdout)  # stdout stays the document alone

    bad.unlink()  # fixed: not a word
    for args in commands:
        got = sw(*args, "leftout", env=env) if args[0] not in ("report", "notify") else sw(*args, env=env)
        assert got.returncode == 0, (args, got.stderr)
        assert got.stderr == b"", (args, got.stderr)


def test_a_command_s_help_says_no_file_left_out() -> None:
    """Asked for its help, a command that reads the config says the help alone: the file left out is
    said once a command has run (`cli._dispatch`), not to a user asking what it does."""
    from session_watcher.base import paths
    from session_watcher.cli import READS_CONFIG

    user = Path(paths.user_config_file())
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("bp_amber = [\n")
    assert "the file is left out" in " ".join(sw("report").stderr.decode().split())  # a bad file, said by a run
    for name in sorted(READS_CONFIG):
        for asked in ("--help", "-h"):
            got = sw(name, asked)
            assert got.returncode == 0, (name, got.stderr)
            assert got.stdout.startswith(f"usage: session-watcher {name}".encode()), (name, got.stdout[:80])
            assert got.stderr == b"", (name, asked, got.stderr)
