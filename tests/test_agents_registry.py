"""The agent seam (session_watcher/README.md): a third agent is its own `Agent` and one more entry in
the registry, and the fold, `replay`, `status`'s agent, session naming and discovery take its logs
without a change anywhere else; the registry's lookups for the two agents there are."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

import pytest

from session_watcher import agents
from session_watcher.agents import FALLBACK, agent_for_head, agent_named, agent_reading, claude_code, codex
from session_watcher.agents.seam import Agent
from session_watcher.agents.source import Source
from session_watcher.core.status import status_document
from session_watcher.sessions import naming, replay
from session_watcher.state import session
from tests.codex_lines import FIXTURES, THREAD, meta, turn, write_rollout

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from session_watcher.core.handoff import Digest
    from session_watcher.core.shapes import Event

TOY_ID = "toy0toy0-0000-4000-8000-000000000001"
REAL = FIXTURES / "rollout-019f1f6f-311c-7543-b0f9-f126da3c5434.jsonl"


class Toy(Agent):
    """An agent of its own format: `{"toy": n, "in": tokens, "cached": tokens}` a line, its files
    `toy-<id>.log` in one folder."""

    name = "toy"

    def __init__(self, folder: str) -> None:
        self.folder = folder

    def claims(self, head: bytes) -> bool:
        return head.startswith(b'{"toy"')

    def session_id(self, path: str) -> str | None:
        base = os.path.basename(path)
        return base[4:-4] if base.startswith("toy-") and base.endswith(".log") else None

    def roots(self) -> list[str]:
        return [self.folder]

    def sources(self, roots: list[str]) -> list[Source]:
        return [Source(os.path.join(r, f), sid, "toys", False, self.name) for r in roots for f in sorted(os.listdir(r))
                if (sid := self.session_id(f)) is not None]

    def read(self, before: dict[str, Any] | None, cursor: dict[str, Any], lines: list[bytes], whole: bool,
             ) -> tuple[list[Event], int]:
        rows = lines[0].splitlines() if whole else lines
        events: list[Event] = []
        for line in rows:
            rec = json.loads(line)
            cached = rec["cached"]
            events.append(("call", f"toy#{rec['toy']}", 1000.0 + 60 * rec["toy"], "claude-opus-4-6", False, 0,
                           cached, rec["in"] - cached, 10, rec["in"] - cached, 0, None))
        return events, 0

    def cwd_of(self, rec: Mapping[str, Any]) -> str | None:
        return None

    def digest(self, d: Digest) -> Callable[[Mapping[str, Any]], None]:
        return d.add


@pytest.fixture
def toy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Toy, Path]:
    """The toy agent added as a third agent would be: one more entry in AGENTS (the lookups' tables
    are derived from it at import, so they are derived again here)."""
    folder = tmp_path / "toys"
    folder.mkdir()
    log = folder / f"toy-{TOY_ID}.log"
    calls = [{"toy": n, "in": 20_000 + 1000 * n, "cached": 20_000 + 1000 * (n - 1) if n else 0} for n in range(5)]
    log.write_text("".join(json.dumps(c) + "\n" for c in calls))
    agent = Toy(str(folder))
    registry = (*agents.AGENTS, agent)
    monkeypatch.setattr(agents, "AGENTS", registry)
    monkeypatch.setattr(agents, "_CLAIMING", tuple(a for a in registry if not a.fallback))
    monkeypatch.setattr(agents, "_BY_NAME", {a.name: a for a in registry})
    return agent, log


def test_a_third_agents_log_folds_through_the_registry(toy: tuple[Toy, Path]) -> None:
    agent, log = toy
    state, cfg, trace = replay.fold(str(log))
    assert state["sessionId"] == TOY_ID  # its own session id rule
    assert state["engine"]["calls"] == 5
    assert [row["call"] for row in trace] == [1, 2, 3, 4, 5]
    assert status_document(state, cfg)["agent"] == "toy"
    assert agent_named("toy") is agent
    # a hook's later read of the grown log: still the toy's (its cursor is marked with its name)
    with log.open("a") as fh:
        fh.write(json.dumps({"toy": 5, "in": 26_000, "cached": 25_000}) + "\n")
    state, _alerts, done = session.sync(state, str(log), cfg, float("inf"))
    assert done
    assert (state["engine"]["calls"], state["bad"], state["context"]["agent"]) == (6, 0, "toy")


def test_a_third_agents_sessions_are_found_and_named(toy: tuple[Toy, Path]) -> None:
    _agent, log = toy
    looked, found = agents.sources()
    assert str(log.parent) in looked
    assert [s.path for s in found if s.agent == "toy"] == [str(log)]
    got = naming.find(TOY_ID[:8])
    assert (got.session_id, got.transcript, got.recorded) == (TOY_ID, str(log), False)


def test_the_registry_tells_each_agents_reads(tmp_path: Path) -> None:
    rollout = write_rollout(tmp_path / f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl", [meta(), turn(0, "gpt-5.5")])
    head = rollout.read_bytes()
    claude = b'{"type":"user","timestamp":"2026-11-20T10:00:00.000Z"}\n'
    assert agent_for_head(head) is codex.AGENT
    assert agent_for_head(claude) is FALLBACK is claude_code.AGENT
    assert agent_reading(None, [head]) is codex.AGENT  # a first read: the first line says
    assert agent_reading({"offset": 10, "codex": {}}, []) is codex.AGENT  # the decoder's state in the cursor
    assert agent_reading({"offset": 10}, [head]) is FALLBACK  # a later read of a file nobody claimed
    assert agents.session_id(str(rollout)) == THREAD
    assert agents.session_id(str(tmp_path / "abc.jsonl")) == "abc"
    assert agents.record_cwd({"cwd": "/a"}) == "/a"
    assert agents.record_cwd({"type": "session_meta", "payload": {"cwd": "/b"}}) == "/b"
    assert agent_named("nobody") is None
    assert agent_named(None) is None


def test_every_trace_row_of_a_rollouts_replay_names_codex() -> None:
    """The state names its agent before the first read is folded: the rows of that read say it too
    (they said claude-code while the cursor did not yet hold the rollout's decoder)."""
    _state, _cfg, trace = replay.fold(str(REAL))
    assert len(trace) > 50
    assert {row["agent"] for row in trace} == {"codex"}


def test_export_takes_every_agents_sessions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`export --otlp` without --projects: Claude Code's transcripts and Codex's threads alike."""
    from session_watcher.cli import export

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex"))
    rollout = write_rollout(tmp_path / "codex" / "sessions" / "2026" / "11" / "20" /
                            f"rollout-2026-11-20T10-00-00-{THREAD}.jsonl", [meta(), turn(0, "gpt-5.5")])
    project = tmp_path / "claude" / "projects" / "-proj"
    project.mkdir(parents=True)
    transcript = project / "abc.jsonl"
    transcript.write_text('{"type":"user","timestamp":"2026-11-20T10:00:00.000Z"}\n')
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    assert sorted(export.sessions(None, None)) == sorted([str(transcript), str(rollout)])


def test_a_rollout_in_a_folder_the_user_names_is_read_as_its_agents(tmp_path: Path) -> None:
    """`report --projects DIR` over a folder holding a transcript and a rollout (not named after any
    agent): the rollout is a Codex thread, its thread id the session, its calls counted, cold and
    warm; the transcript stays Claude Code's. (A rollout read as a transcript gives no call at all.)"""
    import shutil

    from session_watcher.reports import collect

    folder = tmp_path / "mixed"
    folder.mkdir()
    rollout = sorted(p for p in os.listdir(FIXTURES) if p.startswith("rollout-"))[0]
    shutil.copy(os.path.join(FIXTURES, rollout), folder / rollout)
    transcripts = os.path.join(os.path.dirname(FIXTURES), "transcripts")
    claude = sorted(p for p in os.listdir(transcripts) if p.endswith(".jsonl"))[0]
    shutil.copy(os.path.join(transcripts, claude), folder / claude)
    thread = codex.AGENT.session_id(rollout)
    assert thread
    assert sorted(agents.sources([str(folder)])[1]) == sorted([
        Source(str(folder / claude), claude.removesuffix(".jsonl"), "mixed", False),
        Source(str(folder / rollout), thread, "codex", False, "codex"),
    ])
    db = str(tmp_path / "index.sqlite3")
    for _run in ("cold", "warm"):
        doc = json.loads(collect.run_report_json([str(folder)], db))
        by_agent = {s["agent"]: s for s in doc["sessions"]}
        assert sorted(by_agent) == ["claude-code", "codex"]
        assert by_agent["codex"]["sessionId"] == thread
        assert by_agent["codex"]["apiCalls"] > 0


def test_the_sessions_on_disk_are_the_ones_the_report_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`agents.sessions_on_disk` (doctor's count, by the files' names) against the report's own
    discovery (`reports.collect._sources`) over the fixtures' transcripts and rollouts: the same
    sessions. A session under two config folders is one, a subagent's file is its session's, a
    rollout live and archived is one thread, and a rollout among Claude Code's transcripts is the
    Codex thread the report names (counted apart from the same thread in the Codex home, it was two)."""
    import shutil

    from session_watcher.reports import collect

    fixtures = FIXTURES.parent
    c1, c2, home = tmp_path / "c1", tmp_path / "c2", tmp_path / "codex"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", f"{c1}, {c2}")
    monkeypatch.setenv("CODEX_HOME", str(home))
    kept = ((c1, ("transcripts", "real-client-2.1.332", "cold-return")), (c2, ("transcripts", "real-client")))
    for cfg, names in kept:
        (cfg / "projects").mkdir(parents=True)
        for name in names:
            shutil.copytree(fixtures / name, cfg / "projects" / f"-{name}")
    rollouts = sorted(p.name for p in FIXTURES.glob("rollout-*.jsonl"))
    assert len(rollouts) >= 6
    named = [f"rollout-2026-11-{20 + n}T10-00-00-{r.removeprefix('rollout-')}" for n, r in enumerate(rollouts)]
    places = [home / "sessions" / "2026" / "11" / "20"] * 3 + [home / "archived_sessions"] * 2 + [
        home / "archived_sessions" / "2026" / "11" / "19"] * (len(rollouts) - 5)
    for r, name, place in zip(rollouts, named, places, strict=True):
        place.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURES / r, place / name)
    shutil.copy(FIXTURES / rollouts[0], home / "archived_sessions" / named[0])  # live and archived: one thread
    (c1 / "projects" / "-mixed").mkdir()
    shutil.copy(FIXTURES / rollouts[1], c1 / "projects" / "-mixed" / named[1])  # the report's: a Codex thread
    found = collect._sources([(a, a.roots()) for a in agents.AGENTS], None)
    report = {(s.agent or FALLBACK.name, s.session) for s in found if not s.sub}
    assert any(s.sub for s in found)  # the fixtures' subagent files were there to be left out
    assert ("codex", codex.AGENT.session_id(named[1])) in report
    assert not any(sid.startswith("rollout-") for _agent, sid in report)
    assert agents.sessions_on_disk(10_000) == len(report), sorted(report)
    assert agents.sessions_on_disk(len(report)) == len(report)
    assert agents.sessions_on_disk(3) == 3
