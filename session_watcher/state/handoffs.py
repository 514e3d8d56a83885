"""The handoffs waiting for a fresh session, one per project, and the ones taken.

`<state dir>/handoffs/pending/<project key>.json` holds the latest handoff written for a project
(`session-watcher handoff`); a new one replaces it. The synchronous SessionStart hook of a fresh
session in that project takes it by renaming it to `handoffs/taken/<child session id>.json`: a
rename is atomic, so of two sessions starting at once exactly one gets it, and a note is never
injected twice. A handoff older than the config's `handoff_stale_min` is left where it is (and
swept by the next write). Files 0600 in 0700 folders, like every file of ours.

Hot path (the SessionStart hook): stdlib `os` and `zlib` (built in), fastjson; nothing else
(`any_pending` first: with nothing pending anywhere, the hook reads one directory and exits).
`build` and `save` make one (the `handoff` command, and the cold-cache guard when it holds a
prompt); what they need is imported when they run.
"""

from __future__ import annotations

import os

from session_watcher import paths

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from session_watcher.core import handoff as core
    from session_watcher.core.shapes import Config, State

VERSION = 1
MAX_LINE = 8 << 20  # a longer transcript line (an image, a huge tool output) holds nothing the note needs
MAX_BYTES = 1 << 20  # a handoff file is a few kB; anything larger is not ours


def folder(kind: str) -> str:
    return os.path.join(paths.state_dir(), "handoffs", kind)


def project_key(project: str) -> str:
    """A file name for a project root: its last characters made safe, and a checksum of the whole."""
    import zlib

    safe = "".join(c if c.isascii() and c.isalnum() else "-" for c in project)[-60:].strip("-") or "root"
    return f"{safe}-{zlib.crc32(project.encode('utf-8', 'surrogatepass')):08x}"


def any_pending() -> bool:
    """Whether any project has a handoff waiting (one directory read: the common start has none)."""
    try:
        with os.scandir(folder("pending")) as it:
            return any(e.name.endswith(".json") for e in it)
    except OSError:
        return False


def pending_file(project: str) -> str:
    return os.path.join(folder("pending"), project_key(project) + ".json")


def taken_file(session_id: str) -> str:
    return os.path.join(folder("taken"), session_id + ".json")


def write_pending(doc: dict[str, Any]) -> str:
    """Save a handoff as its project's pending one (replacing an earlier one); returns the path."""
    from session_watcher.core.fastjson import dumps
    from session_watcher.state.atomic import write_atomic

    path = pending_file(doc["project"])
    paths.ensure_private_dir(os.path.dirname(os.path.dirname(path)))
    paths.ensure_private_dir(os.path.dirname(path))
    write_atomic(path, (dumps({"version": VERSION, **doc}) + "\n").encode("utf-8"), mode=0o600)
    return path


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


def usable(doc: dict[str, Any] | None, project: str, child: str, now: float, max_age_s: float) -> bool:
    """A pending handoff this fresh session may take: for its project, not its own, not stale."""
    if doc is None or doc.get("project") != project or doc.get("parentSession") == child:
        return False
    created, note = doc.get("createdAt"), doc.get("note")
    if not isinstance(created, int | float) or isinstance(created, bool) or not isinstance(note, str) or not note:
        return False
    return 0 <= now - created <= max_age_s


def take(project: str, child: str, now: float, max_age_s: Callable[[], float]) -> dict[str, Any] | None:
    """The project's pending handoff, now taken by session `child`; None when there is none it may
    take. `max_age_s` is asked only when a handoff is pending (it reads the config)."""
    path = pending_file(project)
    if not os.path.exists(path):
        return None
    doc = _read(path)
    if not usable(doc, project, child, now, max_age_s()):
        return None
    dest = taken_file(child)
    try:
        paths.ensure_private_dir(os.path.dirname(dest))
        os.rename(path, dest)  # atomic: one session takes it, once
    except OSError:
        return None  # another session took it first (or the folder is not ours)
    doc = _read(dest)  # what was taken: a newer handoff may have replaced the one read above
    return doc if usable(doc, project, child, now, max_age_s()) else None


def taken(session_id: str) -> dict[str, Any] | None:
    """The handoff session `session_id` received, if it received one on this machine."""
    return _read(taken_file(session_id))


def drop(project: str, parent: str, by: str) -> bool:
    """Remove the project's pending handoff when session `parent` wrote it by way of `by` (the guard's,
    once the session goes on instead); True when one was removed."""
    path = pending_file(project)
    if not os.path.exists(path):
        return False
    doc = _read(path)
    if doc is None or doc.get("parentSession") != parent or doc.get("by") != by:
        return False
    try:
        os.unlink(path)
    except OSError:
        return False
    return True


# ----------------------------------------------------------------------------- making one

def digest(transcript: str | None) -> core.Digest:
    """The transcript read once, in order, into a Digest (a missing transcript gives an empty one)."""
    from session_watcher.core import handoff as core
    from session_watcher.core.fastjson import loads

    d = core.Digest()
    if not transcript:
        return d
    from session_watcher.state.reader import lines_of

    try:
        for line in lines_of(transcript, MAX_LINE):  # a missing or unreadable file: what was read
            try:
                rec = loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                d.add(rec)
    except OSError:
        pass
    return d


def build(state: State, cfg: Config, now: float) -> dict[str, Any]:
    """The handoff document of a session state (brought up to date by the caller)."""
    import time

    from session_watcher.core import handoff as core
    from session_watcher.core.eoq import quantities
    from session_watcher.errors import UserError

    q = quantities(state, cfg)
    if not q.get("bDefault"):
        raise UserError(f"session {state['sessionId']} has no API call yet: nothing to hand off")
    cursor = state.get("cursor") or {}
    d = digest(cursor.get("path"))
    root = state["context"].get("project")
    file_list = core.files(state)
    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now))
    # the note's price includes the note, whose first line says the price: until the two agree
    note = core.compose(d, file_list, root, core.header(state["sessionId"], written, 0, 0.0))
    priced = core.price(state, q, core.note_tokens(note, state))
    for _ in range(4):
        note = core.compose(d, file_list, root, core.header(state["sessionId"], written, priced["carryTokens"],
                                                              priced["carryUsd"]))
        again = core.price(state, q, core.note_tokens(note, state))
        if again == priced:
            break
        priced = again
    return {"sessionId": state["sessionId"], "project": root, "createdAt": now, "note": note, "files": file_list,
            **priced}


def save(doc: dict[str, Any], by: str | None = None) -> str:
    """Save a handoff document (`build`'s) as its project's pending one; `by`: who prepared it when
    not the `handoff` command (the guard's is dropped if the session goes on instead). Its path."""
    pending = {"parentSession": doc["sessionId"], **{k: v for k, v in doc.items() if k != "sessionId"}}
    if by is not None:
        pending["by"] = by
    return write_pending(pending)
