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
    from typing import Any, TypeGuard

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


# What the fold, the hooks and the status line read of a saved state, and as what: a value of another
# type (a string or null where a number is, NaN, a list where an object is; a damaged or hand-edited
# file) made every later run raise inside the fold, so the state was never saved again. `damage` names
# each such value; `load` quarantines the file and the session starts again from its transcript,
# keeping what a rebuild keeps of the parts that are sound. `type(v) is` tests only: a bool is no number
# here, as none is ever written where one is. The large maps (the path map, `readPaths`, the tool ids
# done) are checked as objects only: the shards they are kept in have their own check (state.pathstore).


def _count(v: object) -> bool:
    return type(v) is int and v >= 0


def _int(v: object) -> bool:
    return type(v) is int


def _num(v: object) -> bool:  # finite: NaN and the infinities read back from a file are no figure
    return type(v) is int or (type(v) is float and v - v == 0.0)


def _str(v: object) -> bool:
    return type(v) is str


def _bool(v: object) -> bool:
    return type(v) is bool


def _dict(v: object) -> bool:
    return type(v) is dict


def _list(v: object) -> bool:
    return type(v) is list


def _count_n(v: object) -> bool:
    return v is None or (type(v) is int and v >= 0)


def _int_n(v: object) -> bool:
    return v is None or type(v) is int


def _num_n(v: object) -> bool:
    return v is None or _num(v)


def _str_n(v: object) -> bool:
    return v is None or type(v) is str


def _dict_n(v: object) -> bool:
    return v is None or type(v) is dict


def _lamp(v: object) -> bool:
    return v is None or v in ("white", "green", "amber", "red")


def _ledger(v: object) -> bool:  # [path, open tokens, calls seen, chars behind, original tokens] each
    return type(v) is list and all(
        type(x) is list and len(x) == 5 and type(x[0]) is str and all(type(n) is int for n in x[1:])
        for x in v)


def _cursor(v: object) -> bool:  # state.reader's: read by offset and skip (the rest is compared only)
    return v is None or (type(v) is dict and _count(v.get("offset", 0)) and _int_n(v.get("skip")))


def _bucket(v: object) -> bool:
    return type(v) is dict and all(_count(v.get(k)) for k in _BUCKET)


_BUCKET = ("uncachedInput", "output", "cacheRead", "cacheWrite", "cacheWrite5m", "cacheWrite1h", "calls")
# (key, check, required): the engine's figures (core.engine), then its tally and calibration
_ENGINE = (
    ("segment", _count), ("segCalls", _count), ("calls", _count), ("compactions", _count),
    ("expectBoundary", _bool), ("floor", _int_n), ("L", _int_n), ("lastTs", _num_n), ("ttl", _str_n),
    ("shared", _int_n), ("lamp", _lamp), ("gN", _count), ("bFull", _int), ("bIncl", _int),
    ("ledger", _ledger), ("residual", _int_n), ("level", _num_n), ("trend", _num), ("rent", _num),
    ("billProgress", _num), ("bills", _count), ("billsTotal", _count), ("dwell", _count),
    ("dwellBills", _count), ("fired", _bool), ("sinceAlert", _count), ("reminders", _count),
    ("globs", _str_n), ("cal", _dict), ("tally", _dict),
)
_ENGINE_OPTIONAL = (("lastBill", _count), ("gateSaving", _num_n), ("segUnits", _num), ("compactAt", _count))
_TALLY = (("firstTs", _num_n), ("gate", _count), ("backstop", _count), ("guard", _count), ("cold", _count),
          ("coldTokens", _count), ("coldUsd", _num), ("coldUnpriced", _count), ("warmRead", _count),
          ("warmWrite", _count))
_HEALTH = (("prompt", _int_n), ("compactions", _count), ("reads", _count), ("rereads", _count))
_CONTEXT = (("model", _str_n), ("window", _count_n), ("pressure", _count_n), ("project", _str_n), ("cwd", _str_n))
_CONTEXT_OPTIONAL = (("peak", _count), ("modelId", _str_n), ("modelName", _str_n), ("promptCache", _dict_n),
                     ("resume", _dict_n), ("plan", _dict_n), ("agent", _str), ("compactReserve", _count))
