"""The last run's sources, their file ids and facts as one record (`Index.kept_sources`): columns, not
a tuple a file, so a large history's record is decoded by a few C-level steps (its paths, sessions
and projects as one text each, its ids and facts as arrays of 64-bit integers), not a Python
object a value; the sources stay columns (`Sources`), a `Source` made only for the files a run
looks at (those it `stat`s, the sessions it folds)."""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from itertools import repeat

from session_watcher.agents.source import Source

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator
    from typing import Any

Facts = tuple[int, int, int]  # a file's size, mtime (ns) and the offset read up to
Columns = tuple[str, str, str, bytes, list[str | None], bytes, bytes, bytes]
_SEP = "\0"  # in no path, session id or folder name
_new = tuple.__new__


def encode(sources: Sequence[Source], ids: Iterable[int], facts: list[Facts]) -> Columns:
    """`sources` (each one live, in order), their file ids and facts as columns (marshal data)."""
    agents: list[str | None] = list(dict.fromkeys(s[4] for s in sources))
    at = {a: k for k, a in enumerate(agents)}
    flat = array("q")
    for f in facts:
        flat.extend(f)
    return (_SEP.join([s[0] for s in sources]), _SEP.join([s[1] for s in sources]),
            _SEP.join([s[2] for s in sources]), bytes([s[3] for s in sources]), agents,
            bytes([at[s[4]] for s in sources]), array("q", ids).tobytes(), flat.tobytes())


def decode(cols: Columns) -> tuple[Sources, array[int], array[int], array[int], array[int]]:
    """(the sources, their file ids, sizes, mtimes, offsets) of `encode`'s columns."""
    paths, sessions, projects, subs, agents, which, ids, flat = cols
    split = (lambda text: text.split(_SEP)) if paths else (lambda _text: [])
    facts = array("q")
    facts.frombytes(flat)
    got = array("q")
    got.frombytes(ids)
    return (Sources(split(paths), split(sessions), split(projects), subs, agents, which), got,
            facts[0::3], facts[1::3], facts[2::3])


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


class Sources(Sequence[Source]):
    """Sources as columns: each one's path, session and project, whether it is a sub-agent's file,
    its agent (by its place in `agents`); a `Source` made only when one is asked for."""

    def __init__(self, paths: list[str], sessions: list[str], projects: list[str], subs: bytes,
                 agents: list[str | None], which: bytes) -> None:
        self.paths, self.sessions, self.projects, self.subs = paths, sessions, projects, subs
        self.agents, self.which = agents, which

    def __len__(self) -> int:
        return len(self.paths)

    def __getitem__(self, k: int | slice) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self.paths)))]
        return _new(Source, (self.paths[k], self.sessions[k], self.projects[k], bool(self.subs[k]),
                             self.agents[self.which[k]]))

    def __iter__(self) -> Iterator[Source]:
        return map(_new, repeat(Source), zip(self.paths, self.sessions, self.projects, map(bool, self.subs),
                                             map(self.agents.__getitem__, self.which), strict=True))

    def head(self, n: int) -> Sources:
        """The first `n`."""
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
