"""Sources -> index -> sessions -> the report document. The shell around the pure `warmth` module."""

from __future__ import annotations

import os
import sys
import time
from collections import Counter

from session_watcher.agents import AGENTS, FALLBACK, claimed
from session_watcher.core import fastjson
from session_watcher.reports import walk
from session_watcher.reports.fmt import apply_now, zone_key
from session_watcher.reports.index import DB_NAME, Index, IndexStats
from session_watcher.reports.jsontext import dumps, dumps_spaced, finite_pieces
from session_watcher.reports.kept import Order, Sources
from session_watcher.reports.scan import rows_in

_new = tuple.__new__

REPORT_VERSION = 10  # bump when the report's computation changes: cached documents are then rebuilt
# 4: Codex rollouts, each session's agent and the totals by agent
# 6: the totals' USD sums exact (`warmth.exact`), so a warm run can take a session's share out (`merge`)
# 7: a fork's copies of its parent's calls counted in the parent only (`kinds.KIND_INHERITED`)
# 8: a longest gap under a second is no break (`fmt.gap_sentence`: it read "longest break (0 s) stayed warm")
# 9: a Codex session's `project` the project folder of its working folder, as Claude Code's (it was "codex")
# 10: a figure JSON cannot hold null in the kept text too, as `cli.messages.json_text` writes it (the text
#     a warm run sends as it is held `Infinity`: a guard log line's `"usd": 1e999`)

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    import sqlite3
else:  # the same module without its package's adapters for datetime (and datetime's import)
    import _sqlite3 as sqlite3

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any

    from session_watcher.agents.seam import Agent
    from session_watcher.agents.source import Source
    from session_watcher.reports.merge import Doc
    from session_watcher.reports.parse import Row
    from session_watcher.reports.scan import Job, Scanned
    from session_watcher.reports.stored import Text
    from session_watcher.reports.warmth import Part, Session


def default_db_path() -> str:
    from session_watcher.base.paths import cache_dir

    return os.path.join(cache_dir(), DB_NAME)


