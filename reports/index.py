"""Transcript discovery and the SQLite index of what each file contributed.

The index is a cache: it can be deleted at any time and the next run rebuilds it from the
transcripts. Each file is keyed by path, with its identity (device, inode), size, mtime and a hash of
its first line. On a re-run an unchanged file is skipped without being opened, a grown file is read
from where the last run stopped (only the appended bytes), and a rewritten or shrunk file is read
again from the start. A file that disappeared from a scanned folder drops out.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sqlite3
from typing import TYPE_CHECKING, NamedTuple

from reports.parse import Row, parse_chunk

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

SCHEMA_VERSION = 2  # 1: files + rows; 2: + reports (finished documents by corpus fingerprint)
DB_NAME = "warmth-index.sqlite3"
HEAD_BYTES = 4096
READ_BLOCK = 8 << 20


class Source(NamedTuple):
    """One transcript file: the session it belongs to, its project folder, main or subagent."""

    path: str
    session: str
    project: str
    sub: bool


def default_roots() -> list[str]:
    """`projects` folders under every Claude Code config folder."""
    from session_watcher.paths import claude_config_dirs

    return [os.path.join(d, "projects") for d in claude_config_dirs()]


def _jsonl_under(folder: str) -> list[str]:
    found: list[str] = []
    for dirpath, _dirs, files in os.walk(folder):
        found.extend(os.path.join(dirpath, f) for f in files if f.endswith(".jsonl"))
    return sorted(found)


def _project_sources(project_dir: str) -> list[Source]:
    project = os.path.basename(project_dir.rstrip(os.sep))
    out: list[Source] = []
    try:
        entries = sorted(os.scandir(project_dir), key=lambda e: e.name)
    except OSError:
        return out
    for e in entries:
        if e.name.endswith(".jsonl") and e.is_file():
            out.append(Source(e.path, e.name[: -len(".jsonl")], project, False))
        elif e.is_dir():
            subs = os.path.join(e.path, "subagents")
            if os.path.isdir(subs):
                out.extend(Source(p, e.name, project, True) for p in _jsonl_under(subs))
    return out


def discover(roots: Iterable[str]) -> list[Source]:
    """Every main and subagent transcript under the given folders.

    A folder holding `.jsonl` files directly is one project folder; otherwise each of its
    sub-folders is (the layout of `~/.claude/projects`). Folders reached twice count once.
    """
    seen_roots: set[str] = set()
    seen_files: set[str] = set()
    out: list[Source] = []
    for root in roots:
        real = os.path.realpath(root)
        if real in seen_roots or not os.path.isdir(real):
            continue
        seen_roots.add(real)
        try:
            entries = sorted(os.scandir(real), key=lambda e: e.name)
        except OSError:
            continue
        if any(e.name.endswith(".jsonl") and e.is_file() for e in entries):
            projects = [real]
        else:
            projects = [e.path for e in entries if e.is_dir()]
        for p in projects:
            for s in _project_sources(p):
                if s.path not in seen_files:
                    seen_files.add(s.path)
                    out.append(s)
    return out


def head_hash(head: bytes) -> str:
    """Hash of a file's first line (at most HEAD_BYTES of it)."""
    nl = head.find(b"\n")
    return hashlib.sha1(head[: nl + 1] if nl >= 0 else head, usedforsecurity=False).hexdigest()


class FileRec(NamedTuple):
    id: int
    dev: int
    ino: int
    size: int
    mtime_ns: int
    offset: int
    head: str


class IndexStats(NamedTuple):
    files: int
    skipped: int
    appended: int
    reread: int
    dropped: int
    bytes_read: int


_DDL = (
    "CREATE TABLE IF NOT EXISTS files (id INTEGER PRIMARY KEY, path TEXT UNIQUE NOT NULL, dev INTEGER,"
    " ino INTEGER, size INTEGER, mtime_ns INTEGER, offset INTEGER, head TEXT)",
    "CREATE TABLE IF NOT EXISTS rows (file_id INTEGER NOT NULL, off INTEGER NOT NULL, kind TEXT NOT NULL,"
    " ts REAL, key TEXT, model TEXT, side INTEGER, inp INTEGER, out INTEGER, cr INTEGER, cw INTEGER,"
    " cw5m INTEGER, cw1h INTEGER)",
    "CREATE INDEX IF NOT EXISTS rows_file ON rows (file_id, off)",
    "CREATE TABLE IF NOT EXISTS reports (key TEXT PRIMARY KEY, doc TEXT NOT NULL, at REAL NOT NULL)",
)
KEEP_REPORTS = 8


