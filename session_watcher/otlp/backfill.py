"""What `export --otlp` sends of each finished session, kept between runs: a transcript is replayed
only when it changed, or when what its replay found outside it did.

Per transcript, `<state dir>/otlp/backfill.json` keeps what the export reads of its replay: the
status document's figures (`payload.DOC_KEYS`), the alerts it fired, its last call's time, the idle
compactions it took, and for a handoff's fresh session the restart priced against its parent. An
entry holds while its transcript and its subagent files have the same size, mtime, inode change
time (nanoseconds), inode and device, and what its replay asked outside them has the same answers
now (`replay.fold`): the project folder its folder resolves to and the config that project's fold
reads, every file path the transcript names resolved the same (links, `~`), and git ignoring the
same ones of them (asked once per project for every kept session: a `.gitignore`, the repository's
excludes, its index). A handoff's restart holds while its parent's transcript, config and answers
do. Git's silence (`git check-ignore` past its time) is no answer: an entry whose replay met it is
not written (`UNANSWERED`), and a kept entry whose project git does not answer for does not hold.
The whole file holds while the package (its version and its files' mtimes), the cliff `report`
inferred, the user's prices and this file's schema are the same. Anything else is replayed again,
as the first run did: the figures sent are the same, only not computed twice. An entry of other
types than these (`sound`) is none.

Bounded: an entry per transcript exported, those whose file went are dropped on the next write; a
file that cannot be read or is of another version is replaced. Written once per run that replayed
or priced anything (a run with nothing new leaves it as it is), atomically, under its lock, keeping
what another export wrote meanwhile; never by `export --dry-run`, which reads it only.
"""

from __future__ import annotations

import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeGuard

    from session_watcher.core.shapes import Config

SCHEMA = 2
MAX_BYTES = 256 << 20
UNANSWERED = "unanswered"  # an entry's "world" where git did not answer in time: kept by no run


def cache_file() -> str:
    from session_watcher.otlp.exporter import folder

    return os.path.join(folder(), "backfill.json")


