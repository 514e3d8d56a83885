"""The mock itself, spoken to over real HTTP: the event sequence the client parses, and the log."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest

from .mock_api import MockAPI, Usage, classify, read, say

pytestmark = pytest.mark.e2e


def _post(url: str, body: Any) -> tuple[int, dict[str, str], bytes]:
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST", headers={"Content-Type": "application/json", "x-test": "1"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.status, dict(resp.headers.items()), resp.read()


def _events(raw: bytes) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        lines = dict(line.split(": ", 1) for line in chunk.splitlines())
        out.append((lines["event"], json.loads(lines["data"])))
    return out


def test_streaming_reply_is_the_real_event_sequence_with_the_scripted_usage() -> None:
    usage = Usage(input_tokens=7, cache_read=1_000, cache_write_5m=30, cache_write_1h=12, output_tokens=44)
    with MockAPI([read("/p/a.py", usage)]) as api:
        status, headers, raw = _post(
            api.base_url + "/v1/messages?beta=true",
            {
                "model": "m",
                "stream": True,
                "tools": [{"name": "Read"}],
                "messages": [{"role": "user", "content": "hi"}],
            },
        )
        served = api.main_served()
    assert status == 200
    assert headers["Content-Type"] == "text/event-stream"
    ev = _events(raw)
    names = [e for e, _ in ev]
    assert names == [
        "message_start",
        "ping",
        "content_block_start",
        "content_block_delta",
        "content_block_delta",
        "content_block_stop",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
    ]
    start = ev[0][1]["message"]
    assert start["id"] == served[0].message_id
    assert headers["request-id"] == served[0].request_id
    assert start["usage"]["cache_read_input_tokens"] == 1_000
    assert start["usage"]["cache_creation_input_tokens"] == 42
    assert start["usage"]["cache_creation"] == {"ephemeral_5m_input_tokens": 30, "ephemeral_1h_input_tokens": 12}
    tool = ev[6][1]["content_block"]
    assert tool["type"] == "tool_use"
    assert tool["name"] == "Read"
    assert json.loads(ev[7][1]["delta"]["partial_json"]) == {"file_path": "/p/a.py"}
    assert ev[9][1]["delta"]["stop_reason"] == "tool_use"
    assert ev[9][1]["usage"] == {"output_tokens": 44}


def test_json_reply_count_tokens_and_the_request_log() -> None:
    with MockAPI([say("plain", Usage(input_tokens=3, output_tokens=2))]) as api:
        _, _, raw = _post(api.base_url + "/v1/messages", {"model": "m", "messages": [], "tools": [{}]})
        msg = json.loads(raw)
        _, _, counted = _post(api.base_url + "/v1/messages/count_tokens?beta=true", {"messages": ["x" * 400]})
        _, _, other = _post(api.base_url + "/v1/whatever", {"a": 1})
        head = urllib.request.urlopen(urllib.request.Request(api.base_url + "/", method="HEAD"), timeout=10)
        # the script is spent: further main requests are answered and counted, never refused
        _, _, extra = _post(api.base_url + "/v1/messages", {"model": "m", "messages": [], "tools": [{}]})
        log = [(q.method, q.path.split("?")[0], q.kind) for q in api.requests]
        unscripted = api.unscripted
    assert msg["content"] == [{"type": "text", "text": "plain"}]
    assert msg["stop_reason"] == "end_turn"
    assert msg["usage"]["input_tokens"] == 3
    assert msg["usage"]["output_tokens"] == 2
    assert json.loads(counted)["input_tokens"] > 100
    assert json.loads(other) == {}
    assert head.status == 200
    assert json.loads(extra)["content"][0]["text"] == "Done."
    assert unscripted == 1
    assert log == [
        ("POST", "/v1/messages", "main"),
        ("POST", "/v1/messages/count_tokens", "count_tokens"),
        ("POST", "/v1/whatever", "other"),
        ("HEAD", "/", "head"),
        ("POST", "/v1/messages", "main"),
    ]


def test_classify_tells_title_and_compaction_requests_from_the_conversation() -> None:
    assert classify({"tools": [{}], "messages": [{"role": "user", "content": "read the file"}]}) == "main"
    compact = "Your task is to create a detailed summary of the conversation so far, paying attention"
    assert (
        classify({"tools": [{}], "messages": [{"role": "user", "content": [{"type": "text", "text": compact}]}]})
        == "compact"
    )
    assert (
        classify(
            {
                "tools": [],
                "output_config": {"format": {}},
                "system": [{"text": "Generate a title"}],
                "messages": [{"role": "user", "content": "x"}],
            }
        )
        == "title"
    )
