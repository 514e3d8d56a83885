"""The CLI's small commands: `status`, `health`, `replay`, `config`, `doctor` (`add_parser`).

The others have their own modules (see `cli.COMMANDS`); `hook` and `statusline` are dispatched before
any parser.
"""

from __future__ import annotations

import os
import sys
import time
from typing import TYPE_CHECKING, Any

from session_watcher.base.terminal import columns
from session_watcher.cli.messages import LEFT_OUT_HELP, NOT_A_FILE, say, say_left_out
from session_watcher.core.errors import LockTimeout, NotOurs, Rejected, StateTooLarge
from session_watcher.core.text import clean, fit, one_line
from session_watcher.core.usererrors import NoSession, UsageError, UserError

if TYPE_CHECKING:
    import argparse
    from types import SimpleNamespace

    from session_watcher.core.shapes import Bucket, Config, State
    from session_watcher.sessions.naming import Found

SESSION_NAMES = "a session: its id, the first 6 or more characters of it, or its transcript's path"
# the default (`sessions.naming.default_session`), in README's words
DEFAULT_WORDS = "of the project run in, else of all, passing over one with no API call"
SESSION_HELP = SESSION_NAMES + f" (default: the most recently active {DEFAULT_WORDS})"
# the commands that read the transcript itself (`sessions.transcript_of`): the latest session that has none
# on disk (opened and left before a prompt) is passed over; README says it in the same words
TRANSCRIPT_HELP = SESSION_NAMES + f" (default: the most recently active one with a transcript {DEFAULT_WORDS})"
SESSION_SENTENCE = "SESSION is " + SESSION_HELP + "."  # the same, closing a command's description


def add_parser(sub: Any) -> None:
    """This module's commands in the CLI's parser tree (their lines in `--help`: cli.COMMANDS)."""
    s = sub.add_parser("status", description="Where one session stands: the lamp, the position against the sweet "
                                             "spot, the baseline a restart would carry, the cache. "
                                             + SESSION_SENTENCE + " " + LEFT_OUT_HELP)
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    s.add_argument("--session", metavar="ID", help="the same as SESSION (kept for scripts)")
    s.add_argument("--json", action="store_true", help="the full status document")
    s.add_argument("--verbose", action="store_true", help="also the model's internals (x, bp, bill progress, L, B, g)")
    s.set_defaults(func=status)

    s = sub.add_parser("health", description="The context health grade and its five signals. " + SESSION_SENTENCE
                                             + " " + LEFT_OUT_HELP)
    s.add_argument("target", nargs="?", metavar="SESSION", help=SESSION_HELP)
    g = s.add_mutually_exclusive_group()
    g.add_argument("--session", metavar="ID", help="the same as SESSION (kept for scripts)")
    g.add_argument("--transcript", metavar="PATH", help="the same as SESSION given as a path (kept for scripts)")
    s.add_argument("--json", action="store_true", help="the health document (grade, score, each signal's value)")
    s.set_defaults(func=health)

    s = sub.add_parser("replay", description="Fold a session's transcript from its first line, exactly as the hooks "
                                             "would, in a scratch state (nothing is saved). SESSION is "
                                             + TRANSCRIPT_HELP + ". " + LEFT_OUT_HELP)
    s.add_argument("target", nargs="?", metavar="SESSION", help=TRANSCRIPT_HELP)
    s.add_argument("--cwd", metavar="DIR", help="the project folder (default: the transcript's cwd)")
    s.add_argument("--json", action="store_true", help="the final status document")
    s.add_argument("--trace", metavar="FILE", help="write one JSON line per API call")
    s.add_argument("--verbose", action="store_true", help="also the model's internals (x, bp, bill progress, L, B, g)")
    s.set_defaults(func=replay)

    s = sub.add_parser("config", description="Show or edit the config.")
    project_help = "the project whose config counts (default: $CLAUDE_PROJECT_DIR, else the current folder)"
    project_file_help = ("edit the project DIR's file instead: DIR/.claude/session-watcher.toml or "
                         "DIR/.codex/session-watcher.toml, the one there (`config path --project DIR` names it)")
    csub = s.add_subparsers(metavar="ACTION")
    c = csub.add_parser("show", help="the effective config and where it came from, as TOML")
    c.add_argument("--project", metavar="DIR", help=project_help)
    c.add_argument("--json", action="store_true", help="{files, effective, errors, unread, renamed} for programs")
    c.set_defaults(func=config_show)
    c = csub.add_parser("path", help="your config file's path, alone on its line (for `$EDITOR \"$(...)\"`); "
                                     "`config show` says which files are there")
    c.add_argument("--project", metavar="DIR", nargs="?", const="",
                   help="the project's file instead: the one read, else the one `config set --project` makes (DIR "
                        "omitted: $CLAUDE_PROJECT_DIR, else the current folder)")
    c.set_defaults(func=config_path)
    c = csub.add_parser("get", help="KEY's effective value and where it comes from (default, user or project config)")
    c.add_argument("key", help="a config key (`config show` lists them), e.g. notify.remind_min")
    c.add_argument("--project", metavar="DIR", help=project_help)
    c.add_argument("--json", action="store_true", help="{key, value, source, file} for programs")
    c.set_defaults(func=config_get)
    c = csub.add_parser("set", help="set KEY to VALUE (a TOML value), keeping comments")
    c.add_argument("key", help="a config key (`config show` lists them), e.g. notify.remind_min")
    c.add_argument("value", help="a TOML value, e.g. 15, 0.2, true, '[\"*.lock\"]', or a word: warn")
    c.add_argument("--project", metavar="DIR", help=project_file_help + "; with neither, made in the folder of "
                   "the agent used there (docs/configuration.md)")
    c.set_defaults(func=config_set)
    c = csub.add_parser("unset", help="take KEY out of the file, keeping comments: its default counts again")
    c.add_argument("key", help="a config key (`config show` lists them), e.g. notify.remind_min")
    c.add_argument("--project", metavar="DIR", help=project_file_help)
    c.set_defaults(func=config_unset)
    s.set_defaults(func=config_show, project=None, json=False)

    s = sub.add_parser("doctor", description="What is installed where, whether hooks fire, permissions.")
    s.set_defaults(func=doctor)