class Index:
    """The SQLite index at `db_path`. `bytes_read` counts transcript bytes read for parsing."""

    def __init__(self, db_path: str) -> None:
        self.db_path = db_path
        self.bytes_read = 0
        self.head_bytes_read = 0
        self.rebuilt = False
        self._conn: sqlite3.Connection | None = None

    # -- connection ------------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        folder = os.path.dirname(self.db_path)
        if folder:
            os.makedirs(folder, mode=0o700, exist_ok=True)
        conn = sqlite3.connect(self.db_path, timeout=10)
        try:
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA_VERSION:
                conn.execute("DROP TABLE IF EXISTS reports")
                conn.execute("DROP TABLE IF EXISTS rows")
                conn.execute("DROP TABLE IF EXISTS files")
            conn.execute("PRAGMA synchronous=OFF")  # a cache: a lost write is rebuilt next run
            for stmt in _DDL:
                conn.execute(stmt)
            conn.execute(f"PRAGMA user_version={SCHEMA_VERSION}")
            conn.commit()
        except sqlite3.DatabaseError:
            conn.close()
            raise
        with contextlib.suppress(OSError):
            os.chmod(self.db_path, 0o600)
        return conn

    def _discard(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(sqlite3.Error):
                self._conn.close()
            self._conn = None
        for suffix in ("", "-journal", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.db_path + suffix)
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

    def refresh(
        self,
        sources: list[Source],
        roots: Iterable[str],
        progress: Callable[[int, int], None] | None = None,
    ) -> tuple[IndexStats, dict[str, int]]:
        """Bring the index up to date with `sources`; return the counts and each source's file id.

        A database that cannot be read (corrupt, not a database) is thrown away and rebuilt.
        """
        try:
            return self._refresh(sources, list(roots), progress)
        except sqlite3.DatabaseError:
            self.discard()
            return self._refresh(sources, list(roots), progress)

    def _refresh(
        self, sources: list[Source], roots: list[str], progress: Callable[[int, int], None] | None
    ) -> tuple[IndexStats, dict[str, int]]:
        if self._conn is None:
            self._conn = self._open()
        conn = self._conn
        known: dict[str, FileRec] = {
            r[0]: FileRec(*r[1:])
            for r in conn.execute("SELECT path, id, dev, ino, size, mtime_ns, offset, head FROM files")
        }
        skipped = appended = reread = 0
        live: dict[str, int] = {}
        total = len(sources)
        with conn:
            for n, src in enumerate(sources):
                if progress is not None:
                    progress(n, total)
                try:
                    st = os.stat(src.path)
                except OSError:
                    continue
                rec = known.get(src.path)
                if (
                    rec is not None
                    and rec.dev == st.st_dev
                    and rec.ino == st.st_ino
                    and rec.size == st.st_size
                    and rec.mtime_ns == st.st_mtime_ns
                ):
                    skipped += 1
                    live[src.path] = rec.id
                    continue
                try:
                    file_id, how = self._read_file(conn, src.path, st, rec)
                except OSError:  # unreadable (permissions, vanished mid-read): left out this time
                    if rec is not None:
                        live[src.path] = rec.id
                    continue
                if how == "append":
                    appended += 1
                else:
                    reread += 1
                live[src.path] = file_id
            if progress is not None:
                progress(total, total)
            dropped = self._drop_missing(conn, known, live, roots)
        stats = IndexStats(len(live), skipped, appended, reread, dropped, self.bytes_read)
        return stats, live

    def fingerprint(self, live: dict[str, int], extra: str) -> str:
        """A key for the finished report: every live file's path, size, mtime and offset, plus `extra`."""
        conn = self._require()
        wanted = set(live.values())
        h = hashlib.sha1(f"{SCHEMA_VERSION}\0{extra}".encode(), usedforsecurity=False)
        for r in conn.execute("SELECT id, path, size, mtime_ns, offset, head FROM files ORDER BY path"):
            if r[0] in wanted:
                h.update(repr(r[1:]).encode())
        return h.hexdigest()

    def cached_report(self, key: str) -> str | None:
        row = self._require().execute("SELECT doc FROM reports WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else None

    def store_report(self, key: str, doc: str, at: float) -> None:
        conn = self._require()
        with conn:
            conn.execute("INSERT OR REPLACE INTO reports (key, doc, at) VALUES (?, ?, ?)", (key, doc, at))
            conn.execute(
                "DELETE FROM reports WHERE key NOT IN (SELECT key FROM reports ORDER BY at DESC LIMIT ?)",
                (KEEP_REPORTS,),
            )

    def rows(self, live: dict[str, int]) -> dict[str, list[Row]]:
        """Every live file's rows, in file order."""
        return self._load(self._require(), live)

    def _require(self) -> sqlite3.Connection:
        if self._conn is None:
            self._conn = self._open()
        return self._conn

    def _read_file(
        self, conn: sqlite3.Connection, path: str, st: os.stat_result, rec: FileRec | None
    ) -> tuple[int, str]:
        with open(path, "rb") as f:
            start = 0
            head: str | None = None
            if rec is not None and rec.dev == st.st_dev and rec.ino == st.st_ino and st.st_size > rec.size:
                first = f.read(HEAD_BYTES)
                self.head_bytes_read += len(first)
                if head_hash(first) == rec.head:
                    start, head = rec.offset, rec.head
            how = "append" if start else "full"
            if rec is None:
                cur = conn.execute("INSERT INTO files (path) VALUES (?)", (path,))
                file_id = int(cur.lastrowid or 0)
            else:
                file_id = rec.id
                if not start:
                    conn.execute("DELETE FROM rows WHERE file_id = ?", (file_id,))
            f.seek(start)
            pos, buf = start, b""
            seen = start
            while True:
                block = f.read(READ_BLOCK)
                if not block:
                    break
                self.bytes_read += len(block)
                seen += len(block)
                if head is None:
                    head = head_hash((buf + block)[:HEAD_BYTES])
                buf += block
                rows, used = parse_chunk(buf, pos)
                if rows:
                    conn.executemany(
                        "INSERT INTO rows VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
                        [(file_id, *r) for r in rows],
                    )
                pos += used
                buf = buf[used:]
            if head is None:
                head = head_hash(b"")
            after = os.fstat(f.fileno())
        # the stamp of what was read: a file still growing keeps mtime 0, so the next run looks again
        mtime = after.st_mtime_ns if after.st_size == seen else 0
        conn.execute(
            "UPDATE files SET dev=?, ino=?, size=?, mtime_ns=?, offset=?, head=? WHERE id=?",
            (st.st_dev, st.st_ino, seen, mtime, pos, head, file_id),
        )
        return file_id, how

    @staticmethod
    def _drop_missing(
        conn: sqlite3.Connection, known: dict[str, FileRec], live: dict[str, int], roots: list[str]
    ) -> int:
        prefixes = tuple(os.path.realpath(r).rstrip(os.sep) + os.sep for r in roots)
        gone = [rec.id for path, rec in known.items() if path not in live and path.startswith(prefixes)]
        for fid in gone:
            conn.execute("DELETE FROM rows WHERE file_id = ?", (fid,))
            conn.execute("DELETE FROM files WHERE id = ?", (fid,))
        return len(gone)

    @staticmethod
    def _load(conn: sqlite3.Connection, live: dict[str, int]) -> dict[str, list[Row]]:
        by_id: dict[int, list[Row]] = {fid: [] for fid in live.values()}
        for r in conn.execute(
            "SELECT file_id, off, kind, ts, key, model, side, inp, out, cr, cw, cw5m, cw1h"
            " FROM rows ORDER BY file_id, off"
        ):
            bucket = by_id.get(r[0])
            if bucket is not None:
                bucket.append(Row(r[1], r[2], r[3], r[4], r[5], bool(r[6]), *r[7:]))
        return {path: by_id[fid] for path, fid in live.items()}