class _Summarize:
    """Each session's `Part` for the report. A session whose files were all read whole this run is
    folded and summarized by the process that read them, while the other processes read on (the
    index's `finish`); the others (some files unchanged since the last run, or grown) here, from
    the index's rows."""

    def __init__(self, sources: Sequence[Source], since: float | None, utc_offset: float | None,
                 guarded: frozenset[str], zone: str) -> None:
        self.sources, self.since, self.utc_offset, self.guarded = sources, since, utc_offset, guarded
        self.zone = zone  # `zone_key`'s
        self.members: dict[str, int]  # each session's files
        if isinstance(sources, Sources):  # the last run's, as columns
            self.agents, self.members = sources.by_agent(), sources.counts()
        else:
            self.agents = {src.session: src.agent for src in sources if src.agent}  # the others: the fallback's
            self.members = Counter([src.session for src in sources])
        self.params = ""  # the kept parts' and merged sums' key (`document`)
        self.state: dict[str, Any] = {}  # the merged sums (`reports.merge`) after `document`
        self.last: Text | None = None  # the last document's text, when this one was cut from it

    def agent(self, session: str) -> str:
        return self.agents.get(session) or FALLBACK.name

    def __call__(self, items: list[tuple[Source, Job, Scanned | None]]) -> object:
        """In the process that read them: one session's files read this run -> ("part", its Part as
        a plain tuple, or None when it ends before `since`), ("empty",) for a session without API
        calls, or None when some of its files were not read whole here (summarized later)."""
        from session_watcher.reports.warmth import session_part

        first = items[0][0]
        if len(items) != self.members[first.session] or any(job.start or got is None for _src, job, got in items):
            return None
        files: list[tuple[Source, list[Row]]] = []
        for src, _job, got in items:
            assert got is not None
            files.append((src, rows_in(got)))
        s = fold_files(first.session, files)
        if not s.api_calls:
            return ("empty",)
        part = session_part(s, self.since, self.utc_offset, True, self.guarded, self.agent(first.session))
        return ("part", None if part is None else tuple(part))

    def document(self, index: Index, live: dict[str, int], warnings: list[dict[str, Any]], roots: list[str]) -> Doc:
        """The report's document: every session's Part, sessions in the order of their first source;
        a session whose files are as they were (their ids, sizes, mtimes and offsets) as kept in the
        index, the others from what their reading process finished or folded here from their rows,
        and kept. The merged sums kept from the last run (`reports.merge`) take the changed sessions'
        old parts out and their new ones in; without them, from every part."""
        import marshal

        from session_watcher.core.prices import user_rows  # a part priced otherwise is another part
        from session_watcher.reports import merge

        order: dict[str, list[Source]] = {}
        if isinstance(self.sources, Sources) and len(live) == len(self.sources):  # every one live: by session
            order = Order(self.sources)
        else:
            for src in self.sources:
                if src.path in live:
                    order.setdefault(src.session, []).append(src)
        params = self.params = f"{REPORT_VERSION}\0{self.since!r}\0{self.zone}\0{user_rows()!r}"
        made = index.parts_made(params)  # before the keys: a change beside this run after it shows in `was`
        blob = index.merged(params)
        state: dict[str, Any] | None = merge.load(blob) if blob else None
        if state is not None and state.get("made") != made:  # summed other parts (a run beside this one)
            state = None
        keys, gone, first = self._changed(index, live, order, params, state, roots)
        if state is not None and first:  # parts no longer kept (dropped with other windows')
            state = None
        last = index.cached_report(state["key"]) if state else None
        self.last = None if last is None else last[0]  # the text this one's is cut from
        old = index.cached_parts(params, [*keys, *gone]) if last else {}
        new = self._parts(index, live, order, keys)
        was = index.store_parts(params, [(k, key, marshal.dumps(new[k])) for k, key in keys.items()],  # type: ignore[arg-type]
                                gone, time.time(), first)
        doc = None
        if state is not None and last is not None and was == made:  # no run beside this one changed the parts
            kept = state["sess"]
            news = {k: p for k, v in new.items() if (p := _part(v)) is not None}
            if len(news) == len(new) and kept.keys() >= new.keys():  # none left or came: the kept, at C speed
                now_kept = list(filter(kept.__contains__, order))
            else:
                now_kept = [k for k in order if (k in kept and k not in new) or k in news]
            olds = {k: p for k, v in old.items() if (p := _part(marshal.loads(v))) is not None}  # noqa: S302
            doc = merge.update(state, last[0], olds, news, now_kept, warnings, self.since, self.utc_offset)
            made = was + bool(keys or gone)  # this run's change of the parts
        if doc is None:  # every part: as kept (read after their count), this run's as made here
            made = index.parts_made(params)
            kept_parts = index.cached_parts(params)
            lost = [k for k in order if k not in new and k not in kept_parts]
            if lost:  # dropped beside this run (another window's first run): made here and kept again
                lost_keys = self._keys(index, live, order, lost, {})
                new.update(lost_parts := self._parts(index, live, order, lost_keys))
                index.store_parts(params, [(k, key, marshal.dumps(lost_parts[k])) for k, key in lost_keys.items()],  # type: ignore[arg-type]
                                  [], time.time())
                made, kept_parts = index.parts_made(params), index.cached_parts(params)
            values: dict[str, object] = {k: marshal.loads(v) for k, v in kept_parts.items()  # noqa: S302
                                         if k not in new}  # this run's as made here, not loaded again beside them
            values.update(new)
            parts = {k: p for k, v in values.items() if k in order and (p := _part(v)) is not None}
            state, doc = merge.build(parts, [k for k in order if k in parts], warnings, self.since, self.utc_offset)
        assert state is not None
        state["made"] = made  # the parts it sums (`Index.parts_made`)
        # what its parts were made from: the files as of this count of their changes (None: some parts
        # may not have been kept), over these roots, these sessions guarded
        state["files"] = index.files_made[1] if was >= 0 else None
        state["roots"], state["guarded"] = roots, sorted(self.guarded)
        self.state = state
        return doc

    def _changed(self, index: Index, live: dict[str, int], order: dict[str, list[Source]], params: str,
                 state: dict[str, Any] | None, roots: list[str]) -> tuple[dict[str, str], list[str], bool]:
        """(the sessions whose part is not kept as their files are now, with their keys; the sessions
        kept but gone; whether no part of `params` is kept). A session's key says its files' facts.
        When the last run's sums were made from the files as they were before this run (nothing
        changed them between), over the same roots and guarded sessions, and this run dropped no
        file, only the sessions whose files this run read can differ: only theirs are compared;
        else every one."""
        touched = index.touched
        if (state is not None and touched is not None and state.get("files") == index.files_made[0]
                and state.get("roots") == roots and set(state.get("guarded", ())) == self.guarded
                and order.keys() >= state.get("sess", {}).keys()):  # and no session gone
            maybe: Any = touched.intersection(order)
            kept_keys = index.part_keys(params, maybe)
            gone, first = [], False
        else:
            maybe = order
            kept_keys = index.part_keys(params)
            gone, first = [k for k in kept_keys if k not in order], not kept_keys
        return self._keys(index, live, order, maybe, kept_keys), gone, first

    def _keys(self, index: Index, live: dict[str, int], order: dict[str, list[Source]], sessions: Iterable[str],
              kept_keys: dict[str, str]) -> dict[str, str]:
        """The keys of those of `sessions` whose key is not the one in `kept_keys`. A session's key
        says its files' facts."""
        facts, agents, guarded, fallback = index.facts, self.agents, self.guarded, FALLBACK.name
        keys: dict[str, str] = {}
        for k in sessions:  # once per session of the history: its one file written inline
            srcs = order[k]
            if len(srcs) == 1:
                fid = live[(src := srcs[0]).path]
                key = f"{k in guarded:d}{agents.get(k) or fallback}{fid}:{src.sub:d}:{facts[fid]}"
            else:
                key = f"{k in guarded:d}{agents.get(k) or fallback}" + ";".join(
                    f"{live[src.path]}:{src.sub:d}:{facts[live[src.path]]}" for src in srcs)
            if kept_keys.get(k) != key:
                keys[k] = key
        return keys

    def _parts(self, index: Index, live: dict[str, int], order: dict[str, list[Source]],
               keys: Iterable[str]) -> dict[str, object]:
        """The parts of the sessions `keys`: as their reading process finished them, or folded here."""
        done = index.finished
        folds = [k for k in keys if done.get(k) is None]
        rows = index.rows({src.path: live[src.path] for k in folds for src in order[k]})
        new: dict[str, object] = {}
        for k in keys:
            value = done.get(k)
            new[k] = self._fold(k, [(src, rows[src.path]) for src in order[k]]) if value is None else value
        return new

    def _fold(self, session: str, files: list[tuple[Source, list[Row]]]) -> tuple[object, ...]:
        """One session's part from its files' rows, as `__call__` gives it."""
        from session_watcher.reports.warmth import session_part

        s = fold_files(session, files)
        if not s.api_calls:
            return ("empty",)
        part = session_part(s, self.since, self.utc_offset, True, self.guarded, self.agent(session))
        return ("part", None if part is None else tuple(part))


