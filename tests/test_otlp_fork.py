"""A forked session's OpenTelemetry counters count its own calls: a collector summing the sessions
counts each API call once, the calls a fork copied from its parent in the parent's series only, as
`report` counts them (tests/test_report_fork.py).

The fork is the real client's (2.1.332, `claude -p --resume ID --fork-session` against the mock:
tests/fixtures/real-client-2.1.332/fork): the parent made 5 calls; the fork's file begins with
copies of the parent's first 4 (each naming the parent in `requestSessionId`), then its own one.
Both the backfill (`export --otlp`, a process) and the live exporter (the real hook folding the
fork, then its session's flush) send to the loopback receiver.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from session_watcher.base import paths
from session_watcher.otlp import exporter
from session_watcher.otlp.payload import nanos
from tests.oracle import hook, payload, stop_until_read, sw
from tests.otlp_receiver import Receiver
from tests.test_report_fork import CHILD, FORK, PARENT, each_call_once

pytestmark = pytest.mark.slow  # starts processes


def _copy(tmp_path: Path, *sids: str) -> Path:
    proj = tmp_path / "projects" / "-home-dev-proj"
    proj.mkdir(parents=True)
    for sid in sids:
        shutil.copy2(FORK / f"{sid}.jsonl", proj / f"{sid}.jsonl")
    return proj


def _own_first_call(sid: str) -> float:
    """The time of the session's first call its file does not name another session as the maker of."""
    from session_watcher.agents.seam import iso_to_epoch

    for line in (FORK / f"{sid}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        msg = rec.get("message") if rec.get("type") == "assistant" else None
        if isinstance(msg, dict) and msg.get("usage") and rec.get("requestSessionId") in (None, sid):
            ts = iso_to_epoch(rec["timestamp"])
            assert ts is not None
            return ts
    raise AssertionError("no call of its own")


def test_the_backfill_counts_a_forks_copied_calls_in_the_parent_only(tmp_path: Path) -> None:
    """The sum over the two sessions' `calls` is the oracle's 6, not 10; the fork's series holds its
    1 call, starts at that call, and its cache tokens are those of its own calls after its first (none:
    the report's warmth has no second call of its either); the parent's are as they were."""
    proj = _copy(tmp_path, PARENT, CHILD)
    with Receiver() as r:
        proc = sw("export", "--otlp", r.url, "--projects", str(proj))
        assert proc.returncode == 0, proc.stderr
        calls = {p.attributes["session.id"]: p for p in r.points("session_watcher.calls")}
        cache = {(p.attributes["session.id"], p.attributes["type"]): p.value
                 for p in r.points("session_watcher.cache.tokens")}
    assert sum(p.value for p in calls.values()) == each_call_once(FORK)["calls"] == 6
    assert (calls[PARENT].value, calls[CHILD].value) == (5, 1)
    assert calls[CHILD].start == int(nanos(_own_first_call(CHILD)))
    assert calls[PARENT].start == int(nanos(_own_first_call(PARENT)))
    assert (cache[(CHILD, "read")], cache[(CHILD, "write")]) == (0, 0)
    assert (cache[(PARENT, "read")], cache[(PARENT, "write")]) == (20000 + 20300 + 20700 + 20900, 300 + 400 + 200 + 700)


def test_the_live_exporter_counts_a_forks_copied_calls_in_the_parent_only(tmp_path: Path) -> None:
    """The real hook folds the fork as Claude Code runs it (its first hook reads the copies too);
    the session's flush sends 1 call for it, and `status --json` says the 4 copied beside its 5."""
    proj = _copy(tmp_path, CHILD)
    transcript = proj / f"{CHILD}.jsonl"
    assert hook("SessionStart", payload(CHILD, transcript, "SessionStart", source="resume")).returncode == 0
    stop_until_read(CHILD, transcript)
    proc = sw("status", "--session", CHILD, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["calls"], doc["inheritedCalls"], doc["inheritedTo"]) == (5, 4, 4)
    with Receiver() as r:
        cfg = Path(paths.user_config_file())
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(f'[otlp]\nenabled = true\nendpoint = "{r.url}"\ntimeout = 2\n')
        assert exporter.run(CHILD) == 0
        calls = r.points("session_watcher.calls")
    assert [(p.attributes["session.id"], p.value) for p in calls] == [(CHILD, 1)]
    assert calls[0].start == int(nanos(_own_first_call(CHILD)))


def _forked(tmp_path: Path, parent: Path, child: str) -> Path:
    """The fork of `parent` as the client writes it: every line copied under the fork's
    `sessionId`, each call naming the parent in `requestSessionId`."""
    out = tmp_path / f"{child}.jsonl"
    lines = []
    for line in parent.read_text().splitlines():
        rec = json.loads(line)
        was = rec.get("sessionId")
        rec["sessionId"] = child
        if rec.get("type") == "assistant":
            rec["requestSessionId"] = was
        lines.append(json.dumps(rec, separators=(",", ":")))  # the client's own spacing
    out.write_text("\n".join(lines) + "\n")
    return out


def test_a_forks_first_hook_tells_no_advice_its_parent_was_given(tmp_path: Path) -> None:
    """The parent's gate fired on its last calls (news at its end: the hook tells it). A fork of it
    holds copies of those calls; its first hook folds them and fires the gate again, which stays in
    the state (`status`, the page) but is the parent's advice, already told: no message for it."""
    from tests.test_gate import overstaying

    cfg = Path(paths.user_config_file())
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\n')
    from tests.test_guard_hook import shifted

    parent = overstaying(tmp_path, calls=27)  # its gate (call 25) is news at its end
    shifted(parent, parent, 0.25)  # its last call seconds ago: a prompt after a break past the cache tells none
    told = hook("UserPromptSubmit", payload("overstay", parent, "UserPromptSubmit", prompt="go on"))
    assert told.returncode == 0
    assert json.loads(told.stdout)["systemMessage"].startswith("session-watcher: ")
    fork = _forked(tmp_path, parent, "forked")
    run = hook("UserPromptSubmit", payload("forked", fork, "UserPromptSubmit", prompt="go on"))
    assert (run.returncode, run.stdout) == (0, b"")
    proc = sw("status", "--session", "forked", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["calls"], doc["inheritedCalls"]) == (27, 27)
