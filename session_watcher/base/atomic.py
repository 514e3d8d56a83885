"""Atomic file replacement: readers see the old file or the new one, never half of either.

Every temp file is created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`): a link or file planted
under its name is never written through, and the rename replaces `path` itself (a link there is
replaced, not followed). The user's own files (the config, Claude Code's settings.json) are
written by `write_user_file` instead: through their link, keeping their mode, never a read-only one.
"""

from __future__ import annotations

from session_watcher.base import sysos

TYPE_CHECKING = False  # typing is slow to import; hooks write their state through here
if TYPE_CHECKING:
    from collections.abc import Iterable

EXCL = sysos.O_WRONLY | sysos.O_CREAT | sysos.O_EXCL | getattr(sysos, "O_NOFOLLOW", 0)


def _create(tmp: str, mode: int) -> int:
    try:
        return sysos.open(tmp, EXCL, mode)
    except FileExistsError:
        pass
    # a temp file left by a writer killed mid-write (or anything planted under its name): the
    # caller holds the lock that makes the name its own, so the entry goes (unlink never follows)
    sysos.unlink(tmp)
    return sysos.open(tmp, EXCL, mode)


def write_atomic(path: str, data: bytes | Iterable[bytes], mode: int = 0o600, fsync: bool = True,
                 tmp: str | None = None) -> None:
    """Write `data` (bytes, or pieces of them in order) to a new temp file beside `path` (created
    `mode`), fsync, then rename over `path`.

    Without `tmp` the temp name is unique (pid and a random part; no `tempfile` import on the
    hook's hot path). Writers that hold a lock pass a fixed `tmp` instead, so the temp file
    of a writer killed mid-write is replaced by the next one, never accumulates.
    """
    fd = -1
    if tmp is not None:
        try:
            fd = _create(tmp, mode)
        except OSError:  # the entry could not be removed (a folder?): a unique name then
            fd = -1
    if fd < 0:
        tmp = f"{path}.{sysos.getpid()}-{sysos.urandom(4).hex()}.tmp"
        try:
            fd = sysos.open(tmp, EXCL, mode)
        except OSError as exc:  # said of the file asked for, never of our temp name beside it
            raise OSError(exc.errno, exc.strerror, path) from None
    assert tmp is not None
    try:
        for piece in (data,) if isinstance(data, bytes) else data:
            view = memoryview(piece)
            while view:
                n = sysos.write(fd, view)
                view = view[n:]
        if fsync:
            sysos.fsync(fd)
    except BaseException:
        sysos.close(fd)
        _unlink(tmp)
        raise
    sysos.close(fd)
    try:
        sysos.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise


def _unlink(path: str) -> None:
    try:
        sysos.unlink(path)
    except OSError:
        pass


def user_file(path: str, new_mode: int = 0o600, follow: bool = True) -> tuple[str, int]:
    """(the file to write for `path`, the mode to give it): `write_user_file`'s checks, made before
    anything is changed. Raises `ReadOnlyFile`, `paths.NotAFile`."""
    from session_watcher.base import paths, sysos

    target = sysos.realpath(path) if follow else path
    try:
        st = sysos.stat(target) if follow else sysos.lstat(target)
    except FileNotFoundError:
        return target, new_mode
    if not sysos.S_ISREG(st.st_mode):
        raise paths.not_a_file(path, st.st_mode)
    root = getattr(sysos, "geteuid", lambda: -1)() == 0  # root may write anything: the bits decide
    if not st.st_mode & 0o222 or (not root and not sysos.access(target, sysos.W_OK)):
        from session_watcher.core.usererrors import ReadOnlyFile

        raise ReadOnlyFile(13, "read-only: not changed (make it writable first)", path)
    return target, sysos.S_IMODE(st.st_mode)


def write_user_file(path: str, data: bytes, new_mode: int = 0o600, follow: bool = True) -> str:
    """Replace the contents of a file that is the user's, atomically, and return the file written.

    A symbolic link at `path` is written through to its target (the link stays: a dotfiles
    repository keeps seeing the changes), or refused with `follow=False` (`paths.NotAFile`, kind
    'symlink'); the file keeps its mode (`new_mode` for a new one); a read-only file is refused
    (`ReadOnlyFile`), as are a FIFO, socket, device or folder there (`paths.NotAFile`)."""
    target, mode = user_file(path, new_mode, follow)
    write_atomic(target, data, mode=mode)
    try:
        sysos.chmod(target, mode)  # exactly its mode: the temp file was created under the umask
    except OSError:
        pass
    return target
