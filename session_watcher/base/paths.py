"""Where session-watcher keeps its files: one module, one override variable.

`SESSION_WATCHER_HOME` puts everything under one folder (tests, tidy users); it must be absolute
(`~` allowed): a relative one would put state files wherever the process happens to run, most often
a project's working tree, so it is ignored like a relative XDG variable (`doctor` says so).
Otherwise the XDG locations on Linux, computed by hand because this module is on the hook's hot path
and the rule is four lines; on macOS and Windows platformdirs decides (imported only there).

It also holds the one rule for every file read or written in place (`open_file`, `read_file`): a
regular file only. A FIFO, socket or device where a config, state, shard, log or settings file
belongs would block the opener for good (a FIFO's open waits for a writer, its read for data) or
read a terminal; it is opened without blocking, checked with `fstat` and refused (`NotAFile`).
"""

from __future__ import annotations

import sys

from session_watcher.base import sysos
from session_watcher.core.errors import NotAFile, NotOurs, TooLarge

APP = "session-watcher"



def write_fails() -> tuple[int, ...]:
    """What a write that cannot happen says: a read-only disk or folder, a full disk, a quota; a
    reader then shows what was last saved instead of failing (the status line, `status`). `errno`
    is imported here, on a failure, not by every run."""
    import errno

    return errno.EROFS, errno.EACCES, errno.EPERM, errno.ENOSPC, errno.EDQUOT


def _xdg(var: str, default: str) -> str:
    value = sysos.environ.get(var, "")
    # the XDG spec says relative or empty values are ignored (platformdirs does the same)
    if not value or not sysos.isabs(value):
        value = sysos.expanduser(default)
    return sysos.join(value, APP)


