"""The handoffs waiting for a fresh session, one per project, and the ones taken.

`<state dir>/handoffs/pending/<project key>.json` holds the latest handoff written for a project
(`session-watcher handoff`); a new one replaces it. The synchronous SessionStart hook of a fresh
session in that project takes it by renaming it to its claim, `<project key>.json.<pid>.taking`
(`TAKING`), then to `handoffs/taken/<child session id>.json`: a rename is atomic, so of two sessions
starting at once exactly one gets it, and a note is never injected twice. A take killed between the
two renames leaves its claim; the next take puts it back pending (`_untake`), as `handoff --show`
and `--drop` do first (`pending`), and the guard's drop of its own note (`drop`). One whose rename
fails is marked stuck (`STUCK`) and left by the starts after; a file not named as a claim is never
one (`_claim`). A handoff names the
agent whose session wrote it (`agent`, the registry's name): only a session of that agent takes it
(a Codex thread's note waits for the next Codex thread, not for a Claude Code session started there
meanwhile, and the reverse); one written before the field was (no `agent`) is taken by any agent's
session, as then. Still one per project, whichever agent's: a handoff written replaces another
agent's there. Swept by the next write and the next take (`sweep`): a pending handoff older than the
config's `handoff_stale_min` is removed (never injected, it would only keep the hook off its fast
path), and of the taken notes the newest TAKEN_KEEP younger than TAKEN_MAX_AGE are kept; the others
are removed, their child session ids kept in `handoffs/taken.ids` (one a line, the newest
INDEX_MAX), which is all `report` reads of them (`restarts.from_machine`: `taken_ids`); the write's
sweep also removes a temp file of pending or lent older than TMP_MAX_AGE (a write killed midway).
Files 0600 in 0700 folders, like every file of ours.

A handoff taken is lent until its session sends it: `handoffs/lent/<child session id>.json` (the
child's transcript, and the process that ran its hook: the client) is written with the take and
removed by the child's first prompt hook (`sent`: the note goes out with that request). A session
that ends with it still lent (SessionEnd: `give_back`), or whose client is gone without a SessionEnd
(the next session start anywhere: `reclaim`, POSIX only), made no request that carried the note; its
transcript is checked for a call too (a prompt hook that failed), and the handoff goes back pending
for its project, unless a newer one is pending there, it is stale by the usual rule, or it is the
guard's and its session went on since (`_went_on`). A give-back first claims the lent note by
renaming it to `<child id>.json.<pid>.giving`; one killed before its end leaves that claim behind,
and the next start's `reclaim` puts it back as the lent note (`_unclaim`) when its process is gone,
then gives it back as any other: never one a running give-back holds, nor one it linked into
pending before it was killed (the taken note has a second link: pending, or the session's that took it).

Hot path (the SessionStart hook): stdlib `os` and `zlib` (built in), fastjson; nothing else
(`any_pending` first: with nothing pending anywhere, the hook reads one directory and exits).
`build` and `save` make one (the `handoff` command, and the cold-cache guard when it holds a
prompt); what they need is imported when they run.
"""

from __future__ import annotations

from session_watcher.base import paths, sysos

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


VERSION = 1
MAX_LINE = 8 << 20  # a longer transcript line (an image, a huge tool output) holds nothing the note needs
MAX_BYTES = 1 << 20  # a handoff file is a few kB; anything larger is not ours
TAKEN_KEEP = 20  # taken notes kept whole (the latest restarts' notes, to look at)
TAKEN_MAX_AGE = 7 * 86400.0  # seconds a taken note is kept at most
INDEX_MAX = 20_000  # child session ids kept of the swept taken notes
TMP_MAX_AGE = 3600.0  # seconds after which a temp file of a write is one a killed process left


GUARD = "guard"  # `by` of a handoff the cold-cache guard prepared (the `handoff` command's has none)

def folder(kind: str) -> str:
    return sysos.join(paths.state_dir(), "handoffs", kind)


def project_key(project: str) -> str:
    """A file name for a project root: its last characters made safe, and a checksum of the whole."""
    import zlib

    safe = "".join(c if c.isascii() and c.isalnum() else "-" for c in project)[-60:].strip("-") or "root"
    return f"{safe}-{zlib.crc32(project.encode('utf-8', 'surrogatepass')):08x}"


