"""Installing the plugin into a throwaway world, and reading what it recorded."""

from __future__ import annotations

import json
import subprocess
import time
from typing import TYPE_CHECKING, Any

from tests import statefile

from .harness import PLUGIN, REPO

if TYPE_CHECKING:
    from pathlib import Path

    from .harness import World

CONFIG_TOML = '[notify]\nchannels = ["message"]\n'
HOOK_EVENTS = ("PostToolUse", "PostToolUseFailure", "Stop", "SubagentStop", "SessionStart", "UserPromptSubmit",
               "SessionEnd")
SYNC_EVENTS = ("UserPromptSubmit", "SessionEnd")


def write_config(world: World) -> None:
    """Alerts through the `systemMessage` channel: visible in the client, no desktop needed."""
    cfg = world.sw_home / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(CONFIG_TOML)


def install(world: World) -> subprocess.CompletedProcess[str]:
    """The README's install command, `./install.sh`, with the world's HOME and config dirs."""
    return subprocess.run(
        ["./install.sh"],
        cwd=REPO,
        env=world.env("http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def cli(world: World) -> Path:
    return world.sw_home / "data" / "venv" / "bin" / "session-watcher"


def status(world: World, session_id: str, binary: Path | None = None) -> dict[str, Any]:
    proc = subprocess.run(
        [str(binary or cli(world)), "status", "--session", session_id, "--json"],
        env=world.env("http://127.0.0.1:9"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def settle_trace(world: World, session_id: str, trace: Path, calls: int, env_extra: dict[str, str],
                 timeout: float = 120) -> list[dict[str, Any]]:
    """The live trace's rows once they reach call `calls`. The client's last hooks fold for a budget
    and its asynchronous ones may still run when `claude -p` returns; on a busy machine the last
    calls are then folded (and traced) by the session's next hook run. That run is made here, the
    installed Stop hook as the client runs it, until the trace holds every call."""
    venv = world.sw_home / "data" / "venv" / "bin"
    payload = json.dumps({"session_id": session_id, "transcript_path": str(world.transcript(session_id)),
                          "cwd": str(world.project), "hook_event_name": "Stop", "stop_hook_active": False})
    deadline = time.monotonic() + timeout
    while True:
        rows = [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []
        if rows and rows[-1]["call"] >= calls:
            return rows
        if time.monotonic() > deadline:
            raise AssertionError(f"{session_id}: the trace never reached call {calls}: {[r['call'] for r in rows]}")
        proc = subprocess.run([str(venv / "python"), "-I", "-S", str(venv / "session-watcher-hook"), "Stop"],
                              input=payload, env=world.env("http://127.0.0.1:9", **env_extra),
                              capture_output=True, text=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        time.sleep(0.25)


def state_file(world: World, session_id: str) -> Path:
    return statefile.state_file(session_id, world.sw_home)


def plugin_data_dir(world: World) -> Path:
    """Where Claude Code points `CLAUDE_PLUGIN_DATA` for a `--plugin-dir` plugin."""
    name = json.loads((PLUGIN / ".claude-plugin" / "plugin.json").read_text())["name"]
    return world.config / "plugins" / "data" / f"{name}-inline"


def wait_for_plugin_venv(world: World, timeout: float = 240) -> Path:
    """The plugin route installs its venv from the first hook run, in the background."""
    data = plugin_data_dir(world)
    binary = data / "venv" / "bin" / "session-watcher"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if binary.exists() and not (data / ".installing").exists():
            return binary
        time.sleep(0.5)
    log = data / "install.log"
    raise AssertionError(
        f"the plugin route's venv did not appear at {binary}; install.log: "
        f"{log.read_text()[-3000:] if log.exists() else '(none)'}"
    )


def system_messages(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The `hook_system_message` attachments: what hooks showed the user through `systemMessage`."""
    return [
        r["attachment"]
        for r in records
        if r.get("type") == "attachment" and (r.get("attachment") or {}).get("type") == "hook_system_message"
    ]


def caught_up(world: World, session_id: str, transcript: Path, timeout: float = 120) -> dict[str, Any]:
    """`status --json` (it folds what the hooks left, up to its own budget, and takes the session lock,
    so a hook still folding has saved first) until the state's cursor stands at the transcript's last
    line end: what the hooks and the status line reach on their own, one budget-bound run at a time,
    while the user is away; on a busy machine the last of them may not have got there yet. The
    status document of the caught-up state."""
    deadline = time.monotonic() + timeout
    while True:
        end = transcript.read_bytes().rfind(b"\n") + 1  # read before the fold: the end it must reach
        doc = status(world, session_id)
        cursor = json.loads(state_file(world, session_id).read_bytes()).get("cursor") or {}
        if (cursor.get("path"), cursor.get("offset")) == (str(transcript), end):
            return doc
        if time.monotonic() > deadline:
            raise AssertionError(f"{session_id}: the state never read {transcript} to its end ({end} bytes); "
                                 f"its cursor: {cursor}")
        time.sleep(0.25)
