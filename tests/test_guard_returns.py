"""tools/guard_returns.py: the guard's decision at each return against what the call really did."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from bench import synth
from tools import guard_returns as tool

if TYPE_CHECKING:
    from pathlib import Path


def ret(gap: float, ttl: str, cold: bool, x: float = 3.0, interrupted: bool = False) -> dict[str, Any]:
    return {"session": "s", "gap": gap, "ttl": ttl, "x": x, "context": 100_000, "shared": 20_000, "cr": 0 if cold
            else 99_000, "cw": 80_000 if cold else 1_000, "cold": cold, "interrupted": interrupted}


RETURNS = {
    "a": [ret(336, "5m", cold=False), ret(1200, "5m", cold=True), ret(200, "5m", cold=True)],
    "b": [ret(3700, "1h", cold=True), ret(5000, "1h", cold=True, x=0.9), ret(900, "5m", cold=True, interrupted=True)],
}


def test_before_the_guard_held_at_the_lifetime_and_a_warm_cache_was_held() -> None:
    doc = tool.table(RETURNS, before=True, guard_x=1.0)
    assert (doc["returns"], doc["interrupted"], doc["held"], doc["heldWarm"]) == (5, 1, 3, 1)
    assert (doc["coldPastEdge"], doc["coldPastEdgeUnwarned"], doc["coldUnwarned"]) == (2, 0, 1)
    assert doc["quoteOverReal"] == 100_000 / 80_000  # the whole context quoted


def test_after_it_holds_past_the_edge_only_and_warns_between() -> None:
    doc = tool.table(RETURNS, before=False, guard_x=1.0)
    assert (doc["held"], doc["heldWarm"]) == (1, 0)  # 1200 s on a 5-minute cache; 3700 s is short of 63 min
    assert (doc["maybe"], doc["maybeCold"]) == (2, 1)  # 336 s (warm) and 3700 s (cold): a line, no hold
    assert (doc["coldPastEdge"], doc["coldPastEdgeUnwarned"]) == (2, 0)  # 5000 s below guard_x: warned
    assert doc["quoteOverReal"] == 80_000 / 80_000  # net of the 20k prefix a cold call reads


def test_a_return_is_a_prompt_the_user_typed(tmp_path: Path) -> None:
    """Calls that answer a tool result are no return the guard sees; a request interrupted before
    the call is noted (its cache write is in no usage)."""
    def user(text: Any, at: float) -> dict[str, Any]:
        return {"type": "user", "timestamp": synth.iso(at), "message": {"role": "user", "content": text}}

    def call(n: int, at: float) -> dict[str, Any]:
        return {"type": "assistant", "timestamp": synth.iso(at), "requestId": f"r{n}",
                "message": {"id": f"m{n}", "role": "assistant", "content": [{"type": "text", "text": "ok"}],
                            "usage": {"input_tokens": 3, "cache_read_input_tokens": 0,
                                      "cache_creation_input_tokens": 1000, "output_tokens": 5}}}

    lines = [user("first", 1000), call(1, 1001), user([{"type": "tool_result", "tool_use_id": "t"}], 1002),
             call(2, 1003), user("again", 2000), user([{"type": "text", "text": "[Request interrupted by user]"}],
                                                      2001), user("and again", 2100), call(3, 2101)]
    t = tmp_path / "s.jsonl"
    t.write_text("".join(json.dumps(d) + "\n" for d in lines))
    assert tool.prompted(str(t)) == {1001.0: False, 2101.0: True}
