"""Which install route the hooks came by, and the one restart path each route has, in the words every
alert, the README and `notify --test` use.

The plugin route has the slash command `/session-watcher:handoff`; the install.sh route has none,
only the command on PATH: `! session-watcher handoff` (Claude Code's bash mode) or the same in a
terminal. Both then `/clear`. A hook knows its route from its environment (Claude Code sets
`CLAUDE_PLUGIN_ROOT` for a plugin's hooks and commands); a command run in a terminal reads how the
hooks were installed (install.sh's record, else the plugin's entry in Claude Code's config).
"""

from __future__ import annotations

import os

from session_watcher.core.guard import HANDOFF_CLI as BASH_COMMAND  # from Claude Code's bash mode
from session_watcher.core.guard import HANDOFF_PLUGIN as PLUGIN_COMMAND  # commands/handoff.md

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
    return f"{BASH_COMMAND} (or `session-watcher handoff` in a terminal), then /clear"


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
    from session_watcher import paths

    return bool(_json(os.path.join(paths.data_dir(), "installed.json")).get("hooks"))


def _json(path: str) -> dict[str, object]:
    import json

    from session_watcher import paths

    try:
        doc = json.loads(paths.read_file(path, 16 << 20))
    except (OSError, ValueError, RecursionError):
        return {}
    return doc if isinstance(doc, dict) else {}


def _plugin_installed() -> bool:
    """Claude Code has the plugin installed and enabled (its config folder's installed_plugins.json
    and settings.json's enabledPlugins, as `doctor` reads them)."""
    from session_watcher import paths

    for cfg_dir in paths.claude_config_dirs()[:1]:
        enabled = _json(os.path.join(cfg_dir, "settings.json")).get("enabledPlugins")
        installed = _json(os.path.join(cfg_dir, "plugins", "installed_plugins.json")).get("plugins")
        for pid in installed if isinstance(installed, dict) else ():
            if isinstance(pid, str) and pid.split("@")[0] == "session-watcher" and isinstance(enabled, dict) \
                    and enabled.get(pid) is True:
                return True
    return False
