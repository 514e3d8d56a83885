"""The sample session install.sh shows is anonymised, and it still tells the same story."""

from __future__ import annotations

import json
import re
import shutil
from importlib import resources
from typing import TYPE_CHECKING

from session_watcher.sessions.replay import replay
from tests.oracle import TRANSCRIPTS

if TYPE_CHECKING:
    from pathlib import Path

SAMPLE = resources.files("session_watcher").joinpath("data", "sample-session.jsonl")


def test_sample_names_no_real_person() -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    assert set(re.findall(r"/home/([A-Za-z0-9_.-]+)", text)) == {"devel"}
    assert not re.search(r"(?i)marco|rotili|handgemacht", text)
    emails = set(re.findall(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[a-z]{2,}", text))
    assert emails == {"dev.example@example.invalid"}
    for line in text.splitlines():
        json.loads(line)


def test_sample_replays_to_the_same_numbers_as_the_real_session(tmp_path: Path) -> None:
    """The names were replaced by strings of the same length: every estimate and total is unchanged."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    sample, real = tmp_path / "a" / "s.jsonl", tmp_path / "b" / "s.jsonl"
    sample.write_bytes(SAMPLE.read_bytes())
    shutil.copy(TRANSCRIPTS / "subagent.jsonl", real)
    assert sample.stat().st_size == real.stat().st_size
    doc_sample, trace_sample = replay(str(sample), cwd=str(tmp_path))
    doc_real, trace_real = replay(str(real), cwd=str(tmp_path))
    assert len(trace_sample) == 12

    def same_paths(obj: object) -> str:  # the file buckets name the renamed home folder
        return json.dumps(obj, sort_keys=True).replace("/home/marco/", "/home/devel/")

    assert same_paths(trace_sample) == same_paths(trace_real)
    assert same_paths(doc_sample) == same_paths(doc_real)
    assert doc_sample["tokenUsage"] == doc_real["tokenUsage"]


CODEX_SAMPLE = resources.files("session_watcher").joinpath("data", "sample-codex.jsonl")


def test_the_codex_sample_is_generated_and_names_no_one() -> None:
    """The Codex thread install.sh shows a Codex-only user is bench/sample_codex.py's output, byte
    for byte (written at another time: the generator has no clock, no chance), marked generated where Codex names the
    client that wrote the thread; no real person's folder or address in it."""
    from bench import sample_codex

    text = CODEX_SAMPLE.read_text(encoding="utf-8")
    assert text == sample_codex.text()
    meta = json.loads(text.splitlines()[0])
    assert meta["type"] == "session_meta"
    assert "generated" in meta["payload"]["originator"]
    assert set(re.findall(r"/home/([A-Za-z0-9_.-]+)", text)) == {"devel"}
    assert not re.findall(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[a-z]{2,}", text)


def test_the_codex_sample_replays_as_a_codex_thread(tmp_path: Path) -> None:
    """Replayed, it is a Codex thread (its agent, its model and prices): 12 calls on gpt-5.5, the
    usage the generator wrote, the requests it typed in its handoff's digest."""
    from session_watcher.agents import agent_for_head

    path = tmp_path / "sample-codex.jsonl"
    path.write_bytes(CODEX_SAMPLE.read_bytes())
    assert agent_for_head(path.read_bytes()[:4096]).name == "codex"
    doc, trace = replay(str(path), cwd=str(tmp_path))
    assert len(trace) == 12
    assert doc["model"] == "gpt-5.5"
    usage = doc["tokenUsage"]
    records = [json.loads(x)["payload"]["usage"] for x in path.read_text().splitlines()
               if json.loads(x)["type"] == "token_usage_record"]
    assert usage["cacheRead"] == sum(r["cached_input_tokens"] for r in records)
    assert usage["cacheRead"] + usage["cacheWrite"] + usage["uncachedInput"] == sum(r["input_tokens"] for r in records)
    assert doc["agent"] == "codex"
