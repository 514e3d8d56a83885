"""A kept report's text as stretches of files (`Index.store_report`): the bytes a run made in a file of
its own, the stretches it took from the last document where they already are, in the files that
hold them. A warm run that changed one session writes that session's texts and the sums, not the
megabytes of the sessions it did not change; the stretches are mapped, never copied, and written
out as they are. A text held in more than `MAX_FILES` files or `MAX_STRETCHES` stretches is
written whole again."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    Piece = bytes | memoryview
    Stretch = tuple[str, int, int]  # a file's name, where in it, how many bytes

MAX_FILES = 8
MAX_STRETCHES = 4096


class Text:
    """A document's text: views of mapped files in order, each with its file's name and its place
    there. `cut` hands out views of it and remembers where each is from (`stretches`)."""

    def __init__(self, views: list[tuple[str, int, memoryview]]) -> None:
        self.views = views
        self.starts = list(accumulate([0] + [len(v) for _n, _o, v in views[:-1]])) if views else []
        self.size = sum(len(v) for _n, _o, v in views)
        self._from: dict[int, tuple[memoryview, str, int]] = {}  # id of a view handed out -> it, its file, place

    def __len__(self) -> int:
        return self.size

    def pieces(self) -> list[Piece]:
        return [v for _n, _o, v in self.views]

    def cut(self, a: int, b: int) -> list[Piece]:
        """The text from `a` to `b`, as views of its files."""
        out: list[Piece] = []
        k = bisect_right(self.starts, a) - 1
        while a < b:
            name, off, view = self.views[k]
            at = self.starts[k]
            lo, hi = a - at, min(b - at, len(view))
            piece = view[lo:hi]
            self._from[id(piece)] = (piece, name, off + lo)
            out.append(piece)
            a = at + hi
            k += 1
        return out

    def stretches(self, body: list[Piece], name: str) -> tuple[list[Stretch], list[Piece]] | None:
        """`body` as stretches of files: those cut from this text where they are, the others one after
        another in a new file `name` (returned, to be written); None when that would be held in too
        many files or stretches, or when this text is in no file (a report the database held: its
        views are named ""), then it is written whole."""
        if any(not view_name for view_name, _o, _v in self.views):
            return None
        out: list[Stretch] = []
        new: list[Piece] = []
        at = 0
        for piece in body:
            got = self._from.get(id(piece))
            if got is not None and got[0] is piece:
                file, off = got[1], got[2]
            else:
                file, off = name, at
                new.append(piece)
                at += len(piece)
            if out and out[-1][0] == file and out[-1][1] + out[-1][2] == off:
                out[-1] = (file, out[-1][1], out[-1][2] + len(piece))
            elif len(piece):
                out.append((file, off, len(piece)))
        if len(out) > MAX_STRETCHES or len({s[0] for s in out}) > MAX_FILES:
            return None
        return out, new


EMPTY = Text([])
