"""Which agents this machine has, and which one a project is used with: what install.sh installs for
(cli.install, cli.install_codex) and where `config set --project` makes a project's file when the
project has neither agent's folder (cli.commands).

Claude Code is here when `$CLAUDE_CONFIG_DIR` is set (a user who names Claude Code's folder uses
Claude Code, though the folder is not made yet: Claude Code makes it when it first runs, and reads
the settings the install writes there), when one of its default folders is (`~/.claude` or
`~/.config/claude`) or when a `claude` executable is on PATH (`$SESSION_WATCHER_CLAUDE` names
another; a path that is not an executable: none). Codex is here when
its folder is (`$CODEX_HOME` set, or `~/.codex`) or a `codex` executable is found (cli.codex_trust).
"""

from __future__ import annotations

import os
import shutil

CLAUDE_ENV = "SESSION_WATCHER_CLAUDE"  # the claude executable to look for instead of the one on PATH
CODEX_ENV = "SESSION_WATCHER_CODEX"  # the codex executable to use instead of the one on PATH (cli.codex_trust)
# (this module imports nothing of the install's: cli.install and cli.install_codex ask it)


def claude_record() -> str:
    """Where install.sh records what it added to Claude Code's settings (cli.install)."""
    from session_watcher.base import paths

    return os.path.join(paths.data_dir(), "installed.json")


def codex_record() -> str:
    """Where install.sh records what it added to Codex's hooks.json (cli.install_codex)."""
    from session_watcher.base import paths

    return os.path.join(paths.data_dir(), "installed-codex.json")


def codex_home() -> str | None:
    """`$CODEX_HOME`, else `~/.codex` when it exists; None: Codex's folder is not here."""
    home = os.environ.get("CODEX_HOME")
    if home:
        return home
    default = os.path.join(os.path.expanduser("~"), ".codex")
    return default if os.path.isdir(default) else None


def codex_executable() -> str | None:
    chosen = os.environ.get(CODEX_ENV)
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    return shutil.which("codex")


def claude_executable() -> str | None:
    chosen = os.environ.get(CLAUDE_ENV)
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    return shutil.which("claude")


def claude_config_set() -> bool:
    """`$CLAUDE_CONFIG_DIR` names a folder (set to nothing or to commas only: not set, as
    `paths.claude_config_dirs` reads it)."""
    return any(p.strip() for p in os.environ.get("CLAUDE_CONFIG_DIR", "").split(","))


def claude_here() -> bool:
    from session_watcher.base import paths

    return (claude_config_set() or any(os.path.isdir(d) for d in paths.claude_config_dirs())
            or claude_executable() is not None)


def claude_record_settings() -> str | None:
    """The settings file install.sh's record (`claude_record`) says it wrote Claude Code's hooks
    into; None without a record (or one that names no file)."""
    import json

    from session_watcher.base import paths

    try:
        doc = json.loads(paths.read_file(claude_record(), 1 << 20))
    except (OSError, ValueError, RecursionError):
        return None
    path = doc.get("settings") if isinstance(doc, dict) else None
    return path if isinstance(path, str) and path else None


# where drives are mounted (removable ones by udisks, macOS's volumes, an admin's by hand)
DRIVE_ROOTS = ("/media", "/run/media", "/mnt", "/Volumes")
# never a drive's mount point itself (macOS mounts each volume in it; its firmlink to the data volume
# may read as a mount point); the others may be one (`mount /dev/sdb1 /mnt`)
NOT_A_MOUNT = ("/Volumes",)


def on_a_drive_not_mounted(folder: str) -> bool:
    """`folder` is where a drive is mounted (under DRIVE_ROOTS, its links followed) and nothing is
    mounted between that place and it, the folder itself and the drive root included: its drive is
    not mounted now (an unmounted drive leaves its mount point an empty folder, or none). Where
    something is mounted on the way (the drive is there) a folder not there is gone from the drive."""
    real = os.path.realpath(folder)
    root = next((r for r in DRIVE_ROOTS if real.startswith(r + os.sep)), None)
    if root is None:
        return False
    up = real
    while len(up) > len(root):
        if os.path.ismount(up):
            return False
        up = os.path.dirname(up)
    return root in NOT_A_MOUNT or not os.path.ismount(root)


def _empty(folder: str) -> bool:
    try:
        with os.scandir(folder) as it:
            return next(it, None) is None
    except OSError:
        return False


def settings_gone(path: str) -> bool:
    """The settings file an install's record names is gone for sure (so the record can be forgotten):
    no such file, in a folder that is there or is not there at all. Not where nothing can be told: a
    folder that is a link to nowhere (a drive not mounted now, a home moved), one on a drive not
    mounted now (`on_a_drive_not_mounted`: not there, or there and empty, a mount point whose drive
    is out), or an error other than "no such file" (a folder that cannot be read): there the file may
    still hold our hooks, which only the record lets `--uninstall` take out."""
    try:
        os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        folder = os.path.dirname(path)
        if os.path.isdir(folder):
            return not (on_a_drive_not_mounted(folder) and _empty(folder))
        return not os.path.lexists(folder) and not on_a_drive_not_mounted(folder)
    except OSError:
        return False
    return False


def claude_installed() -> bool:
    """install.sh installed for Claude Code and what it installed is still there: its record and the
    settings file the record names. A record whose file is gone (Claude Code removed, its folder
    with it) installs nothing: the next install.sh forgets it (cli.install)."""
    path = claude_record_settings()
    return path is not None and os.path.lexists(path)


def codex_here() -> bool:
    return codex_home() is not None or codex_executable() is not None


def codex_only() -> bool:
    """Codex is here and Claude Code is not: install.sh installs for Codex alone."""
    return codex_here() and not claude_here()


LATEST = 256  # the newest recorded sessions looked through for a project's latest


def latest_agent(project_dir: str) -> str | None:
    """The agent of the latest recorded session (of the newest LATEST) that ran in `project_dir`
    (its project root or its working folder): "claude-code", "codex"; None when none did."""
    from session_watcher.core.errors import StateRejected
    from session_watcher.state import store

    want = os.path.realpath(project_dir)
    try:
        found = store.list_sessions()[:LATEST]
    except OSError:
        return None
    for _mtime, sid in found:
        try:
            state = store.load(store.session_file(sid), sid, readonly=True)
            ctx = state.get("context") if isinstance(state, dict) else None
            # a folder is the state's data: one a path cannot be (a NUL in it) is passed over
            here = isinstance(ctx, dict) and any(isinstance(p, str) and os.path.realpath(p) == want
                                                 for p in (ctx.get("project"), ctx.get("cwd")))
        except (StateRejected, OSError, ValueError):
            continue
        if here and isinstance(ctx, dict):
            agent = ctx.get("agent")
            return agent if isinstance(agent, str) else "claude-code"  # a state from before agents were named
    return None


def installed_for_codex_only() -> bool:
    """install.sh installed for Codex and not for Claude Code (their install records; one of Claude
    Code's whose settings file is gone counts for nothing: `claude_installed`), or, with neither,
    Codex alone is here."""
    claude, codex = claude_installed(), os.path.exists(codex_record())
    if claude or codex:
        return codex and not claude
    return codex_only()
