"""The SQLite index of what each transcript file contributed (discovery: the registry's, `agents.sources`).

The index is a cache: it can be deleted at any time and the next run rebuilds it from the
transcripts. Each file is keyed by path, with its identity (device, inode), size, mtime and a hash of
its first line. On a re-run an unchanged file is skipped without being opened, a grown file is read
from where the last run stopped (only the appended bytes), and a rewritten or shrunk file is read
again from the start. A file that disappeared from a scanned folder drops out.
"""

from __future__ import annotations

import contextlib
import os
import time
from itertools import compress

from session_watcher.agents import agent_named
from session_watcher.agents.source import Source
from session_watcher.reports.kept import KeptFacts, KeptLive, Sources, decode, encode
from session_watcher.reports.scan import (
    HEAD_BYTES,
    NO_ROWS,
    Job,
    Scanned,
    head_hash,
    readers,
    rows_in,
    rows_of,
    scan_all,
    sha1,
)
from session_watcher.reports.stored import Text

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    import sqlite3
else:  # the same module without its package's adapters for datetime (and datetime's import)
    import _sqlite3 as sqlite3

if TYPE_CHECKING:
    from array import array
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, NamedTuple

    # called with one session's sources read this run, as (source, job, result) in source order
    Finish = Callable[[list[tuple["Source", Job, Scanned | None]]], object]

    from session_watcher.reports.parse import Row
else:
    from session_watcher.core.named import NamedTuple

SCHEMA_VERSION = 16  # 1: files + rows; 2: + reports (finished documents by corpus fingerprint);
# 3: a file's rows as one marshal blob per read (`chunks`), not one SQL row each;
# 4: usage iterations read (a call's context, other models' rows of kind "o"); 5: + the working folder's row
# 6: paths as their bytes (`_db`: a file name need not be UTF-8); 7: the reports' main conversation and
# its sub-agents apart (the same documents with more keys); 8: + parts (each session's part of the
# report, by the facts of its files: a warm run folds only the sessions whose files changed) and folders
# (each listed folder's mtimes and what it held: `reports.walk` lists only those that changed); a report
# as UTF-8 bytes left open, its `days` apart (the clock fields are computed from them and added after);
# 9: + merged (a report's sums over every part, and where each session's texts are: `reports.merge`);
# 10: a report's text in a file of its own beside the database (`store_report`), its sources claimed by
# their agent in the folders' listings (`reports.walk`); 11: a listing's folders by session (`reports.walk`:
# a quiet session's folders are not `stat`ed between full passes); 12: a listing's folders and its
# sources apart (`reports.walk` decodes only the first), the last run's sources kept whole (`kept_sources`),
# a report's text as stretches of files (`store_report`, `reports.stored`); 13: a fork's copies of its
# parent's calls are rows of their own kind (`kinds.KIND_INHERITED`): every file read again; 14: a fork's
# `forkedFrom` is the session that made its main chain's last copy, as `status` names it (kept parts said
# the one that made most); 15: a working folder written as spaced JSON (`"cwd": "/x"`) is found too
# (`parse.head_dir`): every file read again; 16: a working folder is a record's own `cwd` (or its
# `payload`'s), as replay takes it, not one nested deeper (`parse._own_key`): every file read again
DB_NAME = "warmth-index.sqlite3"


def _gives_new_ids(conn: sqlite3.Connection) -> bool:
    """Whether an index of this schema knows the highest file id it gave (`meta`'s `lastId`), or
    gave none yet; False for one made before it was kept, or without its tables (damaged)."""
    try:
        return (conn.execute("SELECT 1 FROM meta WHERE key = 'lastId'").fetchone() is not None
                or conn.execute("SELECT 1 FROM files LIMIT 1").fetchone() is None)
    except sqlite3.OperationalError:
        return False


def _whole(src: Source) -> bool:
    """True when the source's agent decodes its lines with a state carried from line to line: the
    file is read from its start every time."""
    agent = agent_named(src.agent)
    return agent is not None and agent.stateful


def _db(path: str) -> bytes:
    """A path as the index keeps it: its bytes (a file name with an undecodable byte, a lone
    surrogate in Python, is no UTF-8 text and cannot be bound as one)."""
    return path.encode("utf-8", "surrogateescape")


def _fs(value: bytes | str) -> str:
    return value.decode("utf-8", "surrogateescape") if isinstance(value, bytes) else value


# SQLite's primary result codes for a database that cannot be written (sqlite3.h)
_SQLITE_WRITE_FAILS = (3, 8, 10, 13, 14)  # PERM, READONLY, IOERR, FULL, CANTOPEN
_SQLITE_HELD = (5, 6)  # BUSY, LOCKED: another run held the database past the timeout
BUSY_TIMEOUT = 10.0  # seconds a run waits for another's write to the index to end
COPY_WAIT = 1.0  # ... and, at most, for the copy in memory of one another run holds (`Index._memory`)


def _cannot_write(exc: BaseException) -> bool:
    """Whether `exc` says the index cannot be written where it is (then it lives in memory)."""
    if isinstance(exc, sqlite3.Error):
        code = getattr(exc, "sqlite_errorcode", None)
        return isinstance(code, int) and code & 0xFF in _SQLITE_WRITE_FAILS
    from session_watcher.base.paths import write_fails

    return isinstance(exc, OSError) and exc.errno in write_fails()


def _held(exc: BaseException) -> bool:
    """Whether `exc` says another process holds the database (then this run's index is in memory)."""
    code = getattr(exc, "sqlite_errorcode", None)
    return isinstance(exc, sqlite3.Error) and isinstance(code, int) and code & 0xFF in _SQLITE_HELD


def _copy_step(status: int, _remaining: int, _total: int) -> None:
    """A backup's step (`Index._memory`): one another run's lock kept from the file is the end of
    the copy (sqlite3's backup would try it again until that run let go: forever, for one stopped)."""
    if status & 0xFF in _SQLITE_HELD:
        raise sqlite3.OperationalError("the index is held by another run")


class FileRec(NamedTuple):
    id: int
    dev: int
    ino: int
    size: int
    mtime_ns: int
    offset: int
    head: str


ToRead = tuple[Source, os.stat_result, FileRec | None]  # a source to read: its stat now, and what the index knew
Known = tuple[int, int, int, int, bytes]  # a file as every run loads it: id, size, mtime_ns, offset, path


class Kept(NamedTuple):
    """The last run's sources as `Index.kept_sources` keeps them: over which roots (all, and the
    walk's), how many are the walk's (the first), the folders' count of changes they were listed at,
    the digest of their files' facts (`Index.fingerprint`), the sources with their file ids and facts
    as columns, and the facts changed since by position."""

    roots: list[str]
    walk_roots: list[str]
    walk_n: int
    folders: int
    digest: bytes
    sources: Sources
    ids: array[int]
    sizes: array[int]
    mtimes: array[int]
    offsets: array[int]
    changed: dict[int, tuple[int, int, int]]


