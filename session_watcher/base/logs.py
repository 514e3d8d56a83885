"""The log file: tracebacks from hooks and the CLI, for pasting into a bug report.

`<log dir>/session-watcher.log`, user-only, capped by rotation to one old copy. `log_once` writes a
message only when it differs from the last one written under the same key, so a bad config file or a
read-only disk is reported once, not on every tool call. The log and its markers are regular files
or nothing (`paths.open_file`): a FIFO or device planted there is never opened for writing.
"""

from __future__ import annotations

import os
import time

from session_watcher.base import paths

MAX_LOG_BYTES = 1 << 20


def _write(text: str) -> None:
    try:
        folder = paths.ensure_private_dir(paths.log_dir())
        path = os.path.join(folder, "session-watcher.log")
        try:
            if os.path.getsize(path) > MAX_LOG_BYTES:
                os.replace(path, path + ".1")
        except OSError:
            pass
        fd = paths.open_file(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600, follow=False)
        try:
            os.write(fd, text.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except OSError:
        pass  # nowhere to log to (read-only or full disk): stay silent rather than break the caller


def log(message: str) -> None:
    _write(f"{time.strftime('%Y-%m-%dT%H:%M:%S')} pid {os.getpid()} {message}\n")


def log_once(key: str, message: str) -> None:
    import zlib

    marker = os.path.join(paths.log_dir(), f".once-{key}")
    digest = str(zlib.crc32(message.encode("utf-8", "replace")))
    try:
        fd = paths.open_file(marker, follow=False)
        try:
            if os.read(fd, 64) == digest.encode("ascii"):
                return
        finally:
            os.close(fd)
    except OSError:
        pass
    log(message)
    try:
        paths.ensure_private_dir(paths.log_dir())
        fd = paths.open_file(marker, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600, follow=False)
        try:
            os.write(fd, digest.encode("ascii"))
        finally:
            os.close(fd)
    except OSError:
        pass


def log_exception(where: str, exc: BaseException) -> None:
    import traceback

    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    log_once(f"exc-{where.replace(' ', '-')}", f"{where}: {type(exc).__name__}: {exc}\n{text}")