def ours(kind: str) -> bool:
    """Whether `handoffs/<kind>` is a folder of ours (`paths.open_private_dir`): a link there, or
    another user's folder, is never read, swept or written through (a note planted there would reach
    the model's context; a sweep would remove someone's files). Asked once something is found there.
    `handoffs` itself too: through a link there (or a folder others may write) `<kind>` could be a
    real folder of ours when asked and someone's link when read; ours, it is 0700 and stays ours."""
    try:
        sysos.close(paths.open_private_dir(sysos.dirname(folder(kind))))
        sysos.close(paths.open_private_dir(folder(kind)))
    except OSError:
        return False
    return True


def any_pending() -> bool:
    """Whether any project has a handoff waiting (one directory read: the common start has none), or
    a take's claim is there (`TAKING`: one killed midway is put back by the next take). Only a
    regular file (the entry's type, no stat) is a note, as the take reads one (`_read`: a link never
    followed): a folder or a link named `*.json` is never taken, and counted it would send every
    start down the slower path for good. Only a regular file named as a take names its claim is one:
    anything else ending in `.taking` (a folder, a link, another name) is never put back either.
    One no start could put back (`STUCK`) is not counted either, nor any in a folder this process
    may not write (a read-only one: no start can put it back, nor mark it stuck, and each went down
    the slower path to try again, 1.11-1.14x a start's CPU for good; `handoff --show` and `--drop` try it),
    nor a note there: no take can claim it (its rename), and each start went down the slower path too."""
    claims: set[str] = set()
    stuck: set[str] = set()
    try:
        with sysos.scandir(folder("pending")) as it:
            for e in it:
                if e.name.endswith(".json") and e.is_file(follow_symlinks=False):  # a take claims it by a rename
                    return sysos.access(folder("pending"), sysos.W_OK) and ours("pending")
                if e.name.endswith(TAKING) and _claim(e.name) is not None and e.is_file(follow_symlinks=False):
                    claims.add(e.name)
                elif e.name.endswith(STUCK):
                    stuck.add(e.name[:-len(STUCK)])
    except OSError:
        return False
    return bool(claims - stuck) and sysos.access(folder("pending"), sysos.W_OK) and ours("pending")


def _claim(name: str) -> tuple[str, int] | None:
    """(pending note's name, pid) of a take's claim's name, `<project key>.json.<pid>.taking`; None
    for any other name (an ASCII one, a key as `project_key` makes it at most, a pid in digits)."""
    note, _, pid = name[:-len(TAKING)].rpartition(".")
    ok = (name.endswith(TAKING) and note.endswith(".json") and len(note) <= CLAIM_NOTE_MAX and note.isascii()
          and "." not in note[:-len(".json")] and pid.isascii() and pid.isdigit() and len(pid) <= 12)
    return (note, int(pid)) if ok else None


STUCK = ".stuck"  # beside a claim a start could not put back (its rename failed): `<claim's name>.stuck`
CLAIM_NOTE_MAX = 80  # characters of a claimed note's name: a project key is 69 at most, then `.json`


def pending_file(project: str) -> str:
    return sysos.join(folder("pending"), project_key(project) + ".json")


def taken_file(session_id: str) -> str:
    return sysos.join(folder("taken"), session_id + ".json")


def write_pending(doc: dict[str, Any], max_age_s: float | None = None) -> str:
    """Save a handoff as its project's pending one (replacing an earlier one), then sweep (stale
    pending handoffs: older than `max_age_s`); returns the path."""
    from session_watcher.base.atomic import write_atomic
    from session_watcher.core.fastjson import dumps

    path = pending_file(doc["project"])
    paths.ensure_private_dir(sysos.dirname(sysos.dirname(path)))
    paths.ensure_private_dir(sysos.dirname(path))
    replaced = _read(path)
    write_atomic(path, (dumps({"version": VERSION, **doc}) + "\n").encode("utf-8"), mode=0o600)
    if replaced is not None and replaced.get("parentSession") != doc.get("parentSession"):
        forget(replaced)  # another session's: its own (re-made by its guard) is its hook's to record
    sweep(float(doc.get("createdAt") or 0), max_age_s, keep=path)
    return path


