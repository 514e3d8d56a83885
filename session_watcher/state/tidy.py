"""The states of sessions whose transcript is gone, swept: a year of sessions leaves no pile behind.

A state is a cache of its transcript (a rebuild folds it again from there), kept beside it in
`<state dir>/sessions/`: `<id>.json`, its path-map shards `<id>.paths/`, `<id>.notify` and
`<id>.json.lock`, about 90 kB on disk for a long session. The client deletes old transcripts on its
own (Claude Code after 30 days by default); their states would stay for good, and every pass of the
OTLP exporter lists them. A Stop hook, at most once a day (`due`: one `stat` of a marker), sweeps
the states not written for ORPHAN_DAYS whose transcript no longer exists, and any piece of one whose
state file is gone (left that old), at most SWEEP_MAX a run so no hook holds on to a long first
sweep (the next run goes on). A state is removed under its session lock, taken without waiting:
one a hook is using stays.
"""

from __future__ import annotations

import os
import time

from session_watcher.base import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

TIDY_EVERY = 86400.0  # seconds between sweeps (hooks.run has its own copy: it does not import this)
AGAIN_SOON = 3600.0  # a sweep cut short by SWEEP_MAX goes on this much later
ORPHAN_DAYS = 30  # a state untouched this long whose transcript is gone is swept
SWEEP_MAX = 200  # old state files read (for their transcript's path) or removed in one run


def _marker() -> str:
    return paths.tidy_marker()  # its mtime: when the next sweep is due, less TIDY_EVERY


def due(now: float) -> bool:
    """Whether a sweep is due: the one cost a hook pays when it is not (a `stat`)."""
    try:
        return now - os.stat(_marker()).st_mtime >= TIDY_EVERY
    except OSError:
        return os.path.isdir(paths.sessions_dir())  # never swept: only once there are states


def maybe_tidy(now: float | None = None) -> list[str]:
    """Sweep if due (marking it done first, so hooks running together do not all sweep); the ids
    swept. Raises nothing a hook would have to catch but what `paths` refuses (a folder not ours)."""
    now = time.time() if now is None else now
    if not due(now):
        return []
    swept, finished = sweep(now, most=SWEEP_MAX)
    _mark(now if finished else now - TIDY_EVERY + AGAIN_SOON)
    return swept


def _mark(when: float) -> None:
    path = _marker()
    try:
        fd = paths.open_file(path, os.O_WRONLY | os.O_CREAT, 0o600, follow=False)
        os.close(fd)
        os.utime(path, (when, when))
    except OSError:
        pass  # a read-only state folder: nothing was swept there either


def sweep(now: float, orphan_days: float = ORPHAN_DAYS, most: int = SWEEP_MAX) -> tuple[list[str], bool]:
    """(the session ids whose state was swept, whether every old piece was looked at)."""
    cutoff = now - orphan_days * 86400
    folder = paths.sessions_dir()
    try:
        entries = list(_entries(folder))
    except FileNotFoundError:
        return [], True
    states = {name[:-5] for name, _, is_dir in entries if name.endswith(".json") and not is_dir}
    swept: list[str] = []
    looked = 0
    for name, mtime, is_dir in entries:
        if mtime >= cutoff:
            continue
        if looked >= most:
            return swept, False
        path = os.path.join(folder, name)
        if name.endswith(".json") and not is_dir:
            looked += 1
            if _transcript_gone(path) and _remove_state(path):
                swept.append(name[:-5])
        elif _owner(name) not in states:  # a piece whose state is gone: a shard folder, a notify id, a lock
            looked += 1
            _remove_piece(path, is_dir)
    return swept, True


def _entries(folder: str) -> Iterator[tuple[str, float, bool]]:
    """(name, mtime, is a folder) of each entry; links and the like are not ours to judge."""
    fd = paths.open_private_dir(folder)
    try:
        with os.scandir(fd) as it:
            for de in it:
                st = de.stat(follow_symlinks=False)
                if de.is_dir(follow_symlinks=False) or de.is_file(follow_symlinks=False):
                    yield de.name, st.st_mtime, de.is_dir(follow_symlinks=False)
    finally:
        os.close(fd)


def _owner(name: str) -> str:
    for suffix in (".json.lock", ".paths", ".notify"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


def _transcript_gone(state_path: str) -> bool:
    """Whether the state's transcript (its cursor's path) no longer exists; a state that cannot be
    read or names none counts as gone (nothing could rebuild it)."""
    from session_watcher.core import fastjson
    from session_watcher.state.store import MAX_STATE_BYTES

    try:
        doc = fastjson.loads(paths.read_file(state_path, MAX_STATE_BYTES, follow=False))
    except (OSError, ValueError):
        return True
    cursor = doc.get("cursor") if isinstance(doc, dict) else None
    transcript = cursor.get("path") if isinstance(cursor, dict) else None
    if not isinstance(transcript, str) or not transcript:
        return True
    return not os.path.lexists(transcript)


def _remove_state(state_path: str) -> bool:
    """Remove a state and its pieces under its lock, taken without waiting (busy: it stays)."""
    from session_watcher.core.errors import LockTimeout
    from session_watcher.state.lock import SessionLock

    base = state_path[: -len(".json")]
    try:
        with SessionLock(state_path + ".lock", 0):
            _remove_piece(state_path, False)
            _remove_piece(base + ".paths", True)
            _remove_piece(base + ".notify", False)
            # the lock file last, while held: a hook of this session (its transcript is gone, so
            # none is coming) would make a new one
            _remove_piece(state_path + ".lock", False)
    except (LockTimeout, OSError):
        return False
    return True


def _remove_piece(path: str, is_dir: bool) -> None:
    """Remove a file, or a shard folder and the files in it (our own names only: the folder stays
    if anything else is there)."""
    try:
        if not is_dir:
            os.unlink(path)
            return
        with os.scandir(path) as it:
            for de in it:
                if de.name.endswith((".json", ".json.tmp")) and de.is_file(follow_symlinks=False):
                    os.unlink(de.path)
        os.rmdir(path)
    except OSError:
        pass
