"""The report document kept merged between runs (`collect`): the sums over every session's `Part`
(gap buckets, days, causes, the totals) and, per session, where its texts (its entry, its cold
starts, its scatter) are in the last document. A warm run takes the changed sessions' old parts out,
puts their new ones in, and splices the other sessions' texts from the last document: it visits the
changed sessions, not every one. The USD sums are exact (`warmth.exact`), the warmths of a gap
bucket kept sorted, so a figure is the same whatever the order of adding and taking out; a run that
moves a TTL class's cache lifetime (every session's causes with it) builds from every part again.
The document equals `warmth.report_of_parts`' (tests/test_report_warm.py)."""

from __future__ import annotations

import marshal
from bisect import bisect_left, insort
from itertools import accumulate, compress, count

from session_watcher.agents import FALLBACK
from session_watcher.reports.fmt import CAUSES, week_of
from session_watcher.reports.jsontext import dumps
from session_watcher.reports.stored import EMPTY
from session_watcher.reports.warmth import (
    CLAUDE_CLASSES,
    DOCUMENTED_TTL,
    TTL_CLASSES,
    Obs,
    Part,
    assign_causes,
    cause_counts,
    causes_json,
    exact,
    gap_buckets,
    infer_ttl,
    largest_sentence,
    summarize_guard,
    tested_at_documented,
    totals_doc,
)

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    State = dict[str, Any]  # plain data (marshal): see `empty`
    # a session's entry, its cold starts in the window, its scatter (JSON, no brackets)
    Texts = tuple[bytes, bytes, bytes]
    Piece = bytes | memoryview  # of the document's text: a stretch of the last document's is a view of it, not a copy
    from session_watcher.reports.stored import Text

    Spans = tuple[int, list[str], list[int]]  # a list's first text in the document, its sessions, their texts' lengths


def empty() -> State:
    return {
        "gaps": {cls: {} for cls in TTL_CLASSES},  # bucket -> [warmths sorted, cold, shortest gaps, longest]
        "seen": {},  # TTL class of a cold start -> how many
        "days": {},  # day -> [cache read, cache write, sessions]
        "causes": [0] * len(CAUSES),  # the cold starts in the window by cause
        "calls": {},  # the guard's sessions' calls
        "byDay": {}, "byWeek": {}, "byProject": {}, "byAgent": {},  # [sessions, calls, USD, sub calls, USD]
        "where": {},  # project -> session -> which of the project's `names` it has
        "names": {},  # project -> the (name, cwd) its sessions have
        "undated": {},  # the sessions without a last activity (a set: session -> None)
        "named": {},  # project -> (name, cwd, last activity), as `warmth.totals` names it
        "sess": {},  # session -> its last activity (the sessions' order)
        "spans": [None, None, None],  # per text (`Texts`): where its list's texts are in the document (`Spans`)
        "lifetime": None,
        "key": None,  # the document's key in the index
    }


def _put(values: list[Any], x: Any, sign: int) -> None:
    if sign > 0:
        insort(values, x)
    else:
        del values[bisect_left(values, x)]


def _append(values: list[Any], x: Any, _sign: int) -> None:
    values.append(x)  # the cold build's: each list sorted once at the end (`build`)


def _sum(into: dict[Any, list[int]], key: Any, sessions: int, figures: tuple[int, int, int, int]) -> None:
    t = into.get(key)
    if t is None:
        t = into[key] = [0, 0, 0, 0, 0]
    t[0] += sessions
    t[1] += figures[0]
    t[2] += figures[1]
    t[3] += figures[2]
    t[4] += figures[3]
    if not t[0]:
        del into[key]


def _gaps(state: State, p: Part, sign: int, put: Any = _put) -> None:
    for cls in TTL_CLASSES:
        into = state["gaps"][cls]
        for k, (warmths, cold, lo, hi) in p.gaps[cls].items():
            b = into.get(k)
            if b is None:
                b = into[k] = [[], 0, [], []]
            if put is _append:  # the cold build's: sorted once at the end
                b[0] += warmths
            else:
                for w in warmths:
                    put(b[0], w, sign)
            b[1] += sign * cold
            put(b[2], lo, sign)
            put(b[3], hi, sign)
            if not b[0]:
                del into[k]
    seen = state["seen"]
    for o in p.colds:
        n = seen[o[4]] = seen.get(o[4], 0) + sign
        if not n:
            del seen[o[4]]
    days = state["days"]
    for day, (cr, cw) in p.days.items():
        d = days.get(day)
        if d is None:
            d = days[day] = [0, 0, 0]
        d[0] += sign * cr
        d[1] += sign * cw
        d[2] += sign
        if not d[2]:
            del days[day]