def _files(kind: str, suffix: str = ".json") -> list[tuple[float, str]]:
    """(mtime, path) of the regular `.json` (`suffix`) files of a folder of ours (`ours`; never a
    link's target)."""
    out: list[tuple[float, str]] = []
    if not ours(kind):
        return out
    try:
        with sysos.scandir(folder(kind)) as it:
            for e in it:
                if e.name.endswith(suffix) and e.is_file(follow_symlinks=False):
                    out.append((e.stat(follow_symlinks=False).st_mtime, e.path))
    except OSError:
        pass
    return out


def sweep(now: float, max_age_s: float | None, keep: str = "", taken_too: bool = True) -> None:
    """Remove the pending handoffs older than `max_age_s` (None: leave them) but `keep`, and (with
    `taken_too`) the taken notes but the newest TAKEN_KEEP younger than TAKEN_MAX_AGE (their ids go
    to the index) and the temp files older than TMP_MAX_AGE."""
    if max_age_s is not None:
        for mtime, path in _files("pending"):
            if path != keep and now - mtime > max_age_s:
                _unlink(path)
    if not taken_too:  # the start's: nothing more on the hook the client waits for
        return
    for kind in ("pending", "lent"):  # a temp file a killed write left (write_pending's, _lend's)
        for mtime, path in _files(kind, ".tmp"):
            if now - mtime > TMP_MAX_AGE:
                _unlink(path)
    taken_notes = sorted(_files("taken"), reverse=True)  # the newest first
    old = [path for i, (mtime, path) in enumerate(taken_notes) if i >= TAKEN_KEEP or now - mtime > TAKEN_MAX_AGE]
    if old and _remember([sysos.basename(p)[:-len(".json")] for p in old]):
        for path in old:
            _unlink(path)


def _unlink(path: str) -> None:
    try:
        sysos.unlink(path)
    except OSError:
        pass


def index_file() -> str:
    return sysos.join(sysos.dirname(folder("taken")), "taken.ids")


def taken_ids() -> list[str]:
    """The child session ids of every handoff taken on this machine: the notes kept and the index."""
    from session_watcher.state.store import valid_session_id

    ids = [sysos.basename(p)[:-len(".json")] for _, p in _files("taken")]
    try:
        data = paths.read_file(index_file(), 64 * INDEX_MAX, follow=False)
    except OSError:
        data = b""
    ids += data.decode("ascii", "replace").split()
    return sorted({i for i in ids if valid_session_id(i)})


def _remember(ids: list[str]) -> bool:
    """Add swept notes' ids to the index (the newest INDEX_MAX kept); False when it cannot be written
    (the notes then stay, for the next sweep)."""
    from session_watcher.base.atomic import write_atomic

    try:
        data = paths.read_file(index_file(), 64 * INDEX_MAX, follow=False)
    except FileNotFoundError:
        data = b""
    except OSError:
        return False
    known = data.decode("ascii", "replace").split()
    lines = list(dict.fromkeys([*known, *ids]))[-INDEX_MAX:]
    try:
        write_atomic(index_file(), ("\n".join(lines) + "\n").encode("ascii", "replace"), mode=0o600)
    except OSError:
        return False
    return True


def _read(path: str) -> dict[str, Any] | None:
    from session_watcher.core.fastjson import loads

    try:  # a regular file of MAX_BYTES at most (paths.read_file: a FIFO there never blocks)
        data = paths.read_file(path, MAX_BYTES, follow=False)
    except OSError:
        return None
    try:
        doc = loads(data)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and doc.get("version") == VERSION else None


def waits_for(doc: dict[str, Any] | None) -> str | None:
    """The agent whose session a handoff waits for (the one that wrote it); None: any agent's (a
    note written before it was named)."""
    agent = doc.get("agent") if doc is not None else None
    return agent if isinstance(agent, str) and agent else None


