"""The status line: one line from the status document. Pure.

`● amber: restart saves $0.89 · bill 1/3 · cache 4:32 · health B · ctx 62%` - the lamp (colour and
glyph); in amber or red, what to do and what it saves (in dollars, or for a subscriber in the plan's
5-hour window when the user's own samples let it be estimated: `restart saves ~2% of 5h`); the bill
cycles the next alert waits for n/N (only in deep water); the client's cache countdown; a
subscriber's 5-hour and 7-day use; the health grade and the context occupancy. Before the first API
call it says only that (before the first since a compaction, that: `waiting_words`). `--verbose`
adds the model's position (x against the sweet spot) and the bill premium. Parts are dropped from
the right end of the priority list until the line fits the terminal's columns, and the advice is
shortened first. The lamp in words (`lamp_words`) is here too; `session-watcher status`'s other
lines are `core.statustext`'s (the status line never draws them).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; this module is on the hot path
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any

GLYPH = {"white": "○", "green": "●", "amber": "●", "red": "●"}
COLOR = {"white": "37", "green": "32", "amber": "33", "red": "31"}
GRADE_COLOR = {"A": "32", "B": "32", "C": "33", "D": "33", "F": "31"}


NO_X = "x: no cache read yet"
WAITING = ("waiting for the first API call", "no API call yet")


def next_alert(doc: Mapping[str, Any]) -> str | None:
    """`bill n/N`: the bill cycles the next alert waits for.

    In deep water before the gate: one completed bill cycle the gate counts (`n/1`); after it: a
    reminder every N bill cycles, counted since the last alert the user was shown (`notice`: a
    reminder held back by notify.remind_min does not reset the count), else since the engine's last;
    out of deep water no alert is pending (None)."""
    dwell = doc.get("dwell") or {}
    if dwell.get("alerted"):
        n_back = (doc.get("backstop") or {}).get("N")
        return f"bill {bills_since_alert(doc)}/{n_back if n_back is not None else '∞'}"
    if dwell.get("calls"):
        return f"bill {bill_ready(dwell)}/1"
    return None


def bills_since_alert(doc: Mapping[str, Any]) -> int:
    """The bill cycles since the last alert the user was shown (`notice`: a reminder held back by
    notify.remind_min does not reset the count), else since the engine's last: the status line's
    `bill n/N` and `status`'s "(n so far)" alike."""
    seen = doc.get("notice")
    if isinstance(seen, dict) and isinstance(seen.get("bills"), int):
        return int(seen["bills"])
    return int((doc.get("backstop") or {}).get("n", 0))


def bill_ready(dwell: Mapping[str, Any]) -> int:
    """1 when the gate has the bill cycle it waits for (one in the dwell, or just before it with
    bill_lookback: `billCounted`), else 0."""
    ready = dwell.get("billCounted")
    return int(ready) if isinstance(ready, bool) else min(dwell.get("bills", 0), 1)