def _emit(doc: Any) -> None:
    from session_watcher.cli.messages import json_text

    sys.stdout.write(json_text(doc, indent=2) + "\n")


LOCK_TIMEOUT = 2.0  # seconds `status` waits for a hook of the session before showing the state as saved
SYNC_BUDGET = 30.0  # seconds of folding: the whole transcript, when the hooks fell behind


def _say(key: str, message: str) -> None:
    say(message)


def load_session(session_id: str | None) -> tuple[State, Config]:
    """A session's state brought up to date with its transcript (saved only when that read something),
    and the effective config."""
    import copy

    from session_watcher.base.paths import write_fails
    from session_watcher.state import shell, store

    store.check_folder()  # a link or another user's folder: refused, and said so
    if session_id is None:
        found = store.list_sessions()
        if not found:
            from session_watcher.base import route

            raise NoSession("no session recorded yet: the hooks write one on the first tool call "
                            f"(see `{route.cli_command()} doctor`)")
        session_id = found[0][1]
    if not store.valid_session_id(session_id):
        raise UserError(f"not a session id: {session_id!r}")
    path = store.session_file(session_id)
    if not os.path.exists(path):
        raise NoSession(f"no state for session {session_id} (in {os.path.dirname(path)})",
                        keep=[os.path.dirname(path)])
    try:
        with shell.open_session(session_id, LOCK_TIMEOUT, _say) as opened:
            cfg, _ = shell.load_config(opened.state)  # a file left out: said by the command (`session_found`)
            cursor = opened.state.get("cursor") or {}
            read_to = copy.deepcopy((opened.state.get("cursor"), opened.state.get("subCursors")))
            # alerts it fires are left for the next hook to deliver, as the status line leaves them
            fired, _ = opened.sync(cursor.get("path"), cfg, time.monotonic() + SYNC_BUDGET,
                                   list(opened.state["subCursors"]), whole_map=True, pending=True)
            if fired or opened.fresh or read_to != (opened.state.get("cursor"), opened.state.get("subCursors")):
                try:
                    opened.save()
                except (OSError, StateTooLarge) as exc:
                    if isinstance(exc, NotOurs):
                        raise
                    why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
                    _say("save", f"cannot save the session state ({why}); showing it unsaved")
            # else nothing new was read: the state stays as the hooks last wrote it (its time is what
            # `doctor` says of the hooks: "last hook wrote 0 s ago" after a `status`)
            state = opened.state
    except LockTimeout:
        return _saved(session_id)
    except OSError as exc:
        if isinstance(exc, NotOurs) or exc.errno not in write_fails():
            raise
        # a read-only disk (or folder): the saved state can still be shown, as it was last saved
        _say("disk", f"{exc.strerror or exc}: showing the state as last saved")
        return _saved(session_id)
    usage = copies_usage(state, (state.get("cursor") or {}).get("path"))  # the lock not held: hooks fold on
    if usage is not None:
        state["engine"]["tally"]["inheritedUsage"] = usage
        _keep_copies(session_id, state["engine"]["tally"].get("inheritedTo"), usage)
    return state, cfg