def usable(doc: dict[str, Any] | None, project: str, child: str, now: float, max_age_s: float,
           agent: str | None = None) -> bool:
    """A pending handoff this fresh session may take: for its project, not its own, not stale, and
    (`agent`: the session's agent) one that waits for that agent's session or any agent's."""
    if doc is None or doc.get("project") != project or doc.get("parentSession") == child:
        return False
    if agent is not None and waits_for(doc) not in (None, agent):
        return False
    created, note = doc.get("createdAt"), doc.get("note")
    if not isinstance(created, int | float) or isinstance(created, bool) or not isinstance(note, str) or not note:
        return False
    return 0 <= now - created <= max_age_s if -1e12 < created < 1e12 else False  # 10**400: no float


def take(project: str, child: str, now: float, max_age_s: Callable[[], float],  # noqa: PLR0913, PLR0917
         transcript: str | None = None, client: int | None = None, agent: str | None = None,
         ) -> dict[str, Any] | None:  # the starting session's facts, each the hook's
    """The project's pending handoff, now taken by session `child` of `agent` (None: any agent's
    note); None when there is none it may take (another agent's stays pending). `max_age_s` is
    asked only when a handoff is pending (it reads the config). It sweeps the
    stale pending handoffs, never the taken notes: the next write does (each take needs one), so the
    index's rewrite stays off the hook the client waits for, and at most TAKEN_KEEP + 1 notes are
    kept meanwhile."""
    path = pending_file(project)
    if not ours("pending"):
        return None
    _untake(now)
    if not sysos.exists(path):  # another project's is pending (any_pending): stale ones go
        sweep(now, max_age_s(), taken_too=False)
        return None
    doc = _read(path)
    if not usable(doc, project, child, now, max_age_s(), agent):
        sweep(now, max_age_s(), taken_too=False)  # a stale one (this project's or another's) goes: the fast path again
        return None
    dest = taken_file(child)
    claim = f"{path}.{sysos.getpid()}{TAKING}"
    try:
        paths.ensure_private_dir(sysos.dirname(dest))
        sysos.rename(path, claim)  # atomic: one session takes it, once
    except OSError:
        return None  # another session took it first (or the folder is not ours)
    doc = _read(claim)  # what was taken: a newer handoff may have replaced the one read above
    if agent is not None and waits_for(doc) not in (None, agent):  # another agent's, written meanwhile:
        _put_back(claim, path)  # pending again as it was (its age kept), unless a newer one is there
        doc = None
    else:
        try:
            sysos.rename(claim, dest)  # this session's
        except OSError:
            _put_back(claim, path)
            doc = None
        else:
            try:
                sysos.utime(dest, (now, now))  # taken now: the sweep keeps the newest taken notes
            except OSError:
                pass
            forget(doc)
    sweep(now, max_age_s(), taken_too=False)
    if not usable(doc, project, child, now, max_age_s(), agent):
        return None
    _lend(child, transcript, client)
    return doc


TAKING = ".taking"  # a pending note claimed by a take: `pending/<project key>.json.<pid>.taking`


def _put_back(claim: str, path: str) -> None:
    """A take's claim pending again at `path` (linked: never over a newer handoff pending there,
    which stays; the claim's age kept), then the claim gone."""
    try:
        sysos.link(claim, path)
    except OSError:
        pass
    _unlink(claim)