def _paint(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def quota(points: float) -> str:
    """~2%, ~0.4%, <0.1%: an estimated share of a plan window."""
    if points < 0.05:
        return "<0.1%"
    return f"~{points:.1f}%" if points < 9.95 else f"~{points:.0f}%"


def advice(doc: Mapping[str, Any]) -> list[str]:
    """What to do in amber or red, longest first (the line takes the longest that fits): the
    saving of a restart now in the plan's 5-hour window for a subscriber with an estimate, else in
    dollars (at API prices for a subscriber), else in read-price tokens."""
    from session_watcher.core.numbers import dollars, tokens  # amber and red only: a green line formats no figure

    saving = doc.get("saving")
    if not isinstance(saving, int | float) or saving <= 0:
        return ["restart advised", "restart"]
    plan = doc.get("plan") or {}
    live = bool(plan.get("live"))
    five = (plan.get("fiveHour") or {}).get("restartSaves") if live else None
    if isinstance(five, int | float):
        q = quota(five)
        return [f"restart saves {q} of 5h", f"restart saves {q}", "restart"]
    usd = doc.get("savingUsd")
    if isinstance(usd, int | float):
        if live:
            return [f"restart saves {dollars(usd)} at API prices", f"restart saves {dollars(usd)}", "restart"]
        return [f"restart saves {dollars(usd)}", "restart"]
    return [f"restart saves {tokens(saving)} tokens", "restart"]


def _below(value: float, lamp: str, at: Mapping[str, Any]) -> int:
    """bp in whole percent, never rounded up into the band of a colour the lamp does not show
    (9.6 % in green, below amber's 10 %, reads 9 %, not 10 %)."""
    shown = round(value * 100)
    ceiling = {"green": at.get("amber"), "white": at.get("amber"), "amber": at.get("red")}.get(lamp)
    if isinstance(ceiling, int | float):
        top = round(ceiling * 100, 6)
        top_int = int(top) - (1 if top == int(top) else 0)  # the largest whole percent below the threshold
        shown = min(shown, top_int)
    return shown


def _position(x: float, xs: float | None) -> str:
    """x3.4/2.8; two decimals where one would make x and the sweet spot look equal."""
    if xs is None:
        return f"x{x:.1f}"
    a, b = f"{x:.1f}", f"{xs:.1f}"
    if a == b and x != xs:
        a, b = f"{x:.2f}", f"{xs:.2f}"
    return f"x{a}/{b}"


def _plan_parts(doc: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`5h 23%` and `7d 41%` for a subscriber (whole percent, never rounded up to 100 %)."""
    plan = doc.get("plan") or {}
    if not plan.get("live"):
        return []
    out = []
    for key, label in (("fiveHour", "5h"), ("sevenDay", "7d")):
        used = (plan.get(key) or {}).get("usedPercent")
        if isinstance(used, int | float):
            text = f"{label} {int(used)}%"  # floor: 99.6 % is not yet the whole window
            out.append((text, text))
    return out


def render(doc: Mapping[str, Any], columns: int = 80, color: bool = True, verbose: bool = False) -> str:
    lamp = doc.get("lamp") or "white"
    code = COLOR.get(lamp, "37")
    head = _paint(f"{GLYPH.get(lamp, '○')} {lamp}", code, color)
    parts: list[tuple[str, str]] = []  # (plain, painted), in priority order
    x, xs, bp = doc.get("x"), doc.get("xSweet"), doc.get("br")
    say: list[tuple[str, str]] = []
    if doc.get("L") is None or x is None:  # no API call yet: no figure of the session to show
        words = next((w for w in waiting_words(doc) if 2 + len(w) <= columns), "")
        waiting = _paint(GLYPH["white"], COLOR["white"], color) + (" " + words if words else "")
        return _fit(waiting, 1 + len(words) + bool(words), [], _plan_parts(doc), columns)
    if lamp in ("amber", "red") or doc.get("coldReturn"):  # a cold return: a restart now, whatever the lamp
        say = [(": " + text, _paint(": " + text, code, color)) for text in advice(doc)]
    if verbose:
        pos = _position(x, xs) if doc.get("L") else NO_X  # a cold start reads nothing: no position yet
        parts.append((pos, pos))
        if bp is not None and xs is not None and x >= xs:  # bp means something on the right arm only
            pct = f"bp{_below(bp, lamp, doc.get('lampAt') or {})}%"
            parts.append((pct, pct))
    bill = next_alert(doc)
    if bill:
        parts.append((bill, bill))
    cache = doc.get("cache")  # the client's prompt_cache (2.1.332+), only when it said
    if cache:
        text = cache_text(cache)
        parts.append((text, _paint(text, "36" if cache["warm"] else "35", color)))
    parts.extend(_plan_parts(doc))
    grade = (doc.get("health") or {}).get("grade")
    if grade:
        parts.append((f"health {grade}", "health " + _paint(grade, GRADE_COLOR.get(grade, "37"), color)))
    cp = doc.get("contextPressure") or {}
    pressure, window = cp.get("pressureTokens"), cp.get("contextWindow")
    if pressure is not None and window:
        occ = f"ctx {100 * pressure / window:.0f}%"
        parts.append((occ, occ))
    return _fit(head, 2 + len(lamp), say, parts, columns)


SEP = " · "


def _fit(head: str, head_len: int, say: list[tuple[str, str]], parts: list[tuple[str, str]], columns: int) -> str:
    """The head (`head_len` columns), the longest advice that fits (`● amber: restart saves $0.89`),
    then the parts in order, ` · ` between them, while they fit."""
    line, plain_len = head, head_len
    for plain, painted in say:
        if plain_len + len(plain) <= columns:
            line, plain_len = line + painted, plain_len + len(plain)
            break
    for plain, painted in parts:
        if plain_len + len(SEP) + len(plain) > columns:
            break
        line, plain_len = line + SEP + painted, plain_len + len(SEP) + len(plain)
    return line


def cache_text(cache: Mapping[str, Any]) -> str:
    """'cache 4:32' (warm: time left), 'cache cold'; '(miss: model changed)' after a cold start: the
    client's cause in words, its identifier's underscores as spaces (`likely_server_side` stood bare
    on the status line)."""
    left = cache.get("left")
    if not cache["warm"]:
        text = "cache cold"
    elif left is None:
        text = "cache warm"
    else:  # rounded up: a warm cache never reads 0:00
        secs = max(0, int(left) + (left > int(left)))
        text = f"cache {secs // 60}:{secs % 60:02d}"
    miss = cache.get("miss")
    return f"{text} (miss: {', '.join(str(c).replace('_', ' ') for c in miss)})" if miss else text


# a session whose last call is longer ago than any cache lives (an hour, the longest TTL) and a day
# more: one the user has left, not one they are in; `lamp_words` says so rather than advising a restart
IDLE_ENDED = 3600.0 + 86400.0


def _idle_words(doc: Mapping[str, Any], idle: float) -> str:
    """`lamp_words` of a session idle IDLE_ENDED or more: what a fresh session saves against resuming it."""
    from session_watcher.core.numbers import dollars, duration, over_calls, tokens

    head = f"idle {duration(idle)}, its cache long gone"
    saving, usd = doc.get("saving"), doc.get("savingUsd")
    if (doc["lamp"] in ("amber", "red") or doc.get("coldReturn")) and isinstance(saving, int | float) and saving > 0:
        price = dollars(usd) if isinstance(usd, int | float) else f"{tokens(saving)} tokens at the cache-read price"
        over = over_calls(doc.get("horizon"), doc.get("untilCompaction"))
        return f"{head}: to go on with its work, a fresh session would save about {price} against resuming " \
               f"this one{', ' + over if over else ''}{_plan_words(doc)}"
    return f"{head}: resuming it needs no restart first"


def _plan_words(doc: Mapping[str, Any]) -> str:
    """The saving as a share of a subscriber's 5-hour window, where `status` estimated one; else ''."""
    five = ((doc.get("plan") or {}).get("fiveHour") or {}).get("restartSaves")
    return f", about {quota(five)[1:]} of your plan's 5-hour window (an estimate, below)" \
        if isinstance(five, int | float) else ""


def lamp_words(doc: Mapping[str, Any], idle: float | None = None) -> str:
    """The lamp and what it means for the user, with the saving of a restart in amber and red, and at
    a cold return (`coldReturn`) whatever the lamp. `idle`: seconds since the session's last call
    (None: not known, or a document of that call); IDLE_ENDED or more, the session is said to be
    idle, its cache gone, and the saving is what a fresh session saves over resuming it."""
    from session_watcher.core.numbers import dollars, over_calls, tokens

    lamp = doc["lamp"]
    if idle is not None and idle >= IDLE_ENDED and doc.get("bDefault") is not None:
        return _idle_words(doc, idle)
    if lamp in ("amber", "red") or doc.get("coldReturn"):
        saving, usd = doc.get("saving"), doc.get("savingUsd")
        if not isinstance(saving, int | float) or saving <= 0:
            return f"{lamp}: a restart is advised"
        price = f"{dollars(usd)} ({tokens(saving)} tokens at the cache-read price)" if isinstance(usd, int | float) \
            else f"{tokens(saving)} tokens at the cache-read price (no dollar price for this model)"
        plan = _plan_words(doc)
        if lamp not in ("amber", "red"):
            head = f"{lamp}, but the cache is cold"
        else:  # the saving spares the cold re-write too: say why it is larger than the lamp's own
            head = f"{lamp}, and the cache is cold" if doc.get("coldReturn") else lamp
        over = over_calls(doc.get("horizon"), doc.get("untilCompaction"))  # the alerts' and the guard's words
        return f"{head}: restart; a fresh session now saves about {price}{' ' + over if over else ''}{plan}"
    if lamp == "green":
        return "green: no restart needed yet"
    if doc.get("bDefault") is None:
        return f"white: {_no_call_words(doc)}"
    return "white: the context is not yet larger than what a restart would carry"


def _no_call_words(doc: Mapping[str, Any]) -> str:
    """No call in the segment yet: of the session, or since the context was reset (its segment's
    start: a compaction, or an old Claude Code's /clear in the same session)."""
    return waiting_words(doc)[1] if _no_call_at_all(doc) else waiting_words(doc)[0]


def waiting_words(doc: Mapping[str, Any]) -> tuple[str, str]:
    """The status line's words before the segment's first call, long and short: `status`'s own
    (`_no_call_words`) once the session has had calls, shortened on a narrow line."""
    if _no_call_at_all(doc):
        return WAITING
    segment, compactions = doc.get("segment"), doc.get("compactions")
    if compactions == segment:
        return "no API call since the compaction yet", "no call since compaction"
    if not compactions:
        return "no API call since /clear yet", "no call since /clear"
    return "no API call since the last compaction or /clear yet", "no call since compaction or /clear"


def _no_call_at_all(doc: Mapping[str, Any]) -> bool:
    calls, segment = doc.get("calls"), doc.get("segment")
    return not isinstance(calls, int) or calls <= 0 or not isinstance(segment, int) or segment <= 0