def _keep_copies(session_id: str, upto: object, usage: Bucket) -> None:
    """Save a fork's copies' tokens (`copies_usage`) onto its state as the hooks left it since (under
    the lock again, the state read again: what a hook folded meanwhile is kept); nothing where the
    lock stays busy (the next `status` replays again), or the state has them, or is another now."""
    from session_watcher.base.paths import write_fails
    from session_watcher.state import shell

    try:
        with shell.open_session(session_id, LOCK_TIMEOUT, _say) as opened:
            t = opened.state["engine"]["tally"]
            if opened.fresh or not t.get("inherited") or "inheritedUsage" in t or t.get("inheritedTo") != upto:
                return
            t["inheritedUsage"] = usage
            opened.save()
    except (LockTimeout, StateTooLarge):
        pass
    except OSError as exc:
        if isinstance(exc, NotOurs) or exc.errno not in write_fails():
            raise


def _saved(session_id: str) -> tuple[State, Config]:
    """The state as last saved, read without the lock and without writing anything."""
    from session_watcher.base import config
    from session_watcher.core import engine
    from session_watcher.state import shell

    try:
        state = shell.saved(session_id, whole_map=True) or engine.new_state(session_id)
    except Rejected as exc:
        _say("saved", str(exc))
        state = engine.new_state(session_id)
    usage = copies_usage(state, (state.get("cursor") or {}).get("path"))
    if usage is not None:  # shown, not saved
        state["engine"]["tally"]["inheritedUsage"] = usage
    cfg, _ = config.load_cached(state["config"], state["context"].get("project"))
    return state, cfg


def copies_usage(state: State, transcript: object) -> Bucket | None:
    """A fork's state an older version saved past its first own call keeps no tokens of its copies
    (the tally's `inheritedUsage`, kept since): taken from a replay of its transcript (the hooks' own
    fold: live equals replay), so `status` shows the fork's own tokens as a state saved now does; the
    caller saves them (`_keep_copies`), once. The replay runs without the session's lock (a whole
    transcript's fold: a hook meanwhile, a session's end, folds its lines). None for any other state,
    or where the transcript cannot be replayed (the usage line then says its tokens include the copies)."""
    t, e = state["engine"]["tally"], state["engine"]
    if not t.get("inherited") or "inheritedUsage" in t or e["calls"] == t.get("inheritedTo") \
            or not isinstance(transcript, str):
        return None
    from session_watcher.sessions.replay import fold

    try:
        replayed, _cfg, _trace = fold(transcript, state["context"].get("cwd"), with_trace=False)
    except (UserError, OSError, ValueError):
        return None
    got = replayed["engine"]["tally"]
    if got.get("inheritedTo") != t.get("inheritedTo") or not isinstance(got.get("inheritedUsage"), dict):
        return None
    return got["inheritedUsage"]


