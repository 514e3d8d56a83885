"""The last run's sources, their file ids and facts as one record (`Index.kept_sources`): columns, not
a tuple a file, so a large history's record is decoded by a few C-level steps (its paths, sessions
and projects as one text each, its ids and facts as arrays of 64-bit integers), not a Python
object a value; the sources stay columns (`Sources`), a `Source` made only for the files a run
looks at (those it `stat`s, the sessions it folds)."""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Sequence
from itertools import accumulate, repeat

from session_watcher.agents.source import Source

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

Facts = tuple[int, int, int]  # a file's size, mtime (ns) and the offset read up to
Columns = tuple[str, str, str, bytes, list[str | None], bytes, bytes, bytes, bytes]
_SEP = "\0"  # in no path, session id or folder name
_new = tuple.__new__


def encode(sources: Sequence[Source], ids: Iterable[int], facts: list[Facts]) -> Columns:
    """`sources` (each one live, in order), their file ids and facts as columns (marshal data)."""
    agents: list[str | None] = list(dict.fromkeys(s[4] for s in sources))
    at = {a: k for k, a in enumerate(agents)}
    flat = array("q")
    for f in facts:
        flat.extend(f)
    paths = [s[0] for s in sources]
    starts = array("q", accumulate([len(p) + 1 for p in paths[:-1]], initial=0) if paths else ())
    return (_SEP.join(paths), _SEP.join([s[1] for s in sources]),
            _SEP.join([s[2] for s in sources]), bytes([s[3] for s in sources]), agents,
            bytes([at[s[4]] for s in sources]), array("q", ids).tobytes(), flat.tobytes(), starts.tobytes())


def decode(cols: Columns) -> tuple[Sources, array[int], array[int], array[int], array[int]]:
    """(the sources, their file ids, sizes, mtimes, offsets) of `encode`'s columns (ValueError: not
    such columns). The paths stay one text with each one's start, split only when every one is
    asked for (`Sources.paths`)."""
    paths, sessions, projects, subs, agents, which, ids, flat, at = cols
    split = (lambda text: text.split(_SEP)) if paths else (lambda _text: [])
    facts = array("q")
    facts.frombytes(flat)
    got = array("q")
    got.frombytes(ids)
    starts = array("q")
    starts.frombytes(at)
    out = Sources((paths, starts), split(sessions), split(projects), subs, agents, which)
    if not len(starts) == len(out.sessions) == len(got) == len(facts) // 3:
        raise ValueError("kept columns of unequal lengths")
    if starts and not (starts[0] == 0 and (len(starts) == 1 or 0 < starts[-1] < len(paths))
                       and (len(starts) == 1 or paths[starts[-1] - 1] == _SEP)):
        raise ValueError("kept paths cut short")  # (the text not the one the starts were made over)
    return out, got, facts[0::3], facts[1::3], facts[2::3]


if TYPE_CHECKING:
    _Facts = dict[int, Facts]
else:
    _Facts = dict


class KeptFacts(_Facts):
    """Each kept file's facts by its id, made when asked for (a warm run asks for those of the few
    sessions it compares); past `_ASKED` asked, every one at once. Facts set are kept as set."""

    _ASKED = 16

    def __init__(self, ids: array[int], sizes: array[int], mtimes: array[int], offsets: array[int]) -> None:
        super().__init__()
        self._ids, self._sizes, self._mtimes, self._offsets = ids, sizes, mtimes, offsets
        self._asked = 0

    def __missing__(self, fid: int) -> Facts:
        self._asked += 1
        if self._asked > self._ASKED:
            every = dict(zip(self._ids, zip(self._sizes, self._mtimes, self._offsets, strict=True), strict=True))
            every.update(self)  # (those set since are newer)
            self.update(every)
            return every[fid]
        try:
            k = self._ids.index(fid)
        except ValueError:
            raise KeyError(fid) from None
        got = self[fid] = (self._sizes[k], self._mtimes[k], self._offsets[k])
        return got


if TYPE_CHECKING:
    _Live = dict[str, int]
else:
    _Live = dict


