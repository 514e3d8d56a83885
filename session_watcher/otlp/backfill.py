"""What `export --otlp` sends of each finished session, kept between runs: a transcript is replayed
only when it changed.

Per transcript, `<state dir>/otlp/backfill.json` keeps what the export reads of its replay: the
status document's figures (`payload.DOC_KEYS`), the alerts it fired, its last call's time, the idle
compactions it took, and for a handoff's fresh session the restart priced against its parent. An
entry holds while its transcript and its subagent files have the same size, mtime, inode change
time (nanoseconds) and inode, the config its project's fold reads is the same, and so is its
parent's transcript for a handoff; the whole file holds while the package (its version and its
files' mtimes), the cliff `report` inferred and this file's schema are the same. Anything else is
replayed again, as the first run did: the figures sent are the same, only not computed twice. An
entry of other types than these (`sound`) is none.

Bounded: an entry per transcript exported, those whose file went are dropped on the next write; a
file that cannot be read or is of another version is replaced. Written once per run, atomically,
under its lock, keeping what another export wrote meanwhile.
"""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import Config

SCHEMA = 1
MAX_BYTES = 256 << 20


def cache_file() -> str:
    from session_watcher.otlp.exporter import folder

    return os.path.join(folder(), "backfill.json")


def _stamp(path: str) -> list[int] | None:
    """The file's size, mtime, inode change time (nanoseconds) and inode: a rewrite whose size and
    mtime are set back as they were (`cp -p`, a restore, `touch -d`) still moves its change time."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]


def signature(path: str) -> list[Any] | None:
    """The transcript's and its subagent files' sizes and mtimes: what its replay reads (None: gone)."""
    from session_watcher.agents import session_id
    from session_watcher.state.session import subagent_files

    main = _stamp(path)
    if main is None:
        return None
    sid = session_id(path) or os.path.basename(path).removesuffix(".jsonl")
    return [main, [[os.path.basename(p), _stamp(p)] for p in subagent_files(path, sid)]]


def _code_stamp() -> list[Any]:
    """The package's version and its modules' latest mtime: another version folds differently."""
    from session_watcher.otlp.exporter import version

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    latest = 0
    for folder, _dirs, files in os.walk(root):
        for name in files:
            if name.endswith(".py"):
                latest = max(latest, (_stamp(os.path.join(folder, name)) or [0, 0])[1])
    return [version(), latest]


def _digest(value: Any) -> str:
    import hashlib
    import json

    return hashlib.sha256(json.dumps(value, sort_keys=True, default=repr).encode()).hexdigest()[:16]


def _restart(doc: Any) -> bool:
    """A restart document as core.restarts makes it, as far as the export reads it."""
    return (isinstance(doc, dict) and isinstance(doc.get("child"), str)
            and (doc.get("firstCall") is None or type(doc.get("firstCall")) is int))


def sound(entry: Any) -> TypeGuard[dict[str, Any]]:
    """An entry of the shapes `replayed` writes, as far as the export reads them: one of other types
    (the file edited by hand or by another build under the same key) is no entry, replayed again."""
    if not isinstance(entry, dict) or not isinstance(entry.get("folder"), str | None) \
            or not isinstance(entry.get("config"), str):
        return False
    handoff = entry.get("handoff")
    if handoff is not None and not (isinstance(handoff, dict)
                                    and (handoff.get("doc") is None or _restart(handoff.get("doc")))):
        return False
    doc, last, alerts, idle = entry.get("doc"), entry.get("last"), entry.get("alerts"), entry.get("idle")
    if doc is None:
        return True
    return (isinstance(doc, dict) and isinstance(doc.get("sessionId"), str) and type(last) is float
            and math.isfinite(last) and isinstance(alerts, list) and all(isinstance(a, dict) for a in alerts)
            and isinstance(idle, list) and all(_restart(r) for r in idle))


class Cache:
    """The entries of the last run (`old`) and those of this one (`new`), by transcript path."""

    def __init__(self, cliff: Any) -> None:
        self.key = [SCHEMA, *_code_stamp(), _digest(cliff)]
        self.configs: dict[str | None, tuple[Config, str]] = {}  # project -> (its config, digest)
        self.new: dict[str, dict[str, Any]] = {}
        self.replays = 0
        self.old = self._read()

    def _read(self) -> dict[str, Any]:
        """The entries the file holds under this run's key (none: no file, another key, not JSON,
        not a regular file of at most MAX_BYTES)."""
        from session_watcher.base.paths import read_file
        from session_watcher.core import fastjson

        try:
            doc = fastjson.loads(read_file(cache_file(), MAX_BYTES, follow=False))
        except (OSError, ValueError):
            return {}
        ok = isinstance(doc, dict) and doc.get("key") == self.key and isinstance(doc.get("sessions"), dict)
        return doc["sessions"] if ok and isinstance(doc, dict) else {}

    def config(self, project: str | None) -> tuple[Config, str]:
        """The config a replay of a session in `project` folds with (`replay.project_config`), and its digest."""
        got = self.configs.get(project)
        if got is None:
            from session_watcher.sessions.replay import project_config

            cfg = project_config(project)
            got = self.configs[project] = (cfg, _digest(cfg))
        return got

    def get(self, path: str, sig: list[Any] | None) -> dict[str, Any] | None:
        """The entry of `path` when it still holds (same signature, same config), else None."""
        entry = self.old.get(path)
        if not sound(entry) or sig is None or entry.get("sig") != sig:
            return None
        if entry.get("config") != self.config(entry.get("folder"))[1]:
            return None
        return entry

    def save(self, wait: float = 2.0) -> None:
        """This run's entries, and those the file holds now (another export's, run meanwhile, too)
        whose transcript is still there, under the file's lock (its temp file's name is the lock
        holder's: two exports at once never write into one)."""
        import json

        from session_watcher.base import paths
        from session_watcher.base.atomic import write_atomic
        from session_watcher.core.errors import LockTimeout
        from session_watcher.state.lock import SessionLock

        try:
            paths.ensure_private_dir(os.path.dirname(cache_file()))
            with SessionLock(cache_file() + ".lock", wait):
                keep = {p: e for p, e in self._read().items() if p not in self.new and os.path.exists(p)}
                doc = {"key": self.key, "sessions": {**keep, **self.new}}
                write_atomic(cache_file(), json.dumps(doc, separators=(",", ":")).encode(), fsync=False,
                             tmp=cache_file() + ".tmp")
        except (LockTimeout, OSError):
            pass  # the next run replays again: the same figures


