"""Which agent a session is, everywhere a session's figures leave: the status document's `agent`
and the OpenTelemetry points' `agent` attribute (Codex's own telemetry joins on the same id)."""

from __future__ import annotations

import json

import pytest

from session_watcher.agents import agent_named, codex
from session_watcher.agents.codex.reader import CURSOR_KEY
from session_watcher.otlp import payload
from tests.codex_lines import FIXTURES
from tests.oracle import TRANSCRIPTS, sw

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)

THREAD = "019f1f6f-311c-7543-b0f9-f126da3c5434"
CLAUDE = TRANSCRIPTS / "fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"


def test_the_registry_finds_a_rollouts_cursor_by_the_agents_name() -> None:
    assert agent_named(CURSOR_KEY) is codex.AGENT


@pytest.mark.parametrize(("path", "agent"), [(FIXTURES / f"rollout-{THREAD}.jsonl", "codex"), (CLAUDE, "claude-code")])
def test_status_and_the_otlp_points_say_the_agent(path: object, agent: str) -> None:
    got = sw("status", "--json", str(path))
    assert got.returncode == 0, got.stderr
    doc = json.loads(got.stdout)
    assert doc["agent"] == agent
    attrs = payload.session_attributes(doc, {"user.id": "u1"}, None)
    assert attrs["agent"] == agent
    assert attrs["session.id"] == doc["sessionId"]
    batch = payload.Batch()
    payload.add_session(batch, doc, attrs, 1.0)
    points = json.dumps(batch.request({}, "0")["resourceMetrics"])
    assert f'{{"key": "agent", "value": {{"stringValue": "{agent}"}}}}' in points
