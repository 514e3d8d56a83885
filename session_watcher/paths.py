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


def otlp_dir() -> str:
    """The OpenTelemetry exporter's own files: its heartbeat, lock and progress (session_watcher.otlp)."""
    return os.path.join(_dirs()["state"], "otlp")


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


class NotOurs(OSError):
    """A folder we would write into is a symlink, not a folder, or someone else's: refused."""


def _refuse(path: str, why: str) -> NotOurs:
    import errno

    return NotOurs(errno.EPERM, f"refusing to use this folder: {why}", path)


def open_private_dir(path: str) -> int:
    """A descriptor of the folder `path`, opened without following a link at its last step, after
    checking it is a folder we own; its mode is tightened to 0700 through that descriptor."""
    flags = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if os.path.islink(path):
            raise _refuse(path, "it is a symbolic link") from None
        if exc.errno == 20:  # ENOTDIR
            raise _refuse(path, "it is not a folder") from None
        raise
    try:
        st = os.fstat(fd)
        uid = os.geteuid() if hasattr(os, "geteuid") else st.st_uid
        if st.st_uid != uid:
            raise _refuse(path, f"it belongs to uid {st.st_uid}, not to you (uid {uid})")
        if st.st_mode & 0o077:
            try:
                os.fchmod(fd, 0o700)
            except OSError:  # a read-only disk: reading still works
                pass
    except BaseException:
        os.close(fd)
        raise
    return fd


def ensure_private_dir(path: str) -> str:
    """Create `path` user-only, and any parent it has to create (`makedirs` would give those the
    umask's bits); check that it is a real folder owned by us (`NotOurs` otherwise: a symlink or
    another user's folder is never followed nor chmod-ed) and tighten it to 0700. Existing parents
    are not touched."""
    try:
        os.mkdir(path, 0o700)
    except FileNotFoundError:
        parent = os.path.dirname(path)
        if not parent or parent == path:
            raise
        ensure_private_dir(parent)
        try:
            os.mkdir(path, 0o700)
        except FileExistsError:
            pass
    except FileExistsError:
        pass
    os.close(open_private_dir(path))
    return path


def move_aside(path: str, why: str) -> str:
    """Move `path` (the link itself if it is one) to the quarantine folder; returns where it went."""
    import time

    qdir = ensure_private_dir(quarantine_dir())
    dest = os.path.join(qdir, f"{os.path.basename(path)}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}.{why}")
    os.replace(path, dest)
    return dest


def claude_config_dirs() -> list[str]:
    """Claude Code config folders: `$CLAUDE_CONFIG_DIR` (comma-separated allowed), else the defaults."""
    env = os.environ.get("CLAUDE_CONFIG_DIR", "")
    found = [os.path.expanduser(p.strip()) for p in env.split(",") if p.strip()]
    if not found:
        found = [os.path.expanduser("~/.claude"), os.path.expanduser("~/.config/claude")]
    return found
