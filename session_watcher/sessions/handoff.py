"""A session's handoff: what the work is (read once from its transcript), the note `core.handoff`
composes with the files `bDefault` counts and its price, saved as the project's pending handoff
(`state.handoffs`: the next fresh session of the project, of the same agent, receives it from the
SessionStart hook).
The `handoff` command and the cold-cache guard both make it here."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from session_watcher.core import handoff as core
from session_watcher.core.eoq import quantities
from session_watcher.core.usererrors import UserError

if TYPE_CHECKING:
    from session_watcher.core.shapes import Config, State

MAX_LINE = 8 << 20  # a longer transcript line (an image, a huge tool output) holds nothing the note needs


def digest(transcript: str | None) -> core.Digest:
    """The transcript (any agent's log) read once, in order, into a Digest through its agent's feed
    (a missing transcript gives an empty one)."""
    from session_watcher.core.fastjson import loads

    d = core.Digest()
    if not transcript:
        return d
    from session_watcher.agents import agent_for_head
    from session_watcher.state.reader import lines_of

    add = None  # the feed of the agent whose log it is, known from its first line
    try:
        for line in lines_of(transcript, MAX_LINE):  # a missing or unreadable file: what was read
            if add is None:
                add = agent_for_head(line).digest(d)
            try:
                rec = loads(line)
            except ValueError:
                continue
            if isinstance(rec, dict):
                add(rec)
    except OSError:
        pass
    return d


def build(state: State, cfg: Config, now: float) -> dict[str, Any]:
    """The handoff document of a session state (brought up to date by the caller)."""
    from session_watcher.core.status import cold_now

    sid = state["sessionId"]
    if core.parent_of(core.header(sid, "", 0, None)) != sid:  # the id the note's first line names, read back
        from session_watcher.core.text import one_line

        # a transcript named by its path takes its file's name: a newline there would spell a line of
        # the note's own framing, and a note its hook cannot read back is never given
        raise UserError(f"session '{one_line(sid)}': a handoff names its session by an id of letters, digits, "
                        "'-', '_' and '.' only (a transcript's id is its file's name): rename the file")
    q = quantities(state, cfg)
    cold = cold_now(state, cfg, now)  # priced as `status` and the status line price a restart now
    if not q.get("bDefault"):
        raise UserError(f"session {state['sessionId']} has no API call yet: nothing to hand off")
    cursor = state.get("cursor") or {}
    d = digest(cursor.get("path"))
    root = state["context"].get("project")
    file_list = core.files(state)
    written = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(now))
    # the note's price includes the note, whose first line says the price: until the two agree
    note = core.compose(d, file_list, root, core.header(state["sessionId"], written, 0, 0.0))
    priced = core.price(state, q, core.note_tokens(note, state), cold)
    for _ in range(4):
        note = core.compose(d, file_list, root, core.header(state["sessionId"], written, priced["carryTokens"],
                                                              priced["carryUsd"]))
        again = core.price(state, q, core.note_tokens(note, state), cold)
        if again == priced:
            break
        priced = again
    # the agent whose session it is: only a fresh session of that agent takes it (state.handoffs)
    agent = state["context"].get("agent")
    return {"sessionId": state["sessionId"], "project": root, "createdAt": now, "note": note, "files": file_list,
            **({"agent": agent} if agent else {}), **priced}


def save(doc: dict[str, Any], by: str | None = None, max_age_s: float | None = None) -> str:
    """Save a handoff document (`build`'s) as its project's pending one; `by`: who prepared it when
    not the `handoff` command (the guard's is dropped if the session goes on instead); pending
    handoffs older than `max_age_s` are swept. Its path."""
    from session_watcher.state import handoffs

    pending = {"parentSession": doc["sessionId"], **{k: v for k, v in doc.items() if k != "sessionId"}}
    if by is not None:
        pending["by"] = by
    return handoffs.write_pending(pending, max_age_s)
