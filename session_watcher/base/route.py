"""Which install route the hooks came by, and the one restart path each route has, in the words every
alert, the README and `notify --test` use.

The plugin route has the slash command `/session-watcher:handoff`; the install.sh route has none,
only the command on PATH. Run in another terminal, `session-watcher handoff` sends nothing to the
model, so the install.sh route leads with it; `! session-watcher handoff` (Claude Code's bash mode)
works too, but the client hands the command's output to the model as a turn of the old session: one
request, the whole conversation read and the note written once (measured with the client 2.1.332,
tests/e2e/test_e2e_handoff_install.py), said so where it is offered. Both then `/clear`. A hook knows
its route from its environment (Claude Code sets `CLAUDE_PLUGIN_ROOT` for a plugin's hooks and
commands); a command run in a terminal reads how the hooks were installed (install.sh's record, else
the plugin's entry in Claude Code's config).
"""

from __future__ import annotations

import os

PLUGIN_COMMAND = "/session-watcher:handoff"  # the plugin's command (commands/handoff.md)
TERMINAL_COMMAND = "session-watcher handoff"  # the install.sh route's command on PATH
BASH_COMMAND = f"! {TERMINAL_COMMAND}"  # the same from Claude Code's bash mode: one request to the model

TYPE_CHECKING = False  # the hook imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Literal

    Route = Literal["plugin", "install"]


def handoff_command(route: Route) -> str:
    """The one command that writes a handoff from inside Claude Code on this route."""
    return PLUGIN_COMMAND if route == "plugin" else BASH_COMMAND


def restart_path(route: Route) -> str:
    """The whole restart, as a person types it on this route."""
    if route == "plugin":
        return f"{PLUGIN_COMMAND}, then /clear"
    return (f"`{TERMINAL_COMMAND}` in another terminal, then /clear here (in Claude Code, `{BASH_COMMAND}` "
            "also works but sends one request: the note goes through the model once)")


# a cold cache: a handoff written from inside the agent (the slash command is a prompt to the model,
# bash mode's output goes to the model) would send the whole cold conversation first
COLD_RESTART = f"`{TERMINAL_COMMAND}` in a terminal (nothing goes to the model), then /clear"
RESTART_LINE = "To restart with a handoff: "  # how every alert's restart line starts


def of_hook(env: Mapping[str, str]) -> Route:
    """The route of the hook (or plugin command) running in `env`."""
    return "plugin" if env.get("CLAUDE_PLUGIN_ROOT") else "install"


def current(env: Mapping[str, str] | None = None) -> Route:
    """The route of this process: a hook's or plugin command's own; else, from a terminal, how the
    hooks were installed: install.sh's record of hooks it added, else the plugin if Claude Code has it
    installed, else install.sh's (the command runs, so it is on PATH)."""
    env = os.environ if env is None else env
    if env.get("CLAUDE_PLUGIN_ROOT"):
        return "plugin"
    if _install_hooks():
        return "install"
    return "plugin" if _plugin_installed() else "install"


def _install_hooks() -> bool:
    import json

    from session_watcher.base import paths

    try:
        doc = json.loads(paths.read_file(os.path.join(paths.data_dir(), "installed.json"), 1 << 20))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(doc, dict) and bool(doc.get("hooks"))


def _plugin_installed() -> bool:
    return any(on for _, _, on in plugin_installs())


def plugin_installs() -> list[tuple[str, str, bool]]:
    """The plugin as Claude Code has it installed: (id and version, its folder, enabled), from the
    config folder's plugins/installed_plugins.json and settings.json's enabledPlugins; and the
    folder a `--plugin-dir` session runs it from (CLAUDE_PLUGIN_ROOT, set for the plugin's commands)."""
    from session_watcher.base import paths

    out: list[tuple[str, str, bool]] = []
    for cfg_dir in paths.claude_config_dirs()[:1]:
        enabled = (_json(os.path.join(cfg_dir, "settings.json")) or {}).get("enabledPlugins")
        installed = (_json(os.path.join(cfg_dir, "plugins", "installed_plugins.json")) or {}).get("plugins")
        for pid, entries in (installed.items() if isinstance(installed, dict) else []):
            if not (isinstance(pid, str) and pid.split("@")[0] == "session-watcher" and isinstance(entries, list)):
                continue
            on = isinstance(enabled, dict) and enabled.get(pid) is True
            for e in entries:
                if isinstance(e, dict) and isinstance(e.get("installPath"), str):
                    out.append((f"{pid} {e.get('version') or ''}".strip(), e["installPath"], on))
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if root and not any(os.path.realpath(r) == os.path.realpath(root) for _, r, _ in out):
        out.append(("--plugin-dir", root, True))
    return out


def _json(path: str) -> dict[str, object] | None:
    import json

    from session_watcher.base import paths

    try:
        doc = json.loads(paths.read_file(path, 16 << 20))  # Claude Code's settings.json, as doctor reads it
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None
