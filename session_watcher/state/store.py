"""The per-session state file: load, validate, quarantine, save.

`<state dir>/sessions/<session_id>.json`, 0600 in a 0700 folder, written atomically under the
session lock. A file that is not a state document of this schema (truncated, garbage, the wrong
shape, a newer schema, a symlink) is moved to the quarantine folder and the caller rebuilds from the
transcript, which is the durable log.
"""

from __future__ import annotations

import os

from session_watcher.base import paths
from session_watcher.core import fastjson
from session_watcher.core.errors import NotAFile, StateRejected, StateTooLarge, TooLarge

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from typing import TypeGuard

    from session_watcher.core.shapes import State
    from session_watcher.state.pathstore import PathShards


MAX_STATE_BYTES = 64 << 20  # the one limit: `load` reads no larger file and `save` writes none


def session_file(session_id: str) -> str:
    return os.path.join(paths.sessions_dir(), f"{session_id}.json")


def valid_session_id(value: object) -> TypeGuard[str]:
    return (isinstance(value, str) and 0 < len(value) <= 128 and value[0] != "."
            and all(c.isascii() and (c.isalnum() or c in "-_.") for c in value))


def _shape_ok(doc: object, session_id: str) -> bool:
    from session_watcher.core.fresh import SCHEMA, new_engine, new_state, new_tally

    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("sessionId") != session_id:
        return False
    ref = new_state(session_id)
    for key, value in ref.items():
        if key not in doc or (value is not None and type(doc[key]) is not type(value)):
            return False
    engine, h = doc["engine"], doc["health"]
    head = h.get("head")
    tally = engine.get("tally")
    return (set(new_engine()) <= set(engine) and isinstance(tally, dict) and set(new_tally()) <= set(tally)
            and all(isinstance(doc["meter"].get(k), dict) for k in ("main", "sub", "recent"))
            and isinstance(doc["tools"].get("done"), dict) and isinstance(doc["tools"].get("pending"), dict)
            and isinstance(h.get("tail"), str) and isinstance(head, list) and len(head) == 3
            and all(type(n) is int for n in head)
            and all(isinstance(a, dict) for a in doc["alerts"]))  # each read as an object (hooks.run)


def quarantine(path: str, why: str) -> str:
    """Move `path` (the link itself if it is one) aside; returns where it went."""
    return paths.move_aside(path, why)


def load(path: str, session_id: str, readonly: bool = False) -> State | None:
    """The state, or None when there is none yet. Raises StateRejected after quarantining a bad one
    (`readonly`: without moving it)."""
    def quarantine(path: str, why: str) -> str:
        return f"{path} ({why}; left in place)" if readonly else paths.move_aside(path, why)

    try:
        data = paths.read_file(path, MAX_STATE_BYTES, follow=False)
    except FileNotFoundError:
        return None
    except NotAFile as exc:  # a symlink, FIFO, socket or device planted where the state belongs
        raise StateRejected(quarantine(path, exc.kind)) from None
    except TooLarge:  # never saved so (`save` keeps to the same limit): not ours to read
        raise StateRejected(quarantine(path, "too-large")) from None
    # a new state's schema and parts: not imported by a caller that only checks a session id
    from session_watcher.core.fresh import SCHEMA

    try:
        doc = fastjson.loads(data)
    except ValueError:
        raise StateRejected(quarantine(path, "corrupt")) from None
    if isinstance(doc, dict) and isinstance(doc.get("schema"), int) and doc["schema"] > SCHEMA:
        raise StateRejected(quarantine(path, f"schema{doc['schema']}"))
    if isinstance(doc, dict) and isinstance(doc.get("schema"), int) and doc["schema"] < SCHEMA:
        from session_watcher.state.migrate import migrate  # an older version's state: once a session

        migrated = migrate(doc, session_id)
        if migrated is not None:
            doc = migrated
    if not _shape_ok(doc, session_id):
        raise StateRejected(quarantine(path, "shape"))
    return doc  # type: ignore[no-any-return]


def save(path: str, state: State, shards: PathShards | None = None) -> None:
    """Write the state (and, with `shards`, the changed path-map shards first). Callers hold the lock.
    A state that named no shard file before this write (a new one, or one started again from its
    transcript: quarantined, rebuilt, upgraded) then deletes the shard files it does not name, those
    of the state before it; so does every 64th revision (what a killed writer left)."""
    from session_watcher.base.atomic import write_atomic

    named = bool(state["shards"])
    if shards is not None:
        main, superseded = shards.save(state)  # refuses a shard over its limit before writing any
    else:
        main, superseded = state, []
    data = encode(main)
    if len(data) > MAX_STATE_BYTES:
        raise StateTooLarge(f"{path}: the state would be {len(data):,} bytes, over the {MAX_STATE_BYTES:,} "
                            "a state may have; not saved")
    # one fixed temp name: a writer killed mid-write leaves at most one behind. No fsync: the state
    # is rebuilt from the transcript when a power cut leaves it (or a shard) torn, and an fsync per
    # hook run was most of a hook's own time
    write_atomic(path, data, fsync=False, tmp=path + ".tmp")
    for old in superseded:
        try:
            os.unlink(old)
        except OSError:
            pass
    if shards is not None and (not named or not state["shards"] or state["rev"] % 64 == 0):
        shards.sweep(state)


def encode(doc: object) -> bytes:
    """A state document as saved. A number JSON cannot hold (NaN, an infinity: no input brings one,
    `fastjson.load_payload` sees to the payloads) is saved as null rather than losing the save."""
    try:
        return fastjson.dumps(doc).encode("ascii")
    except ValueError:
        return fastjson.dumps(_finite(doc)).encode("ascii")


def _finite(v: object) -> object:
    if isinstance(v, float):
        return v if v - v == 0.0 else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, list | tuple):
        return [_finite(x) for x in v]
    return v


def load_full(path: str, session_id: str, readonly: bool = False) -> State | None:
    """The state with its whole path map (for `status` and tests; hooks load shards as needed)."""
    state = load(path, session_id, readonly)
    if state is not None:
        from session_watcher.state.pathstore import PathShards  # the map's shards: not the status line's

        PathShards(path).ensure_all(state)
    return state


def check_folder() -> bool:
    """True when the sessions folder exists and is ours; raises `paths.NotOurs` when it is a link
    or another user's (its files are then nobody's to read or write)."""
    try:
        os.close(paths.open_private_dir(paths.sessions_dir()))
    except FileNotFoundError:
        return False
    return True


def list_sessions() -> list[tuple[float, str]]:
    """(mtime, session id) of every state file, newest first. Raises `paths.NotOurs` (see above)."""
    out = []
    try:
        fd = paths.open_private_dir(paths.sessions_dir())
    except FileNotFoundError:
        return []
    try:
        with os.scandir(fd) as it:
            for de in it:
                if de.name.endswith(".json") and de.is_file(follow_symlinks=False):
                    out.append((de.stat(follow_symlinks=False).st_mtime, de.name[:-5]))
    finally:
        os.close(fd)
    return sorted(out, reverse=True)