def _part(value: object) -> Part | None:
    """The Part a kept value stands for (None: a session without calls, or left out by `since`)."""
    from session_watcher.reports.warmth import Part

    if value is None or value[0] != "part" or value[1] is None:  # type: ignore[index]
        return None
    return _new(Part, value[1])  # type: ignore[index]


def fold_files(session: str, files: list[tuple[Source, list[Row]]]) -> Session:
    """One session from all of its files, in whatever project folders they are: one id, one row.
    The same id in two project folders (a session resumed from another folder, a config folder
    copied) is one session: the main files fold as one chain in the order they start (each call
    once, by its key, as ever: a copy adds nothing), then the subagent files; it is named after the
    folder of the main file that starts last, where the session went on."""
    from session_watcher.reports.warmth import fold_session

    mains = sorted(((src, got) for src, got in files if not src.sub), key=lambda f: _start(f[1]))
    src = mains[-1][0] if mains else files[0][0]
    main = mains[0][1] if len(mains) == 1 else [r for _src, got in mains for r in got]
    s = fold_session(session, src.project, main, [got for src, got in files if src.sub])
    if src.agent is not None and src.project == src.agent and s.cwd:
        # an agent whose logs are kept by date, not by project (Codex's rollouts: their Source's
        # project is the agent's name): the project folder of its working folder, as Claude Code names it
        s.project = project_folder(s.cwd)
    return s


