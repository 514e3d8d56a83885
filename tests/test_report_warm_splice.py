"""The warm report's lists spliced from the last document (`merge._list`): the unchanged sessions'
texts copied by stretches, the changed ones written, the same bytes as a list written whole,
whatever moved, came, went or emptied."""

from __future__ import annotations

from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from session_watcher.reports import merge
from session_watcher.reports.stored import EMPTY, Text

SIDS = [f"s{i}" for i in range(12)]


def texts_of(versions: dict[str, int], empty: set[str]) -> dict[str, merge.Texts]:
    """Each session's three texts at its version (one of them empty where `empty` says)."""
    return {sid: (f'{{"e":"{sid}.{v}"}}'.encode(), b"" if sid in empty else f'{{"c":"{sid}.{v}"}}'.encode(),
                  f"[{v},{len(sid)}]".encode()) for sid, v in versions.items()}


def whole(order: list[str], texts: dict[str, merge.Texts]) -> tuple[bytes, list[Any]]:
    """The three lists written from every text (a cold build's), and their spans."""
    out: list[merge.Piece] = [b'{"head":1']
    pos = len(out[0])
    spans: list[Any] = [None, None, None]
    for slot in range(3):
        out.append(b',"l":')
        pos = merge._list(out, pos + 5, order, texts, EMPTY, spans, slot)
    return b"".join(out), spans


def held_in_files(doc: bytes, cuts: list[int]) -> Text:
    """`doc` as the stretches of several files a kept report's text is (`reports.stored`)."""
    views = []
    at = 0
    for k, end in enumerate([*sorted({c % (len(doc) + 1) for c in cuts}), len(doc)]):
        views.append((f"f{k}", 7 * k, memoryview(doc)[at:end]))
        at = end
    return Text(views)


@given(st.permutations(SIDS), st.lists(st.sampled_from(SIDS), unique=True, max_size=6),
       st.sets(st.sampled_from(SIDS)), st.sets(st.sampled_from(SIDS)), st.integers(0, 12), st.integers(0, 12),
       st.lists(st.integers(0, 10_000), max_size=8))
@example(SIDS, [], set(), set(), 12, 12, [])  # nothing changed: each list one slice
@example(SIDS[::-1], [], set(), set(), 12, 12, [])  # every session moved
@example(SIDS, ["s3"], set(), {"s3"}, 12, 12, [])  # the changed one's text emptied
@example(SIDS, ["s0"], set(), set(), 12, 9, [])  # the last three gone
@example(SIDS, ["s3"], set(), set(), 12, 12, [40, 41, 90, 200])  # the last text held in several files
def test_a_spliced_list_is_a_list_written_whole(
        new_order: list[str], changed: list[str], empty_before: set[str], empty_after: set[str], kept_before: int,
        kept_after: int, cuts: list[int]) -> None:
    before_order = SIDS[:kept_before]
    before = texts_of(dict.fromkeys(before_order, 0), empty_before)
    old_doc, spans = whole(before_order, before)
    order = new_order[:kept_after]
    after_versions = {sid: (1 if sid in changed or sid not in before else 0) for sid in order}
    after = texts_of(after_versions, empty_before | empty_after)
    for sid in order:  # only the changed (or new) sessions' emptiness may differ
        if after_versions[sid] == 0:
            after[sid] = before[sid]
    fresh = {sid: after[sid] for sid in order if after_versions[sid]}
    want, want_spans = whole(order, after)
    out: list[merge.Piece] = [b'{"head":1']
    pos = len(out[0])
    for slot in range(3):
        out.append(b',"l":')
        pos = merge._list(out, pos + 5, order, fresh, held_in_files(old_doc, cuts), spans, slot)
        assert pos == sum(len(piece) for piece in out)
    assert b"".join(out) == want
    assert spans == want_spans  # the next run splices from these


@given(st.lists(st.tuples(st.sampled_from(SIDS), st.sampled_from(["p", "q", "r"]), st.sampled_from(["a", "b"]),
                          st.one_of(st.none(), st.floats(0, 100))), unique_by=lambda t: t[0], min_size=1),
       st.randoms(use_true_random=False))
