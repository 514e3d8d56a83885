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


# ----------------------------------------------------------------------------- one id among others

def _names_alone(name: str, sid: str, ids: list[str]) -> bool:
    """Whether `name` is a prefix of `sid` that begins no other of `ids` (a command line finds it alone)."""
    return sid.startswith(name) and not any(o != sid and o.startswith(name) for o in ids)


def test_unique_prefix_of_two_codex_threads_of_one_minute_tells_them_apart() -> None:
    """Two Codex threads started in one minute share their first 8 characters: each is named on to
    the end of the group that tells it from the other; an id alone in its first 8 keeps those 8."""
    older, newer = "019f6bcb-eb00-7ea1-99ef-7fe2d29e2bba", "019f6bcb-f100-7ea1-99ef-7fe2d29e2bbb"
    other = "0e0e0e0e-4444-4444-8444-444444444444"
    ids = [older, newer, other]
    assert text.unique_prefix(newer, ids) == "019f6bcb-f100"
    assert text.unique_prefix(older, ids) == "019f6bcb-eb00"
    assert text.unique_prefix(other, ids) == "0e0e0e0e"
    assert text.unique_prefix(newer, [newer]) == "019f6bcb"  # itself only: never against itself
    twin = newer[:-1] + "a"  # the same id but its last character: the whole id
    assert text.unique_prefix(newer, [newer, twin]) == newer
    assert text.unique_prefix("abc", ["abcdefghij"]) == "abc"  # another begins with all of it: the whole id
    assert text.unique_prefix("abcdefghij", ["abcdefghik"]) == "abcdefghij"  # no group: the shortest, to its end


def test_unique_prefix_names_each_of_a_year_of_sessions_alone_and_no_longer_than_it_must() -> None:
    """Over a year of either agent's sessions and a minute's threads: each id's name begins no other
    id, is 8 characters where its first 8 are its own, and else ends where a group of the id ends,
    the group in which the shortest unique prefix ends."""
    rng = random.Random(36)
    now = 1_780_000_000_000
    year = 365 * 86_400_000
    ids = ([_uuid(rng, 4, 0) for _ in range(500)] + [_uuid(rng, 7, now - rng.randrange(year)) for _ in range(500)]
           + [_uuid(rng, 7, now + rng.randrange(60_000)) for _ in range(30)])
    for sid in ids:
        name = text.unique_prefix(sid, ids)
        assert _names_alone(name, sid, ids), (sid, name)
        shortest = next(n for n in range(8, len(sid) + 1) if _names_alone(sid[:n], sid, ids))
        if shortest == 8:
            assert name == sid[:8]
        else:
            assert len(name) >= shortest
            assert len(name) == len(sid) or sid[len(name)] == "-"
            assert "-" not in sid[shortest:len(name)], (sid, name)  # no further than that group's end