def say_unread(paths: list[str], command: str) -> None:
    """The logs a command's fold passed over in a session's `subagents/` folder, named `*.jsonl` and
    no file (a folder, a link to nothing: `state.session.subagent_files`), a line on stderr each, in
    the words `report`, `export` and `backtest` use (the hooks pass them over without a word)."""
    for path in paths:
        say(f"left out {path}: {NOT_A_FILE}", keep=[path], prog=f"session-watcher {command}")


def session_state(target: str | None) -> tuple[State, Config]:
    """The state of the session `target` names (`sessions.find`) and its config: the hooks' state
    brought up to date with its transcript, or, for a session the hooks never saw, its transcript
    folded on demand (as `replay` folds it; nothing is saved)."""
    state, cfg, _found = session_found(target)
    return state, cfg


def session_found(target: str | None, command: str | None = None) -> tuple[State, Config, Found]:
    """`session_state`, and the session as `sessions.find` named it (`Found.skipped`: the newer
    sessions without an API call the default passed over). `command`, where given, names on stderr
    the logs of the session's `subagents/` folder that are no file (`say_unread`)."""
    from session_watcher.sessions.naming import find

    found = find(target)
    if found.recorded:
        state, cfg = load_session(found.session_id)
        transcript = (state.get("cursor") or {}).get("path")
        if command is not None and isinstance(transcript, str):  # the hooks' fold passed them over
            from session_watcher.state.session import subagent_files

            unread: list[str] = []
            subagent_files(transcript, found.session_id, unread)
            say_unread(unread, command)
        if state["config"].get("error"):  # a file left out, as the hooks left it out: said by every command
            _say_left_out(state["context"].get("project"))
        return state, cfg, found
    if found.transcript is None:
        raise NoSession(f"session {found.session_id}: no transcript on disk to fold")
    from session_watcher.sessions.replay import fold

    asked: dict[str, Any] = {}
    state, cfg, _trace = fold(found.transcript, with_trace=False, asked=asked)
    if command is not None:
        say_unread(asked["unread"], command)
    return state, cfg, found


def _say_left_out(project: str | None) -> None:
    """Say on stderr each config file of `project` (None: the user's alone) that cannot be used, left out
    of the figures a command shows (`messages.say_left_out`), once: a daily command is where it is seen
    (the hooks and the status line say it only in the log)."""
    from session_watcher.base import config

    say_left_out(config.load_layers(project)[1], config.config_files(project))


def _target(ns: argparse.Namespace | SimpleNamespace) -> str | None:
    """The session a command was given: its SESSION argument, or the older `--session ID` /
    `--transcript PATH` options (one of them at most)."""
    given = [v for v in (getattr(ns, "target", None), getattr(ns, "session", None),
                         getattr(ns, "transcript", None)) if v]
    if len(given) > 1:
        raise UsageError(f"name one session, not {len(given)}: {', '.join(map(repr, given))}")
    return given[0] if given else None


def status(ns: argparse.Namespace) -> int:
    from session_watcher.core.guard import cold_cache
    from session_watcher.core.status import cold_now, status_document
    from session_watcher.core.statustext import status_text

    state, cfg, found = session_found(_target(ns), "status")
    now = time.time()
    # the restart saving the status line shows now: cold cache and prepared handoff included
    doc = status_document(state, cfg, cold=cold_now(state, cfg, now), now=now)
    doc["coldCache"] = cold_cache(state, cfg, now)  # the guard's view now, and its source
    if doc.get("inheritedCalls"):  # a fork: is its parent's file there (its copies counted there)?
        from session_watcher.sessions.naming import mark_parent

        mark_parent(doc, found.transcript)  # the session as picked: not named again (a second pick)
    if ns.json:
        _emit(doc)
    else:
        print(fit(clean(status_text(doc, verbose=ns.verbose, now=now, last_ts=state["engine"]["lastTs"], cfg=cfg,
                                    project=state["context"].get("project"), skipped=found.passed_over)),
                  columns()))
    return 0


