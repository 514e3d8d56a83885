"""One way to name a session, for every command that takes one (`status`, `health`, `replay`,
`backtest`, `report session`, `handoff`).

A session is named by nothing (`default_session`: the most recently active one of the project the
command runs in, else of all, one with an API call before a newer one without), its full id, a unique prefix of its id
(`MIN_PREFIX` characters or more; an ambiguous one is refused, naming the sessions it matches), or
the path of its transcript. Sessions are those the hooks recorded (a state file) and those whose
logs are in an agent's folders (the registry's discovery, `agents.sources`), so a session the hooks
never saw has a name too: the caller folds it from its transcript (`Found.recorded` is False).
"""

from __future__ import annotations

import os
from stat import S_ISREG
from typing import NamedTuple

from session_watcher.core.usererrors import NoSession, UserError

MIN_PREFIX = 6  # a shorter prefix names too many sessions to be a name (a uuid's first 6: 16.7M values)
SNIFF_BYTES = 1 << 20  # how much of a file `check_transcript` reads to tell a transcript
CALL_SCAN_BYTES = 4 << 20  # how much of a transcript `_has_call` reads to find an API call's usage
# what every line holding an API call's usage holds (Claude Code's assistant records, Codex's events)
CALL_MARKERS = (b'"usage"', b'"token_count"')
LISTED = 8  # how many matches an ambiguous prefix names


class Found(NamedTuple):
    """A named session: its id, its main transcript (None when none is on disk), and whether the
    watcher keeps a state for it that follows that transcript (False: fold it from the transcript);
    for the session picked by default (`default_session`), the newer sessions of its scope passed
    over because they hold no API call (ids, newest first), and the newest of them as the text names
    it (`core.text.unique_prefix` among every session the pick ranked: what names it alone)."""

    session_id: str
    transcript: str | None
    recorded: bool
    skipped: tuple[str, ...] = ()
    skipped_name: str = ""

    @property
    def passed_over(self) -> tuple[str, ...]:
        """`skipped` as the text shows them (`core.statustext.place_words`): the newest by
        `skipped_name`, the others by their whole ids (only counted)."""
        return (self.skipped_name or self.skipped[0], *self.skipped[1:]) if self.skipped else ()


class _Known(NamedTuple):
    transcripts: dict[str, tuple[str, float]]  # id -> (main transcript, mtime), the newest of each id
    states: dict[str, float]  # id -> the state file's mtime
    roots: list[str]


def _known() -> _Known:
    from session_watcher.agents import sources
    from session_watcher.state import store

    roots, found = sources()  # every agent's logs
    transcripts: dict[str, tuple[str, float]] = {}
    for src in found:
        if src.sub:
            continue
        try:
            st = os.stat(src.path)
        except OSError:
            continue
        if not S_ISREG(st.st_mode):  # a folder named as a log (`Agent.sources`): no session's
            continue
        mtime = st.st_mtime
        have = transcripts.get(src.session)
        if have is None or mtime > have[1]:  # the same id in two project folders: the newer file
            transcripts[src.session] = (src.path, mtime)
    states = {sid: mtime for mtime, sid in store.list_sessions()}
    return _Known(transcripts, states, roots)


def known_ids() -> set[str]:
    """Every session id a name can find: recorded ones and those with a transcript (or a Codex rollout)
    the hooks never saw."""
    known = _known()
    return set(known.states) | set(known.transcripts)


def _state_view(session_id: str) -> tuple[str | None, str | None, bool]:
    """Of a session's saved state: (the main transcript it follows, as the hooks were told it; its
    project; whether it counted an API call), each None or False without a readable state."""
    from session_watcher.core.errors import StateRejected
    from session_watcher.state import store

    try:
        state = store.load(store.session_file(session_id), session_id, readonly=True)
    except (StateRejected, OSError, ValueError):
        return None, None, False
    if state is None:
        return None, None, False
    cursor = state["cursor"]
    path = cursor.get("path") if isinstance(cursor, dict) else None
    project = state["context"].get("project")
    return (path if isinstance(path, str) and path else None,
            project if isinstance(project, str) and project else None,
            state["engine"].get("calls", 0) > 0)


def _state_peek(session_id: str, folder: str) -> tuple[str | None, str | None, bool]:
    """`_state_view` as the default pick reads it of every session it looks at (`folder`: the
    sessions folder): the three fields taken from the state's text as it stands (`_state_fields`),
    the rest neither parsed nor checked (`store.load` parses and checks it all, a third of a
    millisecond a state: a second at 3,000 sessions); a state of another form as `store.load` takes it."""
    from session_watcher.base import paths
    from session_watcher.state import store

    try:
        data = paths.read_file(os.path.join(folder, f"{session_id}.json"), store.MAX_STATE_BYTES, follow=False)
    except OSError:
        return None, None, False
    view = _state_fields(data, session_id)
    return _state_view(session_id) if view is None else view  # another version's (migrated), or refused