def _untake(now: float, retry: bool = False) -> None:
    """Each claim a take left behind (`<project key>.json.<pid>.taking`: killed between its rename of
    the pending note and its end, before the note was the session's or, another agent's, was put
    back: it stayed taken for good, no session's) pending again, where the process that claimed it is
    gone or the claim is older than GIVING_MAX_S; a take under way keeps its own. Claimed again
    first (renamed to this process's claim: of two starts at once one puts it back); one with a
    second link was put back already (killed after the link: pending, or a session's since): it
    just goes. One whose rename fails but for its being gone (made immutable, a folder where this
    process's claim goes) is marked stuck (`STUCK`): starts leave it and `any_pending` does not count
    it (or every start went down the slower path for good); `retry` (`handoff --show`, `--drop`, the
    guard's drop) tries it again, and the mark goes with it once put back. A mark whose claim is gone goes."""
    try:
        with sysos.scandir(folder("pending")) as it:
            entries = [(e.name, e) for e in it if e.name.endswith((TAKING, STUCK))]
    except OSError:
        return
    names = {name for name, _ in entries}
    for name, e in entries:
        if name.endswith(STUCK):  # a mark of ours (a claim's name, `.stuck`) whose claim is gone goes
            if _claim(name[:-len(STUCK)]) is not None and name[:-len(STUCK)] not in names:
                _unlink(e.path)
            continue
        named = _claim(name)
        if named is None or not e.is_file(follow_symlinks=False):
            continue  # not a claim of ours (any_pending does not count it)
        marked = name + STUCK in names
        if marked and not retry:
            continue
        note, n = named
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue  # gone: its take ended
        if now - st.st_ctime < GIVING_MAX_S and n != sysos.getpid() and 1 < n < PID_END and _running(n):
            continue  # a take under way (this process's own is none: it takes after this)
        mine = sysos.join(folder("pending"), f"{note}.{sysos.getpid()}{TAKING}")
        try:
            sysos.rename(e.path, mine)
        except FileNotFoundError:
            continue  # another start has it
        except OSError:
            if not marked:
                _mark_stuck(e.path + STUCK)
            continue
        if marked:
            _unlink(e.path + STUCK)
        try:
            linked = sysos.stat(mine, follow_symlinks=False).st_nlink > 1
        except OSError:
            continue  # another start has it
        if linked:
            _unlink(mine)
        else:
            _put_back(mine, sysos.join(folder("pending"), note))


def _mark_stuck(path: str) -> None:
    """An empty file at `path`, made here (never through a link there), or nothing."""
    try:
        sysos.close(sysos.open(path, sysos.O_WRONLY | sysos.O_CREAT | sysos.O_EXCL | getattr(sysos, "O_NOFOLLOW", 0),
                               0o600))
    except OSError:
        pass


GIVING = ".giving"  # a lent note claimed by a give-back: `<child id>.json.<pid>.giving`
GIVING_MAX_S = 600.0  # a claim older than this is no give-back's (one takes milliseconds): its pid may be another's


def lent_file(session_id: str) -> str:
    return sysos.join(folder("lent"), session_id + ".json")


def any_lent() -> bool:
    """Whether a handoff taken is not sent yet (one directory read, most often of no directory): a
    regular file (the entry's type, no stat), never a folder or link there, which `reclaim` skips."""
    try:
        with sysos.scandir(folder("lent")) as it:
            found = any(e.name.endswith((".json", GIVING)) and e.is_file(follow_symlinks=False) for e in it)
    except OSError:
        return False
    return found and ours("lent")


def _lend(child: str, transcript: str | None, client: int | None) -> None:
    """Note the handoff `child` took as lent (written whole, then renamed: never read half made)."""
    from session_watcher.core.fastjson import dumps

    path = lent_file(child)
    tmp = f"{path}.{sysos.getpid()}.tmp"
    try:
        paths.ensure_private_dir(sysos.dirname(path))
        fd = sysos.open(tmp, sysos.O_WRONLY | sysos.O_CREAT | sysos.O_EXCL | getattr(sysos, "O_NOFOLLOW", 0), 0o600)
        try:
            sysos.write(fd, dumps({"version": VERSION, "transcript": transcript, "client": client,
                                "clientStart": None if client is None else started(client)}).encode("utf-8"))
        finally:
            sysos.close(fd)
        sysos.replace(tmp, path)
    except OSError:
        _unlink(tmp)  # not noted: the handoff stays taken, as before lending was noted


def sent(session_id: str) -> None:
    """Session `session_id` sends its first request: a handoff it took goes out with it (the prompt hook;
    a stat at every other prompt)."""
    path = lent_file(session_id)
    if sysos.lexists(path) and ours("lent"):  # never a file of that name where a linked folder points
        _unlink(path)


MAX_SCAN = 4 << 20  # bytes of a transcript read for a call; a longer one has made calls


