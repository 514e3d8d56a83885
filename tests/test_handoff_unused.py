"""A handoff taken by a session that never sent it goes back pending (issue: a handoff lost unused).

A fresh session of the project takes the pending handoff at its SessionStart; closed before its first
prompt, it sent no request, and the note was lost (`handoff --show`: "no handoff waiting"). Now the
take is noted as lent until the session's first prompt; a session that ends with it still lent
(its SessionEnd hook), or whose client has exited without one (the next session start anywhere),
gives it back, unless the transcript shows a call, a newer handoff is pending, or it is stale. Real
hook processes through install.sh's launcher, real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.oracle import hook, launcher, sw
from tests.test_handoff import LONG_CWD, LONG_ID, folded, run_json, start

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)



def _handoffs() -> Path:
    return Path(os.environ["SESSION_WATCHER_HOME"]) / "state" / "handoffs"  # set by conftest before a test


def waiting() -> list[str]:
    """The parent sessions of the handoffs waiting for this project (`handoff --show`)."""
    return [d["parentSession"] for d in run_json("handoff", "--show") if d["project"] == LONG_CWD]


def end(sid: str, transcript: str | None = None, reason: str = "prompt_input_exit") -> None:
    doc = {"session_id": sid, "transcript_path": transcript or f"/nonexistent/{sid}.jsonl", "cwd": LONG_CWD,
           "hook_event_name": "SessionEnd", "reason": reason}
    assert hook("SessionEnd", doc).returncode == 0


def prompt(sid: str) -> None:
    doc = {"session_id": sid, "transcript_path": f"/nonexistent/{sid}.jsonl", "cwd": LONG_CWD,
           "hook_event_name": "UserPromptSubmit", "prompt": "go on"}
    assert hook("UserPromptSubmit", doc).returncode == 0


def written() -> str:
    """A fresh handoff of the long session, pending for its project; its note."""
    folded()
    note: str = run_json("handoff", "--session", LONG_ID)["note"]
    assert waiting() == [LONG_ID]
    return note


def taken(sid: str, note: str) -> None:
    got = start(sid, LONG_CWD)
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"] == note
    assert waiting() == []


def test_a_session_that_ends_before_its_first_prompt_gives_the_handoff_back() -> None:
    note = written()
    taken("unused-1", note)
    end("unused-1")
    assert waiting() == [LONG_ID]  # was: "no handoff waiting", the note lost
    assert not (_handoffs() / "taken" / "unused-1.json").exists()
    assert not (_handoffs() / "lent" / "unused-1.json").exists()
    got = start("unused-2", LONG_CWD)  # the next fresh session has it
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"] == note
    end("unused-2", reason="clear")  # /clear before a prompt: the session /clear starts takes it
    got = start("unused-3", LONG_CWD)
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"] == note


def test_a_session_that_sent_a_prompt_keeps_it() -> None:
    note = written()
    taken("sent-1", note)
    prompt("sent-1")
    assert not (_handoffs() / "lent" / "sent-1.json").exists()
    end("sent-1")
    assert waiting() == []
    assert json.loads((_handoffs() / "taken" / "sent-1.json").read_text())["parentSession"] == LONG_ID


def test_a_call_in_the_transcript_keeps_it_though_no_prompt_hook_ran(tmp_path: Path) -> None:
    """A prompt hook that failed leaves it lent: the transcript's own call says the note went out."""
    note = written()
    transcript = tmp_path / "called-1.jsonl"
    raw = json.dumps({"session_id": "called-1", "transcript_path": str(transcript), "cwd": LONG_CWD,
                      "hook_event_name": "SessionStart", "source": "startup"}).encode()
    got = hook("SessionStart", raw, args=("inject",))
    assert json.loads(got.stdout)["hookSpecificOutput"]["additionalContext"] == note
    transcript.write_text(json.dumps({"type": "assistant", "message": {"usage": {"input_tokens": 3}}}) + "\n")
    end("called-1", str(transcript))
    assert waiting() == []


def test_a_newer_handoff_pending_stays_and_a_stale_one_is_not_given_back() -> None:
    note = written()
    taken("newer-1", note)
    newer = run_json("handoff", "--session", LONG_ID)
    end("newer-1")
    [shown] = [d for d in run_json("handoff", "--show") if d["project"] == LONG_CWD]
    assert shown["createdAt"] == newer["createdAt"]
    assert (_handoffs() / "taken" / "newer-1.json").exists()  # the older one stays taken, unused
    start("newer-x", LONG_CWD)  # the newer one taken, then made stale: the end leaves it taken
    path = _handoffs() / "taken" / "newer-x.json"
    doc: dict[str, Any] = json.loads(path.read_text())
    doc["createdAt"] = time.time() - 181 * 60  # past handoff_stale_min's 180
    path.write_text(json.dumps(doc))
    end("newer-x")
    assert waiting() == []
    assert path.exists()


