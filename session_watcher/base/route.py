"""Which install route the hooks came by, and the one restart path each route has, in the words every
alert, the README and `notify --test` use.

The plugin route has the slash command `/session-watcher:handoff`; the install.sh route has none,
only the command on PATH. Run in another terminal, `session-watcher handoff` sends nothing to the
model, so the install.sh route leads with it; `! session-watcher handoff` (Claude Code's bash mode)
works too, but the client hands the command's output to the model as a turn of the old session: one
request, the whole conversation read and the note written once (measured with the client 2.1.332,
tests/e2e/test_e2e_handoff_install.py), said so where it is offered. Both then `/clear`. Codex's TUI
has a shell escape that sends nothing: `!session-watcher handoff` runs the command in a shell of
Codex's own and makes no request (measured with 0.171.0, tests/e2e/test_e2e_codex.py: its output is
on the screen and in the old thread's history, which `/clear` leaves), so a Codex thread's alerts
offer that form in the TUI, warm or cold, and the other terminal under `codex exec`. A hook knows
its route from its environment (Claude Code sets `CLAUDE_PLUGIN_ROOT` for a plugin's hooks and
commands); a command run in a terminal reads how the hooks were installed (install.sh's record, else
the plugin's entry in Claude Code's config).
"""

from __future__ import annotations

import os

COMMAND = "session-watcher"  # install.sh's command, linked into ~/.local/bin
# the plugin's bin/session-watcher (and hooks/run.sh, for a hook) sets it to that file's path for the
# process it starts: on the plugin route nothing is on PATH, and the command a person just ran is one
# they can run again. With it PLUGIN_PID, the process it was set for (the scripts exec it: the same
# pid): an environment a project's settings give (`env` in .claude/settings.json reaches hooks, the
# status line and the agent's commands) cannot name a command of its own for our messages to suggest
PLUGIN_BIN = "SESSION_WATCHER_PLUGIN_BIN"
PLUGIN_PID = "SESSION_WATCHER_PLUGIN_PID"
PLUGIN_COMMAND = "/session-watcher:handoff"  # the plugin's command (commands/handoff.md)
TERMINAL_COMMAND = f"{COMMAND} handoff"  # the install.sh route's command on PATH
BASH_COMMAND = f"! {TERMINAL_COMMAND}"  # the same from Claude Code's bash mode: one request to the model
ESCAPED = "Codex runs it itself: no request to the model"  # the TUI's `!` (Agent.shell_escape), said where offered

TYPE_CHECKING = False  # the hook imports this module
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Literal

    Route = Literal["plugin", "install"]


def handoff_command(route: Route) -> str:
    """The one command that writes a handoff from inside Claude Code on this route."""
    return PLUGIN_COMMAND if route == "plugin" else BASH_COMMAND


def restart_path(route: Route, then: str | None = None, escape: str | None = None) -> str:
    """The whole restart, as a person types it on this route. `then`: how an agent other than Claude
    Code starts the fresh session (Codex: `/clear` in its TUI, a new `codex exec` under exec); its
    hooks come by install.sh's route alone. `escape`: its input line's prefix for a shell command
    that sends nothing to the model (`Agent.shell_escape`: the TUI's `!`), the handoff typed there
    (the command by `escaped_command`); None: the command in another terminal."""
    if then is not None:
        if escape:
            return f"`{escape}{escaped_command()} handoff` ({ESCAPED}), then {then}"
        return f"`{TERMINAL_COMMAND}` in another terminal, then {then}"
    if route == "plugin":
        return f"{PLUGIN_COMMAND}, then /clear"
    return (f"`{TERMINAL_COMMAND}` in another terminal, then /clear here (in Claude Code, `{BASH_COMMAND}` "
            "also works but sends one request: the note goes through the model once)")


# a cold cache: a handoff written from inside the agent (the slash command is a prompt to the model,
# bash mode's output goes to the model) would send the whole cold conversation first; Codex's `!` sends none
def cold_restart(command: str, then: str = "/clear", escape: str | None = None) -> str:
    """The restart of a cold return, with the route's command (`cli_command`'s); `then`: how the
    agent starts the fresh session, `escape` its shell escape (restart_path's)."""
    if escape:
        return f"`{escape}{escaped_command() if command == COMMAND else command} handoff` ({ESCAPED}), then {then}"
    return f"`{command} handoff` in a terminal (nothing goes to the model), then {then}"


COLD_RESTART = cold_restart(COMMAND)  # install.sh's
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


def cli_command(env: Mapping[str, str] | None = None, hook: bool = False) -> str:
    """The command that runs session-watcher, as a person types it, for the route of this process:
    every suggestion of a command (doctor, status, the config's errors, the alerts) names it.
    install.sh's route: `session-watcher`, on PATH. The plugin route puts nothing on PATH: its own
    `bin/session-watcher`, by its path (`~/` for the home folder): the one that started this process,
    or, for a plugin's hook, the plugin whose hooks/run.sh started it (PLUGIN_BIN, for this process
    only: PLUGIN_PID); else, run from a terminal by another way (`python -m session_watcher`), the
    installed plugin's when the plugin is the route (`current`), as Claude Code's own records name it.
    A path only an environment names (CLAUDE_PLUGIN_ROOT, PLUGIN_BIN for another process) is never
    suggested: a project's settings can set those. `hook`: no file is read (a hook, the status line)."""
    env = os.environ if env is None else env
    own = env.get(PLUGIN_BIN, "")
    if os.path.isabs(own) and env.get(PLUGIN_PID) == str(os.getpid()):
        return shown(own)
    if not hook and current(env) == "plugin":
        for label, folder, on in plugin_installs():
            if on and label != PLUGIN_DIR:  # a record of Claude Code's, not CLAUDE_PLUGIN_ROOT's
                return shown(os.path.join(folder, "bin", COMMAND))
    return COMMAND


