"""The path map: per-file token estimates (SPEC "Baseline B and the path map"). Pure.

A path's total = tokens of the distinct lines read + tool overhead per call + pending edit estimate
- calibration correction, floored at 0. Lines are tracked as merged [start, end) ranges so a Read
with offset/limit adds only lines not seen before. Estimates come from characters with a
chars-per-token ratio calibrated per session (see `chars_per_token`).
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
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


def add_lines(entry: PathEntry, start: int, content: str) -> int:
    """Count the lines of a Read result not counted before; returns the characters added."""
    lines = content.split("\n")
    if lines and lines[-1] == "" and len(lines) > 1:
        lines.pop()  # a trailing newline ends the last line; it is not another line
    end = start + len(lines)
    ranges = entry["ranges"]
    added = 0
    pos = start
    for a, b in ranges:
        if b <= pos:
            continue
        if a >= end:
            break
        if a > pos:
            added += _chars(lines, pos - start, min(a, end) - start)
        pos = max(pos, b)
        if pos >= end:
            break
    if end > pos:
        added += _chars(lines, pos - start, end - start)
    entry["ranges"] = merge_range(ranges, start, end)
    return added


def _chars(lines: list[str], i: int, j: int) -> int:
    """What lines[i:j] cost as the Read tool shows them: each with its number prefix and newline."""
    return sum(map(len, lines[i:j])) + (j - i) * (LINE_PREFIX_CHARS + 1)


def merge_range(ranges: list[list[int]], start: int, end: int) -> list[list[int]]:
    out: list[list[int]] = []
    placed = False
    for a, b in ranges:
        if b < start:
            out.append([a, b])
        elif a > end:
            if not placed:
                out.append([start, end])
                placed = True
            out.append([a, b])
        else:
            start, end = min(a, start), max(b, end)
    if not placed:
        out.append([start, end])
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


def included(path: str, reason: str | None, root: str | None, include: list[str], exclude: list[str]) -> bool:
    """Inclusion in B_default: the discard reason, overridden by the config's globs (exclude wins)."""
    if not include and not exclude:
        return reason is None
    from fnmatch import fnmatchcase  # imports re: only when globs are configured

    rel = relative(path, root)
    subjects = [path] if rel is None else [rel, path]
    if any(fnmatchcase(s, g) for g in exclude for s in subjects):
        return False
    if any(fnmatchcase(s, g) for g in include for s in subjects):
        return True
    return reason is None
