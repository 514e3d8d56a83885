"""core.numbers: the one way a figure is printed for a person (tokens, dollars, durations)."""

from __future__ import annotations

import pytest

from session_watcher.core.numbers import dollars, duration, duration_cell, exact_duration, tokens

NOT_NUMBERS = (None, float("nan"), float("inf"), float("-inf"), True, "12", [1])


@pytest.mark.parametrize(("n", "text"), [
    (0, "0"), (999, "999"), (999.4, "999"), (999.5, "1k"), (1_000, "1k"), (1_049, "1k"), (1_050, "1.1k"),
    (1_234, "1.2k"), (9_949, "9.9k"), (9_950, "10k"), (12_499, "12k"), (48_213, "48k"), (340_219, "340k"),
    (999_499, "999k"), (999_500, "1M"), (999_600, "1M"), (1_000_000, "1M"), (1_234_567, "1.2M"),
    (1_250_000, "1.3M"), (1_520_000, "1.5M"), (999_999, "1M"), (10_400, "10k"), (9_950_000, "10M"),
    (999_600_000, "1B"), (2_000_000_000_000, "2,000B"),
])
def test_tokens(n: float, text: str) -> None:
    """One decimal below 10 of a unit, none from 10, halves up on the integer (1,250,000 is 1.3M, not
    the 1.2M a float's half-even gives), and never 1000 of a unit."""
    assert tokens(n) == text


def test_tokens_of_a_negative_and_of_what_is_not_a_number() -> None:
    """A loss keeps its sign; None, NaN, infinity, a bool or a string reads '?'."""
    assert [tokens(v) for v in (-1_234, -999_600, -0.4)] == ["-1.2k", "-1M", "0"]
    assert {tokens(v) for v in NOT_NUMBERS} == {"?"}


@pytest.mark.parametrize(("usd", "text"), [
    (0, "$0.00"), (0.001, "<$0.01"), (0.004999, "<$0.01"), (0.005, "$0.01"), (0.89, "$0.89"), (1.005, "$1.01"),
    (1.125, "$1.13"), (12, "$12.00"), (100, "$100.00"), (130.925, "$130.93"), (999.994, "$999.99"),
    (999.995, "$1,000"), (1_000, "$1,000"), (1_204.4, "$1,204"), (1_204.5, "$1,205"), (1_234_567.8, "$1,234,568"),
])
def test_dollars(usd: float, text: str) -> None:
    """Cents below $1,000 with halves up on the written decimal (1.005 is $1.01 though stored as
    1.00499...), whole dollars with separators from $1,000, '<$0.01' under half a cent but not for 0."""
    assert dollars(usd) == text


def test_dollars_of_a_negative_and_of_an_unknown_price() -> None:
    assert [dollars(v) for v in (-3.5, -1_204.4, -0.001)] == ["-$3.50", "-$1,204", "-<$0.01"]
    assert {dollars(v) for v in NOT_NUMBERS} == {"?"}


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0 s"), (-5, "0 s"), (45, "45 s"), (59.4, "59 s"), (59.5, "1 min"), (90, "1 min 30 s"),
    (299, "4 min 59 s"), (300, "5 min"), (450, "7 min 30 s"), (599.4, "9 min 59 s"), (600, "10 min"),
    (629, "10 min"), (630, "11 min"), (1_380, "23 min"), (4_200, "70 min"), (5_370, "1 h 30 min"),
    (5_400, "1 h 30 min"),
    (10_800, "3 h"), (11_100, "3 h 5 min"), (172_799, "48 h"), (172_800, "2 days"), (216_000, "3 days"),
])
def test_duration(seconds: float, text: str) -> None:
    """One wording: seconds under a minute, minutes and seconds under 10 minutes (a cache's 5-minute
    edge), minutes under 90, hours and minutes under two days, then days; halves up (630 s is 11 min,
    2.5 days is 3)."""
    assert duration(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), [
    (42, "42 s"), (299, "4 min 59 s"), (305, "5 min 05 s"), (3_598, "59 min 58 s"), (3_610, "1 h 00 min 10 s"),
])
def test_exact_duration_keeps_every_second(seconds: float, text: str) -> None:
    """The evidence form: 3,598 s and 3,610 s, which `duration` both rounds to the hour, stay apart."""
    assert exact_duration(seconds) == text
    assert duration(3_598) == duration(3_610) == "60 min"


@pytest.mark.parametrize(("seconds", "text"), [
    (42, "42s"), (90, "1m30"), (299, "4m59"), (300, "5m"), (599.6, "10m"),
    (3_120, "52m"), (11_100, "3h05"), (172_740, "47h59"), (180_000, "2d02h"),
    (-1, "0s"), (864_000_001, ">10kd"), (1e20, ">10kd"),
])
def test_duration_cell(seconds: float, text: str) -> None:
    """The table form: at most 5 characters, the same units."""
    assert duration_cell(seconds) == text
    assert len(text) <= 5


def test_durations_of_what_is_not_a_number() -> None:
    assert {f(v) for f in (duration, exact_duration, duration_cell) for v in NOT_NUMBERS} == {"?"}


@pytest.mark.parametrize("seconds", [864_000_001, 1e20, 10**400])
def test_a_span_past_ten_thousand_days_reads_as_past_it(seconds: float) -> None:
    """A span no session has (a client's `seconds_since_last_response: 1e20`): "over 10,000 days",
    not "1157407407407407 days"; 10,000 days itself still as it is."""
    assert duration(seconds) == exact_duration(seconds) == "over 10,000 days"
    assert duration(864_000_000) == "10000 days"