def _dirs() -> dict[str, str]:
    home = sysos.expanduser(sysos.environ.get("SESSION_WATCHER_HOME", ""))
    if home and sysos.isabs(home):  # a relative one is ignored (see the module's docstring)
        home = sysos.normpath(home)
        return {k: sysos.join(home, k) for k in ("state", "config", "data", "log", "cache")}
    if sys.platform.startswith("linux") or sys.platform.startswith("freebsd"):
        state = _xdg("XDG_STATE_HOME", "~/.local/state")
        return {
            "state": state,
            "config": _xdg("XDG_CONFIG_HOME", "~/.config"),
            "data": _xdg("XDG_DATA_HOME", "~/.local/share"),
            "log": sysos.join(state, "log"),
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
    return sysos.join(_dirs()["state"], "sessions")


def tidy_marker() -> str:
    return sysos.join(_dirs()["state"], ".tidied")  # state.tidy's: when the last sweep was


def quarantine_dir() -> str:
    return sysos.join(_dirs()["state"], "quarantine")


def guard_log_file() -> str:
    """The cold prompts the guard warned about, one JSON line each (read by `report`)."""
    return sysos.join(_dirs()["state"], "guard-warnings.jsonl")


def cliff_file() -> str:
    """The TTL cliffs `report` inferred, read into the config as `cliff` (the guard's lifetime)."""
    return sysos.join(_dirs()["state"], "cliff.json")


def otlp_dir() -> str:
    """The OpenTelemetry exporter's own files: its heartbeat, lock and progress (session_watcher.otlp)."""
    return sysos.join(_dirs()["state"], "otlp")


def config_dir() -> str:
    return _dirs()["config"]


def user_config_file() -> str:
    return sysos.join(_dirs()["config"], "config.toml")


# the project's file, in the folder of either agent it is used with: one file, read for both agents
PROJECT_CONFIG_DIRS = (".claude", ".codex")
PROJECT_CONFIG_NAME = "session-watcher.toml"


def project_config_places(project_dir: str) -> list[str]:
    """Where a project's config file may be, in the order one is taken."""
    return [sysos.join(project_dir, d, PROJECT_CONFIG_NAME) for d in PROJECT_CONFIG_DIRS]


def project_config_file(project_dir: str) -> str:
    """The project's config file: `.claude/session-watcher.toml` or `.codex/session-watcher.toml`,
    whichever is there, for a session of either agent (both there: `.claude/`'s, the other is not
    read: `project_config_unread` names it). Neither there: in `.codex/` for a project that has a
    `.codex` folder and no `.claude` one, else in `.claude/` (where `config set --project` makes it
    when one of the folders is there; with neither, it goes by the agent used in the project:
    cli.commands.project_target)."""
    places = project_config_places(project_dir)
    for place in places:
        if sysos.lexists(place):
            return place
    has = [sysos.isdir(sysos.dirname(p)) for p in places]
    return places[1] if has[1] and not has[0] else places[0]


def project_config_unread(project_dir: str | None) -> list[str]:
    """A project's config files there but not read (one file per project counts)."""
    if not project_dir:
        return []
    read = project_config_file(project_dir)
    return [p for p in project_config_places(project_dir) if p != read and sysos.lexists(p)]


def config_files(project_dir: str | None) -> list[str]:
    """The config's files, lowest layer first: yours, then the project's (the one read)."""
    files = [user_config_file()]
    if project_dir:
        files.append(project_config_file(project_dir))
    return files


def config_places(project_dir: str | None) -> list[str]:
    """Every place a config file read for `project_dir` may be (yours, the project's in each agent's
    folder): a file made or removed in any of them can change the config."""
    return [user_config_file(), *(project_config_places(project_dir) if project_dir else ())]


def data_dir() -> str:
    return _dirs()["data"]


def log_dir() -> str:
    return _dirs()["log"]


def log_file() -> str:
    return sysos.join(_dirs()["log"], "session-watcher.log")


def cache_dir() -> str:
    return _dirs()["cache"]


def _refuse(path: str, why: str) -> NotOurs:
    import errno

    return NotOurs(errno.EPERM, f"refusing to use this folder: {why}", path)


def open_private_dir(path: str) -> int:
    """A descriptor of the folder `path`, opened without following a link at its last step, after
    checking it is a folder we own; its mode is tightened to 0700 through that descriptor."""
    flags = sysos.O_RDONLY | getattr(sysos, "O_DIRECTORY", 0) | getattr(sysos, "O_NOFOLLOW", 0)
    try:
        fd = sysos.open(path, flags)
    except OSError as exc:
        if sysos.islink(path):
            raise _refuse(path, "it is a symbolic link") from None
        if exc.errno == 20:  # ENOTDIR
            raise _refuse(path, "it is not a folder") from None
        raise
    try:
        st = sysos.fstat(fd)
        uid = sysos.geteuid() if hasattr(sysos, "geteuid") else st.st_uid
        if st.st_uid != uid:
            raise _refuse(path, f"it belongs to uid {st.st_uid}, not to you (uid {uid})")
        if st.st_mode & 0o077:
            try:
                sysos.fchmod(fd, 0o700)
            except OSError:  # a read-only disk: reading still works
                pass
    except BaseException:
        sysos.close(fd)
        raise
    return fd


def ensure_private_dir(path: str) -> str:
    """Create `path` user-only, and any parent it has to create (`makedirs` would give those the
    umask's bits); check that it is a real folder owned by us (`NotOurs` otherwise: a symlink or
    another user's folder is never followed nor chmod-ed) and tighten it to 0700. Existing parents
    are not touched."""
    try:
        sysos.mkdir(path, 0o700)
    except FileNotFoundError:
        parent = sysos.dirname(path)
        if not parent or parent == path:
            raise
        ensure_private_dir(parent)
        try:
            sysos.mkdir(path, 0o700)
        except FileExistsError:
            pass
    except FileExistsError:
        pass
    sysos.close(open_private_dir(path))
    return path


def home_ignored() -> str | None:
    """A relative `SESSION_WATCHER_HOME` that is being ignored (for `doctor`), else None."""
    home = sysos.expanduser(sysos.environ.get("SESSION_WATCHER_HOME", ""))
    return home if home and not sysos.isabs(home) else None


QUARANTINE_KEEP = 16  # entries kept in the quarantine folder, the newest
QUARANTINE_BYTES = 256 << 20  # and at most this much of them (the newest is always kept)


def move_aside(path: str, why: str) -> str:
    """Move `path` (the link itself if it is one) to the quarantine folder, then prune the folder
    (the newest QUARANTINE_KEEP entries, QUARANTINE_BYTES at most); returns where it went."""
    import time

    qdir = ensure_private_dir(quarantine_dir())
    dest = sysos.join(qdir, f"{sysos.basename(path)}.{time.strftime('%Y%m%dT%H%M%S')}.{sysos.getpid()}.{why}")
    sysos.replace(path, dest)
    prune_quarantine(qdir)
    return dest


def prune_quarantine(qdir: str, keep: int = QUARANTINE_KEEP, budget: int = QUARANTINE_BYTES) -> None:
    """Delete the oldest quarantined entries past `keep` or past `budget` bytes in all. The folder is
    ours (checked by the caller); entries are removed by name within it, nothing followed."""
    try:
        fd = open_private_dir(qdir)
    except OSError:
        return
    try:
        entries = []
        with sysos.scandir(fd) as it:
            for de in it:
                try:
                    st = de.stat(follow_symlinks=False)
                except OSError:
                    continue
                entries.append((st.st_ctime_ns, de.name, sysos.S_ISDIR(st.st_mode), st.st_size))
        entries.sort(reverse=True)  # newest first: the rename that put it here set its ctime
        total = 0
        for i, (_, name, is_dir, size) in enumerate(entries):
            total += 0 if is_dir else size
            if i < 1 or (i < keep and total <= budget):
                continue
            try:
                if is_dir:
                    import shutil

                    shutil.rmtree(name, dir_fd=fd)
                else:
                    sysos.unlink(name, dir_fd=fd)
            except OSError:
                pass
    finally:
        sysos.close(fd)


_KINDS = ((sysos.S_ISFIFO, "fifo", "a FIFO"), (sysos.S_ISSOCK, "socket", "a socket"),
          (sysos.S_ISCHR, "device", "a character device"), (sysos.S_ISBLK, "device", "a block device"),
          (sysos.S_ISDIR, "folder", "a folder"), (sysos.S_ISLNK, "symlink", "a symbolic link"))


def not_a_file(path: str, mode: int) -> NotAFile:
    """The error for `path`, found to be of `mode` where a regular file belongs."""
    kind, words = "not-a-file", "not a regular file"
    for test, short, long in _KINDS:
        if test(mode):
            kind, words = short, long
            break
    import errno  # a refusal's: not imported by every run

    exc = NotAFile(errno.EINVAL, f"not a regular file ({words})" if kind != "not-a-file" else words, path)
    exc.kind = kind
    return exc


def open_file(path: str, flags: int = sysos.O_RDONLY, mode: int = 0o600, *, follow: bool = True) -> int:
    """`os.open`, refusing anything but a regular file (`NotAFile`), never blocking on the way: the
    open is non-blocking (a FIFO's open waits for its other end otherwise), takes no controlling
    terminal, and the descriptor is checked with `fstat`. `follow=False`: a symbolic link at `path`
    is refused too (`NotAFile`). Other errors are `os.open`'s own (FileNotFoundError, ...)."""
    return _open_checked(path, flags, mode, follow)[0]


def _open_checked(path: str, flags: int, mode: int, follow: bool) -> tuple[int, sysos.stat_result]:
    extra = sysos.O_NONBLOCK | getattr(sysos, "O_NOCTTY", 0) | getattr(sysos, "O_CLOEXEC", 0)
    if not follow:
        extra |= getattr(sysos, "O_NOFOLLOW", 0)
    try:
        fd = sysos.open(path, flags | extra, mode)
    except OSError as exc:
        import errno

        # ELOOP: a link (O_NOFOLLOW); ENXIO: a socket, or a FIFO opened for writing with no reader;
        # EISDIR: a folder opened for writing. Say what is there instead
        if exc.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR, errno.EMLINK, errno.EOPNOTSUPP):
            try:
                st = sysos.stat(path) if follow else sysos.lstat(path)
            except OSError:
                raise exc from None
            if not sysos.S_ISREG(st.st_mode):
                raise not_a_file(path, st.st_mode) from None
        raise
    try:
        st = sysos.fstat(fd)
        if not sysos.S_ISREG(st.st_mode):
            raise not_a_file(path, st.st_mode)
    except BaseException:
        sysos.close(fd)
        raise
    return fd, st