def _made_a_call(transcript: object) -> bool:
    """Whether a transcript (Claude Code's, or a Codex rollout) records an API call: a usage line."""
    if not isinstance(transcript, str) or not transcript:
        return False
    try:
        data = paths.read_file(transcript, MAX_SCAN, follow=False)
    except FileNotFoundError:
        return False  # never written: no request was made
    except OSError:
        return True  # too long, or not a file to read: not known to be unused, so it stays taken
    return b'"usage"' in data or b'"token_count"' in data


def _went_on(doc: dict[str, Any] | None) -> bool:
    """Whether the session a guard's handoff (`by` GUARD) was prepared for has made a call since: the
    user went on there, so it is dropped (as the prompt hook drops it while pending), not given back.
    Its state's last call, read as is (no lock); unreadable: not known to have gone on."""
    if doc is None or doc.get("by") != GUARD:
        return False
    from session_watcher.core.errors import WatcherError
    from session_watcher.state import store

    parent, created = doc.get("parentSession"), doc.get("createdAt")
    if not store.valid_session_id(parent) or not isinstance(created, int | float):
        return False
    try:
        state = store.load(store.session_file(parent), parent, readonly=True)
    except (WatcherError, OSError, ValueError):
        return False
    last = state["engine"].get("lastTs") if state is not None else None
    return isinstance(last, int | float) and not isinstance(last, bool) and last > created


def give_back(child: str, now: float, max_age_s: Callable[[str], float]) -> bool:
    """The handoff session `child` took and never sent, pending again for its project (True), unless
    a newer one is pending there, it is stale (`max_age_s(project)`), or the transcript shows a call;
    the lent note goes either way. Hard-linked into place: a newer pending handoff is never replaced.
    The lent note is claimed first (renamed aside: atomic), so of two processes giving the same one
    back (a SessionEnd, the next starts' `reclaim`) one does: never pending twice, taken twice."""
    lent = f"{lent_file(child)}.{sysos.getpid()}.giving"
    if not ours("lent"):
        return False
    try:
        sysos.rename(lent_file(child), lent)
    except OSError:
        return False  # sent, or another process gives it back
    info = _read(lent)
    if info is None:
        _unlink(lent)
        return False
    dest = taken_file(child)
    try:
        linked = sysos.stat(dest, follow_symlinks=False).st_nlink > 1
    except OSError:
        linked = False
    if linked:  # given back already: a give-back killed after its link into pending (`_unclaim` put its
        _unlink(dest)  # claim back), pending since or taken by another session (a rename keeps the link)
        _unlink(lent)
        return False
    doc = _read(dest)
    project = doc.get("project") if doc is not None else None
    ok = (isinstance(project, str) and not _made_a_call(info.get("transcript"))
          and usable(doc, project, "", now, max_age_s(project)) and not _went_on(doc))
    back = False
    if ok and isinstance(project, str) and doc is not None:
        path = pending_file(project)
        created = float(doc["createdAt"])
        try:  # pending since it was written: the sweep's age, set before the link, while the inode is this
            # claim's alone. Once linked it may be another's: after a stop (SIGSTOP) a session took it (its
            # taken note, whose age the take set), or, past GIVING_MAX_S, another start gave the claim back
            # and the pending file is a newer handoff
            was: sysos.stat_result | None = sysos.stat(dest, follow_symlinks=False)
            sysos.utime(dest, (created, created), follow_symlinks=False)
        except OSError:
            was = None
        try:
            paths.ensure_private_dir(sysos.dirname(path))
            sysos.link(dest, path)  # FileExistsError: a newer handoff is pending, and stays
            back = True
        except OSError:
            pass
        if back:
            _unlink(dest)
        elif was is not None:  # still this session's taken note: its own age again
            try:
                sysos.utime(dest, ns=(was.st_atime_ns, was.st_mtime_ns), follow_symlinks=False)
            except OSError:
                pass
    _unlink(lent)
    return back


