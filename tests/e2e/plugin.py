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
