"""The package's one way to print a number for a person: tokens, dollars, durations. Pure.

Every text the user reads (status line, status, alerts, the guard's line, the handoff note, the
report, backtest) prints its figures through these. Rounding is half up on the decimal a person
would write (a float is first rounded to a millionth, so 1.005 reads as written, not as the
1.00499... it is stored as). A value that is not a number (None, NaN, infinity, a bool) prints
as "?". Imports nothing: the status line and the hooks load it.
"""

from __future__ import annotations

UNKNOWN = "?"
_UNITS = ((1_000, "k"), (1_000_000, "M"), (1_000_000_000, "B"))


def _finite(v: object) -> float | None:
    """v as a float when it is a finite number, else None."""
    if not isinstance(v, int | float) or isinstance(v, bool) or v - v != 0:  # NaN and infinity: v - v is NaN
        return None
    return v


def _half_up(v: float) -> int:
    """A non-negative number to the nearest whole, halves up, after rounding to a millionth."""
    return int(round(v, 6) + 0.5) if isinstance(v, float) else int(v)


def tokens(n: object) -> str:
    """999 -> '999', 1,000 -> '1k', 1,234 -> '1.2k', 9,950 -> '10k', 48,213 -> '48k', 999,600 -> '1M'
    (never '1000k'), 1,234,567 -> '1.2M'; one decimal below 10 of a unit, none from 10; a minus for
    a negative (a saving that is a loss)."""
    v = _finite(n)
    if v is None:
        return UNKNOWN
    if v < 0:
        text = tokens(-v)
        return text if text == "0" else "-" + text
    i = _half_up(v)
    if i < 1000:
        return str(i)
    for k, (unit, suffix) in enumerate(_UNITS):
        tenths = (i * 10 + unit // 2) // unit
        if tenths < 100:
            return f"{tenths // 10}" + (f".{tenths % 10}" if tenths % 10 else "") + suffix
        whole = (i + unit // 2) // unit
        if whole < 1000 or k == len(_UNITS) - 1:
            return f"{whole:,}{suffix}" if whole >= 1000 else f"{whole}{suffix}"
    raise AssertionError("unreachable")  # pragma: no cover


def dollars(usd: object) -> str:
    """'$0.00', '<$0.01' (under half a cent, not 0), '$1.13' from $1.125 (cents below $1,000, half up),
    '$1,204' from $1,204.4 (whole dollars from $1,000), '-$3.50'; '?' for an unknown price."""
    v = _finite(usd)
    if v is None:
        return UNKNOWN
    if v < 0:
        return "-" + dollars(-v)
    if 0 < v < 0.005:
        return "<$0.01"
    cents = _half_up(v * 100)
    if cents >= 100_000:
        return f"${(cents + 50) // 100:,}"
    return f"${cents // 100}.{cents % 100:02d}"


def calls(n: object) -> str:
    """A number of API calls as a person reads it: 7, ~40, ~150 ('~7', '~40', '~150': a horizon
    estimated from the session's pace, never exact; to 5 from 20 on, to 10 from 100)."""
    v = _finite(n)
    if v is None:
        return UNKNOWN
    if v < 20:
        return f"~{max(1, _half_up(max(0.0, v)))}"
    step = 10 if v >= 100 else 5
    return f"~{_half_up(v / step) * step}"


def over_calls(n: object, until_compaction: object = False) -> str:
    """The horizon of a restart's saving in words, the one wording of the alerts, the guard, `status`
    and the session page: 'over the next ~30 calls', and ', until the automatic compaction' after it
    when the agent's own compaction ends the horizon first ('over the next ~1 call': one); '' under
    one call (nothing left to count over) or for an unknown one."""
    v = _finite(n)
    if v is None or v < 1:
        return ""
    until = ", until the automatic compaction" if until_compaction is True else ""
    count = calls(v)
    return f"over the next {count} call{'' if count == '~1' else 's'}{until}"


# the longest span said as it is (over 27 years: no session's); a longer one is a number a client or
# a hand wrote (`seconds_since_last_response: 1e20` read "1157407407407407 days"), said as past it
SPAN_MAX = 10_000 * 86_400
PAST_SPAN_MAX = "over 10,000 days"


def duration(seconds: object) -> str:
    """The one wording of a span: '45 s'; '1 min 30 s' and '4 min 59 s' under 10 minutes (where the
    seconds tell a cache's 5-minute edge apart); '23 min' under 90 minutes; '1 h 30 min', '3 h' under
    two days; '2 days' beyond, up to 'over 10,000 days' (SPAN_MAX). Negative spans read as 0 s (a
    clock that stepped back)."""
    v = _finite(seconds)
    if v is None or v > SPAN_MAX:
        return UNKNOWN if v is None else PAST_SPAN_MAX
    s = _half_up(max(0.0, v))
    if s < 60:
        return f"{s} s"
    if s < 600:
        m, sec = divmod(s, 60)
        return f"{m} min {sec} s" if sec else f"{m} min"
    m = (s + 30) // 60
    if m < 90:
        return f"{m} min"
    if s < 48 * 3600:
        h, m = divmod(m, 60)
        return f"{h} h {m} min" if m else f"{h} h"
    return f"{(s + 43_200) // 86_400} days"


def exact_duration(seconds: object) -> str:
    """'4 min 59 s', '1 h 00 min 10 s': every second, for evidence where rounding would blur an
    edge (a gap just under a cache's lifetime against one just over it); past SPAN_MAX as `duration`."""
    v = _finite(seconds)
    if v is None:
        return UNKNOWN
    if v > SPAN_MAX:
        return PAST_SPAN_MAX
    h, rest = divmod(_half_up(max(0.0, v)), 3600)
    m, sec = divmod(rest, 60)
    if h:
        return f"{h} h {m:02d} min {sec:02d} s"
    if m:
        return f"{m} min {sec:02d} s"
    return f"{sec} s"


def duration_cell(seconds: object) -> str:
    """A span in a table's column, at most 5 characters: '42s', '4m59', '52m', '3h05', '47h59', '4d02h';
    the same steps as `duration` (seconds kept under 10 minutes), for the report's session table
    that has to fit 100 columns; past SPAN_MAX '>10kd'."""
    v = _finite(seconds)
    if v is None or v > SPAN_MAX:
        return UNKNOWN if v is None else ">10kd"
    s = _half_up(max(0.0, v))
    if s < 60:
        return f"{s}s"
    if s < 600:
        m, sec = divmod(s, 60)
        return f"{m}m{sec:02d}" if sec else f"{m}m"
    m = (s + 30) // 60
    if m < 60:
        return f"{m}m"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h}h{m:02d}"
    d, h = divmod(h, 24)
    return f"{d}d{h:02d}h"