def escaped_command() -> str:
    """The command as an agent's shell escape runs it (Codex's `!`: a login shell, whose profile may
    set PATH anew, as Debian's /etc/profile does, so the folder the terminal's PATH names may not be
    on it): install.sh's link by its path (`shown`), where it is there and ours (a link to a
    session-watcher venv's command, as cli.install.link makes), else the command by its name."""
    folder = os.environ.get("XDG_BIN_HOME") or os.path.join(os.path.expanduser("~"), ".local", "bin")
    link = os.path.join(folder, COMMAND)
    try:
        target = os.readlink(link)
    except OSError:
        return COMMAND
    return shown(link) if target.endswith(os.path.join(COMMAND, "venv", "bin", COMMAND)) else COMMAND


def shown(path: str) -> str:
    """A command's path as a person types it into a shell: `~/...` under the home folder when nothing
    in it needs quoting, else the path quoted."""
    import shlex

    home = os.path.expanduser("~").rstrip("/")
    if home and path.startswith(home + "/"):
        rest = path[len(home) + 1:]
        if shlex.quote(rest) == rest:
            return f"~/{rest}"
    return shlex.quote(path)


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


def plugin_roots(env: Mapping[str, str] | None = None) -> list[str]:
    """Claude Code's plugins folders, where a plugin's data folder is (`<root>/data/<plugin>-<marketplace>`,
    the hooks' CLAUDE_PLUGIN_DATA) and its installed_plugins.json. 2.1.332 keeps one at a time:
    CLAUDE_CODE_PLUGIN_CACHE_DIR where that is set, else `<config>/cowork_plugins` in cowork mode
    (CLAUDE_CODE_USE_COWORK_PLUGINS, `claude plugin --cowork`, or the desktop app's setting, which a
    terminal cannot see: so it is always looked in), else `<config>/plugins`. A plugin installed from
    a CLAUDE_CODE_PLUGIN_SEED_DIR (read only) has its copy there and its data folder in that one."""
    from session_watcher.base import paths

    env = os.environ if env is None else env
    roots = [os.path.join(cfg, name) for cfg in paths.claude_config_dirs() for name in ("plugins", "cowork_plugins")]
    moved = env.get("CLAUDE_CODE_PLUGIN_CACHE_DIR", "").strip()
    if moved:
        roots.insert(0, os.path.expanduser(moved))
    return list(dict.fromkeys(roots))


def _seed_dirs(env: Mapping[str, str]) -> list[str]:
    """CLAUDE_CODE_PLUGIN_SEED_DIR: read-only plugins folders (as many as the path separator divides)."""
    return [os.path.expanduser(d) for d in env.get("CLAUDE_CODE_PLUGIN_SEED_DIR", "").split(os.pathsep) if d.strip()]


PLUGIN_DIR = "--plugin-dir"  # plugin_installs' name for the folder CLAUDE_PLUGIN_ROOT names, no record of it


def plugin_installs() -> list[tuple[str, str, bool]]:
    """The plugin as Claude Code has it installed: (id and version, its folder, enabled), from the
    installed_plugins.json of each plugins folder (`plugin_roots`, and the seed folders) and the
    enabledPlugins of the settings file that goes with it (cowork_settings.json for cowork_plugins,
    else settings.json); and the folder a `--plugin-dir` session runs it from (CLAUDE_PLUGIN_ROOT, set
    for the plugin's commands)."""
    from session_watcher.base import paths

    out: list[tuple[str, str, bool]] = []
    records: list[tuple[str, str]] = []  # (a plugins folder, the settings file of its enabledPlugins)
    for cfg_dir in paths.claude_config_dirs()[:1]:
        settings = os.path.join(cfg_dir, "settings.json")
        moved = os.environ.get("CLAUDE_CODE_PLUGIN_CACHE_DIR", "").strip()
        records.append((os.path.expanduser(moved) if moved else os.path.join(cfg_dir, "plugins"), settings))
        records.append((os.path.join(cfg_dir, "cowork_plugins"), os.path.join(cfg_dir, "cowork_settings.json")))
        records += [(seed, settings) for seed in _seed_dirs(os.environ)]
    seen: set[str] = set()
    for folder, settings in records:
        enabled = (_json(settings) or {}).get("enabledPlugins")
        installed = (_json(os.path.join(folder, "installed_plugins.json")) or {}).get("plugins")
        for pid, entries in (installed.items() if isinstance(installed, dict) else []):
            if not (isinstance(pid, str) and pid.split("@")[0] == "session-watcher" and isinstance(entries, list)):
                continue
            on = isinstance(enabled, dict) and enabled.get(pid) is True
            for e in entries:
                path = e.get("installPath") if isinstance(e, dict) else None
                # a folder by its absolute path (no NUL, which no path holds: realpath would raise)
                if isinstance(path, str) and os.path.isabs(path) and "\0" not in path and path not in seen:
                    seen.add(path)
                    out.append((f"{pid} {e.get('version') or ''}".strip(), path, on))
    root = os.environ.get("CLAUDE_PLUGIN_ROOT")
    if root and not any(os.path.realpath(r) == os.path.realpath(root) for _, r, _ in out):
        out.append((PLUGIN_DIR, root, True))
    return out


def _json(path: str) -> dict[str, object] | None:
    import json

    from session_watcher.base import paths

    try:
        doc = json.loads(paths.read_file(path, 16 << 20))  # Claude Code's settings.json, as doctor reads it
    except (OSError, ValueError, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None
