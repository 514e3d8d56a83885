"""Where session-watcher keeps its files: one module, one override variable.

`SESSION_WATCHER_HOME` puts everything under one folder (tests, tidy users). Otherwise the XDG
locations on Linux, computed by hand because this module is on the hook's hot path and the rule is
four lines; on macOS and Windows platformdirs decides (imported only there).
"""

from __future__ import annotations

import os
import sys

APP = "session-watcher"


def _xdg(var: str, default: str) -> str:
    value = os.environ.get(var, "")
    # the XDG spec says relative or empty values are ignored (platformdirs does the same)
    if not value or not os.path.isabs(value):
        value = os.path.expanduser(default)
    return os.path.join(value, APP)


def _dirs() -> dict[str, str]:
    home = os.environ.get("SESSION_WATCHER_HOME")
    if home:
        home = os.path.abspath(os.path.expanduser(home))
        return {k: os.path.join(home, k) for k in ("state", "config", "data", "log", "cache")}
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        state = _xdg("XDG_STATE_HOME", "~/.local/state")
        return {
            "state": state,
            "config": _xdg("XDG_CONFIG_HOME", "~/.config"),
            "data": _xdg("XDG_DATA_HOME", "~/.local/share"),
            "log": os.path.join(state, "log"),
            "cache": _xdg("XDG_CACHE_HOME", "~/.cache"),
        }
    import platformdirs

    pd = platformdirs.PlatformDirs(APP, appauthor=False)
    return {
        "state": pd.user_state_dir,
        "config": pd.user_config_dir,
        "data": pd.user_data_dir,
        "log": pd.user_log_dir,
        "cache": pd.user_cache_dir,
    }


def state_dir() -> str:
    return _dirs()["state"]


def sessions_dir() -> str:
    return os.path.join(_dirs()["state"], "sessions")


def quarantine_dir() -> str:
    return os.path.join(_dirs()["state"], "quarantine")


def guard_log_file() -> str:
    """The cold prompts the guard warned about, one JSON line each (read by `report`)."""
    return os.path.join(_dirs()["state"], "guard-warnings.jsonl")


def cliff_file() -> str:
    """The TTL cliffs `report` inferred, read into the config as `cliff` (the guard's lifetime)."""
    return os.path.join(_dirs()["state"], "cliff.json")


def config_dir() -> str:
    return _dirs()["config"]


def user_config_file() -> str:
    return os.path.join(_dirs()["config"], "config.toml")


def project_config_file(project_dir: str) -> str:
    return os.path.join(project_dir, ".claude", "session-watcher.toml")


def data_dir() -> str:
    return _dirs()["data"]


def log_dir() -> str:
    return _dirs()["log"]


def log_file() -> str:
    return os.path.join(_dirs()["log"], "session-watcher.log")


def cache_dir() -> str:
    return _dirs()["cache"]


def ensure_private_dir(path: str) -> str:
    """Create `path` user-only, and any parent it has to create (`makedirs` would give those the
    umask's bits); tighten `path` if it exists with wider bits. Existing parents are not touched."""
    if not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent and parent != path and not os.path.isdir(parent):
            ensure_private_dir(parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        pass
    return path


def claude_config_dirs() -> list[str]:
    """Claude Code config folders: `$CLAUDE_CONFIG_DIR` (comma-separated allowed), else the defaults."""
    env = os.environ.get("CLAUDE_CONFIG_DIR", "")
    found = [os.path.expanduser(p.strip()) for p in env.split(",") if p.strip()]
    if not found:
        found = [os.path.expanduser("~/.claude"), os.path.expanduser("~/.config/claude")]
    return found
