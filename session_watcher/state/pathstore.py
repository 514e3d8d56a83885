"""The path map on disk, in shards, so a hook reads and writes only the part its events touch.

A session that has read 5,000 files carries a path map of about 2 MB; parsing and rewriting it on
every tool call would cost tens of milliseconds. The map (`paths`, `reasons`, `readPaths` of the
state) is split by a hash of the path into SHARDS files under `<session>.paths/`. The hook loads
the shards of the paths its new events name (and of the open ledger entries), and writes back those
that changed.

Crash safety is copy-on-write: a shard is written under a new name `<n>-<rev>.json`, and only the
main state file, replaced atomically afterwards, says which file is current (`state["shards"]`).
A hook killed halfway leaves an unreferenced file, never a shard newer than the state's cursor.
In memory the state keeps its usual shape; the core never knows.
"""

from __future__ import annotations

import zlib

from session_watcher.base import paths as folders
from session_watcher.base import sysos
from session_watcher.base.atomic import write_atomic
from session_watcher.core import fastjson
from session_watcher.core.errors import NotAFile, NotOurs, ShardRejected, StateTooLarge

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, Literal

    from session_watcher.core.shapes import State

    Kind = Literal["paths", "reasons", "readPaths"]

SHARDS = 64
# the largest int a shard's check takes (a float holds it exactly, as state.store's); one past it is a
# damage's or a hand's (no count of lines or tokens comes near), and one of 400 digits made the fold raise
INT_MAX = fastjson.PAYLOAD_INT
# a text's digits as "0", every other byte a space: a run of 16 zeros there is a number that may be
# past INT_MAX (15 digits are not); a shard without one needs no bound checked, value by value
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG = b"0" * len(str(INT_MAX))
MAX_SHARD_BYTES = 64 << 20
KINDS: tuple[Kind, ...] = ("paths", "reasons", "readPaths")


def short_numbers(data: bytes) -> bool:
    """Whether a shard's text holds no run of 16 digits: then no int in it is past INT_MAX, and
    `sound` need not look (a path of such digits only sends it to look)."""
    return _LONG not in data.translate(_DIGITS)


def sound(doc: Mapping[str, Any], kinds: Iterable[Kind], bounded: bool = False) -> bool:
    """Whether every value of a shard's `kinds` the fold reads is of its kind (core.shapes.PathEntry;
    `type(v) is`: a bool is no number, as none is written where one is) and every int within
    +-INT_MAX (unless `bounded`: `short_numbers` found none past it): a damaged or hand-edited
    shard's path entry whose `tokens` was a list, or an int of 400 digits, made every fold of its
    session raise, so its state was never saved again. Spelled out, not through state.store's table
    of kinds (a call a value): `status` checks every shard, a hook the few it loads
    (docs/benchmarks.md)."""
    kinds = tuple(kinds)
    return _typed(doc, kinds) and (bounded or _within(doc, kinds))


def _typed(doc: Mapping[str, Any], kinds: tuple[Kind, ...]) -> bool:
    for kind in kinds:
        part = doc[kind]
        if kind == "reasons":
            ok = all(v is None or type(v) is str for v in part.values())
        elif kind == "readPaths":
            ok = all(type(v) is int for v in part.values())
        else:
            ok = _entries(part)
        if not ok:
            return False
    return True


def _entries(part: Mapping[str, Any]) -> bool:
    for e in part.values():
        if type(e) is not dict:
            return False
        try:
            if not (type(e["lines"]) is int and type(e["overhead"]) is int and type(e["pendingEdit"]) is int
                    and type(e["calibration"]) is int and type(e["tokens"]) is int
                    and type(e["reads"]) is int and type(e["include"]) is bool and type(e["edited"]) is bool
                    and (e["reason"] is None or type(e["reason"]) is str) and type(e["ranges"]) is list):
                return False
        except KeyError:
            return False
        for r in e["ranges"]:
            if type(r) is not list or len(r) != 2 or type(r[0]) is not int or type(r[1]) is not int:
                return False
    return True


def _within(doc: Mapping[str, Any], kinds: tuple[Kind, ...]) -> bool:
    """Every int of a shard's `kinds` (of their kinds: `_typed`) within +-INT_MAX."""
    ints: list[int] = []
    if "readPaths" in kinds:
        ints.extend(doc["readPaths"].values())
    if "paths" in kinds:
        for e in doc["paths"].values():
            ints += (e["lines"], e["overhead"], e["pendingEdit"], e["calibration"], e["tokens"], e["reads"])
            for r in e["ranges"]:
                ints += r
    return not ints or (min(ints) >= -INT_MAX and max(ints) <= INT_MAX)


def shard_of(path: str) -> int:
    return zlib.crc32(path.encode("utf-8", "surrogatepass")) % SHARDS


