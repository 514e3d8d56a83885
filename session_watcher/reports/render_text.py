"""The report document -> aligned text tables and sentences. Pure."""

from __future__ import annotations

from typing import Any

from session_watcher.reports.fmt import CAUSES, exact_duration, human_duration, human_tokens

MAX_SESSIONS = 25  # the most recently active; --json and --html list them all


def pct(x: float | None) -> str:
    return "undefined" if x is None else f"{100 * x:.0f} %"


def table(headers: list[str], rows: list[list[str]], right: set[int] | None = None) -> list[str]:
    """Columns padded to their widest cell; columns in `right` are right-aligned (numbers)."""
    right = right or set()
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    return [line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)]


def ttl_sentence(cls: str, t: dict[str, Any] | None) -> str:
    if t is None:
        return (
            f"{cls} writes: your sessions do not show where the cache expires "
            "(too few calls on one side of any gap length)"
        )
    ev = t["evidence"]
    b, a = ev["below"], ev["above"]
    where = human_duration(t["inferredSeconds"]).replace("-hour", " h")
    rng = ""
    if b["maxGapSeconds"] is not None and a["minGapSeconds"] is not None:
        rng = (
            f"; the edge lies between a {exact_duration(b['maxGapSeconds'])} gap and a "
            f"{exact_duration(a['minGapSeconds'])} gap"
        )
    return (
        f"{cls} writes: inferred from your sessions (not documentation), the cache expires near {where}: "
        f"{pct(b['coldShare'])} cold of {b['n']} calls below, "
        f"{pct(a['coldShare'])} cold of {a['n']} above{rng}"
    )


def guard_sentence(g: dict[str, Any] | None) -> str:
    """What the cold-cache guard warned about, and what those prompts cost."""
    if not g or not g["warned"]:
        return "cold-cache guard: no cold prompt warned about yet"
    n = g["warned"]
    text = f"cold-cache guard: {n} cold prompt{'s' if n != 1 else ''} warned about"
    if g["blocked"]:
        text += f" ({g['blocked']} blocked once)"
    text += (f"; {g['wentAhead']} went ahead and re-wrote {human_tokens(g['wentAheadTokens'])} tokens "
             f"(${g['wentAheadUsd']:.2f})")
    if g["notSent"]:
        text += f"; {g['notSent']} not sent in their session (their re-write: ~${g['notSentEstimatedUsd']:.2f})"
    return text


def day_sentence(doc: dict[str, Any]) -> str:
    """'68 % of today ran warm; this week 71 %', saying so when a period has no calls."""
    today = doc["warmthToday"]
    week = doc["warmthWeek"]
    first = f"{pct(today)} of today ran warm" if today is not None else "no calls today"
    second = f"this week {pct(week)}" if week is not None else "no calls this week"
    return f"{first}; {second}"


def nothing_found(doc: dict[str, Any]) -> str:
    """An empty report says where it looked."""
    roots = doc.get("index", {}).get("roots") or []
    where = "".join(f"\n  {r}" for r in roots) or " (no folder)"
    if doc.get("since") is not None:
        import time

        day = time.strftime("%Y-%m-%d %H:%M", time.localtime(doc["since"]))
        return f"no Claude Code session has calls since {day}; searched:{where}\n"
    return (f"no Claude Code sessions found; searched:{where}\n"
            "(start a session in Claude Code, or point the report elsewhere with --projects DIR)\n")


def render(doc: dict[str, Any]) -> str:
    if not doc["sessions"]:
        return nothing_found(doc)
    out: list[str] = []
    out.append(day_sentence(doc))
    out.append("")
    rows = []
    for s in doc["sessions"][:MAX_SESSIONS]:
        rows.append(
            [
                s["sessionId"][:36],
                str(s["calls"]),
                pct(s["warmth"]),
                str(s["coldStarts"]),
                human_tokens(s["tokens"]["total"]),
                s["sentence"],
            ]
        )
    out.extend(table(["session", "calls", "warmth", "cold", "tokens", "largest gap"], rows, {1, 2, 3, 4}))
    more = len(doc["sessions"]) - MAX_SESSIONS
    if more > 0:
        out.append(f"... and {more} older sessions (all of them in --json and --html)")
    out.append("")
    out.append("the cache-TTL cliff (gap before a call -> how often it ran cold)")
    for cls in ("5m", "1h"):
        brows = [
            [b["label"], str(b["n"]), pct(b["medianWarmth"]), pct(b["coldShare"])]
            for b in doc["gapBuckets"]
            if b["ttl"] == cls and b["n"]
        ]
        out.append("")
        if not brows:
            out.append(f"{cls} writes: no calls")
            continue
        out.extend(table([f"gap ({cls} writes)", "n", "median warmth", "cold"], brows, {1, 2, 3}))
        out.append(ttl_sentence(cls, doc["ttl"][cls]))
    out.append("")
    n = doc["coldStarts"]
    out.append(f"cold starts: {n}")
    if n:
        crow = [[k, str(doc["causes"][k]), pct(doc["causeShares"][k])] for k in CAUSES]
        out.extend(table(["cause", "n", "share"], crow, {1, 2}))
        if doc["causes"]["unexplained"]:
            out.append("unexplained: the transcript shows no idle gap, model switch or compaction before them")
    out.append("")
    out.append(guard_sentence(doc.get("guard")))
    return "\n".join(out) + "\n"
