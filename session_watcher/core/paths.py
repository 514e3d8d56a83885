"""The path map: per-file token estimates (SPEC "Baseline B and the path map"). Pure.

A path's total = tokens of the distinct lines read + tool overhead per call + pending edit estimate
- calibration correction, floored at 0. Lines are tracked as merged [start, end) ranges so a Read
with offset/limit adds only lines not seen before. Estimates come from characters with a
chars-per-token ratio calibrated per session (see `chars_per_token`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from session_watcher.core.shapes import Cal, PathEntry

CPT_DEFAULT = 3.5  # chars per token before calibration: typical for code and English prose
CPT_MIN, CPT_MAX = 2.0, 8.0
CPT_PRIOR_TOKENS = 2000.0  # weight of the default against the session's own evidence
LINE_PREFIX_CHARS = 7  # the Read tool shows each line behind a right-aligned number and a tab/arrow
TOOL_OVERHEAD = 40  # tokens of one tool call's framing: the tool_use block and the result wrapper


def chars_per_token(cal: Cal) -> float:
    """The default blended with evidence from settled ledger entries (chars per observed token)."""
    chars = CPT_PRIOR_TOKENS * CPT_DEFAULT + cal.get("chars", 0.0)
    tokens = CPT_PRIOR_TOKENS + cal.get("tokens", 0.0)
    return min(CPT_MAX, max(CPT_MIN, chars / tokens))


def new_entry(reason: str | None) -> PathEntry:
    return {"lines": 0, "ranges": [], "overhead": 0, "pendingEdit": 0, "calibration": 0,
            "tokens": 0, "reason": reason, "include": reason is None, "reads": 0, "edited": False}


def total(entry: PathEntry) -> int:
    raw = entry["lines"] + entry["overhead"] + entry["pendingEdit"] - entry["calibration"]
    return max(0, raw)


MAX_RANGES = 1024  # a file's read ranges kept; past it, the nearest ones join (see `_coarsen`)


def add_lines(entry: PathEntry, start: int, content: str) -> int:
    """Count the lines of a Read result not counted before; returns the characters added.

    The ranges are sorted and disjoint: the ones a Read meets are found by bisection, so a file
    read 20,000 times a line at a time costs O(log n) a Read, not O(n). Only a Read that meets
    counted lines splits its text; another's lines are counted whole."""
    breaks = content.count("\n")
    trailing = content.endswith("\n")  # a trailing newline ends the last line; it is not another line
    end = start + breaks + (not trailing)
    ranges = entry["ranges"]
    i, j = _touching(ranges, start, end)
    if all(a >= end or b <= start for a, b in ranges[i:j]):  # none of its lines counted before
        added = len(content) - breaks + (end - start) * (LINE_PREFIX_CHARS + 1)
    else:
        lines = content.split("\n")
        if trailing:
            lines.pop()
        added = _uncounted(ranges[i:j], lines, start)
    _place(ranges, i, j, start, end)
    if len(ranges) > MAX_RANGES:
        entry["ranges"] = _coarsen(ranges, MAX_RANGES // 2)
    return added


def _uncounted(met: list[list[int]], lines: list[str], start: int) -> int:
    """What the Read's `lines` (from line `start`) outside the counted ranges it meets cost."""
    end = start + len(lines)
    added = 0
    pos = start
    for a, b in met:
        if a > pos:
            added += _chars(lines, pos - start, min(a, end) - start)
        pos = max(pos, b)
    if end > pos:
        added += _chars(lines, pos - start, end - start)
    return added


def _chars(lines: list[str], i: int, j: int) -> int:
    """What lines[i:j] cost as the Read tool shows them: each with its number prefix and newline."""
    return sum(map(len, lines[i:j])) + (j - i) * (LINE_PREFIX_CHARS + 1)


def _touching(ranges: list[list[int]], start: int, end: int) -> tuple[int, int]:
    """ranges[i:j] are those [start, end) overlaps or touches: each ends at or after `start` and
    begins at or before `end`. Two bisections, written out (`bisect` is an import the hooks skip)."""
    lo, hi = 0, len(ranges)
    while lo < hi:  # the first range ending at or after start
        mid = (lo + hi) // 2
        if ranges[mid][1] < start:
            lo = mid + 1
        else:
            hi = mid
    i, hi = lo, len(ranges)
    while lo < hi:  # the first range beginning after end
        mid = (lo + hi) // 2
        if ranges[mid][0] <= end:
            lo = mid + 1
        else:
            hi = mid
    return i, lo


def _place(ranges: list[list[int]], i: int, j: int, start: int, end: int) -> None:
    """Replace ranges[i:j] (those [start, end) touches) by their union with it, in place."""
    if j > i:
        start, end = min(start, ranges[i][0]), max(end, ranges[j - 1][1])
    ranges[i:j] = [[start, end]]


def _coarsen(ranges: list[list[int]], keep: int) -> list[list[int]]:
    """`ranges` joined across their smallest gaps down to `keep` ranges (ties: the earlier gap):
    the lines in a joined gap count as read. Once in `keep` Reads past MAX_RANGES, O(n log n)."""
    gaps = sorted(range(1, len(ranges)), key=lambda k: (ranges[k][0] - ranges[k - 1][1], k))
    joined = set(gaps[: len(ranges) - keep])
    out: list[list[int]] = []
    for k, r in enumerate(ranges):
        if k in joined:
            out[-1][1] = r[1]
        else:
            out.append([r[0], r[1]])
    return out


def windows_form(path: str) -> bool:
    """A Windows path, read on any system: a drive letter (`D:\\x`, `D:/x`, `D:`) or a UNC share
    (`\\\\server\\share`). Claude Code on Windows writes these into transcripts and payloads."""
    return (len(path) >= 2 and path[1] == ":" and path[0].isascii() and path[0].isalpha()) or path.startswith("\\\\")


def windows_canonical(raw: str, cwd: str | None) -> str:
    """`raw` as one Windows path, on any system: joined to `cwd` when relative, `.` and `..` folded,
    `\\` separators, the drive letter upper case. No disk is asked (a Windows path read elsewhere has
    none); Windows compares paths without case, and so does `relative`."""
    import ntpath  # only for Windows paths: posixpath is the os.path a POSIX hook has loaded

    path = ntpath.normpath(raw if windows_form(raw) else ntpath.join(cwd or "", raw))
    return path[0].upper() + path[1:] if path[1:2] == ":" else path


def relative(path: str, root: str | None) -> str | None:
    """`path` relative to `root` (with `/` separators), or None when it lies outside. A Windows root
    or path is compared as Windows does: either separator, without case (`C:\\Users\\x` lies outside
    `D:\\proj`, and outside any POSIX root)."""
    if not root:
        return None
    if windows_form(root) or windows_form(path):
        return _relative_windows(path, root)
    root = root.rstrip("/") or "/"
    if path == root:
        return ""
    prefix = root if root.endswith("/") else root + "/"
    return path[len(prefix):] if path.startswith(prefix) else None


def _relative_windows(path: str, root: str) -> str | None:
    if not (windows_form(root) and windows_form(path)):
        return None
    p, r = path.replace("/", "\\"), root.replace("/", "\\").rstrip("\\")
    if p.lower().rstrip("\\") == r.lower():
        return ""
    prefix = r.lower() + "\\"
    return p[len(prefix):].replace("\\", "/") if p.lower().startswith(prefix) else None


def included(path: str, reason: str | None, root: str | None, include: Sequence[str], exclude: Sequence[str],
             ) -> bool:
    """Inclusion in B_default: the discard reason, overridden by the config's globs (exclude wins)."""
    if not include and not exclude:
        return reason is None
    rel = relative(path, root)
    subjects = [path] if rel is None else [rel, path]
    out = _matcher(exclude)
    if out is not None and any(out(s) for s in subjects):
        return False
    into = _matcher(include)
    if into is not None and any(into(s) for s in subjects):
        return True
    return reason is None


# each list of globs compiled once per process into one pattern (fnmatchcase's own translation,
# joined): a path is then matched once per list, not once per glob. A few configs at a time at most
_MATCHERS: dict[tuple[str, ...], Callable[[str], object] | None] = {}


def _matcher(globs: Sequence[str]) -> Callable[[str], object] | None:
    key = tuple(globs)
    if key in _MATCHERS:
        return _MATCHERS[key]
    if len(_MATCHERS) >= 8:
        _MATCHERS.clear()
    m = None
    if key:
        import re  # only when globs are configured
        from fnmatch import translate

        m = re.compile("|".join(f"(?:{translate(g)})" for g in key)).match
    _MATCHERS[key] = m
    return m


def globs_key(include: Sequence[str], exclude: Sequence[str]) -> str:
    """What the state remembers of the globs its inclusion was decided with: a digest, not the text
    (a config's globs are kept once, in its cached config)."""
    if not include and not exclude:
        return ""
    import zlib

    data = "\0".join([*include, "\1", *exclude]).encode("utf-8", "surrogatepass")
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}"