def _stamp(path: str) -> list[int] | None:
    """The file's size, mtime, inode change time (nanoseconds), inode and device (its link's target's:
    a link pointed elsewhere is another file): a rewrite whose size and mtime are set back as they
    were (`cp -p`, a restore, `touch -d`) still moves its change time."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_dev]


def signature(path: str) -> list[Any] | None:
    """The transcript's and its subagent files' stamps (`_stamp`): what its replay reads of them (None: gone)."""
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


def _asked_sound(entry: Any) -> bool:
    """The fields `asked` writes, of their types (an entry's, a handoff's parent's)."""
    return (isinstance(entry, dict) and "cwd" in entry and isinstance(entry["cwd"], str | None)
            and isinstance(entry.get("world"), str)
            and all(isinstance(entry.get(k), list) and all(isinstance(p, str) for p in entry[k])
                    for k in ("raws", "shell")))


def sound(entry: Any) -> TypeGuard[dict[str, Any]]:
    """An entry of the shapes `replayed` writes, as far as the export reads them: one of other types
    (the file edited by hand or by another build under the same key) is no entry, replayed again."""
    if not isinstance(entry, dict) or "folder" not in entry or not isinstance(entry["folder"], str | None) \
            or not isinstance(entry.get("config"), str) or not _asked_sound(entry):
        return False
    handoff = entry.get("handoff")
    if handoff is not None and not (isinstance(handoff, dict)
                                    and (handoff.get("doc") is None or _restart(handoff.get("doc")))
                                    and (handoff.get("asked") is None or _asked_sound(handoff.get("asked")))):
        return False
    doc, last, alerts, idle = entry.get("doc"), entry.get("last"), entry.get("alerts"), entry.get("idle")
    if doc is None:
        return True
    return (isinstance(doc, dict) and isinstance(doc.get("sessionId"), str) and type(last) is float
            and math.isfinite(last) and isinstance(alerts, list) and all(isinstance(a, dict) for a in alerts)
            and isinstance(idle, list) and all(_restart(r) for r in idle))


def asked(cwd: str | None, found: dict[str, Any]) -> dict[str, Any]:
    """What a replay asked outside its transcript, as an entry keeps it (`replay.fold`'s `asked`,
    `found`; `cwd`: `transcript_cwd`'s answer): "cwd", "raws" (the file paths the path map classed,
    as the transcript names them), "shell" (those it only resolved: a shell command's reads) and
    "world" (the digest of every answer: the project folder, each path resolved, each class; UNANSWERED
    where git did not say in time which files it ignores: no answer, which no check ever matches)."""
    canon = {raw: c for (raw, _cwd), c in found["canon"].items()}
    reasons = found["reasons"]
    raws = sorted(r for r, c in canon.items() if c in reasons)
    world = UNANSWERED if found.get("unanswered") else _answers(found["project"], canon,
                                                               {r: reasons[canon[r]] for r in raws})
    return {"cwd": cwd, "raws": raws, "shell": sorted(r for r, c in canon.items() if c not in reasons),
            "world": world}


def _answers(project: str | None, canon: dict[str, str], reasons: dict[str, str | None]) -> str:
    """The digest of a fold's answers: its project folder, each raw path resolved and, for those the
    path map classed, its class (None: in the project, not ignored)."""
    return _digest([project, sorted([raw, c, reasons.get(raw, "-")] for raw, c in canon.items())])


def same_answers(kept: list[tuple[str, dict[str, Any]]], unanswered: set[str] | None = None) -> set[str]:
    """The keys of `kept` (key, `asked`'s fields) whose replay would get the same answers now: each
    raw path resolved again (once for all of them), git asked once per project folder about every
    path of it that was classed (`state.session.git_ignored`, as the fold asks it). Where git did not
    answer in time, none of that project's holds (its folder added to `unanswered`)."""
    from session_watcher.core import paths as pathmap
    from session_watcher.sessions.replay import placed
    from session_watcher.state.session import canonical, git_ignored

    memo: dict[tuple[str, str | None], str] = {}
    places: dict[str | None, tuple[str | None, str | None]] = {}
    looked: list[tuple[str, dict[str, Any], str | None, dict[str, str], set[str]]] = []
    ask: dict[str, set[str]] = {}
    for key, entry in kept:
        if entry["cwd"] not in places:
            places[entry["cwd"]] = placed(entry["cwd"])
        cwd, project = places[entry["cwd"]]
        canon: dict[str, str] = {}
        try:
            for raw in (*entry["raws"], *entry["shell"]):
                got = memo.get((raw, cwd))
                if got is None:
                    got = memo[raw, cwd] = canonical(raw, cwd)
                canon[raw] = got
        except (OSError, ValueError):  # a replay meets it too, and says so
            continue
        inside = {canon[r] for r in entry["raws"] if project and pathmap.relative(canon[r], project) is not None}
        if project and inside:
            ask.setdefault(project, set()).update(inside)
        looked.append((key, entry, project, canon, inside))
    ignored = {root: git_ignored(root, sorted(paths)) for root, paths in ask.items()}
    held = set()
    for key, entry, project, canon, inside in looked:
        gone = ignored.get(project or "", set())
        if gone is None:  # unknown: replayed again (where git may answer)
            if unanswered is not None and project:
                unanswered.add(project)
            continue
        reasons = {r: None if canon[r] in inside and canon[r] not in gone
                   else "gitignore" if canon[r] in inside else "outside-project" for r in entry["raws"]}
        if _answers(project, canon, reasons) == entry["world"]:
            held.add(key)
    return held


class Cache:
    """The entries of the last run (`old`) and those of this one (`new`), by transcript path."""

    def __init__(self, cliff: Any) -> None:
        from session_watcher.core.prices import user_rows

        # the cliff and the user's prices in force (`config.use_prices`), which price every session; an
        # entry's own config digest (`config`) holds the rest a replay read: the user's config (a session
        # whose folder is gone folds with it alone, `replay.project_config`) and its project's
        self.key = [SCHEMA, *_code_stamp(), _digest(cliff), _digest(user_rows())]
        self.configs: dict[str | None, tuple[Config, str]] = {}  # project -> (its config, digest)
        self.new: dict[str, dict[str, Any]] = {}
        self.replays = 0
        self.changed = False  # an entry kept from the file changed in this run (its restart priced again)
        self.old = self._read()
        self.held: dict[str, dict[str, Any] | None] = {}  # transcript -> its entry that holds (None: none)
        self.sigs: dict[str, list[Any] | None] = {}  # transcript -> its signature as checked
        self.asked: dict[str, dict[str, Any]] = {}  # transcript -> `asked` of its replay in this run
        self.unanswered: set[str] = set()  # project folders where git did not answer in time
        self.unknown = 0  # replays in this run that met such a folder (taken as none ignored; kept by none)

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

    def check(self, paths: list[str]) -> None:
        """Decide for each of `paths` (not decided yet) whether its entry holds (`held`): the same
        signature, its folder the same project with the same config, and the same answers outside
        the transcript (`same_answers`, git asked once per project for all of them)."""
        from session_watcher.core.usererrors import UserError
        from session_watcher.sessions.replay import project_of

        kept: list[tuple[str, dict[str, Any]]] = []
        folders: dict[str | None, str | None] = {}  # cwd -> project_of's answer, asked once
        for path in paths:
            if path in self.held:
                continue
            self.held[path] = None
            entry = self.old.get(path)
            sig = self.sigs[path] = signature(path)
            if not sound(entry) or sig is None or entry.get("sig") != sig:
                continue
            if entry["cwd"] not in folders:
                folders[entry["cwd"]] = project_of(entry["cwd"])
            folder = folders[entry["cwd"]]
            if folder != entry["folder"]:
                continue
            try:
                digest = self.config(folder)[1]
            except UserError:  # a config that cannot be read now: the replay meets it and the export skips it
                continue
            if entry["config"] != digest:
                continue
            kept.append((path, entry))
        for path in same_answers(kept, self.unanswered):
            self.held[path] = self.old[path]

    def get(self, path: str) -> dict[str, Any] | None:
        """The entry of `path` when it still holds (`check`), else None."""
        self.check([path])
        return self.held[path]

    def save(self, wait: float = 2.0) -> None:
        """This run's entries, and those the file holds now (another export's, run meanwhile, too)
        whose transcript is still there, under the file's lock (its temp file's name is the lock
        holder's: two exports at once never write into one). Nothing when this run changed no
        entry (nothing replayed, no restart priced again): the file holds them as they are."""
        if not self.replays and not self.changed:
            return
        import json

        from session_watcher.base import paths
        from session_watcher.base.atomic import write_atomic
        from session_watcher.core.errors import LockTimeout
        from session_watcher.state.lock import SessionLock

        try:
            paths.ensure_private_dir(os.path.dirname(cache_file()))
            with SessionLock(cache_file() + ".lock", wait):
                keep = {p: e for p, e in self._read().items() if p not in self.new and os.path.exists(p)}
                new = {p: e for p, e in self.new.items() if e.get("world") != UNANSWERED}  # asked again next run
                doc = {"key": self.key, "sessions": {**keep, **new}}
                write_atomic(cache_file(), json.dumps(doc, separators=(",", ":")).encode(), fsync=False,
                             tmp=cache_file() + ".tmp")
        except (LockTimeout, OSError):
            pass  # the next run replays again: the same figures


def replayed(cache: Cache, path: str, cliff: Any) -> tuple[dict[str, Any], list[Any] | None]:
    """(the entry of `path`: cached, or made by replaying it; the calls core.restarts reads when it
    was replayed now, else None). An entry's `doc` is None for a transcript without a timed call."""
    got = cache.get(path)
    if got is None:
        got, calls = replay_entry(cache, path, cliff)
        took(cache, path, got)
    else:
        calls = None
    cache.new[path] = got
    return got, calls


def took(cache: Cache, path: str, entry: dict[str, Any]) -> None:
    """Count a replay of `path` made for `entry` and keep what it asked."""
    cache.replays += 1
    cache.asked[path] = {k: entry[k] for k in ("cwd", "raws", "shell", "world")}
    if entry["world"] == UNANSWERED:
        cache.unknown += 1


def replay_entry(cache: Cache, path: str, cliff: Any) -> tuple[dict[str, Any], list[Any] | None]:
    """(the entry a replay of `path` makes, its calls as core.restarts reads them: None without a
    timed call). Reads nothing of the cache's but its configs and the signature `check` took."""
    from session_watcher.core import restarts as core
    from session_watcher.core.backtest import calls_from_trace
    from session_watcher.otlp.payload import DOC_KEYS
    from session_watcher.sessions.replay import project_of, replay, transcript_cwd

    sig = cache.sigs[path] if path in cache.sigs else signature(path)  # as it was before the replay read it
    cwd = transcript_cwd(path)
    folder = project_of(cwd)
    cfg, digest = cache.config(folder)
    found: dict[str, Any] = {}
    doc, trace = replay(path, cwd=cwd, cfg=cfg, asked=found)
    cache.unanswered.update(found["unanswered"])
    entry: dict[str, Any] = {"sig": sig, "folder": folder, "config": digest, **asked(cwd, found), "doc": None}
    calls = None
    if trace and isinstance(trace[-1].get("ts"), int | float):
        calls = calls_from_trace(trace)
        kept = {k: doc[k] for k in DOC_KEYS if k in doc}
        kept["project"] = cwd  # named (by its folder's name) only when the user opted in
        sid = str(doc["sessionId"])
        alerts = [a for row in trace for a in row.get("alerts") or []]
        entry.update(doc=kept, last=float(trace[-1]["ts"]), alerts=alerts,
                     idle=core.idle_compactions(sid, calls, cliff))
    return entry, calls


def replayed_calls(cache: Cache, path: str) -> list[Any]:
    """A session's calls as core.restarts reads them, by a replay now (a handoff's parent not
    exported in this run); what it asked is kept (`Cache.asked`). Raises as `replay` does."""
    from session_watcher.core.backtest import calls_from_trace
    from session_watcher.sessions.replay import project_of, replay, transcript_cwd

    cwd = transcript_cwd(path)
    found: dict[str, Any] = {}
    _doc, trace = replay(path, cwd=cwd, cfg=cache.config(project_of(cwd))[0], asked=found)
    cache.unanswered.update(found["unanswered"])
    cache.asked[path] = asked(cwd, found)
    return calls_from_trace(trace)