def _totals(state: State, sid: str, p: Part, sign: int, utc_offset: float | None) -> str:
    """`p`'s share of the totals added (`sign` 1) or taken out (-1), as `warmth.totals` adds it; its project."""
    e = p.entry
    where = e["cwd"] or e["project"]
    none = (0, 0, 0, 0)
    _sum(state["byAgent"], agent := e.get("agent") or FALLBACK.name, sign, none)
    _sum(state["byProject"], where, sign, none)
    weeks: dict[int, list[int]] = {}
    for day, (n, usd, side_n, side_usd) in p.spend.items():
        figures = (sign * n, sign * exact(usd), sign * side_n, sign * exact(side_usd))
        _sum(state["byDay"], day, sign, figures)
        _sum(state["byProject"], where, 0, figures)  # (taken out: gone with its count, or still counted)
        _sum(state["byAgent"], agent, 0, figures)
        week = week_of(day, utc_offset)
        w = weeks.setdefault(week, [0, 0, 0, 0])
        for i in range(4):
            w[i] += figures[i]
    for week, w in weeks.items():
        _sum(state["byWeek"], week, sign, (w[0], w[1], w[2], w[3]))
    mine = state["where"].setdefault(where, {})
    names = state["names"].setdefault(where, [])
    if sign > 0:
        named = (e["projectName"], e["cwd"])
        if named not in names:
            names.append(named)
        mine[sid] = names.index(named)
        if e["lastActivity"] is None:
            state["undated"][sid] = None
    else:
        del mine[sid]
        state["undated"].pop(sid, None)
        if not mine:
            del state["where"][where], state["names"][where]
    if p.calls is not None:
        if sign > 0:
            state["calls"][sid] = p.calls
        else:
            state["calls"].pop(sid, None)
    return str(where)


_FEW = 8  # folders whose sessions `_named` picks out of the report's order one by one


def _named(state: State, wheres: set[str], order: list[str]) -> None:
    """Each of `wheres`' name, folder and last activity, from its sessions in the report's order
    (`order`: a few folders' sessions picked out of it at C speed, many by a table of places)."""
    at = {sid: i for i, sid in enumerate(order)} if len(wheres) > _FEW else None
    for where in wheres:
        mine = state["where"].get(where)
        if not mine:
            state["named"].pop(where, None)
            continue
        name: tuple[str, str | None, float | None] = ("", None, None)
        names, undated, sess = state["names"][where], state["undated"], state["sess"]
        for sid in sorted(mine, key=at.__getitem__) if at is not None else filter(mine.__contains__, order):
            project, cwd = names[mine[sid]]
            activity = None if sid in undated else sess[sid]
            last = name[2]
            name = (project, cwd, activity if last is None or (activity or 0) > last else last)
        state["named"][where] = name


def session_texts(sid: str, p: Part, lifetime: dict[str, float]) -> tuple[Texts, list[int]]:
    """A session's texts in the document, and its cold starts in the window by cause."""
    mine = [Obs(sid, *o) for o in p.colds]
    assign_causes(mine, lifetime)
    sentence, cause = largest_sentence(p.entry, mine)
    assert p.text is not None
    entry = (f"{p.text[0]}{causes_json(cause_counts(mine))}{p.text[1]}{dumps(sentence)},"
             f'"largestGapCause":{dumps(cause)}{p.text[2]}')
    window = [o for o in mine if o.in_window]
    colds = ",".join(dumps({"sessionId": o.session_id, "callIndex": o.index, "ts": o.ts, "gapSeconds": o.gap,
                            "warmth": o.warmth, "ttl": o.ttl_class, "cause": o.cause, "alsoApplies": o.also})
                     for o in window)
    return (entry.encode(), colds.encode(), str(p.scatter).encode()), cause_counts(window)


def inference(state: State) -> tuple[list[str], list[dict[str, Any]], dict[str, Any], dict[str, Any], dict[str, float]]:
    """The TTL classes shown, the gap buckets' table, the inferred TTLs, the documented TTLs' tests
    and the cache lifetimes, from the kept buckets (as `warmth.report_of_parts`)."""
    from session_watcher.core.eoq import cache_lifetime

    gaps = {cls: {k: [b[0], b[1], b[2][0], b[3][-1]] for k, b in state["gaps"][cls].items()} for cls in TTL_CLASSES}
    classes = [cls for cls in TTL_CLASSES if cls in CLAUDE_CLASSES or gaps[cls] or cls in state["seen"]]
    buckets: list[dict[str, Any]] = []
    ttl: dict[str, Any] = {}
    documented: dict[str, Any] = {}
    for cls in classes:
        b = gap_buckets(gaps[cls], cls)
        buckets.extend(b)
        ttl[cls] = infer_ttl(gaps[cls], b, cls)
        documented[cls] = {"seconds": DOCUMENTED_TTL[cls], **tested_at_documented(gaps[cls], b, cls)}
    cliff = {cls: (v["inferredSeconds"] if v is not None else None) for cls, v in ttl.items()}
    lifetime = {cls: cache_lifetime(cls, cliff) or float(DOCUMENTED_TTL[cls]) for cls in classes}
    return classes, buckets, ttl, documented, lifetime