def replay_args(argv: list[str]) -> SimpleNamespace | None:
    """The namespace argparse makes of `replay` given at most one SESSION and the options `--json`,
    `--verbose`, `--trace FILE`, `--cwd DIR`, each written out whole and once (what programs pass);
    None for anything else, which argparse then reads (and says what is wrong). argparse and what it
    loads (gettext, locale, shutil and its compressors) cost a replay's start more than the rest of
    the command line (docs/benchmarks.md)."""
    from types import SimpleNamespace

    got: dict[str, Any] = {"target": None, "cwd": None, "json": False, "trace": None, "verbose": False}
    rest = iter(argv)
    for arg in rest:
        if arg in ("--json", "--verbose"):
            got[arg[2:]] = True
        elif arg in ("--trace", "--cwd") and got[arg[2:]] is None:
            value = next(rest, "-")
            if value.startswith("-"):
                return None
            got[arg[2:]] = value
        elif arg.startswith("-") or got["target"] is not None:
            return None
        else:
            got["target"] = arg
    return SimpleNamespace(**got)


def replay(ns: argparse.Namespace | SimpleNamespace) -> int:
    from session_watcher.sessions.naming import transcript_of
    from session_watcher.sessions.replay import fold

    found = transcript_of(_target(ns))
    transcript = found.transcript
    assert transcript is not None
    asked: dict[str, Any] = {}
    state, cfg, trace = fold(transcript, ns.cwd, with_trace=bool(ns.trace), asked=asked)  # its config kept
    say_unread(asked["unread"], "replay")
    from session_watcher.core.status import status_document  # after the fold's start: a child may parse meanwhile

    doc = status_document(state, cfg)
    if doc.get("inheritedCalls"):  # a fork: is its parent's file there (its copies counted there)?
        from session_watcher.sessions.naming import mark_parent

        mark_parent(doc, transcript)
    if ns.trace:  # like every output file: a unique exclusive temp file, renamed; user-only
        from session_watcher.base.atomic import write_atomic
        from session_watcher.cli.messages import json_text

        text = "".join(json_text(row, separators=(",", ":")) + "\n" for row in trace)
        try:
            write_atomic(ns.trace, text.encode("utf-8"), mode=0o600, fsync=False)
        except OSError as exc:  # said as report's --html says it (a folder there named the temp file beside it)
            raise UserError(f"cannot write {ns.trace}: {exc.strerror or exc}", keep=[ns.trace]) from None
    if ns.json:
        _emit(doc)
    else:
        from session_watcher.core.statustext import status_text

        print(fit(clean(status_text(doc, verbose=ns.verbose, last_call=True, cfg=cfg, project=asked.get("project"),
                                    skipped=found.passed_over)), columns()))
    return 0


def health(ns: argparse.Namespace) -> int:
    from session_watcher.core.status import status_document
    from session_watcher.core.statustext import health_text

    state, cfg, found = session_found(_target(ns), "health")
    doc = status_document(state, cfg)
    block = doc["health"]  # no call: nothing graded (core.health.graded)
    if ns.json:
        _emit(block)
    else:
        print(fit(clean(health_text(block, session=str(doc["sessionId"]), project=state["context"].get("project"),
                                    skipped=found.passed_over)), columns()))
    return 0


def _project(ns: argparse.Namespace) -> str | None:
    from session_watcher.state.shell import project_root, working_folder

    stated = getattr(ns, "project", None) or None  # "": `config path --project`, the project of the folder
    return project_root(stated and project_dir(stated), working_folder())


def project_dir(given: str) -> str:
    """`--project DIR` as an absolute path. A relative DIR in a folder removed since (a shell left in a
    deleted checkout) names nothing: said so (it said only "No such file or directory"), as the
    commands that take the folder for the project name no project there (`shell.working_folder`)."""
    from session_watcher.state.shell import working_folder

    if not os.path.isabs(given) and working_folder() is None:
        raise UserError(f"--project {given}: the folder this command runs in is gone (removed since); "
                        "name the project by its full path")
    return os.path.abspath(given)


