"""The synchronous SessionStart hook: a fresh session receives its project's pending handoff.

`session-watcher hook SessionStart inject` (registered beside the async SessionStart hook that
folds; Codex's one SessionStart hook, `hook SessionStart codex`, runs it too). On `source: "clear"`
or `"startup"` it takes the project's pending handoff (state.handoffs: once, for this project only,
not stale, and only one its own agent's session wrote, or one that names no agent) and prints it
as `additionalContext`, which Claude Code puts before the conversation (a synchronous hook: an
async one's output would reach the model only with the next request, as a bare system message).
The note's first line names the parent session, so the child's own transcript links it to its
parent (the fold reads it back: `parentSession`). The note goes out cleaned (`core.text.clean`)
and bounded in UTF-16 code units, the client's unit.

The client waits for this hook at every session start, so it does no fold and takes no lock: with
no handoff pending or lent anywhere it reads two directories and imports nothing of the state; the
config is read only when there is one to take, and parsed only when a config file exists. A handoff
lent to a session whose client has exited before it sent a request is given back first
(state.handoffs.reclaim), so this session may take it.
"""

from __future__ import annotations

import time

from session_watcher.base import sysos

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

SOURCES = ("clear", "startup")  # not "resume" (the old conversation is back), not "compact"
CONTEXT_MAX = 10_000  # UTF-16 code units Claude Code injects as they are (longer: a file path and a preview)


def run(raw: bytes, drop_on_compact: bool = False, agent: str | None = None) -> dict[str, Any] | None:
    """The pending handoff for a fresh session's start, as the hook's output; None: nothing.
    `drop_on_compact`: a compaction (`source: "compact"`) drops the handoff the guard prepared for
    this session, which goes on compacted (Codex: its `/compact` reaches no prompt hook). `agent`:
    the name of the agent whose session starts (hooks.entry), which takes only its own agent's
    handoffs (and those naming none); None: any."""
    from session_watcher.core.fastjson import loads

    try:
        payload = loads(raw) if raw.strip() else None
    except ValueError:
        return None
    if not isinstance(payload, dict):
        return None
    if drop_on_compact and payload.get("source") == "compact":
        _drop_guard_handoff(payload)
        return None
    return _inject(payload, agent) if payload.get("source") in SOURCES else None


def _inject(payload: dict[str, Any], agent: str | None) -> dict[str, Any] | None:
    from session_watcher.state import handoffs

    lent = handoffs.any_lent()  # a handoff taken, not sent yet: given back if its session is gone
    if not handoffs.any_pending() and not lent:  # every start but the one after a handoff: no more imports
        return None
    from session_watcher.state import shell

    session_id, transcript, cwd = shell.payload_inputs(payload)
    project = shell.project_root(None, cwd)
    if session_id is None or project is None:
        return None

    now = time.time()
    if lent:
        handoffs.reclaim(now, stale_s)
    # lent to this session until its first prompt; the client (this hook's parent, past a shell it
    # ran the hook through) tells whether the session is still open, should it end without SessionEnd
    doc = handoffs.take(project, session_id, now, lambda: stale_s(project), transcript, handoffs.client(), agent)
    note = None if doc is None else as_read(str(doc["note"]))
    if doc is None or note is None:
        return None
    # the user's word that it came (the client shows a systemMessage, never to the model): after
    # /clear the screen said nothing, and the note went in unseen
    return {"systemMessage": _taken_words(doc, session_id),
            "hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": note}}


def _taken_words(doc: dict[str, Any], session_id: str) -> str:
    """`session-watcher: this session starts with the handoff of session e0957dd7 (~50k tokens).`: the
    parent's id as short as tells it from this one's (a Codex thread /clear starts within the minute
    shares its first 8 characters)."""
    from session_watcher.core.numbers import tokens
    from session_watcher.core.text import one_line, short_ids

    parent, carry = doc.get("parentSession"), doc.get("carryTokens")
    of = (f" of session {short_ids([one_line(parent), session_id])[one_line(parent)]}"
          if isinstance(parent, str) and parent else "")
    size = f" (~{tokens(carry)} tokens)" if isinstance(carry, int | float) and carry > 0 else ""
    return f"session-watcher: this session starts with the handoff{of}{size}."


def stale_s(project: str) -> float:
    """Seconds a pending handoff waits for a fresh session of the project (`handoff_stale_min`): the
    default while no config file is there (no key table imported), else what the files say."""
    from session_watcher.base import paths
    from session_watcher.base.config_cache import HANDOFF_STALE_MIN

    if not any(sysos.lexists(f) for f in paths.config_places(project)):
        return HANDOFF_STALE_MIN * 60.0
    from session_watcher.base import config

    cfg, _ = config.load_layers(project)
    return float(cfg.get("handoff_stale_min") or HANDOFF_STALE_MIN) * 60


def _drop_guard_handoff(payload: dict[str, Any]) -> None:
    from session_watcher.state import handoffs

    if not handoffs.any_pending() and not handoffs.any_lent():  # lent: taken, not sent, not to come back
        return
    from session_watcher.state import shell

    session_id, _, cwd = shell.payload_inputs(payload)
    project = shell.project_root(None, cwd)
    if session_id is not None and project is not None:
        handoffs.drop(project, session_id, handoffs.GUARD)


def as_read(text: str) -> str | None:
    """What `handoff` printed, as the model reads it: cleaned (a no-op on a note of ours) and bounded
    in the client's unit, a note of a release before the quoted note quoted (`_quoted`); None for
    text not starting with our header (no note of ours). `handoff --show` prints it so too."""
    from session_watcher.core.notehead import parent_of, unquoted
    from session_watcher.core.text import clean, cut_utf16

    note = cut_utf16(clean(text), CONTEXT_MAX - 1)
    if parent_of(note) is None:
        return None
    return _quoted(note) if unquoted(note) else note


def _quoted(note: str) -> str:
    """A note a release before 2026-12-04 wrote (pending across an update), as a note is read now:
    its first line, the preamble that says it is quoted data, every line of the rest behind QUOTE
    (`core.handoff.quoted_lines`, the rule `quote` applies; its own opening sentence, which the
    preamble says again, left out), then END; within CONTEXT_MAX."""
    from session_watcher.core.handoff import END, PREAMBLE, quoted_lines
    from session_watcher.core.text import cut_utf16

    head, _, rest = note.partition("\n")
    body = rest.split("\n", 1)[1] if "\n" in rest else ""
    text = "\n".join([head, PREAMBLE, "", quoted_lines(body)])
    return cut_utf16(text, CONTEXT_MAX - 2 - len(END)) + "\n" + END
