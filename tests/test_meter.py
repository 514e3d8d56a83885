"""core.meter: one count per API call, the last sample wins, streams kept apart."""

from __future__ import annotations

import json
import random
from typing import TYPE_CHECKING, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from session_watcher.core.meter import FIELDS, RECENT_MAX, add_sample, new_meter

if TYPE_CHECKING:
    from session_watcher.core.shapes import Sample


def test_later_sample_replaces_earlier() -> None:
    m = new_meter()
    assert add_sample(m, "main", "a", (3, 100, 10, 1, 10, 0)) is True
    assert add_sample(m, "main", "a", (3, 100, 10, 57, 10, 0)) is False
    assert m["main"] == {"uncachedInput": 3, "cacheRead": 100, "cacheWrite": 10, "output": 57,
                         "cacheWrite5m": 10, "cacheWrite1h": 0, "calls": 1}
    assert add_sample(m, "main", "b", (1, 2, 3, 4, 0, 3)) is True
    assert m["main"]["calls"] == 2
    assert m["main"]["output"] == 61
    assert m["main"]["cacheWrite1h"] == 3
    assert m["sub"]["calls"] == 0


def test_streams_are_separate_and_a_call_moves_with_its_last_sample() -> None:
    m = new_meter()
    add_sample(m, "sub", "s", (1, 1, 1, 1, 1, 0))
    add_sample(m, "main", "x", (2, 2, 2, 2, 2, 0))
    assert m["sub"]["calls"] == 1
    assert m["main"]["calls"] == 1
    add_sample(m, "main", "s", (5, 5, 5, 5, 5, 0))
    assert m["sub"] == dict.fromkeys((*FIELDS, "calls"), 0)
    assert m["main"]["calls"] == 2
    assert m["main"]["output"] == 7


def test_a_repeated_sample_changes_no_bucket_and_stays_newest() -> None:
    """A later line repeating its call's usage exactly (most do) counts nothing again, moves the call
    to the newest end of the window, and in another stream still moves the call; a state read back
    from JSON (its samples as lists) folds the repeat alike."""
    m = new_meter()
    add_sample(m, "main", "a", (3, 100, 10, 5, 10, 0))
    add_sample(m, "main", "b", (1, 2, 3, 4, 0, 3))
    before = dict(m["main"])
    saved = json.loads(json.dumps(m))
    assert add_sample(m, "main", "a", (3, 100, 10, 5, 10, 0)) is False
    assert m["main"] == before
    assert list(m["recent"]) == ["b", "a"]
    assert add_sample(saved, "main", "a", (3, 100, 10, 5, 10, 0)) is False
    assert saved["main"] == before
    assert list(saved["recent"]) == ["b", "a"]
    add_sample(m, "sub", "a", (3, 100, 10, 5, 10, 0))
    assert (m["main"]["calls"], m["main"]["output"], m["sub"]["calls"], m["sub"]["output"]) == (1, 4, 1, 5)


def test_window_is_bounded() -> None:
    m = new_meter()
    for i in range(RECENT_MAX * 3):
        add_sample(m, "main", f"k{i}", (1, 0, 0, 1, 0, 0))
    assert len(m["recent"]) == RECENT_MAX
    assert m["main"]["calls"] == RECENT_MAX * 3


def oracle(samples: list[tuple[str, str, tuple[int, ...]]]) -> dict[str, dict[str, int]]:
    last: dict[str, tuple[str, tuple[int, ...]]] = {}
    for stream, key, sample in samples:
        last[key] = (stream, sample)
    out = {}
    for stream in ("main", "sub"):
        b = dict.fromkeys((*FIELDS, "calls"), 0)
        for s, sample in last.values():
            if s == stream:
                for f, v in zip(FIELDS, sample, strict=True):
                    b[f] += v
                b["calls"] += 1
        out[stream] = b
    return out


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32), n_calls=st.integers(0, 300), resamples=st.integers(1, 4),
       side_share=st.floats(0, 1))
def test_random_sample_streams_match_plain_dedupe(seed: int, n_calls: int, resamples: int, side_share: float) -> None:
    """Responses arrive as 1..resamples lines each, lines of neighbouring responses interleaved a
    little (as parallel subagents do): the meter equals a plain last-sample-wins dedupe."""
    rng = random.Random(seed)
    samples = []
    for i in range(n_calls):
        stream = "sub" if rng.random() < side_share else "main"
        base = [rng.randrange(0, 5000) for _ in range(6)]
        for _ in range(rng.randint(1, resamples)):
            out = base[:]
            out[3] = rng.randrange(0, 3000)
            samples.append((stream, f"msg{i}:req{i}", tuple(out)))
    # shuffle within small windows only
    for j in range(0, len(samples) - 8, 8):
        window = samples[j:j + 8]
        rng.shuffle(window)
        samples[j:j + 8] = window
    m = new_meter()
    for stream, key, sample in samples:
        add_sample(m, stream, key, cast("Sample", sample))  # six counts, as `base` has
    expect = oracle(samples)
    assert m["main"] == expect["main"]
    assert m["sub"] == expect["sub"]