def config_show(ns: argparse.Namespace) -> int:
    from session_watcher.base import config, paths

    project = _project(ns)
    effective, errors = config.load_layers(project)
    doc: dict[str, Any] = {"files": config.config_files(project), "effective": effective}
    if errors:  # the files that can be used still count; each bad one is named, left out
        doc["errors"] = errors
    unread = paths.project_config_unread(project)
    if unread:  # a project's second file: one is read, the other named so that nobody edits it in vain
        doc["unread"] = unread
    renamed = config.old_names(project)
    if renamed:  # guard = "block": read as "ask", said so
        doc["renamed"] = renamed
    if ns.json:
        _emit(doc)
    else:
        sys.stdout.write(clean(config.show_toml(doc["files"], effective, columns(), unread, renamed)))
    from session_watcher.base import route

    for err in errors:
        say(f"{err} (left out; `{route.cli_command()} config set` can fix it)", keep=doc["files"])
    return 1 if errors else 0


def config_path(ns: argparse.Namespace) -> int:
    """One path on stdout, nothing else (`$EDITOR "$(session-watcher config path)"`): your file, or
    with `--project` the project's, the one read, else the one `config set --project` makes there.
    Whether a file is there is `config show`'s to say; a project's second file, not read, is named on
    stderr (edited, it would change nothing)."""
    from session_watcher.base import paths

    if ns.project is None:
        print(one_line(paths.user_config_file()))
        return 0
    project = _project(ns)
    if project is None:
        raise UserError("no project here: the folder this command runs in was removed since; "
                        "give the project as --project DIR")
    target, _why = project_target(project)
    print(one_line(target))
    for f in paths.project_config_unread(project):
        say(f"{f} is not read: a project has one file, {target} counts", keep=[f, target])
    return 0


def config_get(ns: argparse.Namespace) -> int:
    from session_watcher.base import config, paths

    project = _project(ns)
    value, file, errors = config.get_value(project, ns.key)
    source = "default" if file is None else "user" if file == paths.user_config_file() else "project"
    if ns.json:
        _emit({"key": ns.key, "value": value, "source": source, "file": file})
    else:
        said = f"not set ({_unset(ns.key, config.load_layers(project)[0])})" if value is None \
            else f"= {config.show_value(value)}"
        where = {"default": "the default", "user": f"your config, {file}", "project": f"the project's config, {file}"}
        # a price that another row of yours sets (a shorter id's) says so itself: not "the default" too
        _said(f"{ns.key} {said}" + ("" if value is None and " (your " in said else f"  ({where[source]})"), file or "")
    from session_watcher.base import route

    for err in errors:  # as `config show`: a file left out is named, and the answer is without it
        say(f"{err} (left out; `{route.cli_command()} config set` can fix it)", keep=config.config_files(project))
    return 1 if errors else 0


def project_target(project_dir: str) -> tuple[str, str]:
    """The project's config file `config set --project` writes (the one read, `paths.project_config_file`),
    and, where the project has neither `.claude/` nor `.codex/`, why the folder it makes is that
    one: the agent of the latest session run in the project, else the one agent installed (Codex
    alone: `.codex/`; else `.claude/`). ("" where a folder was there.)"""
    from session_watcher.base import paths

    places = paths.project_config_places(project_dir)
    if any(os.path.lexists(p) or os.path.isdir(os.path.dirname(p)) for p in places):
        return paths.project_config_file(project_dir), ""
    from session_watcher.cli.agents_here import installed_for_codex_only, latest_agent

    agent = latest_agent(project_dir)
    if agent is not None:
        who = "Codex's" if agent == "codex" else "Claude Code's"
        return places[agent == "codex"], f"a new folder: the latest session in this project is {who}"
    if installed_for_codex_only():
        return places[1], "a new folder: no recent session ran here, and Codex is the agent installed"
    return places[0], "a new folder: no recent session ran here, and Claude Code's is the default"