def test_a_folders_name_is_the_same_picked_one_by_one_or_by_a_table(
        sessions: list[tuple[str, str, str, float | None]], rnd: Any) -> None:
    """`merge._named`: a few folders' sessions picked out of the report's order, or many by a table
    of their places, name each folder the same."""
    order = [s[0] for s in sessions]
    rnd.shuffle(order)
    state: Any = merge.empty()
    for sid, where, name, activity in sessions:
        names = state["names"].setdefault(where, [])
        if (name, None) not in names:
            names.append((name, None))
        state["where"].setdefault(where, {})[sid] = names.index((name, None))
        state["sess"][sid] = activity or 0.0
        if activity is None:
            state["undated"][sid] = None
    wheres = {s[1] for s in sessions}
    merge._named(state, wheres, order)
    few = dict(state["named"])
    state["named"] = {}
    merge._named(state, wheres | {f"gone{k}" for k in range(merge._FEW)}, order)  # past _FEW: the table
    assert state["named"] == few


@given(st.permutations(SIDS), st.lists(st.sampled_from(SIDS), unique=True, max_size=6),
       st.sets(st.sampled_from(SIDS)), st.sets(st.sampled_from(SIDS)), st.lists(st.integers(0, 10_000), max_size=8))
@example(SIDS, [], set(), set(), [])  # nothing changed: each list one slice
@example(SIDS, ["s0", "s11"], set(), set(), [])  # the first and the last
@example(SIDS, ["s3", "s4"], {"s0"}, set(), [40, 41, 90, 200])  # side by side, held in several files
@example(SIDS, ["s3"], {"s3"}, {"s3"}, [])  # empty before and after: in no list
def test_a_list_spliced_in_place_is_a_list_written_whole(
        order: list[str], changed: list[str], empty: set[str], empty_after: set[str], cuts: list[int]) -> None:
    """`merge._in_place`: the sessions in the order of the last run's, the changed ones neither
    coming into nor leaving a list (`_list`'s `same`): the same bytes and spans as written whole."""
    before = texts_of(dict.fromkeys(order, 0), empty)
    old_doc, spans = whole(order, before)
    kept = {**before, **texts_of(dict.fromkeys(changed, 1), empty | (empty_after & set(changed)))}
    fresh = {sid: kept[sid] for sid in changed}
    want, want_spans = whole(order, kept)
    out: list[merge.Piece] = [b'{"head":1']
    pos = len(out[0])
    for slot in range(3):
        out.append(b',"l":')
        pos = merge._list(out, pos + 5, order, fresh, held_in_files(old_doc, cuts), spans, slot, same=True)
        assert pos == sum(len(piece) for piece in out)
    assert b"".join(out) == want
    assert spans == want_spans


@given(st.permutations(SIDS), st.lists(st.integers(0, 4), min_size=12, max_size=12),
       st.dictionaries(st.sampled_from(SIDS), st.integers(0, 5), max_size=4))
@example(SIDS, list(range(12)), {}, )  # nothing moved: the last ranking itself
@example(SIDS, list(range(12)), {"s3": 11.5})  # one moves to the top
@example(SIDS, list(range(12)), {"s11": -1, "s0": 3.5})  # two move
@example(SIDS, [0] * 12, {"s3": 1})  # ties between the others
@example(SIDS, list(range(12)), {"s3": 5})  # ties another's: the order breaks it
def test_a_ranking_placed_again_is_the_ranking_sorted(
        order: list[str], before: list[float], moved: dict[str, float]) -> None:
    """`merge._ranked`: the sessions by last activity from the last run's ranking, only the moved
    ones placed again, equal the stable sort of this run's order, or say it needs one (None)."""
    sess = dict(zip(order, map(float, before), strict=True))
    prev = sorted(order, key=sess.__getitem__, reverse=True)
    sess |= {sid: float(v) for sid, v in moved.items()}
    got = merge._ranked(prev, sess, moved, len(order))
    want = sorted(order, key=sess.__getitem__, reverse=True)
    assert got is None or got == want
    activities = [sess[sid] for sid in order]
    if len(set(activities)) == len(activities):  # no tie: placed without the order
        assert got == want
    if not moved:
        assert got is prev
