"""OpenAI's long-context step in the cost model: past 272K input tokens every rate of a call on
gpt-6-sol / 6.1 / 6.2 doubles, so the rent a call pays (the status document's burnRate: what the
session's calls cost beyond a fresh one's, per restart) steps up there; below it, and on a model
without the step, the rent is as before."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from session_watcher.core.eoq import rent_rate
from tests.codex_lines import Thread, meta, turn, write_rollout
from tests.oracle import sw

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

THREAD = "019fa000-0000-7000-8000-00000000272a"


def _replayed(tmp_path: Path, model: str, last_prompt: int) -> dict[str, object]:
    """A thread whose prompt grows by 8K a call, a minute apart, up to `last_prompt` tokens."""
    t = Thread()
    prompt, minute, prev = 60_000, 1.0, 0
    while prompt <= last_prompt:
        t.call(minute, prompt, prev, 900, write=prompt - prev)
        prev, prompt, minute = prompt, prompt + 8_000, minute + 1
    path = write_rollout(tmp_path / f"{model}-{last_prompt}" / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl",
                         [meta(0, THREAD), turn(0.5, model), *t.lines])
    got = sw("replay", "--json", str(path))
    assert got.returncode == 0, got.stderr
    return dict(json.loads(got.stdout))


@pytest.mark.parametrize(("model", "last", "factor"), [
    ("gpt-6.2-sol", 300_000, 2.0),  # past the step: every rate doubles
    ("gpt-6.2-sol", 268_000, 1.0),  # short of it
    ("gpt-6-astra", 300_000, 1.0),  # a model without the step
])
def test_the_rent_steps_up_past_272k(tmp_path: Path, model: str, last: int, factor: float) -> None:
    doc = _replayed(tmp_path, model, last)
    big_l, base, c_eff = doc["L"], doc["bDefault"], doc["cEff"]
    assert isinstance(big_l, int)
    assert isinstance(base, int | float)
    assert isinstance(c_eff, float)
    assert (big_l > 272_000) == (last > 272_000)
    assert doc["burnRate"] == pytest.approx(rent_rate(big_l * factor, base, c_eff), rel=1e-5)
    if factor > 1:
        assert isinstance(doc["burnRate"], int | float)
        assert doc["burnRate"] > 1.5 * rent_rate(big_l, base, c_eff)


@pytest.mark.parametrize(("model", "big_l", "said"), [
    ("gpt-6.2-sol", 250_000, "Restart before 272k tokens: past it every call costs double (now 250k)."),
    ("gpt-6.2-sol", 300_000, "Past 272k tokens every call costs double: a fresh session ends that."),
    ("gpt-6-astra", 250_000, None),  # no step on this model
    ("claude-opus-4-6", 250_000, None),
])
def test_an_alert_says_restart_before_272k(model: str, big_l: int, said: str | None) -> None:
    from session_watcher.notifier.message import compose

    alert = {"kind": "advice", "model": model, "L": big_l, "bDefault": 20_000, "system": 15_000, "files": 5_000,
             "project": "/p"}
    body = compose(alert, "session-watcher handoff, then /clear")[1].splitlines()
    steps = [x for x in body if "272k" in x]
    assert steps == ([said] if said else [])
