"""The lines of a chunk that hold a marker, found over the whole chunk: the one search of the two fast
parsers (`core.bulkparse` for replay, `reports.parse` for the report). Pure: bytes in, offsets out.

Most lines of a transcript hold none of the markers a parser looks for (tool output, text, progress
records): the search jumps from one marker to the next over the whole chunk, and only the lines it
lands in are cut out. Each marker is searched by stringzilla's SIMD `find` (the `fast` extra) where
it is installed, else by `bytes.find` (a marker that starts with a quote by `re`, which scans for its
rarer second byte): the same answers either way (tests/test_markscan.py). Not for hooks: they fold a
few lines, and the search costs an import they need not pay.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from typing import Any

    Find = Callable[[bytes | bytearray, int, int], int]

try:  # the same answers as bytes.find and bytes.count (tests/test_markscan.py)
    from stringzilla import count as _count
    from stringzilla import find as _find
except ImportError:  # the pure-Python search: bytes.find and re
    _find = _count = None
simd_find: Any = _find  # tests set them to None: the search as without the extra
simd_count: Any = _count

_QUOTE = ord('"')
_DIGITS = b"0123456789"
_non_digit: Any = None  # re.compile(rb"[^0-9]").search, made when first asked for (`re` is slow to import)


def finder(marker: bytes) -> Find:
    """`find(chunk, start, end)`: the first offset of `marker` in chunk[start:end], or -1."""
    simd = simd_find
    if simd is not None:
        return lambda chunk, start, end: simd(chunk, marker, start, end)
    if len(marker) < 2 or marker[0] != _QUOTE:
        return lambda chunk, start, end: chunk.find(marker, start, end)
    import re  # only without the extra (a process that needs no `re` imports none)

    search = re.compile(re.escape(marker[1:])).search  # `u` of `"usage"` is rarer than `"`

    def quoted(chunk: bytes | bytearray, start: int, end: int) -> int:
        m = search(chunk, start + 1, end)
        while m is not None:
            at = m.start() - 1
            if chunk[at] == _QUOTE:
                return at
            m = search(chunk, at + 2, end)
        return -1

    return quoted


def counter(pattern: bytes) -> Find | None:
    """`count(chunk, start, end)`: how many times `pattern` (one that cannot overlap itself) is in
    chunk[start:end], by stringzilla; None without it (bytes.count of two bytes is slower than a
    pass over the lines, which the callers then make)."""
    simd = simd_count
    if simd is None:
        return None
    return lambda chunk, start, end: simd(chunk, pattern, start, end)


def marked_lines(chunk: bytes | bytearray, finders: tuple[Find, ...], end: int, begin: int = 0,
                 ) -> Iterator[tuple[int, int, int]]:
    """(start, stop, which) of each line of chunk[begin:end] that holds a marker, in order: the line is
    chunk[start:stop] (without its newline; `end` is just past the last newline, `begin` a line's
    start) and bit i of `which` is set when the line holds marker i (`finders[i]`'s)."""
    if len(finders) == 2 and not begin:  # the report's: the same search, its two places held in locals
        return _two_marked_lines(chunk, finders[0], finders[1], end)
    if len(finders) == 4 and not begin:  # replay's: the same, its four places in locals
        return _four_marked_lines(chunk, finders, end)
    return _marked_lines(chunk, finders, end, begin)


def _marked_lines(chunk: bytes | bytearray, finders: tuple[Find, ...], end: int, begin: int = 0,
                  ) -> Iterator[tuple[int, int, int]]:
    rfind, find = chunk.rfind, chunk.find
    none = end + 1  # "not found": past every line, so `min` needs no test
    nxt = [f(chunk, begin, end) for f in finders]
    nxt = [none if got < 0 else got for got in nxt]
    bits = range(len(nxt))
    at = min(nxt, default=none)
    while at < none:  # each marker's next place is looked for again only once its line is passed
        stop = find(b"\n", at, end)
        if stop < 0:
            stop = end
        which = 0
        for i in bits:
            if nxt[i] < stop:
                which |= 1 << i
                got = finders[i](chunk, stop + 1, end)
                nxt[i] = none if got < 0 else got
        yield rfind(b"\n", 0, at) + 1, stop, which
        at = min(nxt)


def _two_marked_lines(chunk: bytes | bytearray, fa: Find, fb: Find, end: int) -> Iterator[tuple[int, int, int]]:
    """`_marked_lines` of two markers, written out."""
    rfind, find = chunk.rfind, chunk.find
    none = end + 1
    a, b = fa(chunk, 0, end), fb(chunk, 0, end)
    a, b = none if a < 0 else a, none if b < 0 else b
    at = min(a, b)
    while at < none:
        stop = find(b"\n", at, end)
        if stop < 0:
            stop = end
        which = 0
        if a < stop:
            which = 1
            a = fa(chunk, stop + 1, end)
            a = none if a < 0 else a
        if b < stop:
            which |= 2
            b = fb(chunk, stop + 1, end)
            b = none if b < 0 else b
        yield rfind(b"\n", 0, at) + 1, stop, which
        at = a if a < b else b


def _four_marked_lines(chunk: bytes | bytearray, finders: tuple[Find, ...], end: int) -> Iterator[tuple[int, int, int]]:
    """`_marked_lines` of four markers, written out (replay's, `transcript.MARKERS` in its order: the
    first two are most lines' markers, the last two seldom found: each looked for again only once
    passed, as there). Calling `_marked_lines` instead: the search alone 4.7 % of replay's parse of
    the fixtures, 2-3 % of replay by that share; replay end to end could not tell at that load
    (docs/benchmarks.md, 2026-12-07)."""
    rfind, find = chunk.rfind, chunk.find
    fa, fb, fc, fd = finders
    none = end + 1
    a, b, c, d = fa(chunk, 0, end), fb(chunk, 0, end), fc(chunk, 0, end), fd(chunk, 0, end)
    a, b, c, d = none if a < 0 else a, none if b < 0 else b, none if c < 0 else c, none if d < 0 else d
    rare = c if c < d else d
    at = a if a < b else b
    at = at if at < rare else rare
    while at < none:
        stop = find(b"\n", at, end)
        if stop < 0:
            stop = end
        which = 0
        if a < stop:
            which = 1
            a = fa(chunk, stop + 1, end)
            a = none if a < 0 else a
        if b < stop:
            which |= 2
            b = fb(chunk, stop + 1, end)
            b = none if b < 0 else b
        if rare < stop:
            if c < stop:
                which |= 4
                c = fc(chunk, stop + 1, end)
                c = none if c < 0 else c
            if d < stop:
                which |= 8
                d = fd(chunk, stop + 1, end)
                d = none if d < 0 else d
            rare = c if c < d else d
        yield rfind(b"\n", 0, at) + 1, stop, which
        at = a if a < b else b
        at = at if at < rare else rare


def _non_digit_search() -> Any:
    global _non_digit  # noqa: PLW0603 (made once, when a line first needs it)
    import re

    _non_digit = re.compile(rb"[^0-9]").search
    return _non_digit


def long_digit_run(line: bytes | bytearray, n: int) -> bool:
    """True when `line` holds a run of more than `n` digits (a chunk of lines: one of them does): such
    a run covers one of the bytes probed (every n-th), and from a probed digit only the bytes up to
    the run's end, and n before it, are looked at (a non-digit there, mostly the first byte looked
    at, ends the run short)."""
    probe = line[n - 1 :: n]
    if len(probe.translate(None, _DIGITS)) == len(probe):
        return False
    other = _non_digit or _non_digit_search()
    for k, ch in enumerate(probe):
        if 48 <= ch <= 57:
            at = n - 1 + k * n
            got = other(line, at)
            end = len(line) if got is None else got.start()  # the run holding `at` ends here
            if end - n - 1 >= 0 and other(line, end - n - 1, at) is None:
                return True
    return False
