"""The last run's sources, their file ids and facts as one record (`Index.kept_sources`): columns, not
a tuple a file, so a large history's record is decoded by a few C-level steps (its paths, sessions
and projects as one text each, its ids and facts as arrays of 64-bit integers), not a Python
object a value."""

from __future__ import annotations

from array import array
from itertools import repeat

from session_watcher.agents.source import Source

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Iterable

Facts = tuple[int, int, int]  # a file's size, mtime (ns) and the offset read up to
Columns = tuple[str, str, str, bytes, list[str | None], bytes, bytes, bytes]
_SEP = "\0"  # in no path, session id or folder name
_new = tuple.__new__


def encode(sources: list[Source], ids: Iterable[int], facts: list[Facts]) -> Columns:
    """`sources` (each one live, in order), their file ids and facts as columns (marshal data)."""
    agents: list[str | None] = list(dict.fromkeys(s[4] for s in sources))
    at = {a: k for k, a in enumerate(agents)}
    flat = array("q")
    for f in facts:
        flat.extend(f)
    return (_SEP.join([s[0] for s in sources]), _SEP.join([s[1] for s in sources]),
            _SEP.join([s[2] for s in sources]), bytes([s[3] for s in sources]), agents,
            bytes([at[s[4]] for s in sources]), array("q", ids).tobytes(), flat.tobytes())


def decode(cols: Columns) -> tuple[list[Source], list[int], list[int], list[int], list[int]]:
    """(the sources, their file ids, sizes, mtimes, offsets) of `encode`'s columns."""
    paths, sessions, projects, subs, agents, which, ids, flat = cols
    if not paths:
        return [], [], [], [], []
    rows = zip(paths.split(_SEP), sessions.split(_SEP), projects.split(_SEP), map(bool, subs),
               map(agents.__getitem__, which), strict=True)
    facts = array("q")
    facts.frombytes(flat)
    got = array("q")
    got.frombytes(ids)
    return (list(map(_new, repeat(Source), rows)), got.tolist(), facts[0::3].tolist(), facts[1::3].tolist(),
            facts[2::3].tolist())
