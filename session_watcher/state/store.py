"""The per-session state file: load, validate, quarantine, save.

`<state dir>/sessions/<session_id>.json`, 0600 in a 0700 folder, written atomically under the
session lock. A file that is not a state document of this schema (truncated, garbage, the wrong
shape, a newer schema, a symlink) is moved to the quarantine folder and the caller rebuilds from the
transcript, which is the durable log.
"""

from __future__ import annotations

from session_watcher.base import paths, sysos
from session_watcher.core import fastjson
from session_watcher.core.errors import NotAFile, StateRejected, StateTooLarge, TooLarge

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import State
    from session_watcher.state.pathstore import PathShards


MAX_STATE_BYTES = 64 << 20  # the one limit: `load` reads no larger file and `save` writes none


def session_file(session_id: str) -> str:
    return sysos.join(paths.sessions_dir(), f"{session_id}.json")


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
            and all(type(n) is int and -INT_MAX <= n <= INT_MAX for n in head)
            and all(isinstance(a, dict) for a in doc["alerts"]))  # each read as an object (hooks.run)


# What the fold, the hooks and the status line read of a saved state, and as what: a value of another
# type (a string or null where a number is, NaN, a list where an object is; a damaged or hand-edited
# file) made every later run raise inside the fold, so the state was never saved again. `damage` names
# each such value; `load` quarantines the file and the session starts again from its transcript,
# keeping what a rebuild keeps of the parts that are sound. `type(v) is` tests only: a bool is no number
# here, as none is ever written where one is. The large maps (the path map, `readPaths`, the tool ids
# done) are checked as objects only: the shards they are kept in have their own check (state.pathstore),
# which a state holding any of the path map's three maps itself (none is saved so) passes too.
# Kinds: "c" a count (an int, 0 or more), "i" an int, "n" a finite number (NaN and the infinities read
# back from a file are no figure), "s" a string, "b" a bool, "d" an object, "l" a list; "?": or null.
# An int is one within +-INT_MAX (a float holds it exactly, as a payload's: fastjson.PAYLOAD_INT).
_KINDS = {"s": str, "b": bool, "d": dict, "l": list}
INT_MAX = fastjson.PAYLOAD_INT
_ENGINE = {
    "segment": "c", "segCalls": "c", "calls": "c", "compactions": "c", "expectBoundary": "b", "floor": "i?",
    "L": "i?", "lastTs": "n?", "ttl": "s?", "shared": "i?", "gN": "c", "bFull": "i", "bIncl": "i", "ledger": "l",
    "residual": "i?", "level": "n?", "trend": "n", "rent": "n", "billProgress": "n", "bills": "c",
    "billsTotal": "c", "dwell": "c", "dwellBills": "c", "fired": "b", "sinceAlert": "c", "reminders": "c",
    "globs": "s?", "cal": "d", "tally": "d",
}
# those an older version's state may lack (core.shapes.Engine's NotRequired)
_ENGINE_OPTIONAL = {"lastBill": "c", "gateSaving": "n?", "segUnits": "n", "compactAt": "c"}
_TALLY = {"firstTs": "n?", "gate": "c", "backstop": "c", "guard": "c", "cold": "c", "coldTokens": "c",
          "coldUsd": "n", "coldUnpriced": "c", "warmRead": "c", "warmWrite": "c"}
# a fork's only (core.shapes.Tally's NotRequired)
_TALLY_OPTIONAL = {"inherited": "c", "inheritedTo": "c", "forkedFrom": "s", "inheritedUsage": "d"}
_BUCKET = dict.fromkeys(("uncachedInput", "output", "cacheRead", "cacheWrite", "cacheWrite5m", "cacheWrite1h",
                         "calls"), "c")
_HEALTH = {"prompt": "i?", "compactions": "c", "reads": "c", "rereads": "c"}
_CONTEXT = {"model": "s?", "window": "c?", "pressure": "c?", "project": "s?", "cwd": "s?"}
_CONTEXT_OPTIONAL = {"peak": "c", "modelId": "s?", "modelName": "s?", "promptCache": "d?", "resume": "d?",
                     "plan": "d?", "agent": "s", "compactReserve": "c"}
