"""`--since` read in one place (core.when): a date (local midnight), a date-time (local unless it
names a zone), or a span back from the `now` passed in; anything else is refused with the forms."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from session_watcher.core.when import FORMS, since_epoch, span_seconds

NOW = datetime(2026, 12, 5, 15, 42, 17, tzinfo=UTC).timestamp()
PLUS2 = timezone(timedelta(hours=2))  # the "local" zone these tests pass in


def local(dt: datetime) -> float:
    return dt.replace(tzinfo=PLUS2).timestamp()


def at(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, *,
       tz: timezone = PLUS2) -> float:
    return datetime(year, month, day, hour, minute, second, tzinfo=tz).timestamp()


@pytest.mark.parametrize(("text", "want"), [
    ("2026-12-01", at(2026, 12, 1)),  # the local midnight
    ("2026-12-01T09:30", at(2026, 12, 1, 9, 30)),
    ("2026-12-01T09:30:15", at(2026, 12, 1, 9, 30, 15)),
    ("2026-12-01 09:30", at(2026, 12, 1, 9, 30)),
    ("2026-12-01T09:30Z", at(2026, 12, 1, 9, 30, tz=UTC)),  # a zone given: that zone, not the local one
    ("2026-12-01T09:30:00-05:00", at(2026, 12, 1, 9, 30, tz=timezone(timedelta(hours=-5)))),
    (" 2026-12-01 ", at(2026, 12, 1)),
    ("30m", at(2026, 12, 5, 15, 12, tz=UTC)),  # spans back from now, to the whole minute
    ("12h", at(2026, 12, 5, 3, 42, tz=UTC)),
    ("7d", at(2026, 11, 28, 15, 42, tz=UTC)),
    ("2w", at(2026, 11, 21, 15, 42, tz=UTC)),
])
def test_the_forms(text: str, want: float) -> None:
    assert since_epoch(text, NOW, local) == want


@pytest.mark.parametrize("text", ["yesterday", "", "7", "d", "0d", "-3d", "1.5d", "7D", "7 d", "3y", "1mo",
                                  "٣d", "2026-13-01", "2026-12-01T25:00", "12/01/2026", "20261201", "+7d"])
def test_anything_else_is_refused_with_the_forms(text: str) -> None:
    with pytest.raises(ValueError, match="is not a date, a date-time or a span") as got:
        since_epoch(text, NOW, local)
    assert FORMS in str(got.value)


def test_span_units() -> None:
    assert [span_seconds(s) for s in ("1m", "1h", "1d", "1w", "10d", "x")] == [60, 3600, 86400, 604800, 864000, None]


def west(dt: datetime) -> float:
    """A local zone five hours west of UTC (east of it for year 1), read as the report's does
    (astimezone: a datetime in UTC, which year 10000 or year 0 cannot be)."""
    return dt.replace(tzinfo=timezone(timedelta(hours=5 if dt.year == 1 else -5))).astimezone(UTC).timestamp()


@pytest.mark.parametrize(("text", "said"), [
    ("99999999999999999999w", "is before 1970"),  # `report` stopped on an OverflowError (exit 3)
    ("9" * 5000 + "d", "is before 1970"),  # past int()'s 4,300 digits: its own message, not the forms
    ("3000000w", "is before 1970"),  # it printed 'no session has calls since -55468-...'
    ("1969-12-31T23:59Z", "is before 1970"),
    ("9999-12-31T23:59", "is out of range"),  # 10000-01-01 in UTC: an OverflowError (exit 3)
    ("0001-01-01", "is out of range"),  # year 0 in UTC: an OverflowError (exit 3)
])
def test_a_time_out_of_range_is_refused_with_the_forms(text: str, said: str) -> None:
    with pytest.raises(ValueError, match=said) as got:
        since_epoch(text, NOW, west)
    assert FORMS in str(got.value)


def test_the_edges_that_are_in_range() -> None:
    assert since_epoch("1970-01-01T00:00Z", NOW, west) == 0.0
    assert since_epoch("9999-12-31T18:59", NOW, west) == at(9999, 12, 31, 23, 59, tz=UTC)
    assert since_epoch(f"{int(NOW) // 604800}w", NOW, west) >= 0