class IndexStats(NamedTuple):
    files: int
    skipped: int
    appended: int
    reread: int
    dropped: int
    bytes_read: int


_DDL = (
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path BLOB UNIQUE NOT NULL, dev INTEGER,"
    " ino INTEGER, size INTEGER, mtime_ns INTEGER, offset INTEGER, head TEXT)",
    "CREATE TABLE IF NOT EXISTS chunks (file_id INTEGER NOT NULL, off INTEGER NOT NULL, data BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS files_mtime ON files (mtime_ns)",  # the files in use (`live_dirs`)
    "CREATE INDEX IF NOT EXISTS chunks_file ON chunks (file_id, off)",
    "CREATE TABLE IF NOT EXISTS reports (key TEXT PRIMARY KEY, doc BLOB, days TEXT NOT NULL, at REAL NOT NULL,"
    " size INTEGER NOT NULL, parts BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS parts (params TEXT NOT NULL, session BLOB NOT NULL, key TEXT NOT NULL,"
    " part BLOB NOT NULL, at REAL NOT NULL, PRIMARY KEY (params, session))",
    "CREATE TABLE IF NOT EXISTS merged (params TEXT PRIMARY KEY, data BLOB, at REAL NOT NULL, file TEXT)",
    "CREATE TABLE IF NOT EXISTS folders (path BLOB PRIMARY KEY, data BLOB NOT NULL, value BLOB NOT NULL)",
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value)",
)
KEEP_REPORTS = 8
# Which files a run `stat`s. Every file of a folder listed this run (`reports.walk`: its mtime moved),
# and every file the index saw change within LIVE_NS (the sessions in use grow in place, which moves
# no folder's mtime); the others only on a full pass, at most FULL_EVERY_NS after the last one. So a
# file quiet for a day and then appended to in place (a session resumed in its own file) is seen by
# the first run after the full pass is due (docs/report.md, "The index").
LIVE_NS = 86_400 * 10**9
FULL_EVERY_NS = 600 * 10**9
# the files read since the kept sources were written whole (`Index.kept_sources`) kept beside them, up
# to this many; past it they are written whole again
_KEPT_CHANGES = 256
# the kept record's form, in its entry in `meta` (digest, files, changes, form): the record's columns
# changed (2: the paths' starts) without a new schema (the first run lists again, nothing read again);
# the code before read a 3-tuple entry and then the columns outside its guard, so it ended with an
# internal error on this form's columns: a 4-tuple is damage to it (listed again), and a 3-tuple to this
_KEPT_FORM = 2


def _seal(record: bytes | memoryview) -> bytes:
    """The kept record's check, written after it: its CRC-32 (4 bytes). Its paths are one text cut at
    the starts kept beside it; a start moved by damage inside the file cut paths that are none (one
    with a NUL ended every report with an internal error until a folder changed)."""
    import zlib

    return zlib.crc32(record).to_bytes(4, "big")


def _sealed(data: memoryview) -> Any:
    """The record of a kept file whose check holds (ValueError otherwise: damage, listed again)."""
    import marshal

    if len(data) < 4 or _seal(data[:-4]) != data[-4:]:
        raise ValueError("the kept record's check does not hold")
    return marshal.loads(data[:-4])  # noqa: S302 (the project's own cache file)
_new = tuple.__new__
_MERGED = "merged-"  # the names of the merged sums' files among the reports' texts (`store_merged`)
_IN_MAX = 900  # file ids bound in one `IN (...)` (SQLite before 3.32 took at most 999 variables)


def _hash(data: bytes) -> Any:
    """A hash object over `data` (`fingerprint`'s)."""
    try:  # the interpreter's BLAKE2: four times SHA-1's speed over a large history's megabyte of facts
        from _blake2 import blake2b

        return blake2b(data, digest_size=20)
    except ImportError:  # pragma: no cover - an interpreter built without it
        return sha1(data)