PROJECT_FOLDER_MAX = 200  # Claude Code's longest project folder name before its hash is added


def project_folder(cwd: str) -> str:
    """The folder Claude Code keeps a working folder's sessions in, under its `projects/`: every
    UTF-16 unit but an ASCII letter or digit a `-` (`/work/my app` is `-work-my-app`, `D:\\x` `D--x`,
    a character past U+FFFF `--`: JavaScript's `replace(/[^a-zA-Z0-9]/g, "-")`); one longer than 200
    is its first 200 and `-` the base-36 hash Claude Code adds (a 32-bit `h * 31 + unit` over the
    folder's UTF-16 units, its absolute value: the CLI's bundle, 2.1.154)."""
    units = cwd.encode("utf-16-le", "surrogatepass")
    codes = [int.from_bytes(units[i:i + 2], "little") for i in range(0, len(units), 2)]
    name = "".join(chr(u) if u < 128 and chr(u).isalnum() else "-" for u in codes)
    if len(name) <= PROJECT_FOLDER_MAX:
        return name
    h = 0
    for u in codes:
        h = (h * 31 + u) & 0xFFFFFFFF
    h = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = ""
    while True:
        h, d = divmod(h, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[d] + digits
        if not h:
            break
    return f"{name[:PROJECT_FOLDER_MAX]}-{digits}"


def _start(rows: list[Row]) -> tuple[bool, float]:
    """A file's order among a session's main files: its first timestamp (a file without one first)."""
    ts = next((r[2] for r in rows if r[2] is not None), None)
    return (ts is not None, ts or 0.0)


class Progress:
    """A progress bar on stderr, shown only on a terminal and only once a scan has taken a moment."""

    DELAY = 0.5

    def __init__(self, stream: Any = None, label: str = "scanning transcripts") -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.start = time.monotonic()
        self.shown = False
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        if not self.shown and time.monotonic() - self.start < self.DELAY:
            return
        self.shown = True
        width = 30
        fill = width * done // total
        self.stream.write(f"\r{self.label} [{'#' * fill}{'.' * (width - fill)}] {done}/{total}")
        if done >= total:
            self.stream.write("\r" + " " * (width + 40) + "\r")
        self.stream.flush()


CLOCK_FIELDS = ("generatedAt", "warmthToday", "warmthWeek")


def run_report(
    roots: list[str] | None = None,
    db_path: str | None = None,
    *,
    now: float | None = None,
    since: float | None = None,
    utc_offset: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, Any], IndexStats]:
    """Scan, refresh the index, and build the report document.

    The finished document is kept in the index under a fingerprint of every file it was built from;
    an unchanged corpus gets it back with only the clock-dependent fields (today, this week)
    recomputed.
    """
    doc, _text, stats = _run(roots, db_path, now, since, utc_offset, progress, as_text=False)
    assert doc is not None
    return doc, stats


