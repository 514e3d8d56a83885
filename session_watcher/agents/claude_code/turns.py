"""Which calls of a Claude Code transcript open an agent turn (`Agent.turn_starts`): read by the backtest's
turn-bounded closed loop and the bench, never by a hook (this module is apart from the parser's so that
the hooks' path does not load it)."""

from __future__ import annotations

from session_watcher.agents.claude_code.transcript import MAX_LINE_BYTES, USAGE, call_key
from session_watcher.core import fastjson
from session_watcher.core.caps import model_name
from session_watcher.core.handoff import TYPED, after_reminders, typed

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

# a user record that echoes what the user entered at the prompt and the client sends the model: a slash
# command (a custom command's or a skill's text follows it, as a meta record) or bash mode (`! cmd`)
ENTERED = ("<command-message>", "<command-name>", "<bash-input>")
LOCAL = "<local-command-std"  # a command the client ran itself: no request follows from it


def _entered(rec: dict[str, Any], content: object) -> str | None:
    """Whether a user record is the echo of a slash command or a bash mode command the user entered
    ("entered"), a local command's output ("local"), or neither (None)."""
    origin = rec.get("origin")
    if rec.get("isMeta") or rec.get("promptSource") not in TYPED or (
            isinstance(origin, dict) and origin.get("kind") not in (None, "human")):
        return None
    # the first words after the system reminders the client put before the command's echo, in its text
    # or as text blocks of their own
    first = after_reminders(content) if isinstance(content, str) else ""
    if isinstance(content, list) and not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        first = next((t for t in (after_reminders(b["text"]) for b in content if isinstance(b, dict)
                                  and b.get("type") == "text" and isinstance(b.get("text"), str)) if t), "")
    return "entered" if first.startswith(ENTERED) else "local" if first.startswith(LOCAL) else None


def turn_starts(lines: Iterable[bytes]) -> set[str]:
    """The main-chain API calls (their keys, as their call events name them) that answer what the user
    entered at the prompt: a prompt the user typed (`core.handoff.typed`, the handoff note's rule; one
    typed while the agent worked, which the client sends when its turn ends, too), a slash command or a
    bash mode command the client sends the model (its echo, ENTERED; a command the client ran itself,
    its output LOCAL, asks nothing): each starts an agent turn, the agent having stopped and waited for the user
    before it. A call that answers a tool result, a task notification, another session's message or a
    client's note starts none; a call's later lines are the same call."""
    starts: set[str] = set()
    seen: set[str] = set()
    asked = False  # a typed prompt since the last call
    command = False  # a command entered since the last call, and no local command's output after it
    for line in lines:
        if (b'"user"' not in line and USAGE not in line) or len(line) > MAX_LINE_BYTES:
            continue
        try:
            rec = fastjson.loads(line)
        except ValueError:
            continue
        msg = rec.get("message") if isinstance(rec, dict) and rec.get("isSidechain") is not True else None
        if not isinstance(msg, dict):
            continue
        if rec.get("type") == "user":
            content = msg.get("content")
            asked = asked or typed(rec, content) is not None
            echo = _entered(rec, content)
            if echo is not None:
                command = echo == "entered"
        elif (rec.get("type") == "assistant" and USAGE in line and isinstance(msg.get("usage"), dict)
              and model_name(msg.get("model")) != "<synthetic>"):
            key = call_key(msg.get("id"), rec.get("requestId"))
            if key is not None and key not in seen:
                seen.add(key)
                if asked or command:
                    starts.add(key)
                asked = command = False
    return starts
