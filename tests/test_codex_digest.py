"""A Codex thread's handoff digest from its rollout records: the requests typed, the assistant's last
words, the files patched, the parent a note names; each request once whichever way the version logs
it (0.118-0.145: `user_message` / `agent_message` events; 0.171: `item_completed` items)."""

from __future__ import annotations

from typing import Any

from session_watcher.agents.codex.digest import Feed
from session_watcher.core.handoff import Digest

THREAD = "019fa000-0000-7000-8000-000000000001"


def _feed(records: list[tuple[str, dict[str, Any]]]) -> Digest:
    d = Digest()
    feed = Feed(d)
    for kind, payload in [("session_meta", {"id": THREAD, "source": "cli"}), *records]:
        feed.add({"timestamp": "2026-11-20T10:00:00.000Z", "type": kind, "payload": payload})
    return d


def _item(kind: str, text: str, part: str = "text") -> tuple[str, dict[str, Any]]:
    return "event_msg", {"type": "item_completed", "item": {"type": kind, "content": [{"type": part, "text": text}]}}


def test_0171_items_give_the_requests_and_the_last_words() -> None:
    d = _feed([_item("UserMessage", "rename the parser"), _item("AgentMessage", "Renamed.", "Text"),
               ("response_item", {"type": "message", "role": "user",
                                  "content": [{"type": "input_text", "text": "rename the parser"}]}),
               _item("UserMessage", "now the tests"), _item("AgentMessage", "Tests fixed.", "Text")])
    assert (d.prompts, d.first, d.latest, d.summary) == (2, "rename the parser", "now the tests", "Tests fixed.")


def test_older_events_and_patches() -> None:
    d = _feed([("event_msg", {"type": "user_message", "message": "fix it"}),
               ("event_msg", {"type": "patch_apply_end", "success": True, "changes": {"/p/a.py": {}, "/p/b.py": {}}}),
               ("event_msg", {"type": "patch_apply_end", "success": False, "changes": {"/p/c.py": {}}}),
               ("event_msg", {"type": "agent_message", "message": "Fixed."}),
               _item("UserMessage", "fix it")])  # both kinds in one thread: the first kind seen counts
    assert (d.prompts, d.first, d.summary, d.edited) == (1, "fix it", "Fixed.", ["/p/a.py", "/p/b.py"])


def test_a_subagent_thread_gives_nothing_and_a_note_names_the_parent() -> None:
    sub = Digest()
    feed = Feed(sub)
    feed.add({"type": "session_meta", "payload": {"id": THREAD, "source": {"subagent": {"parent_thread_id": "x"}}}})
    feed.add({"type": "event_msg", "payload": {"type": "user_message", "message": "look"}})
    assert sub.prompts == 0
    parent = "019f0000-0000-7000-8000-0000000000aa"
    head = f"[session-watcher handoff from session {parent}, written x; priced at 1 tokens]"
    d = _feed([("response_item", {"type": "message", "role": "developer",
                                  "content": [{"type": "input_text", "text": head}]})])
    assert d.parent == parent
