"""The restarts a user took, found and priced for `backtest` and `report` (the shell around
`core.restarts`).

A child names its parent in its own transcript (the handoff note the SessionStart hook injected:
`parentSession` of its replay); the note's first line says what the carry was priced at. A parent
not among the sessions asked about is looked up and replayed too. Idle compactions are found in
each session's own calls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from session_watcher.core import restarts as core
from session_watcher.core.backtest import calls_from_trace

if TYPE_CHECKING:
    from collections.abc import Iterable

    from session_watcher.core.backtest import Call

NOTE_LINES = 400  # the note is injected at the session's start: it is among its first lines


def note_of(transcript: str) -> str | None:
    """The handoff note a session started with, from its transcript's first lines, or None."""
    from session_watcher.state.reader import lines_of

    try:
        return note_in(lines_of(transcript))  # a regular file only, long lines skipped
    except OSError:
        return None


def note_in(lines: Iterable[bytes]) -> str | None:
    """The handoff note among the first NOTE_LINES of a transcript's complete lines, or None."""
    from session_watcher.core.fastjson import loads
    from session_watcher.core.handoff import MARKER

    marker = MARKER.encode()
    for n, line in enumerate(lines):
        if n >= NOTE_LINES:
            break
        if marker not in line or b"hook_additional_context" not in line:
            continue
        try:
            rec = loads(line)
        except ValueError:
            continue
        att = rec.get("attachment") if isinstance(rec, dict) else None
        content = att.get("content") if isinstance(att, dict) else None
        for part in content if isinstance(content, list) else ():  # a number there is no list of parts
            if isinstance(part, str) and part.startswith(MARKER):
                return part
    return None


def _replayed(session_id: str, overrides: dict[str, Any] | None, taken: dict[str, Any]) -> Any:
    """(transcript, parent, calls) of a session, replaying it when it is not among `taken` yet."""
    if session_id in taken:
        return taken[session_id]
    from session_watcher.core.usererrors import UserError
    from session_watcher.sessions.naming import transcript_of
    from session_watcher.sessions.replay import config_for, replay

    try:
        transcript = transcript_of(session_id).transcript
        if transcript is None:
            return None
        status, trace = replay(transcript, cfg=config_for(transcript, overrides or {}))
    except (UserError, OSError):
        return None
    note_taken(taken, transcript, status, trace)
    return taken.get(session_id)


def note_taken(taken: dict[str, Any], transcript: str, status: dict[str, Any], trace: list[dict[str, Any]]) -> None:
    """What pricing the restarts taken needs of a replayed session, kept in `taken` under its id:
    (its transcript, its parent session, its calls as core.restarts reads them)."""
    note_calls(taken, transcript, status, calls_from_trace(trace))


def note_calls(taken: dict[str, Any], transcript: str, status: dict[str, Any], calls: list[Call]) -> None:
    """`note_taken` of a session whose calls are at hand (the backtest's fold's: the trace rows'
    usage, number, segment and time, as `calls_from_trace` gives them, and their figures besides)."""
    taken[str(status.get("sessionId"))] = (transcript, status.get("parentSession"), calls)


def restarts_taken(taken: dict[str, Any], overrides: dict[str, Any] | None = None) -> dict[str, Any]:
    """{"restartsTaken": [...], "restartsTotal": {...}} for the sessions in `taken` (session id ->
    (transcript, parentSession, core.restarts calls)), oldest child first."""
    from session_watcher.base import config
    from session_watcher.core.handoff import priced

    cliff = config.load_cliff()
    found: list[dict[str, Any]] = []
    for sid, (transcript, parent, calls) in list(taken.items()):
        found += core.idle_compactions(sid, calls, cliff)
        if not parent:
            continue
        got = _replayed(parent, overrides, taken)
        if got is None:
            found.append({"kind": "handoff", "parent": parent, "child": sid, "parentFound": False})
            continue
        note = note_of(transcript)
        doc = core.handoff(parent, got[2], sid, calls, priced(note) if note else (None, None), cliff)
        if doc is not None:
            found.append(doc)
    found.sort(key=lambda r: (r["child"], r.get("firstCall") or 0))
    return {"restartsTaken": found, "restartsTotal": core.totals(found)}


def render_lines(found: Iterable[dict[str, Any]]) -> list[str]:
    """One line per restart taken, then their total; nothing when there was none."""
    from session_watcher.core.numbers import dollars, tokens
    from session_watcher.core.text import clean, short_ids

    found = list(found)
    ids = short_ids([str(r[k]) for r in found for k in ("parent", "child")])  # two Codex threads of a minute apart
    lines = []
    saved = 0.0
    kinds: dict[bool, list[float]] = {True: [], False: []}  # handoff or not: (the savings of) each
    for r in found:
        kinds[r["kind"] == "handoff"].append(r.get("savingUsd") or 0.0)
        who = clean(f"{ids[r['parent']]} -> {ids[r['child']]}" if r["kind"] == "handoff"
                    else f"{ids[r['parent']]} compacted after a break, after call {r.get('afterCall')}", keep="")
        if r.get("parentFound") is False:
            lines.append(f"restart taken: {who}: the parent's transcript was not found")
            continue
        priced = (f"priced {tokens(r['pricedCarryTokens'])} ({dollars(r['pricedCarryUsd'])}), "
                  if r.get("pricedCarryTokens") else "")
        saving = (f"saved {dollars(r['savingUsd'])} against continuing over {r['calls']} "
                  f"call{'s' if r['calls'] != 1 else ''}" if not r.get("acrossVendors")
                  else "not priced: the parent ran on another vendor's model")
        lines.append(f"restart taken: {who}: carry {priced}written {tokens(r['carryTokens'])} "
                     f"({dollars(r['carryUsd'])}); {saving}")
        saved += r.get("savingUsd") or 0.0
    if not lines:
        return lines
    # the total says what it counts: `report` lists the handoffs alone (one word for one number: a
    # total of handoffs alone is never called "restarts taken", which in `backtest` adds compactions)
    handoffs, compactions = kinds[True], kinds[False]
    if not compactions:
        lines.append(f"restarts taken with a handoff: {len(handoffs)}, saving {dollars(saved)} in all")
        return lines
    parts = [f"{len(handoffs)} with a handoff ({dollars(sum(handoffs))})"] if handoffs else []
    parts.append(f"{len(compactions)} compaction{'s' if len(compactions) != 1 else ''} after a break "
                 f"({dollars(sum(compactions))})")
    lines.append(f"restarts taken: {len(lines)}, saving {dollars(saved)} in all: {', '.join(parts)}")
    return lines


def from_machine() -> dict[str, Any]:
    """The restarts taken with a handoff on this machine (`report`): each handoff a session received
    here (`state/handoffs`' taken records), both sides replayed. Not the compactions after a break:
    `report` does not replay every session, and those of the sessions a handoff joins alone would be
    a count of nothing in particular (`backtest`, which replays them all, lists them)."""
    from session_watcher.core import restarts as core
    from session_watcher.state import handoffs

    taken: dict[str, Any] = {}
    for child in handoffs.taken_ids():  # the notes kept, and the ids of those swept
        _replayed(child, None, taken)
    found = [r for r in restarts_taken(taken)["restartsTaken"] if r["kind"] == "handoff"]
    return {"restartsTaken": found, "restartsTotal": core.totals(found)}
