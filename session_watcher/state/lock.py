"""The per-session lock: filelock's protocol, with a fast path that costs no import.

filelock's `FileLock` on POSIX is `flock(LOCK_EX | LOCK_NB)` on a sibling `.lock` file, polled until
its timeout. The uncontended case (nearly every hook run) needs one such call, so it is made here
directly with `fcntl`; only when the lock is busy is filelock (slow to import) imported to wait
with a short poll interval. Both take the same kernel lock on the same file, so they exclude each
other and the CLI, which uses filelock throughout. Where `fcntl` is missing (Windows), filelock alone.
"""

from __future__ import annotations

from session_watcher.base import sysos
from session_watcher.base.paths import move_aside, open_file
from session_watcher.core.errors import LockTimeout, NotAFile

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from types import TracebackType

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

POLL_INTERVAL = 0.005


class SessionLock:
    """`with SessionLock(path, timeout):` holds the lock or raises LockTimeout on entry."""

    def __init__(self, path: str, timeout: float) -> None:
        self.path = path
        self.timeout = timeout
        self._fd: int | None = None
        self._filelock: object | None = None

    def __enter__(self) -> SessionLock:
        if fcntl is not None and self._fast():
            return self
        if fcntl is not None and self.timeout <= 0:
            raise LockTimeout(self.path)
        import filelock

        lock = filelock.FileLock(self.path, timeout=self.timeout, poll_interval=POLL_INTERVAL, mode=0o600)
        try:
            lock.acquire()
        except filelock.Timeout:
            raise LockTimeout(self.path) from None
        self._filelock = lock
        return self

    def _fast(self) -> bool:
        """One `flock` without waiting: True when held. A lock file unlinked by its holder (state.tidy
        removes a swept session's, holding it) after this run opened it is not the lock any more: a
        run that opens the path now makes a new file, so the lock is taken again on that (filelock's
        own check, `st_nlink`)."""
        for _ in range(3):
            try:
                fd = open_file(self.path, sysos.O_RDWR | sysos.O_CREAT, 0o600, follow=False)
            except NotAFile as exc:
                try:  # a link, FIFO or socket planted where the lock belongs: dropped, never followed
                    if exc.kind == "folder":  # a folder: moved to the quarantine, as one where the state belongs
                        move_aside(self.path, "folder")
                    else:
                        sysos.unlink(self.path)
                except FileNotFoundError:
                    pass
                fd = open_file(self.path, sysos.O_RDWR | sysos.O_CREAT, 0o600, follow=False)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                sysos.close(fd)
                import errno  # the lock was busy (or worse): not imported by a run that gets it

                # what flock says when another holds the lock; else (ENOLCK, ...) waiting would not help
                if exc.errno not in (errno.EACCES, errno.EAGAIN, errno.EWOULDBLOCK):
                    raise
                return False
            if sysos.fstat(fd).st_nlink:
                self._fd = fd
                return True
            sysos.close(fd)  # unlinked meanwhile: open the path again
        return False

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._fd is not None:
            # closing the descriptor drops the flock; the empty lock file stays, by design (state.tidy
            # removes a swept session's, holding it: see `_fast`)
            sysos.close(self._fd)
            self._fd = None
        if self._filelock is not None:
            self._filelock.release()  # type: ignore[attr-defined]
            self._filelock = None
