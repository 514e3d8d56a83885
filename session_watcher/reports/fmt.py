"""Small helpers shared by the report's renderers and its cached path: the largest-gap sentence,
a session's project name and the clock-dependent fields (numbers print through core.numbers). No
heavy imports."""

from __future__ import annotations

from session_watcher.core.numbers import dollars, duration, tokens

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it
if TYPE_CHECKING:
    from typing import Any

CAUSES = ("firstCall", "idleGap", "modelSwitch", "compaction", "unexplained")
# each cause in words where a person reads it (the text and HTML reports); the JSON keeps the keys
CAUSE_WORDS = {"firstCall": "first call", "idleGap": "idle gap", "modelSwitch": "model switch",
               "compaction": "compaction", "unexplained": "unexplained"}


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
    """A session's project as a person names it: the last folder of its working folder (POSIX or
    Windows: `D:\\oh-my-posh` is `oh-my-posh`), else the Claude Code projects folder it is in."""
    if cwd:
        last = cwd.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
        if last:
            return last
    return folder


def day_start(now: float, utc_offset: float) -> float:
    """Local midnight of `now` (epoch seconds), for a local zone `utc_offset` seconds east of UTC."""
    local = now + utc_offset
    return local - (local % 86400) - utc_offset


def apply_now(doc: dict[str, Any], now: float, utc_offset: float) -> dict[str, Any]:
    """Fill the clock-dependent fields from the per-day sums: today, and today plus the 6 days before."""
    today0 = day_start(now, utc_offset)
    week0 = today0 - 6 * 86400

    def share(lo: float) -> float | None:
        cr = sum(d[1] for d in doc["days"] if lo <= d[0] <= today0)
        cw = sum(d[2] for d in doc["days"] if lo <= d[0] <= today0)
        return cr / (cr + cw) if cr + cw else None

    doc["generatedAt"] = now
    doc["warmthToday"] = share(today0)
    doc["warmthWeek"] = share(week0)
    return doc
