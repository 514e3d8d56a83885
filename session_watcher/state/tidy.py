"""The states of sessions whose transcript is gone, swept: a year of sessions leaves no pile behind.

A state is a cache of its transcript (a rebuild folds it again from there), kept beside it in
`<state dir>/sessions/`: `<id>.json`, its path-map shards `<id>.paths/`, `<id>.notify` and
`<id>.json.lock`, about 90 kB on disk for a long session. The client deletes old transcripts on its
own (Claude Code after 30 days by default); their states would stay for good, and every pass of the
OTLP exporter lists them. A Stop hook, at most once a day (`due`: one `stat` of a marker), sweeps
the states not written for ORPHAN_DAYS whose transcript no longer exists, and any piece of one whose
state file is gone (left that old), at most SWEEP_MAX sessions a run so no hook holds on to a long
first sweep (the next run goes on). Only the package's own names go (a valid session id with one of
those suffixes, shard files by their names): anything else there stays. A session's pieces are
removed under its lock, taken without waiting (one a hook is using stays), and only if its state
is still as old (or still absent) as the listing said: a hook may have written it meanwhile. A
transcript is gone only when looking it up says "no such file"; a disk that is absent altogether
(a removable one, a network share not mounted) looks so too: such a state, untouched 30 days, is
swept, and folded again from its transcript if the session goes on (a Codex thread archived and
then resumed is the same case), losing only what a rebuild keeps (the guard's marks, the alerts
already told).

An old state whose transcript is still there (a client keeping transcripts longer than ORPHAN_DAYS)
is read once: the marker remembers it (`kept`: its mtime, size and transcript path, within
MARKER_MAX bytes), and the next sweeps only look the transcript up, reading the state again only
once it changed (a kept state past what the marker holds is read each day, as before).
"""

from __future__ import annotations

import os
import time

from session_watcher.base import paths
from session_watcher.core import fastjson
from session_watcher.state.store import MAX_STATE_BYTES, valid_session_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator

TIDY_EVERY = 86400.0  # seconds between sweeps (hooks.run has its own copy: it does not import this)
AGAIN_SOON = 3600.0  # a sweep cut short by SWEEP_MAX goes on this much later
ORPHAN_DAYS = 30  # a state untouched this long whose transcript is gone is swept
SWEEP_MAX = 200  # sessions whose old state is read (for its transcript's path) or pieces removed, a run
# bytes of old states read a run (beyond the first): a long session's state is about 18 kB (200 of them,
# 28 ms of CPU), but one may have up to MAX_STATE_BYTES (64 MB, a second or so to parse), and a Stop
# hook's timeout is 10 s
SWEEP_BYTES = 16 << 20
# bytes the marker may hold: where a cut-short sweep stopped, and the kept states already read (about
# 150 bytes each: some 7,000 of them)
MARKER_MAX = 1 << 20

Kept = dict[str, list[object]]  # session id -> [its state's mtime, its size, its transcript's path]


def _marker() -> str:
    return paths.tidy_marker()  # its mtime: when the next sweep is due, less TIDY_EVERY


def due(now: float) -> bool:
    """Whether a sweep is due: the one cost a hook pays when it is not (a `stat`). A marker from
    the future (a clock set back since) is no reason to wait: due."""
    try:
        return not 0 <= now - os.stat(_marker()).st_mtime < TIDY_EVERY
    except OSError:
        return os.path.isdir(paths.sessions_dir())  # never swept: only once there are states


def maybe_tidy(now: float | None = None) -> list[str]:
    """Sweep if due, marking it done first: hooks running together do not all sweep, a sweep cut
    off (the hook's timeout) is not begun again by every Stop, and where the marker cannot be written
    (a read-only state folder, something else in its place) there is no sweep at all, not one at
    every Stop. The ids swept. Raises nothing a hook would have to catch but what `paths` refuses
    (a folder not ours)."""
    now = time.time() if now is None else now
    if not due(now) or not _mark(now):
        return []
    after, kept = _resume()
    swept, rest = sweep(now, most=SWEEP_MAX, after=after, kept=kept)
    _mark(now if rest is None else now - TIDY_EVERY + AGAIN_SOON, _marker_text(rest or "", kept))
    return swept


def _mark(when: float, text: bytes | None = None) -> bool:
    """Set the marker's time (and, given `text`, what it holds: `_marker_text`); False when it
    cannot be written."""
    path = _marker()
    try:
        fd = paths.open_file(path, os.O_WRONLY | os.O_CREAT | (0 if text is None else os.O_TRUNC), 0o600,
                             follow=False)
        try:
            if text:
                os.write(fd, text)
        finally:
            os.close(fd)
        os.utime(path, (when, when))
    except OSError:
        return False
    return True


