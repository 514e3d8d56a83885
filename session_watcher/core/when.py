"""What `--since` says, as epoch seconds: the one parser of the commands that take a time (`report`,
`export --otlp`). Pure: the time the command runs (`now`) and the local zone's reading of a wall
clock time (`local`) are passed in.

The forms: a date, `YYYY-MM-DD` (its local midnight); a date and time, `YYYY-MM-DDTHH:MM` with
optional seconds and fraction, a space for the `T`, and a zone (`Z`, `+02:00`), local time when it
has none; or a span back from now, a whole number and one unit: `m` minutes, `h` hours, `d` days,
`w` weeks (`30m`, `12h`, `7d`, `2w`), counted from `now` to the whole minute (runs within a minute
report one window). A time before 1970 (a span that long, a date-time so early), or one the local
zone cannot place (year 1 or 9999 at its edge), is refused too.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import (a report's start-up), and only the checker needs it

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

# "30m" said as minutes: a reader may take m for months
FORMS = ("YYYY-MM-DD, YYYY-MM-DDTHH:MM[:SS] (local unless it ends in Z or +02:00), or a span back: "
         "30m (minutes), 12h, 7d, 2w")
UNITS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def span_seconds(text: str) -> int | None:
    """`7d` -> 604800: a whole number of at least 1 and one unit of UNITS; None for anything else."""
    number, unit = text[:-1], text[-1:]
    if unit not in UNITS or not number.isascii() or not number.isdigit():
        return None
    # a number of more digits reaches back before 1970 all the same (int() refuses past 4,300)
    count = int(number) if len(number.lstrip("0")) <= 20 else 10 ** 20
    return count * UNITS[unit] if count >= 1 else None


def since_epoch(text: str, now: float, local: Callable[[datetime], float]) -> float:
    """`--since TEXT` as epoch seconds. `local` turns a date-time without a zone into epoch seconds
    in the user's zone. Raises ValueError naming the accepted forms (FORMS)."""
    word = text.strip()
    span = span_seconds(word)
    if span is not None:
        return _after_1970(text, (int(now) - span) // 60 * 60)
    from datetime import datetime

    try:
        dt = datetime.fromisoformat(word) if word[:4].isdigit() and word[4:5] == "-" else None
    except ValueError:
        dt = None
    if dt is None:
        raise ValueError(f"{text!r} is not a date, a date-time or a span (use {FORMS})")
    try:
        epoch = dt.timestamp() if dt.tzinfo is not None else local(dt)
    except (ValueError, OverflowError):  # the local zone cannot place it: past year 9999, before year 1
        raise ValueError(f"{text!r} is out of range (use {FORMS})") from None
    return _after_1970(text, epoch)


def _after_1970(text: str, epoch: float) -> float:
    """`epoch`, where it is not before 1970 (a report's header prints it as a local time)."""
    if epoch < 0:
        raise ValueError(f"{text!r} is before 1970 (use {FORMS})")
    return float(epoch)