class KeptLive(_Live):
    """Each kept source's file id by its path (`Index.refresh`'s `live` when the sources are the kept
    record's): the paths this run set or took out held in the table, every other one found in the
    record's paths when asked (a warm run asks for a few), so a large history's paths are neither
    split nor hashed into a table of thousands; past `_ASKED` searched for (a run that keys every
    session: a new `--since`, zone or guarded set), the whole table at once. Every path set must be
    one of the sources (it is counted as one). Walked whole (`values`, `items`, iteration), it
    becomes the whole table first (`whole`)."""

    _ASKED = 16  # paths searched for; past it, the whole table (a search is a pass over the text)

    def __init__(self, sources: Sources, ids: array[int]) -> None:
        super().__init__()
        self._sources, self._ids = sources, ids
        self._gone: set[str] = set()  # taken out (not set again since)
        self._whole = False
        self._asked = 0

    def whole(self) -> dict[str, int]:
        """Every source's path and id as a plain table, in the sources' order (a path set since
        where it was, with its new id; those taken out left out)."""
        if not self._whole:
            over = dict(dict.items(self))
            dict.clear(self)
            dict.update(self, zip(self._sources.paths, self._ids, strict=True))
            dict.update(self, over)
            for path in self._gone:
                dict.pop(self, path, None)
            self._whole = True
        return dict(dict.items(self))

    def _kept(self, path: object) -> int | None:
        if self._whole or not isinstance(path, str) or path in self._gone:
            return None
        self._asked += 1
        if self._asked > self._ASKED:  # a run that asks for every one (all sessions' keys): one table
            self.whole()
            got: int | None = dict.get(self, path)
            return got
        k = self._sources.find(path)
        return None if k is None else self._ids[k]

    def __missing__(self, path: str) -> int:
        fid = self._kept(path)
        if fid is None:
            raise KeyError(path)
        return fid

    def __contains__(self, path: object) -> bool:
        return dict.__contains__(self, path) or self._kept(path) is not None

    def get(self, path: str, default: Any = None) -> Any:
        return self[path] if path in self else default  # noqa: SIM401 (self.get is this)

    def __len__(self) -> int:
        return dict.__len__(self) if self._whole else len(self._sources) - len(self._gone)

    def __setitem__(self, path: str, fid: int) -> None:
        # (one of the sources: `refresh` sets only theirs; not searched for, as a full pass sets every one)
        self._gone.discard(path)
        dict.__setitem__(self, path, fid)

    def pop(self, path: str, *default: Any) -> Any:
        if path not in self:
            if default:
                return default[0]
            raise KeyError(path)
        fid = self[path]
        dict.pop(self, path, None)
        if not self._whole:
            self._gone.add(path)
        return fid

    def __delitem__(self, path: str) -> None:
        self.pop(path)

    def __iter__(self) -> Iterator[str]:
        return iter(self.whole())

    def keys(self) -> Any:
        return self.whole().keys()

    def values(self) -> Any:
        return self.whole().values()

    def items(self) -> Any:
        return self.whole().items()

    def __eq__(self, other: object) -> bool:
        return self.whole() == other

    __hash__ = None  # (a dict's)

    def __repr__(self) -> str:
        return repr(self.whole())


