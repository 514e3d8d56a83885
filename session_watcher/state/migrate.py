"""An older schema's session state brought to this one, step by step (`state.store.load` hands it
here; a state of this schema, every run's, never loads this module). A change to the on-disk shape
bumps `core.fresh.SCHEMA` and adds a step here.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is slow to import; a hook may load this module
if TYPE_CHECKING:
    from typing import Any

    from session_watcher.core.shapes import State


def migrate(doc: dict[str, Any], session_id: str) -> State | None:
    """An older schema's state brought to this one, or None when it cannot be.

    1 -> 2 (model v2): every figure is counted differently, and the transcript is the durable log,
    so the state starts again from it (cursor at 0), keeping what only the hooks and the status
    line knew (the context window, the model id, the project, the cached config).
    2 -> 3 (the same figures, stored smaller) was migrated in place until schema 4.
    2, 3 -> 4: the session's tally (`engine.new_tally`) counts from the session's first call, which an
    older state has passed: the state starts again from the transcript (cursor at 0), keeping what
    only the hooks and the status line knew, as a rebuild does."""
    from session_watcher.core.fresh import new_state

    if doc.get("schema") in (2, 3) and doc.get("sessionId") == session_id:
        return _migrate_3(doc, session_id)
    if doc.get("schema") != 1 or doc.get("sessionId") != session_id or not isinstance(doc.get("context"), dict):
        return None
    fresh = new_state(session_id)
    old = doc["context"]
    fresh["context"].update({"window": old.get("window"), "modelId": old.get("modelId"),
                             "modelName": old.get("modelName"), "project": old.get("project"), "cwd": old.get("cwd")})
    rev = doc.get("rev")
    fresh["rev"] = rev if isinstance(rev, int) and not isinstance(rev, bool) else 0
    return fresh


def _migrate_3(doc: dict[str, Any], session_id: str) -> State | None:
    """A fresh state that keeps the schema-3 state's context, config cache, path-map revision and
    the marks only the hooks wrote (when the user was last notified, queued output, the guard's, the
    alerts dealt with: `state.session.rebuild`'s)."""
    from session_watcher.core.fresh import new_state

    if not isinstance(doc.get("context"), dict):
        return None
    fresh = new_state(session_id)
    old = doc["context"]
    fresh["context"].update({"window": old.get("window"), "modelId": old.get("modelId"),
                             "modelName": old.get("modelName"), "project": old.get("project"), "cwd": old.get("cwd"),
                             "promptCache": old.get("promptCache"), "resume": old.get("resume")})
    if isinstance(doc.get("config"), dict):
        fresh["config"] = doc["config"]
    rev = doc.get("rev")
    fresh["rev"] = rev if isinstance(rev, int) and not isinstance(rev, bool) else 0
    for key in ("notified", "outbox", "guard"):
        if isinstance(doc.get(key), dict | list):
            fresh[key] = doc[key]
    if isinstance(doc.get("alerts"), list):  # fired again by the fold from the start: no news
        from session_watcher.state.session import keep_seen

        keep_seen(fresh, doc.get("seen"), doc["alerts"])
    return fresh