# a client that runs the hook and exits: a Python process (not a shell, which is taken for a go-between)
GONE_CLIENT = [sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)"]


def _in_shell(argv: list[str]) -> list[str]:
    """A shell that runs the hook and then another command (so it does not become the hook), and ends."""
    return ["sh", "-c", " ".join(f"'{a}'" for a in argv) + "; status=$?; exit $status"]


def _start_from(sid: str, wrap: list[str]) -> dict[str, Any] | None:
    raw = json.dumps({"session_id": sid, "transcript_path": f"/nonexistent/{sid}.jsonl", "cwd": LONG_CWD,
                      "hook_event_name": "SessionStart", "source": "startup"}).encode()
    argv = launcher("hook", "SessionStart", "inject")
    proc = subprocess.run([*wrap, *argv] if wrap else _in_shell(argv), input=raw, capture_output=True,
                          timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout else None


def _start_from_a_client_gone(sid: str) -> dict[str, Any]:
    """The SessionStart hook of a session whose client (the hook's parent) has exited since."""
    out = _start_from(sid, GONE_CLIENT)
    assert out is not None
    return out


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="a go-between shell is seen through /proc")
def test_a_shell_between_the_client_and_the_hook_is_not_taken_for_the_client() -> None:
    """A client that runs its hook command through a shell which does not exec it (fish, an old
    dash, a wrapper): the hook's parent is that shell, gone as soon as the hook is; the client (here
    the test) still runs, so the next start must not give its handoff back to be taken twice."""
    note = written()
    got = _start_from("shelled-1", [])
    assert got is not None
    assert got["hookSpecificOutput"]["additionalContext"] == note
    assert start("shelled-2", LONG_CWD) is None
    assert (_handoffs() / "lent" / "shelled-1.json").exists()


@pytest.mark.skipif(os.name != "posix", reason="a client's exit is asked of POSIX alone")
def test_a_session_gone_without_its_session_end_gives_it_back_at_the_next_start() -> None:
    """SessionEnd has a tight budget and may not run (a terminal closed): the next session start
    finds the handoff lent to a session whose client has exited, unsent, and takes it. A session
    whose client still runs (here the test itself) keeps it: its next prompt may send it."""
    note = written()
    got = _start_from_a_client_gone("gone-1")
    assert got["hookSpecificOutput"]["additionalContext"] == note
    assert waiting() == []
    got2 = start("gone-2", LONG_CWD)  # no SessionEnd of gone-1 ran
    assert got2 is not None
    assert got2["hookSpecificOutput"]["additionalContext"] == note
    assert not (_handoffs() / "taken" / "gone-1.json").exists()
    assert start("gone-3", LONG_CWD) is None  # gone-2's client (this test) still runs: it keeps it
    assert (_handoffs() / "lent" / "gone-2.json").exists()
    shown = sw("handoff", "--show")
    assert shown.stdout.decode() == "no handoff waiting\n"


@pytest.mark.skipif(os.name != "posix", reason="a client's exit is asked of POSIX alone")
def test_codex_which_has_no_session_end_gets_it_back_at_the_next_start(tmp_path: Path) -> None:
    """Codex has no SessionEnd hook: a thread that took the handoff at its one SessionStart hook and
    is gone without a prompt gives it back at the next thread's start (its prompt would have kept it)."""
    from session_watcher.core.handoff import header
    from session_watcher.state import handoffs

    project = tmp_path / "proj"
    project.mkdir()
    note = header("parent", "2026-12-04 21:00 UTC", 1000, 0.01) + "\nthe work so far"
    handoffs.write_pending({"project": str(project.resolve()), "parentSession": "parent", "createdAt": time.time(),
                            "note": note})

    def codex_start(sid: str, gone: bool) -> bytes:
        raw = json.dumps({"session_id": sid, "transcript_path": None, "cwd": str(project), "source": "startup",
                          "hook_event_name": "SessionStart", "model": "gpt-5.6-sol"}).encode()
        argv = launcher("hook", "SessionStart", "codex")
        if gone:
            argv = [*GONE_CLIENT, *argv]
        proc = subprocess.run(argv, input=raw, capture_output=True, timeout=60, check=False)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    first = "019fa000-0000-7000-8000-0000000000d1"
    assert b"the work so far" in codex_start(first, gone=True)
    assert b"the work so far" in codex_start("019fa000-0000-7000-8000-0000000000d2", gone=False)
    assert codex_start("019fa000-0000-7000-8000-0000000000d3", gone=False) == b""
