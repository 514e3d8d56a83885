"""The harness itself: the real client, our mock, a Read of a real file, the usage it recorded."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from .harness import World, run_print, transcript_records, usage_by_message
from .mock_api import MockAPI, Usage, bash, read, say

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.e2e


def test_print_mode_transcript_carries_exactly_the_served_usage(claude_bin: Path, world: World) -> None:
    script = [
        read(str(world.tracked), Usage(input_tokens=4, cache_write_5m=18_000, output_tokens=41)),
        bash(
            "echo smoke-$((6*7))",
            Usage(input_tokens=6, cache_read=18_000, cache_write_5m=1_150, output_tokens=33),
        ),
        say(
            "All done.",
            Usage(input_tokens=7, cache_read=19_150, cache_write_5m=61, cache_write_1h=9, output_tokens=12),
        ),
    ]
    with MockAPI(script) as api:
        run = run_print(claude_bin, world, api.base_url, "read the engine file, then run a command")
        served = api.main_served()
        requests = list(api.requests)

    assert run.returncode == 0, run.stderr[-2000:]
    assert run.result["subtype"] == "success"
    assert run.result["result"] == "All done."
    assert run.result["num_turns"] == 3
    assert len(served) == 3
    assert api.unscripted == 0

    # the client asked only our loopback mock, and said which session it was
    sid = run.session_id
    posts = [q for q in requests if q.path.startswith("/v1/messages")]
    assert len(posts) == 3
    assert {q.headers.get("X-Claude-Code-Session-Id") or q.headers.get("x-claude-code-session-id") for q in posts} == {
        sid
    }

    # the Read really read our file, and the Bash really ran (its output went back to the model)
    last_body = posts[-1].body
    flat = str(last_body["messages"])
    assert "return x * 39 + 273  # step 39" in flat
    assert "smoke-42" in flat

    # the transcript: one usage per message id, exactly what the mock served, nothing else
    records = transcript_records(world.transcript(sid))
    by_id = usage_by_message(records)
    assert set(by_id) == {s.message_id for s in served}
    for s in served:
        u = by_id[s.message_id]
        assert (
            u["input_tokens"],
            u["cache_read_input_tokens"],
            u["cache_creation_input_tokens"],
            u["output_tokens"],
        ) == (s.usage.input_tokens, s.usage.cache_read, s.usage.cache_write, s.usage.output_tokens)
        assert u["cache_creation"] == {
            "ephemeral_5m_input_tokens": s.usage.cache_write_5m,
            "ephemeral_1h_input_tokens": s.usage.cache_write_1h,
        }
    # a content block per line: the Read turn wrote two lines (text + tool_use) with one id
    first_id = served[0].message_id
    assert sum(1 for r in records if (r.get("message") or {}).get("id") == first_id) == 2
    # and the client's own total agrees with the sum of what was served
    total = run.result["usage"]
    assert total["cache_read_input_tokens"] == 18_000 + 19_150
    assert total["cache_creation_input_tokens"] == 18_000 + 1_150 + 70
    assert total["output_tokens"] == 41 + 33 + 12