class PathShards:
    """The shards of one session's path map; `None` folder: everything lives in memory (replay)."""

    def __init__(self, state_path: str | None) -> None:
        self.dir = state_path[: -len(".json")] + ".paths" if state_path else None
        self.loaded: set[int] = set()
        self.raw: dict[int, bytes] = {}
        self._checked = False

    def _open_dir(self, create: bool) -> int | None:
        """The shard folder, opened without following a link and checked to be ours; a link or a
        file planted in its place is moved to the quarantine folder (never followed, never
        chmod-ed). None when it does not exist and `create` is false."""
        assert self.dir is not None
        for _ in range(2):
            try:
                if create:
                    folders.ensure_private_dir(self.dir)
                return folders.open_private_dir(self.dir)
            except FileNotFoundError:
                if not create:
                    return None
            except NotOurs:
                if not (sysos.islink(self.dir) or not sysos.isdir(self.dir)):
                    raise  # a real folder of another user in our own folder: refuse, say so
                folders.move_aside(self.dir, "not-a-folder")
        raise NotOurs(1, "cannot make a private shard folder", self.dir)

    def _check_dir(self) -> None:
        if not self._checked:
            fd = self._open_dir(create=False)
            if fd is not None:
                sysos.close(fd)
            self._checked = True

    def ensure(self, state: State, paths: Iterable[str]) -> None:
        """Load the shards holding `paths` (once each)."""
        if self.dir is None:
            return
        for n in sorted({shard_of(p) for p in paths} - self.loaded):
            self._load(state, n)

    def ensure_all(self, state: State) -> None:
        if self.dir is None:
            return
        for n in range(SHARDS):
            if n not in self.loaded:
                self._load(state, n)

    def _file(self, n: int, rev: int) -> str:
        assert self.dir is not None
        return sysos.join(self.dir, f"{n:02d}-{rev}.json")

    def _load(self, state: State, n: int) -> None:
        self.loaded.add(n)
        rev = state["shards"].get(str(n))
        if rev is None:
            return
        self._check_dir()
        file = self._file(n, rev)
        try:
            data = folders.read_file(file, MAX_SHARD_BYTES, follow=False)
        except NotAFile as exc:  # a link, FIFO, socket or device: quarantined, like a bad state
            try:
                where = folders.move_aside(file, exc.kind)
            except OSError:
                where = "left in place"
            raise ShardRejected(f"{file}: {exc.strerror}; moved to {where}") from None
        except OSError as exc:
            raise ShardRejected(f"{file}: {exc.strerror}") from None
        try:
            doc = fastjson.loads(data)
        except ValueError:
            doc = None
        if not (isinstance(doc, dict) and isinstance(doc.get("segment"), int)
                and all(isinstance(doc.get(k), dict) for k in KINDS)):
            raise ShardRejected(f"{file}: not a path-map shard")
        kinds = KINDS if doc["segment"] == state["engine"]["segment"] else KINDS[1:]
        if not sound(doc, kinds, short_numbers(data)):  # a value the fold cannot read as what it is
            raise ShardRejected(f"{file}: a path entry of another shape")
        self.raw[n] = data
        for kind in kinds:  # an older segment's path entries no longer count; its reasons do
            mine = state[kind]
            for key, value in doc[kind].items():
                mine.setdefault(key, value)  # what the fold already changed in memory wins

    def save(self, state: State) -> tuple[Mapping[str, object], list[str]]:
        """Write the loaded shards that changed; returns the main document to write (path map
        emptied, shard table updated) and the superseded files to delete after it is written."""
        if self.dir is None:
            return state, []
        main: dict[str, object] = {k: v for k, v in state.items() if k not in KINDS}
        main.update({k: {} for k in KINDS})
        rev = int(state["rev"]) + 1
        table = dict(state["shards"])
        self.ensure(state, [p for kind in KINDS for p in state[kind]])
        groups: dict[int, dict[str, dict[str, Any]]] = {n: {k: {} for k in KINDS} for n in self.loaded}
        for kind in KINDS:
            for path, value in state[kind].items():
                groups.setdefault(shard_of(path), {k: {} for k in KINDS})[kind][path] = value
        old: list[str] = []
        segment = state["engine"]["segment"]
        encoded = []
        for n, group in sorted(groups.items()):
            data = fastjson.dumps({"segment": segment, **group}).encode("ascii")
            if len(data) > MAX_SHARD_BYTES:  # the load limit: refused before any file is written
                raise StateTooLarge(f"a path-map shard would be {len(data):,} bytes, over the "
                                    f"{MAX_SHARD_BYTES:,} a shard may have; not saved")
            encoded.append((n, group, data))
        for n, group, data in encoded:
            if str(n) in table and data == self.raw.get(n):
                continue
            prev = table.get(str(n))
            if any(group.values()):
                if not self._checked:
                    sysos.close(self._open_dir(create=True))  # type: ignore[arg-type]
                    self._checked = True
                write_atomic(self._file(n, rev), data, fsync=False, tmp=self._file(n, rev) + ".tmp")
                table[str(n)] = rev
                self.raw[n] = data
            else:
                table.pop(str(n), None)
                self.raw.pop(n, None)
            if prev is not None:
                old.append(self._file(n, prev))
        main["rev"], main["shards"] = rev, table
        state["rev"], state["shards"] = rev, table
        return main, old

    def sweep(self, state: State) -> None:
        """Delete shard files the state does not reference (left by a crash or a rebuild)."""
        if self.dir is None:
            return
        keep = {f"{int(n):02d}-{rev}.json" for n, rev in state["shards"].items()}
        fd = self._open_dir(create=False)  # the folder itself, never a link's target
        if fd is None:
            return
        try:
            for name in sysos.listdir(fd):
                if name not in keep:
                    try:
                        sysos.unlink(name, dir_fd=fd)  # removes an entry of this folder, follows nothing
                    except OSError:
                        pass
        finally:
            sysos.close(fd)