def replayed(cache: Cache, path: str, cliff: Any) -> tuple[dict[str, Any], list[Any] | None]:
    """(the entry of `path`: cached, or made by replaying it; the calls core.restarts reads when it
    was replayed now, else None). An entry's `doc` is None for a transcript without a timed call."""
    from session_watcher.core import restarts as core
    from session_watcher.core.backtest import calls_from_trace
    from session_watcher.otlp.payload import DOC_KEYS
    from session_watcher.sessions.replay import project_of, replay, transcript_cwd

    sig = signature(path)
    got = cache.get(path, sig)
    if got is not None:
        cache.new[path] = got
        return got, None
    cwd = transcript_cwd(path)
    folder = project_of(cwd)
    cfg, digest = cache.config(folder)
    cache.replays += 1
    doc, trace = replay(path, cwd=cwd, cfg=cfg)
    entry: dict[str, Any] = {"sig": sig, "folder": folder, "config": digest, "doc": None}
    calls = None
    if trace and isinstance(trace[-1].get("ts"), int | float):
        calls = calls_from_trace(trace)
        kept = {k: doc[k] for k in DOC_KEYS if k in doc}
        kept["project"] = cwd  # named (by its folder's name) only when the user opted in
        sid = str(doc["sessionId"])
        alerts = [a for row in trace for a in row.get("alerts") or []]
        entry.update(doc=kept, last=float(trace[-1]["ts"]), alerts=alerts,
                     idle=core.idle_compactions(sid, calls, cliff))
    cache.new[path] = entry
    return entry, calls