# the parts a rebuild keeps (state.session.rebuild), when present
_KEPT = {"guard": "d", "notified": "d", "outbox": "l", "seen": "l", "parentSession": "s"}
# the config a state keeps (`config`, base.config_cache): trusted while its files' stamps hold, so checked
# here as the fold and the status line read it, the model's parameters (base.config.KEYS' kinds: "number"
# a float or null where the default is, "whole" an int) and the user's own keys. One that fails (damaged,
# or an older version's without a newer key) is only dropped: the files are read again, nothing rebuilt
_PARAMS = {"include": "l", "exclude": "l", "cRatio": "n?", "bp_amber": "n", "bp_red": "n", "notify_dwell": "c",
           "bill_lookback": "c", "backstop_base": "n", "guard_x": "n", "gate_min_calls": "c",
           "remind_backoff": "n", "remind_cap": "c", "advice_min_usd": "n", "advice_min_share": "n",
           "compact_reserve": "c?", "compact_payback": "n"}
_VALUES = {**_PARAMS, "notify": "d", "guard": "s", "handoff_stale_min": "n", "prices": "d", "otlp": "d"}


def _ok(v: object, kind: str) -> bool:
    t = type(v)
    if t is int:  # within +-INT_MAX: one of 400 digits made the fold's arithmetic raise
        return -INT_MAX <= v <= INT_MAX and (  # type: ignore[operator]
            kind[0] == "i" or kind[0] == "n" or (kind[0] == "c" and v >= 0))  # type: ignore[operator]
    if t is float:
        return kind[0] == "n" and v - v == 0.0  # type: ignore[operator]
    if v is None:
        return kind[-1] == "?"
    return _KINDS.get(kind[0]) is t


def _bad(part: dict[str, Any], kinds: dict[str, str], name: str, bad: list[str], optional: bool = False) -> None:
    """Add to `bad` the keys of `part` (`name`.key) not of their kind; a key it lacks too unless `optional`."""
    for k, kind in kinds.items():
        if k in part:
            if not _ok(part[k], kind):
                bad.append(name + k)
        elif not optional:
            bad.append(name + k)


