"""`session-watcher handoff [--session ID] [--json]`: the command around `state.handoffs.build`.

Brings the session's state up to date with its transcript (as `status` does); `build` reads the
transcript once for what the work is and composes the note with the files `bDefault` counts and its
price (`core.handoff`); `save` keeps it as the project's pending handoff (`state.handoffs`: the next
fresh session of the project receives it from the SessionStart hook); it prints it, or the JSON
document. The cold-cache guard builds and saves one the same way when it holds a prompt. The
session defaults to the one the command runs in (`CLAUDE_CODE_SESSION_ID`, set inside Claude Code;
`CODEX_THREAD_ID`, which Codex 0.171.0 sets for a command its TUI's `!` runs), else the default
every command takes (`sessions.naming.default_session`: the latest of the project the command runs
in, else of all); named as every command names one (`sessions.find`: id, 6+
character prefix, path).
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from session_watcher.cli.messages import json_text
from session_watcher.core.usererrors import UsageError, UserError
from session_watcher.sessions.handoff import build, save

if TYPE_CHECKING:
    import argparse

    from session_watcher.core.shapes import Config

def add_parser(sub: Any) -> None:
    """`handoff` in the CLI's parser tree."""
    from session_watcher.cli.commands import SESSION_HELP
    from session_watcher.cli.messages import LEFT_OUT_HELP

    s = sub.add_parser("handoff", description="Write the handoff of a session (what the work is, the files a restart "
                                              "carries, its price) for the next fresh session of its project: /clear, "
                                              "or a new session there, starts with it. SESSION is " + SESSION_HELP
                                              + "; inside Claude Code (or Codex's !), the session it runs in. "
                                              + LEFT_OUT_HELP)
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    s.add_argument("--session", metavar="ID", help="the same as SESSION")
    s.add_argument("--json", action="store_true", help="sessionId, note, files, carryTokens, carryUsd, savingUsd, "
                                                        "cycle, agent (whose next session takes it)")
    what = s.add_mutually_exclusive_group()
    what.add_argument("--show", action="store_true", help="show the handoff waiting for the project's next session "
                                                          "(every project's, without SESSION outside Claude Code; "
                                                          "for a SESSION whose project is not known, only a "
                                                          "handoff it wrote, never another project's)")
    what.add_argument("--drop", action="store_true", help="drop that waiting handoff: the next session starts "
                                                          "without it (without SESSION outside Claude Code, the "
                                                          "handoff of the project of the folder it runs in; a "
                                                          "SESSION whose project is not known: only a handoff it "
                                                          "wrote)")
    s.add_argument("--all", action="store_true", help="with --drop: every project's waiting handoff")
    s.set_defaults(func=command)


def _inside() -> str | None:
    """The session the command runs inside: Claude Code's, else Codex's thread (its `!` command)."""
    return os.environ.get("CLAUDE_CODE_SESSION_ID") or os.environ.get("CODEX_THREAD_ID") or None


def command(ns: argparse.Namespace) -> int:
    from session_watcher.cli.commands import _target, session_state
    from session_watcher.core.text import clean

    if ns.all and not ns.drop:
        raise UsageError("--all goes with --drop: every project's waiting handoff dropped")
    if ns.all and _target(ns):
        raise UsageError("--drop --all drops every project's handoff: name no SESSION with it")
    if ns.show or ns.drop:
        return waiting(ns)
    state, cfg = session_state(_target(ns) or _inside() or None)
    doc = build(state, cfg, time.time())
    if not doc["project"]:
        raise UserError(f"session {state['sessionId']}: its project folder is not known; no handoff saved")
    doc["pendingFile"] = save(doc, max_age_s=float(cfg.get("handoff_stale_min") or 180) * 60)
    if ns.json:
        sys.stdout.write(json_text(doc, indent=2) + "\n")
        return 0
    from session_watcher.base.route import cli_command
    from session_watcher.base.terminal import columns
    from session_watcher.core.text import fit

    print(clean(doc["note"]))  # exactly what the model reads (a no-op clean on a note of ours): never wrapped
    print()
    # the command it names kept whole (the plugin's by its path, quoted where it holds a space)
    print(fit(clean(usage_line(doc, cfg)), columns(), keep=[cli_command()]))
    return 0


def usage_line(doc: dict[str, Any], cfg: Config) -> str:
    """How to use the handoff just saved, and its price, in one line."""
    from session_watcher.base.route import cli_command
    from session_watcher.core.numbers import dollars, duration, over_calls, tokens

    stale = duration(cfg.get("handoff_stale_min", 180) * 60)
    saving, carry_usd = doc.get("savingUsd"), doc.get("carryUsd")
    price = f" ({dollars(carry_usd)})" if carry_usd is not None else ""
    worth = ""
    if isinstance(saving, float):
        over = over_calls(doc.get("cycle"), doc.get("untilCompaction"))  # the alerts' and `status`'s words
        worth = (f"; restarting now saves about {dollars(saving)}{' ' + over if over else ''}"
                 if saving > 0
                 else "; staying is still cheaper than restarting")
    return (f"session-watcher: handoff saved. /clear (or a new {_session_of(doc)} in {_which_project(doc['project'])} "
            f"within {stale}) "
            f"starts with it, carrying ~{tokens(doc['carryTokens'])} tokens{price}{worth}. "
            f"`{cli_command()} handoff --drop` takes it back.")


# the agents' names as their users know them (the states and notes keep the seam's ids)
AGENT_WORDS = {"claude-code": "Claude Code", "codex": "Codex"}