def reclaim(now: float, max_age_s: Callable[[str], float]) -> None:
    """Give back (`give_back`) each handoff lent to a session whose client has exited: it ended
    without its SessionEnd hook (a closed terminal, a SessionEnd past its budget) or has none
    (Codex). A client still running keeps it: its next prompt may send it. POSIX only (Windows: the
    SessionEnd hook alone)."""
    if sysos.name != "posix":
        return
    _unclaim(now)
    for _, path in _files("lent"):
        child = sysos.basename(path)[:-len(".json")]
        info = _read(path)
        client = info.get("client") if info is not None else None
        if info is None or (isinstance(client, int) and not isinstance(client, bool) and 1 < client < PID_END
                            and not _running(client, info.get("clientStart"))):
            give_back(child, now, max_age_s)
            continue
        doc = _read(taken_file(child))  # still lent: kept while it could still be given back
        project = doc.get("project") if doc is not None else None
        if not isinstance(project, str) or not usable(doc, project, "", now, max_age_s(project)):
            _unlink(path)


PID_END = 1 << 31  # a pid is a C int: past it no process (os.kill would overflow), its client unknown


def _unclaim(now: float) -> None:
    """Each claim a give-back left behind (`<child id>.json.<pid>.giving`: killed between its claim
    and its end, the handoff stayed taken for good) back as the lent note, for `reclaim` to give back
    as usual: only where the process that claimed it is gone, or the claim is older than GIVING_MAX_S
    (its pid another process's since; the rename that claimed it set its ctime). A claim a running
    give-back holds is its own: left alone. Where the lent note is there again (another start put
    it back first), the claim just goes."""
    try:
        with sysos.scandir(folder("lent")) as it:
            claims = [e for e in it if e.name.endswith(GIVING) and e.is_file(follow_symlinks=False)]
    except OSError:
        return
    if claims and not ours("lent"):  # never linked into a folder that is not ours
        return
    for e in claims:
        note, _, pid = e.name[:-len(GIVING)].rpartition(".")
        if not note.endswith(".json") or not pid.isdigit():
            continue  # not a claim of ours
        try:
            age = now - e.stat(follow_symlinks=False).st_ctime
        except OSError:
            continue  # gone: its give-back ended
        n = int(pid)
        if age < GIVING_MAX_S and n != sysos.getpid() and 1 < n < PID_END and _running(n):
            continue  # a give-back under way
        try:
            sysos.link(e.path, sysos.join(folder("lent"), note))  # never over a lent note there
        except OSError:
            pass
        _unlink(e.path)


