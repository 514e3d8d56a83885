"""Small helpers shared by the report's renderers and its cached path: readable numbers and
durations, the largest-gap sentence, and the clock-dependent fields. No heavy imports."""

from __future__ import annotations

from typing import Any

CAUSES = ("firstCall", "idleGap", "modelSwitch", "compaction", "unexplained")


def human_tokens(n: float) -> str:
    """340219 -> '340k', 1234567 -> '1.2M', 950 -> '950'."""
    if n >= 1e6:
        return f"{n / 1e6:.1f}M".replace(".0M", "M")
    if n >= 1e4:
        return f"{round(n / 1e3)}k"
    if n >= 1e3:
        return f"{n / 1e3:.1f}k".replace(".0k", "k")
    return str(int(n))


def human_duration(s: float) -> str:
    """3 h 05 min style: '3-hour', '17.6 min', '42 s'."""
    if s >= 3600:
        h = s / 3600
        return f"{h:.0f}-hour" if abs(h - round(h)) < 0.05 else f"{h:.1f}-hour"
    if s >= 60:
        return f"{s / 60:.1f} min".replace(".0 min", " min")
    return f"{s:.0f} s"


def exact_duration(s: float) -> str:
    """4 min 59 s, 1 h 00 min 10 s: for evidence, where rounding would blur the edge."""
    t = round(s)
    h, rest = divmod(t, 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h} h {m:02d} min {sec:02d} s"
    if m:
        return f"{m} min {sec:02d} s"
    return f"{sec} s"


_NOT_THE_BREAK = {"modelSwitch": "a model switch", "compaction": "a compaction"}


def gap_sentence(gap: dict[str, Any] | None, cause: str | None = "idleGap") -> str:
    """The longest break in words. `cause`: the cause of the cold start after it (a cold break is
    said to cost its re-read only when the break itself is the cause: as long as the cache's
    lifetime, the rule the cold-start causes and the guard use too)."""
    if gap is None:
        return "no break to price (a one-call session)"
    usd = f" (${gap['usd']:.2f})" if gap["usd"] is not None else ""
    dur = human_duration(gap["seconds"])
    if gap["cold"] and cause == "idleGap":
        return f"your {dur} break cost {human_tokens(gap['tokensRecreated'])} tokens of re-reading{usd}"
    if gap["cold"]:
        head = f"the call after your longest break ({dur}) re-wrote {human_tokens(gap['tokensRecreated'])} tokens{usd}"
        if cause in _NOT_THE_BREAK:
            return f"{head}, cold from {_NOT_THE_BREAK[cause]}"
        return f"{head}: not the break's doing, the cache should have outlived it"
    # warm: the cache outlived the break; what the next call wrote is its own new context, not a re-read
    return (f"your longest break ({dur}) stayed warm: the next call read the cache; "
            f"it wrote {human_tokens(gap['tokensRecreated'])} new tokens{usd}")


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
