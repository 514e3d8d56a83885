"""Small helpers shared by the report's renderers and its cached path: the largest-gap sentence,
a session's project name and the clock-dependent fields (numbers print through core.numbers). No
heavy imports."""

from __future__ import annotations

import os
import time

from session_watcher.core.numbers import dollars, duration, tokens

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    from typing import Any, TypeGuard

CAUSES = ("firstCall", "idleGap", "modelSwitch", "compaction", "unexplained")
# each cause in words where a person reads it (the text and HTML reports); the JSON keeps the keys
CAUSE_WORDS = {"firstCall": "first call", "idleGap": "idle gap", "modelSwitch": "model switch",
               "compaction": "compaction", "unexplained": "unexplained"}


def a_time(v: object) -> TypeGuard[float]:
    """A time a file of ours says (the guard's log, a taken handoff), as a report can use it: a number
    within +-10^12 s (not NaN, an infinity, which a page's JSON cannot hold, nor an integer of 400
    digits, which has no float)."""
    return isinstance(v, int | float) and not isinstance(v, bool) and -1e12 < v < 1e12


NO_BREAK = 1.0  # a longest gap under a second is no break (it read "your longest break (0 s) stayed warm")
_NOT_THE_BREAK = {"modelSwitch": "a model switch", "compaction": "a compaction"}


def gap_sentence(gap: dict[str, Any] | None, cause: str | None = "idleGap") -> str:
    """The longest break in words. `cause`: the cause of the cold start after it (a cold break is
    said to cost its re-read only when the break itself is the cause: as long as the cache's
    lifetime, the rule the cold-start causes and the guard use too)."""
    if gap is None:
        return "no break to price (a one-call session)"
    usd = f" ({dollars(gap['usd'])})" if gap["usd"] is not None else ""
    dur = duration(gap["seconds"])
    if gap["seconds"] < NO_BREAK:
        return _no_break(gap, usd, cause)
    if gap["cold"] and cause == "idleGap":
        return f"your {dur} break cost {tokens(gap['tokensRecreated'])} tokens of re-reading{usd}"
    if gap["cold"]:
        head = f"the call after your longest break ({dur}) re-wrote {tokens(gap['tokensRecreated'])} tokens{usd}"
        if cause in _NOT_THE_BREAK:
            return f"{head}, cold from {_NOT_THE_BREAK[cause]}"
        return f"{head}: not the break's doing, the cache should have outlived it"
    # warm: the cache outlived the break; what the next call wrote is its own new context, not a re-read
    return (f"your longest break ({dur}) stayed warm: the next call read the cache; "
            f"it wrote {tokens(gap['tokensRecreated'])} new tokens{usd}")


def _no_break(gap: dict[str, Any], usd: str, cause: str | None) -> str:
    """No break at all (the longest gap under a second): said so, and a cold call after it not blamed
    on a break."""
    head = "no break: each call came within a second of the one before"
    if not gap["cold"]:
        return head
    why = f"cold from {_NOT_THE_BREAK[cause]}" if cause in _NOT_THE_BREAK else "not a break's doing"
    return f"{head}; the call after the longest gap re-wrote {tokens(gap['tokensRecreated'])} tokens{usd}, {why}"


def project_name(cwd: str | None, folder: str) -> str:
    """A session's project as a person names it: its working folder's name (`core.text.project_label`:
    the last folder, POSIX or Windows, `D:\\oh-my-posh` is `oh-my-posh`; a git worktree's with its
    repository's, `repo/.worktrees/1` is `repo/1`), else the Claude Code projects folder it is in."""
    from session_watcher.core.text import project_label

    return (project_label(cwd) if cwd else None) or folder


# `utc_offset` below: a fixed zone, seconds east of UTC, or None: the machine's local zone, whose offset
# changes with daylight saving (Europe/Berlin is +1 h in winter, +2 h in summer): a day is then the
# user's calendar day whatever the season, not the day of the offset in force when the report runs.
_OFFSETS: dict[int, int] = {}  # hour since the epoch -> the local zone's offset then
_MIDNIGHTS: dict[int, int] = {}  # local calendar day (days since 1970-01-01 there) -> its midnight, epoch
_ZONE = ""  # the zone the two memos are of (zone_key, which each report run calls first, checks it)