class Doc:
    """The document's text built from `state` (`body`: UTF-8 in pieces, without the clock fields,
    left open, `days` last), each session's texts from `fresh` or, for the others, `old` (the last
    document): the pieces are written out as they are, a large history's text never joined."""

    def __init__(self, state: State, order: list[str], fresh: dict[str, Texts], old: Text,  # noqa: PLR0913, PLR0917
                 warnings: list[dict[str, Any]], since: float | None, utc_offset: float | None,
                 moved: Iterable[str] = ()) -> None:
        classes, buckets, ttl, documented, lifetime = state.pop("inferred")
        self.ttl = ttl
        sess = state["sess"]
        # this run's sessions in the order of the last run's (as one text: compared at C speed): then
        # each list holds the others in the order it held them, the ranking only the `moved` placed again
        joined = "\0".join(order)  # a session id is a file's name: no NUL in it
        same = bool(old) and state.get("order") == joined
        state["order"] = joined
        was = state["spans"][0]
        ranked = _ranked(was[1], sess, moved, len(order)) if same and was is not None else None
        causes = dict(zip(CAUSES, state["causes"], strict=True))
        n = sum(state["causes"])
        days = state["days"]

        def warmth(lo: int, hi: int) -> float | None:
            cr = sum(v[0] for d, v in days.items() if lo <= d < hi)
            cw = sum(v[1] for d, v in days.items() if lo <= d < hi)
            return cr / (cr + cw) if cr + cw else None

        self.days = dumps([[d, v[0], v[1]] for d, v in sorted(days.items())])
        members: list[tuple[str, Any]] = [
            ("schema", 1), ("since", since),
            ("sessions", (ranked or sorted(order, key=sess.__getitem__, reverse=True), 0,
                          ranked is not None and was is not None and ranked is was[1])),
            ("coldStarts", n), ("causes", causes),
            ("causeShares", {k: (v / n if n else None) for k, v in causes.items()}),
            ("coldStartList", (order, 1, same)),
            ("idleGapRule", {cls: {"seconds": lifetime[cls], "from": "inferred" if ttl[cls] is not None else "ttl"}
                             for cls in classes}),
            ("gapBuckets", buckets), ("ttl", ttl), ("guard", summarize_guard(warnings, state["calls"], since)),
            ("documentedTtl", documented),
            ("totals", totals_doc(state["byDay"], state["byWeek"], state["byProject"], state["byAgent"],
                                  state["named"], warmth, utc_offset)),
            ("scatter", (order, 2, same)),
        ]
        out: list[Piece] = []
        pos = 0
        for k, v in members:
            head = f'{"," if out else "{"}"{k}":'.encode()
            out.append(head)
            pos += len(head)
            if isinstance(v, tuple):
                pos = _list(out, pos, v[0], fresh, old, state["spans"], v[1], v[2])
            else:
                text = dumps(v).encode()
                out.append(text)
                pos += len(text)
        out.append(b',"days":' + self.days.encode())
        self.body = out
        state["lifetime"] = lifetime