# where a state's engine begins as `store.save` writes it, and the keys before its calls
# (`core.fresh.new_engine`'s, in its order)
ENGINE_CALLS = (',"engine":{"segment":', ',"segCalls":', ',"calls":')


def _state_fields(data: bytes, session_id: str) -> tuple[str | None, str | None, bool] | None:
    """(the transcript its cursor follows, its project, whether it counted an API call) of a state
    file of this version as `store.save` writes it (compact ASCII JSON, the keys in `core.fresh.new_state`'s
    order), read where they stand: the cursor just after the id, the engine's calls, the last
    `"context":{` (the top-level one: an unescaped `"context":{` is JSON's own, and nothing after it,
    config, rev, shards, holds a context); None where the text is not of that form."""
    from session_watcher.core import fastjson
    from session_watcher.core.fresh import SCHEMA

    head = f'{{"schema":{SCHEMA},"sessionId":"{session_id}","cursor":'
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return None
    at, j = text.rfind(',"context":{'), text.find(ENGINE_CALLS[0])
    if not text.startswith(head) or at < 0 or j < 0:
        return None
    scan = fastjson.scanner()
    try:
        cursor, _end = scan(text, len(head))
        context, _end = scan(text, at + len(',"context":'))
        values: list[object] = []  # the segment, its calls, the session's calls
        for key in ENGINE_CALLS:
            value, j = scan(text, j + len(key)) if text.startswith(key, j) else (None, j)
            values.append(value)
    except (StopIteration, ValueError, SystemError, RecursionError):  # `fastjson.loads`'s: broken text
        return None
    calls = values[-1]
    if not (isinstance(context, dict) and "project" in context and "cwd" in context
            and all(isinstance(v, int) for v in values) and isinstance(calls, int)):
        return None
    path = cursor.get("path") if isinstance(cursor, dict) else None
    project = context.get("project")
    return (path if isinstance(path, str) and path else None,
            project if isinstance(project, str) and project else None,
            calls > 0)


def _state_cursor(session_id: str) -> str | None:
    """The main transcript the session's state follows, as the hooks were told it (None: none)."""
    return _state_view(session_id)[0]


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _by_id(session_id: str, known: _Known, view: tuple[str | None, str | None, bool] | None = None) -> Found:
    """`view`: the session's `_state_view`, where the caller has read it."""
    discovered = known.transcripts.get(session_id)
    if session_id in known.states:
        cursor = _state_cursor(session_id) if view is None else view[0]
        if cursor is not None and os.path.isfile(cursor):  # the state follows its transcript
            return Found(session_id, os.path.abspath(cursor), True)
        if discovered is None:  # the state as saved: its transcript is not (or no longer) on disk
            return Found(session_id, cursor, True)
    # the hooks never saw it (or their state follows no transcript on disk): its transcript is the session
    return Found(session_id, discovered[0] if discovered else None, False)


def looks_like_path(target: str) -> bool:
    return "/" in target or os.sep in target or "\\" in target or target.endswith(".jsonl")


def check_transcript(path: str) -> str:
    """`path`, absolute, when it is a Claude Code transcript: a regular file whose first lines hold a
    JSON record (an object with a `type`). Else UserError saying what it is instead."""
    import json
    import stat

    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UserError(f"{path}: no such file", keep=[path]) from None
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}", keep=[path]) from None
    if stat.S_ISDIR(st.st_mode):
        raise UserError(f"{path}: a folder, not a transcript file", keep=[path])
    if not stat.S_ISREG(st.st_mode):
        raise UserError(f"{path}: not a regular file", keep=[path])
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            head = os.read(fd, SNIFF_BYTES)
        finally:
            os.close(fd)
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}", keep=[path]) from None
    if not head.strip():
        raise UserError(f"{path}: empty, not a transcript (yet)", keep=[path])
    lines = head.split(b"\n")
    if len(head) == SNIFF_BYTES and len(lines) > 1:
        lines.pop()  # cut by the read
    for line in lines:
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and isinstance(rec.get("type"), str):
            return os.path.abspath(path)
    if len(lines) == 1 and head.lstrip().startswith(b"{"):  # one line longer than the read: give it its chance
        return os.path.abspath(path)
    raise UserError(f"{path}: not a Claude Code transcript or Codex rollout (no JSON record in its first lines)",
                    keep=[path])


