"""A kept report's text as stretches of files (`reports.stored`): what is cut from it is its bytes,
and a body of cuts and new bytes is told back as stretches that give the same bytes."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from session_watcher.reports import stored
from session_watcher.reports.stored import Text

DOC = bytes(range(256)) * 3


def held(cuts: list[int]) -> tuple[Text, dict[str, bytes]]:
    """DOC held in several files (each with other bytes before its stretch), and those files."""
    views, files, at = [], {}, 0
    for k, end in enumerate([*sorted({c % (len(DOC) + 1) for c in cuts}), len(DOC)]):
        files[f"f{k}"] = b"x" * k + DOC[at:end]
        views.append((f"f{k}", k, memoryview(files[f"f{k}"])[k:]))
        at = end
    return Text(views), files


SPANS = st.lists(st.tuples(st.integers(0, 768), st.integers(0, 768), st.binary(max_size=5)), max_size=12)


@given(st.lists(st.integers(0, 2000), max_size=stored.MAX_FILES - 2), SPANS)
@example([100, 300], [(50, 400, b","), (0, 768, b"")])
def test_cuts_are_the_texts_bytes_and_their_stretches_give_the_body(
        cuts: list[int], spans: list[tuple[int, int, bytes]]) -> None:
    text, files = held(cuts)
    assert len(text) == len(DOC)
    assert b"".join(text.pieces()) == DOC
    body: list[bytes | memoryview] = []
    for x, y, new in spans:
        a, b = min(x, y), max(x, y)
        got = text.cut(a, b)
        assert b"".join(got) == DOC[a:b]
        body += [*got, new]
    told = text.stretches(body, "new")
    assert told is not None
    stretches, new_pieces = told
    files["new"] = b"".join(new_pieces)
    assert b"".join(files[name][off:off + n] for name, off, n in stretches) == b"".join(body)
    assert all(n > 0 for _name, _off, n in stretches)


def test_a_body_held_in_too_many_files_is_written_whole() -> None:
    text, _files = held(list(range(1, 2 * stored.MAX_FILES)))
    body = text.cut(0, len(DOC))
    assert text.stretches(body, "new") is None
    few, _files = held([10])
    assert few.stretches(few.cut(0, len(DOC)), "new") == ([("f0", 0, 10), ("f1", 1, len(DOC) - 10)], [])
    assert few.stretches([b"abc", *few.cut(5, 20)], "new") == ([("new", 0, 3), ("f0", 5, 5), ("f1", 1, 10)], [b"abc"])


def test_a_text_the_database_held_is_written_whole() -> None:
    """A report the database kept (its folder could not be written) comes back as a text in no file
    (`Index.cached_report`: one view named ""): a body cut from it is written whole, never as
    stretches of a file named "" (the next run mapped the folder itself and built again from every part)."""
    text = Text([("", 0, memoryview(DOC))])
    body = [*text.cut(0, 100), b"new", *text.cut(200, 300)]
    assert text.stretches(body, "next") is None