def _drop_counts(conn: sqlite3.Connection) -> None:
    """The counts of changed parts (`Index.parts_made`) of the windows whose parts are no longer kept
    dropped (a span's window is new each minute: counts were kept for ever), the highest of them kept
    as `parts`, past which a count made again starts: a run beside this one that read the old count
    (its sums made from the dropped parts) never finds it again (it builds from every part)."""
    live = {f"parts\0{p}" for (p,) in conn.execute("SELECT DISTINCT params FROM parts")}
    counts = conn.execute("SELECT key, value FROM meta WHERE key > 'parts' AND key < ?", ("parts\1",))
    gone = [(k, v) for k, v in counts.fetchall() if k not in live]
    if gone:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('parts', (SELECT MAX(COALESCE(MAX(value), 0), ?) FROM meta"
                     " WHERE key = 'parts'))", (max(v for _k, v in gone) + 1,))
        conn.executemany("DELETE FROM meta WHERE key = ?", [(k,) for k, _v in gone])


class Index:
    """The SQLite index at `db_path`. `bytes_read` counts transcript bytes read for parsing."""

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        # the sources `refresh` left out because they could not be read (a file of mode 000, a
        # folder named *.jsonl) and that it knew nothing of: the report names them
        self.unread: list[str] = []
        self.bytes_read = 0
        self.head_bytes_read = 0
        self.rebuilt = False
        self.workers: int | None = None  # processes for reading files (None: one per usable core)
        self._fresh: dict[int, Scanned] = {}  # files read whole this run, by file id
        self._renumbered = False  # a file read again this run took a new id (`_store`)
        self.facts: dict[int, tuple[int, int, int]] = {}  # each live file's (size, mtime_ns, offset), by id
        self.steady: frozenset[str] = frozenset()  # files listed by an unchanged folder (`reports.walk`)
        self._full_at: int | None = None  # this run stats every file: when (kept as the last full pass)
        self._quiet: int | None = None  # `quiet_before`, once a run
        self.finished: dict[str, object] = {}  # `refresh`'s finish, by session id
        # how many runs had changed the files (read, dropped) before this run's `refresh` and after
        # it: with nothing between, the files not read by this run are as the last run left them
        self.files_made = (-1, -1)
        self.touched: set[str] | None = None  # the sessions of the files this run read (None: it dropped some)
        # `reports.walk`'s roots, how many of the sources are its, and whether it took them whole
        self.walk: tuple[list[str], int, bool] | None = None
        self._kept: Kept | bool | None = False  # `kept_sources`' record (False: not loaded)
        self._files_key: tuple[bytes, dict[int, tuple[int, int, int]]] = (b"", {})  # `fingerprint`'s
        self._positions: dict[str, int] = {}  # the kept sources' places of the files `stat`ed
        self._conn: sqlite3.Connection | None = None
        self.in_memory = False  # the file could not be written: this run's index lives in memory
        self._memory_fresh = False  # ... and starts empty (not from a copy of the file)

    # -- connection ------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        """The database file; where it cannot be written (a read-only or full disk, a folder that is
        not writable) a copy in memory of what it holds (or an empty one): the index is a cache, the
        report is the same either way, only slower."""
        from session_watcher.core.errors import NotOurs

        if self.in_memory:
            return self._memory()
        try:
            return self._open_file()
        except (OSError, sqlite3.DatabaseError) as exc:
            if isinstance(exc, NotOurs) or not _cannot_write(exc):
                raise
        return self._memory()

    def _memory(self) -> sqlite3.Connection:
        self.in_memory = True
        conn = sqlite3.connect(":memory:")
        with contextlib.suppress(sqlite3.Error, OSError, ValueError):
            if not self._memory_fresh and os.path.isfile(self.db_path):  # the last run's, read only
                from urllib.parse import quote

                src = sqlite3.connect(f"file:{quote(self.db_path)}?mode=ro", uri=True,
                                      timeout=min(COPY_WAIT, BUSY_TIMEOUT))
                try:  # held past that by another run: an empty index (nothing half copied: one step)
                    src.backup(conn, progress=_copy_step)
                finally:
                    src.close()
        try:
            self._prepare(conn)
        except sqlite3.DatabaseError:  # a damaged copy: an empty index instead
            conn.close()
            conn = sqlite3.connect(":memory:")
            self._prepare(conn)
        return conn

    def _open_file(self) -> sqlite3.Connection:
        folder = os.path.dirname(self.db_path)
        from session_watcher.base.paths import cache_dir, ensure_private_dir

        if folder == cache_dir():
            ensure_private_dir(folder)  # ours: a real folder of this user, never a planted link
        elif folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        conn = sqlite3.connect(self.db_path, timeout=BUSY_TIMEOUT)
        try:
            self._prepare(conn)
        except sqlite3.DatabaseError:
            conn.close()
            raise
        with contextlib.suppress(OSError):
            os.chmod(self.db_path, 0o600)
        return conn

    @staticmethod
    def _prepare(conn: sqlite3.Connection) -> None:
        """This schema's tables (an index of another version is emptied first); one of this schema,
        which this code made with its tables, is used as it is (a damaged one is rebuilt). One of this
        schema with files but no `lastId` (made before the highest id given was kept, `_new_ids`) is
        emptied too: the ids it gave and dropped are not known, and one given again would let what
        is kept by it stand for another file."""
        conn.execute("PRAGMA synchronous=OFF")  # a cache: a lost write is rebuilt next run
        if conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION and _gives_new_ids(conn):
            return
        conn.execute("DROP TABLE IF EXISTS merged")
        conn.execute("DROP TABLE IF EXISTS parts")
        conn.execute("DROP TABLE IF EXISTS folders")
        conn.execute("DROP TABLE IF EXISTS meta")
        conn.execute("DROP TABLE IF EXISTS reports")
        conn.execute("DROP TABLE IF EXISTS rows")
        conn.execute("DROP TABLE IF EXISTS chunks")
        conn.execute("DROP TABLE IF EXISTS files")
        # a new database's pages: 64 kB, not 4 kB; a cold run writes ~30 bytes of index per kB of
        # transcript (the rows, the finished report), and 4 kB pages made that 2,000 writes
        conn.execute("PRAGMA page_size=65536")
        for stmt in _DDL:
            conn.execute(stmt)
        conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
        conn.commit()

    def _discard(self) -> None:
        self._quiet = None
        self.walk, self._kept = None, False
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        if self.in_memory:
            self._memory_fresh = True  # the file's copy was the damaged one: start empty
        else:
            for path in (*(self.db_path + x for x in ("", "-journal", "-wal", "-shm")), self._sources_file()):
                try:
                    os.remove(path)
                except FileNotFoundError:
                    pass
                except OSError:  # a read-only disk: the file stays, this run's index is in memory
                    self.in_memory = self._memory_fresh = True
            self._forget_docs(set())
            self._forget_docs(set(), _MERGED)
        self.rebuilt = True

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- update and load --------------------------------------------------------------------

    def discard(self) -> None:
        """Throw the database away (it could not be read); the next call rebuilds it."""
        self._discard()
        self.bytes_read = 0
        self.head_bytes_read = 0

    def recover(self, exc: sqlite3.DatabaseError) -> None:
        """After `exc`: where the file cannot be written now (a read-only or full disk, another run
        holding it past BUSY_TIMEOUT) this run's index goes on in memory and the file stays as it
        is, for the runs after; otherwise (a damaged file) it is thrown away and rebuilt."""
        if not self.in_memory and (_cannot_write(exc) or _held(exc)):
            self.close()
            self.in_memory = True
            self.bytes_read = self.head_bytes_read = 0
        else:
            self.discard()

    def refresh(
        self,
        sources: Sequence[Source],
        roots: Iterable[str],
        progress: Callable[[int, int], None] | None = None,
        finish: Finish | None = None,
    ) -> tuple[IndexStats, dict[str, int]]:
        """Bring the index up to date with `sources`; return the counts and each source's file id.

        `finish`, when given, is called in the process that read them with the sources of one
        session id that were read this run, as (source, job, result) in source order; what it
        returns (plain data) is in `finished` by session id afterwards.

        A database that cannot be read (corrupt, not a database) is thrown away and rebuilt; one that
        cannot be written now (`recover`) is left as it is, this run's index in memory.
        """
        try:
            return self._refresh(sources, list(roots), progress, finish)
        except sqlite3.DatabaseError as exc:
            self.recover(exc)
            return self._refresh(sources, list(roots), progress, finish)

    def _refresh(
        self, sources: Sequence[Source], roots: list[str], progress: Callable[[int, int], None] | None,
        finish: Finish | None,
    ) -> tuple[IndexStats, dict[str, int]]:
        conn = self._require()
        live: dict[str, int] = {}
        self.facts = {}
        self.unread = []
        if progress is not None and sources:
            progress(0, len(sources))
        quiet_before = self.quiet_before()
        whole = self._whole(sources, roots)
        if whole is not None and isinstance(sources, Sources):  # the last run's: only the files it would `stat`
            live = KeptLive(sources, whole.ids)  # each path's id looked up when asked
            known, check = self._checks(sources, whole, quiet_before)
        else:
            rows = conn.execute("SELECT id, size, mtime_ns, offset, path FROM files").fetchall()
            known = dict(zip([r[4].decode("utf-8", "surrogateescape") for r in rows], rows, strict=True))
            check = self._unsure(sources, known, live, quiet_before)
        skipped, todo, jobs = self._to_read(check, live, len(live) - len(check))
        scanned = self._scan(todo, jobs, progress, len(sources), finish)
        conn = self._require()
        with conn:
            appended, reread = self._store(conn, todo, jobs, scanned, live)
            if progress is not None:
                progress(len(sources), len(sources))
            dropped = self._drop_missing(conn, known, live, roots)
            if self._full_at is not None:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('fullPass', ?)", (self._full_at,))
            changed = appended + reread + dropped > 0
            if changed:
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('files', 0)")
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'files'")
            row = conn.execute("SELECT value FROM meta WHERE key = 'files'").fetchone()
            after = int(row[0]) if row else 0
            kept = whole if isinstance(sources, Sources) else None
            self._keep_sources(conn, sources, roots, live, kept, todo if not dropped else None, after)
        self.files_made = (after - changed, after)
        self.walk, self._kept = None, False  # the next run's, from its own walk
        self.touched = {src.session for src, _st, _rec in todo} if not dropped else None
        stats = IndexStats(len(live), skipped, appended, reread, dropped, self.bytes_read)
        return stats, live

    # -- the last run's sources, kept whole -----------------------------------------------------

    def kept_sources(self, walk_roots: list[str]) -> Sources | None:
        """The sources `reports.walk` found under `walk_roots` in the last run, when no run since
        changed the files or the folders' listings (the caller listed no folder again): then they are
        this run's too, and `refresh` takes their ids and facts as that run left them."""
        import marshal

        if self._kept is False:
            query = "SELECT key, value FROM meta WHERE key IN ('sources', 'files', 'folders')"
            got = dict(self._require().execute(query))
            delta = got.get("sources")
            self._kept = None
            base = None if delta is None else self._mapped(self._sources_file())
            if base is not None and delta is not None:
                try:
                    rec, (digest, files, changed, form) = _sealed(base), marshal.loads(delta)  # noqa: S302
                    cols = decode(rec[5]) if form == _KEPT_FORM else None
                except (ValueError, EOFError, TypeError):  # a damaged file (or an older one's columns):
                    return None  # listed again, and written
                finally:
                    base.release()
                if (cols is not None and digest == rec[4] and files == got.get("files", 0)
                        and rec[3] == got.get("folders", 0)):
                    self._kept = Kept(rec[0], rec[1], rec[2], rec[3], rec[4], *cols, changed)
        kept = self._kept
        if not isinstance(kept, Kept) or kept.walk_roots != walk_roots:
            return None
        return kept.sources.head(kept.walk_n)

    def _whole(self, sources: Sequence[Source], roots: list[str]) -> Kept | None:
        """The kept record of the last run's sources when these are they (the walk's taken whole)."""
        kept, walk = self._kept, self.walk
        if not isinstance(kept, Kept) or walk is None or not walk[2] or kept.roots != roots:
            return None
        n, was = kept.walk_n, kept.sources
        if walk[1] != n or len(sources) != len(was) or sources[n:] != was[n:]:
            return None
        return kept

    def _checks(self, sources: Sources, kept: Kept, quiet_before: int,
                ) -> tuple[dict[str, Known], list[tuple[Source, Known | None]]]:
        """The facts from the kept record (the ids: `KeptLive`), and the files to `stat` as `_unsure`
        picks them: those the index saw change since `quiet_before` (every one on a full pass) and
        those not the walk's (listed again each run by their agent)."""
        ids, sizes, mtimes, offsets = kept.ids, kept.sizes, kept.mtimes, kept.offsets
        for k, (size, mtime, offset) in kept.changed.items():
            sizes[k], mtimes[k], offsets[k] = size, mtime, offset
        self.facts = KeptFacts(ids, sizes, mtimes, offsets)
        n = kept.walk_n  # `not 0 < mtime < quiet_before` at C speed, and every one past the walk's
        at = sorted({*compress(range(n), map(quiet_before.__le__, mtimes)),
                     *compress(range(n), map((0).__ge__, mtimes)), *range(n, len(sources))})
        checked = [sources[k] for k in at]
        self._positions = {src[0]: k for src, k in zip(checked, at, strict=True)}
        known: dict[str, Known] = {src[0]: (ids[k], sizes[k], mtimes[k], offsets[k], b"")
                                   for src, k in zip(checked, at, strict=True)}
        return known, [(src, known[src[0]]) for src in checked]

    def _keep_sources(self, conn: sqlite3.Connection, sources: Sequence[Source], roots: list[str],  # noqa: PLR0913, PLR0917
                      live: dict[str, int], kept: Kept | None, read: list[ToRead] | None, files: int,
                      ) -> None:
        """This run's sources kept whole for the next run (`kept_sources`): the record written again
        after a run that listed a folder, the facts of the files this run read beside it otherwise
        (up to `_KEPT_CHANGES` of them); none kept when some source is not live (a file that could
        not be `stat`ed) or the walk's are not the first. Sets the files' key (`fingerprint`)."""
        import marshal

        put = "INSERT OR REPLACE INTO meta VALUES (?, ?)"
        walk = self.walk
        if kept is not None:  # the sources were the last run's: the facts of the files read beside them
            changed = dict(kept.changed)
            for src, _st, _rec in read or ():
                changed[self._positions[src.path]] = self.facts[live[src.path]]
            if read is not None and len(changed) <= _KEPT_CHANGES and not self._renumbered:
                if read:
                    conn.execute(put, ("sources", marshal.dumps((kept.digest, files, changed, _KEPT_FORM))))
                self._files_key = (kept.digest, changed)
                return
        if isinstance(live, KeptLive):  # walked whole below (the digest's marshal takes a plain table)
            live = live.whole()
        digest = self._digest(live)
        self._files_key = (digest, {})
        if walk is None or (read is None and kept is not None) or len(live) != len(sources) or -1 in live.values():
            conn.execute("DELETE FROM meta WHERE key = 'sources'")
            return
        row = conn.execute("SELECT value FROM meta WHERE key = 'folders'").fetchone()
        cols = encode(sources, live.values(), [self.facts[fid] for fid in live.values()])
        # the record in a file of its own (mapped, not read through the database's pages), its
        # digest and the counts it holds for in the database
        record = marshal.dumps((roots, walk[0], walk[1], row[0] if row else 0, digest, cols))
        if self.in_memory or not self._write_whole(self._sources_file(), [record, _seal(record)]):
            conn.execute("DELETE FROM meta WHERE key = 'sources'")
            return
        conn.execute(put, ("sources", marshal.dumps((digest, files, {}, _KEPT_FORM))))

    def quiet_before(self) -> int:
        """The mtime (ns) before which a known file of an unchanged folder is taken as the index has it,
        without a `stat` (-1 on a full pass: every file stat'ed, the pass's time kept with the files);
        the same for every call of a run (`reports.walk` asks first)."""
        if self._quiet is None:
            self._quiet = self._quiet_before(self._require())
        return self._quiet

    def live_dirs(self, quiet_before: int) -> frozenset[str]:
        """The folders above every file the index saw change since `quiet_before` (or whose mtime it
        could not keep), and each such `.jsonl` file's name without its suffix (a main transcript's
        session folder): the sessions in use, whose folders `reports.walk` `stat`s every run."""
        out: set[str] = set()
        query = "SELECT path FROM files WHERE mtime_ns >= ? OR mtime_ns = 0"
        for (raw,) in self._require().execute(query, (quiet_before,)):
            path = _fs(raw)
            out.add(path.removesuffix(".jsonl"))
            up = os.path.dirname(path)
            while up not in out and up != os.path.dirname(up):
                out.add(up)
                up = os.path.dirname(up)
        return frozenset(out)

    def _quiet_before(self, conn: sqlite3.Connection) -> int:
        now = time.time_ns()
        row = conn.execute("SELECT value FROM meta WHERE key = 'fullPass'").fetchone()
        last = row[0] if row and isinstance(row[0], int) else None
        full = last is None or not 0 <= now - last < FULL_EVERY_NS
        self._full_at = now if full else None
        return -1 if full else now - LIVE_NS

    def _unsure(self, sources: Sequence[Source], known: dict[str, Known], live: dict[str, int], quiet_before: int,
                ) -> list[tuple[Source, Known | None]]:
        """The sources to `stat`, with what the index knew of each; the others, unchanged since the
        index saw them, into `live` (in the sources' order: the others' places kept with -1, `_store`
        fills them). A known file of an unchanged folder quiet since before `quiet_before` is not stat'ed."""
        steady, facts = self.steady, self.facts
        check: list[tuple[Source, Known | None]] = []
        for src in sources:
            path = src.path
            got = known.get(path)
            if got is not None and 0 < got[2] < quiet_before and path in steady:  # 0: it grew while read
                live[path] = got[0]
                facts[got[0]] = got[1:4]
                continue
            live[path] = -1
            check.append((src, got))
        return check

    def _to_read(self, check: list[tuple[Source, Known | None]], live: dict[str, int], skipped: int,
                 ) -> tuple[int, list[ToRead], list[Job]]:
        """(how many sources are unchanged since the index saw them, the others with what to read of
        each): `check` `stat`ed; the unchanged ones, and those that cannot be opened now but were
        known, into `live`."""
        todo: list[ToRead] = []
        jobs: list[Job] = []
        recs = self._recs([got for _src, got in check if got is not None])
        for src, got in check:
            rec = None if got is None else recs.get(got[0])
            try:
                st = os.stat(src.path)
            except OSError:  # gone since the walk (said nothing of), or a link to nothing (named)
                live.pop(src.path, None)
                if rec is None and os.path.lexists(src.path):
                    self.unread.append(src.path)
                continue
            if (
                rec is not None
                and rec.dev == st.st_dev
                and rec.ino == st.st_ino
                and rec.size == st.st_size
                and rec.mtime_ns == st.st_mtime_ns
            ):
                skipped += 1
                live[src.path] = rec.id
                self.facts[rec.id] = (rec.size, rec.mtime_ns, rec.offset)
                continue
            try:
                job = self._job(src.path, st, rec, _whole(src))
            except OSError:
                if rec is not None:
                    live[src.path] = rec.id
                    self.facts[rec.id] = (rec.size, rec.mtime_ns, rec.offset)
                else:
                    live.pop(src.path, None)
                    self.unread.append(src.path)
                continue
            todo.append((src, st, rec))
            jobs.append(job)
        return skipped, todo, jobs

    def _recs(self, known: list[Known]) -> dict[int, FileRec]:
        """The whole records of these known files (a file not stat'ed needs only its facts)."""
        out: dict[int, FileRec] = {}
        conn = self._require()
        for at in range(0, len(known), _IN_MAX):
            part = known[at:at + _IN_MAX]
            marks = ",".join("?" * len(part))  # placeholders only: the ids are bound
            query = f"SELECT id, dev, ino, head FROM files WHERE id IN ({marks})"  # noqa: S608
            extra = {r[0]: r for r in conn.execute(query, [k[0] for k in part])}
            for k in part:
                e = extra.get(k[0])
                if e is not None:
                    out[k[0]] = FileRec(k[0], e[1], e[2], k[1], k[2], k[3], e[3])
        return out

    def _scan(self, todo: list[ToRead], jobs: list[Job], progress: Callable[[int, int], None] | None, total: int,
              finish: Finish | None) -> list[Scanned | None]:
        """Read the jobs, a session's files together (`finish`'s results into `finished`)."""
        tick = None if progress is None else (lambda share: progress(min(total - 1, int(share * total)), total))
        by_session: dict[str, list[int]] = {}  # one id, one session, whatever folders hold its files
        for k, (src, _st, _rec) in enumerate(todo):
            by_session.setdefault(src.session, []).append(k)
        keys, groups = list(by_session), list(by_session.values())

        def finish_group(g: int, got: list[Scanned | None]) -> object:
            assert finish is not None
            return finish([(todo[k][0], jobs[k], r) for k, r in zip(groups[g], got, strict=True)])

        # a scan that forks its readers: no connection to the database file crosses a fork (the child
        # would share its descriptor and locks with this process), so it is closed here and opened
        # again; an index in memory has no file, and nothing of this run in it yet: it stays open
        # (a warm run's few bytes are read here, by this process: its connection stays open)
        if not self.in_memory and readers(jobs, self.workers) > 1:
            self.close()
        scan = scan_all(jobs, self.workers, tick, groups, None if finish is None else finish_group)
        self.finished = {keys[g]: value for g, value in scan.finished.items()}
        return scan.results

    def _store(self, conn: sqlite3.Connection, todo: list[ToRead], jobs: list[Job], scanned: list[Scanned | None],
               live: dict[str, int]) -> tuple[int, int]:
        """The files read into the index (their facts, their rows' chunks) and `live`; (how many were
        appended to, how many read again from the start)."""
        appended = reread = 0
        self._fresh = {}
        self._renumbered = False
        chunks: list[tuple[int, int, bytes]] = []
        updates: list[tuple[object, ...]] = []  # files known before: their new facts, by id
        read: list[tuple[Source, Job, Scanned, FileRec | None]] = []
        new: list[tuple[object, ...]] = []  # files not known before: their facts and path
        new_paths: list[str] = []
        for (src, st, rec), job, got in zip(todo, jobs, scanned, strict=True):
            if got is None:  # unreadable (permissions, vanished mid-read): left out this time
                if rec is not None:
                    live[src.path] = rec.id
                    self.facts[rec.id] = (rec.size, rec.mtime_ns, rec.offset)
                else:
                    live.pop(src.path, None)
                    self.unread.append(src.path)
                continue
            self.bytes_read += got.bytes_read
            facts = (st.st_dev, st.st_ino, got.seen, got.mtime_ns, got.offset, got.head)
            if rec is not None and not job.start:
                rec = self._read_whole(conn, src.path, rec, got)  # noqa: PLW2901
            if rec is None:
                new.append((*facts, _db(src.path)))
                new_paths.append(src.path)
            else:
                updates.append((*facts, rec.id))
            read.append((src, job, got, rec))
        # one statement each for every new file and every known one (not one at a time: a
        # cold run over thousands of files paid for each)
        first = self._new_ids(conn, len(new)) if new else 0
        conn.executemany("INSERT INTO files (id, dev, ino, size, mtime_ns, offset, head, path)"
                         " VALUES (?,?,?,?,?,?,?,?)", [(first + k, *row) for k, row in enumerate(new)])
        ids = {path: first + k for k, path in enumerate(new_paths)}
        for src, job, got, rec in read:
            file_id = rec.id if rec is not None else int(ids[src.path])
            if got.blob != NO_ROWS:
                chunks.append((file_id, job.start, got.blob))
            if job.start:
                appended += 1
            else:
                reread += 1
                self._fresh[file_id] = got
            live[src.path] = file_id
            self.facts[file_id] = (got.seen, got.mtime_ns, got.offset)
        conn.executemany("UPDATE files SET dev=?, ino=?, size=?, mtime_ns=?, offset=?, head=? WHERE id=?", updates)
        conn.executemany("INSERT INTO chunks VALUES (?,?,?)", chunks)
        return appended, reread

    def _read_whole(self, conn: sqlite3.Connection, path: str, rec: FileRec, got: Scanned) -> FileRec | None:
        """The row of a known file read again whole, its chunks gone (None: no row, the file is new).
        Asked by path, in this run's transaction: a report run beside this one may have renumbered
        or dropped the row since this one loaded `rec`, and rows written under that id would be left
        to the next file given it. A file with the facts it had (replaced, its size and mtime kept)
        takes a new id, so nothing kept by the facts (a part, a report) is taken for it."""
        conn.execute("DELETE FROM chunks WHERE file_id IN (SELECT id FROM files WHERE path = ?)", (_db(path),))
        row = conn.execute("SELECT id, size, mtime_ns, offset FROM files WHERE path = ?", (_db(path),)).fetchone()
        if row is None:
            return None
        seen = (got.seen, got.mtime_ns, got.offset)
        if seen not in {(rec.size, rec.mtime_ns, rec.offset), tuple(row[1:])}:
            return rec._replace(id=row[0])
        fid = self._new_ids(conn, 1)
        conn.execute("UPDATE files SET id = ? WHERE id = ?", (fid, row[0]))
        self._renumbered = True
        return rec._replace(id=fid)

    @staticmethod
    def _new_ids(conn: sqlite3.Connection, n: int) -> int:
        """The first of `n` file ids never given before (kept in `meta` as `lastId`), where SQLite
        hands a dropped file's id to the next one: a file removed, a report run, then put back with
        other content of the size and mtime it had would have come back under its old id, with its
        old facts, and the report kept by them stood for it."""
        row = conn.execute("SELECT max(coalesce((SELECT value FROM meta WHERE key = 'lastId'), 0),"
                           " coalesce((SELECT max(id) FROM files), 0))").fetchone()
        first = int(row[0]) + 1
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('lastId', ?)", (first + n - 1,))
        return first

    def fingerprint(self, extra: str) -> str:
        """A key for the finished report: every live file's path, id, size, mtime and offset (`refresh`'s
        digest of them, and the facts changed since in its kept sources), plus `extra`."""
        import marshal

        digest, changed = self._files_key
        h = _hash(f"{SCHEMA_VERSION}\0{extra}".encode())
        h.update(digest)
        h.update(marshal.dumps(sorted(changed.items()), 2))
        return str(h.hexdigest())

    def _digest(self, live: dict[str, int]) -> bytes:
        """A digest of every live file's path, id, size, mtime and offset."""
        import marshal

        facts = self.facts
        h = _hash(b"")
        # `live` in the sources' order (`_to_read`): the same files found the same way, the same key;
        # marshal's version 2 writes no back-references: the same values, the same bytes
        h.update(marshal.dumps((live, [facts[fid] for fid in live.values()]), 2))
        return bytes(h.digest())

    def _sources_file(self) -> str:
        """The kept sources' record (`kept_sources`): beside the database, named after it."""
        return self.db_path.removesuffix(".sqlite3") + "-sources"

    @staticmethod
    def _mapped(path: str, size: int | None = None) -> memoryview | None:
        """The file at `path` mapped (of `size` bytes, or None), or None."""
        import mmap

        from session_watcher.base.paths import open_file

        try:
            fd = open_file(path, follow=False)
            try:
                if size is not None and os.fstat(fd).st_size != size:
                    return None
                return memoryview(mmap.mmap(fd, size or 0, access=mmap.ACCESS_READ))
            finally:
                os.close(fd)
        except (OSError, ValueError):  # ValueError: an empty file
            return None

    def _docs(self) -> str:
        """The folder of the reports' texts: beside the database, named after it (not its name and
        more: what is named `warmth-index.sqlite3*` is the database's own files)."""
        folder, name = os.path.split(self.db_path)
        return os.path.join(folder, name.removesuffix(".sqlite3") + "-reports")

    def cached_report(self, key: str) -> tuple[Text, str] | None:
        """The finished report kept under `key`: (its JSON text as UTF-8, without the clock fields
        and left open, its `days` as JSON text). The text is stretches of files beside the database
        (`store_report`), mapped, not copied; a file missing or shorter than a stretch kept is no report.
        (A file is only ever written whole under a new name, never in place: what is mapped stays.)"""
        import marshal

        row = self._require().execute("SELECT doc, days, parts FROM reports WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        if row[0] is not None:  # kept in the database (the folder could not be written)
            return Text([("", 0, memoryview(bytes(row[0])))]), str(row[1])
        try:
            stretches: list[tuple[str, int, int]] = marshal.loads(row[2])  # noqa: S302 (our own 0600 cache)
        except (ValueError, EOFError, TypeError):
            return None
        files: dict[str, memoryview | None] = {}
        views: list[tuple[str, int, memoryview]] = []
        for name, off, size in stretches:
            if name not in files:
                files[name] = self._mapped(os.path.join(self._docs(), name))
            whole = files[name]
            if whole is None or len(whole) < off + size:
                return None
            views.append((name, off, whole[off:off + size]))
        return Text(views), str(row[1])

    def store_report(self, key: str, doc: list[bytes | memoryview], days: str, at: float, last: Text | None) -> None:
        """Keep the finished report for the next run: the bytes this run made in a file of its own
        (written whole, then renamed, under a name never used before), the stretches it took from the
        `last` document where they are (`reports.stored`; the whole text when too many), a row in the
        database that names them and says its `days`; a disk that cannot take it keeps nothing. A
        large history's report is megabytes, of which a warm run changed a few kilobytes
        (docs/benchmarks.md)."""
        import marshal

        conn = self._require()
        name = f"{key}.{os.getpid()}.{time.time_ns()}"
        got = None if last is None else last.stretches(doc, name)
        stretches, new = got if got is not None else ([(name, 0, sum(len(piece) for piece in doc))], doc)
        blob: bytes | None = None if self._write_doc(name, new) else b"".join(doc)
        try:
            with conn:
                size = sum(len(piece) for piece in doc)
                conn.execute("INSERT OR REPLACE INTO reports VALUES (?, ?, ?, ?, ?, ?)",
                             (key, blob, days, at, size, marshal.dumps(stretches)))
                conn.execute(
                    "DELETE FROM reports WHERE key NOT IN (SELECT key FROM reports ORDER BY at DESC LIMIT ?)",
                    (KEEP_REPORTS,),
                )
                kept = {s[0] for (parts,) in conn.execute("SELECT parts FROM reports WHERE doc IS NULL")
                        for s in marshal.loads(parts)}  # noqa: S302
        except sqlite3.DatabaseError as exc:
            if not _cannot_write(exc):
                raise
            return
        self._forget_docs(kept)

    def _write_doc(self, name: str, doc: list[bytes | memoryview]) -> bool:
        if self.in_memory:
            return False
        from session_watcher.base.paths import ensure_private_dir

        try:
            ensure_private_dir(self._docs())
        except OSError:
            return False
        return self._write_whole(os.path.join(self._docs(), name), doc)

    @staticmethod
    def _write_whole(path: str, doc: list[bytes | memoryview]) -> bool:
        """`doc` written to `path` whole, then renamed over it (a reader sees the old file or the new one)."""
        folder, key = os.path.split(path)
        tmp = os.path.join(folder, f".{key}.{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            try:
                for piece in doc:
                    view = memoryview(piece)
                    while view:
                        view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.remove(tmp)
            return False
        except BaseException:  # Ctrl-C mid-write: no half-written file left behind (it is megabytes)
            with contextlib.suppress(OSError):
                os.remove(tmp)
            raise
        return True

    def _forget_docs(self, kept: set[str], kind: str = "") -> None:
        """The files of reports' texts (`kind` ""), or of merged sums (`_MERGED`), that no kept row
        holds removed (a run beside this one may have kept others: their reader finds one missing and
        builds again). An index in memory removes none: what its rows hold is not what the file's do
        (a run holding the file keeps files this one's copy never named)."""
        if self.in_memory:
            return
        folder = self._docs()
        try:
            names = os.listdir(folder)
        except OSError:
            return
        for name in names:
            if name not in kept and not name.startswith(".") and name.startswith(_MERGED) == (kind == _MERGED):
                with contextlib.suppress(OSError):
                    os.remove(os.path.join(folder, name))

    def rows(self, live: dict[str, int]) -> dict[str, list[Row]]:
        """The rows of each file in `live` (path -> file id), in file order."""
        return self._load(self._require(), live)

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _job(self, path: str, st: os.stat_result, rec: FileRec | None, whole: bool = False) -> Job:
        """Where to start reading `path`: after the last run's offset when the file only grew (`whole`:
        from its start, a line's meaning depending on the lines before it)."""
        if whole:
            return Job(path, 0, None, st.st_size, True)
        if rec is not None and rec.dev == st.st_dev and rec.ino == st.st_ino and st.st_size > rec.size:
            from session_watcher.base.paths import open_file

            with open(open_file(path), "rb") as f:  # a regular file only
                first = f.read(HEAD_BYTES)
            self.head_bytes_read += len(first)
            if head_hash(first) == rec.head:
                return Job(path, rec.offset, rec.head, st.st_size)
        return Job(path, 0, None, st.st_size)

    @staticmethod
    def _drop_missing(
        conn: sqlite3.Connection, known: dict[str, Known], live: dict[str, int], roots: list[str]
    ) -> int:
        # a file is kept by the path it was found at: under a root as given (a symlinked CODEX_HOME)
        # or as resolved (the Claude Code walk's)
        prefixes = tuple({f(r).rstrip(os.sep) + os.sep for r in roots for f in (os.path.abspath, os.path.realpath)})
        gone = [rec[0] for path, rec in known.items() if path not in live and path.startswith(prefixes)]
        for fid in gone:
            conn.execute("DELETE FROM chunks WHERE file_id = ?", (fid,))
            conn.execute("DELETE FROM files WHERE id = ?", (fid,))
        return len(gone)

    def _load(self, conn: sqlite3.Connection, live: dict[str, int]) -> dict[str, list[Row]]:
        by_id: dict[int, list[Row]] = {fid: [] for fid in live.values()}
        fresh = self._fresh  # read whole just now: no need to ask the database
        wanted = [fid for fid in by_id if fid not in fresh]
        for fid in by_id.keys() & fresh.keys():
            by_id[fid] = rows_in(fresh[fid])
        for at in range(0, len(wanted), _IN_MAX):  # only these files' chunks (a warm run asks for few)
            ids = wanted[at:at + _IN_MAX]
            marks = ",".join("?" * len(ids))  # placeholders only: the ids are bound
            query = f"SELECT file_id, data FROM chunks WHERE file_id IN ({marks}) ORDER BY file_id, off"  # noqa: S608
            for fid, data in conn.execute(query, ids):
                try:
                    by_id[fid] += rows_of(data)
                except (ValueError, EOFError, TypeError) as exc:  # damaged: rebuilt like a damaged database
                    raise sqlite3.DatabaseError(f"damaged rows of file {fid}") from exc
        return {path: by_id[fid] for path, fid in live.items()}

    # -- the folders' listings (reports.walk) -------------------------------------------------

    def folders(self) -> dict[str, bytes]:
        """The folders the last runs' listings found and their mtimes, by folder (`reports.walk`'s
        marshal data; what each held is apart: `folder_values`)."""
        return {_fs(p): data for p, data in self._require().execute("SELECT path, data FROM folders")}

    def folder_values(self, paths: list[str]) -> dict[str, bytes]:
        """What the listings of `paths` held (those kept), by folder."""
        out: dict[str, bytes] = {}
        conn = self._require()
        for at in range(0, len(paths), _IN_MAX):
            part = [_db(p) for p in paths[at:at + _IN_MAX]]
            marks = ",".join("?" * len(part))  # placeholders only: the paths are bound
            query = f"SELECT path, value FROM folders WHERE path IN ({marks})"  # noqa: S608
            out.update((_fs(p), v) for p, v in conn.execute(query, part))
        return out

    def store_folders(self, new: dict[str, tuple[bytes, bytes]], gone: list[str]) -> None:
        """Keep this run's listings, forget those of `gone`, and count the change (`kept_sources`)."""
        if not new and not gone:
            return
        conn = self._require()
        try:
            with conn:
                conn.execute("INSERT OR IGNORE INTO meta VALUES ('folders', 0)")
                conn.execute("UPDATE meta SET value = value + 1 WHERE key = 'folders'")
                conn.executemany("INSERT OR REPLACE INTO folders VALUES (?,?,?)",
                                 [(_db(p), d, v) for p, (d, v) in new.items()])
                conn.executemany("DELETE FROM folders WHERE path = ?", [(_db(p),) for p in gone])
        except sqlite3.DatabaseError as exc:
            if not _cannot_write(exc):
                raise

    # -- each session's part of the report ---------------------------------------------------

    def part_keys(self, params: str, sessions: Iterable[str] | None = None) -> dict[str, str]:
        """The parts kept for a report of `params` (of `sessions`, or all): session id -> its key."""
        conn = self._require()
        if sessions is None:
            rows = conn.execute("SELECT session, key FROM parts WHERE params = ?", (params,)).fetchall()
        else:
            get = "SELECT session, key FROM parts WHERE params = ? AND session = ?"
            rows = [r for sid in sessions for r in conn.execute(get, (params, _db(sid)))]
        return {sid.decode("utf-8", "surrogateescape"): key for sid, key in rows}  # `_fs`, inline

    def cached_parts(self, params: str, sessions: Iterable[str] | None = None) -> dict[str, bytes]:
        """The parts kept for a report of `params` (of `sessions`, or all): session id -> marshal data."""
        conn = self._require()
        if sessions is None:
            rows = conn.execute("SELECT session, part FROM parts WHERE params = ?", (params,)).fetchall()
        else:
            get = "SELECT session, part FROM parts WHERE params = ? AND session = ?"
            rows = [r for sid in sessions for r in conn.execute(get, (params, _db(sid)))]
        return {_fs(sid): part for sid, part in rows}

    def merged(self, params: str) -> bytes | memoryview | None:
        """The report's merged sums kept for `params` (`reports.merge`, as marshal data): a file of
        their own in the reports' folder (mapped), or in the database where that cannot be written."""
        row = self._require().execute("SELECT data, file FROM merged WHERE params = ?", (params,)).fetchone()
        if not row:
            return None
        return bytes(row[0]) if row[1] is None else self._mapped(os.path.join(self._docs(), row[1]))

    def store_merged(self, params: str, data: bytes, at: float) -> None:
        """Keep the merged sums of `params`: a file written whole under a name never used before (a
        megabyte at 10,000 files, read and written through the database's pages before), its name in
        the database; the files of sums no longer kept removed."""
        conn = self._require()
        name = f"{_MERGED}{os.getpid()}.{time.time_ns()}"
        written = self._write_doc(name, [data])
        try:
            with conn:
                conn.execute("INSERT OR REPLACE INTO merged VALUES (?,?,?,?)",
                             (params, None, at, name) if written else (params, data, at, None))
                conn.execute("DELETE FROM merged WHERE params NOT IN (SELECT params FROM merged ORDER BY at DESC"
                             " LIMIT ?)", (KEEP_REPORTS,))
                kept = {f for (f,) in conn.execute("SELECT file FROM merged WHERE file IS NOT NULL")}
        except sqlite3.DatabaseError as exc:
            if not _cannot_write(exc):
                raise
            return
        self._forget_docs(kept, _MERGED)

    def parts_made(self, params: str) -> int:
        """How many times the parts of `params` were changed (`store_parts`): merged sums made from
        them at another count summed other parts (a report run beside this one changed them)."""
        row = self._require().execute("SELECT value FROM meta WHERE key = ?", (f"parts\0{params}",)).fetchone()
        return int(row[0]) if row else 0

    def store_parts(self, params: str, changed: list[tuple[str, str, bytes]], gone: list[str], at: float,
                    first: bool = False) -> int:
        """Keep the parts of `changed` (session id, key, marshal data) for a report of `params`, drop
        those of the sessions `gone`; the `first` of `params` drops the parts of all but the newest few.
        A change drops the merged sums of `params` with it (they summed the parts as they were; the
        caller keeps the new ones after: a run stopped between them builds from every part). Returns
        `parts_made` before the change (-1: the disk took nothing)."""
        conn = self._require()
        try:
            with conn:
                if changed or gone:  # counted up in the transaction's first writes: two runs never count one
                    # a count made again starts past every count dropped (`_drop_counts`): never one a run
                    # beside this read from the window's parts as they were before they were dropped
                    conn.execute("INSERT OR IGNORE INTO meta VALUES (?, (SELECT COALESCE(MAX(value), 0) FROM meta"
                                 " WHERE key = 'parts'))", (f"parts\0{params}",))
                    conn.execute("UPDATE meta SET value = value + 1 WHERE key = ?", (f"parts\0{params}",))
                    conn.execute("DELETE FROM merged WHERE params = ?", (params,))
                made = self.parts_made(params) - (1 if changed or gone else 0)
                conn.executemany("INSERT OR REPLACE INTO parts VALUES (?,?,?,?,?)",
                                 [(params, _db(sid), key, part, at) for sid, key, part in changed])
                conn.executemany("DELETE FROM parts WHERE params = ? AND session = ?", [(params, _db(s)) for s in gone])
                if first:
                    conn.execute("DELETE FROM parts WHERE params NOT IN (SELECT params FROM parts GROUP BY params"
                                 " ORDER BY MAX(at) DESC LIMIT ?)", (KEEP_REPORTS,))
                    # a window's sums go with its parts: they hold nothing the parts no longer say
                    conn.execute("DELETE FROM merged WHERE params NOT IN (SELECT DISTINCT params FROM parts)")
                    _drop_counts(conn)
        except sqlite3.DatabaseError as exc:
            if not _cannot_write(exc):
                raise
            return -1
        return made