def _by_path(path: str) -> Found:
    path = check_transcript(path)
    from session_watcher.agents import session_id as session_of

    session_id = session_of(path)
    from session_watcher.state import store

    recorded = False
    if store.valid_session_id(session_id) and os.path.exists(store.session_file(session_id)):
        cursor = _state_cursor(session_id)
        recorded = cursor is not None and _same_file(cursor, path)  # a copy is folded on its own
    return Found(session_id, path, recorded)


def _where(known: _Known) -> str:
    """Where a search looked: the folders that are there (agents.folders_there)."""
    from session_watcher.agents import NO_FOLDER, folders_there
    from session_watcher.base import paths

    there = folders_there(known.roots)
    n = len(known.states)
    if not n and not there:  # nothing anywhere: no folder worth naming, no listing worth running
        return f"there is none yet ({NO_FOLDER}, and the hooks recorded none)"
    recorded = (f"{n} recorded session{'s' if n != 1 else ''} ({paths.sessions_dir()})" if n
                else "the recorded sessions (none yet)")
    transcripts = f"the transcripts in {', '.join(there)}" if there else f"the transcripts ({NO_FOLDER})"
    from session_watcher.base.route import cli_command

    return f"looked in {recorded} and {transcripts}; `{cli_command()} report` lists every session with its id"


def _by_activity(known: _Known) -> list[str]:
    """The sessions' ids, the most recently active first."""
    activity: dict[str, float] = dict(known.states)
    for sid, (_path, mtime) in known.transcripts.items():
        activity[sid] = mtime  # the transcript says when the session last moved; a state, when it was read
    return sorted(activity, key=lambda sid: (activity[sid], sid), reverse=True)


def _none_yet(known: _Known) -> NoSession:
    from session_watcher.agents import NO_FOLDER, folders_there

    there = folders_there(known.roots)
    from session_watcher.base.route import cli_command

    looked = f"no Claude Code transcript or Codex rollout in {', '.join(there)}" if there else NO_FOLDER
    # what to do first (a new user's case): start one; doctor is for one that runs and is not seen
    return NoSession(f"no session yet: {looked}, and none recorded by the hooks: start a Claude Code session or a "
                     f"Codex thread, then run this again (where one runs already, `{cli_command()} doctor` checks "
                     "the hooks)", keep=[*there, cli_command()])