class Sources(Sequence[Source]):
    """Sources as columns: each one's path, session and project, whether it is a sub-agent's file,
    its agent (by its place in `agents`); a `Source` made only when one is asked for."""

    def __init__(self, paths: list[str] | tuple[str, array[int]], sessions: list[str], projects: list[str],
                 subs: bytes, agents: list[str | None], which: bytes) -> None:
        # the paths as a list, or (kept) as one text and each one's start in it
        self._paths: list[str] | None = paths if isinstance(paths, list) else None
        self._text: tuple[str, array[int]] | None = None if isinstance(paths, list) else paths
        self.sessions, self.projects, self.subs = sessions, projects, subs
        self.agents, self.which = agents, which

    @property
    def paths(self) -> list[str]:
        """Every one's path (the kept text split once, when first asked for)."""
        if self._paths is None:
            assert self._text is not None
            text = self._text[0]
            self._paths = text.split(_SEP) if text else []
        return self._paths

    def path(self, k: int) -> str:
        """The `k`-th one's path (cut from the kept text: no list of every path made)."""
        if self._paths is not None or self._text is None:
            return self.paths[k]
        text, starts = self._text
        k = range(len(starts))[k]  # (a negative place as a list takes it; IndexError past the end)
        path: str = text[starts[k]:starts[k + 1] - 1 if k + 1 < len(starts) else len(text)]
        return path

    def find(self, path: str) -> int | None:
        """The place of the first source of `path`, None when none is (the kept text searched at C
        speed: no table of every path made for a few asked)."""
        if self._text is None:
            try:
                return self.paths.index(path)
            except ValueError:
                return None
        text, starts = self._text
        if not path:  # (no path is empty: "" is found everywhere)
            return None
        at = text.find(path)
        while at >= 0:
            end = at + len(path)
            if (at == 0 or text[at - 1] == _SEP) and (end == len(text) or text[end] == _SEP):
                k = bisect_left(starts, at)  # a path starts there: one of the starts
                if k < len(starts) and starts[k] == at:  # (not so only in a damaged record)
                    return k
            at = text.find(path, at + 1)
        return None

    def __len__(self) -> int:
        return len(self.sessions)

    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self.sessions)))]
        return _new(Source, (self.path(k), self.sessions[k], self.projects[k], bool(self.subs[k]),
                             self.agents[self.which[k]]))

    def __iter__(self) -> Iterator[Source]:
        return map(_new, repeat(Source), zip(self.paths, self.sessions, self.projects, map(bool, self.subs),
                                             map(self.agents.__getitem__, self.which), strict=True))

    def head(self, n: int) -> Sources:
        """The first `n`."""
        if n == len(self):
            return self
        return Sources(self.paths[:n], self.sessions[:n], self.projects[:n], self.subs[:n], self.agents,
                       self.which[:n])

    def plus(self, more: list[Source]) -> Sources:
        """These, then `more`."""
        if not more:
            return self
        agents = list(self.agents)
        for s in more:
            if s[4] not in agents:
                agents.append(s[4])
        return Sources([*self.paths, *(s[0] for s in more)], [*self.sessions, *(s[1] for s in more)],
                       [*self.projects, *(s[2] for s in more)], self.subs + bytes([s[3] for s in more]), agents,
                       self.which + bytes([agents.index(s[4]) for s in more]))

    def counts(self) -> dict[str, int]:
        """How many sources each session has (counted when asked for: a warm run asks for a few)."""
        return _Counts(self.sessions)

    def by_agent(self) -> dict[str, str]:
        """The sessions of another agent than the fallback's: session -> its agent."""
        agents = self.agents
        if not any(agents):
            return {}
        return {sid: a for sid, w in zip(self.sessions, self.which, strict=True) if (a := agents[w])}


class _Counts(dict[str, int]):
    def __init__(self, sessions: list[str]) -> None:
        super().__init__()
        self._sessions = sessions

    def __missing__(self, sid: str) -> int:
        n = self[sid] = self._sessions.count(sid)
        return n


class Order(dict[str, list[Source]]):
    """Each session's sources (every one of `sources`), in the order of their first: the sessions
    at once, a session's list only when it is asked for (a warm run asks for those it folds or
    compares); past `_ASKED` of them, every list at once."""

    _ASKED = 32

    def __init__(self, sources: Sources) -> None:
        super().__init__(dict.fromkeys(sources.sessions))  # type: ignore[arg-type]  # placeholders: None
        self._sources = sources
        self._asked = 0

    def __getitem__(self, sid: str) -> list[Source]:
        got = super().__getitem__(sid)
        if got is not None:
            return got
        self._asked += 1
        if self._asked > self._ASKED:
            every: dict[str, list[Source]] = {}
            for src in self._sources:
                every.setdefault(src[1], []).append(src)
            self.update(every)
            return every[sid]
        sessions, found, at = self._sources.sessions, [], -1
        while True:
            try:
                at = sessions.index(sid, at + 1)
            except ValueError:
                break
            found.append(self._sources[at])
        self[sid] = found
        return found