def _list(out: list[Piece], pos: int, order: list[str], fresh: dict[str, Texts], old: Text,  # noqa: PLR0913, PLR0917
          spans: list[Spans | None], slot: int, same: bool = False) -> int:
    """A JSON array of each session's text `slot` (those not empty), from `fresh` or the `old`
    document, at `pos` of the document; the list's spans kept for the next run. Between two fresh
    texts the others are, as a rule, in the order they had: such a run is one view of the old text.
    `same`: the sessions of `order` in the list are in the order the last run's list had them."""
    was = spans[slot]
    if (same and was is not None and old and len(fresh) <= _IN_PLACE
            and all((sid in was[1]) == bool(texts[slot]) for sid, texts in fresh.items())):
        seq, lengths = was[1], _in_place(out, fresh, old, was, slot)  # none came into or left it
    elif not old or was is None:
        texts = [fresh[sid][slot] for sid in order]
        seq = [sid for sid, text in zip(order, texts, strict=True) if text]
        lengths = [len(text) for text in texts if text]
        out.append(b"[" + b",".join([text for text in texts if text]) + b"]")
    else:
        first, sids, lens = was
        at = dict(zip(sids, range(len(sids)), strict=True))
        # each step one pass at C speed where it can be (a large history's lists are tens of thousands)
        if all((sid in at) == bool(texts[slot]) for sid, texts in fresh.items()):  # none came into or left it
            seq = list(filter(at.__contains__, order))
        else:
            seq = [sid for sid in order if (fresh[sid][slot] if sid in fresh else sid in at)]
        starts = list(accumulate(map((1).__add__, lens[:-1]), initial=first))  # each text's, a comma between
        pieces: list[list[Piece]] = []  # a text each, or a stretch of texts (the views of the files holding it)
        lengths = []
        cut = list(compress(count(), map(fresh.__contains__, seq)))
        for a, b in zip([0] + [i + 1 for i in cut], [*cut, len(seq)], strict=True):
            _copy(seq[a:b], at, sids, starts, lens, old, pieces, lengths)
            if b < len(seq):
                text = fresh[seq[b]][slot]
                pieces.append([text])
                lengths.append(len(text))
        out.append(b"[")
        for k, piece in enumerate(pieces):
            if k:
                out.append(b",")
            out += piece
        out.append(b"]")
    spans[slot] = (pos + 1, seq, lengths)
    return pos + 2 + sum(lengths) + max(0, len(lengths) - 1)


_IN_PLACE = 16  # at most this many changed sessions found by a pass over a list each, not by a table


def _in_place(out: list[Piece], fresh: dict[str, Texts], old: Text, was: Spans, slot: int) -> list[int]:
    """`_list`'s array when it holds the sessions it held, in their order: the old text's stretches
    between the fresh texts (the same views `_copy` cuts), without a table of the list's places."""
    first, sids, lens = was
    lengths = list(lens)
    out.append(b"[")
    at, start = 0, first  # the next session's place in the list, and its old text's start
    for k in [*sorted([sids.index(sid) for sid, texts in fresh.items() if texts[slot]]), len(sids)]:
        if k > at:
            if at:
                out.append(b",")
            out += old.cut(start, start + sum(lens[at:k]) + k - at - 1)
        if k < len(sids):
            text = fresh[sids[k]][slot]
            if k:
                out.append(b",")
            out.append(text)
            lengths[k] = len(text)
            start += sum(lens[at:k + 1]) + k + 1 - at
            at = k + 1
    out.append(b"]")
    return lengths


def _ranked(prev: list[str], sess: dict[str, float], moved: Iterable[str], n: int) -> list[str] | None:
    """`sorted(order, key=sess.__getitem__, reverse=True)` of this run's `n` sessions from `prev`,
    the last run's, when the order is as it was then: only the `moved` sessions (changed or gone)
    placed again. `prev` itself when each of them stays where it was; None when one is not in
    `prev` or ties another's last activity (the stable sort then places it by the order)."""
    if len(prev) != n:  # (a session gone is not in this run's: then placed again, below)
        return None
    key = sess.__getitem__
    moved = list(moved)
    try:
        places = [prev.index(sid) for sid in moved]
    except ValueError:  # a session the last ranking did not hold
        return None
    if all(sid in sess and (i == 0 or key(prev[i - 1]) > key(sid)) and (i == n - 1 or key(sid) > key(prev[i + 1]))
           for sid, i in zip(moved, places, strict=True)):
        return prev
    if len(moved) == 1:
        seq = prev[:]
        del seq[places[0]]
    else:
        out = set(moved)
        seq = [sid for sid in prev if sid not in out]
    for sid in moved:
        if sid not in sess:  # gone
            continue
        a = sess[sid]
        i = bisect_left(seq, -a, key=lambda s: -key(s))  # the first not newer
        if i < len(seq) and key(seq[i]) == a:
            return None
        seq.insert(i, sid)
    return seq if len(seq) == n else None


def _copy(run: list[str], at: dict[str, int], sids: list[str], starts: list[int], lens: list[int],  # noqa: PLR0913, PLR0917
          old: Text, pieces: list[list[Piece]], lengths: list[int]) -> None:
    """The old texts of `run` (sessions not changed) onto `pieces`, each stretch of them that
    followed one another in the old list as one slice."""
    i = 0
    while i < len(run):
        k = at[run[i]]
        n = len(run) - i
        if sids[k:k + n] != run[i:]:  # some moved: the longest stretch from here that did not
            n = 1
            while i + n < len(run) and k + n < len(sids) and sids[k + n] == run[i + n]:
                n += 1
        pieces.append(old.cut(starts[k], starts[k + n - 1] + lens[k + n - 1]))
        lengths += lens[k:k + n]
        i += n