def _session_of(doc: dict[str, Any]) -> str:
    """'Codex session': the session a handoff waits for, of the agent that wrote it (only that agent's
    SessionStart hook takes it: state.handoffs); 'session' for one that names no agent (any takes it)."""
    from session_watcher.core.text import one_line
    from session_watcher.state.handoffs import waits_for

    agent = waits_for(doc)
    if not agent:
        return "session"
    return f"{AGENT_WORDS.get(agent) or one_line(agent)} session"  # an unknown name (a newer version's) as written


def _which_project(project: str) -> str:
    """'this project' where the command runs in the handoff's project, as the SessionStart hook that
    takes it tells one (`shell.project_root`: Claude Code's CLAUDE_PROJECT_DIR, else the folder it
    runs in; a subfolder is a project of its own, whose new session does not receive it); else the
    project named: the session picked by default, the latest of this project or, with none here, of
    all, or one named, may be of another project than the folder the user is in."""
    from session_watcher.core.text import one_line
    from session_watcher.state.shell import project_root, working_folder

    here = project_root(None, working_folder())  # None: the folder is gone
    if here is not None and here == os.path.realpath(project):
        return "this project"
    return f"its project, {one_line(project)},"


def _here() -> str | None:
    """The project of the folder the command runs in, as the SessionStart hook reads one
    (`shell.project_root`); None where the folder is gone."""
    from session_watcher.state.shell import project_root, working_folder

    return project_root(None, working_folder())


def _short_parents(parents: list[str], target: str | None) -> dict[str, str]:
    """Each parent session's id as the rest of the CLI shows one (`core.text.short_ids`): 8
    characters, more where another session a name can find shares them (two Codex threads of one
    minute: the parent and the thread `/clear` started from it, or one the hooks never saw, run
    before the install), so that the name finds it alone."""
    from session_watcher.core.text import short_ids
    from session_watcher.sessions.naming import known_ids

    try:
        known = sorted(known_ids())
    except OSError:
        known = []
    return short_ids([*parents, *known, *([target] if target else [])])


def waiting(ns: argparse.Namespace) -> int:
    """`--show` / `--drop`: the waiting handoff of the named session's project (or of the session
    it runs in, inside Claude Code or Codex's `!`), else every project's, each saying which agent's
    session it waits for (one per project, whichever agent's)."""
    from session_watcher.base.terminal import columns
    from session_watcher.cli.commands import _target, session_state
    from session_watcher.core.numbers import duration
    from session_watcher.core.text import clean, fit
    from session_watcher.hooks.inject import as_read
    from session_watcher.state import handoffs
    from session_watcher.state.handoffs import waits_for

    # `--drop --all`: every project's, inside Claude Code too (not the session's project alone)
    named = None if ns.all else _target(ns)
    target = named or (None if ns.all else _inside()) or None
    state = session_state(target)[0] if target else None
    project = state["context"].get("project") if state else None
    sid = str(state["sessionId"]) if state else ""
    # a session whose project is not known (its transcript names no folder): only a note it wrote
    # itself (its project known then), never another project's; `--drop` inside Claude Code with
    # no SESSION takes the folder's project in its place, as documented
    unplaced = state is not None and project is None and (ns.show or named is not None)
    if unplaced:
        found = [(path, doc) for path, doc in handoffs.pending(None) if doc.get("parentSession") == sid]
        if ns.drop and not found:  # never the folder's in its place
            raise UserError(f"handoff --drop: the project of session {clean(sid)} is not known (its transcript "
                            "names no folder); nothing dropped. Run `handoff --drop` in that project's folder, or "
                            "`handoff --drop --all` to drop every project's waiting handoff", keep=[sid])
    else:
        if ns.drop and project is None and not ns.all:  # the folder's project only, never every one unasked
            project = _here()
            if project is None:
                raise UsageError("handoff --drop: no session named and no project folder here; name a SESSION, "
                                 "or --all to drop every project's waiting handoff")
        found = handoffs.pending(project)
    if ns.json:
        sys.stdout.write(json_text([{**doc, "pendingFile": path} for path, doc in found], indent=2) + "\n")
    elif not found and unplaced:  # "nothing found", as `no handoff waiting` says it: exit 0
        from session_watcher.core.text import wrap

        print("\n".join(wrap(f"no handoff waiting for session {clean(sid)}: its project is not known (its transcript "
                             "names no folder), so no project's handoff is shown; `handoff --show` with no SESSION, "
                             "outside Claude Code, shows every project's", columns(), keep=[clean(sid)])))
    elif not found:
        others = len(handoffs.pending(None)) if ns.drop and not target else 0
        print(f"no handoff waiting{f' for {clean(project)}' if project else ''}"
              + (f"; {others} waiting for other projects (`--drop --all` drops every one)" if others else ""))
    now = time.time()
    ids = _short_parents([str(doc.get("parentSession")) for _path, doc in found], target)
    for path, doc in found:
        if ns.drop:
            handoffs.drop_file(path)
        if ns.json:
            continue
        age = now - float(doc.get("createdAt") or now)
        head = (f"{'dropped' if ns.drop else 'waiting'}: the handoff for "
                f"{'a ' + clean(_session_of(doc)) + ' in ' if waits_for(doc) else ''}{clean(str(doc.get('project')))} "
                f"from session {clean(ids[str(doc.get('parentSession'))])}, written {duration(age)} ago")
        print(fit(head, columns()))
        if not ns.drop:  # the note as the model will read it (hooks.inject): never wrapped
            note = str(doc.get("note"))
            print(f"\n{as_read(note) or clean(note)}\n")
    return 0