def config_set(ns: argparse.Namespace) -> int:
    from session_watcher.base import config, paths

    why = ""
    if ns.project:
        target, why = project_target(project_dir(ns.project))
    else:
        target = paths.user_config_file()
    value, moved = config.set_value(target, ns.key, ns.value, project=bool(ns.project))
    if moved:
        say(f"{target} could not be read as TOML: moved to {moved}, started afresh", keep=[target, moved])
    # what `config show` then says: the value as the config reads it (`block` written as `ask`)
    effective, _errors = config.load_layers(project_dir(ns.project) if ns.project else _project(ns))
    shown: Any = effective
    for part in config.key_path(ns.key):
        shown = shown.get(part) if isinstance(shown, dict) else None
    said = config.show_value(shown if shown is not None else value)
    note = "" if shown is None or shown == value else f"; you wrote {config.show_value(value)}, " + (
        "its old name, written as this" if config.now_named(ns.key, value) != value else "read as this")
    where = f"{why}{note}; in {target}" if why else f"in {target}{note}"  # the path last: `)` after it
    _said(f"{ns.key} = {said}  ({where})", target)
    return 0


def config_unset(ns: argparse.Namespace) -> int:
    from session_watcher.base import config, paths

    target = paths.project_config_file(project_dir(ns.project)) if ns.project else paths.user_config_file()
    removed = config.unset_value(target, ns.key, project=bool(ns.project))
    # what `config show` then says: the default, or what another layer sets
    effective, _errors = config.load_layers(project_dir(ns.project) if ns.project else _project(ns))
    shown: Any = effective
    for part in config.key_path(ns.key):
        shown = shown.get(part) if isinstance(shown, dict) else None
    said = f"not set ({_unset(ns.key, effective)})" if shown is None else f"= {config.show_value(shown)}"
    where = f"removed from {target}" if removed else f"{target} did not set it: unchanged"
    _said(f"{ns.key} {said}  ({where})", target)
    return 0


def _unset(key: str, effective: Config) -> str:
    """What a key that is not set comes to. A price (core.prices' rule): a row or its `input` left
    out, the built-in table's; a cache field left out, the built-in ratio of that field to the input
    price, applied to the row's input (its own, else the table's): said with the dollars it makes."""
    if not key.startswith("prices."):
        return "worked out at run time"
    from session_watcher.base import config
    from session_watcher.base.config_cache import use_prices
    from session_watcher.core import prices

    def usd_per_mtok(usd: float) -> str:  # as the config writes a price: USD per million tokens
        return f"${round(usd, 6):g}/MTok"

    _, model, *field = config.key_path(key)
    use_prices(effective)  # the prices as they are now: the row without what was unset
    base = prices.input_price(model)
    if base is None:
        return f"{model} has no price: the built-in tables do not know it"
    if not field or field[0] == "input":  # the input price that now applies, and whose, said once
        # the row core.prices takes (the longest id that is the model's or a prefix of it): its input, or,
        # where it has none, the tables' (a shorter row's input is not the one that applies then)
        row = prices.user_row_name(model)
        mine = row if row is not None and "input" in (effective.get("prices") or {}).get(row, {}) else None
        whose = f"your prices for {mine}" if mine is not None else "the built-in prices"
        if field:
            return f"{whose.replace('prices', 'input price')}, {usd_per_mtok(base)}"
        return f"{whose}, input {usd_per_mtok(base)}"
    ratio = {"cache_read": prices.read_multiplier, "cache_write": prices.write_multiplier,
             "cache_write_1h": prices.write_1h_multiplier}[field[0]](model)
    return f"the built-in ratio, {ratio:g} x the input price {usd_per_mtok(base)}: {usd_per_mtok(base * ratio)}"


def _said(line: str, target: str) -> None:
    """What `config set` or `unset` did, wrapped at spaces within the terminal's width as every
    command's text, the file's path whole (to be copied)."""
    from session_watcher.core.text import wrap

    print("\n".join(wrap(one_line(line), columns(), keep=[one_line(target)] if target else [])))


def doctor(ns: argparse.Namespace) -> int:
    from session_watcher.base.route import cli_command
    from session_watcher.cli.doctor import report

    lines, ok = report()
    # the command it suggests kept whole, quoted path and all, to be copied (the plugin's, by its path)
    print(fit("\n".join(one_line(line) for line in lines), columns(), keep=[cli_command()]))
    return 0 if ok else 1