def damage(doc: dict[str, Any]) -> list[str]:
    """The values of a state of the right shape (`_shape_ok`) that cannot be read as what they are:
    "engine.calls", "context.window", "guard", ... (none: the state is sound)."""
    bad: list[str] = []
    e, m, ctx, guard = doc["engine"], doc["meter"], doc["context"], doc.get("guard")
    _bad(e, _ENGINE, "engine.", bad)
    _bad(e, _ENGINE_OPTIONAL, "engine.", bad, optional=True)
    if type(e["tally"]) is dict:
        _bad(e["tally"], _TALLY, "engine.tally.", bad)
        _bad(e["tally"], _TALLY_OPTIONAL, "engine.tally.", bad, optional=True)
        if type(e["tally"].get("inheritedUsage")) is dict:
            _bad(e["tally"]["inheritedUsage"], _BUCKET, "engine.tally.inheritedUsage.", bad)
    cal = e["cal"]
    if type(cal) is dict and not (_ok(cal.get("chars"), "n") and _ok(cal.get("tokens"), "n")):
        bad.append("engine.cal")
    if e["lamp"] not in (None, "white", "green", "amber", "red"):
        bad.append("engine.lamp")
    if type(e["ledger"]) is list and not all(  # [path, open tokens, calls seen, chars behind, original tokens]
            type(x) is list and len(x) == 5 and type(x[0]) is str
            and all(type(n) is int and -INT_MAX <= n <= INT_MAX for n in x[1:])
            for x in e["ledger"]):
        bad.append("engine.ledger")
    for stream in ("main", "sub"):
        _bad(m[stream], _BUCKET, f"meter.{stream}.", bad)
    other = m.get("other")
    if other is not None and not (type(other) is dict and all(
            type(b) is dict and not [k for k, kind in _BUCKET.items() if not _ok(b.get(k), kind)]
            for b in other.values())):
        bad.append("meter.other")
    if not all(type(r) is list and len(r) == 7 and type(r[0]) is str
               and all(type(n) is int and -INT_MAX <= n <= INT_MAX for n in r[1:])
               for r in m["recent"].values()):  # meter.RECENT_MAX of them at most
        bad.append("meter.recent")
    _bad(doc["health"], _HEALTH, "health.", bad)
    _bad(ctx, _CONTEXT, "context.", bad)
    _bad(ctx, _CONTEXT_OPTIONAL, "context.", bad, optional=True)
    if not all(_cursor(c) for c in (doc["cursor"], *doc["subCursors"].values())) or (
            doc["cursor"] is None and any(type(n) is int and n > 0 for n in (e.get("calls"), m["main"].get("calls")))):
        bad.append("cursor")  # null with calls folded: the transcript would be read, and counted, again
    if not all(type(p) is list and len(p) == 2 and type(p[0]) is str and (p[1] is None or type(p[1]) is dict)
               for p in doc["tools"]["pending"].values()):  # the tool uses waiting for their result
        bad.append("tools.pending")
    _bad(doc, _KEPT, "", bad, optional=True)
    if doc["paths"] or doc["reasons"] or doc["readPaths"]:  # kept in shards: here only by a hand or a damage
        from session_watcher.state.pathstore import KINDS, sound

        if not sound(doc, KINDS):  # the shards' own check: a fold touching such an entry raised
            bad.append("paths")
    if type(guard) is dict and not (type(guard.get("shown", [])) is list and type(guard.get("blocked", [])) is list
                                    and type(guard.get("carry", {})) is dict):
        bad.append("guard")
    return bad


def _cursor(v: object) -> bool:  # state.reader's: read by offset and skip (the rest is compared only)
    return v is None or (type(v) is dict and _ok(v.get("offset", 0), "c") and _ok(v.get("skip"), "i?"))


def _config(cache: dict[str, Any]) -> bool:
    values, params = cache.get("values"), cache.get("params")
    if type(values) is not dict or type(params) is not dict:
        return "values" not in cache and "params" not in cache  # none read yet: read at the next run
    bad: list[str] = []
    _bad(values, _VALUES, "", bad)
    _bad(params, _PARAMS, "", bad)
    return not bad and all(type(c) is dict and all(_ok(x, "n?") for k, x in c.items() if k != "evidence")
                           for c in (values.get("cliff", {}), params.get("cliff", {})))  # base.config.load_cliff's


def sound_parts(doc: dict[str, Any], bad: list[str]) -> State:
    """`doc` without the kept parts (`state.session.rebuild`'s) that `bad` names: what a rebuild
    may keep of a damaged state."""
    kept: dict[str, Any] = {**doc, "context": {k: v for k, v in doc["context"].items() if f"context.{k}" not in bad}}
    for key in bad:
        if "." not in key:
            kept.pop(key, None)
    return kept  # type: ignore[return-value]


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
    if doc["config"] and not _config(doc["config"]):  # a cache: its files are read again (base.config)
        doc["config"] = {}
    bad = damage(doc)
    if bad:  # a value the fold cannot read: started again from the transcript, keeping what is sound
        rejected = StateRejected(quarantine(path, "value-" + bad[0]))
        rejected.kept = sound_parts(doc, bad)
        raise rejected
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
            sysos.unlink(old)
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
        return fastjson.dumps(fastjson.finite(doc)).encode("ascii")


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
        sysos.close(paths.open_private_dir(paths.sessions_dir()))
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
        with sysos.scandir(fd) as it:
            for de in it:
                if de.name.endswith(".json") and de.is_file(follow_symlinks=False):
                    out.append((de.stat(follow_symlinks=False).st_mtime, de.name[:-5]))
    finally:
        sysos.close(fd)
    return sorted(out, reverse=True)