def build(parts: dict[str, Part], order: list[str], warnings: list[dict[str, Any]], since: float | None,
          utc_offset: float | None) -> tuple[State, Doc]:
    """The state and document from every kept session's part (`order`: the sessions, in order)."""
    state = empty()
    wheres = {_add(state, sid, parts[sid], utc_offset, _append) for sid in order}
    for buckets in state["gaps"].values():  # sorted once: the lists `insort` gives, one by one (a stable sort)
        for b in buckets.values():
            b[0].sort()
            b[2].sort()
            b[3].sort()
    _named(state, wheres, order)
    state["inferred"] = inferred = inference(state)
    lifetime = inferred[4]
    fresh: dict[str, Texts] = {}
    for sid in order:
        fresh[sid], counts = session_texts(sid, parts[sid], lifetime)
        _causes(state, counts, 1)
    return state, Doc(state, order, fresh, EMPTY, warnings, since, utc_offset)


def update(state: State, old_doc: Text, old: dict[str, Part], new: dict[str, Part], order: list[str],  # noqa: PLR0913, PLR0917
           warnings: list[dict[str, Any]], since: float | None, utc_offset: float | None) -> Doc | None:
    """`state` with the `old` parts of the changed sessions taken out and their `new` ones put in, and
    the document; None when that moves a cache lifetime (then `build`)."""
    wheres = set()
    for sid, p in old.items():
        wheres.add(_totals(state, sid, p, -1, utc_offset))
        _gaps(state, p, -1)
        try:  # as they were put in: with the sums' lifetime
            _causes(state, window_counts(sid, p, state["lifetime"]), -1)
        except (KeyError, TypeError):  # sums of another lifetime than their parts': from every part
            return None
        del state["sess"][sid]
    wheres |= {_add(state, sid, p, utc_offset) for sid, p in new.items()}
    state["inferred"] = inferred = inference(state)
    lifetime = inferred[4]
    if lifetime != state["lifetime"]:
        return None
    _named(state, wheres, order)
    fresh: dict[str, Texts] = {}
    for sid, p in new.items():
        fresh[sid], counts = session_texts(sid, p, lifetime)
        _causes(state, counts, 1)
    return Doc(state, order, fresh, old_doc, warnings, since, utc_offset, {*old, *new})


def _add(state: State, sid: str, p: Part, utc_offset: float | None, put: Any = _put) -> str:
    _gaps(state, p, 1, put)
    state["sess"][sid] = float(p.entry["lastActivity"] or 0.0)
    return _totals(state, sid, p, 1, utc_offset)


def _causes(state: State, counts: list[int], sign: int) -> None:
    for i, n in enumerate(counts):
        state["causes"][i] += sign * n


def window_counts(sid: str, p: Part, lifetime: dict[str, float]) -> list[int]:
    """A session's cold starts in the window by cause (`session_texts`' counts, without its texts):
    every session's in the kept sums were counted with the sums' lifetime (a run that moves it
    builds from every part), so a part taken out takes out what it put in."""
    mine = [Obs(sid, *o) for o in p.colds]
    assign_causes(mine, lifetime)
    return cause_counts([o for o in mine if o.in_window])


if TYPE_CHECKING:
    _Dict = dict[str, Any]
else:
    _Dict = dict


class _Packed(_Dict):
    """Each folder's sessions as kept (`dump`): one folder's decoded when it is asked for, so a warm
    run decodes and encodes again only the folders of the sessions it changed."""

    def __getitem__(self, key: str) -> Any:
        value = super().__getitem__(key)
        if isinstance(value, bytes):
            value = marshal.loads(value)  # noqa: S302 (our own 0600 cache's plain data)
            super().__setitem__(key, value)
        return value

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default  # noqa: SIM401 (self.get is this)

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key in self:
            return self[key]
        self[key] = default
        return default


def dump(state: State) -> bytes:
    """The sums as kept between runs (marshal data), each folder's sessions packed on their own."""
    where = {k: v if isinstance(v, bytes) else marshal.dumps(v) for k, v in dict.items(state["where"])}
    return marshal.dumps({**state, "where": where})


def load(data: bytes | memoryview) -> State:
    """`dump`'s sums."""
    state: State = marshal.loads(data)  # noqa: S302 (our own 0600 cache's plain data)
    state["where"] = _Packed(state["where"])
    state.pop("counts", None)  # (kept by sessions before: counted again from a part now)
    return state