# a process the client runs its hook command through, which waits for the hook and ends with it
SHELLS = frozenset({"sh", "dash", "bash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "tcsh", "csh"})


def client() -> int:
    """The client this hook runs for: its parent, or, where /proc tells, the first ancestor that is
    not a shell (a client that runs the hook command through a shell that does not exec it: fish,
    an older dash, a wrapper; that shell is gone with the hook, its client is not). Four steps at most."""
    pid = sysos.getppid()
    for _ in range(4):
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                stat = fh.read(4096)
        except OSError:
            return pid  # no /proc (macOS, Windows): the parent
        comm, _, rest = stat.rpartition(b")")
        name = comm.partition(b"(")[2].decode("utf-8", "replace")
        fields = rest.split()
        if name not in SHELLS or len(fields) < 2 or not fields[1].isdigit() or int(fields[1]) <= 1:
            return pid
        pid = int(fields[1])
    return pid


def started(pid: int) -> str | None:
    """When process `pid` started (Linux: /proc's start time, in clock ticks since boot), which tells
    the client from another process given its pid once it exited; None where /proc does not tell."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read(4096)
    except OSError:
        return None
    fields = stat.rpartition(b")")[2].split()
    return fields[19].decode("ascii", "replace") if len(fields) > 19 else None


def _running(pid: int, start: object = None) -> bool:
    """Whether the client `pid` still runs: the same process, when its start time was noted."""
    if isinstance(start, str) and start != (started(pid) or start):
        return False  # the pid is another process's now
    try:
        sysos.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # another user's process, or not ours to ask: taken to be running
    return True


def taken(session_id: str) -> dict[str, Any] | None:
    """The handoff session `session_id` received, if it received one on this machine."""
    return _read(taken_file(session_id))


def drop(project: str, parent: str, by: str) -> bool:
    """Remove the project's pending handoff when session `parent` wrote it by way of `by` (the guard's,
    once the session goes on instead); True when one was removed. One of them taken by a session
    that has not sent it yet is no longer lent (`give_back` would make it pending again). Not
    pending, it may be held by a claim a take killed midway left (`TAKING`), which the next start
    would put back and hand out: such a claim is put back first (`_untake`), then dropped as any.
    Looked for only when no note is pending (one directory read; most often none is there)."""
    _keep_lent(parent, by)
    path = pending_file(project)
    if not sysos.exists(path):
        if not _claimed(path) or not ours("pending"):
            return False
        import time

        _untake(time.time(), retry=True)  # a dead claim pending again (a live take's stays: that take has it)
    if not sysos.exists(path) or not ours("pending"):
        return False
    doc = _read(path)
    if doc is None or doc.get("parentSession") != parent or doc.get("by") != by:
        return False
    try:
        sysos.unlink(path)
    except OSError:
        return False
    return True


def _claimed(path: str) -> bool:
    """Whether a take's claim of the pending note `path` is there (`<path>.<pid>.taking`)."""
    head = sysos.basename(path) + "."
    try:
        with sysos.scandir(sysos.dirname(path)) as it:
            return any(e.name.startswith(head) and e.name.endswith(TAKING) for e in it)
    except OSError:
        return False


def _keep_lent(parent: str, by: str) -> None:
    """The lent notes of the handoffs session `parent` wrote by way of `by` go: taken, they stay with
    the session that took them, never given back (most often no lent folder: one failed scandir)."""
    for _, path in _files("lent"):
        doc = _read(taken_file(sysos.basename(path)[:-len(".json")]))
        if doc is not None and doc.get("parentSession") == parent and doc.get("by") == by:
            _unlink(path)


def pending(project: str | None) -> list[tuple[str, dict[str, Any]]]:
    """(file, handoff) of the project's waiting handoff, or of every project's when `project` is None.
    Raises `paths.NotOurs` when the folder is a link or another user's (`handoff --show`, `--drop`
    say so rather than show or remove what is there). A claim a take killed midway left is pending
    again first (`_untake`, as the next start would put it back): not shown, it was not dropped, and
    that start gave it to a session after `handoff --drop` said none was waiting."""
    try:
        for path in (sysos.dirname(folder("pending")), folder("pending")):  # as `ours` asks
            sysos.close(paths.open_private_dir(path))
    except FileNotFoundError:
        return []
    import time

    _untake(time.time(), retry=True)
    if project is not None:
        path = pending_file(project)
        doc = _read(path)
        return [(path, doc)] if doc is not None else []
    try:
        names = sorted(e.name for e in sysos.scandir(folder("pending")) if e.name.endswith(".json"))
    except OSError:
        return []
    found = [(p, _read(p)) for p in (sysos.join(folder("pending"), n) for n in names)]
    return [(p, d) for p, d in found if d is not None]


def drop_file(path: str) -> None:
    """Remove a waiting handoff by its file (`handoff --drop`; gone already: nothing to do)."""
    doc = _read(path)
    try:
        sysos.unlink(path)
    except FileNotFoundError:
        return
    forget(doc)


def forget(doc: dict[str, Any] | None) -> None:
    """A handoff the guard prepared (`by` GUARD) is taken, dropped or replaced: the record of it in
    its session's state (`guard.carry`, by which the status line and `status` price that session's
    restart while it is pending: core.eoq.prepared) goes, if that session's lock is free at once.
    Otherwise the record stays until the session's next call or cold prompt, or its end by /clear
    (hooks.run), or until it goes stale: a restart priced a little low meanwhile, never a hang."""
    if doc is None or doc.get("by") != GUARD or not isinstance(parent := doc.get("parentSession"), str):
        return
    from session_watcher.core.errors import LockTimeout, WatcherError
    from session_watcher.state import shell, store

    if not store.valid_session_id(parent) or not sysos.exists(store.session_file(parent)):
        return
    try:
        with shell.open_session(parent, 0) as opened:
            mark = opened.state.get("guard") or {}
            carry = mark.get("carry")
            if isinstance(carry, dict) and carry.get("createdAt") == doc.get("createdAt"):
                del mark["carry"]
                opened.save()
    except (LockTimeout, WatcherError, OSError):
        pass