def _marker_text(after: str, kept: Kept) -> bytes:
    """The marker's text: the session a sweep cut short got to ("" none) alone, or with the kept
    states already read, a JSON object; the kept ones in the ids' order, as many as MARKER_MAX holds."""
    if not kept:
        return after.encode("ascii")
    head = '{"after":' + fastjson.dumps(after) + ',"kept":{'
    parts: list[str] = []
    size = len(head.encode()) + 2
    for sid in sorted(kept):
        part = fastjson.dumps(sid) + ":" + fastjson.dumps(kept[sid])
        cost = len(part.encode()) + (1 if parts else 0)
        if size + cost > MARKER_MAX:
            break
        parts.append(part)
        size += cost
    return (head + ",".join(parts) + "}}").encode()


def _resume() -> tuple[str, Kept]:
    """What the marker says: where the last sweep, cut short, stopped (the session id; "" from the
    start), and the kept states already read (`Kept`, each entry as it was written, or left out)."""
    try:
        data = paths.read_file(_marker(), MARKER_MAX + 4096, follow=False)
    except OSError:
        return "", {}
    if not data.startswith(b"{"):
        text = data.decode("ascii", "replace")
        return (text if valid_session_id(text) else ""), {}
    try:
        doc = fastjson.loads(data)
    except ValueError:  # torn (a hook killed while it wrote): read the states again
        return "", {}
    after = doc.get("after") if isinstance(doc, dict) else None
    got = doc.get("kept") if isinstance(doc, dict) else None
    kept = {sid: e for sid, e in got.items() if valid_session_id(sid) and _entry(e)} if isinstance(got, dict) else {}
    return (after if isinstance(after, str) and valid_session_id(after) else ""), kept


def _entry(e: object) -> bool:
    """A kept state's entry: [mtime, size, transcript path]."""
    return (isinstance(e, list) and len(e) == 3 and isinstance(e[0], int | float) and type(e[1]) is int
            and isinstance(e[2], str) and bool(e[2]) and "\0" not in e[2])


def sweep(now: float, orphan_days: float = ORPHAN_DAYS, most: int = SWEEP_MAX, after: str = "",
          kept: Kept | None = None) -> tuple[list[str], str | None]:
    """(the session ids whose state was swept, None when every session after `after` (in the ids'
    order) was looked at, else the last one that was: the next run goes on after it, so old states
    that stay (their transcript is there) are not read again and again while those past them wait).
    `kept`: the old states already read and kept (`Kept`): one unchanged since is not read again, its
    transcript only looked up; updated in place (those read and kept now in, those swept or changed
    out)."""
    cutoff = now - orphan_days * 86400
    folder = paths.sessions_dir()
    known: Kept = {} if kept is None else kept
    try:
        sessions, sizes = _listing(folder)
    except FileNotFoundError:
        known.clear()
        return [], None
    for sid in [sid for sid, e in known.items() if sid not in sizes or e[:2] != [sessions[sid][".json"], sizes[sid]]]:
        del known[sid]  # its state gone, or changed since it was read
    swept: list[str] = []
    looked = read = 0
    last = after
    for sid in sorted(sessions):
        pieces = sessions[sid]
        old = [suffix for suffix, mtime in pieces.items() if mtime < cutoff]
        if sid <= after or not old or (".json" in pieces and ".json" not in old):
            continue  # looked at by the run before, nothing old, or a state written lately (in use)
        base = os.path.join(folder, sid)
        if sid in known:  # read before and kept, unchanged since: its transcript looked up only
            last = sid
            if not _gone(str(known[sid][2])):
                continue
            del known[sid]
            looked += 1
            if _remove(base, cutoff, list(pieces)):
                swept.append(sid)
            continue
        if looked >= most:
            return swept, last
        if ".json" in old:
            read += sizes[sid]
            if read > SWEEP_BYTES and read > sizes[sid]:  # the rest in an hour
                return swept, last
        looked += 1
        last = sid
        if ".json" in old:
            found: list[str] = []
            if _transcript_gone(base + ".json", found):
                if _remove(base, cutoff, list(pieces)):
                    swept.append(sid)
            elif found:  # kept: the next sweeps look its transcript up without reading it
                known[sid] = [pieces[".json"], sizes[sid], found[0]]
        else:  # pieces whose state is gone: a shard folder, a notify id, a lock, a temp file
            _remove(base, cutoff, old, lone=True)
    return swept, None


def _listing(folder: str) -> tuple[dict[str, dict[str, float]], dict[str, int]]:
    """The sessions with pieces in `folder`: id -> its pieces (suffix -> mtime), and id -> its
    state's size."""
    sessions: dict[str, dict[str, float]] = {}
    sizes: dict[str, int] = {}
    for name, mtime, is_dir, size in _entries(folder):
        got = _ours(name, is_dir)
        if got is not None:
            sessions.setdefault(got[0], {})[got[1]] = mtime
            if got[1] == ".json":
                sizes[got[0]] = size
    return sessions, sizes