def run_report_json(
    roots: list[str] | None = None,
    db_path: str | None = None,
    *,
    now: float | None = None,
    since: float | None = None,
    utc_offset: float | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """The report as compact JSON text (`report_json_pieces`, joined and closed)."""
    pieces = report_json_pieces(roots, db_path, now=now, since=since, utc_offset=utc_offset, progress=progress)
    return b"".join([*pieces, b"}"]).decode("utf-8")


def report_json_pieces(
    roots: list[str] | None = None,
    db_path: str | None = None,
    *,
    now: float | None = None,
    since: float | None = None,
    utc_offset: float | None = None,
    progress: Callable[[int, int], None] | None = None,
    unread: list[str] | None = None,
) -> list[bytes | memoryview]:
    """The report as compact JSON text in UTF-8 pieces, the object left open (a caller adds its own
    members and the closing brace): the same document as `run_report`, but an unchanged corpus's
    cached text is sent as it is, followed by the clock fields and the index figures (parsing and
    re-serializing a large history's report was most of a warm run; so was copying its text).
    `unread`, when given, gets the document's `unreadable` (the transcripts that could not be read)."""
    _doc, pieces, _stats = _run(roots, db_path, now, since, utc_offset, progress, as_text=True, unread=unread)
    assert pieces is not None
    return pieces


def _run(
    roots: list[str] | None,
    db_path: str | None,
    now: float | None,
    since: float | None,
    utc_offset: float | None,
    progress: Callable[[int, int], None] | None,
    as_text: bool,
    unread: list[str] | None = None,
) -> tuple[dict[str, Any] | None, list[bytes | memoryview] | None, IndexStats]:
    # without roots, every agent's logs in its own folders (the registry's); with, the fallback's there
    plan = [(FALLBACK, list(roots))] if roots else [(a, a.roots()) for a in AGENTS]
    plan = [(a, [os.path.abspath(os.path.expanduser(r)) for r in folders]) for a, folders in plan]
    roots = [r for _a, folders in plan for r in folders]
    now = time.time() if now is None else now
    index = Index(db_path or default_db_path())
    try:
        try:  # the folders whose mtimes moved listed again, the others as the index kept them
            sources = _sources(plan, index)
            doc, text, stats, cached = _build(index, sources, roots, now, since, utc_offset, progress, as_text)
        except sqlite3.DatabaseError as exc:
            index.recover(exc)
            sources = _sources(plan, None)
            doc, text, stats, cached = _build(index, sources, roots, now, since, utc_offset, progress, as_text)
    finally:
        index.close()
    figures = {
        "files": stats.files,
        "skipped": stats.skipped,
        "appended": stats.appended,
        "reread": stats.reread,
        "dropped": stats.dropped,
        "bytesRead": stats.bytes_read,
        "rebuilt": index.rebuilt,
        "cached": cached,
        "roots": roots,
    }
    # the transcripts left out because they could not be read, named (only when there are any)
    named = {"unreadable": sorted(index.unread)} if index.unread else {}
    if unread is not None:
        unread += sorted(index.unread)
    if text is not None:  # the open object's pieces, and the index figures
        return None, [*text, *(b',"unreadable":' + dumps(v).encode() for v in named.values()),
                      b',"index":' + dumps(figures).encode()], stats
    assert doc is not None
    doc.update(named)
    doc["index"] = figures
    return doc, None, stats


def _sources(plan: list[tuple[Agent, list[str]]], index: Index | None) -> Sequence[Source]:
    """Every log in each agent's folders: the fallback's (Claude Code's project folders) listed again
    only where their mtimes moved (`reports.walk`, with the index), the others' as their agent lists them.
    The walk's taken whole from the index (`Index.kept_sources`) stay columns, the others after them."""
    out: list[Source] = []
    kept: Sources | None = None
    for agent, folders in plan:
        if agent is FALLBACK and index is not None:  # a rollout among them is its agent's (`agents.claimed`)
            found = walk.discover(folders, index)
            if out:  # the kept sources (`Index.kept_sources`) begin with the walk's
                index.walk = None
            if isinstance(found, Sources) and not out:
                kept = found
            else:
                out += found
        elif agent is FALLBACK:
            out += [claimed(s) for s in agent.sources(folders)]
        else:
            out += agent.sources(folders)
    return out if kept is None else kept.plus(out)


def _build(
    index: Index,
    sources: Sequence[Source],
    roots: list[str],
    now: float,
    since: float | None,
    utc_offset: float | None,
    progress: Callable[[int, int], None] | None,
    as_text: bool = False,
) -> tuple[dict[str, Any] | None, list[bytes | memoryview] | None, IndexStats, bool]:

    warnings, log_stamp = guard_warnings()
    zone = zone_key(utc_offset)  # before any session is summarized: a zone changed since the last run clears its memos
    guarded: frozenset[str] = frozenset()
    if warnings:  # the guard warned of some session (a warm run with none need not load `warmth`)
        from session_watcher.reports.warmth import guard_ids

        guarded = guard_ids(warnings)
    summarize = _Summarize(sources, since, utc_offset, guarded, zone)
    stats, live = index.refresh(sources, roots, progress, summarize)
    from session_watcher.core.prices import user_rows  # a report priced otherwise is another report

    key = index.fingerprint(f"{REPORT_VERSION}\0{since!r}\0{zone}\0{log_stamp!r}\0{user_rows()!r}")
    kept = index.cached_report(key)
    cached = kept is not None
    body: list[bytes | memoryview]
    if kept is not None:
        body, days = kept[0].pieces(), kept[1]
        if since is None and not os.path.exists(cliff_path()):
            save_cliffs(fastjson.loads(b"".join([*body, b"}"]))["ttl"], now)
    else:
        made = summarize.document(index, live, warnings, roots)
        # standard JSON before the index keeps it: a warm run sends the kept text as it is
        body, days = finite_pieces(made.body, b"}"), made.days
        if since is None:  # a report over a window has less evidence than the whole history
            save_cliffs(made.ttl, now)
        # stored without the clock fields, with `days` last, so a kept copy is sent as text
        index.store_report(key, body, days, time.time(), summarize.last)
        # the text the next run cuts its sessions' texts from (at the places `merge` kept for it):
        # none where `finite_pieces` wrote it again, of another length (that run builds from the parts)
        summarize.state["key"] = key if body is made.body else ""
        from session_watcher.reports.merge import dump

        index.store_merged(summarize.params, dump(summarize.state), time.time())
    if as_text:
        return None, [*body, _clock_text(days, now, utc_offset)], stats, cached
    return apply_now(fastjson.loads(b"".join([*body, b"}"])), now, utc_offset), None, stats, cached


def cliff_path() -> str:
    from session_watcher.base.paths import cliff_file

    return cliff_file()


def save_cliffs(ttl: dict[str, Any], now: float) -> None:
    """The inferred TTL cliffs, for the cold-cache guard (the config loader reads them as `cliff`)."""
    from session_watcher.base.atomic import write_atomic
    from session_watcher.base.paths import ensure_private_dir

    doc: dict[str, Any] = {cls: (t or {}).get("inferredSeconds") for cls, t in ttl.items()}
    doc["evidence"] = {cls: [t["evidence"]["below"]["n"], t["evidence"]["below"]["cold"],  # for the guard's words
                             t["evidence"]["above"]["n"], t["evidence"]["above"]["cold"]]
                       for cls, t in ttl.items() if t is not None}
    doc["generatedAt"] = now
    path = cliff_path()
    try:
        ensure_private_dir(os.path.dirname(path))
        # no fsync: derived data, which the next report writes again (a cold run waited on the disk)
        write_atomic(path, (dumps_spaced(doc) + "\n").encode("utf-8"), mode=0o600, fsync=False)
    except OSError:
        pass  # the guard falls back to the TTL classes


GUARD_LOG_MAX = 64 << 20  # the guard's log read by a report (one line per cold prompt warned: years of them)


def guard_warnings() -> tuple[list[dict[str, Any]], tuple[int, int] | None]:
    """The cold-cache guard's log (one JSON object a line) and its (size, mtime) for the cache key."""
    from session_watcher.base.paths import guard_log_file, open_file

    try:
        fd = open_file(guard_log_file(), follow=False)  # a FIFO there never blocks the report
        try:
            st = os.fstat(fd)
            start = max(0, st.st_size - GUARD_LOG_MAX)  # the newest lines, when it is larger
            data = os.pread(fd, st.st_size - start, start)
        finally:
            os.close(fd)
    except OSError:
        return [], None
    if start:
        data = data[data.find(b"\n") + 1:]  # a line cut by the start is not one
    out = []
    for line in data.splitlines():
        try:
            doc = _guard_line(line)
        except ValueError:
            continue
        if isinstance(doc, dict):
            out.append(doc)
    return out, (st.st_size, st.st_mtime_ns)


def _guard_line(line: bytes) -> Any:
    """One line of the guard's log as `json.loads` reads it: through the C scanner, and `json`
    itself (its imports) only for a line that scanner refuses (a byte-order mark, UTF-16, garbage)."""
    try:
        return fastjson.loads(line)
    except ValueError:
        import json

        return json.loads(line)


def _clock_text(days: str, now: float, utc_offset: float | None) -> bytes:
    """The clock fields as members to add to a cached report's open text (from its `days`)."""
    clock = apply_now({"days": fastjson.loads(days)}, now, utc_offset)
    extra = dumps({k: clock[k] for k in CLOCK_FIELDS})
    return ("," + extra[1:-1]).encode()
