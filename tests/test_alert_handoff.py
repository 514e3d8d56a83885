"""Alerts that fire while the status line folds are delivered by the next hook, exactly once."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from tests.oracle import hook, payload, statusline, sw
from tests.statefile import load_state
from tests.test_gate import overstaying
from tests.test_guard_hook import shifted

pytestmark = pytest.mark.slow  # starts processes (tests/conftest.py: the quick tier)


def _message_config() -> None:
    cfg = Path(os.environ["SESSION_WATCHER_HOME"]) / "config" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text('guard = "off"\n[notify]\nchannels = ["message"]\nfallback = "none"\n')


def test_status_line_fold_hands_its_alerts_to_the_next_hook(tmp_path: Path) -> None:
    """The status line cannot show a systemMessage; the hook after it does, once. (The synthetic
    sessions here start now, their calls ahead: the cache is warm at every prompt; past a break
    beyond its edge a queued alert is dropped, hooks.outbox.)"""
    _message_config()
    transcript = overstaying(tmp_path, calls=27, start=time.time())  # its gate (call 25) is news at its end
    session = "overstay"
    # the first hook of the session folds nothing yet: the transcript appears only afterwards
    first = hook("SessionStart", payload(session, tmp_path / "not-yet.jsonl", "SessionStart", source="startup"))
    assert first.returncode == 0
    assert first.stdout == b""
    status = {"session_id": session, "transcript_path": str(transcript), "cwd": str(tmp_path),
              "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"}}
    line = statusline(status)
    assert line.returncode == 0
    assert line.stdout.strip()
    state = load_state(session)
    fired = state["alerts"]
    assert fired, "the synthetic session overstays: the status line's fold must fire the gate"
    assert all(a.get("pending") for a in fired)

    # Stop runs async: it takes the alerts over and queues the message, printing nothing (an async
    # hook's output would go to the model); the next synchronous hook prints it for the user
    after = hook("Stop", payload(session, transcript))
    assert (after.returncode, after.stdout) == (0, b"")
    assert not any(a.get("pending") for a in load_state(session)["alerts"])
    assert load_state(session)["outbox"]

    shown = hook("UserPromptSubmit", payload(session, transcript, "UserPromptSubmit", prompt="go on"))
    assert shown.returncode == 0
    out = json.loads(shown.stdout)
    assert out["systemMessage"].startswith("session-watcher: ")

    again = hook("UserPromptSubmit", payload(session, transcript, "UserPromptSubmit", prompt="more"))
    assert again.returncode == 0
    assert again.stdout == b"", "delivered once, never twice"


@pytest.mark.parametrize("command", ["status", "health"])
def test_a_cli_fold_hands_its_alerts_to_the_next_hook(tmp_path: Path, command: str) -> None:
    """`status` (and `health`, `handoff`: the CLI's one way to a session) folds what the hooks had not
    and saves it; it cannot show a systemMessage either, so the gate it fired is left for the next
    hook, which shows it once (before: folded, saved, and never shown)."""
    _message_config()
    start = time.time()
    head = len(overstaying(tmp_path, calls=20, start=start).read_bytes())  # the same session, 20 calls in: no gate yet
    transcript = overstaying(tmp_path, calls=27, start=start)  # its gate (call 25) is news at its end
    # its last call seconds ago: a prompt's hook after a break past the cache tells no alert of before it
    shifted(transcript, transcript, 0.25)
    whole = transcript.read_bytes()
    transcript.write_bytes(whole[:head])
    assert whole.startswith(transcript.read_bytes())
    session = "overstay"
    for _ in range(50):  # a run folds for a bounded time
        assert hook("PostToolUse", payload(session, transcript, "PostToolUse")).returncode == 0
        if load_state(session)["cursor"]["offset"] == transcript.stat().st_size:
            break
    assert load_state(session)["alerts"] == []
    transcript.write_bytes(whole)  # the hooks fell behind: `status` folds the rest

    ran = sw(command, session)
    assert (ran.returncode, ran.stderr) == (0, b""), ran.stderr
    fired = load_state(session)["alerts"]
    assert [a["kind"] for a in fired] == ["gate"]
    assert all(a.get("pending") for a in fired)

    shown = hook("UserPromptSubmit", payload(session, transcript, "UserPromptSubmit", prompt="go on"))
    assert shown.returncode == 0
    assert json.loads(shown.stdout)["systemMessage"].startswith("session-watcher: This session now costs more")
    again = hook("UserPromptSubmit", payload(session, transcript, "UserPromptSubmit", prompt="more"))
    assert (again.returncode, again.stdout) == (0, b""), "delivered once, never twice"


def test_a_hook_with_standard_output_closed_exits_0_and_logs_nothing(tmp_path: Path) -> None:
    """A hook started with standard output closed (`>&-`, the caller's choice) folds as ever, exits 0,
    says nothing and logs nothing, even on a run that has something to print: `sys.stdout` is None
    then, and the UserPromptSubmit that delivers a queued alert logged an AttributeError traceback."""
    import shlex
    import subprocess

    from tests.oracle import SW, launcher

    _message_config()
    log = Path(os.environ["SESSION_WATCHER_HOME"]) / "log" / "session-watcher.log"
    for n, argv in enumerate((launcher("hook", "UserPromptSubmit"), [str(SW), "hook", "UserPromptSubmit"])):
        folder = tmp_path / str(n)
        folder.mkdir()
        transcript = overstaying(folder, calls=27, start=time.time())  # its gate (call 25) is news at its end
        session = f"closed-{n}"
        line = statusline({"session_id": session, "transcript_path": str(transcript), "cwd": str(folder),
                           "model": {"id": "claude-opus-4-6", "display_name": "Opus 4.6"}})
        assert line.returncode == 0
        assert hook("Stop", payload(session, transcript)).returncode == 0
        assert load_state(session)["outbox"], "a message is queued: the prompt's run has output"
        prompt = json.dumps(payload(session, transcript, "UserPromptSubmit", prompt="go on")).encode()
        got = subprocess.run(["/bin/sh", "-c", f"exec {shlex.join(argv)} >&-"], input=prompt, capture_output=True,
                             timeout=60, check=False)
        assert (got.returncode, got.stdout, got.stderr) == (0, b"", b""), (argv, got)
        assert not load_state(session).get("outbox"), "the run folded and took its message, as ever"
        assert not log.exists() or log.read_text() == "", (argv, log.read_text())