def read_file(path: str, limit: int, *, follow: bool = True) -> bytes:
    """The whole of a regular file of at most `limit` bytes (`open_file`'s rules; `TooLarge` past
    the limit, checked before reading and while reading, so a growing file is cut short too)."""
    fd, st = _open_checked(path, sysos.O_RDONLY, 0, follow)
    try:
        if st.st_size > limit:
            raise _too_large(path, limit)
        chunks = []
        got = 0
        want = min(st.st_size + 1, limit + 1)  # one read for a file that does not grow meanwhile
        while True:
            chunk = sysos.read(fd, want)
            chunks.append(chunk)
            got += len(chunk)
            if got > limit:
                raise _too_large(path, limit)
            if len(chunk) < want:  # a short read of a regular file: its end
                break
            want = min(1 << 20, limit + 1 - got)
    finally:
        sysos.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def _too_large(path: str, limit: int) -> TooLarge:
    import errno

    return TooLarge(errno.EFBIG, f"over {limit:,} bytes", path)


def claude_config_dirs() -> list[str]:
    """Claude Code config folders: `$CLAUDE_CONFIG_DIR` (comma-separated allowed), else the defaults."""
    env = sysos.environ.get("CLAUDE_CONFIG_DIR", "")
    found = [sysos.expanduser(p.strip()) for p in env.split(",") if p.strip()]
    if not found:
        found = [sysos.expanduser("~/.claude"), sysos.expanduser("~/.config/claude")]
    return found
