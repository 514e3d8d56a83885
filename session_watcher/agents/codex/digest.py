"""What a Codex thread was doing, for its handoff note: a rollout's records fed to `core.handoff.Digest`.

The words come from the rollout's UI events, which hold what the user typed and what the assistant
said without the context Codex wraps around them (`response_item` user messages also carry the
environment and AGENTS.md): `event_msg.user_message` (0.171: an `item_completed` `UserMessage`) is a
request, the last `agent_message` (`AgentMessage`) the assistant's last words,
`patch_apply_end.changes` the files edited, and a message holding a handoff note names the parent
thread. A subagent's thread (its `session_meta.source`) gives nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from session_watcher.agents.codex.rollout import _parent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from session_watcher.core.handoff import Digest


# 0.171 logs a turn's messages as `item_completed` items (no user_message / agent_message events)
ITEMS = {"UserMessage": "UserMessage", "AgentMessage": "agent_message"}


def _item_text(item: Mapping[str, Any]) -> str | None:
    """The text parts of an item's content, joined; None when it has none."""
    content = item.get("content")
    parts = [c["text"] for c in content if isinstance(c, dict) and isinstance(c.get("text"), str)] \
        if isinstance(content, list) else []
    return "\n".join(parts) if parts else None


class Feed:
    """Feeds one rollout's parsed records, in order, into a Digest."""

    def __init__(self, digest: Digest) -> None:
        self.d = digest
        self.sub = False
        self.prompts: str | None = None  # which record kind gives the requests: the first seen

    def add(self, rec: Mapping[str, Any]) -> None:
        p = rec.get("payload")
        if not isinstance(p, dict):
            return
        kind = rec.get("type")
        if kind == "session_meta":
            src = p.get("source")
            self.sub = self.sub or (isinstance(src, dict) and "subagent" in src)
        elif self.sub:
            return
        elif kind == "event_msg":
            self._event(p)
        elif kind == "response_item" and self.d.parent is None and p.get("type") == "message" \
                and p.get("role") != "assistant":
            found = _parent(p, None)
            if found is not None:
                self.d.parent = str(found[2])

    def _event(self, p: Mapping[str, Any]) -> None:
        what, text = p.get("type"), p.get("message")
        if what == "item_completed" and isinstance(p.get("item"), dict):  # 0.171's items
            kind = p["item"].get("type")  # an object or a list is no kind: an item of none
            what, text = ITEMS.get(kind, "item") if isinstance(kind, str) else "item", _item_text(p["item"])
        if what in ("user_message", "UserMessage") and isinstance(text, str) and text.strip():
            if self.prompts in (None, what):  # one kind of record a thread: never a request twice
                self.prompts = what
                self.d.prompt(text.strip())
        elif what == "agent_message" and isinstance(text, str) and text.strip():
            self.d.summary = text
        elif what == "patch_apply_end" and p.get("success") is not False and isinstance(p.get("changes"), dict):
            for path in p["changes"]:
                if isinstance(path, str) and path:
                    self.d.edit(path)
