"""Codex's hook registrations and what its hooks may print (pure data and one filter).

Codex runs a hook registered in `$CODEX_HOME/hooks.json` with Claude Code's payloads, and reads a
synchronous hook's stdout against a strict schema (`additionalProperties: false`: an unknown key
fails the hook). The hook process is Claude Code's (`hooks/entry.py`), started as `hook EVENT codex`;
what it prints is cut here to the keys the event's schema takes (Claude Code's `terminalSequence`
has no place in Codex: the desktop and the next prompt's `systemMessage` carry an alert instead).
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; this module is on the hook's path
if TYPE_CHECKING:
    from typing import Any

AGENT = "codex"  # the hook command's second word: `hook UserPromptSubmit codex`

# (event, synchronous): the folding hooks run async and print nothing; the prompt's hook (the guard,
# the pending alert) and the session start's (the pending handoff) are waited for
EVENTS: tuple[tuple[str, bool], ...] = (
    ("PostToolUse", False), ("PostModelRequest", False), ("Stop", False),
    ("UserPromptSubmit", True), ("SessionStart", True),
)

# the top-level keys each synchronous event's output schema takes (Codex 0.171.0)
OUTPUT_KEYS: dict[str, frozenset[str]] = {
    "UserPromptSubmit": frozenset({"continue", "decision", "hookSpecificOutput", "reason", "stopReason",
                                   "suppressOutput", "systemMessage"}),
    "SessionStart": frozenset({"continue", "hookSpecificOutput", "stopReason", "suppressOutput", "systemMessage"}),
}


def output(event: str, out: dict[str, Any] | None) -> dict[str, Any] | None:
    """The part of a hook's output Codex accepts for `event`; None for nothing (an async hook's
    output, which Codex would hand to the model, is always nothing)."""
    keys = OUTPUT_KEYS.get(event)
    if not out or keys is None:
        return None
    kept = {k: v for k, v in out.items() if k in keys and v is not None}
    if kept.get("decision") == "block" and not (isinstance(kept.get("reason"), str) and kept["reason"].strip()):
        kept.pop("decision")  # the schema requires a reason with a block: never hold a prompt by mistake
    return kept or None
