"""The current client's transcripts (2.1.332) fold with no bad line and with exact totals.

They hold record types older clients never wrote (api-request, api-request-blob, api-request-shape,
tools-used, atis-latch, cost-state, prompt_snapshot attachments), async hook output
(`async_hook_response` attachments), a synchronous hook's systemMessage (`hook_system_message`), a
background subagent and a compaction. Totals are checked against the independent oracle.
"""

from __future__ import annotations

import json
import shutil
from typing import TYPE_CHECKING

import pytest

from session_watcher.sessions.replay import replay
from tests.oracle import FIXTURES, oracle, stop_until_read
from tests.statefile import load_state

if TYPE_CHECKING:
    from pathlib import Path

CLIENT_332 = FIXTURES / "real-client-2.1.332"
TRANSCRIPTS = sorted(CLIENT_332.glob("*/projects/*/*.jsonl"))
NEW_RECORDS = {"api-request", "api-request-blob", "api-request-shape", "tools-used", "atis-latch", "cost-state"}
NEW_ATTACHMENTS = {"async_hook_response", "hook_system_message", "prompt_snapshot"}


def _subagents(t: Path) -> list[Path]:
    return sorted((t.parent / t.stem / "subagents").glob("*.jsonl"))


def test_the_fixtures_hold_the_new_shapes() -> None:
    types: set[str] = set()
    attachments: set[str] = set()
    for t in TRANSCRIPTS:
        for line in t.read_text().splitlines():
            rec = json.loads(line)
            types.add(rec["type"])
            if rec["type"] == "attachment":
                attachments.add(rec["attachment"]["type"])
    assert types >= NEW_RECORDS
    assert attachments >= NEW_ATTACHMENTS
    assert any(_subagents(t) for t in TRANSCRIPTS)


@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda p: f"{p.parts[-4]}-{p.stem[:8]}")
def test_replay_has_no_bad_line_and_the_oracles_totals(transcript: Path) -> None:
    doc, trace = replay(str(transcript), cwd="/home/dev/proj")
    want = oracle(transcript, _subagents(transcript))
    assert doc["badLines"] == 0
    assert doc["tokenUsage"] == want["main"]
    assert doc["subagentUsage"] == want["sub"]
    assert len(trace) == doc["calls"] == want["main"]["calls"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("transcript", TRANSCRIPTS, ids=lambda p: f"{p.parts[-4]}-{p.stem[:8]}")
def test_a_hook_folds_the_same(transcript: Path, tmp_path: Path) -> None:
    sid = transcript.stem
    t = tmp_path / f"{sid}.jsonl"
    shutil.copy(transcript, t)
    if (transcript.parent / sid).is_dir():
        shutil.copytree(transcript.parent / sid, tmp_path / sid)
    stop_until_read(sid, t, _subagents(t))  # one run may leave files for the next (a busy machine)
    state = load_state(sid)
    want = oracle(t, _subagents(t))
    assert state["bad"] == 0
    assert state["meter"]["main"] == want["main"]
    assert state["meter"]["sub"] == want["sub"]