# the config a state keeps (`config`, base.config_cache): trusted while its files' stamps hold, so checked
# here as the fold and the status line read it, the model's parameters (base.config.KEYS' kinds: "number"
# a float or null where the default is, "whole" an int) and the user's own keys. One that fails (damaged,
# or an older version's without a newer key) is only dropped: the files are read again, nothing rebuilt
_PARAMS = (("include", _list), ("exclude", _list), ("cRatio", _num_n), ("bp_amber", _num), ("bp_red", _num),
           ("notify_dwell", _count), ("bill_lookback", _count), ("backstop_base", _num), ("guard_x", _num),
           ("gate_min_calls", _count), ("remind_backoff", _num), ("remind_cap", _count),
           ("advice_min_usd", _num), ("advice_min_share", _num), ("compact_reserve", _count_n),
           ("compact_payback", _num))
_VALUES = (("notify", _dict), ("guard", _str), ("handoff_stale_min", _num), ("prices", _dict), ("otlp", _dict))
# the parts a rebuild keeps (state.session.rebuild), when present
_KEPT = (("guard", _dict), ("notified", _dict), ("outbox", _list), ("seen", _list), ("parentSession", _str))


def damage(doc: dict[str, Any]) -> list[str]:
    """The values of a state of the right shape (`_shape_ok`) that cannot be read as what they are:
    "engine.calls", "context.window", "guard", ... (none: the state is sound)."""
    bad: list[str] = []
    e = doc["engine"]
    bad.extend(f"engine.{k}" for k, ok in _ENGINE if not ok(e[k]))
    bad.extend(f"engine.{k}" for k, ok in _ENGINE_OPTIONAL if k in e and not ok(e[k]))
    tally, cal = e["tally"], e["cal"]
    if type(tally) is dict:
        bad.extend(f"engine.tally.{k}" for k, ok in _TALLY if not ok(tally[k]))
    if type(cal) is dict and not (_num(cal.get("chars")) and _num(cal.get("tokens"))):
        bad.append("engine.cal")
    m = doc["meter"]
    bad.extend(f"meter.{k}" for k in ("main", "sub") if not _bucket(m[k]))
    other = m.get("other")
    if other is not None and not (type(other) is dict and all(_bucket(b) for b in other.values())):
        bad.append("meter.other")
    if not all(type(r) is list and len(r) == 7 and type(r[0]) is str and all(_int(n) for n in r[1:])
               for r in m["recent"].values()):  # meter.RECENT_MAX of them at most
        bad.append("meter.recent")
    h = doc["health"]
    bad.extend(f"health.{k}" for k, ok in _HEALTH if not ok(h.get(k)))
    ctx = doc["context"]
    bad.extend(f"context.{k}" for k, ok in _CONTEXT if k not in ctx or not ok(ctx[k]))
    bad.extend(f"context.{k}" for k, ok in _CONTEXT_OPTIONAL if k in ctx and not ok(ctx[k]))
    if not _cursor(doc["cursor"]):
        bad.append("cursor")
    if not all(_cursor(c) for c in doc["subCursors"].values()):
        bad.append("subCursors")
    if not all(type(p) is list and len(p) == 2 and type(p[0]) is str and _dict_n(p[1])
               for p in doc["tools"]["pending"].values()):  # the tool uses waiting for their result
        bad.append("tools.pending")
    bad.extend(k for k, ok in _KEPT if k in doc and not ok(doc[k]))
    guard = doc.get("guard")
    if type(guard) is dict and not (all(type(guard.get(k, [])) is list for k in ("shown", "blocked"))
                                    and type(guard.get("carry", {})) is dict):
        bad.append("guard")
    return bad


def _config(cache: dict[str, Any]) -> bool:
    values, params = cache.get("values"), cache.get("params")
    if type(values) is not dict or type(params) is not dict:
        return "values" not in cache and "params" not in cache  # none read yet: read at the next run
    return (all(k in values and k in params and ok(values[k]) and ok(params[k]) for k, ok in _PARAMS)
            and all(k in values and ok(values[k]) for k, ok in _VALUES)
            and _cliff(values.get("cliff", {})) and _cliff(params.get("cliff", {})))


def _cliff(v: object) -> bool:  # base.config.load_cliff's: seconds or null by cache class, and "evidence"
    return type(v) is dict and all(_num_n(x) for k, x in v.items() if k != "evidence")


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