# what a session leaves in the sessions folder beside its state `<id>.json` (the longest first)
_PIECES = ((".json.lock", False), (".json.tmp", False), (".json", False), (".notify", False), (".paths", True))


def _ours(name: str, is_dir: bool) -> tuple[str, str] | None:
    """(session id, piece) of a name the package writes there; None for any other (not ours to remove)."""
    for suffix, folder in _PIECES:
        if name.endswith(suffix) and is_dir == folder and valid_session_id(name[: -len(suffix)]):
            return name[: -len(suffix)], suffix
    return None


def _entries(folder: str) -> Iterator[tuple[str, float, bool, int]]:
    """(name, mtime, is a folder, size) of each entry; links and the like are not ours to judge."""
    fd = paths.open_private_dir(folder)
    try:
        with os.scandir(fd) as it:
            for de in it:
                st = de.stat(follow_symlinks=False)
                if de.is_dir(follow_symlinks=False) or de.is_file(follow_symlinks=False):
                    yield de.name, st.st_mtime, de.is_dir(follow_symlinks=False), st.st_size
    finally:
        os.close(fd)


def _transcript_gone(state_path: str, found: list[str] | None = None) -> bool:
    """Whether the state's transcript (its cursor's path) no longer exists; a state that names none,
    or is no JSON, counts as gone (nothing could rebuild it). One that cannot be read now (EACCES,
    EIO), or a transcript that cannot be looked at now (a network disk's ESTALE, a folder not
    searchable), is not gone: only "no such file" says so. `found`: the transcript's path appended
    where it is there."""
    try:
        doc = fastjson.loads(paths.read_file(state_path, MAX_STATE_BYTES, follow=False))
    except ValueError:
        return True
    except OSError:
        return False
    transcript = _transcript(doc)
    if transcript is None:
        return True
    if not transcript:
        return False  # where it is cannot be told: kept
    if _gone(transcript):
        return True
    if found is not None:
        found.append(transcript)
    return False


def _gone(transcript: str) -> bool:
    """Whether looking `transcript` up says "no such file" (anything else: it may be there)."""
    try:
        os.lstat(transcript)
    except OSError as exc:
        return isinstance(exc, FileNotFoundError | NotADirectoryError)
    return False


def _transcript(doc: object) -> str | None:
    """The state's transcript path (None: it names none; "": one whose place cannot be told). A
    relative one, as the hook was given it, is from the session's folder (its cwd), not this one."""
    cursor = doc.get("cursor") if isinstance(doc, dict) else None
    path = cursor.get("path") if isinstance(cursor, dict) else None
    if not isinstance(path, str) or not path or "\0" in path:
        return None
    if os.path.isabs(path):
        return path
    context = doc.get("context") if isinstance(doc, dict) else None
    cwd = context.get("cwd") if isinstance(context, dict) else None
    return os.path.join(cwd, path) if isinstance(cwd, str) and os.path.isabs(cwd) and "\0" not in cwd else ""


def _remove(base: str, cutoff: float, pieces: list[str], lone: bool = False) -> bool:
    """Remove `pieces` of the session at `base` under its lock, taken without waiting (busy: they
    stay), if its state is still as old as the sweep saw it (`lone`: still absent): a hook that
    wrote it since (its transcript back where it was) keeps it. The lock file last, while held: a
    run that opened it before sees it unlinked and opens the path again (state.lock)."""
    from session_watcher.core.errors import LockTimeout
    from session_watcher.state.lock import SessionLock

    state, lock = base + ".json", base + ".json.lock"
    had_lock = os.path.lexists(lock)
    try:
        with SessionLock(lock, 0):
            try:
                still = os.lstat(state).st_mtime < cutoff and not lone
            except FileNotFoundError:
                still = lone
            if not still:
                if not had_lock:
                    _remove_piece(lock, False)  # made by this lock alone
                return False
            for suffix in sorted(pieces, key=lambda s: s != ".json"):  # the state first
                if suffix != ".json.lock":
                    _remove_piece(base + suffix, suffix == ".paths")
            if ".json.lock" in pieces or not had_lock:
                _remove_piece(lock, False)
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
                if _shard_name(de.name) and de.is_file(follow_symlinks=False):
                    os.unlink(de.path)
        os.rmdir(path)
    except OSError:
        pass


def _shard_name(name: str) -> bool:
    """A path-map shard's name, `<n>-<rev>.json` (state.pathstore), or its temp file's."""
    stem = name[: -len(".tmp")] if name.endswith(".tmp") else name
    n, _, rev = stem[: -len(".json")].partition("-")
    return stem.endswith(".json") and n.isdigit() and rev.isdigit() and n.isascii() and rev.isascii()
