"""`core.text.short_id_length`, the length every session id is cut to (`short_ids`, the report's
tables and fork sentence, backtest): the fewest characters, 8 or more, that tell the different ids
apart. It finds that in C's loops, widening only the ids that share their first 8 characters; here it
is held equal to the rule read plainly (every id cut at n, n grown while two different ids share
their cut) over ids of both agents and over made-up ones that probe the edges."""

from __future__ import annotations

import random
import string

import pytest

from session_watcher.core import text
from session_watcher.core.text import short_id_length, short_ids


def _plainly(ids: list[str]) -> int:
    """The rule as `short_ids` first said it: 8, one more while two different ids share their first n
    (up to the longest id)."""
    n = 8
    while n < max((len(i) for i in ids), default=0) and len({i[:n] for i in ids}) < len(set(ids)):
        n += 1
    return n


def _uuid(rng: random.Random, version: int, ms: int) -> str:
    """A UUIDv4 (random) or a UUIDv7 (its first 48 bits the time in ms: a Codex thread's id)."""
    bits = f"{rng.getrandbits(128):032x}"
    h = (f"{ms:012x}" if version == 7 else bits[:12]) + str(version) + bits[13:]
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def test_a_year_of_sessions_of_either_agent_is_cut_as_the_rule_says() -> None:
    rng = random.Random(35)
    now = 1_780_000_000_000
    year = 365 * 86_400_000
    claude = [_uuid(rng, 4, 0) for _ in range(10_000)]
    codex = [_uuid(rng, 7, now - rng.randrange(year)) for _ in range(10_000)]  # many share a minute
    minute = [_uuid(rng, 7, now + rng.randrange(60_000)) for _ in range(50)]  # a minute's threads
    for ids in (claude, codex, claude + codex, minute, minute + minute[:3], claude[:25]):
        assert short_id_length(ids) == _plainly(ids)
    assert short_id_length(claude[:25]) == 8
    assert short_id_length(codex) > 8  # UUIDv7s of one minute share their first 8 characters
    n = _plainly(codex)
    assert short_ids(codex) == {i: i[:n] for i in codex}


@pytest.mark.parametrize("plain", [0, text.SHORT_ID_PLAIN])  # C's loops for any count; a hook's plain loop
def test_ids_short_long_repeated_and_prefixes_of_one_another_are_cut_as_the_rule_says(
        plain: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(text, "SHORT_ID_PLAIN", plain)
    rng = random.Random(37)
    for _ in range(20_000):
        alphabet = rng.choice(["ab", "ab-", string.hexdigits[:16]])
        base = "".join(rng.choice(alphabet) for _ in range(rng.randrange(14)))
        ids = [base[:rng.randrange(len(base) + 1)] + "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
               for _ in range(rng.randrange(12))]
        ids += rng.sample(ids, min(len(ids), rng.randrange(3)))  # an id named twice (a fork's parent in the list)
        n = _plainly(ids)
        assert short_id_length(ids) == n, ids
        assert short_ids(ids) == {i: i[:n] for i in ids}, ids