def _local_offset(ts: float) -> int:
    hour = int(ts // 3600)
    off = _OFFSETS.get(hour)
    if off is None:
        t = hour * 3600
        off = time.localtime(t).tm_gmtoff
        if time.localtime(t + 3599).tm_gmtoff != off:  # the clocks change within this UTC hour (a zone
            return time.localtime(ts).tm_gmtoff  # half an hour off UTC: Iran's went back at 19:30 UTC)
        _OFFSETS[hour] = off
    return off


def _local_midnight(n: int) -> int:
    """The epoch of local midnight starting calendar day `n` (days since 1970-01-01, local)."""
    t = _MIDNIGHTS.get(n)
    if t is None:
        y, m, d = time.gmtime(n * 86400)[:3]
        t = _MIDNIGHTS[n] = int(time.mktime((y, m, d, 0, 0, 0, 0, 0, -1)))
    return t


def local_day(ts: float, utc_offset: float | None) -> int:
    """The day holding `ts`: the epoch of its local midnight (`utc_offset`: a fixed zone, or None)."""
    if utc_offset is not None:
        local = ts + utc_offset
        return int(local - (local % 86400) - utc_offset)
    return _local_midnight(int((ts + _local_offset(ts)) // 86400))


def hour_day(hour: int, utc_offset: float | None) -> int | None:
    """`local_day(ts, utc_offset)` for every `ts` of UTC hour `hour` (hours since the epoch), or None
    where that hour holds more than one day: an offset that is not whole hours (a midnight may fall
    inside the hour), or the local zone's changing within it. A whole hours' offset keeps `ts` plus
    the offset inside one hour of the local clock, so inside one local day."""
    t = hour * 3600
    if utc_offset is not None:
        return None if utc_offset % 3600 else local_day(t, utc_offset)
    off = _local_offset(t)
    if _OFFSETS.get(hour) != off or off % 3600:
        return None
    return _local_midnight((t + off) // 86400)


def days_later(day: int, n: int, utc_offset: float | None) -> int:
    """The day `n` days after `day` (both local midnights; a daylight-saving change between them is
    an hour more or less than n * 86400 seconds)."""
    if utc_offset is not None:
        return day + n * 86400
    return _local_midnight(int((day + _local_offset(day)) // 86400) + n)


def day_date(day: int, utc_offset: float | None) -> str:
    """`day` (a local midnight) as YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.gmtime(day + (_local_offset(day) if utc_offset is None else utc_offset)))


def week_of(day: int, utc_offset: float | None) -> int:
    """The Monday starting `day`'s week (a local midnight)."""
    wday = time.gmtime(day + (_local_offset(day) if utc_offset is None else utc_offset)).tm_wday
    return days_later(day, -wday, utc_offset)


def _zone_file() -> str:
    """A digest of the file the C library reads the local zone's rules from (TZ's, or /etc/localtime),
    "-" where there is none (a POSIX rule in TZ, which says them itself; Windows)."""
    import zlib

    tz = os.environ.get("TZ")
    name = "/etc/localtime" if tz is None else tz.removeprefix(":")
    path = name if os.path.isabs(name) else os.path.join(os.environ.get("TZDIR") or "/usr/share/zoneinfo", name)
    try:
        with open(path, "rb") as f:
            return f"{zlib.crc32(f.read(1 << 20)):08x}"
    except (OSError, ValueError):
        return "-"


def zone_key(utc_offset: float | None) -> str:
    """What the report's cache keys its days by: the fixed offset, or the local zone as the process
    sees it: TZ, its rules' file and the names and offsets (so a change of season keeps the cache, a
    change of zone does not, nor one of its rules: Cairo and Athens are both EET and EEST, +2 and +3,
    but change their clocks on other days). Called before any day is booked (the memos are the zone's)."""
    if utc_offset is not None:
        return repr(utc_offset)
    zone = (f"local {os.environ.get('TZ')!r} {_zone_file()} "
            f"{time.tzname!r} {time.timezone} {time.altzone} {time.daylight}")
    global _ZONE  # noqa: PLW0603  (the memos are the zone's: a process whose TZ changed starts them again)
    if zone != _ZONE:
        _OFFSETS.clear()
        _MIDNIGHTS.clear()
        _ZONE = zone
    return zone


def day_start(now: float, utc_offset: float | None) -> float:
    """Local midnight of `now` (epoch seconds), for a local zone `utc_offset` seconds east of UTC
    (None: the machine's own zone)."""
    if utc_offset is None:
        return float(local_day(now, None))
    local = now + utc_offset
    return local - (local % 86400) - utc_offset


def apply_now(doc: dict[str, Any], now: float, utc_offset: float | None) -> dict[str, Any]:
    """Fill the clock-dependent fields from the per-day sums: today, and today plus the 6 days before."""
    today0 = day_start(now, utc_offset)
    week0 = today0 - 6 * 86400 if utc_offset is not None else float(days_later(int(today0), -6, None))

    def share(lo: float) -> float | None:
        cr = sum(d[1] for d in doc["days"] if lo <= d[0] <= today0)
        cw = sum(d[2] for d in doc["days"] if lo <= d[0] <= today0)
        return cr / (cr + cw) if cr + cw else None

    doc["generatedAt"] = now
    doc["warmthToday"] = share(today0)
    doc["warmthWeek"] = share(week0)
    return doc