def _has_call(path: str) -> bool:
    """Whether a transcript holds an API call's usage (in its first CALL_SCAN_BYTES)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(CALL_SCAN_BYTES)
    except OSError:
        return False
    return any(m in head for m in CALL_MARKERS)


def _transcript_project(path: str, memo: dict[str, str | None]) -> str | None:
    """The project folder of a transcript's session, from the cwd its first records name (`memo`: each
    cwd's folder, links resolved once per cwd: a user's thousands of sessions share a few folders)."""
    from session_watcher.sessions.replay import placed, transcript_cwd

    try:
        cwd = transcript_cwd(path)
    except (OSError, ValueError):
        return None
    if cwd is None:
        return None
    if cwd not in memo:
        try:
            memo[cwd] = placed(cwd)[1]
        except (OSError, ValueError):
            memo[cwd] = None
    return memo[cwd]


def here() -> str | None:
    """The project the command runs in, as the hooks name a session's project (`shell.project_root`:
    $CLAUDE_PROJECT_DIR, else the working folder, symlinks resolved)."""
    from session_watcher.state.shell import project_root, working_folder

    return project_root(None, working_folder())  # None where the working folder was removed


def default_session(known: _Known, project: str | None, need_transcript: bool = False) -> Found:
    """The session a command means when it names none, by one rule for every command: the most
    recently active session of `project` (the folder the command runs in, `here`) when there is one,
    else the most recently active of all; in that scope, one that made an API call rather than a newer
    one that made none (opened and left before a prompt), whose ids `Found.skipped` names.
    `need_transcript`: only sessions whose transcript is on disk (the commands that read it)."""
    from session_watcher.base import paths

    ranked = _by_activity(known)
    if not ranked:
        raise _none_yet(known)
    candidates: list[tuple[str, str | None, bool]] = []  # (id, project, calls), newest first, as far as looked
    memo: dict[str, str | None] = {}  # `_transcript_project`'s
    folder = paths.sessions_dir()
    called = False  # a session with a call is among them: the pick of all, should none be of `project`
    for sid in ranked:
        view = _state_peek(sid, folder) if sid in known.states else (None, None, False)
        _cursor, s_project, s_calls = view
        if need_transcript or s_project is None or not s_calls:  # its transcript has something to say
            found = _by_id(sid, known, view)
            if need_transcript and not _on_disk(found):
                continue
            if _on_disk(found):
                assert found.transcript is not None
                if s_project is None:
                    s_project = _transcript_project(found.transcript, memo)
                # whether it made a call is read only where it can change the pick: of `project`, or
                # until the newest of all with a call (its transcript's first MiBs, not every one's)
                if not s_calls and (not called or (project is not None and s_project == project)):
                    s_calls = _has_call(found.transcript)
        candidates.append((sid, s_project, s_calls))
        called = called or s_calls
        if s_calls and (project is None or s_project == project):
            break  # the best there is: the newest of this project (or, with none, of all) with a call
    if not candidates:  # none with a transcript: the newest, which the caller refuses with its reason
        return _by_id(ranked[0], known)
    scope = [c for c in candidates if project is not None and c[1] == project] or candidates
    chosen = next((c for c in scope if c[2]), scope[0])
    skipped = tuple(c[0] for c in scope[:scope.index(chosen)])
    # the one picked, as naming it by its id finds it (its state read whole: one the load refuses is
    # folded from its transcript)
    found = _by_id(chosen[0], known)
    if not skipped:
        return found
    from session_watcher.core.text import unique_prefix

    return found._replace(skipped=skipped, skipped_name=unique_prefix(skipped[0], ranked))


def find(target: str | None) -> Found:
    """The session `target` names (None or "": `default_session`'s pick). Raises NoSession when no
    session matches, UserError when the name is ambiguous or the path is not a transcript."""
    if target is not None and looks_like_path(target):
        return _by_path(target)
    known = _known()
    if not target:
        return default_session(known, here())
    ids = set(known.states) | set(known.transcripts)
    if target in ids:
        return _by_id(target, known)
    if len(target) >= MIN_PREFIX:
        hits = sorted(sid for sid in ids if sid.startswith(target))
        if len(hits) == 1:
            return _by_id(hits[0], known)
        if hits:
            more = f" and {len(hits) - LISTED} more" if len(hits) > LISTED else ""
            raise UserError(f"{target!r} is the start of {len(hits)} session ids: {', '.join(hits[:LISTED])}{more}; "
                            "give more of it")
    if os.path.isfile(target):  # a transcript in the current folder, named without its .jsonl
        return _by_path(target)
    short = f" (a short id needs at least {MIN_PREFIX} characters)" if len(target) < MIN_PREFIX else ""
    from session_watcher.agents import folders_there
    from session_watcher.base import paths

    raise NoSession(f"no session {target!r}{short}; {_where(known)}",
                    keep=[paths.sessions_dir(), *folders_there(known.roots)])


def _on_disk(found: Found) -> bool:
    return found.transcript is not None and os.path.isfile(found.transcript)


def transcript_of(target: str | None) -> Found:
    """`find`, for the commands that read the transcript itself (`replay`, `backtest`, `report
    session`): NoSession when the session has none on disk."""
    # the most recently active may have no transcript (Claude Code opened and left before a prompt,
    # its SessionStart hook recorded it): the default among those that have one is the session meant
    found = find(target) if target else default_session(_known(), here(), need_transcript=True)
    if found.transcript is None:
        raise NoSession(f"session {found.session_id} has no transcript on disk (its state names none, and none is "
                        "in Claude Code's or Codex's sessions folders)")
    if not os.path.isfile(found.transcript):
        raise NoSession(f"session {found.session_id}: its transcript {found.transcript} is gone",
                        keep=[found.transcript])
    return found


def mark_parent(doc: dict[str, object], transcript: str | None) -> None:
    """A fork's document (`inheritedCalls`), where the file of the session it was forked from
    (`forkedFrom`) is not found, says so: `forkedFromFound` False (its copies then counted in no
    session: `report` counts them in the parent only, as every command does; the text says it,
    `core.statustext.fork_words`). Looked for beside the fork's transcript, then wherever a session is
    found by its id (`find`). Nothing for a session that is no fork, or whose parent's file is there."""
    parent = doc.get("forkedFrom")
    if not doc.get("inheritedCalls") or not isinstance(parent, str) or not parent:
        return
    if transcript is not None and os.path.isfile(os.path.join(os.path.dirname(transcript), f"{parent}.jsonl")):
        return
    try:
        found = find(parent)
    except (UserError, OSError):
        found = None
    if found is None or found.transcript is None or not os.path.isfile(found.transcript):
        doc["forkedFromFound"] = False
